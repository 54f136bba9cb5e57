"""CUDA runtime support: device check, kernel compilation cache, array conversion.

Everything that touches CuPy lives here, imported lazily, so ``import dmlops.cuda``
works (and reports why it cannot run) on machines without CuPy or a GPU.

Arrays
------
Inputs are turned into CuPy views whose shape is the TensorDesc's Sizes and whose
strides address the caller's memory:

* a CuPy array is used as it is (any strides, negative and 0 included);
* PyTorch CUDA tensors and other DLPack producers go through ``cupy.from_dlpack``,
  ``__cuda_array_interface__`` producers through ``cupy.asarray``: no copies;
* NumPy arrays (and anything ``numpy.asarray`` accepts) are copied to the device;
* a 1-D array whose shape is not Sizes is the flat buffer the desc's Strides address,
  as in the reference backend.

Results come back as the caller's array kind (of the operator's first input): NumPy
in, NumPy out; torch in, torch out (through DLPack, no copy); CuPy otherwise. An
``outputs=`` array is written in place, only at the elements its desc addresses.

Streams: kernels run on CuPy's current stream; when torch tensors take part they run
on torch's current stream instead, so the DLPack exchange orders everything.
"""

from __future__ import annotations

import ctypes
import functools
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from .. import strided
from ..descs._base import OperatorDesc
from ..errors import BackendUnavailableError, TensorMismatchError, UnsupportedError
from ..tensor import TensorDesc
from ._compile import COMPILE_OPTIONS, cached_binary, target_arch

KERNEL_DIR = Path(__file__).with_name("kernels")

_INCLUDE = re.compile(r'^\s*#include\s+"([A-Za-z0-9_.]+)"\s*$', re.MULTILINE)


@functools.cache
def kernel_source(name: str) -> str:
    """The source of ``kernels/<name>``, with local ``#include "x.cuh"`` inlined.

    Inlining makes the text self-contained, so the on-disk kernel cache (keyed by source
    and options) can never serve a kernel built from an older header.
    """
    text = (KERNEL_DIR / name).read_text()
    seen: set[str] = set()

    def inline(match: re.Match[str]) -> str:
        header = match.group(1)
        if header in seen:
            return ""
        seen.add(header)
        return _INCLUDE.sub(inline, (KERNEL_DIR / header).read_text().replace("#pragma once", ""))

    return _INCLUDE.sub(inline, text)


def kernel_sources() -> list[str]:
    """The file names of every kernel translation unit (``*.cu``)."""
    return sorted(p.name for p in KERNEL_DIR.glob("*.cu"))


@functools.lru_cache(maxsize=1)
def cupy_module() -> Any:
    """The ``cupy`` module (BackendUnavailableError when it is not installed)."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA install raising at import
        raise BackendUnavailableError(f"CuPy cannot be imported ({exc}); install dmlops[cuda]") from None
    return cupy


@functools.lru_cache(maxsize=1)
def availability() -> str | None:
    """None when CuPy, a CUDA device and NVRTC all work here, else the reason."""
    try:
        cp = cupy_module()
    except BackendUnavailableError as exc:
        return str(exc)
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return f"no usable CUDA device ({type(exc).__name__}: {exc})"
    if count < 1:
        return "no CUDA device found"
    try:
        get_kernel("copy.cu", "strided_copy<u8, 1, 0, 0, int, NoIndex, false>")
    except Exception as exc:
        return f"NVRTC could not compile the dmlops kernels ({type(exc).__name__}: {exc})"
    return None


def sm_count() -> int:
    """Streaming multiprocessors of the current device (grid sizes that fill it)."""
    return _sm_count_of(current_device())


@functools.cache
def _sm_count_of(device: int) -> int:
    return int(cupy_module().cuda.runtime.getDeviceProperties(device)["multiProcessorCount"])


_KERNELS: dict[tuple[int, str, str], Any] = {}


def current_device() -> int:
    """The current CUDA device (CuPy's, which :func:`dmlops.cuda.execute` sets to the inputs')."""
    get_device_id = _GET_DEVICE_ID
    if get_device_id is None:
        get_device_id = _bind_hot_names()[1]
    return int(get_device_id())


_NDARRAY: Any = None
_GET_DEVICE_ID: Any = None


def _bind_hot_names() -> tuple[Any, Any]:
    """``cupy.ndarray`` and CuPy's current-device query, bound once for the per-call paths."""
    global _NDARRAY, _GET_DEVICE_ID
    cp = cupy_module()
    _NDARRAY, _GET_DEVICE_ID = cp.ndarray, cp.cuda.device.get_device_id
    return _NDARRAY, _GET_DEVICE_ID


