"""ROI operators on the CUDA backend: ROI_ALIGN, ROI_ALIGN1, ROI_ALIGN_GRAD and ROI_POOLING.

ROI_ALIGN1 runs on ROI_ALIGN's kernels (ROI_ALIGN is ROI_ALIGN1 with InputPixelOffset 0.5,
OutputPixelOffset -0.5 and no AlignRegionsToCorners: ``RoiParams`` carries the three).
ROI_ALIGN_GRAD visits ROI_ALIGN1's samples and sums in float64 in a fixed order, rounded
once into the outputs (:func:`run_roi_align_grad`; no atomics, so run to run identical):
the input gradient as a gather over the ROIs of each input plane, the ROI gradient per
ROI block. ROI_POOLING (``roi_pooling``) is a thread per output, bit-exact.

ROI_ALIGN
---------
ROI_ALIGN on the GPU, see kernels/roi_align.cu.

Four kernels:

* ``roi_align_avg`` for AVERAGE (outputs up to 64 x 64), only while ``SEPARABLE_AVERAGE``
  is on (it is off: the separable sums are not DirectML's arithmetic, erratum E38; AVERAGE
  then runs per sample like MAX): the separable tap-list form
  (each output row and column reduced to its distinct taps with summed weights, built
  once per block in shared memory), evaluated by a thread per output column walking
  the output rows; neighbouring threads take neighbouring output columns (NCHW, with
  idle lanes padding 7 columns to 8: :func:`item_width`) or, on inputs whose channel
  stride is 1 (NHWC-strided), neighbouring channels. A block's
  outputs go through shared memory to be written as one run where that measured faster
  (see ``STAGE_OUTPUTS``);
* ``roi_align_cl`` (channels across the lanes of a warp, coalesced tap loads) for MAX and
  AVERAGE on inputs whose channel stride is 1, per sample;
* ``roi_align_fast`` (:func:`fast_samples`: a fixed sample count of 1 to 4, OutputWidth x
  samples <= 32) per sample, bit for bit ``roi_align``: a lane per sample column, so a warp
  load reads one image row of one or two channels, the samples of an output added in
  DirectML's order after shuffles, the ROI set up once per block of channels;
* ``roi_align`` (threads over channel x bin of one ROI, per sample) otherwise.

Per-sample evaluation (MAX, larger outputs, and AVERAGE regions with more samples than the
tables hold) visits, along an axis without a table, only the run of in-bounds samples
(found by bisection; the rest read OutOfBoundsInputValue), so a region far larger than the
input costs the samples that read the input: adaptive sampling of a million-pixel region
would otherwise loop 10^12 times per output and never return. A huge fixed sample count
whose samples do read the input still costs them all (the reference refuses counts whose
arrays would not fit in memory with AllocationError; this backend allocates nothing per
sample).

Batch indices outside ``[0, BatchCount)`` raise DataIndexError (ruling 3). A one-block
check kernel runs on a side stream, ordered after the work that produced the indices,
and writes its verdict straight into a pinned host word; only that kernel is waited
for: the ROI kernel (which clamps, so it never reads out of bounds) is already queued
and keeps running while the host reads the word. Waiting for the ROI kernel itself (an
atomic flag written by it) measured 33-40 µs slower per call on the benchmark workload
(H100, docs/performance.md), since the host then prepares the next call while the GPU
is idle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..descs.roi import batch_index_error, image_tensor
from ..enums import FeatureLevel, InterpolationMode, ReduceFunction
from ..errors import UnsupportedError
from ._copy import C_TYPES, PlanCache
from ._runtime import PackedLaunch, cupy_module, current_device, element_strides, fast_div, get_kernel, params
from .data_movement import NO_BAD

# -- ROI_ALIGN -----------------------------------------------------------------

_PLANS = PlanCache()
_INDEX_C = {"uint32": "u32", "uint64": "u64"}
"""C types of the BatchIndicesTensor data types."""
SEPARABLE_AVERAGE = False
"""Whether AVERAGE may take ``roi_align_avg``. Off: its separable sums (tap weights summed per
row and column, zero-weight taps dropped, float32 products) are not DirectML's arithmetic
(erratum E38: per-sample float32 lerps along y then x, every tap read, a float32 running sum
in sample order), so an infinite tap or values near FLT_MAX give other results than
DirectML's; AVERAGE runs per sample, as MAX does, bit for bit the reference's."""
SEPARABLE_MAX_OUT = 64
"""Largest OutputHeight / OutputWidth of ``roi_align_avg`` (its ROI_SEP_OUT)."""
SEPARABLE_CHANNELS = 64
"""Channels per block of ``roi_align_avg`` with a fixed sample count (its tap tables are built once per block)."""
SEPARABLE_CHANNELS_ADAPTIVE = 32
"""Channels per block of ``roi_align_avg`` with adaptive sampling: a block's cost follows its
ROI's size, and smaller blocks balance the large ROIs better (504 vs 590 µs on the H100)."""
PAD_COLUMNS = True
"""Whether ``roi_align_avg`` pads its work items per channel on NCHW-strided inputs (:func:`item_width`)."""
REGISTER_TAPS = 4
"""Column taps per output that ``roi_align_avg`` holds in registers (its ROI_REG_TAPS)."""
STAGE_OUTPUTS = True
"""Whether ``roi_align_avg`` may stage a block's outputs in shared memory and write them as
one contiguous run on NCHW-strided inputs. It does so for FLOAT32 with a fixed sample
count, where it measured faster on the H100 (sr=2 181.9 vs 190.6 µs); FLOAT16 (162.7 vs
156.1 µs, its kernel bound by L1 wavefronts, to which the staging adds) and adaptive
sampling (500.0 vs 492.6 µs) store directly. Channels-last strides always stage: their
direct stores scatter a sector per channel (277 -> 139 µs)."""


