"""The specialisations of kernels/table_copy.cu that cuda/_table_copy.py requests: every
storage width, 1 to 8 axes, 32- and 64-bit tables (tests/test_cuda_kernels_compile.py)."""

NAMES = [
    f"table_copy<{t}, {nd}, {i}, {e}>"
    for t in ("u8", "u16", "u32", "u64")
    for nd in range(1, 9)
    for i in ("int", "long long")
    for e in (4, 8)
] + [f"table_copy<{t}, {nd}, int, 8, true>" for t in ("u8", "u16", "u32", "u64") for nd in (1, 4)]
