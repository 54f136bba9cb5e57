"""Scalar-loop oracles for RESAMPLE2 and RESAMPLE_GRAD1, written from spec section 2 / ruling 9
and from DirectML 1.15.4's measured LINEAR tap rule (erratum E32).

Independent of ``dmlops.reference``: one output element at a time, the N-D weight
as the explicit product of per-dimension tap weights, taps clamped literally
(``clamp(i0)``, ``clamp(i0 + 1)``). The coordinate is evaluated in float32, one
operation at a time, as dmlops documents.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def coordinate(o: int, scale: float, input_pixel_offset: float, output_pixel_offset: float) -> float:
    # x = (o - OutputPixelOffsets[d]) / Scales[d] - InputPixelOffsets[d], each step rounded to
    # float32, the division as a multiply by the float32 reciprocal (DirectML, erratum E34)
    t = np.float32(np.float32(o) - np.float32(output_pixel_offset))
    t = np.float32(t * np.float32(np.float32(1.0) / np.float32(scale)))
    return float(np.float32(t - np.float32(input_pixel_offset)))


def vector_lanes(m: int) -> int:
    # DirectML computes 8 (sizes that are multiples of 8 or >= 16) or 4 (multiples of 4 or
    # >= 8) consecutive outputs of the first dimension per thread, else one
    return 8 if m % 8 == 0 or m >= 16 else 4 if m % 4 == 0 or m >= 8 else 1


def is_identity(m: int, scale: float, ipo: float, opo: float) -> bool:
    return np.float32(scale) == 1 and all(coordinate(o, scale, ipo, opo) == o for o in range(m))


def taps(
    o: int, n: int, scale: float, ipo: float, opo: float, mode: str, direction: str, quotient: bool = True
) -> list[tuple[int, float]]:
    """(input index, weight) pairs that output index ``o`` reads along one dimension.

    ``quotient``: RESAMPLE2's LINEAR first tap (DirectML's quotient rule); RESAMPLE_GRAD1
    takes the page's ``floor(x)`` (erratum E32).
    """

    def clamp(i: int) -> int:
        return min(max(i, 0), n - 1)

    x = coordinate(o, scale, ipo, opo)
    if mode == "NEAREST_NEIGHBOR":
        # DECREASING rounds toward -inf (floor), INCREASING toward +inf (ceil)
        return [(clamp(math.floor(x) if direction == "DECREASING" else math.ceil(x)), 1.0)]
    # DirectML's first tap comes from the quotient q = (o - OutputPixelOffset) / Scale
    # (erratum E32): i0 = floor(q) - 1 when frac(q) < InputPixelOffset, else floor(q),
    # and the weight is x - i0 (outside [0, 1) when InputPixelOffset is).
    if quotient:
        q = float(
            np.float32(np.float32(np.float32(o) - np.float32(opo)) * np.float32(np.float32(1.0) / np.float32(scale)))
        )
        i0 = math.floor(q)
        if q - i0 < float(np.float32(ipo)):
            i0 -= 1
    else:
        i0 = math.floor(x)
    f = x - i0
    return [(clamp(i0), 1.0 - f), (clamp(i0 + 1), f)]


def _weights(in_sizes, out_coord, scales, ipo, opo, mode, direction, quotient=True, out_sizes=None):
    if out_sizes is None:  # the gradient: the page's taps everywhere
        per_dim = [
            taps(o, n, s, ip, op, mode, direction, quotient)
            for o, n, s, ip, op in zip(out_coord, in_sizes, scales, ipo, opo)
        ]
    else:
        # RESAMPLE2: the first dimension's lanes after the first of each thread take floor(x);
        # an identity dimension reads its first tap, unless every dimension is one (then the
        # first is interpolated as any other)
        identity = [is_identity(m, s, ip, op) for m, s, ip, op in zip(out_sizes, scales, ipo, opo)]
        per_dim = []
        for d, (o, n, s, ip, op) in enumerate(zip(out_coord, in_sizes, scales, ipo, opo)):
            q = quotient and (d > 0 or o % vector_lanes(out_sizes[0]) == 0)
            t = taps(o, n, s, ip, op, mode, direction, q)
            if mode == "LINEAR" and identity[d] and not (all(identity) and d == 0):
                t = [(t[0][0], 1.0)]
            per_dim.append(t)
    for combo in itertools.product(*per_dim):
        w = 1.0
        for _, wd in combo:
            w *= wd
        if w == 0.0:  # dmlops: a zero-weight tap is not read
            continue
        yield tuple(i for i, _ in combo), w


def resample2_oracle(x, out_sizes, scales, ipo, opo, mode="LINEAR", direction="DECREASING") -> np.ndarray:
    """RESAMPLE2 in float64 (not rounded to the output type)."""
    x = np.asarray(x)
    y = np.zeros(tuple(out_sizes), dtype=np.float64)
    for oc in itertools.product(*(range(m) for m in out_sizes)):
        total = 0.0
        for ic, w in _weights(x.shape, oc, scales, ipo, opo, mode, direction, out_sizes=tuple(out_sizes)):
            total += w * float(x[ic])
        y[oc] = total
    return y


def resample_grad1_oracle(dy, in_sizes, scales, ipo, opo, mode="LINEAR", direction="DECREASING") -> np.ndarray:
    """RESAMPLE_GRAD1 in float64: scatter every dy[o] onto the inputs the forward read.

    ``ipo``/``opo`` are the grad desc's InputPixelOffsets/OutputPixelOffsets. DirectML
    names them after the grad's own tensors (erratum E25): ``ipo`` goes with dy, the
    forward's output side, so the forward read with InputPixelOffsets ``opo`` and
    OutputPixelOffsets ``ipo``.
    """
    dy = np.asarray(dy)
    dx = np.zeros(tuple(in_sizes), dtype=np.float64)
    for oc in itertools.product(*(range(m) for m in dy.shape)):
        for ic, w in _weights(tuple(in_sizes), oc, scales, opo, ipo, mode, direction, quotient=False):
            dx[ic] += w * float(dy[oc])
    return dx


def round_to(values: np.ndarray, dtype) -> np.ndarray:
    """Round a float64 result once into ``dtype`` (nearest even; integers toward zero + saturate, E30)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.trunc(values), info.min, info.max).astype(dtype)
    return values.astype(dtype)