FAST_PATH = True
"""Whether a fixed sample count of 1 to 4 may take ``roi_align_fast`` (:func:`fast_samples`)."""
FAST_CHANNELS = 32
"""Channels per block of ``roi_align_fast`` on grids of at least FAST_MANY_BLOCKS blocks: its
per-ROI setup (float64 sample coordinates into shared tables) is paid once per block."""
FAST_CHANNELS_FEW = 16
"""Channels per block of ``roi_align_fast`` on smaller grids (the tiny call's 100 ROIs x 256
channels: 1600 blocks, where 32 channels gave 800 blocks and a slower kernel on the H100)."""
FAST_MANY_BLOCKS = 4096
"""Blocks of FAST_CHANNELS channels from which ``roi_align_fast`` keeps that many per block."""
FAST_KEEP_ROWS = True
"""Whether ``roi_align_fast`` takes the taps of an output row's last sample row again for the
next output row's first where they read the same image rows (its KEEP), instead of loading them."""
FAST_ROWS = 256
"""Largest OutputHeight x samples of ``roi_align_fast`` (its ROI_FAST_ROWS)."""


CHECK_THREADS = 1024
"""Threads of ``roi_batch_check``'s one block (its ROI_CHECK_THREADS)."""


class _Side:
    """A side stream, an event and a pinned host word for the batch-index check, per device.

    The check kernel writes the word through its device (mapped) address. The lock
    keeps one call's use of them together across threads.
    """

    def __init__(self) -> None:
        cp = cupy_module()
        # The highest priority (CUDA clamps a number below the range to its top): the
        # check's block takes the first free slot instead of queueing behind every block
        # of the ROI kernel launched after it.
        self.stream = cp.cuda.Stream(non_blocking=True, priority=-(2**20))
        self.ready = cp.cuda.Event(disable_timing=True)
        self.host = cp.cuda.alloc_pinned_memory(8)
        self.word = np.frombuffer(self.host, dtype=np.uint64, count=1)
        # Pinned memory is mapped for the device (unified addressing); ask for its address there.
        self.word_on_device = int(cp.cuda.runtime.pointerGetAttributes(self.host.ptr).devicePointer)
        self.lock = threading.Lock()


_SIDE: dict[int, _Side] = {}
_SIDE_LOCK = threading.Lock()


