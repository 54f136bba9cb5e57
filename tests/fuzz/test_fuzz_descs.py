"""Fuzz every operator's desc: each draw is rejected with InvalidDescError or runs like the loop oracle.

For every operator, data type and rank 1-8, hypothesis draws a desc that follows the
page's rules, then (in most draws) mutates 1-3 members with junk of any JSON kind,
deletes members, changes ranks, data types and sizes (including 0, 2^31, 2^32). The
desc is built through ``desc_from_json`` (DxDispatch dict) or the desc class
(keyword arguments, tensors as TensorDesc or dict) and validated at a random feature
level. Then exactly one of these must hold:

* construction or validation raises :class:`dmlops.InvalidDescError` (a
  ``DescParseError`` is one), and nothing else;
* the desc is valid and ``dmlops.execute`` on random data returns what the slow
  scalar-loop oracle in ``tests/oracles`` returns: bit-exact for data movement
  (SLICE1, GATHER, MAX_POOLING2, NEAREST resampling, MAX_POOLING_GRAD with
  integer-valued gradients); for interpolating arithmetic (LINEAR resampling,
  ROI_ALIGN) the float64 sums may associate differently, so after the single rounding
  into the output type they may differ by one unit in the last place.

Valid descs whose tensors exceed ``MAX_RUN_ELEMENTS`` are validated but not run.
Examples per operator: ``DMLOPS_FUZZ_EXAMPLES`` (default 120) -> 7 x 120 = 840 in CI.
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any

import numpy as np
import pytest
from _desc_strategies import BUILDERS, LEVELS, mutate, to_kwargs
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

import dmlops
from dmlops import InvalidDescError, strided
from dmlops.descs import desc_class, desc_from_json
from dmlops.enums import FeatureLevel
from oracles.gather import gather_oracle
from oracles.max_pooling import max_pool_grad_oracle, max_pool_oracle
from oracles.resample import resample2_oracle, resample_grad1_oracle, round_to
from oracles.roi_align import roi_align_oracle
from oracles.slice1 import slice1_oracle

EXAMPLES = int(os.environ.get("DMLOPS_FUZZ_EXAMPLES", "120"))
MAX_RUN_ELEMENTS = 4096
MAX_ROI_SAMPLES = 20000
OPS = sorted(BUILDERS)

# Known crashes in other modules (any exception other than InvalidDescError): op -> reason.
KNOWN_CRASHES: dict[str, str] = {}


def build(op: str, desc: dict[str, Any], via_class: bool, draw: Any) -> dmlops.OperatorDesc:
    """Construct the desc through desc_from_json or the desc class."""
    if not via_class:
        return desc_from_json(op, desc)
    cls = desc_class(op)
    kwargs = to_kwargs(op, desc, draw)
    for info in cls.member_infos():
        # A missing keyword argument is a Python TypeError by design; give junk instead.
        if info.attr not in kwargs and not info.optional:
            kwargs[info.attr] = draw(st.sampled_from([None, 0, "x", [1], {"DataType": "FLOAT32"}]))
    return cls(**kwargs)


# -- inputs ------------------------------------------------------------------------------------------


def _values(rng: np.random.RandomState, shape: tuple[int, ...], dtype: np.dtype, *, special: bool) -> np.ndarray:
    """Small values with many ties; floats sometimes carry NaN / +-inf / -0.0."""
    if dtype.kind == "f":
        values = rng.randint(-4, 5, size=shape).astype(np.float64) + rng.choice([0, 0.25, 0.5], size=shape)
        if special and values.size and rng.rand() < 0.3:
            flat = values.reshape(-1)
            flat[rng.randint(flat.size)] = rng.choice([np.nan, np.inf, -np.inf, -0.0])
        return values.astype(dtype)
    info = np.iinfo(dtype)
    if rng.rand() < 0.2:
        return rng.choice(np.array([info.min, info.max, 0, 1], dtype=dtype), size=shape)
    return rng.randint(max(info.min, -5), min(info.max, 6) + 1, size=shape).astype(dtype)


def make_inputs(op: str, desc: Any, rng: np.random.RandomState) -> dict[str, np.ndarray]:
    """Random logical input arrays for a valid desc (valid data where DML requires it)."""
    tensors = desc.tensors("input")
    inputs = {
        m: _values(rng, t.sizes, t.dtype, special=op in ("MAX_POOLING2", "SLICE1", "GATHER"))
        for m, t in tensors.items()
    }
    if op == "GATHER":
        x = tensors["InputTensor"]
        if x.strides is not None:
            # A logical array some buffer can hold (aliased elements equal): out-of-range
            # indices read that buffer (erratum E41).
            buffer = _values(rng, (x.addressed_element_span,), x.dtype, special=True)
            inputs["InputTensor"] = np.array(strided.view(buffer, x))
        t = tensors["IndicesTensor"]
        n = desc.input_tensor.sizes[desc.axis]
        lo = -n - 2 if t.dtype.kind == "i" else 0
        idx = rng.randint(lo, n + 3, size=t.sizes).astype(np.int64)
        if rng.rand() < 0.2 and idx.size:  # out-of-range indices: the flat address clamp (E41)
            idx.reshape(-1)[0] = {"int32": -(2**31), "int64": -(2**62)}.get(t.dtype.name, 2**31)
        inputs["IndicesTensor"] = idx.astype(t.dtype)
    elif op == "MAX_POOLING_GRAD":
        # Integer-valued gradients: every sum is exact in any order.
        g = tensors["InputGradientTensor"]
        inputs["InputGradientTensor"] = rng.randint(-3, 4, size=g.sizes).astype(g.dtype)
        x = tensors["InputTensor"]
        inputs["InputTensor"] = rng.randint(0, 3, size=x.sizes).astype(x.dtype)
    elif op in ("RESAMPLE2", "RESAMPLE_GRAD1"):
        for m, t in tensors.items():
            if t.dtype.kind == "f":
                inputs[m] = rng.uniform(-2, 2, size=t.sizes).astype(t.dtype)
    elif op == "ROI_ALIGN":
        x = tensors["InputTensor"]
        inputs["InputTensor"] = rng.uniform(-2, 2, size=x.sizes).astype(x.dtype)
        r = tensors["ROITensor"]
        inputs["ROITensor"] = (rng.randint(-24, 72, size=r.sizes) / 8).astype(r.dtype)
        b = tensors["BatchIndicesTensor"]
        inputs["BatchIndicesTensor"] = rng.randint(0, x.sizes[0], size=b.sizes).astype(b.dtype)
    return inputs


def too_large(op: str, desc: Any, inputs: dict[str, np.ndarray] | None = None) -> bool:
    """Whether running this valid desc (and its slow oracle) would take too long."""
    if any(t.element_count > MAX_RUN_ELEMENTS for t in desc.tensors().values()):
        return True
    if op == "ROI_ALIGN" and inputs is not None:
        d = {k: _numbers(v) for k, v in desc.to_dml_dict().items() if not isinstance(v, dict)}
        rois = inputs["ROITensor"].astype(np.float64).reshape(-1, 4)
        _, c, oh, ow = desc.output_tensor.sizes
        lo, hi = d["MinimumSamplesPerOutput"], d["MaximumSamplesPerOutput"]

        def samples(size: float, out: int) -> int:
            ratio = abs(size) / out
            return lo if not math.isfinite(ratio) else min(max(math.ceil(ratio), lo), hi)

        total = 0
        for x1, y1, x2, y2 in rois:
            sx = samples((x2 - x1) * d["SpatialScaleX"], ow)
            sy = samples((y2 - y1) * d["SpatialScaleY"], oh)
            total += sx * sy * c * oh * ow
        return total > MAX_ROI_SAMPLES
    return False


# -- oracles -----------------------------------------------------------------------------------------


def _numbers(value: Any) -> Any:
    """to_dml_dict writes non-finite floats as "inf"/"-inf"/"nan"; the oracles want floats."""
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


def oracle_outputs(op: str, desc: Any, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What the loop oracles in tests/oracles say the outputs are (already in the output types)."""
    d = {
        k: v if k in ("InterpolationMode", "RoundingDirection", "ReductionFunction") else _numbers(v)
        for k, v in desc.to_dml_dict().items()
        if not isinstance(v, dict)
    }
    if op == "SLICE1":
        y = slice1_oracle(
            inputs["InputTensor"],
            d["InputWindowOffsets"],
            d["InputWindowSizes"],
            d["InputWindowStrides"],
            desc.output_tensor.sizes,
        )
        return {"OutputTensor": y}
    if op == "GATHER":
        y = gather_oracle(
            inputs["InputTensor"],
            inputs["IndicesTensor"],
            d["Axis"],
            d["IndexDimensions"],
            desc.output_tensor.sizes,
            strides=desc.input_tensor.strides,
            total_bytes=desc.input_tensor.total_tensor_size_in_bytes,
        )
        return {"OutputTensor": y}
    window = [d.get(k) for k in ("WindowSize", "Strides", "StartPadding", "EndPadding", "Dilations")]
    if op == "MAX_POOLING2":
        values, indices, _ = max_pool_oracle(inputs["InputTensor"], *window, desc.output_tensor.sizes[2:])
        out = {"OutputTensor": values}
        if desc.output_indices_tensor is not None:
            out["OutputIndicesTensor"] = indices.astype(desc.output_indices_tensor.dtype)
        return out
    if op == "MAX_POOLING_GRAD":
        dx = max_pool_grad_oracle(inputs["InputTensor"], inputs["InputGradientTensor"], *window)
        return {"OutputGradientTensor": round_to(dx, desc.output_gradient_tensor.dtype)}
    params = [d.get(k) for k in ("Scales", "InputPixelOffsets", "OutputPixelOffsets")]
    if op == "RESAMPLE2":
        y = resample2_oracle(
            inputs["InputTensor"], desc.output_tensor.sizes, *params, d["InterpolationMode"], d["RoundingDirection"]
        )
        return {"OutputTensor": round_to(y, desc.output_tensor.dtype)}
    if op == "RESAMPLE_GRAD1":
        out_t = desc.output_gradient_tensor
        dx = resample_grad1_oracle(
            inputs["InputGradientTensor"], out_t.sizes, *params, d["InterpolationMode"], d["RoundingDirection"]
        )
        return {"OutputGradientTensor": round_to(dx, out_t.dtype)}
    assert op == "ROI_ALIGN"
    y = roi_align_oracle(
        inputs["InputTensor"],
        inputs["ROITensor"],
        inputs["BatchIndicesTensor"],
        tuple(desc.output_tensor.sizes[2:]),
        spatial_scale=(d["SpatialScaleX"], d["SpatialScaleY"]),
        reduction=d["ReductionFunction"],
        mode=d["InterpolationMode"],
        oob=d["OutOfBoundsInputValue"],
        min_samples=d["MinimumSamplesPerOutput"],
        max_samples=d["MaximumSamplesPerOutput"],
    )
    return {"OutputTensor": round_to(y, desc.output_tensor.dtype)}


