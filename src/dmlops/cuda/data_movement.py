"""Data movement on the CUDA backend: GATHER, SLICE1, the indexing operators, CAST and the copy programs.

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

The indexing operators
----------------------
GATHER_ELEMENTS, GATHER_ND(1), SCATTER_ELEMENTS, SCATTER_ND, ONE_HOT, REVERSE_SUBSEQUENCES,
DIAGONAL_MATRIX(1) run kernels/indexing.cu; NONZERO_COORDINATES CuPy's ``argwhere`` (a
scan, row-major order). Bit-exact (raw element copies). Index checks run inside the
kernels that move the data: an index outside its axis sets a device flag and moves
nothing, the host reads the flag once per call and raises the reference's
DataIndexError (its message computed from a host copy of the indices with the semantics
layer's ``check_indices`` / ``refuse_duplicates``).

* GATHER_ELEMENTS: one pass (each index read once). DirectML's reads past the axis are
  undefined (E160), so an index outside it raises whatever ``strict``, as the reference.
  When it raises, a device ``out=`` array of the caller holds the gathered elements of
  the in-range indices and unspecified values at the others (the kernels cannot tell a
  caller's array from a fresh one; a fresh or NumPy output is never handed back). Along
  the innermost axis, rows of Input up to 48 KiB are staged in shared memory first, and
  moved four elements at a time where the layout and alignment allow.
* SCATTER_ELEMENTS: one pass per line or tile of lines along Axis (every update claims
  its target in shared memory, the last in row-major order wins as in the reference;
  then each output element is written once, from its update or the input). An index
  outside the axis raises (whatever ``strict``); strict mode runs a checking pass first,
  so a refused call (out of range, or duplicate targets) leaves the output as it was;
  without ``strict``, a device ``out=`` array of the caller holds the input with the
  in-range updates scattered when the call raises. Along the innermost axis, a line
  whose claims and updates fit 48 KiB is read once into shared memory
  (scatter_elements_staged: DRAM sees Indices, Updates and Output once each, and the
  Input only where no update lands); other lines up to 8192 elements keep their claims
  in shared memory by tiles, longer ones in a scratch buffer. ``SCATTER_STORES`` picks
  the form of the tiles' last phase (scatter stores or gathers; same bits).
* GATHER_ELEMENTS and SCATTER_ELEMENTS read their index flag from pinned host memory
  (``PINNED_FLAGS``): each call still waits for its kernel (an index out of range
  raises), but no longer launches a memset and a copy for the flag.
* GATHER_ND(1): one pass for in-range tuples; when a value lies outside its dimension
  (or a batch coordinate past the input's), the call raises as the reference (strict,
  or data of other than 32 bits) or reads DirectML's flat clamp (E160) from a host copy
  of the bound buffer, as the reference does (a rare path, not a fast one).
* SCATTER_ND: a claiming pass (each index tuple checked; the last in row-major order
  wins its target slice; int32 claims, so at most 2^31 - 1 tuples) before anything is
  written, so every refused call leaves the output untouched; then Output = Input and
  the winners' slices.
* ONE_HOT, REVERSE_SUBSEQUENCES, DIAGONAL_MATRIX(1): one pass over the output, the
  semantics layer's rules (``one_hot_positions``, ``reverse_sources``, ``diagonal_fill``,
  ``padding_value``) written per element.

CAST
----
CAST on the GPU: the element-wise kernel family (``elementwise.py``) with the CAST
functors of ``kernels/elementwise.cu`` (the reference's ``cast_array`` rules). Bit-exact
but for the bits of NaN (a NaN stays a NaN; its payload may change, as DirectML's device
conversions do not promise it either).

The copy programs and the separable gathers
-------------------------------------------
SLICE, SLICE_GRAD, JOIN, SPLIT and FILL_VALUE_CONSTANT run their copy programs
(:mod:`dmlops.descs._copy_programs`): one strided copy launch per step, in order on the
stream, with SLICE1's kernel; a fill is a copy from a one-element device array through
zero strides. A step whose iteration does not collapse to the kernel's dimensions is split
along its first axis. PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1) and TILE run as
separable gathers (:mod:`dmlops.cuda._table_copy`): one pass writing each output element
once (elements of 1 or 2 bytes as up to 8-byte words where groups of adjacent outputs read
adjacent inputs and the addresses align). TILE whose Repeats are all 1 is a plain copy and keeps its copy program (which
collapses it to the fewest axes; the table kernel walks the output's own rows). Bit-exact.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._numpy_io import input_memory
from ..descs._copy_programs import PROGRAMS, Affine, Fill, Step, copy_program
from ..descs._separable_gathers import GATHERS
from ..descs.data_movement import (
    GatherDesc,
    Slice1Desc,
    check_indices,
    elements_coordinates,
    flat_addresses,
    nd_coordinates,
    padding_value,
    refuse_duplicates,
    sequence_values,
)
from ..descs.data_movement import wraps_negative as signed_indices_wrap
from ..enums import FeatureLevel
from ..errors import DataIndexError
from . import _table_copy
from ._copy import INDEX_TYPES, STORAGE, CopyPlan, PlanCache, grid_for, index_type
from ._plan import MAX_OUTER_DIMS, collapse, copy_layout, gather_dimensions, max_abs_offset
from ._runtime import PackedLaunch, cupy_module, element_strides, get_kernel, padded, params
from ._table_copy import run_separable_gather
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
    count, span, strides, extra = desc.derived(_flat_facts)
    in_place = readable is not None or buffer is None
    given = element_strides(x)
    if not in_place or (given != strides and any(n > 1 and s != e for n, s, e in zip(t.sizes, given, strides))):
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


def _flat_facts(desc: GatherDesc) -> tuple[int, int, tuple[int, ...], tuple[int, int] | None]:
    """(bound buffer elements, addressed span, element strides, extra dimension) of the input.

    Computed once per desc object (``desc.derived``): a cache keyed by the desc's hash
    walked every field of the desc on every call, more host time than the launch.
    """
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


def _leading_slab(desc: GatherDesc) -> tuple[GatherDesc, tuple[slice, ...], tuple[slice, ...]]:
    """``desc.leading_slab()``, once per desc object, so that the plan cache sees the same reduced desc."""
    return desc.derived(GatherDesc.leading_slab)


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
    slab, x_slab, idx_slab = _leading_slab(desc)
    idx = inputs["IndicesTensor"]
    if slab is not desc:  # a view per call only where DirectML computes a slab (a CuPy slice costs microseconds)
        x, idx, desc = x[x_slab], idx[idx_slab], slab
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


# -- the indexing operators (kernels/indexing.cu) ------------------------------------

INDEXING = "indexing.cu"
IX_DIMS = 8
SC_CAP, SC_LINES, SC_BLOCK = 8192, 256, 512  # scatter_elements' tile limits (indexing.cu)
SCRATCH_INTS = 2**26
"""scatter_elements' winners in global memory (lines past SC_CAP): at most this many ints at once."""
SCATTER_STORES = False
"""SCATTER_ELEMENTS' last phase as scatter stores (updates read in order, stored where they
point), else as gathers (each output element read from its update); both bit-exact, the
benchmark (bench/gpu_indexing.py) times both. Run 33 (H200, a permutation per row of
(16384, 4096) FLOAT32): gathers 449.6 us, scatter stores 1054.5 us."""


