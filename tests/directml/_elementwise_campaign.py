"""The element-wise family's differential campaign: seeded random cases, numpy vs directml.

For each of the 92 operators, :func:`draw` makes a case from one of the operator's
templates in ``tests/oracles/elementwise.py``: a data type the stack runs for the
operator at a drawn feature level, a random shape (1 to 6 dimensions, a last size not
divisible by 4, see ``SHAPE`` there), every input in a drawn layout (packed, padded,
permuted, 0-strided broadcast), a padded or permuted output, jittered parameters,
ScaleBias and FusedActivation where the struct has them, and adversarial data (NaN,
+-inf, signed zeros, subnormals, integer extremes, shift counts >= the bit width, zero
divisors, quantization ties). :func:`run_case` runs it on both backends and compares:
bit for bit, or within ``TOLERANCE`` for the approximated operators; the quantization
operators' elements that are lavapipe's float-to-integer conversion are counted apart.

``python scripts/directml_parity.py --family elementwise`` runs it and writes the
per-operator table of docs/directml-parity.md;
``tests/directml/test_elementwise_campaign.py`` runs a seeded sample in CI.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import dmlops
from dmlops.catalogue import FUSABLE_ACTIVATIONS
from dmlops.descs import desc_class, desc_from_json
from dmlops.descs.elementwise import OPERATORS
from dmlops.directml import create_operator
from dmlops.enums import FeatureLevel, TensorDataType
from dmlops.errors import (
    DirectMLRejectedDescError,
    DirectMLStackLimitError,
    DmlError,
    InvalidDescError,
    UnsupportedError,
)
from dmlops.tensor import packed_strides
from oracles.elementwise import CASES, TOLERANCE, Case, data, stack_conversion

STACK_UNSUPPORTED = frozenset({"FLOAT16", "INT16", "UINT16"})
LAST_SIZES = (1, 2, 3, 5, 6, 7, 9, 11)
"""Last dimension sizes: none divisible by 4 (DirectML's vectorised DXIL shaders cannot compile here)."""
MAX_ELEMENTS = 300
FLOAT_ATTRS = ("Alpha", "Beta", "Gamma", "Exponent", "Steepness", "Threshold", "Bias", "SigmoidInputScale")
AXIS_OPERATORS = ("ACTIVATION_SOFTMAX1", "ACTIVATION_LOG_SOFTMAX1", "ACTIVATION_HARDMAX1")
LAST_AXIS_OPERATORS = ("ACTIVATION_SOFTMAX", "ACTIVATION_LOG_SOFTMAX", "ACTIVATION_HARDMAX")

TEMPLATES: dict[str, list[Case]] = {op: [c for c in CASES if c.operator == op] for op in sorted(OPERATORS)}


@dataclass
class Drawn:
    """One drawn case: the desc, its level, what each backend is given, the logical inputs."""

    op: str
    desc: Any
    level: FeatureLevel
    inputs: dict[str, np.ndarray]
    """What is passed: a logical array, or the flat buffer of a strided tensor."""
    logical: dict[str, np.ndarray]
    output: str
    out_buffer: np.ndarray | None
    tolerance: tuple[float, float] | None
    tags: tuple[str, ...] = ()

    def describe(self) -> str:
        """The desc as DxDispatch JSON, with the level (for reports)."""
        import json

        return json.dumps({"op": self.op, "level": self.level.name, "desc": self.desc.to_dml_dict()}, default=str)


@dataclass
class Tally:
    """One operator's counts."""

    drawn: int = 0
    run: int = 0
    agreed: int = 0
    differed: int = 0
    stack_only: int = 0
    """Cases whose every difference is lavapipe's float-to-integer conversion (counted in ``differed``)."""
    kinds: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    dtypes: set[str] = field(default_factory=set)
    seconds: float = 0.0


def _levels(op: str) -> list[FeatureLevel]:
    introduced = desc_class(op).introduced
    return [level for level in FeatureLevel if level >= introduced]


def _support(op: str, level: FeatureLevel) -> dict[str, Any]:
    table = desc_class(op).support
    usable = [lv for lv in table if lv <= level]
    return table[max(usable)] if usable else {}


def _types(op: str, level: FeatureLevel, member: str) -> list[str]:
    row = _support(op, level).get(member)
    if row is None:
        return []
    return sorted(t.name for t in row.data_types if t.name not in STACK_UNSUPPORTED)


def _shape(rng: np.random.Generator, op: str, template: Case) -> tuple[int, ...]:
    if op in LAST_AXIS_OPERATORS:  # FL 1_0 softmax-likes: 4-D, batch 1 (E50)
        return (1, int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.choice(LAST_SIZES)))
    rank = len(template.shape) if op in AXIS_OPERATORS else int(rng.choice([1, 2, 3, 4, 4, 4, 5, 6]))
    while True:
        sizes = [int(rng.integers(1, 5)) for _ in range(rank - 1)] + [int(rng.choice(LAST_SIZES))]
        # element counts divisible by 4 make DirectML vectorise more often (a stack limit here)
        if math.prod(sizes) <= MAX_ELEMENTS and (math.prod(sizes) % 4 or rng.random() < 0.3):
            return tuple(sizes)


