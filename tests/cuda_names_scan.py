"""Specialisations of kernels/scan.cu compiled by test_cuda_kernels_compile.py: every data
type, both operators and both exclusive forms, for both kernels (dmlops.cuda.reduction);
scan_tiles at the width SCAN_WIDTH (64; 32 for 8-byte types), scan_rows at its chunk
(ROWS_CHUNK_BYTES: 1024 elements, 512 of 8-byte types)."""

from __future__ import annotations

TYPES = ("float", "half_t", "double", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64")

NAMES: list[str] = [
    f"scan_lines<{t}, {s}, {e}>" for t in TYPES for s in ("true", "false") for e in ("true", "false")
] + [
    f"scan_tiles<{t}, {s}, {e}, {64 if t not in ('double', 'i64', 'u64') else 32}>"
    for t in TYPES
    for s in ("true", "false")
    for e in ("true", "false")
]
NAMES += [
    f"scan_rows<{t}, {s}, {e}, {512 if t in ('double', 'i64', 'u64') else 1024}>"
    for t in TYPES
    for s in ("true", "false")
    for e in ("true", "false")
]
# the widths bench/gpu_reduction.py also times (SCAN_WIDTH)
NAMES += [f"scan_tiles<float, true, false, {w}>" for w in (32, 128)]