def ix_params(
    count: int,
    sizes: tuple[int, ...],
    strides: Sequence[Sequence[int]],
    *,
    n: int = 0,
    m: int = 0,
    axis_stride: Sequence[int] = (),
    scalar: Sequence[int] = (),
    tuple_n: Sequence[int] = (),
    tuple_stride: Sequence[int] = (),
    tuple_out: Sequence[int] = (),
) -> np.void:
    """The IxParams struct of kernels/indexing.cu (``strides``: up to four operands' element strides)."""
    operands = [padded(s, IX_DIMS) for s in strides] + [[0] * IX_DIMS] * (4 - len(strides))
    return params(
        ("count", "i8", count),
        ("ndim", "i8", len(sizes)),
        ("n", "i8", n),
        ("m", "i8", m),
        ("axis_stride", "i8", padded(axis_stride, 4)),
        ("scalar", "i8", padded(scalar, 4)),
        ("size", "i8", padded(sizes, IX_DIMS, 1)),
        *((f"st{i}", "i8", operands[i]) for i in range(4)),
        ("tuple_n", "i8", padded(tuple_n, IX_DIMS, 1)),
        ("tuple_stride", "i8", padded(tuple_stride, IX_DIMS)),
        ("tuple_out", "i8", padded(tuple_out, IX_DIMS)),
    )


def offset_type(count: int, *spans: int) -> str:
    """The kernels' offset type: ``int`` when the work count and every operand's largest offset fit."""
    return index_type(count < 2**31 and all(s < 2**31 for s in spans))


def span(a: Any) -> int:
    """The largest |element offset| a device view addresses from its first element."""
    return max_abs_offset(a.shape, element_strides(a))


def drop(values: Sequence[int], axis: int) -> list[int]:
    """``values`` without entry ``axis``."""
    return [int(v) for i, v in enumerate(values) if i != axis]


def coordinate(rank: int, axis: int) -> list[int]:
    """A stride vector whose offset is the coordinate along ``axis``."""
    return [1 if i == axis else 0 for i in range(rank)]


def ix_launch(name: str, count: int, n_pointers: int, p: np.void, block: int = 256) -> PackedLaunch:
    """A launch of kernels/indexing.cu's ``name`` over ``count`` work items (grid-stride loops)."""
    return PackedLaunch(get_kernel(INDEXING, name), grid_for(count, block, 4, 2**20), block, n_pointers, p)


