"""The element-wise and activation family on the CUDA backend: one generated kernel family.

Every operator is a small device functor of ``kernels/elementwise.cu`` (``OP_TABLE``
maps the operator to it and says which data types it takes); a launch specialises the
kernel template by NVRTC name expression per functor, fused activation, ScaleBias, data
types and layout:

* ``ew_contig``: every operand one contiguous run (element stride 1) or one broadcast
  value (stride 0); 16-byte vector loads and stores when the pointers are aligned,
  marked streaming (evict-first) for FLOAT16 calls larger than the L2 cache (CONTIG_HINTS);
  such calls of the two-input arithmetic held to 6 resident blocks per multiprocessor
  (CONTIG_RESIDENT);
* ``ew_strided``: any strides (0 for broadcasting, negative), the dimensions collapsed
  first (up to 8), 32-bit offsets where they fit, 16-byte vectors along the innermost
  dimension where every operand's rows allow it (STRIDED_VECTORS).
* ``ew_rows2d``: the layouts that collapse to two dimensions (row and column broadcasts,
  padded rows, transposes), ROWS_2D vectors a thread, one unsigned division per vector.

FLOAT16 ADD, SUBTRACT and MULTIPLY compute two halves per instruction (HALF_PAIRS); float
IDENTITY, ABS and NEGATE work on the storage bits (SIGN_BITS: NaN payloads kept). A large
plain IDENTITY between two dense runs of one data type is the driver's device-to-device copy,
as PyTorch's ``copy_`` (DRIVER_COPY_MIN_BYTES), never recorded for replay.

SOFTMAX / SOFTMAX1 / LOG_SOFTMAX(1) / HARDMAX(1) use a row kernel (``ew_rows``): the
reduced axes are moved last and collapsed into rows of contiguous elements (a copy
first when the layout does not allow that), one thread block per row, or one warp per
row of up to 1024 elements (ROW_WARP_MAX), or a block of 1024 threads per row of up to
16K elements (ROW_WIDE_BLOCK), the row in registers. SOFTMAX and LOG_SOFTMAX rows longer
than that (or too few to fill the GPU) run in chunks of ROW_CHUNK elements, a block each
(``ew_row_chunk_stats``, ``ew_row_chunk_combine``, ``ew_row_chunk_apply``; ROW_CHUNKS):
each chunk's maximum and float64 sum, then each row's, then the result. :func:`row_kernel`
says which kernel a shape gets.

Numerics follow the NumPy reference (``reference/elementwise.py``): exactly rounded
operators give the reference's bits (float64 formulas rounded once, DirectML's float32
steps and 32-bit integer rules); transcendental ones use float32 libdevice functions
(float64 for FLOAT64) within the family's tolerance. What the reference refuses (float
moduli, 64-bit integers where DirectML's 32-bit rules are not defined) is refused here
too, with UnsupportedError naming the backends that run it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..descs._elementwise_formulas import quantized_add_clamps_as_float
from ..descs.elementwise import QUANTIZATION_PARAMETERS, reduction_axes
from ..enums import FeatureLevel
from ..errors import UnsupportedError
from ._copy import C_TYPES, PlanCache
from ._plan import collapse, grid_for, max_abs_offset
from ._runtime import (
    PackedLaunch,
    cupy_module,
    current_device,
    element_strides,
    get_kernel,
    note_unrecorded_work,
    padded,
    params,
)

SOURCE = "elementwise.cu"
BLOCK = 256  # EW_BLOCK (the strided kernel)
UNROLL = 4  # EW_UNROLL
CONTIG_SHAPE = (256, 1)
"""Threads per block and 16-byte vectors per thread of the contiguous kernel. Run 21 on
an H100 (docs/performance.md) timed five shapes: one vector per thread is as fast as
four on copies and binary operators (FLOAT32 IDENTITY 182 against 184 us, ADD 269
against 270) and faster on FLOAT16 transcendental ones (SIGMOID 94 against 101 us, GELU
102 against 110), whose eight halves per vector are already work enough per thread."""
CONTIG_HINTS: dict[int, int] = {2: 3}
"""Cache hints of the contiguous kernel's vector accesses (ew_contig's H), by the widest
operand's element size in bytes, in calls whose operands (inputs read plus output written)
exceed STREAM_MIN_BYTES: bit 0 streaming loads, bit 1 streaming stores (ld/st.global.cs,
evict-first lines); sizes not listed, and smaller calls, keep plain accesses (an output the
next operator reads may then stay in L2). Run W on H100s (docs/performance.md), 64M
elements, interleaved with the plain kernel in two calls on two machines: FLOAT16 IDENTITY,
ABS, EXP, SIGMOID 0.4-0.9 % faster with both hints (the ratio's interquartile range above
1 in one call for all four, in the other for SIGMOID), no FLOAT16 workload slower beyond
its range; FLOAT32 0.0-0.3 % faster in one call, GELU 0.6 % slower in the other, so FLOAT32
stays plain. Streaming loads alone were 0.9-2.7 % slower, streaming stores alone no faster."""
STREAM_MIN_BYTES: int | None = None
"""Operand bytes above which CONTIG_HINTS and CONTIG_RESIDENT apply; None: the device's L2 cache size."""
CONTIG_RESIDENT: dict[tuple[int, int], int] = {(2, 2): 6, (4, 2): 6}
"""Resident blocks per multiprocessor the contiguous kernel is held to, by (widest operand's
element size in bytes, inputs), for the functors of RESIDENT_FUNCTORS in calls whose operands
exceed STREAM_MIN_BYTES: each block reserves dynamic shared memory that nothing reads
(ew_contig's R), an occupancy cap; absent: no cap. Run X on an H100 (docs/performance.md),
64M elements, interleaved with the uncapped kernel and torch: at most 6 blocks of 256 (75 %
of the threads; torch's vectorized kernel is held to the same by its registers) made FLOAT32
ADD, MULTIPLY, MAX and ADD1 + RELU 0.9-1.3 % faster in two calls, the FLOAT16 ones 1.4-1.7 % in
one call and 0.4-0.5 % in the other (a tie with torch; single calls after an idle GPU were 1.6 %
slower capped at FLOAT16); 5 blocks the same, 4 from 1.0 % slower to 0.4 % faster. On
one-input operators the cap was 0.6-7.3 % slower, so they keep every block. A grid-stride
form over a fixed grid of 4-8 blocks per multiprocessor was 5-16 % slower (run X; removed)."""
DRIVER_COPY_MIN_BYTES: int | None = None
"""IDENTITY calls (ELEMENT_WISE_IDENTITY, ACTIVATION_IDENTITY) without ScaleBias or a fused
activation, whose input and output have one data type and collapse to one dense run each
(stride 1) with no partial overlap, go through the driver's device-to-device copy
(``cudaMemcpyAsync`` on CuPy's current stream, PyTorch's ``copy_`` between such tensors) when
their operands (bytes read plus written) reach this; None: the device's L2 cache size. A byte
copy keeps every bit (NaN payloads, -0). Smaller calls stay on the kernel, so that they are
recorded and replayed (``_fastlaunch``); a driver copy is never recorded (it counts as
unrecorded work). Run Z on an H100 (docs/performance.md), 64M elements: FLOAT32 1.000x torch's
``copy_`` in two calls against the kernel's 0.999x; FLOAT16 1.000-1.001x, 0.5 % slower than its
streaming kernel, which then turned every FLOAT16 NaN into 0x7fff (the kernel keeps the bits
too since run N: SIGN_BITS)."""
IDENTITIES = frozenset({"ELEMENT_WISE_IDENTITY", "ACTIVATION_IDENTITY"})
RESIDENT_FUNCTORS: frozenset[str] | None = frozenset(
    {"OpAdd", "OpAddH2", "OpSubtract", "OpSubtractH2", "OpMultiply", "OpMultiplyH2", "OpMax", "OpMin"}
)
"""The functors CONTIG_RESIDENT caps (with no fused activation, or RELU): a few instructions
an element, so the call waits on memory alone; transcendental work hides its latency with
more warps (FLOAT16 SIGMOID was 7.3 % slower capped). None: every functor."""
ROW_BLOCK = 256  # ROW_BLOCK
ROW_WARP_MAX = 1024
"""Rows up to this long run one warp per row (ew_rows_warp); longer ones one block per row
(0 turns the warp kernel off). Run 21: SOFTMAX1 over (65536, 1024) FLOAT32 rows took
189 us with a warp per row against 197 us with a block per row."""
ROW_WIDE_BLOCK = 1024
ROW_WIDE_ROWS: int | None = None
"""Rows of 16 * ROW_BLOCK to 16 * ROW_WIDE_BLOCK elements run a block of ROW_WIDE_BLOCK threads
a row, the row in registers (read once), where there are at least this many rows (None: one
per multiprocessor). FLOAT32 SOFTMAX1 on an H100 (docs/performance.md): 4096 rows of 8192
95.8 us (95 % of the copy rate; in chunks 180.9, a block of 256 re-reading the row 135.7),
8192 rows of 16384 365.7 us (in chunks 665.5, re-reading 779.6)."""
ROW_CHUNK = 16 * ROW_BLOCK  # ROW_CHUNK
ROW_CHUNKS = True
"""SOFTMAX / LOG_SOFTMAX rows too long for registers (or too few for the wide block) run in
chunks of ROW_CHUNK elements, a block each (False: a block of ROW_BLOCK a row, reading the row
three times). H100, FLOAT32 SOFTMAX1 (docs/performance.md, runs AA-AC): 1024 rows of 65536
333 us in chunks against 416 re-reading, 64 rows of 1M 330 against 2960; re-reading won only
where its rows' three reads hit the L2 cache (4096 rows of 8192: 135.7 against 181.8 us),
rows that the wide block now takes (95.8 us)."""
STRIDED_VECTORS = True
"""Vectors along the innermost dimension of strided layouts (row and column broadcasts,
padded rows). Run 21: a FLOAT16 ADD of (8192, 8192) + (1, 8192) took 105 us with them
against 152 us element by element (FLOAT32 185 against 184 us)."""
ROWS_2D = 1
"""Vectors per thread of the two-dimensional kernel (ew_rows2d), which runs every layout
that collapses to two dimensions; 0 sends those to ew_strided. Run V on an H100
(docs/performance.md): a FLOAT16 (8192, 8192) + (1, 8192) ADD took 94.4 us at 1 vector a
thread, 95.8 at 2, 103.3 at 4, against 105.3 in ew_strided (FLOAT32 183.2 against 184.2);
a column broadcast 96.0 against 103.7, a transposed operand 546 against 578 (FLOAT16)."""
HALF_PAIRS = True
"""FLOAT16 ADD / SUBTRACT / MULTIPLY (no fused activation) two halves per instruction (the
*H2 functors); the same bits as the float32 path. Run V: no difference beyond noise in the
contiguous kernel (ADD 135.8 against 137.7 us, MULTIPLY 135.6 against 135.4) or in
ew_rows2d (94.4 against 94.5); ew_strided 103.2 against 105.3."""
PAIRED = {"OpAdd": "OpAddH2", "OpSubtract": "OpSubtractH2", "OpMultiply": "OpMultiplyH2"}
SIGN_BITS = {"OpIdentity": "OpIdentityBits", "OpAbs": "OpAbsBits", "OpNegate": "OpNegateBits"}
"""IDENTITY (both operators), ABS and NEGATE of a float type into the same type, without
ScaleBias or a fused activation: functors on the storage bits (copy, sign bit cleared, sign
bit flipped), so that every NaN keeps its payload, a signalling one too, as DirectML and the
reference do (errata E197). The float path turned every FLOAT16 NaN into 0x7fff (its store
converts from float32). With ScaleBias the value is computed, and quieted, as before."""
MAX_DIMS = 8
FLOATS = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))


