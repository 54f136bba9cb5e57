"""The CUDA backend: every dmlops operator on an NVIDIA GPU.

Kernels are CUDA C (``dmlops/cuda/kernels/*.cu``) compiled at run time by NVRTC (CuPy's
bindings, see :mod:`dmlops.cuda._compile`), one specialisation (data type, index type,
dimension count, vector width, index width) at a time, each compiled once and cached on
disk. Float32 arithmetic keeps subnormals (no flush-to-zero), as the reference does.

* Data movement (SLICE1, GATHER, MAX_POOLING2's values and indices, nearest RESAMPLE2)
  is bit-exact.
* Arithmetic runs in float32 for FLOAT16/FLOAT32 and float64 for FLOAT64 and integer
  outputs, rounded once (ruling 10); the gradients are written as gathers (no atomics),
  so results are identical from run to run.
* Inputs may be CuPy arrays, PyTorch CUDA tensors or any DLPack /
  ``__cuda_array_interface__`` producer (no copies), or NumPy arrays (copied to the
  device); see :mod:`dmlops.cuda._runtime`.
* An operator runs on the device that holds its device arrays (inputs and ``out=``
  arrays; all on one device, else TensorMismatchError), like a PyTorch op; with host
  arrays only, on CuPy's current device.

Asking for ``backend="cuda"`` where it cannot run raises
:class:`~dmlops.errors.BackendUnavailableError` with the reason; there is no fallback.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from ..descs._base import OperatorDesc
from ..enums import FeatureLevel
from ..errors import UnsupportedError
from . import _runtime


def availability() -> str | None:
    """None when the CUDA backend can run here, else why not (cached)."""
    return _runtime.availability()


_OPERATORS: dict[str, Any] = {}


def _operator(desc: OperatorDesc) -> Any:
    """The operator's ``run`` from its family module's ``OPERATORS`` table."""
    name = desc.operator_type.name
    impl = _OPERATORS.get(name)
    if impl is None:
        try:
            impl = importlib.import_module(f"{__name__}.{desc.family}").OPERATORS[name]
        except (ModuleNotFoundError, KeyError):
            raise UnsupportedError(f"the cuda backend does not implement {name}") from None
        _OPERATORS[name] = impl
    return impl


def execute(
    desc: OperatorDesc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any] | None,
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> dict[str, Any]:
    """Run a validated desc on the GPU.

    Parameters
    ----------
    desc : OperatorDesc
        A desc already validated by :func:`dmlops.execute`.
    inputs : mapping
        Input member name -> array (logical tensor or flat buffer), any array kind.
    outputs : mapping, optional
        Output member name -> preallocated array, written in place.
    feature_level : FeatureLevel
        The validation level (GATHER's negative indices depend on it).
    strict : bool
        Raise :class:`~dmlops.errors.DataIndexError` for out-of-range GATHER indices.

    Returns
    -------
    dict
        Output member name -> array, of the caller's array kind (see module notes).
    """
    info = _runtime.desc_info(desc)
    impl = info.impl
    if impl is None:
        impl = info.impl = _operator(desc)
    bound = _runtime.bind_cupy_arrays(info, inputs, outputs)
    if bound is not None:  # the common case, CuPy arrays of the tensors' shapes on this device: no conversions
        views, out_views = bound
        impl(desc, views, out_views, feature_level=feature_level, strict=strict)
        return out_views
    device = _runtime.operator_device(desc, inputs, outputs)
    if device is not None and device != _runtime.current_device():
        with _runtime.cupy_module().cuda.Device(device):  # then the same call on that device
            return execute(desc, inputs, outputs, feature_level=feature_level, strict=strict)
    views, kinds, result_kind = _runtime.bind_inputs(desc, info, inputs)
    given = outputs or {}
    bindings = {m: _runtime.bind_output(desc, m, given.get(m), sizes, dtype) for m, sizes, dtype in info.outputs}
    out_views = {m: b.view for m, b in bindings.items()}
    if "torch" in kinds:
        with _runtime.torch_stream():
            impl(desc, views, out_views, feature_level=feature_level, strict=strict)
            return {m: b.finish(result_kind) for m, b in bindings.items()}
    impl(desc, views, out_views, feature_level=feature_level, strict=strict)
    return {m: b.finish(result_kind) for m, b in bindings.items()}


__all__ = ["availability", "execute"]
