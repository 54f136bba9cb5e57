"""The differential campaign against the real DirectML: cases, comparison, classification.

Shared by ``tests/directml/test_differential.py`` (a seeded sample in CI) and
``scripts/directml_parity.py`` (the local campaign that writes docs/directml-parity.md).

Cases are hypothesis draws. The desc comes from the valid builders of
``tests/fuzz/_desc_strategies.py`` (``BUILDERS``), then this module:

* re-types it to the data types this stack runs (``dmlops.directml.info()``: no
  FLOAT16/INT16/UINT16) and to a drawn feature level's support table;
* gives every tensor a layout: none, packed, padded, permuted, permuted and padded, and
  for inputs broadcast (stride 0) or overlapping strides; strided inputs travel as flat
  buffers with junk in the gaps, strided outputs as preallocated flat buffers whose gaps
  must survive;
* pushes parameters to their edges (pooling windows mostly in padding, large pixel
  offsets, tiny and huge Scales, ROI boxes partly or wholly outside the image);
* draws data with ``make_inputs`` of ``tests/fuzz/test_fuzz_descs.py`` and then, by a
  drawn flavour, NaN, +-inf, signed zeros, ties, extremes of the type.

Each case runs on ``numpy`` and on ``directml`` (both through ``dmlops.execute``, so
dmlops validates first). Data movement is compared bit for bit (any NaN equals any
NaN); arithmetic within float32 rounding (:func:`tolerance`). Every difference is
classified by :data:`DIFFERENCE_CAUSES`: small predicates that decide from the desc and
the data whether a known cause applies, each with a model of what DirectML computes, so
that a cause is claimed only where its model reproduces DirectML's output.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

_TESTS = Path(__file__).resolve().parent.parent
for _p in (_TESTS, _TESTS / "fuzz"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from _desc_strategies import BUILDERS  # noqa: E402
from test_fuzz_descs import make_inputs, too_large  # noqa: E402

import dmlops  # noqa: E402
from dmlops import reference  # noqa: E402
from dmlops.descs import desc_class, desc_from_json  # noqa: E402
from dmlops.descs._base import OperatorDesc, support_at  # noqa: E402
from dmlops.enums import AxisDirection, FeatureLevel, InterpolationMode, TensorDataType  # noqa: E402
from dmlops.errors import (  # noqa: E402
    DirectMLRejectedDescError,
    DirectMLStackLimitError,
    InvalidDescError,
    UnsupportedError,
)
from dmlops.tensor import TensorDesc  # noqa: E402
from oracles.resample import resample_grad1_nearest_stack_matrix  # noqa: E402

Draw = Callable[[st.SearchStrategy[Any]], Any]
T = TensorDataType

OPS = ("GATHER", "SLICE1", "MAX_POOLING2", "MAX_POOLING_GRAD", "RESAMPLE2", "RESAMPLE_GRAD1", "ROI_ALIGN")

# Members that must share a DataType, per operator (each group is re-typed together).
TYPE_GROUPS: dict[str, tuple[tuple[str, ...], ...]] = {
    "GATHER": (("InputTensor", "OutputTensor"), ("IndicesTensor",)),
    "SLICE1": (("InputTensor", "OutputTensor"),),
    "MAX_POOLING2": (("InputTensor", "OutputTensor"), ("OutputIndicesTensor",)),
    "MAX_POOLING_GRAD": (("InputTensor", "InputGradientTensor", "OutputGradientTensor"),),
    "RESAMPLE2": (("InputTensor", "OutputTensor"),),
    "RESAMPLE_GRAD1": (("InputGradientTensor", "OutputGradientTensor"),),
    "ROI_ALIGN": (("InputTensor", "ROITensor", "OutputTensor"), ("BatchIndicesTensor",)),
}

STACK_UNSUPPORTED = frozenset({T.FLOAT16, T.INT16, T.UINT16})
"""What ``dmlops.directml.info()`` reports unsupported here (checked against it at run time)."""

FLT_MAX = float(np.finfo(np.float32).max)
U32 = 2.0**-24
"""float32's unit roundoff."""


def stack_types() -> frozenset[TensorDataType]:
    """The data types DirectML runs on this stack (asks the host)."""
    from dmlops.directml import info

    supported = info().data_type_supported
    return frozenset(t for t in T if t is not T.UNKNOWN and int(t) < len(supported) and supported[int(t)])


# -- drawing cases ----------------------------------------------------------------------------------------


@dataclass
class Case:
    """One differential case: a desc, its feature level, the arrays to pass, and tags."""

    op: str
    desc: OperatorDesc
    level: FeatureLevel
    inputs: dict[str, np.ndarray]
    """What is passed: the logical array, or the flat buffer for a strided tensor."""
    outputs: dict[str, np.ndarray]
    """Preallocated flat output buffers (strided outputs only), filled with a sentinel."""
    tags: tuple[str, ...] = ()

    def logical(self, member: str) -> np.ndarray:
        """The logical view of an input."""
        t = self.desc.tensor(member)
        a = self.inputs[member]
        if tuple(a.shape) == t.sizes:
            return a
        return np.lib.stride_tricks.as_strided(a, shape=t.sizes, strides=[s * a.itemsize for s in t.element_strides])

    def describe(self) -> dict[str, Any]:
        """The desc as DxDispatch JSON, with the feature level (for reports)."""
        return {"level": self.level.name, "desc": self.desc.to_dml_dict()}


def _packed(sizes: list[int]) -> list[int]:
    return [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]


def draw_layout(draw: Draw, sizes: list[int], *, output: bool) -> tuple[str, list[int] | None]:
    """A layout name and its Strides (None: no Strides member)."""
    kinds = ["none", "none", "packed", "padded", "permuted", "permuted_padded"]
    if not output:
        kinds += ["broadcast", "overlapping"]
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return kind, None
    if kind == "packed":
        return kind, _packed(sizes)
    if kind == "broadcast":
        packed = _packed(sizes)
        return kind, [0 if draw(st.booleans()) else s for s in packed]
    if kind == "overlapping":
        return kind, [draw(st.integers(0, 1)) for _ in sizes]
    order = list(range(len(sizes)))
    if kind.startswith("permuted"):
        order = list(draw(st.permutations(order)))
    gap = 2 if kind.endswith("padded") else 1
    strides = [0] * len(sizes)
    step = gap
    for i in reversed(order):
        strides[i] = step
        step = step * sizes[i] + (1 if kind.endswith("padded") else 0)
    return kind, strides


def _levels(op: str) -> list[FeatureLevel]:
    introduced = desc_class(op).introduced
    return [level for level in FeatureLevel if level >= introduced]