@dataclass(frozen=True)
class OpSpec:
    """How one operator runs: its functor and the input data types it takes.

    ``ints``: "all" (every integer type), "32" (8/16/32-bit: DirectML's 32-bit register
    rules), "" (floats only). ``floats``: False where only integers run (the moduli).
    ``attrs``: desc attributes passed as the functor's float parameters ``q``.
    """

    functor: str
    ints: str = ""
    floats: bool = True
    attrs: tuple[str, ...] = ()


def _ops() -> dict[str, OpSpec]:
    table: dict[str, OpSpec] = {
        "ELEMENT_WISE_IDENTITY": OpSpec("OpIdentity", "all"),
        "ELEMENT_WISE_ABS": OpSpec("OpAbs", "all"),
        "ELEMENT_WISE_NEGATE": OpSpec("OpNegate", "all"),
        "ELEMENT_WISE_RECIP": OpSpec("OpRecip"),
        "ELEMENT_WISE_ROUND": OpSpec("OpRound"),
        "ELEMENT_WISE_SIGN": OpSpec("OpSign", "all"),
        "ELEMENT_WISE_IS_NAN": OpSpec("OpIsNan"),
        "ELEMENT_WISE_IS_INFINITY": OpSpec("OpIsInf"),
        "ELEMENT_WISE_CLIP": OpSpec("OpClip", "32"),
        "ELEMENT_WISE_CLIP1": OpSpec("OpClip", "32"),
        "ELEMENT_WISE_CLIP_GRAD": OpSpec("OpClipGrad", "32"),
        "ELEMENT_WISE_CLIP_GRAD1": OpSpec("OpClipGrad", "32"),
        "ELEMENT_WISE_THRESHOLD": OpSpec("OpThreshold", attrs=("min",)),
        "ELEMENT_WISE_CONSTANT_POW": OpSpec("OpConstantPow", attrs=("exponent",)),
        "ELEMENT_WISE_POW": OpSpec("OpPow"),
        "ELEMENT_WISE_ADD": OpSpec("OpAdd", "all"),
        "ELEMENT_WISE_ADD1": OpSpec("OpAdd", "all"),
        "ELEMENT_WISE_SUBTRACT": OpSpec("OpSubtract", "all"),
        "ELEMENT_WISE_MULTIPLY": OpSpec("OpMultiply", "all"),
        "ELEMENT_WISE_DIFFERENCE_SQUARE": OpSpec("OpDifferenceSquare", "all"),
        "ELEMENT_WISE_DIVIDE": OpSpec("OpDivide", "32"),
        "ELEMENT_WISE_MODULUS_TRUNCATE": OpSpec("OpModulusTruncate", "32", floats=False),
        "ELEMENT_WISE_MODULUS_FLOOR": OpSpec("OpModulusFloor", "32", floats=False),
        "ELEMENT_WISE_MAX": OpSpec("OpMax", "all"),
        "ELEMENT_WISE_MIN": OpSpec("OpMin", "all"),
        "ELEMENT_WISE_MEAN": OpSpec("OpMean", "32"),
        "ELEMENT_WISE_ATAN_YX": OpSpec("OpAtanYx"),
        "ELEMENT_WISE_LOGICAL_EQUALS": OpSpec("OpEquals", "all"),
        "ELEMENT_WISE_LOGICAL_GREATER_THAN": OpSpec("OpGreater", "all"),
        "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": OpSpec("OpGreaterEqual", "all"),
        "ELEMENT_WISE_LOGICAL_LESS_THAN": OpSpec("OpLess", "all"),
        "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": OpSpec("OpLessEqual", "all"),
        "ELEMENT_WISE_LOGICAL_AND": OpSpec("OpLogicalAnd", "all"),
        "ELEMENT_WISE_LOGICAL_OR": OpSpec("OpLogicalOr", "all"),
        "ELEMENT_WISE_LOGICAL_XOR": OpSpec("OpLogicalXor", "all"),
        "ELEMENT_WISE_LOGICAL_NOT": OpSpec("OpLogicalNot", "all"),
        "ELEMENT_WISE_BIT_AND": OpSpec("OpBitAnd", "all"),
        "ELEMENT_WISE_BIT_OR": OpSpec("OpBitOr", "all"),
        "ELEMENT_WISE_BIT_XOR": OpSpec("OpBitXor", "all"),
        "ELEMENT_WISE_BIT_NOT": OpSpec("OpBitNot", "all"),
        "ELEMENT_WISE_BIT_COUNT": OpSpec("OpBitCount", "all"),
        "ELEMENT_WISE_BIT_SHIFT_LEFT": OpSpec("OpShiftLeft", "32", floats=False),
        "ELEMENT_WISE_BIT_SHIFT_RIGHT": OpSpec("OpShiftRight", "32", floats=False),
        "ELEMENT_WISE_IF": OpSpec("OpIf", "all"),
        # the zero point is optional: without it the functor of that name + "NoZeroPoint" (one input fewer)
        "ELEMENT_WISE_QUANTIZE_LINEAR": OpSpec("OpQuantizeLinear", "all"),
        "ELEMENT_WISE_DEQUANTIZE_LINEAR": OpSpec("OpDequantizeLinear", "all"),
        # A and B; the six scale and zero-point tensors go through a table (run_quantized_linear_add)
        "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": OpSpec("OpQuantizedLinearAdd", "all", floats=False),
        "ACTIVATION_PARAMETERIZED_RELU": OpSpec("OpParameterizedRelu"),
        "ACTIVATION_RELU_GRAD": OpSpec("OpReluGrad", "all"),
    }
    for name in "ACOS ACOSH ASIN ASINH ATAN ATANH COS COSH SIN SINH TAN TANH EXP LOG SQRT ERF FLOOR CEIL".split():
        table[f"ELEMENT_WISE_{name}"] = OpSpec("Op" + name.capitalize())
    table.update({name: OpSpec(functor, attrs=attrs) for name, (functor, attrs) in ACTIVATIONS.items()})
    return table


ACTIVATIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ACTIVATION_IDENTITY": ("OpIdentity", ()),
    "ACTIVATION_RELU": ("ActRelu", ()),
    "ACTIVATION_LEAKY_RELU": ("ActLeakyRelu", ("alpha",)),
    "ACTIVATION_ELU": ("ActElu", ("alpha",)),
    "ACTIVATION_CELU": ("ActCelu", ("alpha",)),
    "ACTIVATION_SCALED_ELU": ("ActScaledElu", ("alpha", "gamma")),
    "ACTIVATION_SIGMOID": ("ActSigmoid", ()),
    "ACTIVATION_HARD_SIGMOID": ("ActHardSigmoid", ("alpha", "beta")),
    "ACTIVATION_HARD_SWISH": ("ActHardSwish", ("alpha", "beta")),
    "ACTIVATION_SWISH": ("ActSwish", ("sigmoid_input_scale",)),
    "ACTIVATION_TANH": ("OpTanh", ()),
    "ACTIVATION_SCALED_TANH": ("ActScaledTanh", ("alpha", "beta")),
    "ACTIVATION_SOFTPLUS": ("ActSoftplus", ("steepness",)),
    "ACTIVATION_PARAMETRIC_SOFTPLUS": ("ActParametricSoftplus", ("alpha", "beta")),
    "ACTIVATION_SOFTSIGN": ("ActSoftsign", ()),
    "ACTIVATION_LINEAR": ("ActLinear", ("alpha", "beta")),
    "ACTIVATION_THRESHOLDED_RELU": ("ActThresholdedRelu", ("alpha",)),
    "ACTIVATION_SHRINK": ("ActShrink", ("bias", "threshold")),
    "ACTIVATION_GELU": ("ActGelu", ()),
}
"""Activations of one input: functor and float attributes (also as FusedActivation, RELU aside)."""

