"""Pooling descs and their semantics: MAX_POOLING2, MAX_POOLING_GRAD and their generic neighbours.

The desc classes (:class:`MaxPooling2Desc`, :class:`MaxPoolingGradDesc`) and the window
geometry every backend reads (:class:`PoolingWindow`). The family also *claims* six
operators that keep their generic (catalogue-made) descs (:func:`claim`): MAX_POOLING,
MAX_POOLING1, AVERAGE_POOLING, AVERAGE_POOLING1, LP_POOLING and LP_POOLING1. They share
the window machinery (:func:`generic_window`) and the forward rules
(:func:`validate_generic`). AVERAGE_POOLING_GRAD and MAX_UNPOOLING are claimed too
(every backend), with their own rules, each checked against DirectML 1.15.4's
CreateOperator (it wins where the pages are silent or say otherwise):

* AVERAGE_POOLING_GRAD: the forward rules of :func:`validate_pooling` with
  OutputGradientTensor as the forward input and InputGradientTensor as its output:
  DimensionCount equals the tensors' DimensionCount - 2, and InputGradientTensor's N and
  C are OutputGradientTensor's. Its spatial sizes are free (the page's "typically the
  forward output's sizes" is no rule: CreateOperator accepts larger and smaller ones),
  as are zeros in Strides and WindowSize and padding wider than the window.
* MAX_UNPOOLING: IndicesTensor has InputTensor's Sizes. OutputTensor's Sizes are free
  (smaller than the input's, other N or C: all accepted).

What DirectML 1.15.4 computes (probed on the ``directml`` backend; the reference follows,
:func:`unpooling_targets`):

* AVERAGE_POOLING_GRAD: every InputGradientTensor element ``g[o]`` is divided by its
  window's count (:func:`average_divisors`) and added to every in-bounds element of its
  window over OutputGradientTensor's sizes. Without IncludePadding the count is the
  in-bounds elements, as the forward's; with it, the window elements inside the padded
  input (StartPadding + InputSize + EndPadding), not the forward's ``prod(WindowSize)``:
  a window reaching past EndPadding (InputGradientTensor's sizes are free) divides by
  less, so the operator is not the forward's transpose there (erratum E171). A Stride of
  0 on any axis gives a gradient of zeros everywhere (every window sends nothing).
* MAX_UNPOOLING: OutputTensor is zeroed, then ``InputTensor[i]`` is written at the flat
  row-major element ``IndicesTensor[i]`` of the whole logical OutputTensor (batch and
  channel included, as MAX_POOLING's indices count; not per image). An index at or past
  the output's element count writes nothing (as the page says). UINT64 indices are read
  as their low 32 bits (2^32 + 1 writes element 1; erratum E170). Duplicate indices: on
  this stack the last input element in row-major order wins, but the page leaves the
  value undefined (GPU threads race), so dmlops refuses duplicates whose values differ
  (DataIndexError) and accepts those that write the same bits (max pooling's
  overlapping windows selecting one element).

Shared rules
------------
Rules shared by the max-pooling descs (MAX_POOLING2 and MAX_POOLING_GRAD).

Both structs carry the same five arrays (``Strides``, ``WindowSize``,
``StartPadding``, ``EndPadding``, ``Dilations``), one entry per spatial dimension of
an ``{N, C, [D], H, W}`` input. :class:`PoolingWindow` holds them and knows the
geometry; :func:`validate_pooling` applies the rules both pages (and the rulings)
share.

Geometry (dml-semantics §3.1/§3.2). Per spatial dimension, window element ``k`` of
output position ``o`` reads input coordinate ``i = o * Stride + k * Dilation -
StartPadding``; coordinates outside ``[0, InputSize)`` are padding and never
participate (MAX_POOLING2 allows 0 in Strides, WindowSize and Dilations, as DirectML
does: the same formula). ``effective = (WindowSize - 1) * Dilation + 1``; the floor output size
is ``(InputSize + StartPadding + EndPadding - effective) // Stride + 1`` (the pages
print the formula without Dilations, erratum E11). DirectML's own CreateOperator
decides which output sizes are valid (erratum E27): any for MAX_POOLING2, the floor
size for MAX_POOLING_GRAD.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..enums import FeatureLevel, OperatorType
from ..enums import TensorDataType as T
from ..errors import DataIndexError
from ..tensor import TensorDesc
from ._base import OperatorDesc, TensorSupport, attr_field, tensor_field

# -- Shared helpers ------------------------------------------------------------

POOLING_ARRAYS = ("Strides", "WindowSize", "StartPadding", "EndPadding", "Dilations")
"""The array members sized by ``DimensionCount``, in struct order."""


@dataclass(frozen=True)
class PoolingWindow:
    """The window parameters of a max-pooling desc, one entry per spatial dimension.

    Attributes
    ----------
    strides, window_size, start_padding, end_padding, dilations : tuple of int
        The DML arrays of the same names.
    """

    strides: tuple[int, ...]
    window_size: tuple[int, ...]
    start_padding: tuple[int, ...]
    end_padding: tuple[int, ...]
    dilations: tuple[int, ...]

    @property
    def spatial_dimension_count(self) -> int:
        """``DimensionCount``: the number of spatial dimensions."""
        return len(self.window_size)

    def effective_window(self) -> tuple[int, ...]:
        """``(WindowSize - 1) * Dilation + 1`` per spatial dimension (the dilated extent)."""
        return tuple((k - 1) * d + 1 for k, d in zip(self.window_size, self.dilations))

    def padded_sizes(self, input_spatial: Sequence[int]) -> tuple[int, ...]:
        """``InputSize + StartPadding + EndPadding`` per spatial dimension."""
        return tuple(n + s + e for n, s, e in zip(input_spatial, self.start_padding, self.end_padding))

    def output_sizes(self, input_spatial: Sequence[int], *, ceil_mode: bool = False) -> tuple[int, ...]:
        """Spatial output sizes: the floor formula with dilated windows, or the ceil-mode size.

        Parameters
        ----------
        input_spatial : sequence of int
            The input's spatial sizes ({H, W} or {D, H, W}).
        ceil_mode : bool
            Round the window count up (ONNX/PyTorch ``ceil_mode``), as ONNX Runtime
            passes to DirectML without growing EndPadding (ruling 8).

        Raises
        ------
        ValueError
            When the dilated window is larger than the padded input or a stride is 0.
        """
        sizes = []
        for i, (padded, eff, stride) in enumerate(
            zip(self.padded_sizes(input_spatial), self.effective_window(), self.strides)
        ):
            if stride < 1 or eff > padded:
                raise ValueError(f"spatial dimension {i}: no window fits (effective {eff}, padded {padded})")
            span = padded - eff
            sizes.append(span // stride + 1 + (1 if ceil_mode and span % stride else 0))
        return tuple(sizes)

    def scanned(self) -> PoolingWindow:
        """The window DirectML 1.15.4's MAX_POOLING2 scans: this one unless a Dilation is 0.

        Measured on DirectML 1.15.4 (600 random descs with zeros in Strides, WindowSize
        and Dilations, every output value and index equal): an axis whose Dilation is 0
        reads the single coordinate ``o * Stride - StartPadding`` (its WindowSize
        elements all read it, even a WindowSize of 0), and every axis *before* the last
        such axis reads only its first window element (``k = 0``; nothing if its
        WindowSize is 0). Axes after it are unchanged. Returned as an equivalent window
        with Dilations >= 1, so the backends need no case of their own. Zero Strides and
        zero WindowSize with Dilations >= 1 need no change (every output reads the first
        window; an empty window holds only padding).
        """
        zero = [i for i, d in enumerate(self.dilations) if d == 0]
        if not zero:
            return self
        last = zero[-1]
        sizes, dilations = list(self.window_size), list(self.dilations)
        for i, d in enumerate(self.dilations):
            if d == 0:
                sizes[i], dilations[i] = 1, 1
            elif i < last:
                sizes[i] = min(sizes[i], 1)
        return PoolingWindow(self.strides, tuple(sizes), self.start_padding, self.end_padding, tuple(dilations))

    def gradient_output_sizes(self, input_spatial: Sequence[int]) -> tuple[int, ...]:
        """The InputGradientTensor sizes DirectML accepts for MAX_POOLING_GRAD: the floor size, or 1.

        DirectML 1.15.4 accepts exactly the floor-formula size, and 1 where the dilated
        window is larger than the padded input (one window covering all of it).
        """
        sizes = []
        for padded, eff, stride in zip(self.padded_sizes(input_spatial), self.effective_window(), self.strides):
            sizes.append((padded - eff) // stride + 1 if eff <= padded else 1)
        return tuple(sizes)


class PoolingParameters:
    """Members and derived values MAX_POOLING2 and MAX_POOLING_GRAD share (mixed into both descs)."""

    strides: tuple[int, ...]
    window_size: tuple[int, ...]
    start_padding: tuple[int, ...]
    end_padding: tuple[int, ...]
    dilations: tuple[int, ...]

    @property
    def dimension_count(self) -> int:
        """``DimensionCount`` (derived from the arrays): the number of spatial dimensions."""
        return len(self.strides)

    @property
    def window(self) -> PoolingWindow:
        """The five window arrays as a :class:`PoolingWindow`."""
        return PoolingWindow(self.strides, self.window_size, self.start_padding, self.end_padding, self.dilations)


def validate_pooling(
    desc: OperatorDesc,
    window: PoolingWindow,
    input_member: str,
    input_tensor: TensorDesc,
    output_member: str,
    output_tensor: TensorDesc,
    *,
    gradient: bool,
) -> None:
    """The rules MAX_POOLING2 and MAX_POOLING_GRAD share; raises ``desc.invalid(...)``.

    Also the generic operators' rules: the forward poolings', and AVERAGE_POOLING_GRAD's
    (forward, with its OutputGradientTensor as ``input_tensor``).

    ``output_member`` is the tensor with the forward output's sizes (MAX_POOLING2's
    OutputTensor, MAX_POOLING_GRAD's InputGradientTensor). DataType and DimensionCount
    equality are checked by the caller before this.

    Output sizes follow DirectML 1.15.4's CreateOperator (erratum E27, overturning
    ruling 8): MAX_POOLING2 accepts any spatial output size (windows past the input,
    or larger than it, hold padding only); MAX_POOLING_GRAD (``gradient``) accepts only
    the floor size, or 1 where the dilated window is larger than the padded input.
    Zero Strides, WindowSize and Dilations: MAX_POOLING2 accepts them, MAX_POOLING_GRAD
    rejects them (DirectML 1.15.4's CreateOperator).
    """
    dims = input_tensor.dimension_count
    count = window.spatial_dimension_count
    if count != dims - 2:
        raise desc.invalid(
            "DimensionCount",
            f"must equal {input_member}.DimensionCount - 2 ({dims - 2}), the number of spatial dimensions",
            count,
        )
    if gradient:
        # DirectML 1.15.4's MAX_POOLING_GRAD rejects a 0 in any of the three (every
        # InputGradientTensor size probed); its MAX_POOLING2 accepts them (below).
        for name, values in (("Strides", window.strides), ("WindowSize", window.window_size)):
            for i, v in enumerate(values):
                if v < 1:
                    raise desc.invalid(f"{name}[{i}]", "must be >= 1", v)
        for i, v in enumerate(window.dilations):
            if v < 1:
                raise desc.invalid(f"Dilations[{i}]", "must be >= 1 (1 means no dilation)", v)
    # MAX_POOLING2: DirectML 1.15.4's CreateOperator accepts Strides, WindowSize and
    # Dilations of 0 and computes the geometry as written (window element k of output o
    # reads o * Stride + k * Dilation - StartPadding): a 0 stride gives every output the
    # first window, a 0 dilation reads one coordinate k times, a 0 window holds nothing
    # (lowest value, index 0). Unsigned members: nothing below 0 to check.
    in_sizes = input_tensor.sizes
    out_sizes = output_tensor.sizes
    for axis, name in ((0, "BatchCount"), (1, "ChannelCount")):
        if out_sizes[axis] != in_sizes[axis]:
            raise desc.invalid(
                f"{output_member}.Sizes[{axis}]",
                f"must equal {input_member}.Sizes[{axis}] ({name} {in_sizes[axis]})",
                out_sizes[axis],
            )
    if not gradient:
        return
    for i, (got, want) in enumerate(zip(out_sizes[2:], window.gradient_output_sizes(in_sizes[2:]))):
        if got != want:
            raise desc.invalid(
                f"{output_member}.Sizes[{i + 2}]",
                f"must be (InputSize + StartPadding + EndPadding - (WindowSize - 1) * Dilation - 1) "
                f"/ Stride + 1 = {want} (1 when the dilated window is larger than the padded input)",
                got,
            )


# -- MAX_POOLING2 --------------------------------------------------------------

_TYPES_2_1 = (T.FLOAT32, T.FLOAT16)
_TYPES_3_0 = (*_TYPES_2_1, T.INT8, T.UINT8)
_TYPES_5_0 = (*_TYPES_3_0, T.INT64, T.INT32, T.INT16, T.UINT64, T.UINT32, T.UINT16)


def _max_pooling2_rows(types: tuple[T, ...], index_types: tuple[T, ...]) -> dict[str, TensorSupport]:
    data = TensorSupport.of((4, 5), *types)
    return {
        "InputTensor": data,
        "OutputTensor": data,
        "OutputIndicesTensor": TensorSupport.of((4, 5), *index_types),
    }


@dataclass(frozen=True, kw_only=True)
class MaxPooling2Desc(PoolingParameters, OperatorDesc):
    """Maximum over a sliding (dilated) window, optionally with the index of the maximum.

    Per spatial dimension, window element ``k`` of output position ``o`` reads input
    coordinate ``o * Strides + k * Dilations - StartPadding``; padding positions never
    participate. ``OutputIndicesTensor`` receives the row-major linear index of the
    selected element over the whole logical input ``{N, C, [D], H, W}``.

    Attributes
    ----------
    input_tensor : TensorDesc
        ``InputTensor``, ``{N, C, H, W}`` or ``{N, C, D, H, W}``.
    output_tensor : TensorDesc
        ``OutputTensor``; same DataType and DimensionCount; N and C copied, spatial
        sizes free (usually the pooling formula's floor or ceil-mode size).
    output_indices_tensor : TensorDesc or None
        ``OutputIndicesTensor`` (optional): the Sizes of OutputTensor; UINT32, or
        UINT64 from DML_FEATURE_LEVEL_5_0.
    strides, window_size, start_padding, end_padding, dilations : tuple of int
        ``Strides``, ``WindowSize``, ``StartPadding``, ``EndPadding``, ``Dilations``:
        one entry per spatial dimension (``DimensionCount`` = InputTensor.DimensionCount - 2).

    Notes
    -----
    Introduced in DML_FEATURE_LEVEL_2_1 (4 to 5 dimensions, FLOAT32/FLOAT16); INT8 and
    UINT8 from 3_0; INT64, INT32, INT16, UINT64, UINT32, UINT16 from 5_0. Integer
    data is data movement: the output is bit-exact.

    Deviations from and additions to the DirectML page:

    * The page's output-size formula omits Dilations (erratum E11). DirectML's
      CreateOperator accepts any spatial output size, and windows larger than the
      padded input (erratum E27, overturning ruling 8): windows past the input hold
      only padding.
    * Ties: the first element in row-major window order, which is the lowest logical
      index, wins (the page's "first value encountered"; erratum E12).
    * NaN, -inf and padding-only windows (undocumented; DirectML 1.15.4, erratum E26,
      overturning ruling 7): the running maximum starts at the type's lowest finite
      value (-FLT_MAX for FLOAT32) at the window's first in-bounds element, and only a
      strictly greater element replaces it. NaN never wins; a window of only NaN or
      -inf outputs -FLT_MAX at its first in-bounds element; a window of only padding
      outputs -FLT_MAX at index 0. PyTorch instead propagates NaN.

    References
    ----------
    NS:directml.DML_MAX_POOLING2_OPERATOR_DESC
    """

    dml_name: ClassVar[str] = "DML_MAX_POOLING2_OPERATOR_DESC"
    operator_type: ClassVar[OperatorType] = OperatorType.MAX_POOLING2
    introduced: ClassVar[FeatureLevel] = FeatureLevel.V2_1
    family: ClassVar[str] = "pooling"
    count_members: ClassVar[dict[str, tuple[str, ...]]] = {"DimensionCount": POOLING_ARRAYS}
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V2_1: _max_pooling2_rows(_TYPES_2_1, (T.UINT32,)),
        FeatureLevel.V3_0: _max_pooling2_rows(_TYPES_3_0, (T.UINT32,)),
        FeatureLevel.V5_0: _max_pooling2_rows(_TYPES_5_0, (T.UINT32, T.UINT64)),
    }

    input_tensor: TensorDesc = tensor_field("InputTensor", "input")
    output_tensor: TensorDesc = tensor_field("OutputTensor", "output")
    output_indices_tensor: TensorDesc | None = tensor_field("OutputIndicesTensor", "output", optional=True)
    strides: tuple[int, ...] = attr_field("Strides", "uint_array")
    window_size: tuple[int, ...] = attr_field("WindowSize", "uint_array")
    start_padding: tuple[int, ...] = attr_field("StartPadding", "uint_array")
    end_padding: tuple[int, ...] = attr_field("EndPadding", "uint_array")
    dilations: tuple[int, ...] = attr_field("Dilations", "uint_array")

    def _validate(self, level: FeatureLevel) -> None:
        self.require_same("DataType", "InputTensor", "OutputTensor")
        self.require_same("DimensionCount", "InputTensor", "OutputTensor", "OutputIndicesTensor")
        validate_pooling(
            self, self.window, "InputTensor", self.input_tensor, "OutputTensor", self.output_tensor, gradient=False
        )
        # "OutputTensor and OutputIndicesTensor both have the same tensor sizes."
        self.require_same("Sizes", "OutputTensor", "OutputIndicesTensor")


# -- MAX_POOLING_GRAD ----------------------------------------------------------


def _max_pooling_grad_rows(dims: int | tuple[int, int]) -> dict[str, TensorSupport]:
    row = TensorSupport.of(dims, T.FLOAT32, T.FLOAT16)
    return {"InputTensor": row, "InputGradientTensor": row, "OutputGradientTensor": row}


@dataclass(frozen=True, kw_only=True)
class MaxPoolingGradDesc(PoolingParameters, OperatorDesc):
    """Backpropagation of max pooling (see :class:`~dmlops.descs.pooling.MaxPooling2Desc`).

    Recomputes the forward maximum of every window of ``InputTensor`` (same window
    parameters and tie rule) and adds each ``InputGradientTensor`` element into
    ``OutputGradientTensor`` at the position of its window's maximum. Overlapping
    windows that select the same element sum; untouched elements are 0.

    Attributes
    ----------
    input_tensor : TensorDesc
        ``InputTensor``, the forward pass's input ``{N, C, [D], H, W}``.
    input_gradient_tensor : TensorDesc
        ``InputGradientTensor``, sized as the forward output: the floor size only (1
        where the dilated window is larger than the padded input).
    output_gradient_tensor : TensorDesc
        ``OutputGradientTensor``, sized as InputTensor.
    strides, window_size, start_padding, end_padding, dilations : tuple of int
        As MAX_POOLING2's members of the same names.

    Notes
    -----
    Introduced in DML_FEATURE_LEVEL_3_0 with 4-D tensors; 4 to 5 dimensions from 4_0;
    FLOAT32 and FLOAT16 only. The three tensors share DataType and DimensionCount;
    InputTensor and OutputGradientTensor share Sizes.

    The page says the only valid DimensionCount is 2, which its own
    DML_FEATURE_LEVEL_4_0 table (5-D tensors) contradicts: 2 or 3 (erratum E10). The
    page's copy lacks the Syntax block; the member order is DirectML.h's. The argmax
    is MAX_POOLING2's (ties to the lowest logical index, NaN never wins: erratum E26);
    the gradient of a window holding only padding goes nowhere. DirectML accepts only
    the floor-size InputGradientTensor, not the ceil-mode size (erratum E27).

    References
    ----------
    NS:directml.DML_MAX_POOLING_GRAD_OPERATOR_DESC
    """

    dml_name: ClassVar[str] = "DML_MAX_POOLING_GRAD_OPERATOR_DESC"
    operator_type: ClassVar[OperatorType] = OperatorType.MAX_POOLING_GRAD
    introduced: ClassVar[FeatureLevel] = FeatureLevel.V3_0
    family: ClassVar[str] = "pooling"
    count_members: ClassVar[dict[str, tuple[str, ...]]] = {"DimensionCount": POOLING_ARRAYS}
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V3_0: _max_pooling_grad_rows(4),
        FeatureLevel.V4_0: _max_pooling_grad_rows((4, 5)),
    }

    input_tensor: TensorDesc = tensor_field("InputTensor", "input")
    input_gradient_tensor: TensorDesc = tensor_field("InputGradientTensor", "input")
    output_gradient_tensor: TensorDesc = tensor_field("OutputGradientTensor", "output")
    strides: tuple[int, ...] = attr_field("Strides", "uint_array")
    window_size: tuple[int, ...] = attr_field("WindowSize", "uint_array")
    start_padding: tuple[int, ...] = attr_field("StartPadding", "uint_array")
    end_padding: tuple[int, ...] = attr_field("EndPadding", "uint_array")
    dilations: tuple[int, ...] = attr_field("Dilations", "uint_array")

    def _validate(self, level: FeatureLevel) -> None:
        members = ("InputTensor", "InputGradientTensor", "OutputGradientTensor")
        self.require_same("DataType", *members)
        self.require_same("DimensionCount", *members)
        self.require_same("Sizes", "InputTensor", "OutputGradientTensor")
        validate_pooling(
            self,
            self.window,
            "InputTensor",
            self.input_tensor,
            "InputGradientTensor",
            self.input_gradient_tensor,
            gradient=True,
        )


# -- Generic neighbours: MAX_POOLING, MAX_POOLING1, AVERAGE_POOLING(1), LP_POOLING(1) ----

FAMILY = "pooling"

GENERIC_OPERATORS: frozenset[str] = frozenset(
    ("MAX_POOLING", "MAX_POOLING1", "AVERAGE_POOLING", "AVERAGE_POOLING1", "LP_POOLING", "LP_POOLING1")
)
"""The catalogue operators this family implements through their generic descs.

Rules DirectML 1.15.4 follows (probed on the ``directml`` backend; the pages are silent):

* Geometry and validation are MAX_POOLING2's (:func:`validate_pooling`, forward): the
  arrays hold InputTensor.DimensionCount - 2 entries, N and C are copied, and
  CreateOperator accepts any spatial output size and Strides, WindowSize (and, for the
  *1 operators, Dilations) of 0. The operators without Dilations read them as 1.
* MAX_POOLING / MAX_POOLING1 are MAX_POOLING2 with Dilations 1 (erratum E26: the running
  maximum starts at the type's lowest finite value; NaN never wins).
* AVERAGE_POOLING(1): the in-bounds elements are added into a float32 sum from +0 in
  row-major window order (each addition rounded), then divided (a float32 division) by
  the number of in-bounds elements, or with IncludePadding by the whole window's
  element count ``prod(WindowSize)`` -- also for windows that reach past EndPadding.
  A window without in-bounds elements gives 0 / 0 = NaN without IncludePadding, 0 with it.
* LP_POOLING(1): ``(sum |x|^P)^(1/P)`` over the in-bounds elements, summed in float32
  in window order; P 1 is ``sum |x|``, P 2 ``sqrt(sum x^2)``, both correctly rounded
  float32 steps; other P use DirectML's ``exp2(log2)`` power, whose last bits are the
  device's (and in which a NaN element contributes 0). CreateOperator accepts any P,
  0 included (``x^0 = 1``, then ``s^inf``).
"""


NUMPY_OPERATORS: frozenset[str] = frozenset(("AVERAGE_POOLING_GRAD", "MAX_UNPOOLING"))
"""The directml-checked operators the reference runs too (their rules: :func:`validate_generic`; what
DirectML computes: the module docstring)."""

DIRECTML_OPERATORS: frozenset[str] = frozenset()
"""The family's operators that only the ``directml`` backend runs (none left)."""


def claim(operator: str) -> tuple[str, tuple[str, ...]] | None:
    """``(family, backends)`` for a generic operator of this family, None for any other.

    Read by :func:`dmlops.descs.generic.generic_desc_class` when it makes the class.
    """
    if operator in EQUIVALENT_OPERATORS or operator in KERNEL_OPERATORS:
        return FAMILY, ("numpy", "cpu", "cuda", "directml")
    if operator in GENERIC_OPERATORS or operator in NUMPY_OPERATORS:
        return FAMILY, ("numpy", "directml")
    if operator in DIRECTML_OPERATORS:
        return FAMILY, ("directml",)
    return None


EQUIVALENT_OPERATORS: frozenset[str] = frozenset(("MAX_POOLING", "MAX_POOLING1"))
"""Generic operators the cpu and cuda backends run as their MAX_POOLING2 equivalent."""


KERNEL_OPERATORS: frozenset[str] = frozenset(
    ("AVERAGE_POOLING", "AVERAGE_POOLING1", "LP_POOLING", "LP_POOLING1", "AVERAGE_POOLING_GRAD", "MAX_UNPOOLING")
)
"""Generic operators the cpu and cuda backends run with kernels of their own."""


def max_pooling2_equivalent(desc: Any) -> MaxPooling2Desc:
    """The MAX_POOLING2 desc of a MAX_POOLING / MAX_POOLING1 desc: Dilations 1, the same argmax.

    The reference computes both with MAX_POOLING2's argmax, and DirectML 1.15.4 agrees.
    """
    window = generic_window(desc)
    return MaxPooling2Desc(
        input_tensor=desc.input_tensor,
        output_tensor=desc.output_tensor,
        output_indices_tensor=getattr(desc, "output_indices_tensor", None),
        strides=window.strides,
        window_size=window.window_size,
        start_padding=window.start_padding,
        end_padding=window.end_padding,
        dilations=window.dilations,
    )


def generic_window(desc: Any) -> PoolingWindow:
    """The window of a generic pooling desc (Dilations 1 where the struct has none)."""
    strides = tuple(int(v) for v in desc.strides)
    dilations = getattr(desc, "dilations", None)
    return PoolingWindow(
        strides=strides,
        window_size=tuple(int(v) for v in desc.window_size),
        start_padding=tuple(int(v) for v in desc.start_padding),
        end_padding=tuple(int(v) for v in desc.end_padding),
        dilations=(1,) * len(strides) if dilations is None else tuple(int(v) for v in dilations),
    )


def _check_forward_pooling(desc: Any) -> None:
    """The six forward operators: MAX_POOLING2's forward rules; MAX_POOLING1's indices sized as the output."""
    validate_pooling(
        desc, generic_window(desc), "InputTensor", desc.input_tensor, "OutputTensor", desc.output_tensor, gradient=False
    )
    if getattr(desc, "output_indices_tensor", None) is not None:
        desc.require_same("Sizes", "OutputTensor", "OutputIndicesTensor")


def _check_average_pooling_grad(desc: Any) -> None:
    """AVERAGE_POOLING_GRAD: the forward rules, from OutputGradientTensor (forward input) to InputGradientTensor."""
    validate_pooling(
        desc,
        generic_window(desc),
        "OutputGradientTensor",
        desc.output_gradient_tensor,
        "InputGradientTensor",
        desc.input_gradient_tensor,
        gradient=False,
    )


def average_divisors(
    window: PoolingWindow, input_spatial: Sequence[int], output_spatial: Sequence[int], *, include_padding: bool
) -> NDArray[np.int64]:
    """AVERAGE_POOLING_GRAD's divisor of every window (``output_spatial``-shaped; DirectML 1.15.4, erratum E171).

    Per spatial dimension, the window of output ``o`` spans ``[o * Stride - StartPadding,
    ... + WindowSize)``; its count is the part inside the input ``[0, InputSize)``, or
    with IncludePadding the part inside the padded input ``[-StartPadding, InputSize +
    EndPadding)`` (the forward AVERAGE_POOLING divides by ``prod(WindowSize)`` instead,
    also for windows past EndPadding). The divisor is the product over the dimensions.
    """
    divisor = np.ones((), dtype=np.int64)
    for n, m, s, k, a, e in zip(
        input_spatial, output_spatial, window.strides, window.window_size, window.start_padding, window.end_padding
    ):
        start = np.arange(m, dtype=np.int64) * s - a
        lo, hi = (-a, n + e) if include_padding else (0, n)
        count = np.clip(np.minimum(start + k, hi) - np.maximum(start, lo), 0, None)
        divisor = np.multiply.outer(divisor, count)
    return divisor


INDEX_BITS = 32
"""DirectML 1.15.4's MAX_UNPOOLING reads an index's low 32 bits (UINT64 included; erratum E170)."""


def unpooling_targets(desc: Any, indices: NDArray[Any], values: NDArray[Any]) -> tuple[NDArray[np.int64], NDArray[Any]]:
    """MAX_UNPOOLING's writes: ``(flat output element, value)`` of every input element that writes.

    Each index is taken modulo 2^32 (erratum E170) and counts over the whole logical
    OutputTensor, row-major; one at or past its element count writes nothing. Raises
    :class:`~dmlops.errors.DataIndexError` for duplicate indices whose values differ in
    their bits: the page leaves their result undefined (see the module docstring).
    """
    flat = np.asarray(indices).reshape(-1).astype(np.uint64) & np.uint64((1 << INDEX_BITS) - 1)
    data = np.asarray(values).reshape(-1)
    keep = flat < np.uint64(desc.output_tensor.element_count)
    target, data = flat[keep].astype(np.int64), data[keep]
    order = np.argsort(target, kind="stable")
    target, data = target[order], data[order]
    bits = data.view(f"u{data.itemsize}")
    clash = np.flatnonzero((target[1:] == target[:-1]) & (bits[1:] != bits[:-1]))
    if clash.size:
        where = int(target[clash[0]])
        raise DataIndexError(
            f"{desc.dml_name}.IndicesTensor: output element {where} is written by several input elements with "
            f"different values ({data[clash[0]]!r}, {data[clash[0] + 1]!r}); the page leaves the result undefined "
            "(dmlops refuses it)"
        )
    return target, data


def _check_max_unpooling(desc: Any) -> None:
    """MAX_UNPOOLING: one index per input element (OutputTensor's sizes are free)."""
    desc.require_same("Sizes", "InputTensor", "IndicesTensor")


_RULES: dict[str, Any] = {
    **dict.fromkeys(GENERIC_OPERATORS, _check_forward_pooling),
    "AVERAGE_POOLING_GRAD": _check_average_pooling_grad,
    "MAX_UNPOOLING": _check_max_unpooling,
}


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The operator rules of the family's generic descs (beyond the catalogue's; see ``GENERIC_OPERATORS``).

    The six forward operators follow MAX_POOLING2 (:func:`validate_pooling`, forward),
    which DirectML 1.15.4's CreateOperator agrees with for all six: DimensionCount must
    equal InputTensor.DimensionCount - 2 and OutputTensor's N and C InputTensor's (both
    rejected by CreateOperator); any spatial output size, any P, and zeros in Strides,
    WindowSize and Dilations are accepted. MAX_POOLING1: OutputIndicesTensor has the
    Sizes of OutputTensor. AVERAGE_POOLING_GRAD and MAX_UNPOOLING: see the module docstring.
    """
    _RULES[desc.operator_type.name](desc)