def index_flag() -> Any:
    """A zeroed device word for the kernels' index checks."""
    return cupy_module().zeros((1,), dtype=np.uint32)


PINNED_FLAGS = True
"""GATHER_ELEMENTS and SCATTER_ELEMENTS read their index flag from a word of pinned host
memory the kernel writes directly (one per thread and stream, reset only after a set flag
was read), instead of a fresh device word (a memset launch) copied back per call."""
_FLAGS = threading.local()


class _PinnedFlag:
    """A pinned host word the kernels write through its (unified) address; read after the stream's work is done."""

    def __init__(self) -> None:
        cp = cupy_module()
        self.memory = cp.cuda.alloc_pinned_memory(4)
        self.word = np.frombuffer(self.memory, dtype=np.uint32, count=1)
        self.word[0] = 0
        self.ptr = int(self.memory.ptr)

    def read(self) -> int:
        """The flag's bits after the current stream's work, the word zeroed again when set."""
        cupy_module().cuda.get_current_stream().synchronize()
        bits = int(self.word[0])
        if bits:
            self.word[0] = 0
        return bits


class _DeviceFlag:
    """A fresh zeroed device word (index_flag), read back by a copy."""

    def __init__(self) -> None:
        self.array = index_flag()
        self.ptr = int(self.array.data.ptr)

    def read(self) -> int:
        return int(self.array.get()[0])


def call_flag() -> _PinnedFlag | _DeviceFlag:
    """The index flag of one GATHER_ELEMENTS or SCATTER_ELEMENTS call on the current stream (see PINNED_FLAGS)."""
    if not PINNED_FLAGS:
        return _DeviceFlag()
    cp = cupy_module()
    key = (cp.cuda.runtime.getDevice(), cp.cuda.get_current_stream().ptr)
    flags = getattr(_FLAGS, "flags", None)
    if flags is None:
        flags = _FLAGS.flags = {}
    flag = flags.get(key)
    if flag is None:
        flag = flags[key] = _PinnedFlag()
    elif flag.word[0]:  # set by a call that never read it (interrupted): this call's own bits only
        flag.word[0] = 0
    return flag


def bits_of(value: Any, dtype: np.dtype[Any]) -> int:
    """``value`` as ``dtype``'s raw bits, as a signed 64-bit parameter."""
    raw = int(np.asarray(value, dtype=dtype).reshape(()).view(f"u{dtype.itemsize}"))
    return raw - 2**64 if raw >= 2**63 else raw


def storage(a: Any) -> Any:
    """A device view's raw elements (unsigned integers of its size: copies keep every bit)."""
    return a.view(f"u{a.itemsize}")


# -- GATHER_ELEMENTS -----------------------------------------------------------------

_ELEMENT_LAUNCHES = PlanCache()


