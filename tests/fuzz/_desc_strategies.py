"""Hypothesis strategies for operator descs: valid ones, and valid ones with junk mutations.

Descs are drawn as DxDispatch ``desc`` dicts (DML member names) so the same data can
be fed to ``desc_from_json`` or, through :func:`to_kwargs`, to the desc classes. The
"valid" builders follow the pages' rules closely enough that most draws validate;
whatever they get wrong only means the draw is rejected, which is also allowed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st

from dmlops.descs import desc_class
from dmlops.enums import FeatureLevel, TensorDataType
from dmlops.tensor import TensorDesc

Draw = Callable[[st.SearchStrategy[Any]], Any]

ALL_TYPES = [t.name for t in TensorDataType]
NUMERIC = ["FLOAT32", "FLOAT16", "FLOAT64", "INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64"]
FLOATS = ["FLOAT32", "FLOAT16"]
UINT32_MAX = 2**32 - 1

JUNK: st.SearchStrategy[Any] = st.one_of(
    st.integers(-3, 12),
    st.sampled_from([2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63, 2**64, -(2**31) - 1, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
    st.sampled_from(
        ["FLOAT32", "UINT4", "INT4", "UNKNOWN", "DML_TENSOR_DATA_TYPE_INT64", "nan", "-inf", "LINEAR", "MAX", "SUM"]
    ),
    st.sampled_from(["DECREASING", "NEAREST_NEIGHBOR", "OWNED_BY_DML", "DML_TENSOR_FLAG_NONE", "BUFFER", "AVERAGE"]),
    st.lists(st.integers(-3, 9), max_size=9),
    st.lists(st.sampled_from([0, 1, 2, 2**32, -(2**31), 0.5, "1", None]), max_size=5),
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=5),
    st.dictionaries(st.sampled_from(["DataType", "Sizes", "Desc", "Type", "x"]), st.integers(-1, 3), max_size=3),
)
"""Values of every JSON kind (and some that are not JSON), valid and not, for any member."""

TENSOR_KEYS = ["DataType", "Sizes", "Strides", "Flags", "TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment"]

LEVELS = st.one_of(st.none(), st.sampled_from([level.name for level in FeatureLevel]))


def tensor(data_type: str, sizes: list[int]) -> dict[str, Any]:
    """Short-form tensor desc."""
    return {"DataType": data_type, "Sizes": list(sizes)}


def shape(draw: Draw, rank: int, lo: int = 1, hi: int = 5, max_elements: int = 256) -> list[int]:
    """A shape of ``rank`` dims in [lo, hi] with at most ``max_elements`` elements."""
    sizes = [draw(st.integers(lo, hi)) for _ in range(rank)]
    while math.prod(sizes) > max_elements:
        i = sizes.index(max(sizes))
        sizes[i] = max(lo, sizes[i] // 2)
        if all(s == lo for s in sizes):
            break
    return sizes


def maybe_strides(draw: Draw, t: dict[str, Any], *, output: bool) -> None:
    """Sometimes give a tensor explicit Strides (padded, permuted; inputs also broadcast or overlapping).

    Output layouts never overlap (ruling 11); ``mutate``'s "overlap" action makes them.
    """
    kind = draw(st.sampled_from(["none", "none", "packed", "padded", "permuted", "broadcast", "overlapping"]))
    sizes = t["Sizes"]
    if kind == "none":
        return
    packed = [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]
    if kind == "packed":
        t["Strides"] = packed
    elif kind == "padded":
        t["Strides"] = [s * 2 for s in packed]
    elif kind == "permuted":
        order = draw(st.permutations(range(len(sizes))))
        strides = [0] * len(sizes)
        step = 1
        for i in reversed(order):
            strides[i] = step
            step *= sizes[i]
        t["Strides"] = strides
    elif kind == "broadcast" and not output:
        t["Strides"] = [0 if draw(st.booleans()) else s for s in packed]
    elif kind == "overlapping" and not output:
        t["Strides"] = [1] * len(sizes)  # neighbours along every dimension share elements


# -- valid builders, one per operator -------------------------------------------------------------------


def slice1(draw: Draw) -> dict[str, Any]:
    rank = draw(st.integers(1, 8))
    in_sizes = shape(draw, rank, hi=6 if rank <= 3 else 3)
    offsets, sizes, strides, out = [], [], [], []
    for n in in_sizes:
        off = draw(st.integers(0, n - 1))
        size = draw(st.integers(1, n - off))
        stride = draw(st.integers(1, 4)) * draw(st.sampled_from([1, -1]))
        offsets.append(off)
        sizes.append(size)
        strides.append(stride)
        out.append(draw(st.integers(1, 1 + (size - 1) // abs(stride))))
    dtype = draw(st.sampled_from(NUMERIC))
    x = tensor(dtype, in_sizes)
    maybe_strides(draw, x, output=False)
    y = tensor(dtype, out)
    maybe_strides(draw, y, output=True)
    return {
        "InputTensor": x,
        "OutputTensor": y,
        "DimensionCount": rank,
        "InputWindowOffsets": offsets,
        "InputWindowSizes": sizes,
        "InputWindowStrides": strides,
    }


def gather(draw: Draw) -> dict[str, Any]:
    d = draw(st.integers(1, 8))
    r = draw(st.integers(1, d))  # the input's meaningful rank; the rest is leading 1s
    k = draw(st.integers(0, d - r + 1))
    in_sizes = [1] * (d - r) + shape(draw, r, hi=5 if r <= 3 else 2, max_elements=128)
    axis = draw(st.integers(d - r, d - 1))
    idx_sizes = [1] * (d - k) + shape(draw, k, hi=3, max_elements=27)
    full = [*in_sizes[:axis], *idx_sizes[d - k :], *in_sizes[axis + 1 :]]
    while len(full) > d and full[0] == 1:
        full.pop(0)
    out = [1] * (d - len(full)) + full
    dtype = draw(st.sampled_from(NUMERIC))
    x = tensor(dtype, in_sizes)
    maybe_strides(draw, x, output=False)
    return {
        "InputTensor": x,
        "IndicesTensor": tensor(draw(st.sampled_from(["UINT32", "INT32", "INT64", "UINT64"])), idx_sizes),
        "OutputTensor": tensor(dtype, out),
        "Axis": axis,
        "IndexDimensions": k,
    }


def _pooling(draw: Draw, grad: bool) -> dict[str, Any]:
    k = draw(st.sampled_from([2, 2, 3]))
    nc = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    spatial = shape(draw, k, hi=6 if k == 2 else 4, max_elements=36)
    strides = [draw(st.integers(1, 3)) for _ in range(k)]
    dilations = [draw(st.integers(1, 2)) for _ in range(k)]
    # The dilated window must fit in the (padded) input.
    window = [draw(st.integers(1, min(3, (n - 1) // d + 1))) for n, d in zip(spatial, dilations)]
    # Padding up to half the window (torch's limit) keeps windows that are all padding rare.
    start = [draw(st.integers(0, w // 2)) for w in window]
    end = [draw(st.integers(0, w // 2)) for w in window]
    ceil = draw(st.booleans())
    out = []
    for n, w, s, dl, a, b in zip(spatial, window, strides, dilations, start, end):
        span = n + a + b - ((w - 1) * dl + 1)
        out.append(max(1, (-(-span // s) if ceil else span // s) + 1))
    dtype = draw(st.sampled_from(FLOATS if grad else [*FLOATS, "INT64", "INT8", "UINT8", "INT32", "UINT16"]))
    attrs = {"Strides": strides, "WindowSize": window, "StartPadding": start, "EndPadding": end, "Dilations": dilations}
    x = tensor(dtype, nc + spatial)
    maybe_strides(draw, x, output=False)
    if grad:
        return {
            "InputTensor": x,
            "InputGradientTensor": tensor(dtype, nc + out),
            "OutputGradientTensor": tensor(dtype, nc + spatial),
            "DimensionCount": k,
            **attrs,
        }
    desc: dict[str, Any] = {"InputTensor": x, "OutputTensor": tensor(dtype, nc + out), "DimensionCount": k, **attrs}
    if draw(st.booleans()):
        desc["OutputIndicesTensor"] = tensor(draw(st.sampled_from(["UINT32", "UINT64"])), nc + out)
    return desc


def max_pooling2(draw: Draw) -> dict[str, Any]:
    return _pooling(draw, grad=False)


def max_pooling_grad(draw: Draw) -> dict[str, Any]:
    return _pooling(draw, grad=True)


def _offset(draw: Draw) -> float:
    return draw(st.one_of(st.sampled_from([0.0, 0.5, -0.5, 1.0]), st.floats(-2, 2, width=32)))


def _resample(draw: Draw, grad: bool) -> dict[str, Any]:
    rank = draw(st.integers(1, 4))
    in_sizes = shape(draw, rank, hi=5, max_elements=64)
    out_sizes = shape(draw, rank, hi=6, max_elements=96)
    scales = [
        draw(st.one_of(st.just(o / i), st.floats(0.125, 4, width=32), st.just(float(np.finfo(np.float32).max))))
        for i, o in zip(in_sizes, out_sizes)
    ]
    dtype = draw(st.sampled_from(FLOATS if grad else [*FLOATS, "INT8", "UINT8"]))
    params = {
        "InterpolationMode": draw(st.sampled_from(["NEAREST_NEIGHBOR", "LINEAR"])),
        "RoundingDirection": draw(st.sampled_from(["INCREASING", "DECREASING"])),
        "DimensionCount": rank,
        "Scales": scales,
        "InputPixelOffsets": [_offset(draw) for _ in range(rank)],
        "OutputPixelOffsets": [_offset(draw) for _ in range(rank)],
    }
    if grad:
        return {
            "InputGradientTensor": tensor(dtype, out_sizes),
            "OutputGradientTensor": tensor(dtype, in_sizes),
            **params,
        }
    return {"InputTensor": tensor(dtype, in_sizes), "OutputTensor": tensor(dtype, out_sizes), **params}


def resample2(draw: Draw) -> dict[str, Any]:
    return _resample(draw, grad=False)


def resample_grad1(draw: Draw) -> dict[str, Any]:
    return _resample(draw, grad=True)


def roi_align(draw: Draw) -> dict[str, Any]:
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    h, w = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    rois = draw(st.integers(1, 3))
    oh, ow = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dtype = draw(st.sampled_from(FLOATS))
    roi_shape = draw(st.sampled_from([[rois, 4], [1, rois, 4], [1, 1, rois, 4]]))
    batch_shape = draw(st.sampled_from([[rois], [1, rois], [1, 1, rois], [1, 1, 1, rois]]))
    lo = draw(st.integers(1, 3))
    hi = draw(st.sampled_from([lo, lo + 1, 4, UINT32_MAX]))
    return {
        "InputTensor": tensor(dtype, [n, c, h, w]),
        "ROITensor": tensor(dtype, roi_shape),
        "BatchIndicesTensor": tensor(draw(st.sampled_from(["UINT32", "UINT64"])), batch_shape),
        "OutputTensor": tensor(dtype, [rois, c, oh, ow]),
        "ReductionFunction": draw(st.sampled_from(["AVERAGE", "MAX"])),
        "InterpolationMode": draw(st.sampled_from(["NEAREST_NEIGHBOR", "LINEAR"])),
        "SpatialScaleX": draw(st.sampled_from([1.0, 0.5, 0.25, 2.0])),
        "SpatialScaleY": draw(st.sampled_from([1.0, 0.5, 0.25, 2.0])),
        "OutOfBoundsInputValue": draw(st.sampled_from([0.0, -1.5, 7.0])),
        "MinimumSamplesPerOutput": lo,
        "MaximumSamplesPerOutput": hi,
    }


BUILDERS: dict[str, Callable[[Draw], dict[str, Any]]] = {
    "SLICE1": slice1,
    "GATHER": gather,
    "MAX_POOLING2": max_pooling2,
    "MAX_POOLING_GRAD": max_pooling_grad,
    "RESAMPLE2": resample2,
    "RESAMPLE_GRAD1": resample_grad1,
    "ROI_ALIGN": roi_align,
}


# -- mutations -------------------------------------------------------------------------------------------


def mutate(draw: Draw, desc: dict[str, Any], count: int) -> dict[str, Any]:
    """Apply ``count`` random edits: junk values, deleted members, other ranks and data types."""
    desc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in desc.items()}
    for _ in range(count):
        if not desc:
            desc[draw(st.sampled_from(["InputTensor", "Axis", "x"]))] = draw(JUNK)
            continue
        key = draw(st.sampled_from(sorted(desc)))
        value = desc[key]
        action = draw(st.sampled_from(["junk", "delete", "type", "rank", "resize", "array", "tensor_junk", "overlap"]))
        if isinstance(value, dict) and action in ("type", "rank", "resize", "tensor_junk", "overlap"):
            if action == "overlap":
                # Strides that make elements share an address (ruling 11: invalid on an
                # output with two elements or more; fine on an input).
                sizes = value["Sizes"] if isinstance(value.get("Sizes"), list) else []
                value["Strides"] = [draw(st.integers(0, 1)) for _ in sizes]
            elif action == "type":
                value["DataType"] = draw(st.sampled_from(ALL_TYPES))
            elif action == "rank":
                value["Sizes"] = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 9)))]
            elif action == "resize":
                sizes = list(value["Sizes"]) if isinstance(value.get("Sizes"), list) else [1]
                if sizes:
                    i = draw(st.integers(0, len(sizes) - 1))
                    sizes[i] = draw(st.sampled_from([0, 1, 2, 7, 2**31, UINT32_MAX, 2**32]))
                value["Sizes"] = sizes
            else:
                value[draw(st.sampled_from(TENSOR_KEYS))] = draw(JUNK)
        elif isinstance(value, list) and action == "array":
            items = list(value)
            if items and draw(st.booleans()):
                items[draw(st.integers(0, len(items) - 1))] = draw(JUNK)
            elif items and draw(st.booleans()):
                items.pop()
            else:
                items.append(draw(st.integers(-2, 5)))
            desc[key] = items
        elif action == "delete":
            del desc[key]
        else:
            desc[key] = draw(JUNK)
    return desc


def to_kwargs(op: str, desc: dict[str, Any], draw: Draw) -> dict[str, Any]:
    """The desc class's keyword arguments for a DML-named dict (tensors as TensorDesc, dict or junk).

    Count members (DimensionCount) have no Python field and are dropped.
    """
    cls = desc_class(op)
    kwargs: dict[str, Any] = {}
    for info in cls.member_infos():
        if info.dml_name not in desc:
            continue
        value = desc[info.dml_name]
        if info.kind in ("input", "output") and isinstance(value, dict) and draw(st.booleans()):
            # Through the TensorDesc constructor, with the dict's values unchecked.
            value = TensorDesc(
                data_type=value.get("DataType", "FLOAT32"),
                sizes=value.get("Sizes", ()),
                strides=value.get("Strides"),
                flags=value.get("Flags", "NONE"),
                total_tensor_size_in_bytes=value.get("TotalTensorSizeInBytes", -1),
                guaranteed_base_offset_alignment=value.get("GuaranteedBaseOffsetAlignment", 0),
            )
        kwargs[info.attr] = value
    return kwargs
