"""Running a model's commands: dispatch, print and writeFile.

Buffers are ``bytearray`` s. A dispatch reads each input through its TensorDesc
(Sizes, Strides) at the bound byte offset, runs the operator on the chosen backend,
and writes each output back through its TensorDesc, so the bytes a strided output
does not address are left untouched (ruling 16).
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from numpy.typing import NDArray

from .. import strided
from ..backends import DEFAULT_BACKEND, execute, load_backend
from ..errors import DmlError
from .errors import ModelError
from .files import open_for_write, resolve_write_target
from .formatting import iter_print
from .images import image_target_shape, is_image_path, tensor_to_pixels, write_image
from .peak_memory import aliases, check_peak
from .reader import BoundTensor, DispatchCommand, Model, PrintCommand, WriteFileCommand
from .resources import ResourceSpec
from .timing import CudaEventTimer, MedianTimer, Progress


class SlowDispatchWarning(UserWarning):
    """A dispatch ran slowly on the numpy reference; another backend would be faster."""


def to_numpy(array: Any) -> NDArray[Any]:
    """A backend's result as NumPy (CuPy arrays have ``.get()``)."""
    if isinstance(array, np.ndarray):
        return array
    get = getattr(array, "get", None)
    if callable(get):
        return np.asarray(get())
    return np.asarray(array)


SLOW_REFERENCE_DISPATCH_S = 2.0
"""A dispatch slower than this on the numpy reference gets a hint about faster backends."""


