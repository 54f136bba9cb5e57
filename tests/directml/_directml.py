"""Shared by the directml tests: the backend gate, restriding descs, known divergences."""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any

import numpy as np
import pytest

from dmlops.backends import load_backend
from dmlops.descs._base import TENSOR_KINDS, OperatorDesc
from dmlops.errors import BackendUnavailableError
from dmlops.tensor import TensorDesc

REQUIRED = "directml" in os.environ.get("DMLOPS_REQUIRE_BACKENDS", "").split(",")


@pytest.fixture(scope="session")
def directml() -> str:
    """The backend name; skips when unavailable, fails when CI requires it."""
    try:
        load_backend("directml")
    except BackendUnavailableError as exc:
        if REQUIRED:
            pytest.fail(f"required backend unavailable: {exc}")
        pytest.skip(str(exc))
    return "directml"


def padded_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Strides with a gap after every element and every row: nothing is contiguous."""
    strides = [0] * len(sizes)
    step = 2
    for i in range(len(sizes) - 1, -1, -1):
        strides[i] = step
        step = step * sizes[i] + 1
    return tuple(strides)


def restrided(desc: OperatorDesc) -> OperatorDesc:
    """The same desc with every tensor stored through padded strides."""
    changes: dict[str, Any] = {}
    for info in desc.member_infos():
        if info.kind in TENSOR_KINDS:
            t = getattr(desc, info.attr)
            if t is not None:
                changes[info.attr] = TensorDesc(
                    data_type=t.data_type, sizes=t.sizes, strides=padded_strides(t.sizes), flags=t.flags
                )
    return dataclasses.replace(desc, **changes)


def flat_buffer(tensor: TensorDesc, logical: np.ndarray, fill: float) -> np.ndarray:
    """The flat buffer a strided desc addresses, holding ``logical`` and ``fill`` in the gaps."""
    n = tensor.addressed_element_span
    buf = np.full(n, fill, dtype=tensor.dtype)
    view = np.lib.stride_tricks.as_strided(
        buf, shape=tensor.sizes, strides=[s * buf.itemsize for s in tensor.element_strides]
    )
    view[...] = logical
    return buf


def addressed_mask(tensor: TensorDesc) -> np.ndarray:
    """True where a flat buffer element is addressed by the desc."""
    idx = np.zeros(tensor.addressed_element_span, dtype=bool)
    coords = np.indices(tensor.sizes).reshape(len(tensor.sizes), -1)
    idx[np.dot(tensor.element_strides, coords)] = True
    return idx


# Where DirectML 1.15.4 on this stack differs from the reference on the seed vectors.
# Keyed by vector name; each reason gives the evidence (see docs/directml.md).
_FTOU = (
    "stack artefact, not DirectML: a nearest-neighbour coordinate that floors to -1 lands on the last element, as "
    "an unsigned index clamped to the size would; vkd3d 1.6 turns DXBC ftou into OpConvertFToU, which lavapipe "
    "evaluates to 0xFFFFFFFF for every negative float (a CAST FLOAT32->UINT32 of -1, -2, -3.7 gives 4294967295 "
    "here; D3D12 defines 0)"
)
KNOWN_DIVERGENCES = {
    "resample2/seed_example_forward": _FTOU,
    "resample2/uint8_nearest_6_2": _FTOU,
}


def close(got: np.ndarray, want: np.ndarray) -> bool:
    """Exact for integers; float32 rounding for floats (DirectML computes in float32)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype.kind != "f":
        return bool(np.array_equal(got, want))
    eps = float(np.finfo(want.dtype).eps)
    scale = max(1.0, float(np.nanmax(np.abs(want))) if want.size and not np.all(np.isnan(want)) else 1.0)
    return bool(np.allclose(got, want, rtol=4 * eps, atol=4 * eps * scale, equal_nan=True))


def isclose_reason(got: np.ndarray, want: np.ndarray) -> str:
    """A short description of a mismatch for assertion messages."""
    if math.prod(got.shape) > 32:
        bad = np.argwhere(~np.isclose(got, want, equal_nan=True))[:4]
        return f"first differing indices {bad.tolist()}"
    return f"directml {got.ravel().tolist()} vs reference {want.ravel().tolist()}"


def run_on_directml(desc: OperatorDesc, inputs: dict[str, Any]) -> dict[str, Any]:
    """The desc's outputs on the real DirectML, for a desc dmlops validates.

    Skips where this stack cannot compile what DirectML chose (a DXIL shader: no verdict on
    the desc) and fails where CreateOperator rejects the desc (a validation divergence).
    """
    import dmlops
    from dmlops.errors import DirectMLRejectedDescError, DirectMLStackLimitError

    try:
        return dmlops.execute(desc, inputs, backend="directml")
    except DirectMLStackLimitError as exc:
        pytest.skip(f"{type(exc).__name__}: not comparable here: {exc}")
    except DirectMLRejectedDescError:
        pytest.fail(f"dmlops validates this desc but DirectML's CreateOperator rejects it: {desc.to_dml_dict()}")


def same_bits(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Element mask: the same float bits, or NaN on both sides (any payload)."""
    uint = np.dtype(f"u{got.dtype.itemsize}")
    return (got.view(uint) == expected.view(uint)) | (np.isnan(got) & np.isnan(expected))


def fail_on_differences(bad: np.ndarray, got: np.ndarray, expected: np.ndarray) -> None:
    """Fail naming the first differing flat indices (``bad``), with numpy's and DirectML's values."""
    if bad.size:
        shown = ", ".join(f"[{i}] numpy {expected.flat[i]!r} directml {got.flat[i]!r}" for i in bad[:6])
        pytest.fail(f"{bad.size} of {got.size} elements differ: {shown}")
