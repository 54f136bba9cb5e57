"""The pooling, resampling and roi families' generic neighbours: NumPy reference against the real DirectML.

Seeded random descs per operator (``CASES`` per operator, default 12; the local campaign
runs with ``DMLOPS_POOLING_RESAMPLING_CASES=500``): every data type the stack runs,
4-D and 5-D inputs with a last dimension not divisible by 4, strided (padded) inputs
half of the time, zeros in Strides/WindowSize/Dilations, padding-only windows, output
sizes beside the floor formula's, and adversarial values (NaN, +-inf, +-0, ties,
+-FLT_MAX). Exact operators compare bit for bit (NaN equal to NaN); LP_POOLING with a
P other than 1 or 2 within float32 rounding (DirectML's power is the device's
``exp2(log2)``). Descs whose shaders this stack cannot compile
(DirectMLStackLimitError) are skipped and counted by pytest.
"""

from __future__ import annotations

import os
import zlib
from typing import Any

import numpy as np
import pytest
from _directml import directml, fail_on_differences, padded_strides, run_on_directml, same_bits  # noqa: F401  (fixture)

import dmlops
from dmlops.descs import desc_from_json
from dmlops.descs.resampling import resample2_equivalent
from dmlops.directml import create_operator
from dmlops.errors import DirectMLRejectedDescError, InvalidDescError, UnsupportedError
from dmlops.reference.resampling import resample

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]

CASES = int(os.environ.get("DMLOPS_POOLING_RESAMPLING_CASES", "12"))

ALL_TYPES = ("FLOAT32", "INT8", "UINT8", "INT32", "UINT32", "INT64", "UINT64")
"""Every data type this stack runs (FLOAT16, INT16 and UINT16 it does not)."""


