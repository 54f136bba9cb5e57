"""Running a model's commands: dispatch, print and writeFile.

Buffers are ``bytearray`` s. A dispatch reads each input through its TensorDesc
(Sizes, Strides) at the bound byte offset, runs the operator on the chosen backend,
and writes each output back through its TensorDesc, so the bytes a strided output
does not address are left untouched (ruling 16).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from numpy.typing import NDArray

from .. import strided
from ..backends import DEFAULT_BACKEND, execute, load_backend
from ..errors import DmlError
from .errors import ModelError
from .formatting import format_print
from .reader import DispatchCommand, Model, PrintCommand, WriteFileCommand
from .resources import ResourceSpec


def to_numpy(array: Any) -> NDArray[Any]:
    """A backend's result as NumPy (CuPy arrays have ``.get()``)."""
    if isinstance(array, np.ndarray):
        return array
    get = getattr(array, "get", None)
    if callable(get):
        return np.asarray(get())
    return np.asarray(array)


class Executor:
    """Runs the commands of a validated :class:`~dmlops.model.reader.Model` in order.

    Parameters
    ----------
    model : Model
        From :func:`~dmlops.model.reader.load_model`.
    backend : str
        ``numpy`` (default), ``cpu`` or ``cuda``; checked before any command runs.
    output_path : str or Path, optional
        Folder ``writeFile`` targets are resolved against (``--output_path``).
    iterations : int
        Dispatches per dispatch command (``-i``).
    report_timing : bool
        Print DxDispatch's ``Dispatch 'name': N iterations, X ms median (CPU)`` line.
    print_commands : bool
        Log each command before and after it runs (``--print_commands``).
    out : TextIO
        Where command output goes (stdout).
    """

    def __init__(
        self,
        model: Model,
        *,
        backend: str = DEFAULT_BACKEND,
        output_path: str | Path | None = None,
        iterations: int = 1,
        report_timing: bool = False,
        print_commands: bool = False,
        out: TextIO | None = None,
    ) -> None:
        load_backend(backend)  # BackendUnavailableError now, not after half the commands ran
        self.model = model
        self.backend = backend
        self.output_path = None if output_path is None else Path(output_path)
        self.iterations = iterations
        self.report_timing = report_timing
        self.print_commands = print_commands
        self.out = out if out is not None else sys.stdout
        self.buffers: dict[str, bytearray] = {name: res.allocate() for name, res in model.resources.items()}

    def _emit(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def run(self) -> None:
        """Run every command; raises ModelError naming the command on failure."""
        for command in self.model.commands:
            if self.print_commands:
                self._emit(f"Command {command.index} started: {command.text}")
            if isinstance(command, DispatchCommand):
                label = f"Failed to execute dispatchable '{command.dispatchable}' (command {command.index})"
            elif isinstance(command, PrintCommand):
                label = f"Failed to print resource '{command.resource}' (command {command.index})"
            else:
                label = f"Failed to write resource '{command.resource}' (command {command.index})"
            try:
                if isinstance(command, DispatchCommand):
                    self.dispatch(command)
                elif isinstance(command, PrintCommand):
                    self.print_resource(command)
                else:
                    self.write_file(command)
            except ModelError as exc:
                raise exc.within(label) from None
            except DmlError as exc:
                raise ModelError(str(exc), context=(label,)) from None
            if self.print_commands:
                self._emit(f"Command {command.index} completed")

    # -- dispatch -----------------------------------------------------------------------------

    def dispatch(self, command: DispatchCommand) -> None:
        """Bind, run the operator ``iterations`` times and write the outputs back."""
        spec = self.model.dispatchables[command.dispatchable]
        outputs = set(spec.desc.tensor_members("output"))
        samples = []
        for _ in range(self.iterations):
            start = time.perf_counter()
            inputs = {}
            for b in command.bindings:
                if b.member not in outputs:
                    view = strided.byte_view(self.buffers[b.resource], b.tensor, byte_offset=b.byte_offset)
                    # A copy: an input may share its buffer with an output.
                    inputs[b.member] = np.array(view)
            results = execute(spec.desc, inputs, backend=self.backend, feature_level=self.model.feature_level)
            for b in command.bindings:
                if b.member in outputs:
                    target = strided.byte_view(
                        self.buffers[b.resource], b.tensor, byte_offset=b.byte_offset, writeable=True
                    )
                    np.copyto(target, to_numpy(results[b.member]), casting="no")
            samples.append((time.perf_counter() - start) * 1000.0)
        if self.report_timing:
            # DxDispatch: the first sample is warm-up when there are more; median = sorted[n // 2].
            hot = sorted(samples[1:] if len(samples) > 1 else samples)
            median = hot[len(hot) // 2] if hot else statistics.fmean(samples)
            self._emit(f"Dispatch '{command.dispatchable}': {len(samples)} iterations, {median:.4f} ms median (CPU)")

    # -- print / writeFile -------------------------------------------------------------------

    def values(self, res: ResourceSpec) -> NDArray[Any]:
        """The buffer as ``initialValuesDataType`` elements, trimmed to the initializer's count.

        As DxDispatch: from byte 0 of the buffer, ``len(initialValues)`` bytes (the
        4-byte padding is not shown), whatever ``initialValuesOffsetInBytes`` is.
        """
        dtype = res.data_type.numpy_dtype
        raw = self.buffers[res.name]
        return np.frombuffer(bytes(raw[: res.element_count * dtype.itemsize]), dtype=dtype)

    def print_resource(self, command: PrintCommand) -> None:
        """``Resource 'name': v0, v1, ...`` (or the verbose form)."""
        res = self.model.resources[command.resource]
        self._emit(format_print(command.resource, self.values(res), verbose=command.verbose))

    def resolve_output(self, target: str) -> Path:
        """``targetPath`` under ``--output_path`` (as given when there is none)."""
        return Path(target) if self.output_path is None else self.output_path / target

    def write_file(self, command: WriteFileCommand) -> None:
        """Write ``.npy`` (shape from ``dimensions``, dtype from the resource) or raw bytes."""
        res = self.model.resources[command.resource]
        path = self.resolve_output(command.target_path)
        raw = self.buffers[command.resource]
        if path.suffix.lower() == ".npy":
            dtype = res.data_type.numpy_dtype
            if command.dimensions is None:
                values = self.values(res)
            else:
                count = int(np.prod(command.dimensions, dtype=np.int64)) if command.dimensions else 1
                flat = np.frombuffer(bytes(raw[: count * dtype.itemsize]), dtype=dtype)
                values = flat.reshape(command.dimensions)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as f:
                if path.suffix.lower() == ".npy":
                    np.save(f, values, allow_pickle=False)
                else:
                    f.write(bytes(raw))  # raw .dat/.bin: the whole buffer, as DxDispatch
        except OSError as exc:
            raise ModelError(f"could not write '{path}': {exc.strerror or exc}") from None
        self._emit(f"Resource '{command.resource}' written to '{path}'")
