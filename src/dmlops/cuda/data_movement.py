"""Data movement on the CUDA backend: GATHER, SLICE1, GATHER_ELEMENTS, CAST and the copy programs.

GATHER
------
GATHER on the GPU: a strided copy whose gathered axis offset comes from the indices.

Every index is wrapped once inside the kernel (signed types from FL 3_0; UINT64 read
as INT64). An index in ``[0, n)`` reads as a plain gather; any other reads DirectML's
flat address (erratum E41): modulo 2^32, clamped to the last element of the input's
bound buffer (TotalTensorSizeInBytes), read from the caller's flat buffer as numpy and cpu
read it (a buffer whose elements are not adjacent is first copied into a packed one);
past what the caller's array holds (a logical array holds only the addressed span) it
reads 0. The kernel decides per index, so an in-range
call costs no host sync. The flat address counts in the desc's element strides from the
input view's first element: when the device array's strides differ (a logical array
laid out otherwise), the input is first stored through the desc's strides into a zeroed
buffer (one extra copy per such call). IndexDimensions 0 with OutputTensor.Sizes[0] > 1
adds the output's leading dimension, every element read flat. ``strict`` runs a check
kernel first and raises DataIndexError with the reference's message.

SLICE1
------
SLICE1 on the GPU: one strided copy (bit-exact).

GATHER_ELEMENTS
---------------
GATHER_ELEMENTS on the GPU: GATHER's strided copy with the index read per output element
(the input's stride on Axis replaced by the index times it). Every index is checked on
the device first (one synchronising read of a flag): DirectML's reads past the axis are
undefined (E160), so dmlops refuses them, with the reference's error.

CAST
----
CAST on the GPU: the element-wise kernel family (``elementwise.py``) with the CAST
functors of ``kernels/elementwise.cu`` (the reference's ``cast_array`` rules). Bit-exact
but for the bits of NaN (a NaN stays a NaN; its payload may change, as DirectML's device
conversions do not promise it either).

The copy programs
-----------------
SLICE, JOIN, SPLIT, TILE, PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1) and
FILL_VALUE_CONSTANT run their copy programs (:mod:`dmlops.descs._copy_programs`): one
strided copy launch per step, in order on the stream, with SLICE1's kernel; a fill is a
copy from a one-element device array through zero strides. A step whose iteration does
not collapse to the kernel's dimensions is split along its first axis. Bit-exact.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..descs._copy_programs import PROGRAMS, Affine, Fill, Step, copy_program
from ..descs.data_movement import GatherDesc, Slice1Desc, check_indices, elements_coordinates, sequence_values
from ..descs.data_movement import wraps_negative as signed_indices_wrap
from ..enums import FeatureLevel
from ..errors import DataIndexError
from ._copy import INDEX_TYPES, CopyPlan, PlanCache, grid_for
from ._plan import MAX_OUTER_DIMS, copy_layout, gather_dimensions
from ._runtime import PackedLaunch, cupy_module, element_strides, get_kernel, padded, params
from .elementwise import run_elementwise

# -- GATHER --------------------------------------------------------------------

_GATHER_PLANS = PlanCache()
NO_BAD = 2**64 - 1


def wraps_negative(desc: GatherDesc, feature_level: FeatureLevel) -> bool:
    """Signed index types wrap negative values once, from DML_FEATURE_LEVEL_3_0."""
    return desc.indices_tensor.data_type.is_signed_integer and feature_level >= FeatureLevel.V3_0


def gather_plan_for(
    desc: GatherDesc,
    xs: tuple[int, ...],
    is_: tuple[int, ...],
    ys: tuple[int, ...],
    itemsize: int,
    wrap: bool,
    flat: tuple[int, int, int] = (0, -1, 0),
    extra: tuple[int, int] | None = None,
) -> CopyPlan:
    """The collapsed gather layout for these strides (``flat``, ``extra``: E41, see run_gather)."""
    key = (id(desc), xs, is_, ys, wrap, flat, extra)
    plan = _GATHER_PLANS.get(key)
    if plan is None or plan.desc is not desc:
        sizes, src, dst, idx = gather_dimensions(
            desc.input_tensor.sizes, xs, desc.indices_tensor.sizes, is_, ys, desc.axis, desc.index_dimensions, extra
        )
        layout = copy_layout(
            sizes, src, dst, idx, axis_size=desc.input_tensor.sizes[desc.axis], axis_stride=xs[desc.axis]
        )
        ctype = INDEX_TYPES[desc.indices_tensor.dtype]
        plan = _GATHER_PLANS.put(key, CopyPlan(desc, layout, itemsize, ctype, wrap, flat))
    return plan


def flat_input(
    desc: GatherDesc, x: Any, readable: int | None = None, buffer: Any = None
) -> tuple[Any, tuple[int, int, int], tuple[int, int] | None]:
    """(input view, (flat_limit, flat_last, flat_always), extra dimension) for E41's flat reads.

    ``desc`` is the whole desc (not its leading slab): the bound buffer is its input's.
    ``buffer``: the caller's 1-D device array, if the input came as a flat buffer;
    ``readable``: its element count, if its elements are adjacent (else only the view's
    addressed span is known to be there in place).
    """
    t = desc.input_tensor
    count, span, strides, extra = _flat_facts(desc)
    in_place = readable is not None or buffer is None
    if not in_place or any(n > 1 and s != e for n, s, e in zip(t.sizes, element_strides(x), strides)):
        # Laid out otherwise than the desc says, or a buffer whose elements are not adjacent:
        # the bound buffer rebuilt, the caller's elements first (as numpy reads them), zeros after.
        cp = cupy_module()
        memory = cp.zeros(count, dtype=x.dtype)
        view = cp.lib.stride_tricks.as_strided(memory, shape=t.sizes, strides=tuple(e * x.itemsize for e in strides))
        if buffer is not None:
            m = min(count, buffer.size)
            memory[:m] = buffer[:m]
        else:
            view[...] = x
        x, limit = view, count
    else:
        limit = max(span, readable or 0)
    return x, (limit, count - 1, 1 if extra else 0), extra


@functools.lru_cache(maxsize=256)
def _flat_facts(desc: GatherDesc) -> tuple[int, int, tuple[int, ...], tuple[int, int] | None]:
    """(bound buffer elements, addressed span, element strides, extra dimension) of the input, per desc."""
    t = desc.input_tensor
    extra = None
    if desc.extra_slabs():
        extra = (desc.output_tensor.sizes[0], t.element_count if t.strides is None else 0)
    return t.bound_size_in_bytes // t.dtype.itemsize, t.addressed_element_span, t.element_strides, extra


def check_params(shape: tuple[int, ...], strides: tuple[int, ...], n: int) -> np.void:
    """The CheckParams struct of ``gather_check`` for indices of ``shape`` / element ``strides``."""
    return params(
        ("count", "i8", int(np.prod(shape))),
        ("base", "i8", 0),
        ("ndim", "i8", len(shape)),
        ("axis_size", "i8", n),
        ("size", "i8", padded(shape, 8, 1)),
        ("stride", "i8", padded(strides, 8)),
    )


def check_launch(indices: Any, n: int, wrap: bool) -> PackedLaunch:
    """The ``gather_check`` launch for indices of this shape, strides and type (pointers: indices, flag).

    The flag must hold NO_BAD before the launch; afterwards it holds the row-major
    position of the first index outside ``[-n, n)`` / ``[0, n)``, or still NO_BAD.
    """
    fn = get_kernel("copy.cu", f"gather_check<{INDEX_TYPES[indices.dtype]}, {'true' if wrap else 'false'}>")
    p = check_params(indices.shape, element_strides(indices), n)
    return PackedLaunch(fn, grid_for(indices.size, 256, 1, 4096), 256, 2, p)


def first_bad_index(indices: Any, n: int, wrap: bool) -> int | None:
    """Row-major position of the first index outside ``[-n, n)`` / ``[0, n)``, or None."""
    flag = cupy_module().full((1,), NO_BAD, dtype=np.uint64)
    check_launch(indices, n, wrap)(indices.data.ptr, flag.data.ptr)
    bad = int(flag.get()[0])
    return None if bad == NO_BAD else bad


@functools.lru_cache(maxsize=256)
def _leading_slab(desc: GatherDesc) -> tuple[GatherDesc, tuple[slice, ...], tuple[slice, ...]]:
    """``desc.leading_slab()``, memoized so that the plan cache sees the same reduced desc."""
    return desc.leading_slab()


def run_gather(
    desc: GatherDesc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch GATHER on device views (see :func:`dmlops.cuda.execute`)."""
    # Dropped leading output entries other than 1: DirectML computes the slab at
    # coordinate 0 of those dimensions (GatherDesc.leading_slab).
    readable = getattr(inputs, "readable", {}).get("InputTensor")
    buffer = getattr(inputs, "buffers", {}).get("InputTensor")
    x, flat, extra = flat_input(desc, inputs["InputTensor"], readable, buffer)
    desc, x_slab, idx_slab = _leading_slab(desc)
    x = x[x_slab]
    idx = inputs["IndicesTensor"][idx_slab]
    y = outputs["OutputTensor"]
    wrap = wraps_negative(desc, feature_level)
    n = desc.input_tensor.sizes[desc.axis]
    if strict and first_bad_index(idx, n, wrap) is not None:
        from ..descs.data_movement import normalize_indices

        normalize_indices(idx.get(), n, wrap_negative=wrap, strict=True, what=f"{desc.dml_name}.IndicesTensor")
        raise DataIndexError(f"{desc.dml_name}.IndicesTensor: an index is out of range (strict mode)")
    plan = gather_plan_for(
        desc, element_strides(x), element_strides(idx), element_strides(y), x.itemsize, wrap, flat, extra
    )
    plan.launch(x, y, idx)