OP_TABLE: dict[str, OpSpec] = _ops()
"""Operator -> its functor in kernels/elementwise.cu and the data types it takes."""

QUANTIZATION = frozenset({"ELEMENT_WISE_QUANTIZE_LINEAR", "ELEMENT_WISE_DEQUANTIZE_LINEAR"})
"""Operators whose ZeroPointTensor is optional (a functor without it)."""

BORROWED: dict[str, OpSpec] = {"CAST": OpSpec("OpCast", "all")}
"""Other families' operators that run on this kernel family (data_movement's CAST, through
``cuda/data_movement.py``): OpCastToFloat or OpCastToInt by the output's type."""


def spec_of(name: str) -> OpSpec:
    """The functor spec of an operator of this family or of ``BORROWED``."""
    return OP_TABLE.get(name) or BORROWED[name]


ROW_KINDS = {
    "ACTIVATION_SOFTMAX": 0,
    "ACTIVATION_SOFTMAX1": 0,
    "ACTIVATION_LOG_SOFTMAX": 1,
    "ACTIVATION_LOG_SOFTMAX1": 1,
    "ACTIVATION_HARDMAX": 2,
    "ACTIVATION_HARDMAX1": 2,
}
"""The operators of the row kernel and their KIND."""

_ROUNDING = {"HALVES_TO_NEAREST_EVEN": 0, "TOWARD_ZERO": 1, "TOWARD_INFINITY": 2}
_INFINITY = {"EITHER": 0, "POSITIVE": 1, "NEGATIVE": 2}


def _unsupported(desc: Any, what: str) -> UnsupportedError:
    runners = ", ".join(b for b in ("numpy", "directml") if b in getattr(desc, "backends", ("numpy", "directml")))
    return UnsupportedError(
        f"{desc.dml_name}: the cuda backend does not implement {desc.operator_type.name} {what}; "
        f"it runs on: {runners or 'directml'}"
    )


def _check_types(desc: Any, spec: OpSpec, dtypes: Sequence[np.dtype[Any]], scale_bias: bool) -> None:
    """UnsupportedError for the data types the operator's functor does not take."""
    name = desc.operator_type.name
    for i, dt in enumerate(dtypes):
        if scale_bias and spec.ints:
            continue  # ScaleBias hands the functor floats (float-only operators refuse integers regardless)
        if name == "ELEMENT_WISE_IF" and i == 0:
            continue  # the condition
        if dt in FLOATS:
            if not spec.floats:
                raise _unsupported(desc, f"for {dt.name.upper()} inputs")
        elif dt.kind in "iub":
            if not spec.ints or (spec.ints == "32" and dt.itemsize == 8):
                raise _unsupported(desc, f"for {dt.name.upper()} inputs")
        else:
            raise _unsupported(desc, f"for {dt.name} inputs")


def _bound(value: Any, dtype: np.dtype[Any]) -> int:
    """An integer input's CLIP / CLIP_GRAD bound, converted as DirectML converts it.

    A float bound is truncated toward zero and saturated to the type; NaN becomes 0, or
    INT32_MIN for INT32 (the reference's ``_bound``).
    """
    if isinstance(value, (float, np.floating)):
        info = np.iinfo(dtype)
        if math.isnan(value):
            return int(info.min) if dtype == np.int32 else 0
        if not math.isfinite(value):
            return int(info.min if value < 0 else info.max)
        return int(min(max(int(value), int(info.min)), int(info.max)))
    return int(value)


def _float_attrs(source: Any, attrs: Sequence[str]) -> list[float]:
    return [float(getattr(source, a)) for a in attrs]


