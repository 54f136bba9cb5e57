"""SLICE1 on the CPU: one strided view of the input, copied into the output view.

The copy is NumPy's (``np.copyto`` of a negative/positive-stride view), split over
threads for large strided copies; bit-exact for every type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numpy.typing import NDArray

from ..descs.slice1 import Slice1Desc
from ..enums import FeatureLevel
from ._copy import copy_into


def window_view(desc: Slice1Desc, x: NDArray[Any]) -> NDArray[Any]:
    """``Input[CopyStart + InputWindowStrides * o]`` for every output coordinate ``o``, as a view."""
    index = tuple(
        slice(start, start + stride * n if start + stride * n >= 0 else None, stride)
        for start, stride, n in zip(desc.copy_start(), desc.input_window_strides, desc.output_tensor.sizes)
    )
    return x[index]


def run(
    desc: Slice1Desc,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Copy the window into ``outputs["OutputTensor"]``."""
    copy_into(outputs["OutputTensor"], window_view(desc, inputs["InputTensor"]))