def run_gather_elements(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """GATHER_ELEMENTS in one pass, its index check fused (see the module docstring)."""
    x, idx, y = inputs["InputTensor"], inputs["IndicesTensor"], outputs["OutputTensor"]
    if y.size == 0:
        return
    axis = int(desc.axis)
    n = desc.input_tensor.sizes[axis]
    wrap = signed_indices_wrap(desc.indices_tensor.data_type, feature_level)
    xs, is_, ys = element_strides(x), element_strides(idx), element_strides(y)
    key = (id(desc), xs, is_, ys, wrap)
    plan = _ELEMENT_LAUNCHES.get(key)
    if plan is None or plan[0] is not desc:
        plan = _ELEMENT_LAUNCHES.put(
            key, (desc, _rows_launch(x, idx, y, axis, wrap) or _elements_launch(x, idx, y, axis, wrap))
        )
    flag = call_flag()
    plan[1](x.data.ptr, idx.data.ptr, y.data.ptr, flag.ptr)
    if flag.read():  # the reference's DataIndexError, from the host's copy of the indices
        coordinates = elements_coordinates(desc.indices_tensor.sizes, axis, idx.get(), n, wrap_negative=wrap)
        check_indices(f"{desc.dml_name}.IndicesTensor", coordinates, desc.input_tensor.sizes, [axis], scatter=False)
        raise DataIndexError(f"{desc.dml_name}.IndicesTensor: an index is out of range")  # not reached


def _elements_launch(x: Any, idx: Any, y: Any, axis: int, wrap: bool) -> PackedLaunch:
    """GATHER_ELEMENTS over any layout: a thread per output element."""
    xs, is_, ys = element_strides(x), element_strides(idx), element_strides(y)
    sizes, strides = collapse(idx.shape, [[0 if i == axis else s for i, s in enumerate(xs)], is_, ys])
    offsets = offset_type(y.size, span(x), span(idx), span(y))
    name = f"gather_elements<{STORAGE[x.itemsize]}, {INDEX_TYPES[idx.dtype]}, {_c(wrap)}, {offsets}>"
    p = ix_params(y.size, sizes, strides, n=x.shape[axis], axis_stride=[xs[axis]])
    return ix_launch(name, y.size, 4, p)


ROW_SHARED_BYTES = 48 * 1024
"""The largest Input row gather_elements_rows stages in shared memory (the default limit per block)."""


class _RowsLaunch:
    """gather_elements_rows's launches: four elements per access where the pointers allow, else one."""

    def __init__(self, wide: PackedLaunch | None, narrow: PackedLaunch, align: tuple[int, int, int]) -> None:
        self.wide, self.narrow, self.align = wide, narrow, align

    def __call__(self, *pointers: int) -> None:
        src, idx, dst = pointers[:3]
        aligned = self.wide is not None and not (src % self.align[0] or idx % self.align[1] or dst % self.align[2])
        (self.wide if aligned else self.narrow)(*pointers)  # type: ignore[misc]


def _rows_launch(x: Any, idx: Any, y: Any, axis: int, wrap: bool) -> _RowsLaunch | None:
    """GATHER_ELEMENTS with its Input rows staged in shared memory, where that applies, else None.

    It applies when Axis is the innermost dimension that is not 1, the outer dimensions of
    Input and Indices agree and collapse to one row stride per operand, and a row fits
    ROW_SHARED_BYTES.
    """
    rank = x.ndim
    if any(x.shape[d] != 1 or idx.shape[d] != 1 for d in range(axis + 1, rank)):
        return None
    n = x.shape[axis]
    if x.shape[:axis] != idx.shape[:axis] or n * x.itemsize > ROW_SHARED_BYTES or n == 0:
        return None
    xs, is_, ys = element_strides(x), element_strides(idx), element_strides(y)
    sizes, strides = collapse(idx.shape[:axis], [xs[:axis], is_[:axis], ys[:axis]])
    if len(sizes) > 1:
        return None
    rows = sizes[0] if sizes else 1
    row_strides = [s[0] if sizes else 0 for s in strides]
    p = ix_params(
        rows, (), [], n=n, m=idx.shape[axis], axis_stride=[xs[axis], is_[axis], ys[axis]], tuple_stride=row_strides
    )
    grid = max(1, min(rows, 2**20))
    head = f"gather_elements_rows<{STORAGE[x.itemsize]}, {INDEX_TYPES[idx.dtype]}, {_c(wrap)}"

    def launch(vec: int) -> PackedLaunch:
        return PackedLaunch(get_kernel(INDEXING, f"{head}, {vec}>"), grid, 256, 4, p, shared=n * x.itemsize)

    m = idx.shape[axis]
    units = (xs[axis], is_[axis], ys[axis]) == (1, 1, 1)
    fits = units and n % 4 == 0 and m % 4 == 0 and all(s % 4 == 0 for s in row_strides)
    align = (4 * x.itemsize, 4 * idx.itemsize, 4 * y.itemsize)
    return _RowsLaunch(launch(4) if fits else None, launch(1), align)


def _c(flag: bool) -> str:
    return "true" if flag else "false"


# -- SCATTER_ELEMENTS ----------------------------------------------------------------


SCATTER_BATCH = 2
"""scatter_elements_staged's accesses in flight per thread and phase (its U); 0: every line
through scatter_elements (tiles of lines, one access at a time). Run B (H200, a permutation
per row of (16384, 4096) FLOAT32, INT32 indices): scatter_elements 537.0 us (35.6 % of
copy); staged with U = 2 / 4 / 8: 218.8 / 227.1 / 475.8 us (45 / 78 / 158 registers: 5 / 3
/ 1 blocks per SM)."""
SCATTER_SHARED_BYTES = 48 * 1024
"""The most shared memory scatter_elements_staged takes for a line (winners and updates)."""


class _ScatterStaged:
    """scatter_elements_staged's launches for one layout: four elements per access where the pointers allow."""

    def __init__(
        self,
        wide: tuple[PackedLaunch, PackedLaunch] | None,
        narrow: tuple[PackedLaunch, PackedLaunch],
        align: tuple[int, ...],
    ) -> None:
        self.wide, self.narrow, self.align = wide, narrow, align  # each: (the checking pass, the writing one)

    def __call__(self, write: bool, *pointers: int) -> None:
        """Pointers: Input, Indices, Updates, Output, flag."""
        src, idx, upd, dst, flag = pointers
        ptrs = (src, dst, idx, upd)
        aligned = self.wide is not None and not any(q % a for q, a in zip(ptrs, self.align, strict=True))
        launch = (self.wide if aligned and self.wide is not None else self.narrow)[int(write)]
        launch(src, idx, upd, dst, flag)


def _scatter_staged(x: Any, idx: Any, upd: Any, y: Any, axis: int, wrap: bool) -> _ScatterStaged | None:
    """SCATTER_ELEMENTS with a line at a time in shared memory, where that applies, else None.

    It applies when Axis is the innermost dimension that is not 1, each operand's lines
    collapse to one stride, and the line's winners (n ints) and updates (m elements) fit
    SCATTER_SHARED_BYTES.
    """
    batch = SCATTER_BATCH
    rank = x.ndim
    n, m = x.shape[axis], idx.shape[axis]
    if not batch or n == 0 or m == 0 or any(x.shape[d] != 1 for d in range(axis + 1, rank)):
        return None
    head_bytes = -(-n * 4 // 32) * 32
    shared = head_bytes + m * x.itemsize
    if shared > SCATTER_SHARED_BYTES:
        return None
    operands = [element_strides(a) for a in (x, y, idx, upd)]
    if any(abs(s[axis]) * k >= 2**31 for s, k in zip(operands, (n, n, m, m), strict=True)):
        return None  # the kernel's offsets within a line are 32-bit
    sizes, strides = collapse(x.shape[:axis], [s[:axis] for s in operands])
    if len(sizes) > 1:
        return None
    lines = sizes[0] if sizes else 1
    line_strides = [s[0] if sizes else 0 for s in strides]
    grid = max(1, min(lines, 2**20))
    axis_strides = [s[axis] for s in operands]
    head = f"scatter_elements_staged<{STORAGE[x.itemsize]}, {INDEX_TYPES[idx.dtype]}, {_c(wrap)}"

    def launches(vec: int) -> tuple[PackedLaunch, PackedLaunch]:
        fn = get_kernel(INDEXING, f"{head}, {vec}, {batch}>")
        return tuple(  # type: ignore[return-value]
            PackedLaunch(
                fn,
                grid,
                256,
                5,
                ix_params(lines, (), [], n=n, m=m, axis_stride=axis_strides, scalar=[write], tuple_stride=line_strides),
                shared=shared,
            )
            for write in (0, 1)
        )

    fits = axis_strides == [1, 1, 1, 1] and n % 4 == 0 and m % 4 == 0 and all(s % 4 == 0 for s in line_strides)
    align = tuple(4 * a.itemsize for a in (x, y, idx, upd))
    return _ScatterStaged(launches(4) if fits else None, launches(1), align)


_SCATTER_STAGED = PlanCache()


def run_scatter_elements(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """SCATTER_ELEMENTS by lines (scatter_elements_staged) or tiles of lines (scatter_elements) along Axis."""
    x, idx, upd, y = inputs["InputTensor"], inputs["IndicesTensor"], inputs["UpdatesTensor"], outputs["OutputTensor"]
    if y.size == 0:
        return
    axis = int(desc.axis)
    n, m = x.shape[axis], idx.shape[axis]
    wrap = signed_indices_wrap(desc.indices_tensor.data_type, feature_level)
    layout = (element_strides(x), element_strides(idx), element_strides(upd), element_strides(y))
    key = (id(desc), layout, wrap, SCATTER_BATCH)
    plan = _SCATTER_STAGED.get(key)
    if plan is None or plan[0] is not desc:
        plan = _SCATTER_STAGED.put(key, (desc, _scatter_staged(x, idx, upd, y, axis, wrap)))
    staged = plan[1]
    if staged is not None:
        flag = call_flag()
        ptrs = (x.data.ptr, idx.data.ptr, upd.data.ptr, y.data.ptr, flag.ptr)
        # strict: a checking pass first, so that a refused call leaves the output as it was
        staged(not strict, *ptrs)
        found = flag.read()
        _raise_scatter_elements(desc, idx, axis, n, wrap, strict, found)
        if strict:
            staged(True, *ptrs)
            flag.read()
        return
    operands = [element_strides(a) for a in (x, y, idx, upd)]
    sizes, strides = collapse(drop(x.shape, axis), [drop(s, axis) for s in operands])
    lines = math.prod(sizes)
    shared = n <= SC_CAP
    per_tile = max(1, min(SC_LINES, SC_CAP // n)) if shared else 1
    tiles = -(-lines // per_tile)
    grid = min(tiles, 2**20 if shared else max(1, SCRATCH_INTS // n))
    cp = cupy_module()
    scratch = cp.empty((1 if shared else grid * n,), dtype=np.int32)
    name = f"scatter_elements<{STORAGE[x.itemsize]}, {INDEX_TYPES[idx.dtype]}, {_c(wrap)}, {_c(shared)}>"
    fn = get_kernel(INDEXING, name)
    flag = call_flag()
    pointers = (x.data.ptr, idx.data.ptr, upd.data.ptr, y.data.ptr, scratch.data.ptr, flag.ptr)

    def launch(write: bool) -> int:
        p = ix_params(
            lines,
            sizes,
            strides,
            n=n,
            m=m,
            axis_stride=[s[axis] for s in operands],
            scalar=[int(write), per_tile, int(SCATTER_STORES)],
        )
        PackedLaunch(fn, grid, SC_BLOCK, 6, p)(*pointers)
        return flag.read()

    # strict: a checking pass first, so that a refused call leaves the output as it was
    found = launch(False) if strict else launch(True)
    _raise_scatter_elements(desc, idx, axis, n, wrap, strict, found)
    if strict:
        launch(True)


def _raise_scatter_elements(desc: Any, idx: Any, axis: int, n: int, wrap: bool, strict: bool, found: int) -> None:
    """The reference's DataIndexError when the kernel's flag says so (bit 0 an index out of range, bit 1 duplicates)."""
    if found & 1 or (strict and found & 2):
        coordinates = elements_coordinates(desc.indices_tensor.sizes, axis, idx.get(), n, wrap_negative=wrap)
        what = f"{desc.dml_name}.IndicesTensor"
        check_indices(what, coordinates, desc.input_tensor.sizes, [axis], scatter=True)
        refuse_duplicates(what, desc.input_tensor.sizes, coordinates)


# -- GATHER_ND, GATHER_ND1, SCATTER_ND ---------------------------------------------------


def meaningful(a: Any, count: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The last ``count`` sizes and element strides of a device view (the leading sizes are 1)."""
    strides = element_strides(a)
    return tuple(a.shape[a.ndim - count :]), tuple(strides[a.ndim - count :])


def bound_memory(desc: Any, inputs: Mapping[str, Any]) -> NDArray[Any]:
    """InputTensor's bound buffer on the host, as the reference's ``input_memory`` makes it (E160's flat reads)."""
    tensor = desc.input_tensor
    buffer = getattr(inputs, "buffers", {}).get("InputTensor")
    if buffer is None:
        return input_memory(tensor, inputs["InputTensor"].get())
    memory = np.zeros(tensor.bound_size_in_bytes // tensor.dtype.itemsize, dtype=tensor.dtype)
    host = buffer.get()
    k = min(memory.size, host.size)
    memory[:k] = host[:k]
    return memory


def run_gather_nd(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """GATHER_ND(1): one kernel for in-range tuples; the rare out-of-range call computed on the host.

    An index value outside its dimension makes the kernel set its flag; the call then
    raises the reference's DataIndexError (strict mode, or data of other than 32 bits), or
    reads DirectML's flat clamp (E160) from the host's copy of the bound buffer, as the
    reference does, and stores the whole result.
    """
    x, idx, y = inputs["InputTensor"], inputs["IndicesTensor"], outputs["OutputTensor"]
    batch = int(getattr(desc, "batch_dimension_count", 0))
    input_dims, indices_dims = int(desc.input_dimension_count), int(desc.indices_dimension_count)
    wrap = signed_indices_wrap(desc.indices_tensor.data_type, feature_level)
    data, xs = meaningful(x, input_dims)
    ishape, is_ = meaningful(idx, indices_dims)
    k = ishape[-1]
    grid, trailing = ishape[:-1], data[batch + k :]
    result = (*grid, *trailing)
    _, ys = meaningful(y, len(result))
    zeros = [0] * len(trailing)
    src = [xs[j] if j < batch else 0 for j in range(len(grid))] + list(xs[batch + k :])
    sizes, strides = collapse(result, [src, [*is_[:-1], *zeros], ys])
    count = math.prod(result)
    # a batch coordinate past the input's: always a flat read
    found = int(any(g > s for g, s in zip(grid[:batch], data[:batch])))
    if count and not found:
        offsets = offset_type(count, span(x), span(idx), span(y))
        name = f"gather_nd<{STORAGE[x.itemsize]}, {INDEX_TYPES[idx.dtype]}, {_c(wrap)}, {offsets}>"
        p = ix_params(
            count,
            sizes,
            strides,
            m=k,
            axis_stride=[0, is_[-1]],
            tuple_n=data[batch : batch + k],
            tuple_stride=xs[batch : batch + k],
        )
        flag = index_flag()
        ix_launch(name, count, 4, p)(x.data.ptr, idx.data.ptr, y.data.ptr, flag.data.ptr)
        found = int(flag.get()[0])
    if not found:
        return
    tensor = desc.input_tensor
    coordinates, _ = nd_coordinates(tensor, idx.get(), input_dims, indices_dims, batch, wrap_negative=wrap)
    what = f"{desc.dml_name}.IndicesTensor"
    d = tensor.dimension_count
    if strict:
        check_indices(what, coordinates, tensor.sizes, range(d - input_dims, d), scatter=False)
    if tensor.dtype.itemsize != 4:  # the reference refuses these reads (its _read)
        check_indices(what, coordinates, tensor.sizes, range(d), scatter=False)
    out = bound_memory(desc, inputs)[flat_addresses(tensor, coordinates)]
    y[...] = cupy_module().asarray(out.reshape(y.shape))


def run_scatter_nd(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """SCATTER_ND: each tuple claims its target (the last row-major one wins); then Output = Input, and the winners.

    The claim pass checks every index before anything is written, so a refused call
    (an index outside the input; in strict mode a duplicate target) leaves the output
    as it was.
    """
    x, idx, upd, y = inputs["InputTensor"], inputs["IndicesTensor"], inputs["UpdatesTensor"], outputs["OutputTensor"]
    tensor = desc.input_tensor
    d = tensor.dimension_count
    input_dims, indices_dims = int(desc.input_dimension_count), int(desc.indices_dimension_count)
    wrap = signed_indices_wrap(desc.indices_tensor.data_type, feature_level)
    data, _ = meaningful(x, input_dims)
    _, ys = meaningful(y, input_dims)
    ishape, is_ = meaningful(idx, indices_dims)
    k = ishape[-1]
    grid, trailing = list(ishape[:-1]), data[k:]
    # E165: an UpdatesTensor of more dimensions than both others writes its slab at coordinate 0
    cut = len(grid) + len(trailing) - max(d, desc.indices_tensor.dimension_count)
    grid[: max(cut, 0)] = [1] * max(cut, 0)
    shape = (*grid, *trailing)
    _, us = meaningful(upd, len(shape))
    table = [math.prod(data[t + 1 : k]) for t in range(k)]
    tuples = math.prod(grid)
    cp = cupy_module()
    winner = cp.full((math.prod(data[:k]),), -1, dtype=np.int32)
    flag = index_flag()
    index = f"{INDEX_TYPES[idx.dtype]}, {_c(wrap)}"
    tuple_facts: dict[str, Any] = {"m": k, "axis_stride": [is_[-1]], "tuple_n": data[:k], "tuple_stride": table}
    if tuples:
        claim_sizes, claim_strides = collapse(grid, [is_[:-1]])
        p = ix_params(tuples, claim_sizes, claim_strides, **tuple_facts)
        ix_launch(f"scatter_nd_claim<{index}>", tuples, 3, p)(idx.data.ptr, winner.data.ptr, flag.data.ptr)
    found = int(flag.get()[0])
    if found & 1 or (strict and found & 2):
        coordinates, _ = nd_coordinates(tensor, idx.get(), input_dims, indices_dims, 0, wrap_negative=wrap)
        if cut > 0:  # as the reference's slab
            coordinates = [c[(slice(0, 1),) * cut] for c in coordinates]
        what = f"{desc.dml_name}.IndicesTensor"
        check_indices(what, coordinates, tensor.sizes, range(d - input_dims, d), scatter=True)
        refuse_duplicates(what, tensor.sizes, coordinates)
    storage(y)[...] = storage(x)
    count = math.prod(shape)
    if not count:
        return
    numbers = [math.prod(grid[j + 1 :]) for j in range(len(grid))]
    zeros_t, zeros_g = [0] * len(trailing), [0] * len(grid)
    sizes, strides = collapse(shape, [us, [*is_[:-1], *zeros_t], [*zeros_g, *ys[k:]], [*numbers, *zeros_t]])
    offsets = offset_type(count, span(upd), span(idx), span(y), tuples)
    name = f"scatter_nd_write<{STORAGE[x.itemsize]}, {index}, {offsets}>"
    p = ix_params(count, sizes, strides, **tuple_facts, tuple_out=ys[:k])
    ix_launch(name, count, 4, p)(upd.data.ptr, idx.data.ptr, y.data.ptr, winner.data.ptr)


# -- ONE_HOT, REVERSE_SUBSEQUENCES -------------------------------------------------------


def run_one_hot(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """ONE_HOT: one pass over the output (positions as the semantics layer's ``one_hot_positions``)."""
    idx, values, y = inputs["IndicesTensor"], inputs["ValuesTensor"], outputs["OutputTensor"]
    if y.size == 0:
        return
    axis = int(desc.axis)
    n = y.shape[axis]
    wrap = signed_indices_wrap(desc.indices_tensor.data_type, feature_level)
    is_ = [0 if i == axis else s for i, s in enumerate(element_strides(idx))]
    sizes, strides = collapse(y.shape, [element_strides(y), is_, coordinate(y.ndim, axis)])
    vs = element_strides(values)
    off, on = (sum(c * s for c, s in zip(np.unravel_index(k, values.shape), vs)) for k in (0, 1))
    offsets = offset_type(y.size, span(idx), span(y))
    name = f"one_hot<{STORAGE[y.itemsize]}, {INDEX_TYPES[idx.dtype]}, {_c(wrap)}, {offsets}>"
    p = ix_params(y.size, sizes, strides, n=n, scalar=[int(off), int(on)])
    ix_launch(name, y.size, 3, p)(idx.data.ptr, values.data.ptr, y.data.ptr)


def run_reverse_subsequences(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """REVERSE_SUBSEQUENCES: a gather along Axis whose source is the semantics layer's ``reverse_sources``."""
    x, lengths, y = inputs["InputTensor"], inputs["SequenceLengthsTensor"], outputs["OutputTensor"]
    if y.size == 0:
        return
    axis = int(desc.axis)
    xs = element_strides(x)
    on_axis = [0 if i == axis else s for i, s in enumerate(xs)]
    ls = [0 if i == axis else s for i, s in enumerate(element_strides(lengths))]
    sizes, strides = collapse(y.shape, [on_axis, element_strides(y), ls, coordinate(y.ndim, axis)])
    offsets = offset_type(y.size, span(x), span(y), span(lengths))
    name = f"reverse_subsequences<{STORAGE[x.itemsize]}, {INDEX_TYPES[lengths.dtype]}, {offsets}>"
    p = ix_params(y.size, sizes, strides, n=x.shape[axis], axis_stride=[xs[axis]])
    ix_launch(name, y.size, 3, p)(x.data.ptr, lengths.data.ptr, y.data.ptr)


# -- DIAGONAL_MATRIX(1), NONZERO_COORDINATES ----------------------------------------------


def run_diagonal_matrix(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """DIAGONAL_MATRIX(1): Value where the semantics layer's ``diagonal_fill`` says, else InputTensor or 0."""
    y = outputs["OutputTensor"]
    if y.size == 0:
        return
    tensor = desc.output_tensor
    if desc.operator_type.name == "DIAGONAL_MATRIX":
        value = padding_value(desc.value, tensor.data_type)
        begin, end = int(desc.offset), int(desc.offset) + 1
    else:
        value = np.asarray(desc.value, dtype=tensor.dtype)
        begin, end = int(desc.diagonal_fill_begin), int(desc.diagonal_fill_end)
    x = inputs.get("InputTensor")
    rank = y.ndim
    top_x = [0] * (rank - 2) + [-1, 1]  # column - row
    xs = element_strides(x) if x is not None else (0,) * rank
    sizes, strides = collapse(y.shape, [element_strides(y), xs, top_x])
    offsets = offset_type(y.size, span(y), span(x) if x is not None else 0, y.shape[-1] + y.shape[-2])
    name = f"diagonal_matrix<{STORAGE[y.itemsize]}, {_c(x is not None)}, {offsets}>"
    p = ix_params(y.size, sizes, strides, scalar=[bits_of(value, tensor.dtype), begin, end])
    ix_launch(name, y.size, 2, p)(x.data.ptr if x is not None else y.data.ptr, y.data.ptr)


def run_nonzero_coordinates(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """NONZERO_COORDINATES: CuPy's ``argwhere`` (a scan; row-major order, as the reference's).

    Nonzero is ``x != 0`` (both zeros zero, NaN nonzero), tested on the bits: CuPy compiles
    its kernels with flush-to-zero, so a float comparison would count a subnormal as zero.
    The rows past the count are zeros, as the reference writes them.
    """
    cp = cupy_module()
    x = inputs["InputTensor"]
    count, coordinates = outputs["OutputCountTensor"], outputs["OutputCoordinatesTensor"]
    m, n = coordinates.shape[-2], coordinates.shape[-1]
    if x.dtype.kind == "f":  # every bit but the sign: +0 and -0 are the zeros
        bits = x.view(f"u{x.dtype.itemsize}")
        nonzero = (bits & bits.dtype.type(np.iinfo(bits.dtype).max >> 1)) != 0
    else:
        nonzero = x != 0
    found = cp.argwhere(nonzero)[:, x.ndim - n :].astype(np.uint32)
    table = cp.zeros((m, n), dtype=np.uint32)
    table[: len(found)] = found
    coordinates[...] = table.reshape(coordinates.shape)
    count[...] = len(found)


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


def run_tile(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """TILE: the separable gather, or its copy program where every Repeats is 1 (a copy).

    The gather is one output-ordered pass; ``_table_copy.TILE_AS_GATHER`` off runs the copy
    program always (a benchmark variant).
    """
    gather = _table_copy.TILE_AS_GATHER and any(int(r) != 1 for r in desc.repeats)
    run = run_separable_gather if gather else run_copy_program
    run(desc, inputs, outputs, feature_level=feature_level, strict=strict)


OPERATORS: dict[str, Callable[..., Any]] = {
    "GATHER": run_gather,
    "SLICE1": run_slice1,
    "CAST": run_elementwise,
    "GATHER_ELEMENTS": run_gather_elements,
    "GATHER_ND": run_gather_nd,
    "GATHER_ND1": run_gather_nd,
    "SCATTER_ELEMENTS": run_scatter_elements,
    "SCATTER_ND": run_scatter_nd,
    "ONE_HOT": run_one_hot,
    "REVERSE_SUBSEQUENCES": run_reverse_subsequences,
    "DIAGONAL_MATRIX": run_diagonal_matrix,
    "DIAGONAL_MATRIX1": run_diagonal_matrix,
    "NONZERO_COORDINATES": run_nonzero_coordinates,
    "FILL_VALUE_SEQUENCE": run_fill_value_sequence,
    **{name: run_copy_program for name in PROGRAMS},
    **{name: run_separable_gather for name in GATHERS},  # these run as gathers, not their copy programs
    "TILE": run_tile,  # a gather, but a copy where nothing repeats
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