def _strides(rng: np.random.Generator, sizes: tuple[int, ...], *, output: bool) -> tuple[str, list[int] | None]:
    kinds = ["none", "none", "packed", "padded", "permuted"] + ([] if output else ["broadcast", "broadcast"])
    kind = str(rng.choice(kinds))
    packed = [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]
    if kind == "none":
        return kind, None
    if kind == "packed":
        return kind, packed
    if kind == "broadcast":
        return kind, [0 if rng.random() < 0.5 else s for s in packed]
    order = list(range(len(sizes)))
    if kind == "permuted":
        order = [int(i) for i in rng.permutation(order)]
    strides, step = [0] * len(sizes), 1
    for i in reversed(order):
        strides[i] = step
        step = step * sizes[i] + (int(rng.integers(1, 3)) if kind == "padded" else 0)
    return kind, strides


def _jitter(rng: np.random.Generator, attrs: dict[str, Any], op: str) -> dict[str, Any]:
    out = dict(attrs)
    for key, value in attrs.items():
        if key in FLOAT_ATTRS and rng.random() < 0.6:
            out[key] = float(rng.choice([value, -value, 0.5, 1.0, 2.0, float(np.float32(rng.normal() * 2))]))
        elif key in ("Min", "Max") and isinstance(value, float) and rng.random() < 0.6:
            out[key] = float(rng.choice([value, -value, 0.0, float(np.float32(rng.normal() * 3)), np.inf, -np.inf]))
    if op.endswith("SOFTPLUS") and out.get("Steepness") == 0.0:
        out["Steepness"] = 1.0
    if op == "ACTIVATION_CELU" and out.get("Alpha") == 0.0:
        out["Alpha"] = 1.0
    return out


def _clip1_bounds(rng: np.random.Generator, dtype: str, attrs: dict[str, Any]) -> dict[str, Any]:
    np_dtype = TensorDataType.from_any(dtype).numpy_dtype
    out = dict(attrs, MinMaxDataType=dtype)
    if np.dtype(np_dtype).kind == "f":
        lo, hi = sorted(float(np.float32(v)) for v in rng.normal(0, 3, 2))
        if rng.random() < 0.2:
            lo, hi = hi, lo
        return {**out, "Min": lo, "Max": hi}
    info = np.iinfo(np_dtype)
    top = min(int(info.max), 2**63 - 1)
    lo, hi = sorted(int(v) for v in rng.integers(int(info.min), top, 2, endpoint=True, dtype=np.int64))
    if rng.random() < 0.2:
        lo, hi = hi, lo
    return {**out, "Min": lo, "Max": hi}


def _scale_bias(rng: np.random.Generator) -> dict[str, Any]:
    pick = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, 1e-3, 1e30]
    scale = float(rng.choice(pick)) if rng.random() < 0.5 else float(np.float32(rng.normal()))
    bias = float(rng.choice(pick)) if rng.random() < 0.5 else float(np.float32(rng.normal()))
    return {"Scale": scale, "Bias": bias}


def _fused(rng: np.random.Generator) -> dict[str, Any]:
    name = str(rng.choice(sorted(FUSABLE_ACTIVATIONS)))
    attrs = next((c.attrs for c in CASES if c.operator == name), {})
    return {"Type": name, **_jitter(rng, attrs, name)}


def _flat_view(buffer: np.ndarray, sizes: tuple[int, ...], strides: list[int]) -> np.ndarray:
    return np.lib.stride_tricks.as_strided(buffer, shape=sizes, strides=[s * buffer.itemsize for s in strides]).copy()