def values(rng: np.random.Generator, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray:
    """Random data with ties, and for floats NaN, +-inf, +-0 and +-FLT_MAX among it."""
    kind = rng.integers(0, 3)
    if dtype.kind == "f":
        if kind == 0:  # ties
            x = rng.integers(-3, 4, shape).astype(dtype)
        else:
            x = (rng.standard_normal(shape) * rng.choice([1.0, 100.0, 1e-3])).astype(dtype)
        if kind == 2:
            specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3.4028235e38, -3.4028235e38], dtype)
            mask = rng.random(shape) < 0.15
            x[mask] = rng.choice(specials, int(mask.sum()))
        return x
    info = np.iinfo(dtype)
    if kind == 0:
        lo, hi = max(info.min, -3), min(info.max, 3)
        return rng.integers(lo, hi + 1, shape, dtype=dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _tensor(data_type: str, sizes: tuple[int, ...], strided: bool) -> dict[str, Any]:
    t: dict[str, Any] = {"DataType": data_type, "Sizes": list(sizes)}
    if strided:
        t["Strides"] = list(padded_strides(sizes))
    return t


# -- pooling ---------------------------------------------------------------------------------

POOLING = ("MAX_POOLING", "MAX_POOLING1", "AVERAGE_POOLING", "AVERAGE_POOLING1", "LP_POOLING", "LP_POOLING1")


def pooling_case(operator: str, seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A random desc (DxDispatch JSON) and inputs of one pooling operator."""
    rng = np.random.default_rng(zlib.crc32(f"{operator}-{seed}".encode()))
    spatial = int(rng.integers(2, 4))
    sizes = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    sizes += [int(rng.integers(1, 6)) for _ in range(spatial - 1)]
    last = int(rng.integers(1, 12))
    sizes.append(last + 1 if last % 4 == 0 else last)
    dilated = operator.endswith("1") and operator != "MAX_POOLING1"
    zeros = rng.random() < 0.15  # zeros in Strides / WindowSize / Dilations

    def pick(lo: int, hi: int) -> list[int]:
        return [int(rng.integers(0 if zeros else lo, hi + 1)) for _ in range(spatial)]

    window, strides, dilations = pick(1, 4), pick(1, 3), pick(1, 3) if dilated else [1] * spatial
    start, end = [int(rng.integers(0, 4)) for _ in range(spatial)], [int(rng.integers(0, 4)) for _ in range(spatial)]
    out = []
    for n, k, s, d, a, b in zip(sizes[2:], window, strides, dilations, start, end):
        eff = (k - 1) * d + 1
        floor = (n + a + b - eff) // s + 1 if s and eff <= n + a + b else 1
        out.append(max(1, floor + int(rng.choice([0, 0, 0, 1, -1, 2]))))
    if operator.startswith("MAX"):
        data_type = str(rng.choice(ALL_TYPES))
    else:
        data_type = "FLOAT32"
    strided = bool(rng.integers(0, 2))
    x = values(rng, np.dtype(data_type.lower()), tuple(sizes))
    desc: dict[str, Any] = {
        "InputTensor": _tensor(data_type, tuple(sizes), strided),
        "OutputTensor": _tensor(data_type, (*sizes[:2], *out), False),
        "Strides": strides,
        "WindowSize": window,
        "StartPadding": start,
        "EndPadding": end,
    }
    if dilated:
        desc["Dilations"] = dilations
    if operator == "MAX_POOLING1" and rng.random() < 0.7:
        index_type = "UINT64" if rng.random() < 0.3 else "UINT32"
        desc["OutputIndicesTensor"] = _tensor(index_type, (*sizes[:2], *out), False)
    if operator.startswith("AVERAGE"):
        desc["IncludePadding"] = bool(rng.integers(0, 2))
    if operator.startswith("LP"):
        desc["P"] = int(rng.choice([1, 2, 2, 3, 4, 0, 7]))
    return desc, {"InputTensor": x}


def _approximate(operator: str, desc: Any) -> bool:
    return operator.startswith("LP_POOLING") and int(desc.p) not in (1, 2)


U32 = 2.0**-24


def roi_tolerance(desc: Any, inputs: dict[str, np.ndarray]) -> float | None:
    """ROI_ALIGN1 LINEAR: the reference places samples in float64 (as ROI_ALIGN's), DirectML in float32.

    As the seed's parity tolerance (tests/directml/_differential.py): each sample
    coordinate may move by 8 u C (C the largest coordinate magnitude), which moves a
    bilinear sample by at most that times the largest step between neighbours,
    G <= 2 max |x|.
    """
    if desc.interpolation_mode.name != "LINEAR":
        return None
    rois = np.abs(inputs["ROITensor"].astype(np.float64))
    scale = max(abs(desc.spatial_scale_x), abs(desc.spatial_scale_y))
    offsets = abs(desc.input_pixel_offset) + abs(desc.output_pixel_offset)
    c = float(rois.max(initial=0.0)) * scale + max(desc.input_tensor.sizes[2:]) + 1 + offsets
    x = np.abs(inputs["InputTensor"].astype(np.float64))
    g = 2 * float(x[np.isfinite(x)].max(initial=0.0))
    return 16 * U32 * c * g


# -- resampling --------------------------------------------------------------------------------

RESAMPLING = ("RESAMPLE", "RESAMPLE1", "UPSAMPLE_2D")


def resampling_case(operator: str, seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A random desc (DxDispatch JSON) and inputs of one resampling operator."""
    rng = np.random.default_rng(zlib.crc32(f"{operator}-{seed}".encode()))
    mode = str(rng.choice(["NEAREST_NEIGHBOR", "LINEAR"]))
    strided = bool(rng.integers(0, 2))
    if operator == "UPSAMPLE_2D":
        dims = int(rng.integers(4, 6))
        sizes = [int(rng.integers(1, 3)) for _ in range(dims - 2)] + [int(rng.integers(1, 5)), 0]
        sizes[-1] = int(rng.choice([1, 2, 3, 5, 6, 7]))
        height, width = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        out = [*sizes[:-2], sizes[-2] * height, sizes[-1] * width]
        if rng.random() < 0.1:  # a wrong output size or a zero scale: both rejected
            if rng.random() < 0.5:
                out[-1] += 1
            else:
                width = 0
        x = values(rng, np.dtype("float32"), tuple(sizes))
        desc: dict[str, Any] = {
            "InputTensor": _tensor("FLOAT32", tuple(sizes), strided),
            "OutputTensor": _tensor("FLOAT32", tuple(out), False),
            "ScaleSize": {"Width": width, "Height": height},
            "InterpolationMode": mode,
        }
        return desc, {"InputTensor": x}
    data_type = str(rng.choice(["FLOAT32", "FLOAT32", "INT8", "UINT8"]))
    sizes = [
        int(rng.integers(1, 3)),
        int(rng.integers(1, 3)),
        int(rng.integers(1, 6)),
        int(rng.choice([1, 2, 3, 5, 6, 7])),
    ]
    out = [max(1, n + int(rng.integers(-1, 6))) if rng.random() < 0.7 else n for n in sizes]
    scales, ipo, opo = [], [], []
    for n, m in zip(sizes, out):
        scale = float(np.float32(m / n)) if rng.random() < 0.6 else float(np.float32(rng.uniform(0.3, 4)))
        if rng.random() < 0.04:
            scale = float(rng.choice([0.0, -1.0, 1e-9, np.inf]))
        scales.append(scale)
        ipo.append(float(np.float32(rng.choice([0.5, 0.0, rng.uniform(-2, 2)]))))
        opo.append(float(np.float32(rng.choice([-0.5, 0.0, rng.uniform(-2, 2)]))))
    x = values(rng, np.dtype(data_type.lower()), tuple(sizes))
    desc = {
        "InputTensor": _tensor(data_type, tuple(sizes), strided),
        "OutputTensor": _tensor(data_type, tuple(out), False),
        "InterpolationMode": mode,
        "Scales": scales,
    }
    if operator == "RESAMPLE1":
        desc["InputPixelOffsets"] = ipo
        desc["OutputPixelOffsets"] = opo
    return desc, {"InputTensor": x}


def stack_artefacts(desc: Any, inputs: dict[str, np.ndarray]) -> np.ndarray | None:
    """Outputs where this stack's float-to-integer conversion, not DirectML, decides the value.

    vkd3d 1.6 emits unsaturated SPIR-V conversions and lavapipe gives 0xFFFFFFFF /
    INT_MIN for a negative or NaN float (docs/errata.md, the rows beside E51 and E55);
    D3D12 gives 0 and saturates. NEAREST: an index that rounds below 0 reads the last
    element. LINEAR into UINT8: a negative or NaN value (an extrapolation, offsets
    outside [0, 1)) gives 255; into INT8 NaN and values >= 2^31 give -128.
    """
    r2 = resample2_equivalent(desc)
    if r2.interpolation_mode.name != "NEAREST_NEIGHBOR":
        if desc.output_tensor.data_type.name not in ("UINT8", "INT8"):
            return None
        with np.errstate(all="ignore"):
            v = resample(inputs["InputTensor"], r2).astype(np.float64)
            if desc.output_tensor.data_type.name == "UINT8":
                return np.asarray(np.isnan(v) | (v <= -1), dtype=bool)
            return np.asarray(np.isnan(v) | (v >= 2.0**31), dtype=bool)
    masks = [np.floor(r2.input_coordinates(d).astype(np.float64)) < 0 for d in range(r2.dimension_count)]
    grid = np.zeros(r2.output_tensor.sizes, dtype=bool)
    for d, m in enumerate(masks):
        grid |= m.reshape([-1 if i == d else 1 for i in range(len(masks))])
    return grid


# -- roi ----------------------------------------------------------------------------------------


def roi_align1_case(seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A random ROI_ALIGN1 desc (DxDispatch JSON) and inputs."""
    rng = np.random.default_rng(zlib.crc32(f"ROI_ALIGN1-{seed}".encode()))
    n, c, h = int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 7))
    w = int(rng.choice([1, 2, 3, 5, 6, 7, 9]))
    num = int(rng.integers(1, 5))
    sx, sy = (float(np.float32(rng.choice([1.0, 0.5, 2.0, rng.uniform(0.1, 3)]))) for _ in range(2))
    corners = rng.uniform(-2, 1.2, (num, 4)) * np.array([w, h, w, h]) / np.array([sx, sy, sx, sy])
    corners[:, 2:] += rng.uniform(0, 1.2, (num, 2)) * np.array([w, h]) / np.array([sx, sy])
    if rng.random() < 0.2:
        corners[:, [0, 2]] = corners[:, [2, 0]]  # inverted regions
    if rng.random() < 0.1:
        corners[0, 2] = corners[0, 0]  # a zero-size region
    rois = corners.astype(np.float32)
    if rng.random() < 0.3:
        rois = np.round(rois * 2).astype(np.float32) / 2  # samples on pixels and half pixels
    index_type = str(rng.choice(["UINT32", "UINT64"]))
    batch = rng.integers(0, n, num).astype(index_type.lower())
    roi_shape = [(num, 4), (1, num, 4), (1, 1, num, 4)][int(rng.integers(0, 3))]
    batch_shape = [(num,), (1, num), (1, 1, num), (1, 1, 1, num)][int(rng.integers(0, 4))]
    oh, ow = int(rng.integers(1, 5)), int(rng.choice([1, 2, 3, 5, 6]))
    lo = int(rng.integers(1, 4))
    hi = int(rng.choice([lo, lo + 1, lo + 3, 0xFFFFFFFF if rng.random() < 0.3 else lo]))

    def offset() -> float:
        return float(np.float32(rng.choice([0.0, 0.5, -0.5, 0.25, rng.uniform(-1.5, 1.5)])))

    strided = bool(rng.integers(0, 2))
    x = values(rng, np.dtype("float32"), (n, c, h, w))
    desc: dict[str, Any] = {
        "InputTensor": _tensor("FLOAT32", (n, c, h, w), strided),
        "ROITensor": _tensor("FLOAT32", roi_shape, False),
        "BatchIndicesTensor": _tensor(index_type, batch_shape, False),
        "OutputTensor": _tensor("FLOAT32", (num, c, oh, ow), False),
        "ReductionFunction": str(rng.choice(["AVERAGE", "MAX"])),
        "InterpolationMode": str(rng.choice(["NEAREST_NEIGHBOR", "LINEAR"])),
        "SpatialScaleX": sx,
        "SpatialScaleY": sy,
        "InputPixelOffset": offset(),
        "OutputPixelOffset": offset(),
        "OutOfBoundsInputValue": float(np.float32(rng.choice([0.0, -7.5, rng.standard_normal()]))),
        "MinimumSamplesPerOutput": lo,
        "MaximumSamplesPerOutput": hi,
        "AlignRegionsToCorners": bool(rng.integers(0, 2)),
    }
    inputs = {"InputTensor": x, "ROITensor": rois.reshape(roi_shape), "BatchIndicesTensor": batch.reshape(batch_shape)}
    return desc, inputs


# -- comparison -------------------------------------------------------------------------------


def compare(
    expected: np.ndarray,
    got: np.ndarray,
    *,
    approximate: bool,
    signed_zero: bool = True,
    leave_out: np.ndarray | None = None,
    atol: float | None = None,
) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if leave_out is not None:
        got, expected = got[~leave_out], expected[~leave_out]
    if not signed_zero and got.dtype.kind == "f":
        # MAX_POOLING's maximum of -0 and +0: DirectML's sign depends on its shader (the
        # errata row beside E37); dmlops keeps the selected element's bits.
        got, expected = got + np.float32(0), expected + np.float32(0)
    if got.dtype.kind != "f":
        bad = np.flatnonzero(got != expected)
    elif approximate or atol is not None:
        with np.errstate(all="ignore"):
            e, g = expected.astype(np.float64), got.astype(np.float64)
            close = np.abs(g - e) <= (atol or 1e-30) + 4e-6 * np.abs(e)
        close |= (got == expected) | (np.isnan(got) & np.isnan(expected))
        bad = np.flatnonzero(~close)
    else:
        bad = np.flatnonzero(~same_bits(got, expected))
    fail_on_differences(bad, got, expected)


def check(operator: str, desc_json: dict[str, Any], inputs: dict[str, np.ndarray]) -> None:
    desc = desc_from_json(operator, desc_json)
    try:
        desc.validate()
        dmlops.execute(desc, inputs, backend="numpy")  # the family's own rules run here too
    except UnsupportedError as exc:
        pytest.skip(f"not implemented by the numpy backend: {exc}")
    except InvalidDescError:
        # dmlops rejects it: DirectML's CreateOperator must reject it too (validation parity)
        with pytest.raises(DirectMLRejectedDescError):
            create_operator(desc)
        return
    got = run_on_directml(desc, inputs)
    expected = dmlops.execute(desc, inputs, backend="numpy")
    leave_out = stack_artefacts(desc, inputs) if operator in RESAMPLING else None
    try:
        for member, array in expected.items():
            compare(
                array,
                got[member],
                approximate=_approximate(operator, desc),
                signed_zero=not operator.startswith("MAX"),
                leave_out=leave_out,
                atol=roi_tolerance(desc, inputs) if operator == "ROI_ALIGN1" else None,
            )
    except pytest.fail.Exception:
        if operator in ("RESAMPLE", "RESAMPLE1") and _same_as_resample2(desc, inputs, got["OutputTensor"]):
            pytest.xfail(
                "RESAMPLE2's own divergence (errata E33/E39: uncharacterised N-D taps): DirectML computes "
                "this desc exactly as RESAMPLE2 on the equivalent desc"
            )
        raise


def _same_as_resample2(desc: Any, inputs: dict[str, np.ndarray], got: np.ndarray) -> bool:
    """Whether DirectML's result equals DirectML's RESAMPLE2 on the equivalent desc, bit for bit."""
    other = dmlops.execute(resample2_equivalent(desc), inputs, backend="directml")["OutputTensor"]
    return bool(np.array_equal(other.view(np.uint8), got.view(np.uint8)))


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("operator", POOLING)
def test_pooling_matches_directml(operator: str, seed: int) -> None:
    desc, inputs = pooling_case(operator, seed)
    check(operator, desc, inputs)


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("operator", RESAMPLING)
def test_resampling_matches_directml(operator: str, seed: int) -> None:
    desc, inputs = resampling_case(operator, seed)
    check(operator, desc, inputs)


@pytest.mark.parametrize("seed", range(CASES))
def test_roi_align1_matches_directml(seed: int) -> None:
    desc, inputs = roi_align1_case(seed)
    check("ROI_ALIGN1", desc, inputs)


@pytest.mark.parametrize(
    ("operator", "change"),
    [
        (
            "MAX_POOLING",
            {"Strides": [1, 1, 1], "WindowSize": [1, 1, 1], "StartPadding": [0] * 3, "EndPadding": [0] * 3},
        ),
        ("AVERAGE_POOLING", {"OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 2, 3, 3]}}),
        ("MAX_POOLING1", {"OutputIndicesTensor": {"DataType": "UINT32", "Sizes": [1, 1, 3, 2]}}),
    ],
)
def test_pooling_rules_match_createoperator(operator: str, change: dict[str, Any]) -> None:
    """Each rule dmlops adds to the catalogue's is one DirectML's CreateOperator enforces."""
    desc: dict[str, Any] = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
        "Strides": [1, 1],
        "WindowSize": [1, 1],
        "StartPadding": [0, 0],
        "EndPadding": [0, 0],
        **({"IncludePadding": True} if operator.startswith("AVERAGE") else {}),
    }
    desc.update(change)
    parsed = desc_from_json(operator, desc)
    with pytest.raises(InvalidDescError):
        dmlops.execute(parsed, {"InputTensor": np.zeros((1, 1, 3, 3), np.float32)}, backend="numpy")
    with pytest.raises(DirectMLRejectedDescError):
        create_operator(parsed)


@pytest.mark.parametrize(
    ("operator", "members"),
    [
        ("RESAMPLE", {"InterpolationMode": "LINEAR", "Scales": [1, 1, 2]}),
        ("RESAMPLE", {"InterpolationMode": "LINEAR", "Scales": [1, 1, 1, 1e-9]}),
        (
            "RESAMPLE1",
            {
                "InterpolationMode": "LINEAR",
                "Scales": [1, 1, 1, -1.0],
                "InputPixelOffsets": [0.5] * 4,
                "OutputPixelOffsets": [-0.5] * 4,
            },
        ),
        ("UPSAMPLE_2D", {"InterpolationMode": "LINEAR", "ScaleSize": {"Width": 0, "Height": 1}}),
        ("UPSAMPLE_2D", {"InterpolationMode": "LINEAR", "ScaleSize": {"Width": 2, "Height": 1}}),
    ],
)
def test_resampling_rules_match_createoperator(operator: str, members: dict[str, Any]) -> None:
    """Each resampling rule dmlops adds to the catalogue's is one DirectML's CreateOperator enforces."""
    desc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 5]},
        **members,
    }
    parsed = desc_from_json(operator, desc)
    with pytest.raises(InvalidDescError):
        dmlops.execute(parsed, {"InputTensor": np.zeros((1, 1, 2, 3), np.float32)}, backend="numpy")
    with pytest.raises(DirectMLRejectedDescError):
        create_operator(parsed)


@pytest.mark.parametrize("op", ["RESAMPLE", "RESAMPLE1"])
@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("mode", ["NEAREST_NEIGHBOR", "LINEAR"])
def test_resample_below_four_dimensions(op: str, rank: int, mode: str) -> None:
    """RESAMPLE and RESAMPLE1 take 1 to 4 dimensions on DirectML 1.15.4 (the table says 4):
    dmlops validates them and computes DirectML's bits."""
    sizes, out = [2] * (rank - 1) + [5], [3] * (rank - 1) + [7]
    desc_json: dict = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": sizes},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": out},
        "InterpolationMode": mode,
        "Scales": [1.5] * (rank - 1) + [1.4],
    }
    if op == "RESAMPLE1":
        desc_json |= {"InputPixelOffsets": [0.5] * rank, "OutputPixelOffsets": [-0.5] * rank}
    desc = desc_from_json(op, desc_json)
    x = np.random.default_rng(rank).standard_normal(sizes).astype(np.float32)
    want = dmlops.execute(desc, {"InputTensor": x}, backend="directml")["OutputTensor"]
    got = dmlops.execute(desc, {"InputTensor": x})["OutputTensor"]
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
