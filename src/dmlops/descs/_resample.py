"""What RESAMPLE2 and RESAMPLE_GRAD1 share: support tables, rules, coordinate mapping.

Both structs carry the same parameters (InterpolationMode, RoundingDirection,
DimensionCount, Scales, InputPixelOffsets, OutputPixelOffsets) and describe the same
linear map; RESAMPLE_GRAD1 applies its transpose. The helpers here take plain values
so that each desc keeps its own member names (InputTensor vs InputGradientTensor).

Coordinate mapping (ruling 9; spec section 2.1), per dimension ``d`` and output index
``o`` of the *forward* resample::

    x(o) = (o - OutputPixelOffsets[d]) / Scales[d] - InputPixelOffsets[d]

dmlops evaluates it in **float32**, one correctly rounded IEEE operation at a time,
in exactly that order: the parameters are DML ``FLOAT`` members and a DirectML shader
works in 32-bit floats. The choice matters only where the exact quotient is an
integer that float32 and float64 round to different sides (for example 14 -> 2 with
Scales 1/7: float32 gives x(1) = 7.0, float64 gives 6.99999981). Every dmlops backend
must use the same float32 operations (no reciprocal multiply, no fused ops).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..enums import InterpolationMode
from ..enums import TensorDataType as T
from ._base import OperatorDesc, TensorSupport

FLOAT_TYPES = (T.FLOAT32, T.FLOAT16)
INT8_TYPES = (T.INT8, T.UINT8)
DIMENSIONS = (1, 4)

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
    def forward_output_sizes(self) -> tuple[int, ...]:
        """Sizes of the forward resample's output (defined by each desc)."""

    @abstractmethod
    def forward_pixel_offsets(self, d: int) -> tuple[float, float]:
        """The forward resample's (InputPixelOffset, OutputPixelOffset) along ``d`` (defined by each desc)."""

    @property
    def dimension_count(self) -> int:
        """``DimensionCount`` (derived from the arrays)."""
        return len(self.scales)

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
) -> None:
    """The rules the RESAMPLE2 and RESAMPLE_GRAD1 pages share.

    ``first``/``second`` are the tensor members (input first). Same DataType and
    DimensionCount on both tensors [DOC]; the operator's DimensionCount equals the
    tensors' [DOC]; Scales > 0 (+inf accepted, as DirectML) and offsets finite [INF, spec section 10.2].
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
        # DirectML 1.15.4's CreateOperator rejects 0, negative and NaN scales and accepts +inf
        # (every coordinate is then -InputPixelOffset; erratum E31).
        if not scale > 0:
            raise desc.invalid(f"Scales[{i}]", "must be > 0 (not NaN)", scale)
    for name, values in (("InputPixelOffsets", input_pixel_offsets), ("OutputPixelOffsets", output_pixel_offsets)):
        for i, value in enumerate(values):
            if not math.isfinite(value):
                raise desc.invalid(f"{name}[{i}]", "must be finite", value)


def input_coordinates(
    output_size: int, scale: float, input_pixel_offset: float, output_pixel_offset: float
) -> NDArray[np.float32]:
    """``x(o)`` for ``o in range(output_size)`` of one dimension, in float32.

    ``(o - OutputPixelOffset) / Scale - InputPixelOffset`` with each operation rounded
    to float32 (see the module notes). ``o`` is converted from an integer to float32
    first, as a shader converts its thread index. The quotient may overflow to +inf for
    tiny scales; callers clamp.
    """
    o = np.arange(output_size, dtype=np.int64).astype(np.float32)
    with np.errstate(over="ignore"):
        x: NDArray[np.float32] = (o - np.float32(output_pixel_offset)) / np.float32(scale) - np.float32(
            input_pixel_offset
        )
    return x


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