def op_parameters(desc: Any, dtypes: Sequence[np.dtype[Any]]) -> tuple[list[float], list[int], list[float]]:
    """The functor's float parameters ``q``, integer ones ``k`` and ScaleBias ``[scale, bias]``."""
    name = desc.operator_type.name
    spec = spec_of(name)
    q = _float_attrs(desc, spec.attrs)
    k: list[int] = []
    if name == "ELEMENT_WISE_ROUND":
        q = [float(_ROUNDING[desc.rounding_mode.name])]
    elif name == "ELEMENT_WISE_IS_INFINITY":
        q = [float(_INFINITY[desc.infinity_mode.name])]
    elif name == "CAST" and desc.output_tensor.dtype.kind in "iu":
        out = desc.output_tensor.dtype
        info = np.iinfo(out)
        # [Min, Max (as its bit pattern), target signed, through a 32-bit register]
        width32 = max(out.itemsize, dtypes[0].itemsize) < 8
        k = [int(info.min), int(np.int64(np.uint64(info.max))), int(info.min < 0), int(width32)]
    elif name == "ELEMENT_WISE_QUANTIZE_LINEAR":
        info = np.iinfo(desc.output_tensor.data_type.numpy_dtype)
        k = [int(info.min), int(info.max)]
    elif name == "ELEMENT_WISE_QUANTIZED_LINEAR_ADD":  # k[3], the scalar table's address, is per call
        info = np.iinfo(desc.output_tensor.data_type.numpy_dtype)
        k = [int(info.min), int(info.max), int(quantized_add_clamps_as_float(desc))]
    elif name in ("ELEMENT_WISE_CLIP", "ELEMENT_WISE_CLIP1", "ELEMENT_WISE_CLIP_GRAD", "ELEMENT_WISE_CLIP_GRAD1"):
        q = [float(desc.min), float(desc.max)]
        if dtypes[0].kind in "iu":
            k = [_bound(desc.min, dtypes[0]), _bound(desc.max, dtypes[0])]
    sb = getattr(desc, "scale_bias", None)  # applied to every input
    scale_bias = [float(np.float32(sb.scale)), float(np.float32(sb.bias))] if sb is not None else [1.0, 0.0]
    return q, k, scale_bias


def fused_functor(desc: Any, dtypes: Sequence[np.dtype[Any]]) -> tuple[str, list[float]]:
    """``(functor, its parameters)`` of the desc's FusedActivation, ``("NoFused", [])`` without one."""
    fused = getattr(desc, "fused_activation", None)
    if fused is None:
        return "NoFused", []
    name = fused.spec.name
    if dtypes[0] not in FLOATS or (name not in ACTIVATIONS):
        raise _unsupported(desc, f"with a fused {name} on {dtypes[0].name.upper()}")
    if name == "ACTIVATION_RELU":
        return "FusedRelu", []
    functor, attrs = ACTIVATIONS[name]
    return functor, _float_attrs(fused, attrs)


# -- layout ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """A collapsed element-wise iteration: sizes and per-operand element strides (output last)."""

    sizes: tuple[int, ...]
    strides: tuple[tuple[int, ...], ...]

    @property
    def count(self) -> int:
        """Elements of the output."""
        return math.prod(self.sizes)

    @property
    def contiguous(self) -> bool:
        """One dimension, the output dense and every input dense or one broadcast value."""
        if len(self.sizes) != 1:
            return False
        *ins, out = self.strides
        return out[0] == 1 and all(s[0] in (0, 1) for s in ins)

    def fits_int32(self) -> bool:
        """Offsets and the grid-stride counter fit a signed 32-bit int."""
        limit = max((max_abs_offset(self.sizes, s) for s in self.strides), default=0)
        return max(limit, 2 * self.count + 2**21) < 2**31


def layout(sizes: Sequence[int], strides: Sequence[Sequence[int]]) -> Layout:
    """Collapse the iteration space of an element-wise launch (see ``_plan.collapse``)."""
    c_sizes, c_strides = collapse(sizes, strides)
    if 0 in sizes:
        return Layout((0,), tuple((1,) for _ in strides))
    if not c_sizes:  # a single element
        return Layout((1,), tuple((1,) for _ in strides))
    return Layout(c_sizes, c_strides)


