"""Specialisations of kernels/scan.cu compiled by test_cuda_kernels_compile.py: every data
type, both operators and both exclusive forms, for both kernels (dmlops.cuda.reduction);
scan_tiles at the width SCAN_WIDTH (64; 32 for 8-byte types) and SCAN_LINES 16."""

from __future__ import annotations

TYPES = ("float", "half_t", "double", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64")

NAMES: list[str] = [
    f"scan_lines<{t}, {s}, {e}>" for t in TYPES for s in ("true", "false") for e in ("true", "false")
] + [
    f"scan_tiles<{t}, {s}, {e}, {64 if t not in ('double', 'i64', 'u64') else 32}, 16>"
    for t in TYPES
    for s in ("true", "false")
    for e in ("true", "false")
]
# the shapes bench/gpu_reduction.py also times and tests/test_cuda_reduction.py runs (SCAN_LINES, SCAN_WIDTH)
NAMES += [f"scan_tiles<float, true, false, {w}, {n}>" for w, n in ((64, 8), (64, 32), (32, 16))]
NAMES += [
    f"scan_tiles<{t}, {s}, false, 64, {n}>" for t in ("half_t", "i32") for s in ("true", "false") for n in (8, 32)
]
NAMES += [f"scan_tiles<float, false, false, 64, {n}>" for n in (8, 32)]
