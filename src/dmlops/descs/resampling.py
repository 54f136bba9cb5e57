"""Resampling descs and their semantics: RESAMPLE2, RESAMPLE_GRAD1 and their generic neighbours.

The family also *claims* RESAMPLE, RESAMPLE1 and UPSAMPLE_2D, which keep their generic
(catalogue-made) descs (:func:`claim`); each is computed as the RESAMPLE2 desc that
DirectML 1.15.4 computes the same (:func:`resample2_equivalent`), so they share every
rule below (E32-E34, E39). RESAMPLE_GRAD and VALUE_SCALE_2D are claimed for the ``numpy``
and ``directml`` backends, RESAMPLE3 for ``directml`` only, with their own rules, each checked against DirectML
1.15.4's CreateOperator (it wins where the pages are silent or say otherwise):

* RESAMPLE_GRAD (InputGradientTensor, OutputGradientTensor) and RESAMPLE3 (InputTensor,
  OutputTensor): RESAMPLE2's (:func:`validate_resample`): DimensionCount equals the
  tensors' DimensionCount, every Scales entry >= FLT_EPSILON or +inf (0, negatives,
  2^-24 and NaN rejected). Offsets may be anything, NaN included (CreateOperator
  accepts it; only the operators the reference computes keep NaN out). Tensor sizes
  are free: they need not be the input's times Scales (RESAMPLE3's page: cropped or
  clamped), nor N and C the same for RESAMPLE_GRAD. RESAMPLE3 accepts Antialiased with
  either InterpolationMode and any Scales (it only filters LINEAR downscales), and
  INT8 / UINT8 antialiased. RESAMPLE_GRAD computes RESAMPLE_GRAD1's transpose
  (:func:`resample_grad1_equivalent`: its offsets named after its own tensors, erratum
  E172; NEAREST_NEIGHBOR rounding RESAMPLE1's ``floor(x + 0.5)``). Its worked example (``[4, 5, 6]`` to
  ``[[9, 6], [0, 0]]``) needs InputPixelOffsets 0.5 and OutputPixelOffsets 0; with the
  pixel-centre offsets DirectML gives ``[[4, 11], [0, 0]]`` (erratum E150).
* VALUE_SCALE_2D: ChannelCount (the length of Bias) is 1 or 3 and equals
  InputTensor.Sizes[1]. Scale and Bias may be any float (0, negative, inf, NaN).
  DirectML 1.15.4 computes ``x * Scale + Bias[c]`` in float32 with two roundings
  (:func:`value_scale_terms`).

The desc classes (:class:`Resample2Desc`, :class:`ResampleGrad1Desc`) and the rules every
backend reads: the float32 coordinate mapping, DirectML's LINEAR taps
(:meth:`ResampleParameters.linear_axes`) and the tap tables (:func:`desc_taps`,
:func:`nearest_taps`, :func:`coordinate_taps`).

Shared rules
------------
What RESAMPLE2 and RESAMPLE_GRAD1 share: support tables, rules, coordinate mapping.

Both structs carry the same parameters (InterpolationMode, RoundingDirection,
DimensionCount, Scales, InputPixelOffsets, OutputPixelOffsets) and describe the same
linear map; RESAMPLE_GRAD1 applies its transpose. The helpers here take plain values
so that each desc keeps its own member names (InputTensor vs InputGradientTensor).

Coordinate mapping (ruling 9; spec section 2.1), per dimension ``d`` and output index
``o`` of the *forward* resample::

    x(o) = (o - OutputPixelOffsets[d]) / Scales[d] - InputPixelOffsets[d]

dmlops evaluates it as DirectML 1.15.4 does (erratum E34): in **float32**, one
correctly rounded IEEE operation at a time, with the division done as a multiply by the
float32 reciprocal, ``(o - OutputPixelOffset) * (1 / Scale) - InputPixelOffset``. The
choice matters only where the exact quotient is an integer or a tie that the two
roundings put on different sides (146 of 150 such NEAREST probes follow the reciprocal,
1 the division; the rest are the stack's negative-index artefact and one rounding of the
device's reciprocal). Every dmlops backend uses these host-computed float32 values.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..enums import AxisDirection, FeatureLevel, InterpolationMode, OperatorType
from ..enums import TensorDataType as T
from ..tensor import TensorDesc
from ._base import OperatorDesc, TensorSupport, attr_field, family_claim, tensor_field

# -- Shared helpers ------------------------------------------------------------

FLOAT_TYPES = (T.FLOAT32, T.FLOAT16)
INT8_TYPES = (T.INT8, T.UINT8)
DIMENSIONS = (1, 4)

MIN_SCALE = 2.0**-23
"""The smallest Scales entry DirectML 1.15.4 accepts: FLT_EPSILON (probed: 1.1920929e-07 passes, the
float32 below it is rejected, for both operators). The quotient ``(o - offset) / Scale`` therefore
never overflows float32."""

RESAMPLE_ARRAYS = ("Scales", "InputPixelOffsets", "OutputPixelOffsets")
"""The three arrays DimensionCount sizes."""

DEFAULT_INPUT_PIXEL_OFFSET = 0.5
DEFAULT_OUTPUT_PIXEL_OFFSET = -0.5
"""DirectMLX's defaults (``dml::Resample``/``dml::ResampleGrad``): pixel centres, ONNX half_pixel."""

_MODE_ALIASES = {"NEAREST": InterpolationMode.NEAREST_NEIGHBOR, "BILINEAR": InterpolationMode.LINEAR}


