"""Pooling, resampling and ROI neighbours: the NumPy reference against the real DirectML.

AVERAGE_POOLING_GRAD, MAX_UNPOOLING, RESAMPLE_GRAD and VALUE_SCALE_2D (ROI_POOLING and
ROI_ALIGN_GRAD: not yet). Seeded random descs per operator (``CASES``, default 10; the local
campaign runs with ``DMLOPS_SPATIAL_NEIGHBOURS_CASES=500``): every data type this stack
runs (FLOAT16, INT16 and UINT16 it does not), 4-D and 5-D where the operator takes them,
strided (padded) inputs half of the time, every enum value, optional tensors present and
absent, and adversarial values (NaN, +-inf, +-0, ties, integer extremes, out-of-range and
duplicate indices). Exact operators (MAX_UNPOOLING, VALUE_SCALE_2D) compare
bit for bit, NaN equal to NaN; the gradients within float32 rounding of their sums
(:func:`sum_tolerance`: DirectML's order of the float32 additions is its shader's).

Local campaign (DirectML 1.15.4 under Wine + lavapipe): see ``CAMPAIGN``.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from _directml import directml, fail_on_differences, padded_strides, run_on_directml, same_bits  # noqa: F401  (fixture)

import dmlops
from dmlops.descs import desc_from_json
from dmlops.descs.resampling import desc_taps, resample_grad1_equivalent
from dmlops.directml import create_operator
from dmlops.errors import DataIndexError, DirectMLRejectedDescError, InvalidDescError
from oracles.resample import resample_grad1_nearest_stack_matrix

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]

CASES = int(os.environ.get("DMLOPS_SPATIAL_NEIGHBOURS_CASES", "10"))

CAMPAIGN = {
    "AVERAGE_POOLING_GRAD": (500, 500),
    "MAX_UNPOOLING": (500, 500),
    "VALUE_SCALE_2D": (500, 500),
    "RESAMPLE_GRAD": (500, 498),
}
"""Local campaign, ``DMLOPS_SPATIAL_NEIGHBOURS_CASES=500``: (cases run, cases agreeing) per operator.
RESAMPLE_GRAD: the two others are ``UNCHARACTERISED`` (xfail); 73 of its 267 NEAREST cases are
compared on nothing (every element left out as this stack's ftou, :func:`resample_grad_stack_rows`).
ROI_POOLING and ROI_ALIGN_GRAD are not covered yet (no numpy reference)."""

FLT_MAX = float(np.finfo(np.float32).max)
INT_TYPES = ("INT8", "UINT8", "INT32", "UINT32", "INT64", "UINT64")


def _rng(operator: str, seed: int) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(f"{operator}-{seed}".encode()))


def _tensor(data_type: str, sizes: tuple[int, ...] | list[int], strided: bool = False) -> dict[str, Any]:
    t: dict[str, Any] = {"DataType": data_type, "Sizes": list(sizes)}
    if strided:
        t["Strides"] = list(padded_strides(tuple(sizes)))
    return t


def floats(rng: np.random.Generator, shape: tuple[int, ...] | list[int], *, specials: bool = True) -> np.ndarray:
    """Random float32 data: small integers (ties), normal values of several magnitudes, specials among them."""
    shape = tuple(shape)
    kind = int(rng.integers(0, 3))
    if kind == 0:
        x = rng.integers(-3, 4, shape).astype(np.float32)
    else:
        x = (rng.standard_normal(shape) * rng.choice([1.0, 100.0, 1e-3])).astype(np.float32)
    if specials and kind == 2:
        pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, FLT_MAX, -FLT_MAX, 1e-40], np.float32)
        mask = rng.random(shape) < 0.15
        x[mask] = rng.choice(pool, int(mask.sum()))
    return x


def data(rng: np.random.Generator, dtype: np.dtype[Any], shape: tuple[int, ...] | list[int]) -> np.ndarray:
    """:func:`floats`, or integers: small ones (ties) or the whole range (extremes included)."""
    if dtype.kind == "f":
        return floats(rng, shape).astype(dtype)
    info = np.iinfo(dtype)
    if rng.random() < 0.5:
        return rng.integers(max(info.min, -3), min(info.max, 3) + 1, tuple(shape), dtype=dtype)
    x = rng.integers(info.min, info.max, tuple(shape), dtype=dtype, endpoint=True)
    x.flat[0] = info.min
    x.flat[-1] = info.max
    return x


# -- case generators ---------------------------------------------------------------------------


def average_pooling_grad_case(seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Random windows (zeros in Strides and WindowSize too), gradient sizes beside the floor formula's."""
    rng = _rng("AVERAGE_POOLING_GRAD", seed)
    spatial = int(rng.integers(2, 4))
    sizes = [int(rng.integers(1, 3)), int(rng.integers(1, 3))] + [int(rng.integers(1, 7)) for _ in range(spatial)]
    zeros = rng.random() < 0.1
    window = [int(rng.integers(0 if zeros else 1, 5)) for _ in range(spatial)]
    strides = [int(rng.integers(0 if zeros else 1, 4)) for _ in range(spatial)]
    start = [int(rng.integers(0, 4)) for _ in range(spatial)]
    end = [int(rng.integers(0, 4)) for _ in range(spatial)]
    out = []
    for n, k, s, a, b in zip(sizes[2:], window, strides, start, end):
        floor = (n + a + b - k) // s + 1 if s and k <= n + a + b else 1
        out.append(max(1, floor + int(rng.choice([0, 0, 0, 1, -1, 2]))))
    dy_sizes = (*sizes[:2], *out)
    desc = {
        "InputGradientTensor": _tensor("FLOAT32", dy_sizes, bool(rng.integers(0, 2))),
        "OutputGradientTensor": _tensor("FLOAT32", sizes, rng.random() < 0.2),
        "Strides": strides,
        "WindowSize": window,
        "StartPadding": start,
        "EndPadding": end,
        "IncludePadding": bool(rng.integers(0, 2)),
    }
    return desc, {"InputGradientTensor": floats(rng, dy_sizes)}


def max_unpooling_case(seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Random indices over the whole output: permutations, out-of-range ones, duplicates of equal values."""
    rng = _rng("MAX_UNPOOLING", seed)
    data_type = str(rng.choice(["FLOAT32", *INT_TYPES]))
    index_type = str(rng.choice(["UINT32", "UINT64"]))
    x_sizes = tuple(int(rng.integers(1, 4)) for _ in range(2)) + tuple(int(rng.integers(1, 5)) for _ in range(2))
    if rng.random() < 0.7:
        y_sizes = (*x_sizes[:2], *(n * int(rng.integers(1, 3)) for n in x_sizes[2:]))
    else:  # any sizes: other N or C, smaller than the input
        y_sizes = tuple(int(rng.integers(1, 5)) for _ in range(4))
    count, total = int(np.prod(x_sizes)), int(np.prod(y_sizes))
    x = data(rng, np.dtype(data_type.lower()), x_sizes)
    indices = rng.permutation(max(total, count))[:count].astype(np.uint64)
    kind = rng.random()
    if kind < 0.3:  # duplicates that write the same value (max pooling's overlapping windows)
        dup = rng.integers(0, count, count // 2 + 1)
        x.reshape(-1)[dup] = x.reshape(-1)[0]
        indices[dup] = indices[0]
    elif kind < 0.5:  # out of range: past the end, and (UINT64) past 2^32, read as the low 32 bits
        far = rng.random(count) < 0.3
        indices[far] = rng.integers(total, total + 50, int(far.sum()))
        if index_type == "UINT64":
            wrap = rng.random(count) < 0.2
            indices[wrap] = np.uint64(1 << 32) * np.uint64(rng.integers(1, 4)) + (indices[wrap] % np.uint64(total))
            x = _equal_where_clash(x, indices, total)
    strided = bool(rng.integers(0, 2))
    desc = {
        "InputTensor": _tensor(data_type, x_sizes, strided),
        "IndicesTensor": _tensor(index_type, x_sizes, rng.random() < 0.3),
        "OutputTensor": _tensor(data_type, y_sizes, rng.random() < 0.3),
    }
    return desc, {"InputTensor": x, "IndicesTensor": indices.astype(index_type.lower()).reshape(x_sizes)}


def _equal_where_clash(x: np.ndarray, indices: np.ndarray, total: int) -> np.ndarray:
    """``x`` with the elements whose (wrapped) indices collide made equal, so the result is defined."""
    target = indices & np.uint64(0xFFFFFFFF)
    flat = x.reshape(-1).copy()
    for t in np.unique(target[target < total]):
        where = np.flatnonzero(target == t)
        flat[where] = flat[where[0]]
    return flat.reshape(x.shape)


def value_scale_2d_case(seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Random Scale and Bias (specials among them), 1 or 3 channels."""
    rng = _rng("VALUE_SCALE_2D", seed)
    channels = int(rng.choice([1, 3]))
    sizes = (int(rng.integers(1, 4)), channels, int(rng.integers(1, 6)), int(rng.integers(1, 9)))
    pool = [np.nan, np.inf, -np.inf, 0.0, -0.0, FLT_MAX, 1e-40]

    def number() -> float:
        if rng.random() < 0.1:
            return float(rng.choice(pool))
        return float(np.float32(rng.standard_normal() * rng.choice([1.0, 100.0])))

    desc = {
        "InputTensor": _tensor("FLOAT32", sizes, bool(rng.integers(0, 2))),
        "OutputTensor": _tensor("FLOAT32", sizes, rng.random() < 0.2),
        "Scale": number(),
        "Bias": [number() for _ in range(channels)],
    }
    return desc, {"InputTensor": floats(rng, sizes)}


def resample_grad_case(seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Random Scales (mostly the sizes' ratio) and offsets (mostly pixel centres or 0), both modes, free N and C."""
    rng = _rng("RESAMPLE_GRAD", seed)
    sizes = [int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 8))]
    out = [max(1, n + int(rng.integers(-1, 6))) if rng.random() < 0.7 else n for n in sizes]
    scales = [
        float(np.float32(m / n)) if rng.random() < 0.8 else float(np.float32(rng.uniform(0.3, 4)))
        for n, m in zip(sizes, out)
    ]
    centres = rng.random() < 0.7
    ipo = [float(np.float32(rng.choice([0.5, 0.0] if centres else [0.5, 0.0, rng.uniform(-1, 1)]))) for _ in sizes]
    opo = [float(np.float32(rng.choice([-0.5, 0.0] if centres else [-0.5, 0.0, rng.uniform(-1, 1)]))) for _ in sizes]
    mode = str(rng.choice(["NEAREST_NEIGHBOR", "LINEAR"]))
    desc = {
        "InputGradientTensor": _tensor("FLOAT32", out, bool(rng.integers(0, 2))),
        "OutputGradientTensor": _tensor("FLOAT32", sizes, rng.random() < 0.2),
        "InterpolationMode": mode,
        "Scales": scales,
        "InputPixelOffsets": ipo,
        "OutputPixelOffsets": opo,
    }
    # LINEAR: finite gradients only. DirectML multiplies every tap, so an infinite gradient
    # gives NaN at a weight-0 tap, and sums near FLT_MAX overflow in float32; the reference
    # sums in float64 (RESAMPLE_GRAD1's rule, which shares this limit).
    return desc, {"InputGradientTensor": floats(rng, out, specials=mode == "NEAREST_NEIGHBOR")}


def resample_grad_stack_rows(desc: Any) -> np.ndarray | None:
    """OutputGradientTensor elements this stack's float-to-integer conversion decides (NEAREST only).

    RESAMPLE_GRAD NEAREST runs as RESAMPLE_GRAD1 does on this stack (tests/oracles/resample.py,
    :func:`resample_grad1_nearest_stack_matrix`): a row whose range of forward outputs ends
    below 0 converts it to 0xFFFFFFFF (D3D12: 0) and receives the whole gradient. Those
    rows are left out: they are lavapipe's, not DirectML's.
    """
    grad1 = resample_grad1_equivalent(desc)
    if grad1.interpolation_mode.name != "NEAREST_NEIGHBOR":
        return None
    sizes = grad1.output_gradient_tensor.sizes
    mask = np.zeros(sizes, dtype=bool)
    for d in range(grad1.dimension_count):
        # As RESAMPLE_GRAD1's differential test (tests/directml/_differential.py, _negative_taps):
        # DirectML maps back through the boundaries b_i = (i + InputPixelOffset) * Scale +
        # OutputPixelOffset between elements i - 1 and i (the forward's offsets); one outside
        # [0, forward output size] is converted without D3D's saturation here.
        n, m = grad1.forward_input_sizes[d], grad1.forward_output_sizes[d]
        inoff, outoff = grad1.forward_pixel_offsets(d)
        with np.errstate(over="ignore", invalid="ignore"):
            b = (np.arange(1, n, dtype=np.float32) + np.float32(inoff)) * np.float32(grad1.scales[d])
            b = b + np.float32(outoff)
        if ((b < 0) | (b > m) | ~np.isfinite(b)).any():
            return np.ones(sizes, dtype=bool)
        stack = resample_grad1_nearest_stack_matrix(grad1, d)
        transpose = np.zeros_like(stack)
        ((index, _),) = desc_taps(grad1)[d]
        transpose[index, np.arange(index.size)] = 1
        rows = np.any(stack != transpose, axis=1)
        mask |= rows.reshape([-1 if i == d else 1 for i in range(len(sizes))])
    return mask


GENERATORS: dict[str, Callable[[int], tuple[dict[str, Any], dict[str, np.ndarray]]]] = {
    "AVERAGE_POOLING_GRAD": average_pooling_grad_case,
    "MAX_UNPOOLING": max_unpooling_case,
    "VALUE_SCALE_2D": value_scale_2d_case,
    "RESAMPLE_GRAD": resample_grad_case,
}

EXACT = frozenset(("MAX_UNPOOLING", "VALUE_SCALE_2D"))
"""Operators compared bit for bit; the others within :func:`sum_tolerance`."""


# -- comparison ----------------------------------------------------------------------------


def sum_tolerance(magnitude: np.ndarray) -> np.ndarray:
    """Float32 rounding of a sum whose terms have absolute sum ``magnitude``, in any order (per element).

    Each of the float32 additions rounds by at most half an ulp of the partial sum, which is
    at most ``magnitude``: ``n`` additions of ``n + 1`` terms stay within ``n u magnitude``;
    a generous ``64 u magnitude`` covers the sums here (at most a few dozen terms).
    """
    return 64 * 2.0**-24 * magnitude


def compare(
    operator: str,
    expected: np.ndarray,
    got: np.ndarray,
    magnitude: np.ndarray | None,
    leave_out: np.ndarray | None = None,
) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if leave_out is not None:
        got, expected = got[~leave_out], expected[~leave_out]
        magnitude = None if magnitude is None else magnitude[~leave_out]
    if operator in EXACT or got.dtype.kind != "f" or magnitude is None:
        bad = np.flatnonzero(~same_bits(got, expected))
    else:
        with np.errstate(all="ignore"):
            e, g = expected.astype(np.float64), got.astype(np.float64)
            # A non-finite result (an infinite or NaN term) must match exactly.
            close = np.isfinite(e) & (np.abs(g - e) <= sum_tolerance(magnitude))
        close |= same_bits(got, expected)
        bad = np.flatnonzero(~close)
    fail_on_differences(bad, got, expected)


def magnitudes(operator: str, desc: Any, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per output: the sum of the absolute terms each element adds (the reference on |inputs|)."""
    if operator in EXACT:
        return {}
    absolute = {k: np.abs(v) if v.dtype.kind == "f" else v for k, v in inputs.items()}
    with np.errstate(all="ignore"):
        out = dmlops.execute(desc, absolute, backend="numpy")
    return {k: np.abs(v.astype(np.float64)) for k, v in out.items()}


def check(operator: str, desc_json: dict[str, Any], inputs: dict[str, np.ndarray]) -> None:
    desc = desc_from_json(operator, desc_json)
    try:
        desc.validate()
    except InvalidDescError:
        # dmlops rejects it: DirectML's CreateOperator must reject it too (validation parity)
        with pytest.raises(DirectMLRejectedDescError):
            create_operator(desc)
        return
    try:
        expected = dmlops.execute(desc, inputs, backend="numpy")
    except DataIndexError as exc:
        pytest.skip(f"refused by the reference (undefined in DirectML): {exc}")
    got = run_on_directml(desc, inputs)
    scale = magnitudes(operator, desc, inputs)
    leave_out = resample_grad_stack_rows(desc) if operator == "RESAMPLE_GRAD" else None
    for member, array in expected.items():
        compare(operator, array, got[member], scale.get(member), leave_out)


UNCHARACTERISED = {
    ("RESAMPLE_GRAD", 165): "LINEAR: one element 13 ulp of its magnitude off (weights, not the order of the sum); "
    "InputPixelOffsets[0] -0.75, outside [0, 1) as in the only other such case seen (3 in 1000 LINEAR cases)",
    ("RESAMPLE_GRAD", 212): "NEAREST: one element gets an extra -inf term (NaN), beside this stack's ftou rows",
}
"""Seeds (of the local campaign) where DirectML differs and the cause is not characterised yet."""


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("operator", sorted(GENERATORS))
def test_matches_directml(operator: str, seed: int) -> None:
    if (operator, seed) in UNCHARACTERISED:
        pytest.xfail(UNCHARACTERISED[operator, seed])
    desc, inputs = GENERATORS[operator](seed)
    check(operator, desc, inputs)


# -- the findings, one desc each ------------------------------------------------------------------


def _both(operator: str, desc_json: dict[str, Any], inputs: dict[str, np.ndarray]) -> tuple[Any, Any]:
    desc = desc_from_json(operator, desc_json)
    (member,) = desc.tensor_names("output")
    ours = dmlops.execute(desc, inputs, backend="numpy")[member]
    return ours, run_on_directml(desc, inputs)[member]


def test_max_unpooling_uint64_indices_read_as_32_bits() -> None:
    """E170: 2^32 + 1 writes element 1, 2^33 element 0; indices count over the whole output."""
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 2, 1, 2)
    indices = np.array([2**32 + 1, 2**33, 7, 100], dtype=np.uint64).reshape(x.shape)
    desc = {
        "InputTensor": _tensor("FLOAT32", x.shape),
        "IndicesTensor": _tensor("UINT64", x.shape),
        "OutputTensor": _tensor("FLOAT32", (1, 2, 2, 2)),
    }
    ours, theirs = _both("MAX_UNPOOLING", desc, {"InputTensor": x, "IndicesTensor": indices})
    np.testing.assert_array_equal(theirs.reshape(-1), [2, 1, 0, 0, 0, 0, 0, 3])
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("strides", [[1, 1], [1, 0]])
def test_average_pooling_grad_include_padding_divisor(strides: list[int]) -> None:
    """E171: windows past EndPadding divide by their part inside the padded input; a zero stride sends nothing."""
    desc = {
        "InputGradientTensor": _tensor("FLOAT32", (1, 1, 1, 4)),
        "OutputGradientTensor": _tensor("FLOAT32", (1, 1, 1, 3)),
        "Strides": strides,
        "WindowSize": [1, 2],
        "StartPadding": [0, 1],
        "EndPadding": [0, 0],
        "IncludePadding": True,
    }
    dy = np.array([2, 4, 8, 16], dtype=np.float32).reshape(1, 1, 1, 4)
    ours, theirs = _both("AVERAGE_POOLING_GRAD", desc, {"InputGradientTensor": dy})
    # windows [-1, 0], [0, 1], [1, 2], [2, 3]: divisors 2, 2, 2, 1 (the forward's would be 2)
    want = [1 + 2, 2 + 4, 4 + 16] if strides[1] else [0, 0, 0]
    np.testing.assert_array_equal(theirs.reshape(-1), want)
    np.testing.assert_array_equal(ours, theirs)


def test_value_scale_2d_rounds_the_product_first() -> None:
    """(1 + 2^-12)^2 - (1 + 2^-11) is 0 with two roundings, 2^-24 with a fused multiply-add."""
    x = np.full((1, 1, 1, 1), 1 + 2**-12, dtype=np.float32)
    desc = {
        "InputTensor": _tensor("FLOAT32", x.shape),
        "OutputTensor": _tensor("FLOAT32", x.shape),
        "Scale": 1 + 2**-12,
        "Bias": [-(1 + 2**-11)],
    }
    ours, theirs = _both("VALUE_SCALE_2D", desc, {"InputTensor": x})
    assert theirs.item() == 0.0 == ours.item()
