"""Helpers shared by the functional wrappers in :mod:`dmlops.ops`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..backends import DEFAULT_BACKEND, execute
from ..descs._base import OperatorDesc
from ..enums import FeatureLevel, TensorDataType
from ..errors import TensorMismatchError
from ..tensor import TensorDesc


def data_type_of(array: Any, what: str) -> TensorDataType:
    """DML data type of a NumPy/CuPy array or a torch tensor (by dtype name)."""
    dtype = getattr(array, "dtype", None)
    if dtype is None:
        array = np.asarray(array)
        dtype = array.dtype
    try:
        return TensorDataType.from_numpy(dtype)
    except TypeError:
        # torch dtypes are not NumPy dtypes: "torch.float32" -> "float32"
        return TensorDataType.from_numpy(str(dtype).removeprefix("torch."))
    except ValueError as exc:
        raise TensorMismatchError(f"{what}: {exc}") from None


def tensor_of(array: Any, what: str) -> TensorDesc:
    """A packed TensorDesc with the array's shape and data type."""
    shape = tuple(int(s) for s in getattr(array, "shape", np.shape(array)))
    return TensorDesc(data_type=data_type_of(array, what), sizes=shape)


def run_single_output(
    desc: OperatorDesc,
    inputs: Mapping[str, Any],
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
    strict: bool = False,
    output_member: str = "OutputTensor",
) -> Any:
    """Execute ``desc`` and return its one output array."""
    outputs = None if out is None else {output_member: out}
    result = execute(desc, inputs, backend=backend, feature_level=feature_level, outputs=outputs, strict=strict)
    return result[output_member]
