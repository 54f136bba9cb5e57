"""The specialisations of kernels/avg_pool.cu that dmlops.cuda.pooling can request (compiled by test_cuda_kernels_compile)."""

from __future__ import annotations

_TYPES = ("float", "half_t")

NAMES: list[str] = [
    # every mode (PoolSumMode) and offset type of the general window sum
    *(f"pool_sum<{t}, {mode}, {i}>" for t in _TYPES for mode in range(5) for i in ("int", "long long")),
    # the 2-D fast path: AVERAGE, LP1, LP2; windows / strides up to 5; 1, 2 or 4 outputs per thread
    *(
        f"pool_sum_k2d<{t}, {mode}, {k}, {m}>"
        for t in _TYPES
        for mode in range(3)
        for k in ("3, 3, 1, 1", "2, 2, 2, 2", "3, 3, 2, 2", "5, 1, 1, 5", "1, 4, 3, 1")
        for m in (1, 2, 4)
    ),
    *(f"avg_pool_grad<{t}, {i}>" for t in _TYPES for i in ("int", "long long")),
    *(
        f"{kernel}<{raw}, {idx}>"
        for kernel in ("max_unpool_scatter", "max_unpool_check")
        for raw in ("u8", "u16", "u32", "u64")
        for idx in ("u32", "u64")
    ),
]
