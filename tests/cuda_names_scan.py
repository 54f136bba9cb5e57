"""Specialisations of kernels/scan.cu compiled by test_cuda_kernels_compile.py: every data
type, both operators and both exclusive forms, for both kernels (dmlops.cuda.reduction)."""

from __future__ import annotations

TYPES = ("float", "half_t", "double", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64")

NAMES: list[str] = [
    f"{kernel}<{t}, {s}, {e}>"
    for kernel in ("scan_lines", "scan_tiles")
    for t in TYPES
    for s in ("true", "false")
    for e in ("true", "false")
]