def _adversarial_params(draw: Draw, op: str, d: dict[str, Any], tags: list[str]) -> None:
    """Parameters at their edges, drawn for a fraction of the cases."""
    if op in ("MAX_POOLING2", "MAX_POOLING_GRAD") and draw(st.integers(0, 3)) == 0:
        # Windows mostly (or wholly) in the padding: padding up to the whole dilated window.
        tags.append("padding-heavy")
        x = d["InputTensor"]["Sizes"]
        out_member = "OutputTensor" if op == "MAX_POOLING2" else "InputGradientTensor"
        ceil = draw(st.booleans())
        out = list(d[out_member]["Sizes"][:2])
        for i, n in enumerate(x[2:]):
            eff = (d["WindowSize"][i] - 1) * d["Dilations"][i] + 1
            d["StartPadding"][i] = draw(st.integers(0, eff))
            d["EndPadding"][i] = draw(st.integers(0, eff))
            span = n + d["StartPadding"][i] + d["EndPadding"][i] - eff
            s = d["Strides"][i]
            out.append(max(1, (-(-span // s) if ceil else span // s) + 1))
        d[out_member]["Sizes"] = out
        if op == "MAX_POOLING2" and "OutputIndicesTensor" in d:
            d["OutputIndicesTensor"]["Sizes"] = list(out)
    elif op in ("RESAMPLE2", "RESAMPLE_GRAD1") and draw(st.integers(0, 3)) == 0:
        tags.append("extreme-coordinates")
        for key in ("InputPixelOffsets", "OutputPixelOffsets"):
            d[key] = [
                draw(st.sampled_from([-100.0, -10.0, -3.5, -1.0, 3.5, 10.0, 100.0])) if draw(st.booleans()) else v
                for v in d[key]
            ]
        d["Scales"] = [
            draw(st.sampled_from([1e-3, 0.1, 10.0, 1e4, FLT_MAX])) if draw(st.booleans()) else v for v in d["Scales"]
        ]


def draw_case(draw: Draw, op: str, types: frozenset[TensorDataType]) -> Case | str:
    """A differential case, or the reason the draw cannot make one (a string)."""
    d = BUILDERS[op](draw)
    tags: list[str] = []
    # Feature level: half the draws at the latest, the rest anywhere from the operator's level.
    levels = _levels(op)
    level = draw(st.one_of(st.just(levels[-1]), st.sampled_from(levels)))
    table = support_at(desc_class(op).support, level) or {}
    for group in TYPE_GROUPS[op]:
        present = [m for m in group if m in d]
        if not present:
            continue
        allowed = set(types)
        for m in present:
            row = table.get(m)
            if row is not None:
                allowed &= row.data_types
        if not allowed:
            return "no data type of the group runs here"
        name = draw(st.sampled_from(sorted(t.name for t in allowed)))
        for m in present:
            d[m]["DataType"] = name
    _adversarial_params(draw, op, d, tags)
    layouts = {}
    for m, t in d.items():
        if isinstance(t, dict) and "Sizes" in t:
            output = m in desc_class(op).tensor_members("output")
            kind, strides = draw_layout(draw, t["Sizes"], output=output)
            t.pop("Strides", None)
            if strides is not None:
                t["Strides"] = strides
            layouts[m] = kind
            if kind not in ("none", "packed"):
                tags.append(f"{'out' if output else 'in'}:{kind}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            desc = desc_from_json(op, d)
            desc.validate(level)
        except InvalidDescError:
            try:
                desc = desc_from_json(op, d)
                desc.validate(FeatureLevel.latest())
            except InvalidDescError as exc:
                return f"dmlops rejects the drawn desc: {exc.member or exc}"
            level = FeatureLevel.latest()
    if any(t.element_count > 4096 for t in desc.tensors().values()):
        return "too large"
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.RandomState(seed)
    logical = make_inputs(op, desc, rng)
    flavour = draw(st.sampled_from(["plain", "plain", "specials", "ties", "extremes"]))
    if flavour != "plain":
        tags.append(flavour)
    _adversarial_data(op, desc, logical, flavour, rng, draw, tags)
    if too_large(op, desc, logical):
        return "too many ROI samples for the reference"
    inputs: dict[str, np.ndarray] = {}
    for m, a in logical.items():
        t = desc.tensor(m)
        if t.strides is None:
            inputs[m] = a
        else:
            inputs[m] = _flat(t, a)
    outputs: dict[str, np.ndarray] = {}
    for m, t in desc.tensors("output").items():
        if t.strides is not None:
            outputs[m] = np.full(t.addressed_element_span, _sentinel(t.dtype), dtype=t.dtype)
    if level != levels[-1]:
        tags.append(f"level:{level.name}")
    return Case(op, desc, level, inputs, outputs, tuple(tags))


def _sentinel(dtype: np.dtype) -> Any:
    return -7.25 if dtype.kind == "f" else 0x5A


def _flat(t: TensorDesc, logical: np.ndarray) -> np.ndarray:
    """The flat buffer a strided desc addresses: ``logical`` written through it, junk in the gaps.

    Where Strides alias elements (0 or overlapping), the last write wins; the case's
    logical view is then read back from the buffer, so both backends see the same data.
    """
    junk = np.nan if t.dtype.kind == "f" else 0x77
    buf = np.full(t.addressed_element_span, junk, dtype=t.dtype)
    view = np.lib.stride_tricks.as_strided(buf, shape=t.sizes, strides=[s * buf.itemsize for s in t.element_strides])
    coords = np.indices(t.sizes).reshape(len(t.sizes), -1)
    addresses = np.dot(t.element_strides, coords)
    buf[addresses] = logical.reshape(-1)
    del view
    return buf


def _adversarial_data(
    op: str,
    desc: OperatorDesc,
    logical: dict[str, np.ndarray],
    flavour: str,
    rng: np.random.RandomState,
    draw: Draw,
    tags: list[str],
) -> None:
    """Edit the drawn data in place by flavour: NaN/inf/signed zeros, ties, type extremes; ROI boxes."""
    data_members = {
        "GATHER": ("InputTensor",),
        "SLICE1": ("InputTensor",),
        "MAX_POOLING2": ("InputTensor",),
        "MAX_POOLING_GRAD": ("InputTensor",),
        "RESAMPLE2": ("InputTensor",),
        "RESAMPLE_GRAD1": ("InputGradientTensor",),
        "ROI_ALIGN": ("InputTensor",),
    }[op]
    for m in data_members:
        a = logical[m]
        flat = a.reshape(-1)
        if not flat.size:
            continue
        if flavour == "specials" and a.dtype.kind == "f":
            count = max(1, flat.size // 4)
            at = rng.randint(flat.size, size=count)
            flat[at] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=a.dtype), size=count)
            if rng.rand() < 0.3:  # windows of nothing but -inf / NaN
                flat[: max(1, flat.size // 2)] = rng.choice(np.array([-np.inf, np.nan], dtype=a.dtype))
        elif flavour == "ties":
            flat[:] = rng.randint(0, 2, size=flat.size).astype(a.dtype)
        elif flavour == "extremes":
            if a.dtype.kind == "f":
                fi = np.finfo(a.dtype)
                pool = np.array([fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal, 0.0, -0.0], dtype=a.dtype)
            else:
                ii = np.iinfo(a.dtype)
                pool = np.array([ii.min, ii.max, ii.min + 1, ii.max - 1, 0], dtype=a.dtype)
            count = max(1, flat.size // 3)
            flat[rng.randint(flat.size, size=count)] = rng.choice(pool, size=count)
    if op == "ROI_ALIGN":
        r = logical["ROITensor"].reshape(-1, 4)
        _, _, h, w = desc.input_tensor.sizes
        kind = draw(st.sampled_from(["drawn", "drawn", "outside", "partly", "inverted", "huge"]))
        if kind != "drawn":
            tags.append(f"roi:{kind}")
        for row in r:
            if kind == "outside":
                # Wholly outside the image (after SpatialScale) on a random side.
                side = rng.randint(4)
                far = rng.choice([2.0, 8.0, 40.0])
                x1, y1 = rng.uniform(0, w), rng.uniform(0, h)
                if side == 0:
                    x1 = -far - rng.uniform(0, 3)
                elif side == 1:
                    x1 = (w + far) / min(desc.spatial_scale_x, 1.0)
                elif side == 2:
                    y1 = -far - rng.uniform(0, 3)
                else:
                    y1 = (h + far) / min(desc.spatial_scale_y, 1.0)
                row[:] = [x1, y1, x1 + rng.uniform(0, 3), y1 + rng.uniform(0, 3)]
            elif kind == "partly":
                row[:] = [rng.uniform(-3, w), rng.uniform(-3, h), rng.uniform(w - 1, w + 4), rng.uniform(h - 1, h + 4)]
            elif kind == "inverted":
                row[:] = [row[2], row[3], row[0], row[1]]
            elif kind == "huge":
                row[:] = [-1e4, -1e4, 1e4, 1e4]
        logical["ROITensor"][...] = np.round(r * 8).reshape(logical["ROITensor"].shape) / 8


# -- running and comparing ---------------------------------------------------------------------------------


@dataclass
class Result:
    """What happened to one case."""

    status: str
    """agree, differ, stack limit, dmlops rejects, directml rejects, unsupported."""
    kinds: tuple[str, ...] = ()
    """For ``differ``: the kind of each difference (one per differing output member)."""
    detail: str = ""
    evidence: tuple[str, ...] = ()


def run_backend(
    case: Case, backend: str, desc: OperatorDesc | None = None, inputs: Any = None
) -> dict[str, np.ndarray]:
    """The outputs of one backend (flat buffers for strided outputs, else logical arrays)."""
    outputs = {m: b.copy() for m, b in case.outputs.items()}
    got = dmlops.execute(
        desc or case.desc,
        inputs if inputs is not None else case.inputs,
        backend=backend,
        feature_level=case.level,
        outputs=outputs or None,
    )
    return {m: np.asarray(v) for m, v in got.items()}


def logical_output(case: Case, member: str, value: np.ndarray, desc: OperatorDesc | None = None) -> np.ndarray:
    """The logical view of an output buffer."""
    t = (desc or case.desc).tensor(member)
    if tuple(value.shape) == t.sizes:
        return value
    return np.lib.stride_tricks.as_strided(
        value, shape=t.sizes, strides=[s * value.itemsize for s in t.element_strides]
    ).copy()


def is_exact(case: Case) -> bool:
    """Data movement: compared bit for bit."""
    if case.op in ("GATHER", "SLICE1", "MAX_POOLING2", "MAX_POOLING_GRAD"):
        return True
    if case.op == "RESAMPLE2":
        return case.desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR  # type: ignore[attr-defined]
    return False


def same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise bit equality; any NaN equals any NaN."""
    if got.dtype.kind != "f":
        return got == want
    eq = got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")
    return eq | (np.isnan(got) & np.isnan(want))


def tolerance(case: Case) -> tuple[np.ndarray, dict[str, Any]] | None:
    """The allowed absolute difference per element of the output, for arithmetic operators.

    DirectML computes in float32; the reference in float64, rounded once. A result is a
    weighted sum ``sum w_i x_i`` with non-negative weights (linear interpolation, the
    transposed interpolation, ROI averages and maxima of interpolated samples), and the
    reference run on ``|x|`` gives ``M = sum w_i |x_i|``. Each float32 operation of a
    term (weights from one coordinate per dimension, then products and interpolation
    steps: at most 4 per dimension) and each of the ``n - 1`` additions that accumulate
    ``n`` terms errs by at most ``u = 2^-24`` relative to a partial result bounded by M,
    so ``|DirectML - exact| <= (4 d + n + 1) u M``. The output's rounding adds half an
    ulp, counted by the ``+ 1``, and the flush of float32 subnormals to zero that GPUs do
    adds 2^-126 per term (``n * 2^-125``). ``n`` is bounded per operator (below). A few
    ulp of M, not of the result: cancellation makes the result itself small.
    """
    desc: Any = case.desc
    op = case.op
    if op == "RESAMPLE2":
        d = desc.dimension_count
        terms = 2**d  # one tap per dimension (nearest) or two (linear)
    elif op == "RESAMPLE_GRAD1":
        d = desc.dimension_count
        # An output gradient element sums at most every incoming gradient element's taps.
        terms = 2**d * desc.input_gradient_tensor.element_count
    elif op == "ROI_ALIGN":
        d = 2
        hi = min(desc.maximum_samples_per_output, 64)
        terms = 4 * hi * hi
    else:
        return None
    magnitude = _magnitude(case)
    k = 4 * d + terms + 1
    allowed = magnitude * k * U32 + terms * 2.0**-125
    if op in ("RESAMPLE2", "RESAMPLE_GRAD1") and desc.interpolation_mode is InterpolationMode.LINEAR:
        # The device's float32 division is not always correctly rounded (D3D allows 2.5 ulp;
        # measured: a LINEAR weight off by about one ulp of the coordinate where the
        # reference's division is exact). A coordinate x moved by 4 ulp(|x|) moves an
        # interpolated value by at most that times the largest step between neighbours,
        # G <= 2 max |values| (per dimension, and a gradient element gathers up to N of them).
        data = "InputTensor" if op == "RESAMPLE2" else "InputGradientTensor"
        v = np.abs(case.logical(data).astype(np.float64))
        g = 2 * float(v[np.isfinite(v)].max(initial=0.0))
        xmax = max(
            float(np.abs(np.nan_to_num(desc.input_coordinates(i), posinf=0.0, neginf=0.0)).max(initial=0.0))
            for i in range(d)
        )
        spread = d * (desc.input_gradient_tensor.element_count if op == "RESAMPLE_GRAD1" else 1)
        allowed = allowed + 4 * spread * float(np.spacing(np.float32(xmax + 1))) * g
    if op == "ROI_ALIGN" and desc.interpolation_mode is InterpolationMode.LINEAR:
        # The reference places ROI samples in float64, DirectML in float32: each sample
        # coordinate (a scale product, a difference, a division, a product and two sums)
        # may move by 8 u C, C the largest coordinate magnitude, and a bilinear sample moves
        # by at most that times the largest step between neighbouring values, G <= 2 max |x|.
        rois = np.abs(case.logical("ROITensor").astype(np.float64))
        scale = max(abs(desc.spatial_scale_x), abs(desc.spatial_scale_y))
        c = float(rois.max(initial=0.0)) * scale + max(desc.input_tensor.sizes[2:]) + 1
        x = np.abs(case.logical("InputTensor").astype(np.float64))
        g = 2 * float(x[np.isfinite(x)].max(initial=0.0))
        allowed = allowed + 8 * U32 * c * g
    return allowed, {"k": k, "terms": terms}


def _magnitude(case: Case) -> np.ndarray:
    """The reference on |x| (and |OutOfBoundsInputValue|): sum w_i |x_i| per output element."""
    data = {"RESAMPLE2": "InputTensor", "RESAMPLE_GRAD1": "InputGradientTensor", "ROI_ALIGN": "InputTensor"}[case.op]
    desc: Any = case.desc
    inputs = dict(case.inputs)
    inputs[data] = np.abs(inputs[data].astype(np.float32))
    float_desc = _retyped(desc, T.FLOAT32, members=_data_members(case.op))
    if case.op == "ROI_ALIGN":
        float_desc = dataclasses.replace(float_desc, out_of_bounds_input_value=abs(desc.out_of_bounds_input_value))
    inputs = {m: (a.astype(np.float32) if m in _data_members(case.op) else a) for m, a in inputs.items()}
    member = next(iter(float_desc.tensors("output")))
    out = reference.execute(float_desc, inputs, None, feature_level=FeatureLevel.latest(), strict=False)[member]
    return np.asarray(out, dtype=np.float64)


def _data_members(op: str) -> tuple[str, ...]:
    return {
        "RESAMPLE2": ("InputTensor", "OutputTensor"),
        "RESAMPLE_GRAD1": ("InputGradientTensor", "OutputGradientTensor"),
        "ROI_ALIGN": ("InputTensor", "ROITensor", "OutputTensor"),
    }[op]


def _retyped(desc: Any, dtype: TensorDataType, *, members: tuple[str, ...]) -> Any:
    """The desc with the given tensor members' DataType changed (layout dropped)."""
    changes = {}
    for info in desc.member_infos():
        if info.dml_name in members:
            t = getattr(desc, info.attr)
            changes[info.attr] = TensorDesc(data_type=dtype, sizes=t.sizes, strides=t.strides)
    return dataclasses.replace(desc, **changes)


def close_mask(case: Case, got: np.ndarray, want: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """Where an arithmetic output agrees: NaN with NaN, infinities exactly, else within ``tol``.

    Integer outputs (RESAMPLE2 INT8/UINT8) agree when DirectML's value is the conversion
    (toward zero, saturated: erratum E30) of some value within ``tol`` of the exact one.
    """
    if got.dtype.kind != "f":
        exact = _exact_value(case)
        info = np.iinfo(got.dtype)
        lo = np.clip(np.trunc(exact - tol), info.min, info.max)
        hi = np.clip(np.trunc(exact + tol), info.min, info.max)
        g = got.astype(np.float64)
        return (g >= lo) & (g <= hi)
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    with np.errstate(invalid="ignore"):
        inf = np.isinf(g) | np.isinf(w)
        near = np.abs(g - w) <= tol + np.spacing(np.abs(w).astype(got.dtype)).astype(np.float64)
    return both_nan | (inf & (g == w)) | (~inf & near)


def _exact_value(case: Case) -> np.ndarray:
    """The reference's unrounded result of an INT8/UINT8 RESAMPLE2 (computed as FLOAT32)."""
    desc = _retyped(case.desc, T.FLOAT32, members=("InputTensor", "OutputTensor"))
    x = case.logical("InputTensor").astype(np.float32)
    out = reference.execute(desc, {"InputTensor": x}, None, feature_level=FeatureLevel.latest(), strict=False)
    return np.asarray(out["OutputTensor"], dtype=np.float64)


def compare(case: Case, got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per output member, the logical mask of differing elements (members that agree left out).

    Flat output buffers must also agree outside the addressed elements (the sentinel).
    """
    diffs: dict[str, np.ndarray] = {}
    tol = None if is_exact(case) else tolerance(case)
    for member, w in want.items():
        g = got[member]
        if g.shape != w.shape or g.dtype != w.dtype:
            diffs[member] = np.ones(case.desc.tensor(member).sizes, dtype=bool)
            continue
        gl = logical_output(case, member, g)
        wl = logical_output(case, member, w)
        if tol is None:
            bad = ~same_bits(gl, wl)
        else:
            bad = ~close_mask(case, gl, wl, tol[0])
        if g.shape != gl.shape and not np.all(same_bits(g, w) | _addressed(case.desc.tensor(member))):
            bad = bad | True  # a gap of the output buffer was written
        if bad.any():
            diffs[member] = bad
    return diffs


def _addressed(t: TensorDesc) -> np.ndarray:
    mask = np.zeros(t.addressed_element_span, dtype=bool)
    coords = np.indices(t.sizes).reshape(len(t.sizes), -1)
    mask[np.dot(t.element_strides, coords)] = True
    return mask


# -- known causes of differences ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Cause:
    """A known cause of a difference, decided from the desc and the data.

    ``applies(case)`` returns, per output member, the elements the cause can touch (or
    None when it does not apply). ``model(case)`` returns what DirectML computes under
    this cause (None: no model). A difference is put down to the cause only when every
    differing element is one it can touch and, where there is a model, the model
    reproduces DirectML's output exactly.
    """

    key: str
    op: str
    label: str
    whose: str
    """"DirectML", "stack" (this stack's artefact, not DirectML), or "undefined data"."""
    applies: Callable[[Case], dict[str, np.ndarray] | None]
    model: Callable[[Case], dict[str, np.ndarray]] | None = None
    note: str = ""
    int_rounding: Callable[[np.ndarray], np.ndarray] = np.rint
    """How the model's unrounded value becomes an integer output (``np.rint`` or ``np.trunc``)."""
    scope: Callable[[Case], bool] = lambda case: True
    """The cases the cause is about (e.g. NEAREST): where it does not apply inside its scope,
    the difference must vanish; the campaign counts that as the cause's evidence."""


def _gather_out_of_range(case: Case) -> dict[str, np.ndarray] | None:
    desc: Any = case.desc
    idx = case.logical("IndicesTensor").astype(np.float64)  # float64 holds every index up to 2^53 exactly
    n = desc.input_tensor.sizes[desc.axis]
    signed = desc.indices_tensor.dtype.kind == "i" and case.level >= FeatureLevel.V3_0
    bad = (idx >= n) | (idx < (-n if signed else 0))
    if desc.extra_slabs():  # IndexDimensions 0, OutputTensor.Sizes[0] > 1: slabs past the first
        bad = np.ones_like(bad)
    if not bad.any():
        return None
    # Output element -> its index element: the output is InputTensor.Sizes[:Axis] ++ index dims ++ the rest.
    d = desc.dimension_count
    k = desc.index_dimensions
    full = desc.full_output_sizes()
    index_part = bad.reshape(desc.indices_tensor.sizes[d - k :] if k else ())
    shape = [1] * desc.axis + list(index_part.shape) + [1] * (d - desc.axis - 1)
    touched = np.broadcast_to(index_part.reshape(shape), full).reshape(desc.output_tensor.sizes)
    return {"OutputTensor": touched}


def _gather_flat_clamp_model(case: Case) -> dict[str, np.ndarray]:
    """DirectML's GATHER read (measured): the flat address, as a 32-bit unsigned integer, clamped into memory.

    A negative index of a signed type is wrapped once (``+ n``; a UINT64 index is read as
    INT64, so 2^63 and more wrap too); then the element address
    ``sum c_i Strides_i`` is taken modulo 2^32 (so a still-negative index addresses far
    past the end) and clamped to the last element of the bound buffer (TotalTensorSizeInBytes,
    rounded up to 4 bytes, zero beyond the tensor's data here).
    """
    desc: Any = case.desc
    t = desc.input_tensor
    x = case.inputs["InputTensor"].reshape(-1)
    from dmlops.directml.buffers import buffer_size

    memory = np.zeros(buffer_size(t) // t.dtype.itemsize, dtype=t.dtype)
    memory[: x.size] = x
    strides = t.element_strides
    idx = case.logical("IndicesTensor").astype(np.int64)
    n = t.sizes[desc.axis]
    if (
        desc.indices_tensor.dtype.kind == "i" and case.level >= FeatureLevel.V3_0
    ) or desc.indices_tensor.dtype == np.uint64:
        idx = np.where(idx < 0, idx + n, idx)
    d = desc.dimension_count
    k = desc.index_dimensions
    full = desc.full_output_sizes()
    index_part = idx.reshape(desc.indices_tensor.sizes[d - k :] if k else ())
    coords = np.indices(full).astype(np.int64)
    shape = [1] * desc.axis + list(index_part.shape) + [1] * (d - desc.axis - 1)
    along = np.broadcast_to(index_part.reshape(shape), full)
    address = np.zeros(full, dtype=np.int64)
    for c, s in zip(coords[: desc.axis], strides[: desc.axis]):
        address += c * s
    with np.errstate(over="ignore"):
        address += along * strides[desc.axis]
    for c, s in zip(coords[desc.axis + k :], strides[desc.axis + 1 :]):
        address += c * s
    if len(full) > d:  # dropped leading entries: the slab at coordinate 0
        address = address[(0,) * (len(full) - d)]
    elif len(full) < d:  # IndexDimensions 0: output slab o0 reads o0 * (element count) on, Strides NULL
        extra = t.element_count if t.strides is None else 0
        o0 = desc.output_tensor.sizes[0]
        address = address[None] + (np.arange(o0, dtype=np.int64) * extra).reshape((o0,) + (1,) * len(full))
    address = np.minimum(address % 2**32, memory.size - 1)
    return {"OutputTensor": memory[address].reshape(desc.output_tensor.sizes)}


def _taps(desc: Any, d: int, *, ftou: bool) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """The taps of dimension ``d`` of the forward resample: (input index, weight) per forward output index.

    ``ftou=False`` is the reference's rule (indices clamped to the edge); ``ftou=True``
    is this stack's: the rounded coordinate is converted with lavapipe's OpConvertFToU,
    which gives 0xFFFFFFFF for every negative float, so a negative index becomes the
    last element once clamped to the size.
    """
    x = desc.input_coordinates(d).astype(np.float64)
    last = desc.forward_input_sizes[d] - 1

    def index(v: np.ndarray) -> np.ndarray:
        v = np.nan_to_num(v, nan=0.0, posinf=float(last), neginf=-1.0)
        if ftou:
            return np.where(v < 0, last, np.minimum(v, last)).astype(np.intp)
        return np.clip(v, 0, last).astype(np.intp)

    if desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR:
        return [(index(_rounded(desc, d)), None)]
    # LINEAR taps are clamped correctly here (probed: coordinates -0.3 .. -10.5 agree).
    x = np.clip(x, -1.0, float(last + 1))
    index = _clamped(last)
    x = np.nan_to_num(x, nan=0.0, posinf=float(last + 1), neginf=-1.0)
    i0 = np.floor(x)
    f = x - i0
    return [(index(i0), 1.0 - f), (index(i0 + 1), f)]


def _clamped(last: int) -> Callable[[np.ndarray], np.ndarray]:
    def index(v: np.ndarray) -> np.ndarray:
        return np.clip(np.nan_to_num(v, nan=0.0), 0, last).astype(np.intp)

    return index


def _rounded(desc: Any, d: int) -> np.ndarray:
    x = desc.input_coordinates(d).astype(np.float64)
    return np.floor(x) if desc.rounding_direction is AxisDirection.DECREASING else np.ceil(x)


def _negative_taps(desc: Any) -> list[np.ndarray]:
    """Per dimension, the forward output indices whose rounded nearest coordinate is < 0 (nothing for LINEAR).

    For RESAMPLE_GRAD1 also those beyond the last element: DirectML computes the grad by
    mapping back, and a clamped edge gathers a range of forward outputs whose ends are
    converted from floats outside [0, n).
    """
    if desc.interpolation_mode is not InterpolationMode.NEAREST_NEIGHBOR:
        return []
    out = []
    for d in range(desc.dimension_count):
        r = _rounded(desc, d)
        hit = r < 0
        if desc.dml_name == "DML_RESAMPLE_GRAD1_OPERATOR_DESC":
            n = desc.forward_input_sizes[d]
            hit = hit | (r > n - 1) | ~np.isfinite(r)
            # The grad maps back: the boundary between elements i - 1 and i is the forward
            # output coordinate b_i = (i + InputPixelOffset) * Scale + OutputPixelOffset. One
            # outside [0, forward output size] is a float that the stack converts to an
            # integer without D3D's saturation (a negative one to 0xFFFFFFFF).
            inoff, outoff = desc.forward_pixel_offsets(d)
            i = np.arange(1, n, dtype=np.float32)
            with np.errstate(over="ignore", invalid="ignore"):
                b = (i + np.float32(inoff)) * np.float32(desc.scales[d]) + np.float32(outoff)
            if ((b < 0) | (b > r.size) | ~np.isfinite(b)).any():
                hit = np.ones_like(hit)
        out.append(hit)
    return out


def _resample_negative(case: Case) -> dict[str, np.ndarray] | None:
    desc: Any = case.desc
    neg = _negative_taps(desc)
    if not any(m.any() for m in neg):
        return None
    if case.op == "RESAMPLE_GRAD1":
        # A forward output read through a negative tap scatters its gradient to the last element instead.
        return {"OutputGradientTensor": np.ones(desc.output_gradient_tensor.sizes, dtype=bool)}
    touched = np.zeros(desc.output_tensor.sizes, dtype=bool)
    for d, m in enumerate(neg):
        shape = [1] * desc.dimension_count
        shape[d] = -1
        touched |= m.reshape(shape)
    return {"OutputTensor": touched}


def _resample_ftou_model(case: Case) -> dict[str, np.ndarray]:
    """RESAMPLE2 / RESAMPLE_GRAD1 with lavapipe's ftou (negative tap -> last element); float64, unrounded."""
    desc: Any = case.desc
    taps = [_taps(desc, d, ftou=True) for d in range(desc.dimension_count)]
    if case.op == "RESAMPLE2":
        x = case.logical("InputTensor")
        if desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR:
            return {"OutputTensor": x[np.ix_(*[t[0][0] for t in taps])]}
        y = x.astype(np.float64)
        for d, axis_taps in enumerate(taps):
            y = sum(_along(w, d, y.ndim) * np.take(y, i, axis=d) for i, w in axis_taps)  # type: ignore[misc]
        return {"OutputTensor": y}
    g = case.logical("InputGradientTensor").astype(np.float64)
    for d, axis_taps in enumerate(taps):
        n = desc.forward_input_sizes[d]
        moved = np.moveaxis(g, d, 0)
        acc = np.zeros((n, *moved.shape[1:]))
        for i, w in axis_taps:
            contribution = moved if w is None else _along(w, 0, moved.ndim) * moved
            np.add.at(acc, i, contribution)
        g = np.moveaxis(acc, 0, d)
    return {"OutputGradientTensor": g}


def _subnormal_reciprocal(case: Case) -> dict[str, np.ndarray] | None:
    """Every output of a RESAMPLE desc with a Scale whose float32 reciprocal is subnormal (Scale > 2^126)."""
    desc: Any = case.desc
    tiny = np.finfo(np.float32).tiny
    with np.errstate(divide="ignore"):
        if not any(0 < np.float32(1) / np.float32(s) < tiny for s in desc.scales):
            return None
    member = next(iter(desc.tensors("output")))
    return {member: np.ones(desc.tensor(member).sizes, dtype=bool)}


def _grad1_nearest_stack_model(case: Case) -> dict[str, np.ndarray]:
    """RESAMPLE_GRAD1 NEAREST as this stack computes it: rows whose range end converts below 0 get everything."""
    desc: Any = case.desc
    g = case.logical("InputGradientTensor").astype(np.float64)
    for d in range(desc.dimension_count):
        m = resample_grad1_nearest_stack_matrix(desc, d)
        g = np.moveaxis(np.tensordot(m, np.moveaxis(g, d, 0), axes=1), 0, d)
    return {"OutputGradientTensor": g}


def _along(w: np.ndarray | None, axis: int, ndim: int) -> Any:
    if w is None:
        return 1.0
    shape = [1] * ndim
    shape[axis] = -1
    return w.reshape(shape)


def _linear_non_finite(case: Case) -> dict[str, np.ndarray] | None:
    """LINEAR outputs whose taps (or their neighbours) read an infinity or NaN."""
    desc: Any = case.desc
    if desc.interpolation_mode is not InterpolationMode.LINEAR:
        return None
    data = "InputTensor" if case.op == "RESAMPLE2" else "InputGradientTensor"
    x = case.logical(data)
    if x.dtype.kind != "f" or np.isfinite(x).all():
        return None
    if case.op == "RESAMPLE_GRAD1":
        return {"OutputGradientTensor": np.ones(desc.output_gradient_tensor.sizes, dtype=bool)}
    bad = (~np.isfinite(x)).astype(np.float64)
    for d in range(desc.dimension_count):
        last = desc.forward_input_sizes[d] - 1
        x0 = np.floor(np.clip(np.nan_to_num(desc.input_coordinates(d).astype(np.float64), nan=0.0), -1, last + 1))
        hit = sum(np.take(bad, np.clip(x0 + k, 0, last).astype(np.intp), axis=d) for k in (-1, 0, 1, 2))
        bad = np.asarray(hit, dtype=np.float64)
    return {"OutputTensor": bad > 0}


def _int_linear(case: Case) -> dict[str, np.ndarray] | None:
    desc: Any = case.desc
    if desc.interpolation_mode is not InterpolationMode.LINEAR or desc.output_tensor.dtype.kind == "f":
        return None
    return {"OutputTensor": np.ones(desc.output_tensor.sizes, dtype=bool)}


def _unrounded_model(case: Case) -> dict[str, np.ndarray]:
    """The reference's unrounded value (the desc computed as FLOAT32)."""
    return {"OutputTensor": _exact_value(case)}


def _roi_axis_samples(desc: Any, start: float, end: float, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """(sample coordinates, output index of each sample) along one axis, as the reference places them."""
    lo, hi = desc.minimum_samples_per_output, desc.maximum_samples_per_output
    with np.errstate(invalid="ignore", over="ignore"):
        ratio = abs(end - start) / n_out
    samples = int(min(max(math.ceil(ratio), lo), hi)) if math.isfinite(ratio) else lo
    j = np.arange(n_out * samples)
    with np.errstate(invalid="ignore", over="ignore"):
        coord = (j + 0.5) * ((end - start) / (n_out * samples)) + start - 0.5
    return coord, j // samples


def _roi_on_bound(case: Case) -> dict[str, np.ndarray] | None:
    """ROI_ALIGN outputs with a sample exactly at -1 or at the input's length (H or W)."""
    desc: Any = case.desc
    rois = case.logical("ROITensor").astype(np.float64).reshape(-1, 4)
    _, _, h, w = desc.input_tensor.sizes
    _, _, oh, ow = desc.output_tensor.sizes
    touched = np.zeros(desc.output_tensor.sizes, dtype=bool)
    for r, (x1, y1, x2, y2) in enumerate(rois):
        sx, sy = desc.spatial_scale_x, desc.spatial_scale_y
        xs, xb = _roi_axis_samples(desc, x1 * sx, x2 * sx, ow)
        ys, yb = _roi_axis_samples(desc, y1 * sy, y2 * sy, oh)
        for coords, bins, length, axis in ((xs, xb, w, 3), (ys, yb, h, 2)):
            on = (coords == -1.0) | (coords == float(length))
            for b in np.unique(bins[on]):
                if axis == 3:
                    touched[r, :, :, b] = True
                else:
                    touched[r, :, b, :] = True
    return {"OutputTensor": touched} if touched.any() else None


def _roi_max_special(case: Case) -> dict[str, np.ndarray] | None:
    desc: Any = case.desc
    x = case.logical("InputTensor")
    if desc.reduction_function.name != "MAX" or not (np.isnan(x).any() or (x <= -FLT_MAX).any()):
        return None
    return {"OutputTensor": np.ones(desc.output_tensor.sizes, dtype=bool)}


def _roi_linear_non_finite(case: Case) -> dict[str, np.ndarray] | None:
    desc: Any = case.desc
    x = case.logical("InputTensor")
    if desc.interpolation_mode is not InterpolationMode.LINEAR or np.isfinite(x).all():
        return None
    return {"OutputTensor": np.ones(desc.output_tensor.sizes, dtype=bool)}


def _float32_overflow(case: Case) -> dict[str, np.ndarray] | None:
    """Outputs whose float32 partial sums may overflow: sum w |x| times the number of terms near FLT_MAX."""
    data = {"RESAMPLE2": "InputTensor", "RESAMPLE_GRAD1": "InputGradientTensor", "ROI_ALIGN": "InputTensor"}[case.op]
    x = case.logical(data)
    if x.dtype.kind != "f" or not np.isfinite(x).all() or np.abs(x).max(initial=0.0) < 2.0**100:
        return None
    tol = tolerance(case)
    assert tol is not None
    magnitude = _magnitude(case)
    terms = tol[1]["terms"]
    touched = (magnitude * 2 * terms >= FLT_MAX) | ~np.isfinite(magnitude)
    member = next(iter(case.desc.tensors("output")))
    return {member: touched} if touched.any() else None


def _directml_linear_taps(desc: Any, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """DirectML's LINEAR taps along ``d`` (measured): (i0, t, the reference's floor(x), q).

    With ``q = (o - OutputPixelOffset) / Scale`` and ``x = q - InputPixelOffset`` in float32,
    DirectML splits q into ``floor(q)`` and ``frac(q)`` and corrects the index by at most one
    step: ``i0 = floor(q) - (frac(q) < InputPixelOffset)``; the weight is ``t = x - i0`` and it
    interpolates ``a + (b - a) t`` between the clamped taps i0 and i0 + 1. For
    InputPixelOffsets in [0, 1) this is ``floor(x)``, the page's interpolation; otherwise t
    leaves [0, 1) and DirectML extrapolates.
    """
    inoff, outoff = desc.forward_pixel_offsets(d)
    x = desc.input_coordinates(d).astype(np.float64)
    o = np.arange(x.size).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        q = (o - np.float32(outoff)) / np.float32(desc.scales[d])
        whole = np.floor(q)
        i0 = (whole - ((q - whole) < np.float32(inoff))).astype(np.float64)
    return i0, x - i0, np.floor(x), q.astype(np.float64)


def _linear_taps_differ(case: Case) -> dict[str, np.ndarray] | None:
    """LINEAR outputs where DirectML's taps may leave the page's: a forward InputPixelOffset outside [0, 1)
    (every output), or a first tap other than floor(x)."""
    desc: Any = case.desc
    if desc.interpolation_mode is not InterpolationMode.LINEAR:
        return None
    member = next(iter(desc.tensors("output")))
    touched = np.zeros(desc.tensor(member).sizes, dtype=bool)
    for d in range(desc.dimension_count):
        if not 0.0 <= desc.forward_pixel_offsets(d)[0] < 1.0:
            # Outside [0, 1) DirectML's taps leave the page's (probed); where the model's
            # exact taps coincide with the reference's, its weights may still differ.
            touched[...] = True
            continue
        i0, _, fx, _ = _directml_linear_taps(desc, d)
        last = desc.forward_input_sizes[d] - 1
        # Both taps clamp to the same edge element beyond [-1, n]: no difference there.
        hit = (i0 != fx) & ~((np.minimum(i0, fx) >= last) | (np.maximum(i0, fx) < 0) & (np.minimum(i0, fx) < -1))
        hit &= np.isfinite(i0) & np.isfinite(fx)
        if hit.any():
            if case.op == "RESAMPLE_GRAD1":
                touched[...] = True
            else:
                shape = [1] * desc.dimension_count
                shape[d] = -1
                touched |= hit.reshape(shape)
    return {member: touched} if touched.any() else None


def _directml_linear_model(case: Case) -> dict[str, np.ndarray]:
    """RESAMPLE2 / RESAMPLE_GRAD1 LINEAR with DirectML's taps (:func:`_directml_linear_taps`), float64."""
    desc: Any = case.desc
    taps = []
    for d in range(desc.dimension_count):
        i0, t, _, _ = _directml_linear_taps(desc, d)
        last = desc.forward_input_sizes[d] - 1
        i0 = np.nan_to_num(i0, nan=0.0, posinf=last, neginf=0.0)
        taps.append((np.clip(i0, 0, last).astype(np.intp), np.clip(i0 + 1, 0, last).astype(np.intp), t))
    if case.op == "RESAMPLE2":
        y = case.logical("InputTensor").astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            for d, (i0, i1, t) in enumerate(taps):
                a = np.take(y, i0, axis=d)
                b = np.take(y, i1, axis=d)
                y = a + (b - a) * _along(t, d, y.ndim)
        return {"OutputTensor": y}
    g = case.logical("InputGradientTensor").astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        for d, (i0, i1, t) in enumerate(taps):
            n = desc.forward_input_sizes[d]
            moved = np.moveaxis(g, d, 0)
            acc = np.zeros((n, *moved.shape[1:]))
            np.add.at(acc, i0, _along(1.0 - t, 0, moved.ndim) * moved)
            np.add.at(acc, i1, _along(t, 0, moved.ndim) * moved)
            g = np.moveaxis(acc, 0, d)
    return {"OutputGradientTensor": g}


def _grad_offsets_differ(case: Case) -> dict[str, np.ndarray] | None:
    desc: Any = case.desc
    if desc.input_pixel_offsets == desc.output_pixel_offsets:
        return None
    return {"OutputGradientTensor": np.ones(desc.output_gradient_tensor.sizes, dtype=bool)}


def _grad_swapped_model(case: Case) -> dict[str, np.ndarray]:
    """The reference with the two offset arrays swapped (DirectML names them after its own tensors)."""
    desc: Any = case.desc
    swapped = dataclasses.replace(
        desc, input_pixel_offsets=desc.output_pixel_offsets, output_pixel_offsets=desc.input_pixel_offsets
    )
    return run_backend(case, "numpy", desc=swapped)


def _pool_windows(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """(values, flat input indices) of every window: shape out + (window elements,); padding is NaN / -1."""
    desc: Any = case.desc
    x = case.logical("InputTensor").astype(np.float64)
    out_member = "OutputTensor" if case.op == "MAX_POOLING2" else "InputGradientTensor"
    out = desc.tensor(out_member).sizes
    spatial = x.shape[2:]
    k = len(spatial)
    axes = []
    for i in range(k):
        o = np.arange(out[2 + i])[:, None]
        w = np.arange(desc.window_size[i])[None, :]
        axes.append(o * desc.strides[i] + w * desc.dilations[i] - desc.start_padding[i])
    grids = np.meshgrid(*[a.reshape(-1) for a in axes], indexing="ij")  # shape: (o0*w0, o1*w1, ...)
    shape = []
    for i in range(k):
        shape += [out[2 + i], desc.window_size[i]]
    coords = [g.reshape(shape) for g in grids]
    order = [2 * i for i in range(k)] + [2 * i + 1 for i in range(k)]
    coords = [c.transpose(order) for c in coords]
    inside = np.ones(coords[0].shape, dtype=bool)
    for c, n in zip(coords, spatial):
        inside &= (c >= 0) & (c < n)
    flat = np.zeros(coords[0].shape, dtype=np.int64)
    for c, n in zip(coords, spatial):
        flat = flat * n + np.clip(c, 0, n - 1)
    wshape = (*coords[0].shape[:k], -1)
    flat = np.where(inside, flat, -1).reshape(wshape)
    xs = x.reshape(x.shape[0], x.shape[1], -1)
    vals = np.where(flat >= 0, xs[:, :, np.clip(flat, 0, None)], np.nan)
    return vals, np.broadcast_to(flat, vals.shape)


def _pool_nan_or_inf(case: Case) -> dict[str, np.ndarray] | None:
    x = case.logical("InputTensor")
    if x.dtype.kind != "f" or not (np.isnan(x).any() or (x <= -FLT_MAX).any()):
        return None
    vals, flat = _pool_windows(case)
    with np.errstate(invalid="ignore"):
        special = (flat >= 0) & (np.isnan(vals) | (vals <= -FLT_MAX))
    touched = special.any(axis=-1)
    if case.op == "MAX_POOLING2":
        out = {"OutputTensor": touched}
        if case.desc.tensors().get("OutputIndicesTensor") is not None:
            out["OutputIndicesTensor"] = touched
        return out
    # The gradient: a window holding a special may send its gradient to another element of it.
    desc: Any = case.desc
    sizes = desc.input_tensor.sizes
    g = np.zeros((sizes[0], sizes[1], math.prod(sizes[2:])), dtype=bool)
    for nc in np.ndindex(*touched.shape[:2]):
        cells = flat[nc][touched[nc]]
        g[nc][cells[cells >= 0]] = True
    return {"OutputGradientTensor": g.reshape(sizes)}


def _directml_argmax(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """DirectML's window maximum (measured): start from -FLT_MAX, take an element only when strictly greater.

    NaN never compares greater, so it is ignored; -inf never beats -FLT_MAX. The index
    starts at the window's first in-bounds element.
    """
    vals, flat = _pool_windows(case)
    dtype = case.logical("InputTensor").dtype
    lowest = -FLT_MAX if dtype.kind == "f" else float(np.iinfo(dtype).min)
    best = np.full(vals.shape[:-1], lowest)
    value = best.copy()
    arg = np.full(vals.shape[:-1], -1, dtype=np.int64)
    first = np.full(vals.shape[:-1], -1, dtype=np.int64)
    for j in range(vals.shape[-1]):
        v = vals[..., j]
        f = flat[..., j]
        first = np.where((first < 0) & (f >= 0), f, first)
        with np.errstate(invalid="ignore"):
            take = (f >= 0) & (v > best)
            # The value is a running max() that keeps the newer of equal operands: of -0.0
            # and +0.0 the later one (probed); the index moves only when strictly greater.
            value = np.where((f >= 0) & (v >= value), v, value)
        best = np.where(take, v, best)
        arg = np.where(take, f, arg)
    best = value
    arg = np.where(arg < 0, np.maximum(first, 0), arg)  # a window of padding only: index 0
    return best, arg


def _pool_signed_zero(case: Case) -> dict[str, np.ndarray] | None:
    """Windows whose maximum is zero and that hold both -0.0 and +0.0."""
    x = case.logical("InputTensor")
    if x.dtype.kind != "f" or not ((x == 0) & np.signbit(x)).any():
        return None
    vals, flat = _pool_windows(case)
    inside = flat >= 0
    with np.errstate(invalid="ignore"):
        v = np.where(inside & ~np.isnan(vals), vals, -np.inf)
        top = v.max(axis=-1, keepdims=True)
        zero = inside & (vals == 0)
    touched = (top[..., 0] == 0) & (zero & np.signbit(vals)).any(axis=-1) & (zero & ~np.signbit(vals)).any(axis=-1)
    if not touched.any():
        return None
    out = {"OutputTensor": touched}
    if case.desc.tensors().get("OutputIndicesTensor") is not None:
        out["OutputIndicesTensor"] = touched
    return out


def _pool_model(case: Case) -> dict[str, np.ndarray]:
    desc: Any = case.desc
    best, arg = _directml_argmax(case)
    if case.op == "MAX_POOLING2":
        out = {"OutputTensor": best.astype(desc.output_tensor.dtype)}
        if desc.output_indices_tensor is not None:
            out["OutputIndicesTensor"] = arg.astype(desc.output_indices_tensor.dtype)
        return out
    g = case.logical("InputGradientTensor").astype(np.float64)
    dx = np.zeros(desc.input_tensor.sizes, dtype=np.float64).reshape(g.shape[0], g.shape[1], -1)
    for nc in np.ndindex(*g.shape[:2]):
        np.add.at(dx[nc], arg[nc].reshape(-1), g[nc].reshape(-1))
    return {"OutputGradientTensor": dx.reshape(desc.input_tensor.sizes).astype(desc.output_gradient_tensor.dtype)}


_OVERFLOW_NOTE = (
    "values near FLT_MAX: DirectML's float32 sums and differences (b - a of an interpolation) overflow to "
    "+-inf or NaN where the reference's float64 result is finite"
)

DIFFERENCE_CAUSES: tuple[Cause, ...] = (
    Cause(
        "roi-align-open-bounds",
        "ROI_ALIGN",
        "new: ROI_ALIGN sample exactly at -1 or at H/W reads OutOfBoundsInputValue (DirectML)",
        "DirectML",
        _roi_on_bound,
        None,
        "differences only at outputs with a sample exactly on the bound: DirectML's in-bounds interval is open, "
        "-1 < x < W (probe: one NEAREST sample at x = -1 or x = W reads OutOfBoundsInputValue, at -0.999 and "
        "W - 0.001 the pixel); ruling 6 takes [-1, W]",
    ),
    Cause(
        "roi-align-max-nan",
        "ROI_ALIGN",
        "new: ROI_ALIGN MAX ignores NaN and starts from -FLT_MAX (DirectML)",
        "DirectML",
        _roi_max_special,
        None,
        "as MAX_POOLING2: a MAX over samples that are NaN or -inf gives -FLT_MAX (probe: one sample on a NaN "
        "pixel gives -3.4028235e+38, on -inf too); the reference propagates NaN and keeps -inf",
        scope=lambda case: case.desc.reduction_function.name == "MAX",
    ),
    Cause(
        "roi-align-linear-non-finite",
        "ROI_ALIGN",
        "new: ROI_ALIGN LINEAR with an infinite tap gives NaN (DirectML's interpolation arithmetic)",
        "DirectML",
        _roi_linear_non_finite,
        None,
        "as RESAMPLE2 LINEAR: a bilinear sample whose taps hold +-inf (even at weight 0) gives NaN",
        scope=lambda case: case.desc.interpolation_mode is InterpolationMode.LINEAR,
    ),
    Cause(
        "roi-align-float32-overflow",
        "ROI_ALIGN",
        "known: float32 overflow near FLT_MAX",
        "DirectML",
        _float32_overflow,
        None,
        _OVERFLOW_NOTE,
    ),
    Cause(
        "resample2-float32-overflow",
        "RESAMPLE2",
        "known: float32 overflow near FLT_MAX",
        "DirectML",
        _float32_overflow,
        None,
        _OVERFLOW_NOTE,
    ),
    Cause(
        "resample-grad1-float32-overflow",
        "RESAMPLE_GRAD1",
        "known: float32 overflow near FLT_MAX",
        "DirectML",
        _float32_overflow,
        None,
        _OVERFLOW_NOTE,
    ),
    Cause(
        "gather-out-of-range",
        "GATHER",
        "known: GATHER out-of-range index, DirectML's flat address clamp (followed, E41)",
        "DirectML",
        _gather_out_of_range,
        _gather_flat_clamp_model,
        "DirectML wraps a negative index once (UINT64 read as INT64), then clamps the flat read address, "
        "modulo 2^32, into the input's bound buffer; dmlops follows it on every backend (E41; ruling 2's "
        "per-axis clamp overturned), so a difference here means a backend left the rule",
    ),
    Cause(
        "resample2-negative-index",
        "RESAMPLE2",
        "known: RESAMPLE2 negative nearest index (stack artefact: lavapipe ftou)",
        "stack",
        _resample_negative,
        _resample_ftou_model,
        "a nearest coordinate that rounds below 0 reads the last element: lavapipe's OpConvertFToU of a "
        "negative float is 0xFFFFFFFF (D3D12's ftou gives 0)",
        scope=lambda case: case.desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR,
    ),
    Cause(
        "resample-grad1-negative-index",
        "RESAMPLE_GRAD1",
        "known: RESAMPLE_GRAD1 NEAREST range end below 0 (stack artefact: lavapipe ftou)",
        "stack",
        _resample_negative,
        _grad1_nearest_stack_model,
        "DirectML gathers each gradient row from a range [lo, hi) of forward outputs; a negative hi becomes "
        "0xFFFFFFFF on lavapipe (D3D12's ftou: 0), so every row below round(x(-1)) receives the whole gradient "
        "along that dimension (154 of 154 1-D probes; tests/oracles/resample.py)",
        scope=lambda case: case.desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR,
    ),
    Cause(
        "resample2-linear-taps",
        "RESAMPLE2",
        "known: RESAMPLE2 LINEAR takes its first tap from the quotient, not the coordinate (DirectML; followed, E32)",
        "DirectML",
        _linear_taps_differ,
        _directml_linear_model,
        "DirectML's first tap is i0 = floor(q) - (frac(q) < InputPixelOffset) with q = (o - OutputPixelOffset) "
        "/ Scale, and the weight t = x - i0: the page's interpolation when InputPixelOffsets lie in [0, 1), an "
        "extrapolation (t outside [0, 1)) otherwise. Probe [2, 126, -2, 50, 7], Scales 1, InputPixelOffsets -1.5, "
        "OutputPixelOffsets 0 gives [188, -66, 76, -14.5, 7], the reference [62, 24, 28.5, 7, 7]. Every "
        "coordinate there is positive, so the stack's float-to-integer conversion is not involved; the model "
        "reproduces DirectML within float32 rounding",
        scope=lambda case: case.desc.interpolation_mode is InterpolationMode.LINEAR,
    ),
    Cause(
        "resample-grad1-linear-taps",
        "RESAMPLE_GRAD1",
        "known: RESAMPLE_GRAD1 LINEAR keeps the page's taps while RESAMPLE2 takes the quotient's (DirectML; E32)",
        "DirectML",
        _linear_taps_differ,
        _directml_linear_model,
        "DirectML's gradient takes floor(x), not the quotient rule of its forward (150 of 150 probes): "
        "differences here mean dmlops's gradient took the forward's taps",
        scope=lambda case: case.desc.interpolation_mode is InterpolationMode.LINEAR,
    ),
    Cause(
        "resample2-subnormal-reciprocal",
        "RESAMPLE2",
        "new: RESAMPLE2 LINEAR with a Scale above 2^126 (its reciprocal is subnormal): not characterised",
        "suspect stack",
        _subnormal_reciprocal,
        None,
        "every quotient (o - OutputPixelOffset) * (1 / Scale) is 0 or subnormal; D3D lets a device flush float32 "
        "subnormals, and a flush-everything model fits DirectML's values worse than none, so the device's "
        "handling of these quotients is not known",
        scope=lambda case: case.desc.interpolation_mode is InterpolationMode.LINEAR,
    ),
    Cause(
        "resample2-int-truncation",
        "RESAMPLE2",
        "known: RESAMPLE2 LINEAR INT8/UINT8 truncates toward zero (DirectML; followed, E30)",
        "DirectML",
        _int_linear,
        _unrounded_model,
        "DirectML converts the interpolated float to the integer type toward zero (D3D's ftoi/ftou), the "
        "reference rounds half to even: probe UINT8 [0, 100] at t = 1/6 gives 16 (reference 17)",
        np.trunc,
        scope=lambda case: (
            case.desc.output_tensor.dtype.kind != "f" and case.desc.interpolation_mode is InterpolationMode.LINEAR
        ),
    ),
    Cause(
        "resample2-linear-non-finite",
        "RESAMPLE2",
        "known: RESAMPLE2 LINEAR with an infinite tap gives NaN (DirectML's float32 lerps; followed, E33)",
        "DirectML",
        _linear_non_finite,
        None,
        "differences only at outputs whose taps read an infinity: DirectML gives NaN where the reference's "
        "weighted sum gives +-inf or skips a zero weight (probe: [inf, 1, 2] at x = 0.5 gives NaN, the "
        "reference inf; [1, inf, 2] at x = 0 gives NaN, the reference 1)",
        scope=lambda case: case.desc.interpolation_mode is InterpolationMode.LINEAR,
    ),
    Cause(
        "resample-grad1-linear-non-finite",
        "RESAMPLE_GRAD1",
        "known: RESAMPLE_GRAD1 LINEAR with an infinite gradient (gone with the page's taps, E32)",
        "DirectML",
        _linear_non_finite,
        None,
        "differences only where an incoming gradient is infinite or NaN",
        scope=lambda case: case.desc.interpolation_mode is InterpolationMode.LINEAR,
    ),
    Cause(
        "resample-grad1-offsets",
        "RESAMPLE_GRAD1",
        "known: RESAMPLE_GRAD1 offsets named after its own tensors (DirectML; ruling 9 overturned)",
        "DirectML",
        _grad_offsets_differ,
        _grad_swapped_model,
        "DirectML's output is the reference's with InputPixelOffsets and OutputPixelOffsets swapped",
    ),
    Cause(
        "max-pooling2-nan",
        "MAX_POOLING2",
        "known: MAX_POOLING2 ignores NaN and starts from -FLT_MAX (DirectML; ruling 7 overturned)",
        "DirectML",
        _pool_nan_or_inf,
        _pool_model,
        "the model 'start from -FLT_MAX, take an element only when strictly greater' reproduces DirectML",
    ),
    Cause(
        "max-pooling2-signed-zero",
        "MAX_POOLING2",
        "known, kept: MAX_POOLING2 sign of a zero maximum (DirectML's shaders differ; D3D's max() leaves it open)",
        "hardware",
        _pool_signed_zero,
        _pool_model,
        "a window whose maximum is zero and holds both -0.0 and +0.0 gives the later of them as the value "
        "(a running max() keeps the newer of equal operands) and the first as the index: [-0, 0] gives +0.0 "
        "at index 0, [0, -0] gives -0.0 at index 0; the reference gives the first one's sign",
    ),
    Cause(
        "max-pooling-grad-nan",
        "MAX_POOLING_GRAD",
        "known: MAX_POOLING_GRAD ignores NaN and starts from -FLT_MAX (DirectML; ruling 7 overturned)",
        "DirectML",
        _pool_nan_or_inf,
        _pool_model,
        "the gradient goes to the element the -FLT_MAX-start maximum picks",
    ),
)


def classify(case: Case, got: dict[str, np.ndarray], diffs: dict[str, np.ndarray]) -> tuple[str, str]:
    """(kind, evidence) of a differing case."""
    near_misses = []
    for cause in DIFFERENCE_CAUSES:
        if cause.op != case.op:
            continue
        touched = cause.applies(case)
        if touched is None:
            continue
        covered = all(m in touched and not (bad & ~touched[m]).any() for m, bad in diffs.items())
        if not covered:
            near_misses.append(f"{cause.key}: differences outside the elements it touches")
            continue
        if cause.model is None:
            return cause.label, "differences only where the cause applies"
        predicted = cause.model(case)
        mismatch = [
            m
            for m in diffs
            if not model_matches(case, m, logical_output(case, m, got[m]), predicted.get(m), cause.int_rounding)
        ]
        if not mismatch:
            return cause.label, f"model reproduces DirectML: {cause.note}"
        near_misses.append(f"{cause.key}: model misses {', '.join(mismatch)}")
    for cause in DIFFERENCE_CAUSES:
        # A predicate that covers every difference, with a model that does not reproduce it:
        # characterised, not explained. Counted under its own kind, never as the cause itself.
        if cause.op == case.op and f"{cause.key}: model misses" in "; ".join(near_misses):
            return f"{cause.label} [predicate only: its model misses]", "; ".join(near_misses)
    # Several causes at once (e.g. an infinity in a LINEAR case whose taps also differ): each
    # difference lies where one of them applies. Characterised by the predicates only.
    union: dict[str, np.ndarray] = {}
    labels = []
    for cause in DIFFERENCE_CAUSES:
        touched = cause.applies(case) if cause.op == case.op else None
        if touched is None:
            continue
        hits = [m for m, bad in diffs.items() if m in touched and (bad & touched[m]).any()]
        if hits:
            labels.append(cause.key)
        for m, t in touched.items():
            union[m] = union.get(m, np.zeros_like(t)) | t
    if len(labels) > 1 and all(m in union and not (bad & ~union[m]).any() for m, bad in diffs.items()):
        return "several causes at once: " + " + ".join(labels) + " [predicates only]", "; ".join(near_misses)
    return "unexplained", "; ".join(near_misses)


def model_matches(
    case: Case,
    member: str,
    got: np.ndarray,
    predicted: np.ndarray | None,
    int_rounding: Callable[[np.ndarray], np.ndarray] = np.rint,
) -> bool:
    """Whether a cause's model reproduces DirectML's output: exactly for data movement, else within tolerance.

    Models of arithmetic operators return unrounded float64 values; an integer output
    matches when it is the rounding of a value within the tolerance of the model's.
    """
    if predicted is None:
        return False
    predicted = np.asarray(predicted)
    if predicted.shape != got.shape:
        predicted = logical_output(case, member, predicted.astype(got.dtype))
    tol = None if is_exact(case) else tolerance(case)
    if tol is None:
        return bool(same_bits(got, predicted.astype(got.dtype)).all())
    p = predicted.astype(np.float64)
    if got.dtype.kind != "f":
        info = np.iinfo(got.dtype)
        with np.errstate(invalid="ignore"):
            lo = np.clip(int_rounding(p - 16 * tol[0]), info.min, info.max)
            hi = np.clip(int_rounding(p + 16 * tol[0]), info.min, info.max)
        return bool(((got >= lo) & (got <= hi)).all())
    # Models that extrapolate (weights outside [0, 1]) multiply the rounding errors: allow 16x.
    return bool(close_mask(case, got, p.astype(got.dtype), 16 * tol[0]).all())


def run_case(case: Case) -> Result:
    """Run a case on both backends, compare, classify."""
    try:
        want = run_backend(case, "numpy")
    except InvalidDescError as exc:
        return Result("dmlops rejects", detail=str(exc))
    try:
        got = run_backend(case, "directml")
    except DirectMLStackLimitError as exc:
        return Result("stack limit", detail=str(exc))
    except DirectMLRejectedDescError as exc:
        return Result("directml rejects", detail=str(exc))
    except UnsupportedError as exc:
        return Result("unsupported", detail=str(exc))
    diffs = compare(case, got, want)
    if not diffs:
        return Result("agree")
    kind, evidence = classify(case, got, diffs)
    return Result("differ", kinds=(kind,), detail=", ".join(sorted(diffs)), evidence=(evidence,))


@dataclass
class OpTally:
    """Counts of one operator's differential campaign."""

    op: str
    drawn: int = 0
    run: int = 0
    agreed: int = 0
    differed: int = 0
    stack_limit: int = 0
    dmlops_rejects: int = 0
    directml_rejects: int = 0
    not_run: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)
    examples: dict[str, Case] = field(default_factory=dict)
    evidence: dict[str, str] = field(default_factory=dict)
    tags: dict[str, list[int]] = field(default_factory=dict)
    """tag -> [cases run, cases differing], to show where differences live."""
    cause_split: dict[str, list[int]] = field(default_factory=dict)
    """cause key -> [run in its scope where it applies, of them differing, run in its scope where it
    does not apply, of them differing]: the evidence that a cause is the one (within its scope, the
    differences vanish where it does not apply, unless another cause applies there)."""

    def add(self, case: Case | str, result: Result | None) -> None:
        """Count one drawn case."""
        self.drawn += 1
        if isinstance(case, str):
            self.not_run[case] = self.not_run.get(case, 0) + 1
            return
        assert result is not None
        if result.status == "stack limit":
            self.stack_limit += 1
            return
        if result.status == "dmlops rejects":
            self.dmlops_rejects += 1
            return
        if result.status in ("directml rejects", "unsupported"):
            self.directml_rejects += 1
            self._example(f"{result.status}: {result.detail[:80]}", case)
            self.kinds[f"{result.status}"] = self.kinds.get(result.status, 0) + 1
            return
        self.run += 1
        for cause in DIFFERENCE_CAUSES:
            if cause.op == case.op and cause.scope(case):
                row = self.cause_split.setdefault(cause.key, [0, 0, 0, 0])
                at = 0 if cause.applies(case) is not None else 2
                row[at] += 1
                row[at + 1] += result.status == "differ"
        for tag in (*case.tags, "all"):
            row = self.tags.setdefault(tag, [0, 0])
            row[0] += 1
            row[1] += result.status == "differ"
        if result.status == "agree":
            self.agreed += 1
            return
        self.differed += 1
        for kind in result.kinds:
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
            self._example(kind, case)
            self.evidence.setdefault(kind, result.evidence[0] if result.evidence else "")

    def _example(self, kind: str, case: Case) -> None:
        size = sum(t.element_count for t in case.desc.tensors().values())
        old = self.examples.get(kind)
        if old is None or size < sum(t.element_count for t in old.desc.tensors().values()):
            self.examples[kind] = case

    @property
    def unexplained(self) -> int:
        """Differences no known cause explains (plus DirectML rejections of validated descs)."""
        return self.kinds.get("unexplained", 0) + self.directml_rejects


def run_seeded(body: Callable[[st.DataObject], None], cases: int, seed: int) -> None:
    """Call ``body`` on ``cases`` hypothesis draws from ``seed``: generation only, no database or shrinking."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    settings(
        max_examples=cases,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )(hypothesis_seed(seed)(given(st.data())(body)))()


def campaign(op: str, cases: int, seed: int, tally: OpTally | None = None, *, run_at_least: int = 0) -> OpTally:
    """Draw ``cases`` hypothesis examples of ``op`` (seeded), run and count them.

    With ``run_at_least``, more rounds (seeds ``seed + 1``...) follow until that many
    cases ran on both backends (draws dmlops rejects do not count).
    """
    tally = tally or OpTally(op)
    types = stack_types()
    assert not types & STACK_UNSUPPORTED, "the stack now runs 16-bit types: widen STACK_UNSUPPORTED's users"

    def body(data: st.DataObject) -> None:
        with warnings.catch_warnings():
            # Overflow/invalid warnings of NumPy on adversarial data (inf - inf, FLT_MAX sums) are expected.
            warnings.simplefilter("ignore", RuntimeWarning)
            case = draw_case(data.draw, op, types)
            result = None if isinstance(case, str) else run_case(case)
            tally.add(case, result)

    run_seeded(body, cases, seed)
    round_seed = seed
    while tally.run < run_at_least and round_seed < seed + 20:
        round_seed += 1
        missing = run_at_least - tally.run
        campaign(op, max(50, missing * tally.drawn // max(tally.run, 1) + 10), round_seed, tally)
    return tally
