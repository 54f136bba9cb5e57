"""The random family on the CPU: RANDOM_GENERATOR (Philox 4x32-10) as a numba kernel, bit-exact.

One parallel loop over Philox blocks: block ``b`` adds ``b`` to the 128-bit counter (carry
through the four words), runs the ten rounds in uint64 registers (every 32x32 product is
exact in 64 bits) and stores its four words at ``4 b``, the last block cut at the
output's size. Generator, state layout and element order are the semantics layer's
(:mod:`dmlops.descs.random`), as in the NumPy reference; OutputStateTensor is
:func:`~dmlops.descs.random.next_state` of the input state.

A C-contiguous OutputTensor is written in place; a strided one is generated into a
contiguous buffer and copied into its view (the logical row-major order is the output
order whatever the strides).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ..descs.random import PHILOX_MULTIPLIERS, PHILOX_ROUNDS, PHILOX_WEYL, next_state
from ..enums import FeatureLevel
from ._threads import run_kernel

_M0, _M1 = np.uint64(PHILOX_MULTIPLIERS[0]), np.uint64(PHILOX_MULTIPLIERS[1])
_W0, _W1 = np.uint64(PHILOX_WEYL[0]), np.uint64(PHILOX_WEYL[1])
_MASK, _SHIFT = np.uint64(0xFFFFFFFF), np.uint64(32)


@njit(nogil=True, cache=True, error_model="numpy")
def _philox(state: Any, out: Any, first_block: Any, end_block: Any) -> None:  # pragma: no cover - compiled
    """``out[i]`` = word ``i % 4`` of the Philox 4x32-10 block of counter ``state[0:4] + i // 4`` (mod 2^128).

    For the blocks ``[first_block, end_block)`` (elements ``4 * first_block`` up to ``4 * end_block``).
    """
    n = out.size
    for b in range(first_block, end_block):
        # counter + b, the carry running up the 32-bit words (b < 2^63: its high word fits 31 bits)
        bb = np.uint64(b)
        t = np.uint64(state[0]) + (bb & _MASK)
        x0 = t & _MASK
        t = np.uint64(state[1]) + (bb >> _SHIFT) + (t >> _SHIFT)
        x1 = t & _MASK
        t = np.uint64(state[2]) + (t >> _SHIFT)
        x2 = t & _MASK
        x3 = (np.uint64(state[3]) + (t >> _SHIFT)) & _MASK
        k0, k1 = np.uint64(state[4]), np.uint64(state[5])
        for r in range(PHILOX_ROUNDS):
            if r > 0:
                k0 = (k0 + _W0) & _MASK
                k1 = (k1 + _W1) & _MASK
            p0 = _M0 * x0
            p1 = _M1 * x2
            x0, x1, x2, x3 = (p1 >> _SHIFT) ^ x1 ^ k0, p1 & _MASK, (p0 >> _SHIFT) ^ x3 ^ k1, p0 & _MASK
        base = 4 * b
        words = (x0, x1, x2, x3)
        for j in range(4):
            if base + j < n:
                out[base + j] = np.uint32(words[j])


def run_random_generator(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """RANDOM_GENERATOR into ``outputs["OutputTensor"]`` (and ``outputs["OutputStateTensor"]`` where present)."""
    state = np.ascontiguousarray(inputs["InputStateTensor"]).reshape(-1)
    target = outputs["OutputTensor"]
    contiguous = target.flags.c_contiguous
    flat = target.reshape(-1) if contiguous else np.empty(target.size, dtype=np.uint32)
    run_kernel(_philox, (flat.size + 3) // 4, flat.size, state, flat)  # over blocks of four words
    if not contiguous:
        target[...] = flat.reshape(target.shape)
    if "OutputStateTensor" in outputs:
        advanced = next_state([int(w) for w in state], target.size)
        outputs["OutputStateTensor"][...] = np.array(advanced, dtype=np.uint32).reshape(
            outputs["OutputStateTensor"].shape
        )


OPERATORS: dict[str, Callable[..., Any]] = {"RANDOM_GENERATOR": run_random_generator}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""

__all__ = ["OPERATORS", "run_random_generator"]