def _side() -> _Side:
    """The current device's side state (made once per device, also across threads)."""
    device = current_device()
    side = _SIDE.get(device)
    if side is None:
        with _SIDE_LOCK:
            side = _SIDE.get(device)
            if side is None:
                side = _SIDE[device] = _Side()
    return side


PENDING = 2**64 - 2
"""The host word's value until the check kernel writes its verdict (no ROI index reaches it)."""
POLL_SPINS = 20000
"""Reads of the host word before the wait falls back to synchronizing the side stream
(which raises the check kernel's error, if it failed, instead of spinning forever)."""


def _verdict(side: _Side) -> int:
    """The check kernel's verdict: the lowest bad ROI, or NO_BAD.

    The host reads the pinned word until the kernel has written it. No event is recorded
    after the kernel or synchronized: two runtime calls fewer per ROI_ALIGN call, about
    1 µs (H100, docs/performance.md run 17).
    """
    word = side.word
    for _ in range(POLL_SPINS):
        if word[0] != PENDING:
            return int(word[0])
    side.stream.synchronize()
    bad = int(word[0])
    if bad == PENDING:  # the kernel finished without writing: a broken invariant, never data
        raise RuntimeError("ROI_ALIGN's batch-index check did not report")
    return bad


def _check_params(count: int, stride: int, batch_count: int) -> np.void:
    """The RoiCheckParams struct: ``count`` batch indices ``stride`` elements apart."""
    return params(("count", "i8", count), ("stride", "i8", stride), ("batch_count", "i8", batch_count))


def _check_launch(desc: Any, bi: Any, bs: tuple[int, ...]) -> PackedLaunch:
    """``roi_batch_check`` for these batch indices (pointers: indices, the host word's device address)."""
    fn = get_kernel("roi_align.cu", f"roi_batch_check<{_INDEX_C[str(bi.dtype)]}>")
    return PackedLaunch(fn, 1, CHECK_THREADS, 2, _check_params(bi.size, bs[-1], image_tensor(desc).sizes[0]))


def item_width(out_w: int) -> int:
    """Work items per channel of ``roi_align_avg`` on NCHW-strided inputs.

    OutputWidth, or the next power of two where that idles at most an eighth of the lanes
    (7 -> 8). With 8 items per channel a warp's loads span exactly 4 channel planes instead of 5
    or 6 (32 / 7 and the straddled ends), so fewer L1 wavefronts per load.
    """
    if not PAD_COLUMNS or out_w > 32:
        return out_w
    padded = 1 << (out_w - 1).bit_length()
    return padded if 8 * (padded - out_w) <= padded else out_w


def _params(
    desc: Any,
    per_block: int,
    xs: Any,
    rs: Any,
    bs: Any,
    ys: Any,
    item_w: int | None = None,
    dx_stride: Any = (0, 0, 0, 0),
) -> np.void:
    n, c, h, w = image_tensor(desc).sizes
    # ROI_ALIGN(1)'s OutputTensor; ROI_ALIGN_GRAD's InputGradientTensor (its y_stride: ``ys``)
    out = desc.output_tensor if "OutputTensor" in desc.tensor_names("output") else desc.input_gradient_tensor
    r, _, oh, ow = out.sizes
    item_w = ow if item_w is None else item_w
    return params(
        ("num_rois", "i8", r),
        ("batch_count", "i8", n),
        ("channels", "i8", c),
        ("in_h", "i8", h),
        ("in_w", "i8", w),
        ("out_h", "i8", oh),
        ("out_w", "i8", ow),
        ("channels_per_block", "i8", per_block),
        ("x_stride", "i8", list(xs)),
        ("y_stride", "i8", list(ys)),
        ("roi_stride", "i8", [rs[-2] if len(rs) >= 2 else 0, rs[-1]]),
        ("bi_stride", "i8", bs[-1]),
        ("min_samples", "i8", desc.minimum_samples_per_output),
        ("max_samples", "i8", desc.maximum_samples_per_output),
        ("scale_x", "f8", desc.spatial_scale_x),
        ("scale_y", "f8", desc.spatial_scale_y),
        ("in_offset", "f8", desc.input_pixel_offset),
        ("out_offset", "f8", desc.output_pixel_offset),
        ("oob", "f8", getattr(desc, "out_of_bounds_input_value", 0.0)),  # ROI_ALIGN_GRAD has none
        ("item_w", "i8", item_w),
        ("div_w", "i8", list(fast_div(max(1, item_w)))),
        ("corners", "i8", int(bool(getattr(desc, "align_regions_to_corners", False)))),
        ("has_x", "i8", int(getattr(desc, "input_tensor", None) is not None)),
        ("dx_stride", "i8", list(dx_stride)),
    )