def resample_grad1_nearest_stack_matrix(desc, d: int) -> np.ndarray:
    """RESAMPLE_GRAD1 NEAREST along ``d`` as DirectML 1.15.4 computes it on the wine/vkd3d/lavapipe oracle.

    Returns the (OutputGradient index, InputGradient index) 0/1 matrix. DirectML maps each
    OutputGradient element i back to the range of forward outputs [lo, hi) whose rounded
    coordinate is i. Where hi is negative (every forward output that rounds to i lies at
    o <= -1), lavapipe converts it to 0xFFFFFFFF (D3D12's ftou: 0), clamped to the end: the
    row then receives the whole gradient. That is every row below round(x(-1)), the
    rounded coordinate of the forward output o = -1; other rows are the transpose. Checked
    on 154 1-D probe descs (both directions, Scales 1/8 to 3, offsets to +-100 and +-inf).
    """

    n, m = desc.forward_input_sizes[d], desc.forward_output_sizes[d]
    ipo, opo = desc.forward_pixel_offsets(d)
    o = np.arange(-1, m, dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        x = (o - np.float32(opo)) * (np.float32(1.0) / np.float32(desc.scales[d])) - np.float32(ipo)
    r = np.floor(x) if desc.rounding_direction.name == "DECREASING" else np.ceil(x)
    matrix = np.zeros((n, m))
    matrix[np.clip(np.nan_to_num(r[1:], nan=0.0), 0, n - 1).astype(np.intp), np.arange(m)] = 1
    matrix[: n if np.isnan(r[0]) else int(np.clip(r[0], 0, n - 1))] = 1
    return matrix
