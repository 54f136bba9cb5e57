"""A model's peak memory, known before it runs, and the limit it must stay under.

``dmlops run`` holds every buffer for the whole run, and each dispatch adds its own
working set on top: the outputs the backend computes before they are written back
through their TensorDescs, the backend's scratch per output element (the reference
computes in float64), and a copy of each input that shares bytes with an output of
the same dispatch (aliasing). Inputs are otherwise read in place, broadcast or not,
and ``print``/``writeFile`` stream, so those are all the large allocations there are.
Working memory inside an operator beyond that (ROI_ALIGN's sample tables, say) is
bounded by the backend's own checks.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .. import memory
from ..backends import load_backend
from .errors import ModelError
from .reader import BoundTensor, DispatchCommand, Model

DEFAULT_FRACTION = 0.8
"""Without a limit set, a model may use this share of the memory available when it starts."""
MEMORY_ENV = "DMLOPS_MAX_MEMORY"
MEMORY_FLAG = "--max_memory"

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_size(text: str) -> int:
    """``"4G"``, ``"512MiB"``, ``"1000000"`` -> bytes (binary units); ValueError otherwise."""
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"expected a size in bytes such as 4G, 512M or 1000000; got {text!r}")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


@dataclass(frozen=True)
class PeakEstimate:
    """Bytes a run needs at its peak: the buffers (and OWNED_BY_DML copies) plus the largest dispatch's working set."""

    buffers: int
    dispatch: int
    dispatch_name: str | None

    @property
    def total(self) -> int:
        """The peak, in bytes."""
        return self.buffers + self.dispatch

    def describe(self) -> str:
        """``123 bytes (buffers 100 + dispatch 'x' 23)``."""
        if self.dispatch_name is None:
            return f"{self.total} bytes (buffers {self.buffers})"
        return f"{self.total} bytes (buffers {self.buffers} + dispatch '{self.dispatch_name}' {self.dispatch})"


def dispatch_bytes(command: DispatchCommand, model: Model, backend: str) -> int:
    """The working set of one dispatch command beyond the model's buffers."""
    desc = model.dispatchables[command.dispatchable].desc
    outputs = set(desc.tensor_names("output"))
    # Host memory the backend needs per output element besides the result (the reference's float64).
    scratch = getattr(load_backend(backend), "SCRATCH_BYTES_PER_OUTPUT_ELEMENT", 0)
    total = 0
    written = [b for b in command.bindings if b.member in outputs]
    for b in command.bindings:
        if b.member in outputs:
            total += b.tensor.element_count * (b.tensor.dtype.itemsize + scratch)
        elif any(aliases(b, w) for w in written):
            total += span_bytes(b)
    return total


def span_bytes(b: BoundTensor) -> int:
    """Bytes of the buffer a bound tensor addresses, from its offset to its last element."""
    return int(b.tensor.addressed_element_span * b.tensor.dtype.itemsize)


def aliases(a: BoundTensor, b: BoundTensor) -> bool:
    """True when two bound tensors share a resource and their byte ranges overlap."""
    if a.resource != b.resource:
        return False
    return a.byte_offset < b.byte_offset + span_bytes(b) and b.byte_offset < a.byte_offset + span_bytes(a)


def estimate_peak(model: Model, backend: str) -> PeakEstimate:
    """The run's peak memory, from the model alone (nothing is allocated)."""
    buffers = sum(r.size_in_bytes for r in model.resources.values())
    # The OWNED_BY_DML inputs copied at initialization (the operators' persistent resources).
    buffers += sum(span_bytes(b) for spec in model.dispatchables.values() for b in spec.init_bound)
    worst, worst_name = 0, None
    for command in model.commands:
        if isinstance(command, DispatchCommand):
            need = dispatch_bytes(command, model, backend)
            if need > worst:
                worst, worst_name = need, command.dispatchable
    return PeakEstimate(buffers, worst, worst_name)


def memory_limit(flag_value: str | None) -> tuple[int | None, str]:
    """The limit in bytes (None: unknown, so unlimited) and where it came from."""
    if flag_value is not None:
        return _parsed(flag_value, MEMORY_FLAG), MEMORY_FLAG
    env = os.environ.get(MEMORY_ENV)
    if env:
        return _parsed(env, MEMORY_ENV), MEMORY_ENV
    available = memory.available_memory()
    if available is None:
        return None, "no limit (available memory unknown)"
    return int(available * DEFAULT_FRACTION), f"{DEFAULT_FRACTION:.0%} of the {available} bytes available"


def _parsed(text: str, where: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise ModelError(f"{where}: {exc}") from None


def check_peak(model: Model, backend: str, flag_value: str | None = None) -> PeakEstimate:
    """Refuse the model, before anything is allocated, when its peak exceeds the limit."""
    peak = estimate_peak(model, backend)
    limit, source = memory_limit(flag_value)
    if limit is not None and peak.total > limit:
        raise ModelError(
            f"running this model needs about {peak.describe()}, more than the limit of {limit} bytes "
            f"({source}; set {MEMORY_FLAG} or {MEMORY_ENV} to change it)"
        )
    return peak