def _chunked_rows(desc: Any, xs: Any, itemsize: int, aligned: bool) -> bool:
    """Whether ``roi_align_avg`` may read the input in aligned 16-byte chunks of a row.

    Rows must have unit stride, every row, plane and batch start a whole number of
    chunks from an aligned base, and the width a whole number of chunks (so no chunk
    reaches past the end of its row, nor of the buffer).
    """
    per_chunk = 16 // itemsize
    width = desc.input_tensor.sizes[3]
    return aligned and xs[3] == 1 and all(s % per_chunk == 0 for s in xs[:3]) and width % per_chunk == 0


def fast_samples(desc: Any, xs: Any) -> int:
    """The sample count S of ``roi_align_fast`` for this desc and input strides, or 0 where it does not apply.

    It needs a fixed count (MinimumSamplesPerOutput == MaximumSamplesPerOutput) of 1 to 4,
    OutputWidth x S <= 32 (a lane per sample column), OutputHeight x S <= FAST_ROWS, and
    row and column strides >= 0 with every byte offset inside a plane below 2^31 (32-bit
    offsets); channels-last strides
    keep ``roi_align_cl``, whose warps load channels side by side.
    """
    s = desc.minimum_samples_per_output
    if not FAST_PATH or s != desc.maximum_samples_per_output or not 1 <= s <= 4:
        return 0
    c, h, w = desc.input_tensor.sizes[1:]
    oh, ow = desc.output_tensor.sizes[2:]
    if (xs[1] == 1 and c > 1) or not 1 <= ow * s <= 32 or not 1 <= oh * s <= FAST_ROWS:
        return 0
    itemsize = desc.input_tensor.data_type.size_in_bits // 8
    return s if min(xs[2], xs[3]) >= 0 and ((h - 1) * xs[2] + (w - 1) * xs[3]) * itemsize < 2**31 else 0