class ResampleParameters:
    """Members and methods RESAMPLE2 and RESAMPLE_GRAD1 share (mixed into both descs).

    Each desc defines ``forward_output_sizes`` (the sizes of the forward resample's
    output: OutputTensor for RESAMPLE2, InputGradientTensor for RESAMPLE_GRAD1).
    """

    scales: tuple[float, ...]
    input_pixel_offsets: tuple[float, ...]
    output_pixel_offsets: tuple[float, ...]

    @property
    @abstractmethod
    def forward_input_sizes(self) -> tuple[int, ...]:
        """Sizes of the forward resample's input (defined by each desc)."""

    @property
    @abstractmethod
    def forward_output_sizes(self) -> tuple[int, ...]:
        """Sizes of the forward resample's output (defined by each desc)."""

    @abstractmethod
    def forward_pixel_offsets(self, d: int) -> tuple[float, float]:
        """The forward resample's (InputPixelOffset, OutputPixelOffset) along ``d`` (defined by each desc)."""

    @property
    def dimension_count(self) -> int:
        """``DimensionCount`` (derived from the arrays)."""
        return len(self.scales)

    def linear_axes(self) -> list[LinearAxis]:
        """DirectML's LINEAR taps of every dimension (see :func:`linear_axes`)."""
        return linear_axes(
            self.forward_input_sizes,
            self.forward_output_sizes,
            self.scales,
            [self.forward_pixel_offsets(d) for d in range(self.dimension_count)],
        )

    def input_coordinates(self, d: int) -> NDArray[np.float32]:
        """The forward's float32 input coordinate ``x(o)`` of every forward output index along ``d``."""
        return input_coordinates(self.forward_output_sizes[d], self.scales[d], *self.forward_pixel_offsets(d))


def rows(first: str, second: str, types: Sequence[T]) -> dict[str, TensorSupport]:
    """One support-table level: the same row for both tensors (1 to 4 dimensions)."""
    row = TensorSupport.of(DIMENSIONS, *types)
    return {first: row, second: row}


def validate_resample(
    desc: OperatorDesc,
    first: str,
    second: str,
    scales: Sequence[float],
    input_pixel_offsets: Sequence[float],
    output_pixel_offsets: Sequence[float],
    *,
    nan_offsets: bool = False,
) -> None:
    """The rules the RESAMPLE2 and RESAMPLE_GRAD1 pages share.

    ``first``/``second`` are the tensor members (input first). Same DataType and
    DimensionCount on both tensors [DOC]; the operator's DimensionCount equals the
    tensors' [DOC]; Scales >= FLT_EPSILON (+inf accepted, as DirectML); offsets not NaN (+-inf
    accepted, as DirectML; NaN kept out: see below) [INF, spec section 10.2], unless
    ``nan_offsets`` (the directml-only operators: CreateOperator accepts NaN).
    Enum members are checked when the desc is built (an unknown value never gets
    this far).
    """
    desc.require_same("DataType", first, second)
    desc.require_same("DimensionCount", first, second)
    dims = desc.tensor(first).dimension_count
    count = len(scales)
    if count != dims:
        raise desc.invalid("DimensionCount", f"must match {first}.DimensionCount ({dims})", count)
    for i, scale in enumerate(scales):
        # DirectML 1.15.4's CreateOperator rejects NaN and every scale below FLT_EPSILON
        # (2^-23, 0 and negatives included) and accepts +inf (every coordinate is then
        # -InputPixelOffset; erratum E31).
        if not scale >= MIN_SCALE:
            raise desc.invalid(f"Scales[{i}]", f"must be >= FLT_EPSILON ({MIN_SCALE!r}, 2^-23) and not NaN", scale)
    for name, values in (("InputPixelOffsets", input_pixel_offsets), ("OutputPixelOffsets", output_pixel_offsets)):
        for i, value in enumerate(values):
            # DirectML 1.15.4 accepts +-inf and NaN. An infinite offset gives infinite (or,
            # against another infinity, NaN) coordinates that the float32 arithmetic below
            # follows, as DirectML's does. A NaN offset makes every coordinate NaN, and all
            # DirectML then computes hangs on converting NaN to an integer (a nearest index,
            # a gradient range, an INT8 value), which this oracle's lavapipe does as
            # 0xFFFFFFFF where D3D12 defines 0: not observable, so still rejected.
            if math.isnan(value) and not nan_offsets:
                raise desc.invalid(f"{name}[{i}]", "must not be NaN (+-inf is accepted)", value)


def input_coordinates(
    output_size: int, scale: float, input_pixel_offset: float, output_pixel_offset: float, *, divide: bool = False
) -> NDArray[np.float32]:
    """``x(o)`` for ``o in range(output_size)`` of one dimension, in float32.

    ``(o - OutputPixelOffset) * (1 / Scale) - InputPixelOffset`` with each operation
    rounded to float32 (see the module notes). ``o`` is converted from an integer to
    float32 first, as a shader converts its thread index. With ``divide`` the quotient
    is a float32 division (UPSAMPLE_2D's shader: :func:`quotient`).
    """
    o = np.arange(output_size, dtype=np.int64).astype(np.float32)
    with np.errstate(over="ignore"):
        x: NDArray[np.float32] = quotient(o - np.float32(output_pixel_offset), scale, divide) - np.float32(
            input_pixel_offset
        )
    return x


def quotient(numerator: NDArray[np.float32], scale: float, divide: bool) -> NDArray[np.float32]:
    """``numerator / Scale`` in float32: times the float32 reciprocal (RESAMPLE*), or divided (UPSAMPLE_2D).

    DirectML 1.15.4's UPSAMPLE_2D divides (18 of 18 LINEAR outputs of a 3x upsample; the
    reciprocal 12): (o + 0.5) / 3 is not (o + 0.5) * float32(1 / 3).
    """
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if divide:
            return np.asarray(numerator / np.float32(scale), dtype=np.float32)
        return np.asarray(numerator * reciprocal(scale), dtype=np.float32)


def reciprocal(scale: float) -> np.float32:
    """``1 / Scale`` in float32: DirectML multiplies by it rather than dividing (erratum E34)."""
    with np.errstate(divide="ignore", over="ignore"):
        return np.float32(1.0) / np.float32(scale)


