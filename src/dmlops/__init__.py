"""dmlops: DirectML's operator semantics, exactly, in Python.

>>> import numpy as np, dmlops
>>> x = np.array([11, 12, 13, 14], dtype=np.float32)
>>> dmlops.gather(x, np.array([3, 1, 3, 0, 2], dtype=np.uint32), axis=0)
array([14., 12., 14., 11., 13.], dtype=float32)

``import dmlops`` imports only the standard library and NumPy; operator modules
and backends load on first use.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from .backends import BACKENDS, DEFAULT_BACKEND, execute
from .descs import REGISTRY, OperatorDesc, desc_class, desc_from_json
from .enums import (
    AxisDirection,
    FeatureLevel,
    InterpolationMode,
    OperatorType,
    ReduceFunction,
    TensorDataType,
    TensorFlags,
)
from .errors import (
    AllocationError,
    ArgumentTypeError,
    ArgumentValueError,
    BackendUnavailableError,
    DataIndexError,
    DescParseError,
    DescTypeError,
    DmlError,
    InvalidDescError,
    TensorMismatchError,
    UnknownEnumValueError,
    UnknownFeatureLevelError,
    UnknownFieldWarning,
    UnsupportedError,
)
from .tensor import TensorDesc, calc_buffer_tensor_size

__version__ = "0.1.0"

# name -> (module, attribute), imported on first access so that `import dmlops`
# stays cheap and loads no operator it is not asked for.
_LAZY: dict[str, tuple[str, str]] = {
    **{
        f: ("ops.data_movement", f)
        for f in (
            "gather slice1 cast slice slice_grad join split padding padding1 tile fill_value_constant "
            "fill_value_sequence depth_to_space depth_to_space1 space_to_depth space_to_depth1 "
            "gather_elements gather_nd gather_nd1 scatter_elements scatter_nd one_hot reverse_subsequences "
            "diagonal_matrix diagonal_matrix1 nonzero_coordinates"
        ).split()
    },
    **{
        f: ("ops.pooling", f)
        for f in (
            "max_pooling2 max_pooling_grad max_pooling max_pooling1 average_pooling average_pooling1 "
            "lp_pooling lp_pooling1 average_pooling_grad max_unpooling"
        ).split()
    },
    **{
        f: ("ops.resampling", f)
        for f in "resample2 resample_grad1 resample resample1 upsample_2d resample_grad value_scale_2d".split()
    },
    **{f: ("ops.roi", f) for f in "roi_align roi_align1 roi_pooling roi_align_grad".split()},
    "random_generator": ("ops.random", "random_generator"),
    **{
        f: ("ops.reduction", f)
        for f in "reduce argmax argmin cumulative_summation cumulative_product top_k top_k1".split()
    },
    **{cls: (f"descs.{module}", cls) for module, cls in REGISTRY.values()},
}


def __getattr__(name: str) -> Any:
    entry = _LAZY.get(name)
    # A submodule's name falls through to the import system (``from dmlops import catalogue``
    # before it is imported must not build the element-wise functions, which need it).
    if entry is None and not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is None:
        # the element-wise family's functions are made from a table (ops/elementwise.py)
        if name in importlib.import_module(f"{__name__}.ops.elementwise").FUNCTIONS:
            entry = ("ops.elementwise", name)
    if entry is None:
        raise AttributeError(f"module 'dmlops' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{entry[0]}"), entry[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "BACKENDS",
    "AllocationError",
    "ArgumentTypeError",
    "ArgumentValueError",
    "DEFAULT_BACKEND",
    "AxisDirection",
    "BackendUnavailableError",
    "DataIndexError",
    "DescParseError",
    "DescTypeError",
    "DmlError",
    "FeatureLevel",
    "InterpolationMode",
    "InvalidDescError",
    "OperatorDesc",
    "OperatorType",
    "REGISTRY",
    "ReduceFunction",
    "TensorDataType",
    "TensorDesc",
    "TensorFlags",
    "TensorMismatchError",
    "UnknownEnumValueError",
    "UnknownFeatureLevelError",
    "UnknownFieldWarning",
    "UnsupportedError",
    "calc_buffer_tensor_size",
    "desc_class",
    "desc_from_json",
    "execute",
    *_LAZY,
]
