"""The random family: which operators it holds and their own rules.

RANDOM_GENERATOR keeps the generic desc made from its catalogue row (:mod:`.generic`);
this module claims it (``family = "random"``) for ``numpy``, ``cpu``, ``cuda`` and
``directml``, adds the rules of its page that the catalogue does not hold
(:func:`validate_generic`) and holds the generator's definition every backend shares
(the Philox constants, the state layout, :func:`counter_increment`, :func:`next_state`).

Rules, each checked against DirectML 1.15.4's CreateOperator:

* RANDOM_GENERATOR: the state of the generator ``Type`` (PHILOX_4X32_10, the only one:
  a 128-bit counter and a 64-bit key) is 6 UINT32 elements laid out ``{1, ..., 1, 6}``
  (``{1, 1, 1, 6}``, ``{6, 1, 1, 1}`` and ``{1, 1, 2, 3}`` rejected); OutputStateTensor,
  where present, has InputStateTensor's Sizes (a page fact). DirectML accepts that
  layout in 1 to 8 dimensions, where the page (and the catalogue's row) says 4 (erratum
  E133). OutputTensor may have any Sizes.

What RANDOM_GENERATOR computes (PHILOX_4X32_10)
-----------------------------------------------
The generator of Salmon, Moraes, Dror and Shaw, "Parallel Random Numbers: As Easy as 1,
2, 3" (SC11, 2011), as Random123's ``philox4x32_10``: a block function of a 128-bit
counter (four 32-bit words ``c0..c3``, ``c0`` least significant) and a 64-bit key
(``k0, k1``) giving four 32-bit words. Ten rounds; each takes the two 32x32 -> 64-bit
products ``M0 * c0`` and ``M1 * c2`` (hi and lo halves) to
``(hi(M1*c2) ^ c1 ^ k0, lo(M1*c2), hi(M0*c0) ^ c3 ^ k1, lo(M0*c0))``, and the key is
bumped by the Weyl constants ``(W0, W1)`` (mod 2^32) between rounds. Random123's
known-answer vectors pin it (``tests/test_random_family.py``).

The state tensor's six UINT32 elements, in logical order, are the counter words
``c0, c1, c2, c3`` (element 0 the least significant: the page's ``{counter, key}``
picture, little-endian like the words' own bytes) and the key ``k0, k1``. Output
element ``i`` (row-major order of OutputTensor's *logical* Sizes, whatever its Strides)
is word ``i % 4`` of the block of counter ``c + i // 4`` (mod 2^128), so a size not
divisible by 4 uses the first words of its last block and drops the rest.
OutputStateTensor is the input state with the counter advanced by
``ceil(n / 4)`` (mod 2^128, the carry running from ``c0`` to ``c3``; :func:`next_state`),
the key unchanged: two calls chained through it give the words one call of both sizes
would give when the first size is a multiple of 4.

The page's worked example of that increment subtracts instead of adding (erratum E180).
Only UINT32 outputs exist (DirectML's CreateOperator rejects FLOAT32 and the other types:
the support rows).

Not compared with DirectML on this machine: DirectML 1.15.4 compiles RANDOM_GENERATOR to
a DXIL shader for every desc (1 to 8 dimensions, sizes 1 to 1000, with and without
OutputStateTensor, strided, feature levels 3_0 to 6_4), which this Wine + vkd3d stack
cannot run (``DirectMLStackLimitError``, docs/directml.md). The word order, the counter's
word significance and the element order above are therefore Random123's conventions and
the page's, not yet DirectML's measured behaviour; ``tests/directml/test_directml_random.py``
compares them bit for bit wherever DirectML can compile the operator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..enums import FeatureLevel
from ._base import family_claim

FAMILY = "random"

OPERATORS: frozenset[str] = frozenset("RANDOM_GENERATOR".split())
"""Every operator of the family."""

STATE_ELEMENTS: dict[str, int] = {"PHILOX_4X32_10": 6}
"""RANDOM_GENERATOR: Type -> the UINT32 elements of its state (the last size of the state tensors)."""

PHILOX_ROUNDS = 10
PHILOX_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
"""Philox 4x32's round multipliers ``(M0, M1)``, applied to counter words 0 and 2."""
PHILOX_WEYL = (0x9E3779B9, 0xBB67AE85)
"""The key schedule's increments ``(W0, W1)`` (the golden ratio and sqrt(3) - 1, as 32-bit fractions)."""
COUNTER_WORDS = 4
"""State elements 0..3: the 128-bit counter, element 0 least significant; elements 4, 5: the key."""
WORDS_PER_BLOCK = 4
"""32-bit output words one Philox 4x32 block (one counter value) gives."""
WORD_MASK = 0xFFFFFFFF


def counter_increment(element_count: int) -> int:
    """How far one call advances the counter: ``ceil(element_count / 4)``, one per block of output words."""
    return -(-element_count // WORDS_PER_BLOCK)


def counter_value(state: Sequence[int]) -> int:
    """The 128-bit counter of a Philox state (six words): ``c0 + c1 * 2^32 + c2 * 2^64 + c3 * 2^96``."""
    return sum(int(state[i]) << (32 * i) for i in range(COUNTER_WORDS))


def next_state(state: Sequence[int], element_count: int) -> tuple[int, ...]:
    """OutputStateTensor's six words: the counter advanced by :func:`counter_increment` (mod 2^128), the key kept."""
    counter = (counter_value(state) + counter_increment(element_count)) % (1 << (32 * COUNTER_WORDS))
    words = tuple((counter >> (32 * i)) & WORD_MASK for i in range(COUNTER_WORDS))
    return words + tuple(int(k) for k in state[COUNTER_WORDS:])


claim = family_claim(FAMILY, (OPERATORS, ("numpy", "cpu", "cuda", "directml")))


def state_sizes(generator_type: str, dimension_count: int) -> tuple[int, ...]:
    """The Sizes of a ``dimension_count``-D state tensor of ``generator_type``: ``{1, ..., 1, elements}``."""
    return (1,) * (dimension_count - 1) + (STATE_ELEMENTS[generator_type],)


def _check_random_generator(desc: Any) -> None:
    kind = desc.type.name
    expected = state_sizes(kind, desc.input_state_tensor.dimension_count)
    desc.require_sizes("InputStateTensor", expected, f"the state of {kind}")


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The rules of a random operator's own (see the module docstring): InvalidDescError naming ``STRUCT.Member``.

    Called by the generic desc's validation after the page facts (support rows,
    same-attribute constraints); checked against DirectML 1.15.4's CreateOperator.
    """
    _check_random_generator(desc)


__all__ = [
    "COUNTER_WORDS",
    "FAMILY",
    "OPERATORS",
    "PHILOX_MULTIPLIERS",
    "PHILOX_ROUNDS",
    "PHILOX_WEYL",
    "STATE_ELEMENTS",
    "WORDS_PER_BLOCK",
    "WORD_MASK",
    "claim",
    "counter_increment",
    "counter_value",
    "next_state",
    "state_sizes",
    "validate_generic",
]
