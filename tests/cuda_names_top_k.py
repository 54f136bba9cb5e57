"""Specialisations of kernels/top_k.cu compiled by test_cuda_kernels_compile.py: the
register-list kernel for every type of up to 4 bytes and every KMAX, the selection kernel
for every type; both directions and the four index types (dmlops.cuda.reduction)."""

from __future__ import annotations

SMALL = ("float", "half_t", "i8", "u8", "i16", "u16", "i32", "u32")
TYPES = (*SMALL, "double", "i64", "u64")
INDEX = ("u32", "u64", "i32", "i64")

NAMES: list[str] = [
    f"top_k_warp<{t}, {INDEX[i % 4]}, {s}, {kmax}>"
    for i, t in enumerate(SMALL)
    for s in ("true", "false")
    for kmax in (1, 2, 4, 8, 16, 32)
]
NAMES += [f"top_k_select<{t}, {idx}, {s}>" for t in TYPES for idx in INDEX for s in ("true", "false")]