@dataclass(frozen=True)
class LinearAxis:
    """DirectML's LINEAR taps of one dimension, for every forward output index.

    The value along one dimension is ``a + (b - a) * weight`` in float32 with
    ``a = x[first]`` and ``b = x[second]``; an axis that does not ``interpolate`` reads
    ``x[first]`` as it is.
    """

    first: NDArray[np.intp]
    second: NDArray[np.intp]
    weight: NDArray[np.float32]
    interpolates: bool


def vector_lanes(output_size: int) -> int:
    """How many consecutive outputs one DirectML 1.15.4 RESAMPLE2 LINEAR thread computes along its vector dimension.

    Probed on 1-D outputs of 1 to 40, 48, 63 to 65, 100, 127 to 129, 200, 256, 257, 512
    and 1000 elements: 8 for sizes that are multiples of 8 or at least 16, 4 for
    multiples of 4 or sizes of at least 8, else 1 (one output per thread). Only the
    first lane of each group takes the quotient rule (see :func:`linear_taps`).
    """
    if output_size % 8 == 0 or output_size >= 16:
        return 8
    if output_size % 4 == 0 or output_size >= 8:
        return 4
    return 1


def linear_taps(
    input_size: int,
    output_size: int,
    scale: float,
    input_pixel_offset: float,
    output_pixel_offset: float,
    lanes: int = 1,
    *,
    divide: bool = False,
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float32]]:
    """DirectML 1.15.4's RESAMPLE2 LINEAR tap rule along one dimension (erratum E32): (first, second, weight).

    DirectML splits the quotient ``q = (o - OutputPixelOffset) / Scale`` (float32) into
    ``floor(q)`` and ``frac(q)`` and takes the first tap ``i0 = floor(q) - (frac(q) <
    InputPixelOffset)``, with weight ``t = x - i0`` (``x = q - InputPixelOffset``). While
    InputPixelOffset lies in [0, 1) that is the page's ``floor(x)`` and ``frac(x)``;
    otherwise ``t`` leaves [0, 1) and the value is an extrapolation from the pair of taps
    (InputPixelOffset -1.5 on [2, 126, -2, ...] gives 2 + 124 * 1.5 = 188 at o = 0). The
    taps are then clamped into the input. Every operation is float32, as in the shader;
    a quotient that overflows (a tiny Scale) gives weight NaN, as float32 arithmetic does.

    With ``lanes`` > 1 (the dimension DirectML vectorises, :func:`vector_lanes`), only
    outputs ``o`` with ``o % lanes == 0`` take the quotient rule; the others take the
    page's ``i0 = floor(x)``, ``t = x - i0`` (so an infinite ``x`` gives weight NaN there).
    The two differ only where InputPixelOffset lies outside [0, 1).
    """
    o = np.arange(output_size, dtype=np.int64).astype(np.float32)
    ipo = np.float32(input_pixel_offset)
    with np.errstate(over="ignore", invalid="ignore"):
        q = quotient(o - np.float32(output_pixel_offset), scale, divide)
        x = q - ipo
        whole = np.floor(q)
        i0 = whole - (q - whole < ipo).astype(np.float32)
        if lanes > 1:
            i0 = np.where(np.arange(output_size) % lanes == 0, i0, np.floor(x)).astype(np.float32)
        t = (x - i0).astype(np.float32)
    # Clamping the float first keeps an overflowed (infinite) first tap defined.
    i0 = np.clip(np.nan_to_num(i0, nan=0.0), -1.0, float(input_size))
    last = input_size - 1
    first = np.clip(i0, 0, last).astype(np.intp)
    second = np.clip(i0 + 1, 0, last).astype(np.intp)
    return first, second, t