def _exact(op: str, desc: Any) -> bool:
    if op in ("SLICE1", "GATHER", "MAX_POOLING2", "MAX_POOLING_GRAD"):
        return True
    if op in ("RESAMPLE2", "RESAMPLE_GRAD1"):
        return desc.to_dml_dict()["InterpolationMode"] == "NEAREST_NEIGHBOR" and op == "RESAMPLE2"
    return False


def assert_matches(got: np.ndarray, want: np.ndarray, exact: bool, what: str, atol: float = 0.0) -> None:
    """Bit-exact (NaN == NaN), or within one unit in the last place of the output type (or ``atol``)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    if exact:
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    same = (got == want) | (np.isnan(got) & np.isnan(want)) if got.dtype.kind == "f" else got == want
    if same.all():
        return
    g, w = got[~same], want[~same]
    if got.dtype.kind == "f":
        limit = np.spacing(np.maximum(np.abs(g), np.abs(w)).astype(got.dtype)).astype(np.float64)
        ok = np.abs(g.astype(np.float64) - w.astype(np.float64)) <= np.maximum(limit, atol)
    else:
        ok = np.abs(g.astype(np.int64) - w.astype(np.int64)) <= 1
    assert ok.all(), f"{what}: {int((~ok).sum())} element(s) beyond 1 ulp: got {g[~ok][:5]}, want {w[~ok][:5]}"


# -- the test ----------------------------------------------------------------------------------------


def check_one(op: str, desc_dict: dict[str, Any], level: str | None, via_class: bool, seed: int, draw: Any) -> str:
    """Build, validate and (when valid) run one desc; return the outcome for hypothesis.event."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UnknownFieldWarning for junk member names
        try:
            desc = build(op, desc_dict, via_class, draw)
            desc.validate(level)
        except InvalidDescError:
            return "rejected (InvalidDescError)"
    rng = np.random.RandomState(seed)
    if too_large(op, desc):
        return "valid, too large to run"
    inputs = make_inputs(op, desc, rng)
    if too_large(op, desc, inputs):
        return "valid, too many ROI samples to run"
    got = dmlops.execute(desc, inputs, feature_level=level)
    want = oracle_outputs(op, desc, inputs)
    atol = 0.0
    if op == "RESAMPLE2" and desc.to_dml_dict()["InterpolationMode"] == "LINEAR":
        # DirectML's float32 lerps, one per dimension (erratum E33), against the oracle's float64
        # sum: each step may lose a few ulps of the largest input under cancellation.
        x = np.abs(np.asarray(inputs["InputTensor"], dtype=np.float64))
        atol = 8 * len(want["OutputTensor"].shape or (1,)) * 2.0**-23 * float(x.max(initial=0.0))
    for member, value in want.items():
        assert_matches(np.asarray(got[member]), value, _exact(op, desc), f"{op}.{member}", atol)
    return "valid, matches the loop oracle"


@pytest.mark.parametrize("op", OPS)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_desc_is_rejected_or_matches_oracle(op: str, data: st.DataObject) -> None:
    if op in KNOWN_CRASHES:
        pytest.xfail(KNOWN_CRASHES[op])
    desc = BUILDERS[op](data.draw)
    mutations = data.draw(st.sampled_from([0, 0, 1, 1, 2, 3]), label="mutations")
    if mutations:
        desc = mutate(data.draw, desc, mutations)
    level = data.draw(LEVELS, label="feature_level")
    via_class = data.draw(st.booleans(), label="via_class")
    seed = data.draw(st.integers(0, 2**31 - 1), label="seed")
    outcome = check_one(op, desc, level, via_class, seed, data.draw)
    event(outcome)


test_desc_is_rejected_or_matches_oracle.conformance = (  # type: ignore[attr-defined]
    "*",
    f"hypothesis fuzz: random descs (valid and invalid), {EXAMPLES} examples, numpy reference vs loop oracle",
)


def test_feature_levels_are_all_drawn() -> None:
    # LEVELS draws by name; make sure every name parses (a renamed level would silently fall out).
    for level in FeatureLevel:
        assert FeatureLevel.from_any(level.name) is level