# -- SLICE1 --------------------------------------------------------------------

_SLICE1_PLANS = PlanCache()


def slice1_plan_for(
    desc: Slice1Desc, in_strides: tuple[int, ...], out_strides: tuple[int, ...], itemsize: int
) -> CopyPlan:
    """``Output[o] = Input[CopyStart + InputWindowStrides * o]`` as a collapsed strided copy.

    Source element strides are ``InputWindowStrides[i] * input_stride[i]`` (signed), the
    source base is ``sum(CopyStart[i] * input_stride[i])``.
    """
    key = (id(desc), in_strides, out_strides)
    plan = _SLICE1_PLANS.get(key)
    if plan is None or plan.desc is not desc:
        start = desc.copy_start()
        src = [w * s for w, s in zip(desc.input_window_strides, in_strides)]
        base = sum(c * s for c, s in zip(start, in_strides))
        layout = copy_layout(desc.output_tensor.sizes, src, out_strides, src_base=base)
        plan = _SLICE1_PLANS.put(key, CopyPlan(desc, layout, itemsize))
    return plan


def run_slice1(
    desc: Slice1Desc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch SLICE1 on device views (see :func:`dmlops.cuda.execute`)."""
    x = inputs["InputTensor"]
    y = outputs["OutputTensor"]
    plan = slice1_plan_for(desc, element_strides(x), element_strides(y), x.itemsize)
    plan.launch(x, y)


# -- GATHER_ELEMENTS -----------------------------------------------------------------

_ELEMENT_PLANS = PlanCache()


def run_gather_elements(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch GATHER_ELEMENTS on device views (see the module docstring)."""
    x, idx, y = inputs["InputTensor"], inputs["IndicesTensor"], outputs["OutputTensor"]
    axis = int(desc.axis)
    n = desc.input_tensor.sizes[axis]
    wrap = signed_indices_wrap(desc.indices_tensor.data_type, feature_level)
    if first_bad_index(idx, n, wrap) is not None:  # the reference's DataIndexError, from the host's copy
        coordinates = elements_coordinates(desc.indices_tensor.sizes, axis, idx.get(), n, wrap_negative=wrap)
        check_indices(f"{desc.dml_name}.IndicesTensor", coordinates, desc.input_tensor.sizes, [axis], scatter=False)
    xs, is_, ys = element_strides(x), element_strides(idx), element_strides(y)
    key = (id(desc), xs, is_, ys, wrap)
    plan = _ELEMENT_PLANS.get(key)
    if plan is None or plan.desc is not desc:
        src = tuple(0 if i == axis else s for i, s in enumerate(xs))
        layout = copy_layout(desc.output_tensor.sizes, src, ys, is_, axis_size=n, axis_stride=xs[axis])
        plan = _ELEMENT_PLANS.put(key, CopyPlan(desc, layout, x.itemsize, INDEX_TYPES[idx.dtype], wrap))
    plan.launch(x, y, idx)


# -- FILL_VALUE_SEQUENCE -----------------------------------------------------------


def run_fill_value_sequence(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """The semantics layer's ``sequence_values`` in CuPy array arithmetic, stored into the output view.

    One kernel per arithmetic step, so no step is contracted into a fused multiply-add.
    """
    out = outputs["OutputTensor"]
    cp = cupy_module()
    out[...] = sequence_values(desc, cp.arange(out.size, dtype=cp.int64)).reshape(out.shape)


# -- the copy programs -------------------------------------------------------------

_PROGRAM_PLANS = PlanCache()


def _peeled(step: Step) -> list[Step]:
    """``step`` split along its first iteration axis (one step per index, that axis dropped)."""

    def shifted(where: Affine, k: int) -> Affine:
        start = tuple(s + row[0] * k for s, row in zip(where.start, where.matrix))
        return Affine(where.member, start, tuple(row[1:] for row in where.matrix))

    out: list[Step] = []
    for k in range(step.sizes[0]):
        if isinstance(step, Fill):
            out.append(Fill(step.sizes[1:], shifted(step.dst, k), step.value))
        else:
            out.append(type(step)(step.sizes[1:], shifted(step.dst, k), shifted(step.src, k)))
    return out


def _launches(desc: Any, arrays: Mapping[str, Any], step: Step) -> list[tuple[CopyPlan, Any, str]]:
    """``(copy plan, source: a member name or a constant device array, destination member)`` per launch."""
    dst = arrays[step.dst.member]
    dst_base, dst_strides = step.dst.element_map(element_strides(dst))
    if isinstance(step, Fill):
        source: Any = cupy_module().asarray(np.asarray([step.value], dtype=dst.dtype))
        src_base, src_strides = 0, (0,) * len(step.sizes)
    else:
        source = step.src.member
        src_base, src_strides = step.src.element_map(element_strides(arrays[step.src.member]))
    layout = copy_layout(step.sizes, src_strides, dst_strides, src_base=src_base, dst_base=dst_base)
    if len(layout.outer_sizes) > MAX_OUTER_DIMS:  # more than the kernel's dimensions: one step per index
        return [launch for part in _peeled(step) for launch in _launches(desc, arrays, part)]
    return [(CopyPlan(desc, layout, dst.itemsize), source, step.dst.member)]


def run_copy_program(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch the desc's copy program on device views (see :func:`dmlops.cuda.execute`)."""
    arrays = {**inputs, **outputs}
    key = (id(desc), tuple((m, element_strides(a)) for m, a in sorted(arrays.items())))
    plan = _PROGRAM_PLANS.get(key)
    if plan is None or plan[0] is not desc:
        launches = [launch for step in copy_program(desc) for launch in _launches(desc, arrays, step)]
        plan = _PROGRAM_PLANS.put(key, (desc, launches))
    for copy, source, member in plan[1]:
        copy.launch(arrays[source] if isinstance(source, str) else source, arrays[member])


OPERATORS: dict[str, Callable[..., Any]] = {
    "GATHER": run_gather,
    "SLICE1": run_slice1,
    "CAST": run_elementwise,
    "GATHER_ELEMENTS": run_gather_elements,
    "FILL_VALUE_SEQUENCE": run_fill_value_sequence,
    **{name: run_copy_program for name in PROGRAMS},
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