def get_kernel(source: str, name_expression: str) -> Any:
    """The compiled kernel ``name_expression`` of ``kernels/<source>`` on the current device.

    Each specialisation is compiled once (NVRTC with COMPILE_OPTIONS, see ``_compile``;
    the binary is cached on disk across processes), loaded once per device and process,
    and memoised here.
    """
    cp = cupy_module()
    device = cp.cuda.runtime.getDevice()  # cheaper than constructing a cupy Device per call
    key = (device, source, name_expression)
    fn = _KERNELS.get(key)
    if fn is None:
        arch = target_arch(cp.cuda.Device(device).compute_capability)
        binary, lowered = cached_binary(kernel_source(source), source, name_expression, arch)
        module = cp.cuda.function.Module()
        module.load(binary)
        fn = module.get_function(lowered)  # keeps its module alive
        _KERNELS[key] = fn
    return fn


_THREAD = threading.local()


class PackedLaunch:
    """A kernel launch whose arguments are packed once.

    The arguments are ``n_pointers`` device pointers given per call, then the pointers of
    the ``fixed`` device arrays (a plan's tables, kept alive here), then the by-value
    parameter structs, as cuLaunchKernel's ``void**`` array; ``shared``: dynamic shared
    memory per block, in bytes. A call stores its pointers and launches on CuPy's current
    stream (or ``stream=``, a CUDA stream handle) through the driver, skipping CuPy's
    per-argument conversion. ``grid`` is a block count or a tuple of up to three.

    Where the compiled launch path loads (:mod:`dmlops.cuda._fastlaunch`), an instance is
    also its C ``Launch``: the call is C code that fills an argument array of its own and
    calls ``cuLaunchKernel`` with the GIL released, so calls from several threads cannot
    mix their pointers and a blocked launch does not stop other threads. Otherwise the call goes
    through CuPy's ``driver.launchKernel``; the pointer slots are shared by the calls of one
    plan, so a lock keeps a store and its launch together across threads (the driver copies
    the arguments at launch). Both launch the same kernel with the same arguments.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> PackedLaunch:
        fast = _fast_launch_class() if cls is PackedLaunch else None
        if fast is not None:
            return cast(PackedLaunch, fast.__new__(fast))
        return object.__new__(cls)

    def __init__(
        self,
        fn: Any,
        grid: int | tuple[int, ...],
        block: int,
        n_pointers: int,
        *structs: np.void,
        fixed: Sequence[Any] = (),
        shared: int = 0,
    ) -> None:
        cp = cupy_module()
        self.fn = fn  # keeps the module loaded
        self._fn = int(fn.ptr)
        dims = tuple(int(g) for g in grid) if isinstance(grid, tuple) else (int(grid),)
        if not 1 <= len(dims) <= 3:
            raise ValueError(f"a grid has 1 to 3 dimensions; got {dims}")
        self.grid = (*dims, 1, 1)[:3]
        self.block = block
        self.shared = shared  # bytes of dynamic shared memory per block
        self._empty = 0 in self.grid
        self._fixed = tuple(fixed)
        arm = getattr(self, "_arm", None)
        if arm is not None:  # the compiled path: the C object packs the arguments
            pointers = tuple(int(a.data.ptr) for a in self._fixed)
            packed = tuple(s.tobytes() for s in structs)
            arm(self._fn, self.grid, (int(block), 1, 1), int(shared), n_pointers, pointers, packed)
            return
        from cupy_backends.cuda.api import driver

        self._launch_kernel = driver.launchKernel
        self._stream = cp.cuda.get_current_stream
        self._runtime = cp.cuda.runtime
        self._pointers = (ctypes.c_uint64 * max(1, n_pointers + len(self._fixed)))()
        for i, array in enumerate(self._fixed):
            self._pointers[n_pointers + i] = array.data.ptr
        self._structs = [ctypes.create_string_buffer(s.tobytes()) for s in structs]
        base = ctypes.addressof(self._pointers)
        slots = [base + 8 * i for i in range(n_pointers + len(self._fixed))]
        slots += [ctypes.addressof(s) for s in self._structs]
        self._argv = (ctypes.c_uint64 * len(slots))(*slots)
        self._argv_ptr = ctypes.addressof(self._argv)
        self._lock = threading.Lock()

    def __call__(self, *pointers: int, stream: int | None = None) -> None:
        """Launch with these pointers on ``stream`` (a CUDA stream handle; CuPy's current stream if None)."""
        if self._empty:
            return
        # counted, so that the compiled path's recording knows a launch went past it
        _THREAD.unrecorded = getattr(_THREAD, "unrecorded", 0) + 1
        if not getattr(_THREAD, "context", False):
            # The driver API needs a current context; a new thread has none until a
            # runtime call makes the current device's primary context current.
            self._runtime.setDevice(self._runtime.getDevice())
            _THREAD.context = True
        gx, gy, gz = self.grid
        handle = self._stream().ptr if stream is None else stream
        with self._lock:
            # ctypes takes any sequence here (its stub says list): no list made per call
            self._pointers[: len(pointers)] = pointers  # type: ignore[call-overload]
            self._launch_kernel(self._fn, gx, gy, gz, self.block, 1, 1, self.shared, handle, self._argv_ptr, 0)


def unrecorded_launches() -> int:
    """How many launches this thread made through CuPy's launch (not the compiled ``Launch``)."""
    count: int = getattr(_THREAD, "unrecorded", 0)
    return count


def note_unrecorded_work() -> None:
    """Count device work this thread queued past the compiled ``Launch`` (a driver copy).

    Counted as a launch through CuPy is: a call being recorded then gives no replay entry.
    """
    _THREAD.unrecorded = getattr(_THREAD, "unrecorded", 0) + 1


_FAST_CLASS: list[Any] = []


def _fast_launch_class() -> Any:
    """PackedLaunch's subclass that is also the extension's C ``Launch``, or None without the extension."""
    if _FAST_CLASS:
        return _FAST_CLASS[0]
    from . import _fastlaunch

    ext = _fastlaunch.extension()
    fast = None if ext is None else type("CompiledPackedLaunch", (ext.Launch, PackedLaunch), {"__module__": __name__})
    _FAST_CLASS[:] = [fast]
    return fast


# -- parameter structs ---------------------------------------------------------------


def params(*fields: tuple[str, str, Any]) -> np.void:
    """A by-value kernel parameter struct as a NumPy structured scalar.

    ``fields`` are ``(name, "i8" | "f8", value or sequence)``; arrays keep their length.
    Every member is 8 bytes, so the C struct (all ``long long``/``double``) has no padding.
    """
    spec: list[tuple[Any, ...]] = []
    for name, kind, value in fields:
        if isinstance(value, (list, tuple, np.ndarray)):
            spec.append((name, kind, (len(value),)))
        else:
            spec.append((name, kind))
    dtype = np.dtype(spec, align=True)
    arr = np.zeros((), dtype=dtype)
    for name, _, value in fields:
        arr[name] = value
    return cast(np.void, arr[()])


def padded(values: Any, length: int, fill: int = 0) -> list[int]:
    """``values`` padded with ``fill`` to ``length`` entries."""
    out = [int(v) for v in values]
    return out + [fill] * (length - len(out))


# -- per-desc facts, cached by identity ----------------------------------------------


class DescInfo:
    """What the hot path needs of a desc: member names, Sizes and dtypes, the operator module."""

    def __init__(self, desc: OperatorDesc) -> None:
        self.desc = desc  # keeps id(desc) from being reused while cached
        self.inputs = [(m, t.sizes, t.dtype) for m, t in desc.tensors("input").items()]
        self.outputs = [(m, t.sizes, t.dtype) for m, t in desc.tensors("output").items()]
        self.impl: Any = None


_INFOS: dict[int, DescInfo] = {}


def desc_info(desc: OperatorDesc) -> DescInfo:
    """The cached :class:`DescInfo` of ``desc`` (keyed by identity, checked)."""
    info = _INFOS.get(id(desc))
    if info is None or info.desc is not desc:
        if len(_INFOS) >= 1024:
            _INFOS.clear()
        info = _INFOS[id(desc)] = DescInfo(desc)
    return info


# -- array kinds and conversion ------------------------------------------------------


def array_kind(obj: Any) -> str:
    """``"numpy"``, ``"cupy"``, ``"torch"`` (CUDA tensor), ``"torch_cpu"`` or ``"cuda"``."""
    if isinstance(obj, np.ndarray):
        return "numpy"
    cp = cupy_module()
    if isinstance(obj, cp.ndarray):
        return "cupy"
    module = type(obj).__module__
    if module.startswith("torch"):
        is_cuda = getattr(obj, "is_cuda", False)
        return "torch" if is_cuda else "torch_cpu"
    if hasattr(obj, "__cuda_array_interface__") or hasattr(obj, "__dlpack_device__"):
        return "cuda"
    return "numpy"


def array_device(obj: Any, kind: str) -> int | None:
    """The CUDA device holding ``obj``, or None for a host array."""
    if kind == "cupy":
        return int(obj.data.device_id)  # an attribute read: no Device object per call
    if kind == "torch":
        return int(obj.device.index)
    if kind == "cuda":
        if hasattr(obj, "__dlpack_device__"):
            device_type, device = obj.__dlpack_device__()
            # kDLCUDA (2) and kDLCUDAManaged (13) name a device; other types are host memory.
            return int(device) if int(device_type) in (2, 13) else None
        ptr = obj.__cuda_array_interface__["data"][0]
        return int(cupy_module().cuda.runtime.pointerGetAttributes(ptr).device)
    return None


def operator_device(desc: OperatorDesc, inputs: Mapping[str, Any], outputs: Mapping[str, Any] | None) -> int | None:
    """The one CUDA device holding the device arrays among the inputs and ``out=`` arrays.

    None when all are host arrays (None entries are skipped). Raises
    :class:`TensorMismatchError` when they are on different devices: an operator runs on
    one device, as a CuPy kernel or a PyTorch op does.
    """
    ndarray = cupy_module().ndarray
    found = -1
    first = ""
    for arrays in (inputs, outputs):
        if not arrays:
            continue
        for member, obj in arrays.items():
            if obj is None:
                continue
            device = array_device(obj, "cupy" if type(obj) is ndarray else array_kind(obj))
            if device is None:
                continue
            if found < 0:
                found, first = device, member
            elif device != found:
                raise TensorMismatchError(
                    f"{desc.dml_name}.{member}: on CUDA device {device}, but {first} is on device {found}; "
                    "an operator runs on one device"
                )
    return None if found < 0 else found


def to_cupy(obj: Any, kind: str) -> Any:
    """A CuPy array of ``obj``: no copy for device arrays, a host-to-device copy otherwise."""
    cp = cupy_module()
    if kind == "cupy":
        return obj
    if kind == "torch":
        return cp.from_dlpack(obj)
    if kind == "cuda":
        if hasattr(obj, "__cuda_array_interface__"):
            return cp.asarray(obj)
        return cp.from_dlpack(obj)
    if kind == "torch_cpu":
        return cp.asarray(obj.detach().numpy())
    return cp.asarray(np.asarray(obj))


def logical_view(desc: OperatorDesc, member: str, arr: Any) -> Any:
    """The Sizes-shaped CuPy view of a device array (logical tensor or flat buffer)."""
    cp = cupy_module()
    tensor = desc.tensor(member)
    if arr.shape == tensor.sizes and arr.dtype == tensor.dtype:
        return arr
    if arr.dtype != tensor.dtype:
        raise TensorMismatchError(
            f"{desc.dml_name}.{member}: expected dtype {tensor.dtype} ({tensor.data_type}); got {arr.dtype}"
        )
    if tuple(arr.shape) == tensor.sizes:
        return arr
    if strided.is_flat_buffer_for(arr, tensor):
        if tensor.element_count * arr.itemsize > strided.MAX_VIEW_BYTES:
            raise UnsupportedError(
                f"{desc.dml_name}.{member}: {tensor.element_count} logical elements (Sizes {list(tensor.sizes)}) "
                f"are more than a CuPy array can span ({strided.MAX_VIEW_BYTES} bytes); dmlops cannot run this desc"
            )
        needed = tensor.addressed_element_span
        if arr.size < needed:
            raise TensorMismatchError(
                f"{desc.dml_name}.{member}: buffer of {arr.size} elements is too small for a tensor addressing "
                f"{needed} elements at element offset 0 (needs {needed})"
            )
        step = arr.strides[0] if arr.size > 1 else arr.itemsize
        return cp.ndarray(
            tensor.sizes,
            dtype=arr.dtype,
            memptr=arr.data,
            strides=tuple(s * step for s in tensor.element_strides),
        )
    raise TensorMismatchError(
        f"{desc.dml_name}.{member}: expected an array of shape {tensor.sizes} (or the flat "
        f"buffer its Strides address); got shape {tuple(arr.shape)}"
    )


_ELEMENT_STRIDES: dict[int, dict[tuple[int, ...], tuple[int, ...]]] = {}
"""Item size -> byte strides -> element strides (two lookups: no key tuple built per call)."""


def element_strides(view: Any) -> tuple[int, ...]:
    """A CuPy view's strides in elements (remembered per item size and byte strides)."""
    strides = view.strides
    known = _ELEMENT_STRIDES.get(view.itemsize)
    if known is not None:
        out = known.get(strides)
        if out is not None:
            return out
    item = view.itemsize
    if item > 1 and any(s % item for s in strides):
        raise TensorMismatchError(f"array strides {strides} are not multiples of the element size {item}")
    out = tuple(s // item for s in strides)
    known = _ELEMENT_STRIDES.setdefault(item, {})
    if len(known) < 4096:
        known[strides] = out
    return out


class OutputBinding:
    """Where one output is written on the device, and what to hand back afterwards."""

    def __init__(self, view: Any, returned: Any, host: np.ndarray | None = None) -> None:
        self.view = view
        self.returned = returned
        self.host = host  # a NumPy ``out=`` view to fill after the kernels ran

    def finish(self, kind: str) -> Any:
        """Copy back to a NumPy ``out=`` if needed; convert a fresh result to ``kind``."""
        if self.host is not None:
            self.host[...] = self.view.get()
            return self.returned
        if self.returned is not None:
            return self.returned
        return from_cupy(self.view, kind)


def bind_output(
    desc: OperatorDesc, member: str, out: Any | None, sizes: tuple[int, ...], dtype: np.dtype[Any]
) -> OutputBinding:
    """Bind an output member: a fresh device array, or the caller's ``out=`` array."""
    cp = cupy_module()
    if out is None:
        return OutputBinding(cp.empty(sizes, dtype=dtype), None)
    if type(out) is cp.ndarray and out.shape == sizes and out.dtype == dtype:
        return OutputBinding(out, out)
    tensor: TensorDesc = desc.tensor(member)
    kind = array_kind(out)
    if kind in ("numpy", "torch_cpu"):
        host = out if kind == "numpy" else out.detach().numpy()
        if not isinstance(host, np.ndarray):
            raise TensorMismatchError(f"{desc.dml_name}.{member}: out must be an array; got {type(out).__name__}")
        if host.dtype != tensor.dtype:
            raise TensorMismatchError(
                f"{desc.dml_name}.{member}: expected dtype {tensor.dtype} ({tensor.data_type}); got {host.dtype}"
            )
        if not host.flags.writeable:
            raise TensorMismatchError(f"{desc.dml_name}.{member}: out is read-only")
        if tuple(host.shape) == tensor.sizes:
            target = host
        elif strided.is_flat_buffer_for(host, tensor) and host.flags.c_contiguous:
            try:
                target = strided.view(host, tensor, writeable=True)
            except TensorMismatchError as exc:
                raise TensorMismatchError(f"{desc.dml_name}.{member}: {exc}") from None
        else:
            raise TensorMismatchError(
                f"{desc.dml_name}.{member}: out must have shape {tensor.sizes} (or be the contiguous "
                f"flat buffer its Strides address); got shape {tuple(host.shape)}"
            )
        return OutputBinding(cp.empty(tensor.sizes, dtype=tensor.dtype), out, host=target)
    device = to_cupy(out, kind)
    return OutputBinding(logical_view(desc, member, device), out)


def from_cupy(result: Any, kind: str) -> Any:
    """A fresh CuPy result as the caller's array kind."""
    if kind == "numpy":
        return result.get()
    if kind == "torch":
        import torch

        return torch.from_dlpack(result)
    if kind == "torch_cpu":
        import torch

        return torch.from_numpy(result.get())
    return result


def torch_stream() -> Any:
    """A context running CuPy work on torch's current CUDA stream of the current device."""
    import torch

    cp = cupy_module()
    device = cp.cuda.runtime.getDevice()
    return cp.cuda.ExternalStream(torch.cuda.current_stream(device).cuda_stream, device)


class BoundInputs(dict[str, Any]):
    """Input member -> logical device view, with the flat buffers' extents.

    ``buffers``: member -> the caller's 1-D device array, for inputs given as a flat buffer
    (it may hold more than the view addresses: GATHER's flat reads, erratum E41, reach
    them). ``readable``: member -> its element count, where its elements are adjacent (the
    view then starts at its first element and a kernel may read past the view in place).
    """

    def __init__(self) -> None:
        super().__init__()
        self.buffers: dict[str, Any] = {}
        self.readable: dict[str, int] = {}


def bind_inputs(desc: OperatorDesc, info: DescInfo, inputs: Mapping[str, Any]) -> tuple[BoundInputs, set[str], str]:
    """Logical device views of every input, the set of array kinds seen, the result kind."""
    cp = cupy_module()
    ndarray = cp.ndarray
    views = BoundInputs()
    kinds: set[str] = set()
    first_kind = ""
    for member, sizes, dtype in info.inputs:
        obj = inputs[member]
        if type(obj) is ndarray:
            kind = "cupy"
            device = obj
        else:
            kind = array_kind(obj)
            device = to_cupy(obj, kind)
        if device.shape == sizes and device.dtype == dtype:
            views[member] = device
        else:
            views[member] = logical_view(desc, member, device)
            if device.ndim == 1:  # a flat buffer: the view starts at its first element
                views.buffers[member] = device
                if device.size <= 1 or device.strides[0] == device.itemsize:
                    views.readable[member] = device.size
        kinds.add(kind)
        if not first_kind:
            first_kind = kind
    return views, kinds, first_kind or "cupy"


def bind_cupy_arrays(
    info: DescInfo, inputs: Mapping[str, Any], outputs: Mapping[str, Any] | None
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The views of a call made of CuPy arrays alone, else None.

    Every array must be a CuPy array of its tensor's shape and dtype on the current device
    (missing outputs are allocated there). Most calls are such; they need none of
    :func:`bind_inputs`'s conversions (nor its flat-buffer facts: the views are plain
    dicts), so a tiny call spends its host time once here (the general path handles
    everything else).
    """
    ndarray, get_device_id = _NDARRAY, _GET_DEVICE_ID
    if ndarray is None:
        ndarray, get_device_id = _bind_hot_names()
    device = get_device_id()
    views: dict[str, Any] = {}
    for member, sizes, dtype in info.inputs:
        obj = inputs[member]
        if type(obj) is not ndarray or obj.shape != sizes or obj.dtype != dtype or obj.data.device_id != device:
            return None
        views[member] = obj
    out_views: dict[str, Any] = {}
    for member, sizes, dtype in info.outputs:
        obj = outputs.get(member) if outputs else None
        if obj is None:
            obj = ndarray(sizes, dtype=dtype)
        elif type(obj) is not ndarray or obj.shape != sizes or obj.dtype != dtype or obj.data.device_id != device:
            return None
        out_views[member] = obj
    return views, out_views


def plane_item_fields(count: int, groups: int, rows: int, channels: int) -> list[tuple[str, str, Any]]:
    """The ``count``, ``dv`` and ``div`` struct members that ``plane_item`` reads.

    ``count`` threads decomposed into (group, row, plane) with fast_div magic numbers for
    groups, rows and channels (kernels/common.cuh).
    """
    dv: list[int] = []
    for d in (groups, rows, channels):
        dv.extend(fast_div(d))
    return [("count", "i8", count), ("dv", "i8", dv), ("div", "i8", [groups, rows, channels])]


def fast_div(d: int) -> tuple[int, int]:
    """Magic number and shift of ``fast_div`` (kernels/common.cuh) for the divisor ``d``.

    ``floor(n / d) == (umulhi(n, m) + n) >> s`` for every ``0 <= n < 2**31``.
    """
    if d < 1 or d >= 2**31:
        raise ValueError(f"fast_div needs 1 <= d < 2**31; got {d}")
    s = (d - 1).bit_length()
    return ((1 << 32) * ((1 << s) - d)) // d + 1, s


__all__ = [
    "COMPILE_OPTIONS",
    "KERNEL_DIR",
    "BoundInputs",
    "DescInfo",
    "OutputBinding",
    "PackedLaunch",
    "array_device",
    "array_kind",
    "availability",
    "bind_inputs",
    "bind_output",
    "cupy_module",
    "current_device",
    "desc_info",
    "element_strides",
    "fast_div",
    "from_cupy",
    "get_kernel",
    "kernel_source",
    "kernel_sources",
    "logical_view",
    "operator_device",
    "padded",
    "params",
    "plane_item_fields",
    "to_cupy",
    "torch_stream",
]