class Executor:
    """Runs the commands of a validated :class:`~dmlops.model.reader.Model` in order.

    Before anything is allocated, the run's peak memory is checked against the limit
    and every ``writeFile`` target against the output folder, so a model that cannot
    finish is refused before its first command.

    Parameters
    ----------
    model : Model
        From :func:`~dmlops.model.reader.load_model`.
    backend : str
        ``numpy`` (default), ``cpu`` or ``cuda``; checked before any command runs.
    output_path : str or Path, optional
        Folder ``writeFile`` targets are resolved against (``--output_path``; the
        current folder when None). Targets must stay inside it.
    allow_writes_outside_output_path : bool
        Let targets go anywhere, as in DxDispatch (absolute paths, ``..``).
    iterations : int, optional
        Dispatches per dispatch command (``-i``; default 1, or unbounded with
        ``milliseconds_to_run``).
    milliseconds_to_run : float, optional
        Stop repeating a dispatch command once this much time has passed (``-t``).
    report_timing : bool
        Print DxDispatch's ``Dispatch 'name': N iterations, X ms median (CPU)`` line.
    print_commands : bool
        Log each command before and after it runs (``--print_commands``).
    max_memory : str, optional
        Peak memory limit (``--max_memory``, e.g. ``4G``; else ``$DMLOPS_MAX_MEMORY``,
        else a share of the available memory).
    out : TextIO
        Where command output goes (stdout).
    progress : TextIO, optional
        Where the progress line of long dispatch loops goes when it is a terminal (stderr).
    """

    def __init__(
        self,
        model: Model,
        *,
        backend: str = DEFAULT_BACKEND,
        output_path: str | Path | None = None,
        allow_writes_outside_output_path: bool = False,
        iterations: int | None = None,
        milliseconds_to_run: float | None = None,
        report_timing: bool = False,
        print_commands: bool = False,
        max_memory: str | None = None,
        out: TextIO | None = None,
        progress: TextIO | None = None,
    ) -> None:
        load_backend(backend)  # BackendUnavailableError now, not after half the commands ran
        self.model = model
        self.backend = backend
        self.output_path = None if output_path is None else Path(output_path)
        self.iterations = iterations if iterations is not None else (None if milliseconds_to_run else 1)
        self.milliseconds_to_run = milliseconds_to_run
        self.report_timing = report_timing
        self.print_commands = print_commands
        self.out = out if out is not None else sys.stdout
        self.progress = progress
        self.targets = {
            c.index: resolve_write_target(
                c.target_path, self.output_path, allow_outside=allow_writes_outside_output_path
            )
            for c in model.commands
            if isinstance(c, WriteFileCommand)
        }
        self.peak = check_peak(model, backend, max_memory)
        self.buffers: dict[str, bytearray] = {name: res.allocate() for name, res in model.resources.items()}
        # Initialization, before the first command: DirectML copies each OWNED_BY_DML input
        # into the operator's persistent resource, so later writes to its buffer are not seen.
        self.persistent: dict[str, dict[str, NDArray[Any]]] = {
            name: {b.member: flat_span(self.buffers[b.resource], b).copy() for b in spec.init_bound}
            for name, spec in model.dispatchables.items()
        }
        self._hinted: set[str] = set()

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

    def _inputs(self, command: DispatchCommand, outputs: set[str]) -> dict[str, NDArray[Any]]:
        """Each input as the flat buffer span its TensorDesc addresses, read in place.

        Only an input that shares bytes with an output of the same dispatch is copied
        (the output is written while the operator may still read it), and then only the
        span it addresses: a broadcast input is never expanded to its logical size.
        """
        written = [b for b in command.bindings if b.member in outputs]
        inputs = dict(self.persistent[command.dispatchable])
        for b in command.bindings:
            if b.member in outputs:
                continue
            span = flat_span(self.buffers[b.resource], b)
            inputs[b.member] = span.copy() if any(aliases(b, w) for w in written) else span
        return inputs

    def dispatch(self, command: DispatchCommand) -> None:
        """Bind, run the operator ``iterations`` times (or for ``milliseconds_to_run``), write the outputs back.

        The CPU time of an iteration is the operator's, from the call to its results
        (on cuda, until the GPU has finished); binding inputs and writing outputs back
        are outside it, as uploads and downloads are outside DxDispatch's dispatch time.
        On cuda the GPU time is measured too, with CUDA events around the operator.
        """
        spec = self.model.dispatchables[command.dispatchable]
        outputs = set(spec.desc.tensor_names("output"))
        timer = MedianTimer()
        gpu = CudaEventTimer() if self.backend == "cuda" else None
        gpu_timer = MedianTimer()
        limit_s = None if self.milliseconds_to_run is None else self.milliseconds_to_run / 1000.0
        progress = Progress(f"dispatch '{command.dispatchable}'", self.iterations, limit_s, stream=self.progress)
        begin = time.perf_counter()
        try:
            while self.iterations is None or timer.count < self.iterations:
                inputs: dict[str, Any] = self._inputs(command, outputs)
                if gpu is not None:
                    inputs = gpu.upload(inputs)
                    gpu.begin()
                start = time.perf_counter()
                results = execute(spec.desc, inputs, backend=self.backend, feature_level=self.model.feature_level)
                if gpu is not None:
                    gpu_timer.add(gpu.end())
                now = time.perf_counter()
                self._write_outputs(command, outputs, results)
                if timer.count == 0:
                    self._hint_if_slow(command.dispatchable, now - start)
                timer.add((now - start) * 1000.0)
                progress.update(timer.count)
                if limit_s is not None and time.perf_counter() - begin >= limit_s:
                    break
        finally:
            progress.close()
        if self.report_timing:
            line = f"Dispatch '{command.dispatchable}': {timer.count} iterations, {timer.median():.4f} ms median (CPU)"
            if gpu_timer.count:
                line += f", {gpu_timer.median():.6f} ms median (GPU)"
            self._emit(line)

    def _write_outputs(self, command: DispatchCommand, outputs: set[str], results: dict[str, Any]) -> None:
        for b in command.bindings:
            if b.member in outputs:
                target = strided.byte_view(
                    self.buffers[b.resource], b.tensor, byte_offset=b.byte_offset, writeable=True
                )
                np.copyto(target, to_numpy(results[b.member]), casting="no")

    def _hint_if_slow(self, name: str, seconds: float) -> None:
        if self.backend != "numpy" or seconds < SLOW_REFERENCE_DISPATCH_S or name in self._hinted:
            return
        self._hinted.add(name)
        warnings.warn(
            f"dispatch '{name}' took {seconds:.1f} s on the numpy reference; the 'cpu' backend computes the same "
            "results much faster (--backend cpu, from pip install 'dmlops[cpu]')",
            SlowDispatchWarning,
            stacklevel=2,
        )

    # -- print / writeFile -------------------------------------------------------------------

    def values(self, res: ResourceSpec) -> NDArray[Any]:
        """The buffer as ``initialValuesDataType`` elements, trimmed to the initializer's count.

        As DxDispatch: from byte 0 of the buffer, ``len(initialValues)`` bytes (the
        4-byte padding is not shown), whatever ``initialValuesOffsetInBytes`` is. A
        read-only view of the buffer, not a copy.
        """
        view: NDArray[Any] = np.frombuffer(
            self.buffers[res.name], dtype=res.data_type.numpy_dtype, count=res.element_count
        )
        return view

    def print_resource(self, command: PrintCommand) -> None:
        """``Resource 'name': v0, v1, ...`` (or the verbose form), streamed in pieces."""
        res = self.model.resources[command.resource]
        for piece in iter_print(command.resource, self.values(res), verbose=command.verbose):
            self.out.write(piece)
        self.out.write("\n")
        self.out.flush()

    def write_file(self, command: WriteFileCommand) -> None:
        """Write ``.npy`` (shape from ``dimensions``, dtype from the resource), a .png/.jpg image, or raw bytes."""
        res = self.model.resources[command.resource]
        path = self.targets[command.index]
        raw = self.buffers[command.resource]
        suffix = path.suffix.lower()
        if is_image_path(str(path)):
            channels, height, width = image_target_shape(command.dimensions)
            pixels = tensor_to_pixels(raw, res.data_type, channels, height, width)
            with open_for_write(path) as f:
                write_image(f, suffix, pixels)
            self._emit(f"Resource '{command.resource}' written to '{path}'")
            return
        with open_for_write(path) as f:
            if suffix == ".npy":
                dtype = res.data_type.numpy_dtype
                if command.dimensions is None:
                    values = self.values(res)
                else:
                    count = math.prod(command.dimensions)
                    values = np.frombuffer(raw, dtype=dtype, count=count).reshape(command.dimensions)
                np.save(f, values, allow_pickle=False)
            else:
                f.write(memoryview(raw))  # raw .dat/.bin: the whole buffer, as DxDispatch
        self._emit(f"Resource '{command.resource}' written to '{path}'")


def flat_span(buffer: bytearray, b: BoundTensor) -> NDArray[Any]:
    """The 1-D element span of ``buffer`` that a bound tensor addresses (a read-only view)."""
    dtype = b.tensor.dtype
    count = b.tensor.addressed_element_span
    span: NDArray[Any] = np.frombuffer(buffer, dtype=dtype, count=count, offset=b.byte_offset)
    span.flags.writeable = False
    return span