def vector_width(itemsizes: Sequence[int], pointers: Sequence[int], dense: Sequence[bool]) -> int:
    """Elements per vector access: 16 bytes of the widest operand, if every dense pointer is aligned."""
    vec = max(1, 16 // max(itemsizes))
    while vec > 1:
        if all(not d or p % (vec * size) == 0 for p, size, d in zip(pointers, itemsizes, dense)):
            return vec
        vec //= 2
    return 1


def ew_params(lay: Layout, q: Sequence[float], k: Sequence[int], f: Sequence[float], sb: Sequence[float]) -> np.void:
    """The EwParams struct (kernels/elementwise.cu)."""
    n = len(lay.sizes)
    if n > MAX_DIMS:
        raise ValueError(f"too many dimensions after collapsing: {n}")
    pad = MAX_DIMS - n
    ins = list(lay.strides[:-1]) + [lay.strides[0]] * (4 - len(lay.strides))
    return params(
        ("count", "i8", lay.count),
        ("size", "i8", [*lay.sizes, *([1] * pad)]),
        ("ostride", "i8", padded(lay.strides[-1], MAX_DIMS)),
        ("s0", "i8", padded(ins[0], MAX_DIMS)),
        ("s1", "i8", padded(ins[1], MAX_DIMS)),
        ("s2", "i8", padded(ins[2], MAX_DIMS)),
        ("k", "i8", padded(k, 4)),
        ("q", "f8", [*q, *([0.0] * (8 - len(q)))]),
        ("f", "f8", [*f, *([0.0] * (8 - len(f)))]),
        ("sb", "f8", list(sb)),
    )


# -- the element-wise launch --------------------------------------------------------------------

_PLANS = PlanCache()


class Plan:
    """The kernel specialisation of one desc for one set of strides (per alignment)."""

    def __init__(
        self, desc: Any, dtypes: Sequence[np.dtype[Any]], out_dtype: np.dtype[Any], lay: Layout, table: int = 0
    ) -> None:
        """``table``: the device address of a functor's parameter table (k[3]; QUANTIZED_LINEAR_ADD's)."""
        self.desc = desc
        name = desc.operator_type.name
        spec = spec_of(name)
        has_sb = getattr(desc, "scale_bias", None) is not None
        _check_types(desc, spec, dtypes, has_sb)
        q, k, sb = op_parameters(desc, dtypes)
        if table:
            k = [*padded(k, 3), table]
        fused, f = fused_functor(desc, dtypes)
        self.layout = lay
        self.arity = len(dtypes)
        types = [C_TYPES[d] for d in dtypes]
        types += [types[0]] * (3 - len(types))
        functor = spec.functor
        if name in QUANTIZATION and len(dtypes) == 2:
            functor += "NoZeroPoint"
        elif name == "CAST":
            functor += "ToFloat" if out_dtype in FLOATS else "ToInt"
        elif (
            HALF_PAIRS
            and functor in PAIRED
            and not has_sb
            and fused == "NoFused"
            and all(d == np.float16 for d in (*dtypes, out_dtype))
        ):
            functor = PAIRED[functor]
        elif (
            functor in SIGN_BITS
            and not has_sb
            and fused == "NoFused"
            and dtypes[0] in FLOATS
            and dtypes[0] == out_dtype
        ):
            functor = SIGN_BITS[functor]
        self.functor, self.fused = functor, fused
        self.head = f"{functor}, {fused}, {'true' if has_sb else 'false'}, {', '.join(types)}, {C_TYPES[out_dtype]}"
        self.itemsizes = [d.itemsize for d in dtypes] + [out_dtype.itemsize]
        self.struct = ew_params(lay, q, k, f, sb)
        # bytes of a plain copy (see DRIVER_COPY_MIN_BYTES), 0 where the call is no such copy
        self.copy_bytes = 0
        if (
            name in IDENTITIES
            and not has_sb
            and fused == "NoFused"
            and len(dtypes) == 1
            and dtypes[0] == out_dtype
            and lay.contiguous
            and lay.strides[0] == (1,)
        ):
            self.copy_bytes = lay.count * out_dtype.itemsize
        self._launches: dict[tuple[int, ...], PackedLaunch] = {}

    def launch_for(self, pointers: Sequence[int]) -> PackedLaunch:
        """The launch for these operand pointers (inputs, output): alignment picks the vector width."""
        key = tuple([p & 15 for p in pointers])
        found = self._launches.get(key)
        if found is not None:
            return found
        lay = self.layout
        dense = [s[-1] != 0 for s in lay.strides]
        shared = 0
        if lay.contiguous:
            vec = vector_width(self.itemsizes, pointers, dense)
            block, unroll = CONTIG_SHAPE
            sizes = [size for size, d in zip(self.itemsizes, dense) if d]
            widest = max(sizes, default=0)
            hints = contig_hints(lay.count * sum(sizes), widest)
            blocks = grid_for(max(1, lay.count // vec), block, unroll)
            resident = contig_resident(lay.count * sum(sizes), widest, self.arity, self.functor, self.fused)
            if resident:
                fn = get_kernel(SOURCE, f"ew_contig<{self.head}, {vec}, {block}, {unroll}, {hints}, {resident}>")
                shared = _reserve_shared(fn, resident)
            else:
                tail = f", {hints}" if hints else ""  # H = 0 is the template's default
                fn = get_kernel(SOURCE, f"ew_contig<{self.head}, {vec}, {block}, {unroll}{tail}>")
        else:
            block = BLOCK
            vec = 1
            inner = lay.sizes[-1]
            if STRIDED_VECTORS and all(s[-1] in (0, 1) for s in lay.strides) and lay.strides[-1][-1] == 1:
                # vectors along the innermost dimension: every dense operand's rows aligned
                vec = vector_width(self.itemsizes, pointers, dense)
                while vec > 1 and (
                    inner % vec or any(d and any(x % vec for x in s[:-1]) for s, d in zip(lay.strides, dense))
                ):
                    vec //= 2
            itype = "int" if lay.fits_int32() else "long long"
            if ROWS_2D and len(lay.sizes) == 2:
                fn = get_kernel(SOURCE, f"ew_rows2d<{self.head}, {itype}, {vec}, {ROWS_2D}>")
                blocks = grid_for(lay.count // vec, BLOCK, ROWS_2D, 1 << 20)
            else:
                fn = get_kernel(SOURCE, f"ew_strided<{self.head}, {len(lay.sizes)}, {itype}, {vec}>")
                blocks = grid_for(lay.count // vec, BLOCK, UNROLL, 1 << 20)
        found = self._launches[key] = PackedLaunch(fn, blocks, block, 4, self.struct, shared=shared)
        return found


def _reserve_shared(fn: Any, resident: int) -> int:
    """Dynamic shared memory per block (bytes, a multiple of 1 KiB) for at most ``resident`` blocks a multiprocessor.

    ``fn``'s carveout is set to the most shared memory, so the count does not hang on the
    driver's choice of carveout.
    """
    _, per_sm, reserved, _ = _device_numbers(current_device())
    shared = max(0, (per_sm // resident - reserved) // 1024 * 1024)
    cupy_module()
    from cupy_backends.cuda.api import driver

    driver.funcSetAttribute(int(fn.ptr), 9, 100)  # CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: 100 %
    if shared > 48 * 1024:
        driver.funcSetAttribute(int(fn.ptr), 8, shared)  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    return shared


@functools.cache
def _device_numbers(device: int) -> tuple[int, int, int, int]:
    """Multiprocessors, shared memory per multiprocessor, shared memory the system reserves per block, L2 bytes."""
    props = cupy_module().cuda.runtime.getDeviceProperties(device)
    return (
        int(props["multiProcessorCount"]),
        int(props["sharedMemPerMultiprocessor"]),
        int(props.get("reservedSharedMemPerBlock", 1024)),
        int(props["l2CacheSize"]),
    )


def contig_resident(operand_bytes: int, itemsize: int, arity: int, functor: str, fused: str) -> int:
    """The contiguous kernel's cap on resident blocks per multiprocessor (CONTIG_RESIDENT), 0 for none.

    ``itemsize``: the widest operand's element size in bytes; ``arity``: the inputs;
    ``functor`` / ``fused``: the element functor and fused activation of the plan.
    """
    resident = CONTIG_RESIDENT.get((itemsize, arity), 0)
    if not resident:
        return 0
    if RESIDENT_FUNCTORS is not None and (functor not in RESIDENT_FUNCTORS or fused not in ("NoFused", "FusedRelu")):
        return 0
    return resident if _beyond_l2(operand_bytes) else 0


def contig_hints(operand_bytes: int, itemsize: int) -> int:
    """The contiguous kernel's cache hints (CONTIG_HINTS) for a call of ``operand_bytes``.

    ``itemsize``: the widest operand's element size in bytes.
    """
    hints = CONTIG_HINTS.get(itemsize, 0)
    return hints if hints and _beyond_l2(operand_bytes) else 0


def _bytes_limit(limit: int | None) -> int:
    """A size threshold in bytes: ``limit``, or the device's L2 cache size where it is None."""
    return _device_numbers(current_device())[3] if limit is None else limit


def _beyond_l2(operand_bytes: int) -> bool:
    """Whether a call's operands exceed STREAM_MIN_BYTES (None: the device's L2 cache size)."""
    return operand_bytes > _bytes_limit(STREAM_MIN_BYTES)


def _by_driver(operand_bytes: int) -> bool:
    """Whether a plain copy with these operand bytes goes through the driver (DRIVER_COPY_MIN_BYTES)."""
    return operand_bytes >= _bytes_limit(DRIVER_COPY_MIN_BYTES)


def driver_copy(dst: int, src: int, nbytes: int) -> None:
    """``nbytes`` from device address ``src`` to ``dst`` by ``cudaMemcpyAsync`` on CuPy's current stream."""
    runtime = cupy_module().cuda.runtime
    runtime.memcpyAsync(dst, src, nbytes, runtime.memcpyDeviceToDevice, cupy_module().cuda.get_current_stream().ptr)


def run_elementwise(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch an element-wise operator on device views (see :func:`dmlops.cuda.execute`)."""
    members, output = _operands(desc)
    xs = [inputs[m] for m in members]
    y = outputs[output]
    strides = tuple([element_strides(v) for v in xs] + [element_strides(y)])
    key = (id(desc), strides)
    plan = _PLANS.get(key)
    if plan is None or plan.desc is not desc:
        plan = _PLANS.put(key, Plan(desc, [x.dtype for x in xs], y.dtype, layout(y.shape, strides)))
    copy = plan.copy_bytes
    if copy and _by_driver(2 * copy):
        src, dst = xs[0].data.ptr, y.data.ptr
        if src == dst or abs(dst - src) >= copy:  # the same elements, or apart (else the kernel)
            note_unrecorded_work()  # never recorded: a replay would skip the copy
            if src != dst:
                driver_copy(dst, src, copy)
            return
    pointers = [x.data.ptr for x in xs]
    pointers.append(y.data.ptr)
    launch = plan.launch_for(pointers)
    # the kernel takes three input pointers: absent operands repeat the first (never read)
    if len(xs) == 3:
        launch(*pointers)
    else:
        first = pointers[0]
        launch(*pointers[:-1], *([first] * (3 - len(xs))), pointers[-1])


_OPERANDS: dict[int, tuple[Any, list[str], str]] = {}


def _operands(desc: Any) -> tuple[list[str], str]:
    """A desc's bound input members in binding order, and its output member (cached by identity)."""
    found = _OPERANDS.get(id(desc))
    if found is None or found[0] is not desc:
        bound = desc.tensor_names("input")
        members = [m for m in desc.tensor_slots("input") if m in bound]
        if len(_OPERANDS) >= 1024:
            _OPERANDS.clear()
        found = _OPERANDS[id(desc)] = (desc, members, desc.tensor_slots("output")[0])
    return found[1], found[2]


def run_quantized_linear_add(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """QUANTIZED_LINEAR_ADD: A and B through the kernel family, the scalars through a table.

    The six one-element scale and zero-point tensors are gathered into a float32 table on
    the device (no host round trip).
    The table is new per call (stream-ordered by CuPy's pool), so the launch is packed per
    call too: about the host time of the gathers, which this eight-operand operator pays.
    """
    cp = cupy_module()
    table = cp.zeros(len(QUANTIZATION_PARAMETERS), dtype=np.float32)
    for i, member in enumerate(QUANTIZATION_PARAMETERS):
        value = inputs.get(member)
        if value is not None:  # one element; an absent zero point stays 0
            cp.copyto(table[i : i + 1], value.reshape(1), casting="unsafe")
    a, b, y = inputs["ATensor"], inputs["BTensor"], outputs["OutputTensor"]
    strides = tuple(element_strides(v) for v in (a, b, y))
    plan = Plan(desc, [a.dtype, b.dtype], y.dtype, layout(y.shape, strides), table=table.data.ptr)
    pointers = [a.data.ptr, b.data.ptr, y.data.ptr]
    plan.launch_for(pointers)(a.data.ptr, b.data.ptr, a.data.ptr, y.data.ptr)


# -- the row kernel -------------------------------------------------------------------------------


def row_stride(shape: Sequence[int], strides: Sequence[int], kept: int) -> int | None:
    """The element offset between rows when the last ``len(shape) - kept`` axes are one dense row.

    None when they are not (reduced axes not C-contiguous, or kept axes not one stride).
    """
    expect = 1
    for n, s in zip(reversed(shape[kept:]), reversed(strides[kept:])):
        if n != 1 and s != expect:
            return None
        expect *= n
    c_sizes, (c_strides,) = collapse(shape[:kept], [strides[:kept]])
    if not c_sizes:
        return expect
    if len(c_sizes) > 1 or c_strides[0] < 0:
        return None
    return int(c_strides[0])


_ROW_PLANS = PlanCache()


def run_rows(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """SOFTMAX / LOG_SOFTMAX / HARDMAX (and the *1 variants) over the reduced axes."""
    x = inputs["InputTensor"]
    y = outputs["OutputTensor"]
    # (desc, launch, direct) per desc and strides; direct: the rows are addressed in place
    # on both sides, and the transposed views start at the arrays' own first elements, so
    # the launch takes their pointers as they are (a tiny call's path)
    key = (id(desc), element_strides(x), element_strides(y), ROW_WARP_MAX, ROW_CHUNKS, ROW_WIDE_ROWS)
    found = _ROW_PLANS.get(key)
    if found is not None and found[0] is desc and found[2]:
        found[1](x.data.ptr, y.data.ptr)
        return
    cp = cupy_module()
    if x.dtype not in FLOATS:
        raise _unsupported(desc, f"for {x.dtype.name.upper()} inputs")
    axes = reduction_axes(desc)
    kept = [a for a in range(x.ndim) if a not in axes]
    perm = [*kept, *axes]
    xp, yp = x.transpose(perm), y.transpose(perm)
    rows = math.prod(xp.shape[: len(kept)])
    length = math.prod(xp.shape[len(kept) :])
    if rows == 0 or length == 0:
        return
    in_row = row_stride(xp.shape, element_strides(xp), len(kept))
    direct = in_row is not None
    if in_row is None:
        xp = cp.ascontiguousarray(xp)
        in_row = length
    out_row = row_stride(yp.shape, element_strides(yp), len(kept))
    target = yp
    if out_row is None:
        direct = False
        target = cp.empty(yp.shape, dtype=yp.dtype)
        out_row = length
    if found is None or found[0] is not desc:
        found = _ROW_PLANS.put(key, (desc, _row_launch(desc, x.dtype, rows, length, in_row, out_row), direct))
    found[1](xp.data.ptr, target.data.ptr)
    if target is not yp:
        yp[...] = target


def chunk_params(rows: int, length: int, in_row: int, out_row: int) -> np.void:
    """The chunked row kernels' ChunkParams: ``rows`` rows of ``length``, ``in_row`` / ``out_row`` apart."""
    return params(
        ("rows", "i8", rows), ("len", "i8", length), ("in_row", "i8", in_row), ("out_row", "i8", out_row),
        ("chunks", "i8", -(-length // ROW_CHUNK)),
    )  # fmt: skip


class _ChunkedRows:
    """SOFTMAX / LOG_SOFTMAX over long rows, in chunks: three kernels (kernels/elementwise.cu's notes).

    Each chunk's maximum and sum, then each row's, go to a workspace (16 bytes a chunk and a
    row, from CuPy's pool for each call, as the reductions' split states).
    """

    __slots__ = ("apply", "combine", "rows", "stats", "workspace_bytes")

    def __init__(self, c_type: str, kind: int, rows: int, length: int, in_row: int, out_row: int) -> None:
        p = chunk_params(rows, length, in_row, out_row)
        self.rows, chunks = rows, int(p["chunks"])
        grid, rows_grid = min(rows * chunks, 1 << 20), min(rows, 1 << 20)
        self.stats = PackedLaunch(get_kernel(SOURCE, f"ew_row_chunk_stats<{c_type}>"), grid, ROW_BLOCK, 2, p)
        self.combine = PackedLaunch(get_kernel(SOURCE, f"ew_row_chunk_combine<{c_type}>"), rows_grid, ROW_BLOCK, 2, p)
        self.apply = PackedLaunch(get_kernel(SOURCE, f"ew_row_chunk_apply<{c_type}, {kind}>"), grid, ROW_BLOCK, 3, p)
        self.workspace_bytes = 16 * rows * (chunks + 1)

    def __call__(self, x: int, y: int) -> None:
        workspace = cupy_module().empty(self.workspace_bytes, dtype=np.uint8)
        stats = workspace.data.ptr
        totals = stats + self.workspace_bytes - 16 * self.rows
        self.stats(x, stats)
        self.combine(stats, totals)
        self.apply(x, y, totals)


def row_kernel(kind: int, rows: int, length: int) -> str:
    """Which row kernel runs ``rows`` rows of ``length`` elements (``kind``: ROW_KINDS' code).

    "warp" (ew_rows_warp), "block" (ew_rows, a block of ROW_BLOCK a row, the row in
    registers), "wide" (ew_rows with ROW_WIDE_BLOCK threads), "chunks" (_ChunkedRows) or
    "reread" (ew_rows reading the row again per pass).
    """
    if length <= ROW_WARP_MAX:
        return "warp"
    if length <= 16 * ROW_BLOCK:
        return "block"
    wide_rows = ROW_WIDE_ROWS if ROW_WIDE_ROWS is not None else _device_numbers(current_device())[0]
    if length <= 16 * ROW_WIDE_BLOCK and rows >= wide_rows:
        return "wide"
    if ROW_CHUNKS and kind != 2:
        return "chunks"
    return "reread"


def _row_launch(
    desc: Any, dtype: np.dtype[Any], rows: int, length: int, in_row: int, out_row: int
) -> PackedLaunch | _ChunkedRows:
    """The row kernel's launch for ``rows`` rows of ``length`` elements ``in_row`` / ``out_row`` apart."""
    kind, c_type = ROW_KINDS[desc.operator_type.name], C_TYPES[dtype]
    p = params(("rows", "i8", rows), ("len", "i8", length), ("in_row", "i8", in_row), ("out_row", "i8", out_row))
    chosen = row_kernel(kind, rows, length)
    if chosen == "chunks":
        return _ChunkedRows(c_type, kind, rows, length, in_row, out_row)
    if chosen == "warp":
        per = next(p for p in (1, 2, 4, 8, 16, 32) if length <= 32 * p)
        fn = get_kernel(SOURCE, f"ew_rows_warp<{c_type}, {kind}, {per}>")
        return PackedLaunch(fn, min(-(-rows // 4), 1 << 20), 128, 2, p)
    block, per = ROW_BLOCK, 0
    if chosen == "block":
        per = next(p for p in (1, 2, 4, 8, 16) if length <= p * ROW_BLOCK)
    elif chosen == "wide":
        block, per = ROW_WIDE_BLOCK, 8 if length <= 8 * ROW_WIDE_BLOCK else 16
    name = f"ew_rows<{c_type}, {kind}, {per}>" if block == ROW_BLOCK else f"ew_rows<{c_type}, {kind}, {per}, {block}>"
    return PackedLaunch(get_kernel(SOURCE, name), min(rows, 1 << 20), block, 2, p)


OPERATORS: dict[str, Callable[..., Any]] = {
    **{name: run_elementwise for name in OP_TABLE},
    **{name: run_rows for name in ROW_KINDS},
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": run_quantized_linear_add,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