def coordinate_taps(
    input_size: int, output_size: int, scale: float, input_pixel_offset: float, output_pixel_offset: float
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """The page's LINEAR taps along one dimension, which RESAMPLE_GRAD1 uses: (i0, t), i0 unclamped.

    ``i0 = floor(x)``, ``t = x - i0`` (exact) with ``x`` the float32 coordinate. DirectML
    1.15.4's RESAMPLE_GRAD1 follows this rule even where its RESAMPLE2 takes the quotient
    rule of :func:`linear_taps` (erratum E32: 150 of 150 probes with offsets outside
    [0, 1) agree with it). ``x`` is limited to [-1, n] first: that changes no clamped tap.
    """
    x = np.clip(
        input_coordinates(output_size, scale, input_pixel_offset, output_pixel_offset), -1.0, input_size
    ).astype(np.float64)
    i0 = np.floor(x.astype(np.float64))
    return i0.astype(np.intp), x - i0


def is_identity_map(output_size: int, scale: float, input_pixel_offset: float, output_pixel_offset: float) -> bool:
    """Whether ``x(o) = o`` for every output index (Scale 1 and offsets that cancel, in float32).

    DirectML does not interpolate along such a dimension (it reads ``x[o]``, clamped),
    so an infinity there never spreads to a neighbour (erratum E33).
    """
    if np.float32(scale) != np.float32(1.0):
        return False  # (x / 1 and x * (1 / 1) are the same: no ``divide`` needed here)
    x = input_coordinates(output_size, scale, input_pixel_offset, output_pixel_offset)
    return bool(np.array_equal(x, np.arange(output_size, dtype=np.float32)))


def linear_axes(
    input_sizes: Sequence[int],
    output_sizes: Sequence[int],
    scales: Sequence[float],
    pixel_offsets: Sequence[tuple[float, float]],
    *,
    divide: bool = False,
) -> list[LinearAxis]:
    """DirectML's LINEAR resample of every dimension (the forward's sizes and offsets).

    Measured on DirectML 1.15.4 (erratum E33): the dimensions are interpolated one after
    the other, the first (outermost) first, as ``a + (b - a) * t`` in float32, which gives
    NaN where a tap pair holds an infinity (``inf + (b - inf) * t``) and overflows near
    FLT_MAX; a dimension whose map is the identity (:func:`is_identity_map`) is not
    interpolated (it reads the first tap). When every dimension is an identity map,
    DirectML still interpolates the first one, with its taps and weights (weight 0 while
    the offsets lie in [0, 1)).

    DirectML computes several consecutive outputs per thread along one dimension, and
    only the first of each group by the quotient rule (:func:`linear_taps`). dmlops takes
    that dimension to be the first: every 1-D output size probed (1 to 40 and beyond) and
    random 1- to 3-D descs (900 of 900, sizes up to 5 in, 19 out) agree, and 4-D ones 98.5%;
    some larger 3-D/4-D shapes vectorise another dimension instead (the second of
    (8, 9, 9); the second of 4-D outputs (., 4, ., .)), by a rule not yet characterised.
    """
    axes = []
    for d, (n_in, n_out, scale, (ipo, opo)) in enumerate(zip(input_sizes, output_sizes, scales, pixel_offsets)):
        lanes = vector_lanes(n_out) if d == 0 else 1
        first, second, weight = linear_taps(n_in, n_out, scale, ipo, opo, lanes, divide=divide)
        # An identity map is not interpolated: DirectML reads the first tap its rule names,
        # whatever the weight (o itself for offsets in [0, 1); o - 1 where the quotient
        # rule names it with weight 1: Scales {3, 1}, offsets {2.25, -0.5} / {-1.5, 0.5}
        # read columns [0, 0, 1, 2, ...]; o + 1 for offsets 2.25 / -2.25).
        axes.append(LinearAxis(first, second, weight, not is_identity_map(n_out, scale, ipo, opo)))
    if axes and not any(a.interpolates for a in axes):
        # With its own taps and weights: 0 for offsets in [0, 1), else as computed (Scale
        # 1, offsets -0.5 / 0.5 on [1, 10, 100] gives [1, 10, 100], weight 1 on o - 1, o).
        a = axes[0]
        axes[0] = LinearAxis(a.first, a.second, a.weight, True)
    return axes


def default_scales(input_sizes: Sequence[int], output_sizes: Sequence[int]) -> tuple[float, ...]:
    """DirectMLX's default Scales: ``float(outSize) / float(inSize)`` per dimension, in float32."""
    return tuple(float(np.float32(o) / np.float32(i)) for i, o in zip(input_sizes, output_sizes))


def parse_interpolation_mode(value: Any) -> Any:
    """Accept ``"nearest"``/``"bilinear"`` as aliases; anything else is left to the desc."""
    if isinstance(value, str):
        return _MODE_ALIASES.get(value.upper(), value)
    return value


def parameter_fields(
    forward_input_sizes: Sequence[int],
    forward_output_sizes: Sequence[int],
    *,
    interpolation_mode: Any,
    rounding_direction: Any,
    scales: Sequence[float] | None,
    input_pixel_offsets: Sequence[float] | None,
    output_pixel_offsets: Sequence[float] | None,
    gradient: bool = False,
) -> dict[str, Any]:
    """The five parameter fields of a RESAMPLE2/RESAMPLE_GRAD1 desc, with DirectMLX's defaults.

    Scales default to out/in in float32 and the offsets to pixel centres: 0.5 / -0.5
    for the forward. RESAMPLE_GRAD1 names its offsets after its own tensors (erratum
    E25), so with ``gradient`` the defaults are the forward's swapped, -0.5 / 0.5: the
    gradient of the default forward. Values are coerced and checked by the desc itself.
    """
    dims = len(forward_output_sizes)
    default_input, default_output = DEFAULT_INPUT_PIXEL_OFFSET, DEFAULT_OUTPUT_PIXEL_OFFSET
    if gradient:
        default_input, default_output = default_output, default_input
    return {
        "interpolation_mode": parse_interpolation_mode(interpolation_mode),
        "rounding_direction": rounding_direction,
        "scales": tuple(scales) if scales is not None else default_scales(forward_input_sizes, forward_output_sizes),
        "input_pixel_offsets": (
            tuple(input_pixel_offsets) if input_pixel_offsets is not None else (default_input,) * dims
        ),
        "output_pixel_offsets": (
            tuple(output_pixel_offsets) if output_pixel_offsets is not None else (default_output,) * dims
        ),
    }


# -- RESAMPLE2 -----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Resample2Desc(ResampleParameters, OperatorDesc):
    """Resamples every dimension of a tensor by nearest-neighbour or linear interpolation.

    For each dimension ``d`` and output index ``o`` the input coordinate is
    ``x = (o - OutputPixelOffsets[d]) / Scales[d] - InputPixelOffsets[d]``, evaluated in
    float32 (see :mod:`dmlops.descs.resampling`).

    * NEAREST_NEIGHBOR: index ``floor(x)`` for RoundingDirection DECREASING, ``ceil(x)``
      for INCREASING, clamped to ``[0, n - 1]``.
    * LINEAR: ``i0 = floor(x)``, ``f = x - i0``; taps ``clamp(i0)`` with weight ``1 - f``
      and ``clamp(i0 + 1)`` with weight ``f``; the N-D result is the separable product over
      all dimensions. RoundingDirection has no effect.

    Attributes
    ----------
    input_tensor : TensorDesc
        ``InputTensor``.
    output_tensor : TensorDesc
        ``OutputTensor``; same DataType and DimensionCount as the input, any sizes.
    interpolation_mode : InterpolationMode
        ``InterpolationMode``.
    rounding_direction : AxisDirection
        ``RoundingDirection`` (nearest-neighbour only).
    scales : tuple of float
        ``Scales``, output/input size ratio per dimension; finite and > 0.
    input_pixel_offsets, output_pixel_offsets : tuple of float
        ``InputPixelOffsets``/``OutputPixelOffsets``; 0.5 / -0.5 select pixel centres.

    Notes
    -----
    Introduced in DML_FEATURE_LEVEL_5_1 (1 to 4 dimensions, FLOAT32/FLOAT16); INT8 and
    UINT8 from 6_2. Integer outputs are computed in float64 and rounded half to even,
    then saturated (the weights are convex, so saturation never triggers).

    The page's remark that NEAREST_NEIGHBOR with DECREASING equals RESAMPLE1 "with
    OutputPixelOffsets adjusted an additional -0.5" holds only for Scales 1; the exact
    statement is InputPixelOffsets -0.5 (erratum E13).

    A tap whose weight is exactly 0 is not read, so an output that falls exactly on an
    input element copies it even when a neighbour is Inf or NaN (identity resampling is
    a copy). DirectML's behaviour there is undocumented.

    References
    ----------
    NS:directml.DML_RESAMPLE2_OPERATOR_DESC
    """

    dml_name: ClassVar[str] = "DML_RESAMPLE2_OPERATOR_DESC"
    operator_type: ClassVar[OperatorType] = OperatorType.RESAMPLE2
    introduced: ClassVar[FeatureLevel] = FeatureLevel.V5_1
    family: ClassVar[str] = "resampling"
    count_members: ClassVar[dict[str, tuple[str, ...]]] = {"DimensionCount": RESAMPLE_ARRAYS}
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V5_1: rows("InputTensor", "OutputTensor", FLOAT_TYPES),
        FeatureLevel.V6_2: rows("InputTensor", "OutputTensor", (*FLOAT_TYPES, *INT8_TYPES)),
    }

    input_tensor: TensorDesc = tensor_field("InputTensor", "input")
    output_tensor: TensorDesc = tensor_field("OutputTensor", "output")
    interpolation_mode: InterpolationMode = attr_field("InterpolationMode", "enum", enum=InterpolationMode)
    rounding_direction: AxisDirection = attr_field("RoundingDirection", "enum", enum=AxisDirection)
    scales: tuple[float, ...] = attr_field("Scales", "float_array")
    input_pixel_offsets: tuple[float, ...] = attr_field("InputPixelOffsets", "float_array")
    output_pixel_offsets: tuple[float, ...] = attr_field("OutputPixelOffsets", "float_array")

    @property
    def forward_input_sizes(self) -> tuple[int, ...]:
        """Sizes of the tensor being resampled (``InputTensor.Sizes``)."""
        return self.input_tensor.sizes

    @property
    def forward_output_sizes(self) -> tuple[int, ...]:
        """Sizes of the resampled tensor (``OutputTensor.Sizes``)."""
        return self.output_tensor.sizes

    def forward_pixel_offsets(self, d: int) -> tuple[float, float]:
        """``(InputPixelOffsets[d], OutputPixelOffsets[d])``: this desc is the forward."""
        return self.input_pixel_offsets[d], self.output_pixel_offsets[d]

    def _validate(self, level: FeatureLevel) -> None:
        validate_resample(
            self, "InputTensor", "OutputTensor", self.scales, self.input_pixel_offsets, self.output_pixel_offsets
        )


