"""The specialisations of kernels/table_copy.cu that cuda/_table_copy.py requests: every
storage width at its default E and V (and V = 1, for outputs whose rows are strided), 1 to 8
axes, 32- and 64-bit tables, with and without padding (tests/test_cuda_kernels_compile.py).
Contiguous rows without padding at every rank: TILE (1 to 8 axes) never pads."""

from dmlops.cuda._table_copy import elements_per_thread, group_size

_WIDTHS = {"u8": 1, "u16": 2, "u32": 4, "u64": 8}

NAMES = [
    f"table_copy<{t}, {nd}, {i}, {elements_per_thread(n)}, {group_size(n, contiguous)}, {pad}>"
    for t, n in _WIDTHS.items()
    for nd in range(1, 9)
    for i in ("int", "long long")
    for contiguous in (True, False)
    for pad in ("true", "false")
    if contiguous or nd in (1, 4, 8)
]
