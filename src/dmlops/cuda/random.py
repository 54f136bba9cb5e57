"""The random family on the GPU: RANDOM_GENERATOR (Philox 4x32-10), bit-exact.

``kernels/random.cu``'s ``philox4x32_10`` runs one thread a Philox block (see its header
comment) and, with ``WRITE_STATE``, writes OutputStateTensor on the device too (no host
round trip). The generator, state layout and element order are the semantics layer's
(:mod:`dmlops.descs.random`), as in the NumPy reference. A C-contiguous OutputTensor is
written in place; a strided one gets the words in a contiguous buffer, then a CuPy copy
into its view (the logical row-major order is the output order whatever the strides).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..enums import FeatureLevel
from ._runtime import PackedLaunch, cupy_module, element_strides, get_kernel, params, sm_count

THREADS = 256
BLOCKS_PER_SM = 4
"""Grid cap per multiprocessor (half an SM of 256-thread blocks): larger outputs loop
(grid-stride) over their Philox blocks, so each thread's ten round keys, computed once,
serve many blocks."""
ILP = 4
"""Philox blocks each thread computes side by side per loop step (the kernel's ``ILP``).

Run 46 (H200, 256 MiB): ILP 1 / 2 / 4 at 4 blocks per SM took 90.3 / 79.3 / 74.0 us
(70.8 / 80.6 / 86.4 % of the copy rate; 8 and 16 blocks per SM were within 3 % of
these): one chain of ten dependent multiplies per thread left the multipliers idle
between rounds."""


def _launch(n: int, state_stride: int, out_state_stride: int, write_state: bool) -> PackedLaunch:
    fn = get_kernel("random.cu", f"philox4x32_10<{'true' if write_state else 'false'}, {ILP}>")
    blocks = -(-n // 4)
    grid = max(1, min(BLOCKS_PER_SM * sm_count(), -(-blocks // (THREADS * ILP))))
    p = params(("n", "i8", n), ("state_stride", "i8", state_stride), ("out_state_stride", "i8", out_state_stride))
    return PackedLaunch(fn, grid, THREADS, 3, p)


def run_random_generator(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch RANDOM_GENERATOR on device views (see :func:`dmlops.cuda.execute`)."""
    cp = cupy_module()
    state = inputs["InputStateTensor"]
    y = outputs["OutputTensor"]
    out_state = outputs.get("OutputStateTensor")
    target = y if y.flags.c_contiguous else cp.empty(y.shape, dtype=y.dtype)
    launch = _launch(
        int(y.size),
        element_strides(state)[-1],
        element_strides(out_state)[-1] if out_state is not None else 0,
        out_state is not None,
    )
    launch(state.data.ptr, target.data.ptr, out_state.data.ptr if out_state is not None else 0)
    if target is not y:
        y[...] = target


OPERATORS: dict[str, Callable[..., Any]] = {"RANDOM_GENERATOR": run_random_generator}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""

__all__ = ["OPERATORS", "run_random_generator"]