def draw(op: str, rng: np.random.Generator) -> Drawn | str:
    """One random case of ``op``, or why none was made."""
    template = TEMPLATES[op][int(rng.integers(len(TEMPLATES[op])))]
    levels = _levels(op)
    level = levels[-1] if rng.random() < 0.7 else levels[int(rng.integers(len(levels)))]
    first = template.inputs[1] if op == "ELEMENT_WISE_IF" else template.inputs[0]
    supported = _types(op, level, first)
    pool = [t for t in template.dtypes if t in supported] if rng.random() < 0.7 else supported
    if not pool:
        pool = list(template.dtypes)
    dtype = str(rng.choice(pool))
    shape = _shape(rng, op, template)
    attrs = _jitter(rng, template.attrs, op)
    if "MinMaxDataType" in attrs:
        attrs = _clip1_bounds(rng, dtype, attrs)
    members = {i.dml_name for i in desc_class(op).member_infos()}
    tags = [f"dtype={dtype}", f"level={level.name}"]
    if "ScaleBias" in members and rng.random() < 0.3:
        attrs["ScaleBias"] = _scale_bias(rng)
        tags.append("scale_bias")
    if "FusedActivation" in members and rng.random() < 0.5:
        attrs["FusedActivation"] = _fused(rng)
        tags.append("fused=" + attrs["FusedActivation"]["Type"])
    if op in AXIS_OPERATORS:
        axes = [a for a in range(len(shape)) if rng.random() < 0.5] or [len(shape) - 1]
        attrs["Axes"] = axes
    wide = rng.random() < 0.15  # the full adversarial range even where the template keeps to ordinary values
    passed: dict[str, np.ndarray] = {}
    logical: dict[str, np.ndarray] = {}
    json: dict[str, Any] = {}
    for member in template.inputs:
        sizes = (1,) * len(shape) if member in template.scalars else shape
        type_name = template.member_types.get(member, "UINT8" if member == "ConditionTensor" else dtype)
        np_dtype = np.dtype(TensorDataType.from_any(type_name).numpy_dtype)
        layout, strides = _strides(rng, sizes, output=False) if member not in template.scalars else ("none", None)
        if strides is None:
            span = math.prod(sizes)
        else:
            span = sum((s - 1) * st for s, st in zip(sizes, strides)) + 1
        kind = "any" if wide and np_dtype.kind == "f" else template.kind.get(member, "any")
        if member == "ConditionTensor":
            buffer = rng.integers(0, 3, span).astype(np.uint8)
        else:
            buffer = data(np_dtype, rng, kind=kind, shape=(span,))
        json[member] = {"DataType": type_name, "Sizes": list(sizes), **({"Strides": strides} if strides else {})}
        passed[member] = buffer.reshape(sizes) if strides is None else buffer
        logical[member] = buffer.reshape(sizes) if strides is None else _flat_view(buffer, sizes, strides)
        if layout != "none":
            tags.append(f"{member}={layout}")
    out_type = template.output_dtype or dtype
    layout, out_strides = _strides(rng, shape, output=True)
    json[template.output] = {
        "DataType": out_type,
        "Sizes": list(shape),
        **({"Strides": out_strides} if out_strides else {}),
    }
    json.update(attrs)
    try:
        desc = desc_from_json(op, json)
    except (DmlError, TypeError, ValueError) as exc:
        return f"not constructible ({type(exc).__name__})"
    out_buffer = None
    if out_strides is not None:
        span = sum((s - 1) * st for s, st in zip(shape, out_strides)) + 1
        sentinel = -7.25 if out_type.startswith("FLOAT") else 0x5A
        out_buffer = np.full(span, sentinel, dtype=TensorDataType.from_any(out_type).numpy_dtype)
        tags.append(f"output={layout}")
    tolerance = TOLERANCE.get(op)
    fused = attrs.get("FusedActivation", {}).get("Type")
    if fused in TOLERANCE:
        tolerance = tolerance or TOLERANCE[fused]
    return Drawn(op, desc, level, passed, logical, template.output, out_buffer, tolerance, tuple(tags))


def _run(drawn: Drawn, backend: str) -> np.ndarray:
    outputs = None if drawn.out_buffer is None else {drawn.output: drawn.out_buffer.copy()}
    got = dmlops.execute(drawn.desc, drawn.inputs, backend=backend, feature_level=drawn.level, outputs=outputs)
    value = np.asarray(got[drawn.output])
    t = drawn.desc.tensor(drawn.output)
    if tuple(value.shape) == t.sizes:
        return value
    return _flat_view(value, t.sizes, list(t.element_strides))


