"""The fast CPU backend (``backend="cpu"``, the ``dmlops[cpu]`` extra).

Data movement (SLICE1, GATHER) uses NumPy copies into the output view, bit-exact for
every type. The arithmetic operators (ROI_ALIGN, MAX_POOLING2, MAX_POOLING_GRAD,
RESAMPLE2, RESAMPLE_GRAD1) run numba kernels, compiled on first use and cached on
disk (``cache=True``), parallel over planes or regions on the backend's threads
(``NUMBA_NUM_THREADS`` of them, ``_threads.run_kernel``). The element-wise family (``elementwise.py``) runs NumPy and
numba ufuncs in the storage precision where that matches the reference, the
reference's formulas on small tiles otherwise, split over the same number of threads.

Every operator writes straight into the output views that
:func:`dmlops._numpy_io.bind_all` returns, so ``dmlops.execute(..., outputs=...)``
(or ``out=`` in the functional API) allocates no output, and a strided output
TensorDesc writes only the elements it addresses.

Precision (ruling 10): FLOAT16 and FLOAT32 are computed in float32, FLOAT64 in
float64; FLOAT16 results are rounded once when stored. The tolerances against the
float64 reference are ``tests/conftest.py``'s ``TOLERANCES``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from typing import Any

from .._numpy_io import bind_all
from ..descs._base import OperatorDesc
from ..enums import FeatureLevel
from . import _repeat


def availability() -> str | None:
    """None when numba imports, else the reason (install ``dmlops[cpu]``)."""
    try:
        import numba  # noqa: F401
    except Exception as exc:  # ImportError, or a numba/NumPy version clash
        return f"numba is not importable ({type(exc).__name__}: {exc}); install dmlops[cpu]"
    return None


@functools.cache
def _runner(family: str, operator: str) -> Any:
    """The family module's runner of ``operator`` (looked up once: a repeat call's path stays short)."""
    return importlib.import_module(f"{__name__}.{family}").OPERATORS[operator]


def forget_repeats() -> None:
    """Forget every remembered repeat call (``_repeat``).

    A remembered call keeps weak references to its arrays, and NumPy refuses to resize
    (``ndarray.resize``) an array that has weak references; this releases them. Calls run
    on as before, the next one of each desc taking the full path.
    """
    _repeat.forget()


def execute(
    desc: OperatorDesc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any] | None,
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> dict[str, Any]:
    """Bind arrays and run the operator (its family module's ``OPERATORS``), which writes into the output views.

    A runner may return a repeat of its call (``_repeat``): a later call of the same desc
    with the very same arrays then runs that instead of binding and planning again.
    """
    done = _repeat.replay(desc, inputs, outputs, feature_level, strict)
    if done is not None:
        return done
    ins, outs = bind_all(desc, inputs, outputs)
    run = _runner(desc.family, desc.operator_type.name)
    views = {member: target for member, (target, _) in outs.items()}
    repeat = run(desc, ins, views, feature_level=feature_level, strict=strict)
    _repeat.remember(desc, feature_level, strict, inputs, outputs, ins, views, repeat)
    return {member: ret for member, (_, ret) in outs.items()}
