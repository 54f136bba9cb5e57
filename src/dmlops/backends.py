"""Backend selection and :func:`execute`, the one entry point every backend shares.

A backend is a module exposing::

    def availability() -> str | None          # None when usable, else the reason
    def execute(desc, inputs, outputs, *, feature_level, strict) -> dict[str, Any]

``inputs``/``outputs`` are keyed by DML tensor member names and already checked for
completeness; the desc is already validated. There is no fallback between backends:
asking for one that cannot run raises :class:`BackendUnavailableError`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import numpy as np

from .descs._base import OperatorDesc
from .enums import FeatureLevel
from .errors import (
    ArgumentTypeError,
    BackendUnavailableError,
    TensorMismatchError,
    UnknownFeatureLevelError,
    UnsupportedError,
)

BACKENDS: dict[str, str] = {
    "numpy": "dmlops.reference",
    "cpu": "dmlops.cpu",
    "cuda": "dmlops.cuda",
    "directml": "dmlops.directml",
}
"""Backend name -> module. ``numpy`` is the reference (the default)."""
ALIASES = {"reference": "numpy"}
DEFAULT_BACKEND = "numpy"


def resolve_backend_name(name: str) -> str:
    """Canonical backend name; ValueError for names dmlops does not know."""
    canonical = ALIASES.get(name, name)
    if canonical not in BACKENDS:
        known = ", ".join(sorted([*BACKENDS, *ALIASES]))
        raise BackendUnavailableError(f"unknown backend {name!r} (known: {known})")
    return canonical


def _import_backend(canonical: str) -> tuple[ModuleType | None, str | None]:
    """(module, None) when the backend can run here, else (None, the reason)."""
    try:
        module = importlib.import_module(BACKENDS[canonical])
    except ImportError as exc:
        hint = {"cpu": "install dmlops[cpu]", "cuda": "install dmlops[cuda]", "directml": "run `dmlops directml setup`"}
        return None, f"{exc} ({hint.get(canonical, 'install dmlops')})"
    reason: str | None = module.availability()
    return (module, None) if reason is None else (None, reason)


_LOADED: dict[str, ModuleType] = {}
"""Backends found usable, by the name asked for (execute looks them up on every call)."""


def load_backend(name: str) -> ModuleType:
    """Import a backend module, raising BackendUnavailableError with the reason if it can't run."""
    module = _LOADED.get(name)
    if module is not None:
        return module
    canonical = resolve_backend_name(name)
    module, reason = _import_backend(canonical)
    if module is None:
        raise BackendUnavailableError(f"backend {canonical!r} is not available: {reason}")
    _LOADED[name] = module
    return module


def backend_status() -> dict[str, str | None]:
    """Backend name -> None when usable here, else why not."""
    return {name: _import_backend(name)[1] for name in BACKENDS}


_ARRAY_PROTOCOLS = ("__cuda_array_interface__", "__dlpack__", "__array_interface__", "__array__")


_ARRAY_TYPES: set[type] = {np.ndarray}
"""Types whose every instance is array-like (the class itself has the attributes): checked once."""


def _array_like(value: Any) -> bool:
    """An array, or an object a backend reads as one (CUDA array interface, DLPack, NumPy protocols)."""
    kind = type(value)
    if kind in _ARRAY_TYPES:
        return True
    if (hasattr(value, "shape") and hasattr(value, "dtype")) or any(hasattr(value, p) for p in _ARRAY_PROTOCOLS):
        if (hasattr(kind, "shape") and hasattr(kind, "dtype")) or any(hasattr(kind, p) for p in _ARRAY_PROTOCOLS):
            _ARRAY_TYPES.add(kind)  # class attributes: every instance has them
        return True
    return False


def _numeric(value: Any) -> bool:
    """Whether NumPy reads ``value`` (a list, a scalar...) as an array of numbers."""
    try:
        return np.asarray(value).dtype.kind in "biuf"
    except (TypeError, ValueError):  # ragged nesting
        return False