def differing(drawn: Drawn, want: np.ndarray, got: np.ndarray) -> np.ndarray:
    """The mask of elements that differ (NaN equal to NaN; within the tolerance where one applies)."""
    if got.dtype.kind != "f":
        return np.asarray(got != want)
    same = (got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")) | (np.isnan(got) & np.isnan(want))
    if drawn.tolerance is not None:
        rtol, atol = drawn.tolerance
        with np.errstate(all="ignore"):
            w = want.astype(np.float64)
            same |= np.abs(got.astype(np.float64) - w) <= atol + rtol * np.abs(w)
            same |= got == want
    return np.asarray(~same)


TRIG = ("ELEMENT_WISE_SIN", "ELEMENT_WISE_COS", "ELEMENT_WISE_TAN")
KNOWN_KINDS = {
    "trig argument beyond 100 pi": (
        "device: D3D requires sin/cos accuracy only within [-100 pi, 100 pi] (TAN is sin/cos); lavapipe gives "
        "1.0 for +-3e38"
    ),
    "subnormal input": "device: an approximated function of a subnormal input (D3D may flush float32 denormals)",
    "ATAN_YX with a NaN operand": (
        "DirectML: atan2 of a NaN where E60's rule does not reach (NaN beside a subnormal, a zero or an "
        "infinity; not yet characterised)"
    ),
}
"""Kinds put down to a cause (the others are reported as found)."""


def _operand_values(drawn: Drawn, bad: np.ndarray) -> list[np.ndarray]:
    """The float inputs at the differing elements, ScaleBias applied (as the operator reads them)."""
    values = []
    shape = bad.shape
    for i, a in enumerate(drawn.logical.values()):
        if a.dtype.kind != "f":
            continue
        v = np.broadcast_to(a, shape)[bad].astype(np.float32)
        sb = getattr(drawn.desc, "scale_bias", None)
        if sb is not None and i == 0:
            with np.errstate(all="ignore"):
                v = (v * np.float32(sb.scale)).astype(np.float32) + np.float32(sb.bias)
        values.append(v.astype(np.float32))
    return values


def _kind(drawn: Drawn, want: np.ndarray, got: np.ndarray, bad: np.ndarray) -> str:
    """A short name for a case's differences (one per case), from the values that differ."""
    w, g = want[bad], got[bad]
    dtype = next(t for t in drawn.tags if t.startswith("dtype="))[6:]
    operands = _operand_values(drawn, bad)
    with np.errstate(invalid="ignore"):
        if drawn.op in TRIG and operands and np.all(np.abs(operands[0]) > 100 * np.pi):
            return "trig argument beyond 100 pi"
        tiny = np.finfo(np.float32).tiny
        if drawn.tolerance is not None and operands:
            sub = np.zeros(w.shape, dtype=bool)
            for v in operands:
                sub |= (v != 0) & (np.abs(v) < tiny)
            if sub.all():
                return "subnormal input"
        if drawn.op == "ELEMENT_WISE_ATAN_YX" and np.all(np.isnan(operands[0]) | np.isnan(operands[1])):
            return "ATAN_YX with a NaN operand"
    if w.dtype.kind == "f":
        tiny = np.finfo(w.dtype).tiny
        if np.all((w == 0) & (g == 0)):
            return f"{dtype}: sign of zero"
        if np.all((np.abs(w) < tiny) | (np.abs(g) < tiny)):
            return f"{dtype}: subnormal or zero result"
        if np.all(np.isnan(g) != np.isnan(w)):
            return f"{dtype}: NaN on one side"
        if np.all(np.isinf(g) | np.isinf(w)):
            return f"{dtype}: infinity on one side"
    extra = [t for t in drawn.tags if t.startswith(("fused=", "scale_bias"))]
    return f"{dtype}: values" + (f" ({', '.join(extra)})" if extra else "")


def _scale_bias_conversion(drawn: Drawn, want: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Elements of a ScaleBias'd integer tensor where lavapipe's float-to-integer conversion shows.

    The scaled value ``x * Scale + Bias`` is a float converted back to the integer type:
    D3D saturates it (NaN -> 0), lavapipe gives INT_MIN for NaN and values >= 2^31 and
    all ones for negative values of an unsigned type (``stack_conversion``'s evidence).
    A predicate: the scaled value is one of those.
    """
    sb = getattr(drawn.desc, "scale_bias", None)
    x = next(iter(drawn.logical.values()))
    if sb is None or got.dtype.kind not in "iu" or x.dtype.kind not in "iu":
        return np.zeros(got.shape, dtype=bool)
    with np.errstate(all="ignore"):
        v = (x.astype(np.float32) * np.float32(sb.scale)).astype(np.float32) + np.float32(sb.bias)
        # (|v| = 2^31 too: ABS of -2^31 is 2^31 as a float; converted first, the integer ABS
        # would wrap to INT_MIN as lavapipe's conversion does: the two readings agree here)
        odd = np.isnan(v) | (v >= 2.0**31) | ((v < 0) if x.dtype.kind == "u" else (v <= -(2.0**31)))
    return np.asarray(np.broadcast_to(odd, got.shape))


def run_case(drawn: Drawn, tally: Tally) -> None:
    """Run one case on both backends and count it."""
    try:
        drawn.desc.validate(drawn.level)
    except InvalidDescError:
        try:
            create_operator(drawn.desc, drawn.level)
        except DirectMLRejectedDescError:
            tally.skipped["both reject"] += 1
        except DmlError as exc:
            tally.skipped[f"dmlops rejects, DirectML failed ({type(exc).__name__})"] += 1
        else:
            tally.skipped["dmlops rejects, DirectML accepts"] += 1
            tally.examples.setdefault("dmlops rejects, DirectML accepts", drawn.describe())
        return
    try:
        want = _run(drawn, "numpy")
    except UnsupportedError:
        tally.skipped["numpy: unsupported data type"] += 1
        return
    try:
        got = _run(drawn, "directml")
    except DirectMLStackLimitError:
        tally.skipped["stack limit (DXIL shader)"] += 1
        return
    except DirectMLRejectedDescError:
        tally.skipped["DirectML rejects a validated desc"] += 1
        tally.examples.setdefault("DirectML rejects a validated desc", drawn.describe())
        return
    tally.run += 1
    tally.dtypes.add(next(t for t in drawn.tags if t.startswith("dtype="))[6:])
    bad = differing(drawn, want, got)
    if not bad.any():
        tally.agreed += 1
        return
    tally.differed += 1
    out = drawn.desc.tensor(drawn.output)
    packed = out.strides is None or tuple(out.strides) == packed_strides(out.sizes)
    stack = stack_conversion(drawn.op, drawn.logical, want, got, packed_output=packed)
    stack |= _scale_bias_conversion(drawn, want, got)
    if not (bad & ~stack).any():
        tally.stack_only += 1
        tally.kinds["stack: lavapipe float-to-integer conversion"] += 1
        return
    kind = _kind(drawn, want, got, bad & ~stack)
    tally.kinds[kind] += 1
    if kind not in tally.examples:
        i = int(np.flatnonzero((bad & ~stack).reshape(-1))[0])
        values = {
            m: a.reshape(-1)[i % a.size] if a.size == want.size else a.reshape(-1)[0] for m, a in drawn.logical.items()
        }
        tally.examples[kind] = (
            f"{drawn.describe()} first at [{i}]: inputs {values}, numpy {want.reshape(-1)[i]!r}, "
            f"directml {got.reshape(-1)[i]!r} ({int(bad.sum())} of {bad.size} differ)"
        )


def campaign(
    ops: list[str], cases: int, seed: int, *, progress: Callable[[str, Tally], None] | None = None
) -> dict[str, Tally]:
    """``cases`` run cases per operator (at most 4 x ``cases`` draws), seeded per operator."""
    tallies: dict[str, Tally] = {}
    for op in ops:
        rng = np.random.default_rng([seed, sorted(OPERATORS).index(op)])
        tally = tallies[op] = Tally()
        start = time.monotonic()
        while tally.run < cases and tally.drawn < 4 * cases:
            tally.drawn += 1
            drawn = draw(op, rng)
            if isinstance(drawn, str):
                tally.skipped[drawn] += 1
                continue
            run_case(drawn, tally)
        tally.seconds = time.monotonic() - start
        if progress is not None:
            progress(op, tally)
    return tallies


__all__ = ["TEMPLATES", "Drawn", "Tally", "campaign", "differing", "draw", "run_case"]