# -- RESAMPLE_GRAD1 ------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ResampleGrad1Desc(ResampleParameters, OperatorDesc):
    """Backpropagation of :class:`~dmlops.descs.resampling.Resample2Desc`.

    The exact transpose of the forward map with the *forward's* parameters:
    ``OutputGradient[i] = sum over o of w(o, i) * InputGradient[o]``, where ``w(o, i)`` is
    the weight RESAMPLE2 gives input element ``i`` in output element ``o`` (nearest: 1
    for the selected index; linear: the product of the per-dimension tap weights).
    Clamped taps accumulate on the edge element; elements no output reads get 0.

    Attributes
    ----------
    input_gradient_tensor : TensorDesc
        ``InputGradientTensor``, sized like the forward *output*.
    output_gradient_tensor : TensorDesc
        ``OutputGradientTensor``, sized like the forward *input*; same DataType and
        DimensionCount as InputGradientTensor.
    interpolation_mode : InterpolationMode
        ``InterpolationMode`` of the forward resample.
    rounding_direction : AxisDirection
        ``RoundingDirection`` of the forward resample (nearest-neighbour only).
    scales : tuple of float
        ``Scales`` of the forward resample (forward output/input), finite and > 0.
    input_pixel_offsets : tuple of float
        ``InputPixelOffsets``: the pixel offsets of InputGradientTensor, i.e. the
        forward's ``OutputPixelOffsets``.
    output_pixel_offsets : tuple of float
        ``OutputPixelOffsets``: the pixel offsets of OutputGradientTensor, i.e. the
        forward's ``InputPixelOffsets``.

    Notes
    -----
    Introduced in DML_FEATURE_LEVEL_5_1: 1 to 4 dimensions, FLOAT32/FLOAT16 only at
    every level; the forward's INT8/UINT8 support from 6_2 does not extend here
    (erratum E15).

    The page's example gives no offsets or RoundingDirection; it reproduces with
    DECREASING, Scales {0.5, 1.5} and the half-pixel offsets of either naming, and not
    with DirectMLX's INCREASING default (erratum E14). The remark's "OutputPixelOffsets
    adjusted an additional -0.5" is exact only for Scales 1 (erratum E13).

    Unlike the page, which says the parameters are the forward's, DirectML 1.15.4 names
    the two offsets after this operator's own tensors (erratum E25, overturning ruling 9
    for the grad): the gradient of a RESAMPLE2 with InputPixelOffsets ``a`` and
    OutputPixelOffsets ``b`` is this operator with InputPixelOffsets ``b`` and
    OutputPixelOffsets ``a`` (same Scales, mode and RoundingDirection).

    References
    ----------
    NS:directml.DML_RESAMPLE_GRAD1_OPERATOR_DESC
    """

    dml_name: ClassVar[str] = "DML_RESAMPLE_GRAD1_OPERATOR_DESC"
    operator_type: ClassVar[OperatorType] = OperatorType.RESAMPLE_GRAD1
    introduced: ClassVar[FeatureLevel] = FeatureLevel.V5_1
    family: ClassVar[str] = "resampling"
    count_members: ClassVar[dict[str, tuple[str, ...]]] = {"DimensionCount": RESAMPLE_ARRAYS}
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V5_1: rows("InputGradientTensor", "OutputGradientTensor", FLOAT_TYPES),
    }

    input_gradient_tensor: TensorDesc = tensor_field("InputGradientTensor", "input")
    output_gradient_tensor: TensorDesc = tensor_field("OutputGradientTensor", "output")
    interpolation_mode: InterpolationMode = attr_field("InterpolationMode", "enum", enum=InterpolationMode)
    rounding_direction: AxisDirection = attr_field("RoundingDirection", "enum", enum=AxisDirection)
    scales: tuple[float, ...] = attr_field("Scales", "float_array")
    input_pixel_offsets: tuple[float, ...] = attr_field("InputPixelOffsets", "float_array")
    output_pixel_offsets: tuple[float, ...] = attr_field("OutputPixelOffsets", "float_array")

    @property
    def forward_input_sizes(self) -> tuple[int, ...]:
        """Sizes of the forward resample's input (``OutputGradientTensor.Sizes``)."""
        return self.output_gradient_tensor.sizes

    @property
    def forward_output_sizes(self) -> tuple[int, ...]:
        """Sizes of the forward resample's output (``InputGradientTensor.Sizes``)."""
        return self.input_gradient_tensor.sizes

    def forward_pixel_offsets(self, d: int) -> tuple[float, float]:
        """The forward's ``(InputPixelOffset, OutputPixelOffset)``: this desc's two offsets swapped.

        DirectML names RESAMPLE_GRAD1's offsets after its own tensors: InputPixelOffsets
        belong to InputGradientTensor, on the forward's output side, and
        OutputPixelOffsets to OutputGradientTensor, on the forward's input side (DirectML
        1.15.4, measured; docs/errata.md).
        """
        return self.output_pixel_offsets[d], self.input_pixel_offsets[d]

    def _validate(self, level: FeatureLevel) -> None:
        validate_resample(
            self,
            "InputGradientTensor",
            "OutputGradientTensor",
            self.scales,
            self.input_pixel_offsets,
            self.output_pixel_offsets,
        )