def _plan(desc: Any, xs: Any, rs: Any, bs: Any, ys: Any, bi_dtype: str, dtype: Any, aligned: bool) -> tuple[Any, ...]:
    """(desc, the kernel's PackedLaunch of pointers x, rois, batch indices and y)."""
    c = desc.input_tensor.sizes[1]
    r, _, oh, ow = desc.output_tensor.sizes
    bins = oh * ow
    t = C_TYPES[dtype]
    flags = (
        f"{'true' if desc.reduction_function is ReduceFunction.MAX else 'false'}, "
        f"{'true' if desc.interpolation_mode is InterpolationMode.LINEAR else 'false'}"
    )
    bi_c = _INDEX_C[bi_dtype]
    channels_last = xs[1] == 1 and c > 1
    if SEPARABLE_AVERAGE and desc.reduction_function is ReduceFunction.AVERAGE and max(oh, ow) <= SEPARABLE_MAX_OUT:
        linear = "true" if desc.interpolation_mode is InterpolationMode.LINEAR else "false"
        fixed = desc.minimum_samples_per_output == desc.maximum_samples_per_output
        per_block = min(c, SEPARABLE_CHANNELS if fixed else SEPARABLE_CHANNELS_ADAPTIVE)
        h, w = desc.input_tensor.sizes[2:]
        small = min(xs[2], xs[3]) >= 0 and (h - 1) * xs[2] + (w - 1) * xs[3] < 2**31
        off = "u32" if small else "i64"  # 32-bit element offsets inside a plane where they fit
        # The chunk path (and its 16-24 KB of shared-memory tables) serves outputs of more
        # than ROI_REG_TAPS column taps; a fixed count of at most that many never takes it.
        taps = (2 if linear == "true" else 1) * desc.maximum_samples_per_output
        chunks = not (fixed and taps <= REGISTER_TAPS)
        vec = "true" if chunks and _chunked_rows(desc, xs, np.dtype(dtype).itemsize, aligned) else "false"
        cl = "true" if channels_last else "false"
        staged = channels_last or (STAGE_OUTPUTS and fixed and np.dtype(dtype).itemsize == 4)
        stage = "true" if staged else "false"
        fn = get_kernel("roi_align.cu", f"roi_align_avg<{t}, {bi_c}, {linear}, {off}, {vec}, {cl}, {stage}>")
        p = _params(desc, per_block, xs, rs, bs, ys, ow if channels_last else item_width(ow))
        return (desc, PackedLaunch(fn, (r, -(-c // per_block)), 256, 4, p))
    samples = fast_samples(desc, xs)
    if samples:
        many = r * -(-c // FAST_CHANNELS) >= FAST_MANY_BLOCKS
        per_block = max(1, min(c, FAST_CHANNELS if many else FAST_CHANNELS_FEW))
        groups = 32 // (ow * samples)  # channels per warp
        threads = min(256, -(-per_block // groups) * 32)
        kernel = f"roi_align_fast<{t}, {bi_c}, {flags}, {samples}, {'true' if FAST_KEEP_ROWS else 'false'}>"
        fn = get_kernel("roi_align.cu", kernel)
        return (desc, PackedLaunch(fn, (r, -(-c // per_block)), threads, 4, _params(desc, per_block, xs, rs, bs, ys)))
    if not channels_last:
        per_block = max(1, min(c, 256 // bins)) if bins <= 256 else 1
        threads = min(256, -(-per_block * bins // 32) * 32)
        fn = get_kernel("roi_align.cu", f"roi_align<{t}, {bi_c}, {flags}>")
        return (desc, PackedLaunch(fn, (r, -(-c // per_block)), threads, 4, _params(desc, per_block, xs, rs, bs, ys)))
    fn = get_kernel("roi_align.cu", f"roi_align_cl<{t}, {bi_c}, {flags}>")
    return (desc, PackedLaunch(fn, (r, -(-c // 32)), 256, 4, _params(desc, 32, xs, rs, bs, ys)))


def run_roi_align(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
    check_batch_indices: bool = True,
) -> None:
    """Launch ROI_ALIGN on device views (see :func:`dmlops.cuda.execute`).

    ``check_batch_indices=False`` skips the DataIndexError check and its wait (the
    kernel clamps regardless); only the benchmark uses it, to time the kernel.
    """
    x = inputs["InputTensor"]
    rois = inputs["ROITensor"]
    bi = inputs["BatchIndicesTensor"]
    y = outputs["OutputTensor"]
    xs, rs, bs, ys = element_strides(x), element_strides(rois), element_strides(bi), element_strides(y)
    aligned = x.data.ptr % 16 == 0
    key = (id(desc), xs, rs, bs, ys, aligned)
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _PLANS.put(
            key, (*_plan(desc, xs, rs, bs, ys, str(bi.dtype), x.dtype, aligned), _check_launch(desc, bi, bs))
        )
    _, launch, check = plan
    if not check_batch_indices:
        launch(x.data.ptr, rois.data.ptr, bi.data.ptr, y.data.ptr)
        return
    _checked(desc, bi, check, lambda: launch(x.data.ptr, rois.data.ptr, bi.data.ptr, y.data.ptr))


def _checked(desc: Any, bi: Any, check: PackedLaunch, work: Callable[[], None]) -> None:
    """``work()`` (the launches) beside the batch-index check; DataIndexError after it for a bad index.

    The check runs on the side stream after everything queued so far (the indices'
    producers); the kernels that ``work`` queues meanwhile keep running while the host
    reads the verdict (they clamp the index, so they never read out of bounds).
    """
    side = _side()
    with side.lock:
        side.ready.record()
        side.stream.wait_event(side.ready)
        side.word[0] = PENDING  # the launch below orders this store before the kernel's
        check(bi.data.ptr, side.word_on_device, stream=side.stream.ptr)
        work()
        bad = _verdict(side)
    if bad != NO_BAD:
        flat = bi.reshape(-1) if bi.flags.c_contiguous else bi.ravel()
        raise batch_index_error(desc, bad, int(flat[bad].get()))


# -- ROI_POOLING -------------------------------------------------------------------------------

POOL_THREADS = 256
POOL_MAX_BLOCKS = 1 << 20
"""Blocks of ``roi_pooling`` at most (it loops over the outputs beyond)."""


def _pooling_launch(desc: Any, xs: Any, rs: Any, ys: Any, dtype: Any) -> PackedLaunch:
    n, c, h, w = desc.input_tensor.sizes
    r, _, ph, pw = desc.output_tensor.sizes
    count = r * c * ph * pw
    p = params(
        ("count", "i8", count),
        ("channels", "i8", c),
        ("in_h", "i8", h),
        ("in_w", "i8", w),
        ("pooled_h", "i8", ph),
        ("pooled_w", "i8", pw),
        ("batch_count", "i8", n),
        ("x_stride", "i8", list(xs)),
        ("y_stride", "i8", list(ys)),
        ("roi_stride", "i8", [rs[2], rs[3]]),
        ("scale", "f8", float(np.float32(desc.spatial_scale))),  # DirectML multiplies in float32 (E190)
    )
    fn = get_kernel("roi_align.cu", f"roi_pooling<{C_TYPES[dtype]}>")
    blocks = min(POOL_MAX_BLOCKS, max(1, -(-count // POOL_THREADS)))
    return PackedLaunch(fn, blocks if count else 0, POOL_THREADS, 3, p)


def run_roi_pooling(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """ROI_POOLING: a thread per output, the max over its bin (kernels/roi_align.cu ``roi_pooling``), bit-exact."""
    x, rois, y = inputs["InputTensor"], inputs["ROITensor"], outputs["OutputTensor"]
    if rois.dtype != x.dtype:
        raise UnsupportedError(f"{desc.dml_name}: the cuda backend needs ROITensor of InputTensor's data type")
    xs, rs, ys = element_strides(x), element_strides(rois), element_strides(y)
    key = (id(desc), xs, rs, ys)
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _PLANS.put(key, (desc, _pooling_launch(desc, xs, rs, ys, x.dtype)))
    plan[1](x.data.ptr, rois.data.ptr, y.data.ptr)


# -- ROI_ALIGN_GRAD --------------------------------------------------------------------------

GRAD_THREADS = 256
"""Threads of the ROI_ALIGN_GRAD kernels' blocks (their ROI_GRAD_THREADS)."""
GRAD_MAX_BLOCKS = 1 << 20
"""Blocks of ``roi_align_grad_input`` at most (a block loops over input planes beyond)."""


def _store(src: Any, dst: Any) -> None:
    """The float64 ``src`` (packed) rounded once into ``dst`` (FLOAT32 or FLOAT16, any strides, up to 4-D)."""
    sizes, strides = list(dst.shape), list(element_strides(dst))
    sizes, strides = [1] * (4 - len(sizes)) + sizes, [0] * (4 - len(strides)) + strides
    count = int(np.prod(sizes))
    if not count:
        return
    fn = get_kernel("roi_align.cu", f"roi_grad_store<{C_TYPES[dst.dtype]}>")
    p = params(("count", "i8", count), ("sizes", "i8", sizes), ("strides", "i8", strides))
    PackedLaunch(fn, min(GRAD_MAX_BLOCKS, -(-count // 256)), 256, 2, p)(src.data.ptr, dst.data.ptr)


def _grad_plan(desc: Any, xs: Any, rs: Any, bs: Any, ys: Any, ds: Any, dtype: Any, bi: Any) -> tuple[Any, ...]:
    """(desc, ``roi_align_grad``'s launch, ``roi_align_grad_input``'s, the batch-index check's)."""
    n, c = image_tensor(desc).sizes[:2]
    r = desc.input_gradient_tensor.sizes[0]
    flags = (
        f"{'true' if desc.reduction_function is ReduceFunction.MAX else 'false'}, "
        f"{'true' if desc.interpolation_mode is InterpolationMode.LINEAR else 'false'}"
    )
    head = f"{C_TYPES[dtype]}, {_INDEX_C[str(bi.dtype)]}, {flags}"
    p = _params(desc, c, xs, rs, bs, ys, dx_stride=ds)
    rois_kernel = PackedLaunch(get_kernel("roi_align.cu", f"roi_align_grad<{head}>"), r, GRAD_THREADS, 6, p)
    planes = min(GRAD_MAX_BLOCKS, n * c) if r else 0
    plane_kernel = PackedLaunch(get_kernel("roi_align.cu", f"roi_align_grad_input<{head}>"), planes, GRAD_THREADS, 6, p)
    return (desc, rois_kernel, plane_kernel, _check_launch(desc, bi, bs))


def run_roi_align_grad(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """ROI_ALIGN_GRAD (kernels/roi_align.cu): float64 gradients in a fixed order, rounded once into the outputs.

    ``roi_align_grad`` (a block per ROI) records MAX's picks and sums the ROI gradient;
    ``roi_align_grad_input`` (a block per input plane) gathers the input gradient and
    rounds it into OutputGradientTensor. No atomics: identical results from run to run.
    """
    cp = cupy_module()
    x = inputs.get("InputTensor")
    dy, rois, bi = inputs["InputGradientTensor"], inputs["ROITensor"], inputs["BatchIndicesTensor"]
    if rois.dtype != dy.dtype or (x is not None and x.dtype != dy.dtype):
        raise UnsupportedError(f"{desc.dml_name}: the cuda backend needs one data type for its float tensors")
    dx_out, droi_out = outputs.get("OutputGradientTensor"), outputs.get("OutputROIGradientTensor")
    n, c, h, w = image_tensor(desc).sizes
    r, _, oh, ow = desc.input_gradient_tensor.sizes
    xs = element_strides(x) if x is not None else (0, 0, 0, 0)
    ds = element_strides(dx_out) if dx_out is not None else (0, 0, 0, 0)
    rs, bs, ys = element_strides(rois), element_strides(bi), element_strides(dy)
    key = (id(desc), xs, rs, bs, ys, ds, "grad")
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _PLANS.put(key, _grad_plan(desc, xs, rs, bs, ys, ds, dy.dtype, bi))
    _, rois_kernel, plane_kernel, check = plan
    reduce_max = desc.reduction_function is ReduceFunction.MAX
    pick = cp.full(r * c * oh * ow if reduce_max else 1, -1, dtype=np.int64)
    droi = cp.zeros(r * 4, dtype=np.float64)
    acc = cp.zeros(n * c * h * w if dx_out is not None else 1, dtype=np.float64)
    x_ptr = x.data.ptr if x is not None else 0

    def work() -> None:
        if reduce_max or (x is not None and droi_out is not None):  # MAX's picks, the ROI gradient
            rois_kernel(x_ptr, dy.data.ptr, rois.data.ptr, bi.data.ptr, pick.data.ptr, droi.data.ptr)
        if dx_out is not None:
            plane_kernel(dy.data.ptr, rois.data.ptr, bi.data.ptr, pick.data.ptr, acc.data.ptr, dx_out.data.ptr)

    _checked(desc, bi, check, work)
    if droi_out is not None:
        _store(droi, droi_out)


OPERATORS: dict[str, Callable[..., Any]] = {
    "ROI_ALIGN": run_roi_align,
    "ROI_ALIGN1": run_roi_align,  # ROI_ALIGN's kernels: RoiParams carries the offsets and AlignRegionsToCorners
    "ROI_ALIGN_GRAD": run_roi_align_grad,
    "ROI_POOLING": run_roi_pooling,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
