"""FLOAT32 inputs that probe casts: shared by the CAST tests of every path."""

from __future__ import annotations

import numpy as np


def float16_edges() -> np.ndarray:
    """FLOAT32 bit patterns around every branch of a FLOAT32 -> FLOAT16 rounding, both signs."""
    edges = []
    for center in (
        0x00000000,  # zero and FLOAT32 subnormals
        0x33000000,  # 2^-25: half the least FLOAT16 subnormal (a tie to 0)
        0x33800000,  # the least FLOAT16 subnormal
        0x387FC000,  # the greatest FLOAT16 subnormal
        0x38800000,  # the least FLOAT16 normal
        0x3F800000,  # 1.0
        0x477FE000,  # 65504, the greatest FLOAT16
        0x477FF000,  # 65520: rounds to inf
        0x47800000,  # 2^16
        0x7F800000,  # inf
        0x7F802000,  # NaN payloads: the top ten bits, and those that vanish
        0x7FC00000,  # the quiet NaN
        0x7FFFFFFF,
    ):
        edges.extend(range(max(0, center - 0x2001), min(0x7FFFFFFF, center + 0x2001) + 1))
    bits = np.array(edges, dtype=np.uint32)
    return np.concatenate([bits, bits | np.uint32(0x80000000)])