# -- Semantics every backend reads: the tap tables ----------------------------

ResampleDesc = Resample2Desc | ResampleGrad1Desc
Weights = NDArray[np.float64]
Tap = tuple[NDArray[np.intp], Weights | None]
"""(input index per output index, weight per output index or None for weight 1)."""


def nearest_taps(coordinates: NDArray[np.float32], size: int, direction: AxisDirection) -> NDArray[np.intp]:
    """NEAREST_NEIGHBOR's input index for every output index: DECREASING = floor, INCREASING = ceil, clamped.

    Clamping the float first keeps +-inf coordinates (overflowed quotients) defined.
    """
    x = coordinates.astype(np.float64)
    rounded = np.floor(x) if direction is AxisDirection.DECREASING else np.ceil(x)
    return np.clip(rounded, 0, size - 1).astype(np.intp)


def desc_taps(desc: ResampleDesc) -> list[list[Tap]]:
    """The taps of every dimension of a RESAMPLE2 / RESAMPLE_GRAD1 desc, as weighted sums.

    One tap (weight None = 1) per output index for NEAREST_NEIGHBOR; for LINEAR two,
    ``clamp(i0)`` with ``1 - t`` and ``clamp(i0 + 1)`` with ``t`` by the page's rule
    (:func:`dmlops.descs.resampling.coordinate_taps`), which DirectML's RESAMPLE_GRAD1
    follows. The transpose and the cpu / cuda gradient tables read these; the forward
    LINEAR resample interpolates by DirectML's own rule instead
    (:meth:`~dmlops.descs.resampling.ResampleParameters.linear_axes`).
    """
    sizes = desc.forward_input_sizes
    taps: list[list[Tap]] = []
    for d in range(desc.dimension_count):
        last = sizes[d] - 1
        if desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR:
            taps.append([(nearest_taps(desc.input_coordinates(d), sizes[d], desc.rounding_direction), None)])
            continue
        i0, t = coordinate_taps(sizes[d], desc.forward_output_sizes[d], desc.scales[d], *desc.forward_pixel_offsets(d))
        taps.append([(np.clip(i0, 0, last), 1.0 - t), (np.clip(i0 + 1, 0, last), t)])
    return taps


# -- Generic neighbours: RESAMPLE, RESAMPLE1, UPSAMPLE_2D ---------------------------------------

FAMILY = "resampling"