def _check_arguments(
    desc: Any, inputs: Any, backend: Any, feature_level: Any, outputs: Any, strict: Any
) -> FeatureLevel:
    """ArgumentTypeError for arguments of the wrong type; the feature level, parsed."""

    def wrong(argument: str, expected: str, value: Any) -> ArgumentTypeError:
        return ArgumentTypeError(
            f"dmlops.execute: {argument} must be {expected}; got {type(value).__name__} {value!r:.80}"
        )

    if not isinstance(desc, OperatorDesc):
        raise wrong("desc", "an operator desc (a desc class instance, or dmlops.desc_from_json(...))", desc)
    if not isinstance(inputs, Mapping):
        raise wrong("inputs", "a mapping of DML input member name -> array, e.g. {'InputTensor': x}", inputs)
    if outputs is not None and not isinstance(outputs, Mapping):
        raise wrong("outputs", "None or a mapping of DML output member name -> array", outputs)
    for member, value in inputs.items():
        if not _array_like(value) and not _numeric(value):
            raise wrong(f"inputs[{member!r}]", "an array of numbers (or a nested sequence of numbers)", value)
    for member, value in (outputs or {}).items():
        if value is not None and not _array_like(value):
            raise wrong(f"outputs[{member!r}]", "an array", value)
    if not isinstance(backend, str):
        raise wrong("backend", f"a backend name ({', '.join(sorted([*BACKENDS, *ALIASES]))})", backend)
    if not isinstance(strict, (bool, np.bool_)):
        raise wrong("strict", "a bool", strict)
    if feature_level is None:
        return FeatureLevel.latest()
    try:
        return FeatureLevel.from_any(feature_level)
    except UnknownFeatureLevelError as exc:
        raise UnknownFeatureLevelError(f"dmlops.execute: feature_level: {exc}") from None


def check_implemented(desc: OperatorDesc, backend: str) -> None:
    """UnsupportedError, at once, when ``backend`` has no implementation of the desc's operator.

    The message names the operator and the backends that run it.
    """
    canonical = resolve_backend_name(backend)
    if canonical in desc.backends:
        return
    runners = []
    for name in desc.backends:
        if name in _LOADED:
            runners.append(f"{name} (available here)")
        elif name == "directml":
            runners.append("directml (the real DirectML through Wine; `dmlops directml status` says if it is set up)")
        else:
            runners.append(name)
    raise UnsupportedError(
        f"{desc.dml_name}: DML_OPERATOR_{desc.operator_type.name} has no implementation on backend "
        f"{canonical!r} yet; it runs on: {', '.join(runners)}"
    )


def execute(
    desc: OperatorDesc,
    inputs: Mapping[str, Any],
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | int | None = None,
    outputs: Mapping[str, Any] | None = None,
    strict: bool = False,
) -> dict[str, Any]:
    """Validate ``desc`` and run it.

    Parameters
    ----------
    desc : OperatorDesc
        Any dmlops operator desc.
    inputs : mapping
        DML input tensor member name (``"InputTensor"``, ``"IndicesTensor"``...) ->
        array. An array is either the logical tensor (shape == Sizes) or the flat
        1-D buffer that the TensorDesc's Strides address.
    backend : str
        ``"numpy"`` (reference, default), ``"cpu"``, ``"cuda"`` or ``"directml"``.
    feature_level : FeatureLevel or str, optional
        Validation level (default: latest). Some semantics depend on it too
        (GATHER negative indices exist from 3_0).
    outputs : mapping, optional
        Preallocated output arrays (logical shape, or the flat buffer the desc's
        Strides address; only addressed elements are written).
    strict : bool
        Raise instead of clamping data-dependent indices (GATHER).

    Returns
    -------
    dict
        Output member name (``"OutputTensor"``...) -> array.
    """
    replay = _REPLAY
    if replay is not None:  # a repeat call a backend's compiled path recorded: checked and launched there
        done = replay(desc, inputs, outputs, backend, feature_level, strict)
        if done is not None:
            return done
    checked = _repeat_call(desc, inputs, backend, feature_level, outputs, strict)
    if checked is not None:
        record = _RECORDERS.get(checked.module.__name__)
        if record is not None:
            return record(checked.module, desc, inputs, outputs, backend, feature_level, strict, checked.level)
        return checked.module.execute(desc, inputs, outputs, feature_level=checked.level, strict=strict)
    level = _check_arguments(desc, inputs, backend, feature_level, outputs, strict)
    check_implemented(desc, backend)
    desc.validate(level)
    expected = desc.tensor_names("input")
    if inputs.keys() != expected:
        given = set(inputs)
        missing = sorted(expected - given)
        extra = sorted(repr(k) if not isinstance(k, str) else k for k in given - expected)
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if extra:
            parts.append(f"unexpected {', '.join(extra)}")
        raise TensorMismatchError(
            f"{desc.dml_name}: inputs must be exactly {', '.join(sorted(expected))}; {'; '.join(parts)}"
        )
    if outputs and not outputs.keys() <= desc.tensor_names("output"):
        unknown = sorted(repr(k) if not isinstance(k, str) else k for k in set(outputs) - desc.tensor_names("output"))
        raise TensorMismatchError(f"{desc.dml_name}: unknown output member(s) {', '.join(unknown)}")
    module = load_backend(backend)
    _remember_call(desc, backend, feature_level, module, level)
    result: dict[str, Any] = module.execute(desc, inputs, outputs, feature_level=level, strict=strict)
    return result


