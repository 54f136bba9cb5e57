"""The random family in NumPy: RANDOM_GENERATOR (Philox 4x32-10), bit-exact.

The generator, the state layout and the element order are the semantics layer's
(:mod:`dmlops.descs.random`, whose docstring says what is and is not measured against
DirectML). Here the block function runs vectorised over every block of one call: the
counters ``c + g`` for ``g = 0 .. ceil(n / 4) - 1`` as four uint64 columns holding 32-bit
words, each round's 32x32 -> 64-bit products exact in uint64, then the words are
interleaved into output order and the last block cut to ``n`` words.

Memory: blocks are generated ``CHUNK_BLOCKS`` at a time (a dozen uint64 columns, about
100 bytes a block), so the scratch beside the output is bounded whatever its size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs.random import (
    COUNTER_WORDS,
    PHILOX_MULTIPLIERS,
    PHILOX_ROUNDS,
    PHILOX_WEYL,
    WORD_MASK,
    WORDS_PER_BLOCK,
    counter_value,
    next_state,
)
from ..enums import FeatureLevel

U64 = NDArray[np.uint64]

CHUNK_BLOCKS = 1 << 20
"""Blocks (4 output words each) generated at once."""


def philox_blocks(counter: int, key: tuple[int, int], count: int) -> NDArray[np.uint32]:
    """``(count, 4)`` uint32: the Philox 4x32-10 blocks of counters ``counter .. counter + count - 1`` (mod 2^128)."""
    offsets = np.arange(count, dtype=np.uint64)
    c = _add_to_counter(counter, offsets)
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    m0, m1 = np.uint64(PHILOX_MULTIPLIERS[0]), np.uint64(PHILOX_MULTIPLIERS[1])
    w0, w1 = np.uint64(PHILOX_WEYL[0]), np.uint64(PHILOX_WEYL[1])
    mask, shift = np.uint64(WORD_MASK), np.uint64(32)
    for r in range(PHILOX_ROUNDS):
        if r:  # the key schedule: bumped before every round but the first
            k0, k1 = (k0 + w0) & mask, (k1 + w1) & mask
        p0, p1 = m0 * c[0], m1 * c[2]  # exact: both factors below 2^32
        c = [(p1 >> shift) ^ c[1] ^ k0, p1 & mask, (p0 >> shift) ^ c[3] ^ k1, p0 & mask]
    return np.stack(c, axis=1).astype(np.uint32)


def _add_to_counter(counter: int, offsets: U64) -> list[U64]:
    """The four 32-bit words (uint64 columns, least significant first) of ``counter + offsets`` mod 2^128."""
    mask, shift = np.uint64(WORD_MASK), np.uint64(32)
    parts = [offsets & mask, offsets >> shift]  # the offsets' own 32-bit words
    words, carry = [], np.zeros_like(offsets)
    for i in range(COUNTER_WORDS):
        total = np.uint64((counter >> (32 * i)) & WORD_MASK) + carry + (parts[i] if i < len(parts) else 0)
        words.append(total & mask)
        carry = total >> shift  # at most 2 bits: two 32-bit words and a carry
    return words


def philox_words(state: NDArray[Any], count: int) -> NDArray[np.uint32]:
    """The first ``count`` output words of the six-word Philox ``state``, in output order."""
    words = [int(w) for w in np.asarray(state).reshape(-1)]
    counter = counter_value(words)
    key = (words[COUNTER_WORDS], words[COUNTER_WORDS + 1])
    out = np.empty(count, dtype=np.uint32)
    blocks = -(-count // WORDS_PER_BLOCK)
    for first in range(0, blocks, CHUNK_BLOCKS):
        n = min(CHUNK_BLOCKS, blocks - first)
        chunk = philox_blocks(counter + first, key, n).reshape(-1)
        start = first * WORDS_PER_BLOCK
        out[start : start + chunk.size] = chunk[: count - start]
    return out


def compute_random_generator(
    desc: Any, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """RANDOM_GENERATOR: OutputTensor's words in logical row-major order, and the advanced state."""
    state = inputs["InputStateTensor"]
    sizes = desc.output_tensor.sizes
    count = int(np.prod(sizes, dtype=np.int64))
    results = {"OutputTensor": philox_words(state, count).reshape(sizes)}
    if desc.output_state_tensor is not None:
        advanced = next_state([int(w) for w in state.reshape(-1)], count)
        results["OutputStateTensor"] = np.array(advanced, dtype=np.uint32).reshape(state.shape)
    return results


OPERATORS: dict[str, Callable[..., Any]] = {"RANDOM_GENERATOR": compute_random_generator}
"""Operator (short DML_OPERATOR_TYPE name) -> its NumPy reference."""

__all__ = ["OPERATORS", "compute_random_generator", "philox_blocks", "philox_words"]