GENERIC_OPERATORS: frozenset[str] = frozenset(("RESAMPLE", "RESAMPLE1", "UPSAMPLE_2D"))
"""The catalogue operators this family implements through their generic descs.

Rules DirectML 1.15.4 follows (probed on the ``directml`` backend):

* RESAMPLE1 NEAREST_NEIGHBOR picks ``floor(x + 0.5)`` (halves round up), clamped, with
  ``x`` RESAMPLE2's float32 coordinate: RESAMPLE2 with RoundingDirection DECREASING and
  InputPixelOffsets lowered by 0.5 (218 of 218 1-D probes whose index stays >= 0; the
  others are the stack's negative-index artefact). This is the exact form of the
  remark erratum E13 corrects. On INT8 / UINT8 tensors (FL 6_2) it picks ``floor(x)``
  instead (no half added). LINEAR is RESAMPLE2's, rule for rule.
* RESAMPLE is RESAMPLE1 with InputPixelOffsets 0.5 and OutputPixelOffsets -0.5.
* UPSAMPLE_2D is RESAMPLE with Scales 1 on every dimension but the last two, which
  take ScaleSize.Height and ScaleSize.Width (LINEAR on [1, 2, 3, 10] with Width 2:
  [1, 1.25, 1.75, 2.25, 2.75, 4.75, 8.25, 10]). CreateOperator requires ScaleSize
  entries >= 1 and OutputTensor.Sizes equal to InputTensor.Sizes with the last two
  multiplied by them (5-D: the depth is not scaled).
* Validation is RESAMPLE2's (:func:`validate_resample`): the count of Scales (and
  offsets) equals the tensors' DimensionCount, Scales >= FLT_EPSILON or +inf, offsets
  not NaN.
"""


NUMPY_OPERATORS: frozenset[str] = frozenset(("RESAMPLE_GRAD", "VALUE_SCALE_2D"))
"""The directml-checked operators the reference runs too (their rules and what DirectML computes: the
module docstring)."""

DIRECTML_OPERATORS: frozenset[str] = frozenset(("RESAMPLE3",))
"""The family's operators that only the ``directml`` backend runs (their rules: the module docstring)."""

VALUE_SCALE_CHANNELS = (1, 3)
"""The ChannelCount values VALUE_SCALE_2D accepts."""


EQUIVALENT_OPERATORS: frozenset[str] = frozenset(("RESAMPLE", "RESAMPLE1", "UPSAMPLE_2D", "RESAMPLE_GRAD"))
"""Generic operators the cpu and cuda backends run as their RESAMPLE2 / RESAMPLE_GRAD1 equivalent
(:func:`resample2_equivalent`, :func:`resample_grad1_equivalent`)."""


claim = family_claim(
    FAMILY,
    (EQUIVALENT_OPERATORS | {"VALUE_SCALE_2D"}, ("numpy", "cpu", "cuda", "directml")),
    (GENERIC_OPERATORS | NUMPY_OPERATORS, ("numpy", "directml")),
    (DIRECTML_OPERATORS, ("directml",)),
)


def generic_parameters(desc: Any) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """``(Scales, InputPixelOffsets, OutputPixelOffsets)`` of a RESAMPLE / RESAMPLE1 desc.

    RESAMPLE has no offsets: its page gives them as 0.5 / -0.5 (pixel centres). UPSAMPLE_2D
    is RESAMPLE with Scales 1 but on the last two dimensions (ScaleSize.Height, .Width).
    """
    if desc.operator_type.name == "UPSAMPLE_2D":
        dims = desc.input_tensor.dimension_count
        scales = (1.0,) * (dims - 2) + (float(desc.scale_size.height), float(desc.scale_size.width))
    else:
        scales = tuple(float(v) for v in desc.scales)
    if desc.operator_type.name in ("RESAMPLE", "UPSAMPLE_2D"):
        n = len(scales)
        return scales, (DEFAULT_INPUT_PIXEL_OFFSET,) * n, (DEFAULT_OUTPUT_PIXEL_OFFSET,) * n
    return (
        scales,
        tuple(float(v) for v in desc.input_pixel_offsets),
        tuple(float(v) for v in desc.output_pixel_offsets),
    )


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The operator rules of the family's generic descs (beyond the catalogue's).

    RESAMPLE and RESAMPLE1: RESAMPLE2's; the count member is ``ScaleCount`` for RESAMPLE,
    ``DimensionCount`` for RESAMPLE1. UPSAMPLE_2D: ScaleSize entries >= 1 and the output
    sizes they give (see ``GENERIC_OPERATORS``). RESAMPLE_GRAD, RESAMPLE3 and
    VALUE_SCALE_2D: see ``DIRECTML_OPERATORS``.
    """
    name = desc.operator_type.name
    if name in _TENSORS:
        validate_resample(
            desc, *_TENSORS[name], desc.scales, desc.input_pixel_offsets, desc.output_pixel_offsets, nan_offsets=True
        )
        return
    if name == "VALUE_SCALE_2D":
        _check_value_scale_2d(desc)
        return
    if name == "UPSAMPLE_2D":
        for name in ("Width", "Height"):
            value = int(getattr(desc.scale_size, name.lower()))
            if value < 1:
                raise desc.invalid(f"ScaleSize.{name}", "must be >= 1", value)
        in_sizes, out_sizes = desc.input_tensor.sizes, desc.output_tensor.sizes
        want = (*in_sizes[:-2], in_sizes[-2] * desc.scale_size.height, in_sizes[-1] * desc.scale_size.width)
        for i, (got, expected) in enumerate(zip(out_sizes, want)):
            if got != expected:
                raise desc.invalid(
                    f"OutputTensor.Sizes[{i}]",
                    f"must be {expected} (InputTensor.Sizes, the last two multiplied by ScaleSize.Height, .Width)",
                    got,
                )
        return
    scales, ipo, opo = generic_parameters(desc)
    dims = desc.input_tensor.dimension_count
    if len(scales) != dims:
        count = "ScaleCount" if desc.operator_type.name == "RESAMPLE" else "DimensionCount"
        raise desc.invalid(count, f"must match InputTensor.DimensionCount ({dims})", len(scales))
    validate_resample(desc, "InputTensor", "OutputTensor", scales, ipo, opo)


_TENSORS = {
    "RESAMPLE_GRAD": ("InputGradientTensor", "OutputGradientTensor"),
    "RESAMPLE3": ("InputTensor", "OutputTensor"),
}
"""The (input, output) tensor members of the directml-only resamples, which take RESAMPLE2's rules."""