_REPLAY: Any = None
"""A backend's compiled repeat-call path (``replay(desc, inputs, outputs, backend, feature_level,
strict)`` -> the result, or None to take the full path), see :func:`register_fast_path`."""
_RECORDERS: dict[str, Any] = {}
"""Backend module name -> ``record(module, desc, inputs, outputs, backend, feature_level, strict,
level)``: runs a repeat call (already checked by :func:`_repeat_call`) and may remember it for
the replay."""


def register_fast_path(module_name: str, replay: Any, record: Any) -> None:
    """Install a backend's compiled repeat-call path (the cuda backend's ``_fastlaunch``).

    ``replay`` is asked first on every call and must return None unless the call is one
    that ``record`` remembered, with everything :func:`execute` checks unchanged (the same
    desc, backend, feature level, strict flag, members and array types); ``record`` runs
    the calls that passed :func:`_repeat_call` (so every check ran on an earlier call).
    """
    global _REPLAY
    _RECORDERS[module_name] = record
    _REPLAY = replay


class _CheckedCall:
    """What :func:`execute` established for a desc, backend and feature level (descs are immutable)."""

    __slots__ = ("desc", "inputs", "level", "module", "outputs")

    def __init__(self, desc: OperatorDesc, module: ModuleType, level: FeatureLevel) -> None:
        self.desc = desc  # keeps id(desc) from being reused while cached
        self.module = module
        self.level = level
        self.inputs = desc.tensor_names("input")  # the desc's own cached sets, not copies
        self.outputs = desc.tensor_names("output")


_CHECKED: dict[tuple[int, Any, Any], _CheckedCall] = {}


def _remember_call(
    desc: OperatorDesc, backend: str, feature_level: Any, module: ModuleType, level: FeatureLevel
) -> None:
    if len(_CHECKED) >= 1024:
        _CHECKED.clear()
    _CHECKED[(id(desc), backend, feature_level)] = _CheckedCall(desc, module, level)


def _repeat_call(
    desc: Any, inputs: Any, backend: Any, feature_level: Any, outputs: Any, strict: Any
) -> _CheckedCall | None:
    """What an earlier call established, if this call needs none of the checks again, else None.

    A tiny call's host time is mostly Python: a desc already validated for this backend
    and level, with dict arguments of known array types and the right member names, needs
    none of the checks again (any other call takes the full path and its messages). Plain
    loops, not generators: this runs on every call.
    """
    try:
        found = _CHECKED.get((id(desc), backend, feature_level))
    except TypeError:  # an unhashable feature_level: the full path says what is wrong
        return None
    if found is None or found.desc is not desc or type(strict) is not bool or type(inputs) is not dict:
        return None
    if inputs.keys() != found.inputs:
        return None
    known = _ARRAY_TYPES
    for value in inputs.values():
        if type(value) not in known:
            return None
    if outputs is not None:
        if type(outputs) is not dict or not outputs.keys() <= found.outputs:
            return None
        for value in outputs.values():
            if value is not None and type(value) not in known:
                return None
    return found
