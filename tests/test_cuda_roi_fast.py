"""ROI_ALIGN's fast CUDA kernel (``roi_align_fast``): bit for bit the numpy reference.

The kernel serves a fixed sample count of 1 to 4 (MinimumSamplesPerOutput ==
MaximumSamplesPerOutput) with OutputWidth x samples <= 32 on inputs that are not
channels-last (``dmlops.cuda.roi.fast_samples``). Its lanes of one output pass their
samples round by shuffles and each adds them in DirectML's order (erratum E38), so every
case here must equal the reference's bits: FLOAT32 and FLOAT16, AVERAGE and MAX, LINEAR
and NEAREST, ROIs reaching past every edge (OutOfBoundsInputValue finite or NaN),
infinite, NaN and near-FLT_MAX taps, channel counts that leave the last block of
channels part-filled, ROI_ALIGN1's offsets and AlignRegionsToCorners, and strided,
misaligned and broadcast inputs. The selection tests need no GPU.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from conftest import to_numpy
from dmlops import TensorDesc
from dmlops.cuda import roi as cuda_roi
from dmlops.descs.roi import RoiAlignDesc
from dmlops.ops import roi as O

F32 = np.float32


def _desc(c: int, out: tuple[int, int], lo: int, hi: int, strides: tuple[int, ...] | None = None) -> RoiAlignDesc:
    return RoiAlignDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(2, c, 9, 11), strides=strides),
        roi_tensor=TensorDesc(data_type="FLOAT32", sizes=(3, 4)),
        batch_indices_tensor=TensorDesc(data_type="UINT32", sizes=(3,)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(3, c, *out)),
        reduction_function="AVERAGE",
        interpolation_mode="LINEAR",
        spatial_scale_x=1.0,
        spatial_scale_y=1.0,
        out_of_bounds_input_value=0.0,
        minimum_samples_per_output=lo,
        maximum_samples_per_output=hi,
    )


@pytest.mark.parametrize(
    ("c", "out", "lo", "hi", "strides", "want"),
    [
        (5, (7, 7), 2, 2, None, 2),
        (5, (7, 7), 1, 1, None, 1),
        (5, (3, 8), 4, 4, None, 4),  # 8 x 4 = 32 lanes: the widest
        (5, (3, 11), 3, 3, None, 0),  # 33 lanes
        (5, (7, 7), 5, 5, None, 0),
        (5, (7, 7), 1, 2, None, 0),  # not a fixed count
        (5, (7, 7), 1, 2**32 - 1, None, 0),  # adaptive
        (5, (65, 3), 4, 4, None, 0),  # 260 sample rows: past the table
        (5, (7, 7), 2, 2, (9 * 11 * 5, 1, 11 * 5, 5), 0),  # channels-last: roi_align_cl
        (1, (7, 7), 2, 2, (99, 1, 11, 1), 2),  # one channel: a channel stride of 1 is not channels-last
        (5, (7, 7), 2, 2, (0, 0, 22, 2), 2),  # broadcast and gaps
        (5, (7, 7), 2, 2, (0, 0, 2**26, 1), 0),  # 8 rows of 2^26 FLOAT32 elements: byte offsets reach 2^31
    ],
)
def test_fast_path_selection(c: int, out: tuple[int, int], lo: int, hi: int, strides: Any, want: int) -> None:
    desc = _desc(c, out, lo, hi, strides)
    xs = strides if strides is not None else (c * 99, 99, 11, 1)
    assert cuda_roi.fast_samples(desc, xs) == want


def _assert_same_bits(got: Any, want: np.ndarray) -> None:
    """Equal bits, NaN payloads aside (the reference's NaNs come from NumPy, the kernel's from the GPU)."""
    got = to_numpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    np.testing.assert_array_equal(nan_got, nan_want)
    bits = {2: np.uint16, 4: np.uint32}[want.itemsize]
    np.testing.assert_array_equal(got.view(bits)[~nan_got], want.view(bits)[~nan_want])


def _case(seed: int, dtype: Any, samples: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int], Any]:
    """Input, ROIs, batch indices, output size and spatial scales of one random case."""
    rng = np.random.default_rng(seed)
    n, c = 2, int(rng.choice([1, 3, 37, 70]))  # 37 and 70: the last block of 32 channels part-filled
    h, w = int(rng.integers(4, 24)), int(rng.integers(4, 24))
    ow = int(rng.integers(1, 32 // samples + 1))
    oh = int(rng.integers(1, 9))
    x = rng.uniform(-8, 8, (n, c, h, w))
    if seed % 3 == 1:  # non-finite taps
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, size=max(3, flat.size // 50), replace=False)
        flat[picks] = rng.choice([np.inf, -np.inf, np.nan], size=picks.size)
    if seed % 3 == 2 and dtype == np.float32:  # b - a overflows in the lerps
        x = np.sign(x) * 3.0e38
    x = x.astype(dtype)
    sx, sy = float(rng.choice([1.0, 0.5, 0.25])), float(rng.choice([1.0, 0.5]))
    rois = []
    for kind in ("inside", "partly", "outside", "point", "inverted", "huge", "partly", "inside", "thin"):
        if kind == "inside":
            x1, y1 = rng.uniform(0, w / sx), rng.uniform(0, h / sy)
            x2, y2 = rng.uniform(x1, w / sx), rng.uniform(y1, h / sy)
        elif kind == "partly":
            x1, y1 = rng.uniform(-4 / sx, w / sx), rng.uniform(-4 / sy, h / sy)
            x2, y2 = x1 + rng.uniform(0, 2 * w / sx), y1 + rng.uniform(0, 2 * h / sy)
        elif kind == "outside":
            x1, y1 = (w + rng.uniform(1.5, 4)) / sx, rng.uniform(-4, 4) / sy
            x2, y2 = x1 + rng.uniform(0, 3), y1 + rng.uniform(0, 5)
        elif kind == "point":
            x1 = x2 = rng.uniform(-1, w) / sx
            y1 = y2 = rng.uniform(-1, h) / sy
        elif kind == "inverted":
            x2, y2 = rng.uniform(0, w / sx), rng.uniform(0, h / sy)
            x1, y1 = x2 + rng.uniform(0, w / sx), y2 + rng.uniform(0, h / sy)
        elif kind == "huge":  # far past the input (within FLOAT16's range)
            x1, y1, x2, y2 = -3e4, -2e4, 6e4, 3e4
        else:  # thin: samples crowd into one pixel
            x1, y1 = rng.uniform(0, w / sx), rng.uniform(0, h / sy)
            x2, y2 = x1 + 0.01, y1 + rng.uniform(0, 0.3)
        rois.append([x1, y1, x2, y2])
    batch = rng.integers(0, n, len(rois)).astype(np.uint32)
    return x, np.array(rois).astype(dtype), batch, (oh, ow), (sx, sy)


def _both(x: np.ndarray, cupy: Any, rois: np.ndarray, batch: np.ndarray, out: tuple[int, int], **kw: Any) -> Any:
    """(cuda's result, the numpy reference's) of ROI_ALIGN1 with these arguments."""
    got = O.roi_align1(cupy.asarray(x), cupy.asarray(rois), cupy.asarray(batch), out, backend="cuda", **kw)
    want = O.roi_align1(x, rois, batch, out, backend="numpy", **kw)
    return got, want


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("samples", [1, 2, 3, 4])
@pytest.mark.parametrize("mode", ["LINEAR", "NEAREST_NEIGHBOR"])
@pytest.mark.parametrize("reduction", ["AVERAGE", "MAX"])
@pytest.mark.parametrize("keep", [True, False], ids=["rows-kept", "rows-loaded"])
def test_fast_kernel_matches_the_reference(
    gpu: Any, monkeypatch: pytest.MonkeyPatch, keep: bool, reduction: str, mode: str, samples: int, dtype: Any,
    seed: int,
) -> None:  # fmt: skip
    """With and without FAST_KEEP_ROWS (taps of the previous output row's last sample row taken again)."""
    monkeypatch.setattr(cuda_roi, "FAST_KEEP_ROWS", keep)
    x, rois, batch, out, scale = _case(seed + 10 * samples, dtype, samples)
    oob = [0.0, -2.5, float("nan")][seed]
    kw = dict(
        spatial_scale=scale, reduction_function=reduction, interpolation_mode=mode, out_of_bounds_input_value=oob,
        minimum_samples_per_output=samples, maximum_samples_per_output=samples,
    )  # fmt: skip
    desc_strides = (x.shape[1] * x.shape[2] * x.shape[3], x.shape[2] * x.shape[3], x.shape[3], 1)
    assert cuda_roi.fast_samples(_desc_of(x, out, samples), desc_strides) == samples
    got, want = _both(x, gpu, rois, batch, out, **kw)
    _assert_same_bits(got, want)


def _desc_of(x: np.ndarray, out: tuple[int, int], samples: int) -> RoiAlignDesc:
    """A desc of ``x``'s sizes and this output and sample count (for fast_samples)."""
    desc = _desc(x.shape[1], out, samples, samples)
    return dataclasses.replace(desc, input_tensor=TensorDesc(data_type="FLOAT32", sizes=x.shape))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("samples", [1, 2, 3, 4])
def test_fast_kernel_roi_align1_offsets_and_corners(gpu: Any, samples: int, seed: int) -> None:
    """ROI_ALIGN1's pixel offsets and AlignRegionsToCorners (odd seeds), one output of one sample included."""
    dtype = np.float16 if seed % 4 == 2 else np.float32
    x, rois, batch, out, scale = _case(100 + seed, dtype, samples)
    if seed == 7:
        out, samples = (1, 1), 1  # corners with one sample: the region's centre
    rng = np.random.default_rng(seed)
    kw = dict(
        spatial_scale=scale, reduction_function="MAX" if seed % 3 == 0 else "AVERAGE",
        interpolation_mode="NEAREST_NEIGHBOR" if seed % 4 == 3 else "LINEAR",
        input_pixel_offset=float(rng.choice([0.0, 0.5, -0.25])), output_pixel_offset=float(rng.choice([0.0, -0.5, 1.5])),
        align_regions_to_corners=bool(seed % 2), out_of_bounds_input_value=-7.5,
        minimum_samples_per_output=samples, maximum_samples_per_output=samples,
    )  # fmt: skip
    got, want = _both(x, gpu, rois, batch, out, **kw)
    _assert_same_bits(got, want)


@pytest.mark.parametrize("samples", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_fast_kernel_strided_misaligned_and_broadcast_inputs(gpu: Any, dtype: Any, samples: int) -> None:
    """Views with gaps between elements, rows and planes, a base one element past an aligned
    address, and a plane broadcast over batches and channels read the same elements as the
    dense input."""
    x, rois, batch, out, scale = _case(200 + samples, dtype, samples)
    n, c, h, w = x.shape
    kw = dict(
        spatial_scale=scale, out_of_bounds_input_value=-1.0, minimum_samples_per_output=samples,
        maximum_samples_per_output=samples,
    )  # fmt: skip
    want = O.roi_align1(x, rois, batch, out, backend="numpy", **kw)
    roi_d, batch_d = gpu.asarray(rois), gpu.asarray(batch)
    # element, row and plane gaps, the base off 16-byte alignment
    shape = (n, c + 1, h + 3, 2 * w + 1)
    inner = (h + 3) * (2 * w + 1) + 2 * (2 * w + 1) + 1  # elements from a padded block's start to the view's
    skip = next(k for k in (1, 2, 3) if (k + inner) * x.itemsize % 16)
    padded = gpu.zeros(skip + int(np.prod(shape)), dtype=dtype)[skip:].reshape(shape)
    view = padded[:, 1:, 2 : h + 2, 1::2]
    view[...] = gpu.asarray(x)
    assert view.strides[-1] == 2 * x.itemsize and view.data.ptr % 16 != 0
    _assert_same_bits(O.roi_align1(view, roi_d, batch_d, out, backend="cuda", **kw), want)
    # one plane broadcast over batches and channels (strides 0)
    plane = x[:1, :1]
    want_b = O.roi_align1(np.broadcast_to(plane, x.shape).copy(), rois, batch, out, backend="numpy", **kw)
    got_b = O.roi_align1(gpu.broadcast_to(gpu.asarray(plane), x.shape), roi_d, batch_d, out, backend="cuda", **kw)
    _assert_same_bits(got_b, want_b)


def test_fast_kernel_agrees_with_the_general_kernel_on_many_rois(gpu: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's shape of work (many ROIs, 7 x 7, two samples, 96 channels): the fast
    kernel (blocks of 16 and of 32 channels), the general one and the reference agree bit for bit."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 96, 30, 40)).astype(F32)
    centres = rng.uniform(0, 160, (200, 2))
    sizes = np.exp(rng.uniform(np.log(8), np.log(200), (200, 2)))
    rois = np.concatenate([centres - sizes / 2, centres + sizes / 2], 1).astype(F32)
    batch = rng.integers(0, 2, 200).astype(np.uint32)
    kw = dict(spatial_scale=0.25, minimum_samples_per_output=2, maximum_samples_per_output=2)
    want = O.roi_align1(x, rois, batch, 7, backend="numpy", **kw)
    fast = O.roi_align1(gpu.asarray(x), gpu.asarray(rois), gpu.asarray(batch), 7, backend="cuda", **kw)
    _assert_same_bits(fast, want)
    monkeypatch.setattr(cuda_roi, "FAST_MANY_BLOCKS", 0)  # FAST_CHANNELS per block, not FAST_CHANNELS_FEW
    fast = O.roi_align1(gpu.asarray(x), gpu.asarray(rois), gpu.asarray(batch), 7, backend="cuda", **kw)
    _assert_same_bits(fast, want)
    monkeypatch.setattr(cuda_roi, "FAST_KEEP_ROWS", not cuda_roi.FAST_KEEP_ROWS)
    fast = O.roi_align1(gpu.asarray(x), gpu.asarray(rois), gpu.asarray(batch), 7, backend="cuda", **kw)
    _assert_same_bits(fast, want)
    monkeypatch.setattr(cuda_roi, "FAST_PATH", False)
    general = O.roi_align1(gpu.asarray(x), gpu.asarray(rois), gpu.asarray(batch), 7, backend="cuda", **kw)
    _assert_same_bits(general, want)