def value_scale_terms(desc: Any) -> tuple[np.float32, NDArray[np.float32]]:
    """VALUE_SCALE_2D's ``(Scale, Bias)`` as float32, Bias shaped ``{1, C, 1, 1}`` to broadcast over InputTensor.

    DirectML 1.15.4 computes ``x * Scale + Bias[c]`` in float32, the product rounded
    before the addition (no fused multiply-add), for every element of channel ``c``.
    """
    bias = np.asarray(desc.bias, dtype=np.float32).reshape(1, -1, 1, 1)
    return np.float32(desc.scale), bias


def _check_value_scale_2d(desc: Any) -> None:
    channels = desc.counts()["ChannelCount"]
    if channels not in VALUE_SCALE_CHANNELS:
        raise desc.invalid("ChannelCount", "must be 1 or 3 (the number of Bias values)", channels)
    if channels != desc.input_tensor.sizes[1]:
        raise desc.invalid(
            "ChannelCount", f"must equal InputTensor.Sizes[1] ({desc.input_tensor.sizes[1]}, the channels)", channels
        )


def resample2_equivalent(desc: Any) -> Resample2Desc:
    """The RESAMPLE2 desc that computes what a RESAMPLE / RESAMPLE1 / UPSAMPLE_2D desc computes on DirectML 1.15.4.

    LINEAR: the same parameters (RoundingDirection has no effect). NEAREST_NEIGHBOR:
    ``floor(x + 0.5)`` = RESAMPLE2 DECREASING with InputPixelOffsets - 0.5 (float32),
    except on INT8 / UINT8 tensors, where DirectML 1.15.4 takes ``floor(x)`` (RESAMPLE2
    DECREASING with the same offsets: a 2x upsample of [1, 2, 3, 4] reads indices
    [-1, 0, 0, 1, 1, 2, 2, 3], FLOAT32 [0, 0, 1, 1, 2, 2, 3, 3]).
    """
    scales, ipo, opo = generic_parameters(desc)
    mode = InterpolationMode.from_any(desc.interpolation_mode)
    if mode is InterpolationMode.NEAREST_NEIGHBOR and desc.input_tensor.data_type not in INT8_TYPES:
        ipo = tuple(float(np.float32(v) - np.float32(0.5)) for v in ipo)
    cls = _DividingResample2 if desc.operator_type.name == "UPSAMPLE_2D" else Resample2Desc
    return cls(
        input_tensor=desc.input_tensor,
        output_tensor=desc.output_tensor,
        interpolation_mode=mode,
        rounding_direction=AxisDirection.DECREASING,
        scales=scales,
        input_pixel_offsets=ipo,
        output_pixel_offsets=opo,
    )


def resample_grad1_equivalent(desc: Any) -> ResampleGrad1Desc:
    """The RESAMPLE_GRAD1 desc that computes what a RESAMPLE_GRAD desc computes on DirectML 1.15.4.

    The offsets keep their names: like RESAMPLE_GRAD1 (erratum E25), RESAMPLE_GRAD names
    them after its own tensors, InputPixelOffsets on InputGradientTensor's side (the
    forward's output) and OutputPixelOffsets on OutputGradientTensor's (erratum E172;
    the page points to RESAMPLE1's members, the forward's naming). LINEAR is RESAMPLE_GRAD1's
    (200 of 200 probes). NEAREST_NEIGHBOR is the transpose of RESAMPLE1's ``floor(x + 0.5)``:
    RESAMPLE_GRAD1 DECREASING with OutputPixelOffsets (the forward's input offsets)
    lowered by 0.5 in float32, as :func:`resample2_equivalent` lowers RESAMPLE1's.
    """
    mode = InterpolationMode.from_any(desc.interpolation_mode)
    ipo = tuple(float(v) for v in desc.input_pixel_offsets)
    opo = tuple(float(v) for v in desc.output_pixel_offsets)
    if mode is InterpolationMode.NEAREST_NEIGHBOR:
        opo = tuple(float(np.float32(v) - np.float32(0.5)) for v in opo)
    return ResampleGrad1Desc(
        input_gradient_tensor=desc.input_gradient_tensor,
        output_gradient_tensor=desc.output_gradient_tensor,
        interpolation_mode=mode,
        rounding_direction=AxisDirection.DECREASING,
        scales=tuple(float(v) for v in desc.scales),
        input_pixel_offsets=ipo,
        output_pixel_offsets=opo,
    )


@dataclass(frozen=True, kw_only=True)
class _DividingResample2(Resample2Desc):
    """UPSAMPLE_2D as a RESAMPLE2: the quotient is a float32 division (see :func:`quotient`).

    And only the last two dimensions (H, W) are interpolated, always, H first: also with
    a ScaleSize entry of 1, where RESAMPLE2 would only read (E33), so an infinity or a
    ``b - a`` overflow beside the element read spreads NaN there too (a 1x1 upsample of
    [-FLT_MAX, FLT_MAX] gives [NaN, FLT_MAX]); the other dimensions are only read.
    """

    def linear_axes(self) -> list[LinearAxis]:
        """:meth:`ResampleParameters.linear_axes`, dividing, interpolating exactly H and W."""
        axes = linear_axes(
            self.forward_input_sizes,
            self.forward_output_sizes,
            self.scales,
            [self.forward_pixel_offsets(d) for d in range(self.dimension_count)],
            divide=True,
        )
        spatial = len(axes) - 2
        return [LinearAxis(a.first, a.second, a.weight, d >= spatial) for d, a in enumerate(axes)]

    def input_coordinates(self, d: int) -> NDArray[np.float32]:
        """:meth:`ResampleParameters.input_coordinates`, dividing."""
        return input_coordinates(
            self.forward_output_sizes[d], self.scales[d], *self.forward_pixel_offsets(d), divide=True
        )
