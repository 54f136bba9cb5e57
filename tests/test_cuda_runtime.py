"""The CUDA backend's plan layer (CPU-only) and its array interop (GPU, marked ``cuda``)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dmlops
from dmlops import TensorDesc
from dmlops.backends import load_backend
from dmlops.cuda import _plan
from dmlops.descs.data_movement import GatherDesc, Slice1Desc
from dmlops.errors import BackendUnavailableError, DataIndexError

# -- plan layer: no GPU needed ------------------------------------------------------------------


def _offsets(sizes, strides, base=0):
    """Every offset of a strided iteration space, in row-major order."""
    return [base + sum(c * s for c, s in zip(coord, strides)) for coord in itertools.product(*map(range, sizes))]


@pytest.mark.parametrize(
    "sizes, strides",
    [
        ((64, 64, 128, 128), [(-1048576, -16384, -128, -1), (1048576, 16384, 128, 1)]),
        ((2, 1, 3, 4), [(12, 12, 4, 1), (24, 24, 8, 2)]),
        ((3, 4, 5), [(20, 5, 1), (1, 3, 12)]),
        ((2, 3, 4), [(0, 4, 1), (12, 4, 1)]),
        ((1, 1, 1), [(5, 6, 7), (1, 1, 1)]),
    ],
)
def test_collapse_addresses_the_same_elements(sizes, strides) -> None:
    c_sizes, c_strides = _plan.collapse(sizes, strides)
    assert 1 not in c_sizes
    if np.prod(sizes) <= 4096:
        for before, after in zip(strides, c_strides):
            assert _offsets(sizes, before) == _offsets(c_sizes, after)


def test_full_reverse_collapses_to_one_dimension() -> None:
    sizes = (64, 64, 128, 128)
    packed = (1048576, 16384, 128, 1)
    c_sizes, (src, dst) = _plan.collapse(sizes, [tuple(-s for s in packed), packed])
    assert c_sizes == (64 * 64 * 128 * 128,)
    assert src == (-1,) and dst == (1,)


@pytest.mark.parametrize("window", range(1, 6))
@pytest.mark.parametrize("stride", range(1, 6))
def test_block_offset_is_the_offset_in_the_first_window(window, stride) -> None:
    """max_pool_grad_blk2d's compile-time block offsets, against a search of the windows."""
    from dmlops.cuda.pooling import _block_offset

    for pad in range(window):
        offsets = set()
        for i in range(0, 40, 2):  # the first element of every 2-element block
            first = next(o for o in range(-10, 40) if o * stride - pad + window - 1 >= i)
            offsets.add(i + pad - first * stride)
        expected = offsets.pop() if len(offsets) == 1 else -1
        assert _block_offset(2, window, stride, pad) == expected, (window, stride, pad)


def test_int32_decision() -> None:
    small = _plan.copy_layout((4, 4), (4, 1), (4, 1))
    assert small.fits_int32()
    big = _plan.copy_layout((2, 2**30), (2**30, 1), (2**30, 1))
    assert not big.fits_int32()
    gathered = _plan.copy_layout((2, 3), (0, 1), (3, 1), (1, 0), axis_size=2**20, axis_stride=2**12)
    assert not gathered.fits_int32()


@pytest.mark.parametrize("itemsize", [1, 2, 4, 8])
def test_vector_width_and_modes(itemsize) -> None:
    forward = _plan.copy_layout((8, 64), (64, 1), (64, 1))
    assert _plan.choose_vector(forward, itemsize, 0, 0) == (16 // itemsize, _plan.MODE_VECTOR)
    # A full reverse of 64 elements: the last element is at 63, so the first vector read
    # starts at 64 - vec, which is aligned.
    reverse = _plan.copy_layout((64,), (-1,), (1,), src_base=63)
    assert _plan.choose_vector(reverse, itemsize, 0, 0) == (16 // itemsize, _plan.MODE_REVERSED)
    # Stride-2 source: vector stores, element-wise loads.
    strided = _plan.copy_layout((8, 64), (256, 2), (64, 1))
    assert _plan.choose_vector(strided, itemsize, 0, 0) == (16 // itemsize, _plan.MODE_SCALAR)
    # Misaligned destination pointer: fall back to narrower vectors or scalars.
    vec, _ = _plan.choose_vector(forward, itemsize, 0, itemsize)
    assert vec == 1
    # Odd inner size: scalar.
    odd = _plan.copy_layout((3, 7), (7, 1), (7, 1))
    assert _plan.choose_vector(odd, itemsize, 0, 0)[0] == 1


def test_vector_requires_aligned_gather_rows() -> None:
    rows = _plan.copy_layout((10, 256), (0, 1), (256, 1), (1, 0), axis_size=1000, axis_stride=256)
    assert _plan.choose_vector(rows, 4, 0, 0) == (4, _plan.MODE_VECTOR)
    odd_rows = _plan.copy_layout((10, 256), (0, 1), (256, 1), (1, 0), axis_size=1000, axis_stride=257)
    assert _plan.choose_vector(odd_rows, 4, 0, 0) == (4, _plan.MODE_SCALAR)


def test_gather_dimensions_right_align() -> None:
    # Input {1, 3, 4} packed, axis 2, indices {1, 1, 2}, IndexDimensions 1 -> output {1, 3, 2}.
    sizes, src, dst, idx = _plan.gather_dimensions((1, 3, 4), (12, 4, 1), (1, 1, 2), (2, 2, 1), (6, 2, 1), 2, 1)
    assert sizes == [1, 3, 2]
    assert src == [12, 4, 0] and dst == [6, 2, 1] and idx == [0, 0, 1]
    # IndexDimensions 2 on axis 0 of {1, 4}: full = {1, 2, 4}, the leading 1 is dropped.
    sizes, src, dst, idx = _plan.gather_dimensions((1, 4), (4, 1), (1, 2), (2, 1), (4, 1), 0, 2)
    assert sizes == [1, 2, 4] and dst == [0, 4, 1] and idx == [2, 1, 0]
    # IndexDimensions 0: the axis disappears and a 1 is prepended.
    sizes, src, dst, idx = _plan.gather_dimensions((3, 4), (4, 1), (1, 1), (1, 1), (4, 1), 0, 0)
    assert sizes == [4] and dst == [1]


def _c_struct_members(source: str, struct: str) -> list[tuple[str, int]]:
    """(member, array length) of a kernel source's parameter struct, in declaration order."""
    import re

    from dmlops.cuda._runtime import kernel_source

    text = kernel_source(source)
    defines = dict(re.findall(r"^#define (\w+) (\d+)", text, re.M))
    body = re.search(rf"struct {struct} {{(.*?)\n}};", text, re.S)
    assert body is not None, struct
    members = []
    for line in body.group(1).splitlines():
        decl = line.split("//")[0].strip().rstrip(";")
        if not decl:
            continue
        for name in decl.split(None, 1)[1].split(","):
            m = re.fullmatch(r"\s*(\w+)(?:\[(\w+)\])?\s*", name)
            assert m is not None, name
            length = m.group(2) or "1"
            members.append((m.group(1), int(defines.get(length, length))))
    return members


def _roi_params():
    from dmlops.cuda import roi as cuda_roi

    return cuda_roi._params(_roi_desc(1, 2, 5, 6, 3, "FLOAT32", sr=2), 2, (60, 30, 6, 1), (4, 1), (1,), (24, 12, 4, 1))


def _roi_check_params():
    from dmlops.cuda import roi as cuda_roi

    return cuda_roi._check_params(3, 1, 2)


def _copy_params():
    from dmlops.cuda._copy import copy_params

    return copy_params(_plan.copy_layout((2, 3, 4), (12, 4, 1), (12, 4, 1)), 24, 4)


def _check_params():
    from dmlops.cuda.data_movement import check_params

    return check_params((2, 5), (5, 1), 7)


def _resample_params():
    from dmlops.cuda.resampling import resample_params

    return resample_params((1, 2, 6, 6), (1, 2, 3, 3), (18, 9, 3, 1), (72, 36, 6, 1), (0, 1, 2, 3))[0]


def _x2_params():
    from dmlops.cuda.resampling import x2_params

    return x2_params(96, (4, 6, 2), (72, 36, 6, 1), (18, 9, 3, 1), 6, 2, -1)


def _pool_grad_desc(shape, name, window, stride, pad, out_strides=None):
    """A 2-D MAX_POOLING_GRAD desc with symmetric padding (InputGradient sizes follow)."""
    from dmlops.descs.pooling import MaxPoolingGradDesc

    oh = (shape[2] + 2 * pad[0] - window[0]) // stride[0] + 1
    ow = (shape[3] + 2 * pad[1] - window[1]) // stride[1] + 1
    return MaxPoolingGradDesc(
        input_tensor=TensorDesc(data_type=name, sizes=shape),
        input_gradient_tensor=TensorDesc(data_type=name, sizes=(shape[0], shape[1], oh, ow)),
        output_gradient_tensor=TensorDesc(data_type=name, sizes=shape, strides=out_strides),
        strides=stride,
        window_size=window,
        start_padding=pad,
        end_padding=pad,
        dilations=(1, 1),
    )


def _resample_hw_params():
    from dmlops.cuda.resampling import hw_params

    return hw_params((1, 2, 6, 8), (18, 9, 3, 1), (96, 48, 8, 1), True)


def _pool_params():
    from dmlops.cuda.pooling import pool_params

    desc = _pool_grad_desc((1, 2, 6, 6), "FLOAT32", (2, 2), (2, 2), (0, 0))
    return pool_params(desc.window, (1, 2, 6, 6), (1, 2, 3, 3), (72, 36, 6, 1), (18, 9, 3, 1), (72, 36, 6, 1), 72)[0]


def _pool_div_params():
    from dmlops.cuda.pooling import div_params

    return div_params(100, 5, 4, 3)


def _stream_params():
    from dmlops.cuda.pooling import _stream_params

    return _stream_params(6, 8, 5, 3, 1)


def _chunk_params():
    from dmlops.cuda.elementwise import chunk_params

    return chunk_params(3, 10_000, 10_000, 10_016)


@pytest.mark.parametrize(
    "source, struct, build",
    [
        ("roi_align.cu", "RoiParams", _roi_params),
        ("roi_align.cu", "RoiCheckParams", _roi_check_params),
        ("copy.cu", "CopyParams", _copy_params),
        ("copy.cu", "CheckParams", _check_params),
        ("resample.cu", "ResampleParams", _resample_params),
        ("resample.cu", "ResampleX2Params", _x2_params),
        ("resample.cu", "ResampleHWParams", _resample_hw_params),
        ("pooling.cu", "PoolParams", _pool_params),
        ("pooling.cu", "PoolDivParams", _pool_div_params),
        ("pooling.cu", "StreamParams", _stream_params),
        ("elementwise.cu", "ChunkParams", _chunk_params),
    ],
)
def test_host_params_match_the_kernel_struct(source, struct, build) -> None:
    """A parameter struct built on the host has the kernel struct's members, in order (a
    member added on one side only would shift every later one)."""
    p = build()
    host = [(name, int(np.prod(p.dtype[name].shape))) for name in p.dtype.names]
    assert host == _c_struct_members(source, struct)


def test_roi_work_items_pad_to_a_power_of_two_idling_at_most_an_eighth(monkeypatch) -> None:
    from dmlops.cuda import roi as cuda_roi

    widths = {1: 1, 3: 3, 4: 4, 5: 5, 6: 6, 7: 8, 8: 8, 12: 12, 14: 16, 15: 16, 27: 27, 28: 32, 31: 32, 33: 33, 64: 64}
    assert {w: cuda_roi.item_width(w) for w in widths} == widths
    monkeypatch.setattr(cuda_roi, "PAD_COLUMNS", False)
    assert cuda_roi.item_width(7) == 7


@pytest.mark.parametrize(
    "module, kernel, constant, macro",
    [
        ("roi", "roi_align.cu", "SEPARABLE_MAX_OUT", "ROI_SEP_OUT"),
        ("roi", "roi_align.cu", "REGISTER_TAPS", "ROI_REG_TAPS"),
        ("roi", "roi_align.cu", "CHECK_THREADS", "ROI_CHECK_THREADS"),
        ("elementwise", "elementwise.cu", "ROW_BLOCK", "ROW_BLOCK"),
        ("elementwise", "elementwise.cu", "ROW_CHUNK", "ROW_CHUNK"),
        ("elementwise", "elementwise.cu", "ROW_WIDE_BLOCK", "ROW_WIDE_BLOCK"),
    ],
)
def test_host_limits_match_the_kernel_defines(module, kernel, constant, macro) -> None:
    """A host-side limit that decides which kernel path runs equals the kernel's #define."""
    import importlib
    import re

    from dmlops.cuda._runtime import kernel_source

    value = getattr(importlib.import_module(f"dmlops.cuda.{module}"), constant)
    found = re.search(rf"^#define {macro} (\d+)", kernel_source(kernel), re.MULTILINE)
    assert found is not None and int(found.group(1)) == value


def test_cuda_backend_reports_why_it_cannot_run() -> None:
    from dmlops import cuda

    reason = cuda.availability()
    if reason is None:
        pytest.skip("the CUDA backend is available here")
    assert isinstance(reason, str) and reason
    with pytest.raises(BackendUnavailableError, match="backend 'cuda' is not available"):
        load_backend("cuda")


class _FakeDeviceArray:
    """Stands for any DLPack producer that lives on CUDA device ``index``."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, self.index)  # kDLCUDA


def test_an_operator_runs_on_the_one_device_of_its_arrays() -> None:
    """The device is the one holding the device arrays (inputs and out= arrays); host
    arrays do not count; arrays on two devices are refused, naming both members."""
    pytest.importorskip("cupy")
    from dmlops.cuda._runtime import operator_device
    from dmlops.errors import TensorMismatchError

    desc = _reverse_desc((2, 3))
    host = np.zeros((2, 3), np.float32)
    assert operator_device(desc, {"InputTensor": host}, None) is None
    assert operator_device(desc, {"InputTensor": host}, {"OutputTensor": _FakeDeviceArray(1)}) == 1
    assert operator_device(desc, {"InputTensor": _FakeDeviceArray(1)}, {"OutputTensor": None}) == 1
    with pytest.raises(TensorMismatchError, match=r"OutputTensor: on CUDA device 0, but InputTensor is on device 1"):
        operator_device(desc, {"InputTensor": _FakeDeviceArray(1)}, {"OutputTensor": _FakeDeviceArray(0)})


# -- interop on the GPU (the ``gpu`` fixture: conftest.py) ----------------------------------------


def _reverse_desc(shape, dtype="FLOAT32") -> Slice1Desc:
    n = len(shape)
    return Slice1Desc(
        input_tensor=TensorDesc(data_type=dtype, sizes=shape),
        output_tensor=TensorDesc(data_type=dtype, sizes=shape),
        input_window_offsets=(0,) * n,
        input_window_sizes=tuple(shape),
        input_window_strides=(-1,) * n,
    )


def test_numpy_in_numpy_out(gpu) -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = dmlops.execute(_reverse_desc((2, 3, 4)), {"InputTensor": x}, backend="cuda")["OutputTensor"]
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, x[::-1, ::-1, ::-1])


def test_cupy_views_are_read_in_place(gpu) -> None:
    cp = gpu
    base = cp.arange(2 * 3 * 8, dtype=cp.float32).reshape(2, 3, 8)
    view = base[:, ::-1, ::2]  # negative and non-unit strides, no copy
    got = dmlops.execute(_reverse_desc((2, 3, 4)), {"InputTensor": view}, backend="cuda")["OutputTensor"]
    assert isinstance(got, cp.ndarray)
    np.testing.assert_array_equal(got.get(), view.get()[::-1, ::-1, ::-1])


def test_cupy_out_written_only_where_addressed(gpu) -> None:
    cp = gpu
    x = cp.arange(6, dtype=cp.float32)
    desc = Slice1Desc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(6,)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(3,), strides=(2,)),
        input_window_offsets=(0,),
        input_window_sizes=(6,),
        input_window_strides=(-2,),
    )
    buffer = cp.full(5, -7.0, dtype=cp.float32)
    result = dmlops.execute(desc, {"InputTensor": x}, outputs={"OutputTensor": buffer}, backend="cuda")
    assert result["OutputTensor"] is buffer
    np.testing.assert_array_equal(buffer.get(), [5, -7, 3, -7, 1])


def test_numpy_out_written_only_where_addressed(gpu) -> None:
    x = np.arange(6, dtype=np.float32)
    desc = Slice1Desc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(6,)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(3,), strides=(2,)),
        input_window_offsets=(0,),
        input_window_sizes=(6,),
        input_window_strides=(-2,),
    )
    buffer = np.full(5, -7.0, dtype=np.float32)
    result = dmlops.execute(desc, {"InputTensor": x}, outputs={"OutputTensor": buffer}, backend="cuda")
    assert result["OutputTensor"] is buffer
    np.testing.assert_array_equal(buffer, [5, -7, 3, -7, 1])


def test_torch_tensors_round_trip_without_copies(gpu) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    x = torch.arange(24, dtype=torch.float16, device="cuda").reshape(2, 3, 4)
    got = dmlops.execute(_reverse_desc((2, 3, 4), "FLOAT16"), {"InputTensor": x}, backend="cuda")["OutputTensor"]
    assert isinstance(got, torch.Tensor) and got.is_cuda
    assert torch.equal(got, torch.flip(x, (0, 1, 2)))
    out = torch.empty_like(x)
    res = dmlops.execute(
        _reverse_desc((2, 3, 4), "FLOAT16"), {"InputTensor": x}, outputs={"OutputTensor": out}, backend="cuda"
    )
    assert res["OutputTensor"] is out
    assert torch.equal(out, torch.flip(x, (0, 1, 2)))


def test_cuda_array_interface_producer(gpu) -> None:
    cp = gpu

    class Producer:
        def __init__(self, arr):
            self._arr = arr
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    x = cp.arange(12, dtype=cp.int32).reshape(3, 4)
    got = dmlops.execute(_reverse_desc((3, 4), "INT32"), {"InputTensor": Producer(x)}, backend="cuda")["OutputTensor"]
    np.testing.assert_array_equal(cp.asnumpy(got), x.get()[::-1, ::-1])


def _gather_desc(n: int, idx_type: str, count: int) -> GatherDesc:
    return GatherDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(n, 8)),
        indices_tensor=TensorDesc(data_type=idx_type, sizes=(1, count)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(count, 8)),
        axis=0,
        index_dimensions=1,
    )


@pytest.mark.parametrize("idx_dtype", [np.int64, np.int32, np.uint64, np.uint32])
def test_wild_gather_indices_clamp_and_strict_raises(gpu, idx_dtype) -> None:
    info = np.iinfo(idx_dtype)
    values = [info.min, info.max, -1, 0, 5, -5, -6, 6, info.max - 1, info.min + 1, 4, 2]
    wild = np.array([v for v in values if info.min <= v <= info.max], dtype=idx_dtype)
    wild = wild.reshape(1, -1)
    x = np.arange(5 * 8, dtype=np.float32).reshape(5, 8)
    desc = _gather_desc(5, dmlops.enums.TensorDataType.from_numpy(idx_dtype).name, wild.shape[1])
    got = dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": wild}, backend="cuda")["OutputTensor"]
    want = dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": wild})["OutputTensor"]
    np.testing.assert_array_equal(got, want)
    with pytest.raises(DataIndexError) as cuda_err:
        dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": wild}, backend="cuda", strict=True)
    with pytest.raises(DataIndexError) as ref_err:
        dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": wild}, strict=True)
    assert str(cuda_err.value) == str(ref_err.value)


def test_repeated_runs_are_bitwise_identical(gpu) -> None:
    cp = gpu
    from dmlops.descs.resampling import ResampleGrad1Desc

    rng = np.random.default_rng(0)
    dy = cp.asarray(rng.standard_normal((2, 3, 32, 32)).astype(np.float32))
    desc = ResampleGrad1Desc(
        input_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=(2, 3, 32, 32)),
        output_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=(2, 3, 16, 16)),
        interpolation_mode="LINEAR",
        rounding_direction="DECREASING",
        scales=(1.0, 1.0, 2.0, 2.0),
        input_pixel_offsets=(0.5, 0.5, 0.5, 0.5),
        output_pixel_offsets=(-0.5, -0.5, -0.5, -0.5),
    )
    first = dmlops.execute(desc, {"InputGradientTensor": dy}, backend="cuda")["OutputGradientTensor"]
    for _ in range(3):
        again = dmlops.execute(desc, {"InputGradientTensor": dy}, backend="cuda")["OutputGradientTensor"]
        assert cp.array_equal(first, again)


# -- the fast paths, against the NumPy reference ------------------------------------------------


def _close(got, want, dtype) -> None:
    tol = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float16: dict(rtol=2e-3, atol=2e-3)}[dtype]
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want.astype(np.float64), equal_nan=True, **tol)


def _roi_desc(
    n, c, h, w, r, dtype, *, sr, reduce="AVERAGE", mode="LINEAR", strides=None, oob=0.0, out=(3, 4),
    out_strides=None, scale=(0.5, 0.25),
):  # fmt: skip
    from dmlops.descs.roi import RoiAlignDesc

    lo, hi = (sr, sr) if sr else (1, 2**32 - 1)
    return RoiAlignDesc(
        input_tensor=TensorDesc(data_type=dtype, sizes=(n, c, h, w), strides=strides),
        roi_tensor=TensorDesc(data_type=dtype, sizes=(r, 4)),
        batch_indices_tensor=TensorDesc(data_type="UINT32", sizes=(r,)),
        output_tensor=TensorDesc(data_type=dtype, sizes=(r, c, *out), strides=out_strides),
        reduction_function=reduce,
        interpolation_mode=mode,
        spatial_scale_x=scale[0],
        spatial_scale_y=scale[1],
        out_of_bounds_input_value=oob,
        minimum_samples_per_output=lo,
        maximum_samples_per_output=hi,
    )


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("reduce, mode", [("AVERAGE", "LINEAR"), ("MAX", "LINEAR"), ("AVERAGE", "NEAREST_NEIGHBOR")])
@pytest.mark.parametrize("sr", [2, 0])
def test_roi_align_channel_lane_kernel(gpu, layout, reduce, mode, sr) -> None:
    """40 channels: NHWC strides take the channel-lane kernel, NCHW the channel x bin kernel."""
    cp = gpu
    rng = np.random.default_rng(5)
    n, c, h, w, r = 2, 40, 9, 11, 64
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    x[0, 3, 2, 2] = np.nan
    x[1, 5, 4, 4] = np.inf
    boxes = rng.uniform(-6, 30, size=(r, 4)).astype(np.float32)
    batch = rng.integers(0, n, size=r).astype(np.uint32)
    strides = (h * w * c, 1, w * c, c) if layout == "nhwc" else None
    desc = _roi_desc(n, c, h, w, r, "FLOAT32", sr=sr, reduce=reduce, mode=mode, strides=strides, oob=-0.5)
    want = dmlops.execute(desc, {"InputTensor": x, "ROITensor": boxes, "BatchIndicesTensor": batch})["OutputTensor"]
    xd = cp.asarray(x)
    if layout == "nhwc":
        xd = cp.ascontiguousarray(xd.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    got = dmlops.execute(
        desc,
        {"InputTensor": xd, "ROITensor": cp.asarray(boxes), "BatchIndicesTensor": cp.asarray(batch)},
        backend="cuda",
    )["OutputTensor"]
    _close(got.get(), want, np.float32)


@pytest.mark.parametrize("dtype, dml", [(np.float32, "FLOAT32"), (np.float16, "FLOAT16")])
@pytest.mark.parametrize("layout", ["contiguous", "misaligned base", "padded rows", "odd width", "channels last"])
@pytest.mark.parametrize("sr", [2, 0])
def test_roi_align_average_chunked_rows(gpu, dtype, dml, layout, sr) -> None:
    """AVERAGE reads rows in aligned 16-byte chunks only where every chunk is aligned and
    inside its row, and takes channels first on channels-last strides; each layout (and
    the fallbacks) matches the reference, non-finite values next to taps included (a
    chunk's non-tap elements must not leak NaN)."""
    cp = gpu
    rng = np.random.default_rng(8)
    n, c, h, r = 2, 5, 24, 48
    w = 47 if layout == "odd width" else 48
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    x[0, 1, 5, 9] = np.inf
    x[1, 2, 7, 20] = np.nan
    x[0, 3, 10, 0] = -np.inf
    boxes = rng.uniform(-10, 110, size=(r, 4)).astype(dtype)
    boxes[:4] = [[0, 0, 96, 96], [17.5, 19.5, 18.5, 20.5], [40, 8, 44, 12], [0.5, 0.5, 3.3, 3.3]]
    batch = rng.integers(0, n, size=r).astype(np.uint32)
    desc = _roi_desc(n, c, h, w, r, dml, sr=sr, oob=0.75)
    feeds = {"ROITensor": boxes, "BatchIndicesTensor": batch}
    want = dmlops.execute(desc, {"InputTensor": x, **feeds})["OutputTensor"]
    if layout == "misaligned base":
        xd = cp.zeros(x.size + 1, dtype=dtype)[1:].reshape(x.shape)
        xd[...] = cp.asarray(x)
    elif layout == "channels last":  # threads over channels first, element loads
        xd = cp.ascontiguousarray(cp.asarray(x).transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    elif layout == "padded rows":
        xd = cp.zeros((n, c, h, w + 16), dtype=dtype)[..., 8 : 8 + w]
        xd[...] = cp.asarray(x)
    else:
        xd = cp.asarray(x)
    got = dmlops.execute(desc, {"InputTensor": xd, **{k: cp.asarray(v) for k, v in feeds.items()}}, backend="cuda")
    _close(got["OutputTensor"].get(), want, dtype)


@pytest.mark.parametrize("dtype, dml", [(np.float32, "FLOAT32"), (np.float16, "FLOAT16")])
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize(
    "out_size, padded", [((7, 7), False), ((7, 7), True), ((8, 8), False), ((12, 12), False), ((5, 15), False)]
)
@pytest.mark.parametrize("sr", [2, 3, 0])
@pytest.mark.parametrize("staged", [True, False])
def test_roi_align_average_output_staging(gpu, monkeypatch, dtype, dml, layout, out_size, padded, sr, staged) -> None:
    """roi_align_avg stages a block's outputs in shared memory and writes them out
    contiguously where they fit (64 channels x 7 x 7), through the output strides when the
    output is not dense, and stores directly where they do not fit (12 x 12) or where
    staging is off (NCHW inputs with STAGE_OUTPUTS off, FLOAT16 or adaptive sampling); 70
    channels make a partial channel group (8 x 8 channels-last: staged with an odd channel
    pitch in the partial group only). Three fixed samples take the 16-byte chunk path in
    some blocks and the staged register path in others, sharing one buffer. On NCHW
    strides, 7 and 15 outputs per row run as 8 and 16 work items per channel (idle
    lanes). Elements between the addressed ones stay untouched."""
    from dmlops.cuda import roi as cuda_roi

    cp = gpu
    monkeypatch.setattr(cuda_roi, "STAGE_OUTPUTS", staged)
    monkeypatch.setattr(cuda_roi, "_PLANS", type(cuda_roi._PLANS)())
    rng = np.random.default_rng(12)
    n, c, h, w, r = 2, 70, 20, 24, 24
    oh, ow = out_size
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    boxes = rng.uniform(-8, 100, size=(r, 4)).astype(dtype)
    batch = rng.integers(0, n, size=r).astype(np.uint32)
    out_strides = (c * oh * (ow + 2) + 5, oh * (ow + 2), ow + 2, 1) if padded else None
    desc = _roi_desc(
        n, c, h, w, r, dml, sr=sr, oob=0.5, out=(oh, ow), out_strides=out_strides, scale=(0.25, 0.25)
    )  # fmt: skip
    size = desc.output_tensor.total_tensor_size_in_bytes // np.dtype(dtype).itemsize
    feeds = {"ROITensor": boxes, "BatchIndicesTensor": batch}
    want = np.full(size, -7.0, dtype=dtype)
    dmlops.execute(desc, {"InputTensor": x, **feeds}, outputs={"OutputTensor": want})
    xd = cp.asarray(x)
    if layout == "nhwc":
        xd = cp.ascontiguousarray(xd.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    got = cp.full(size, -7.0, dtype=dtype)
    dmlops.execute(
        desc,
        {"InputTensor": xd, **{k: cp.asarray(v) for k, v in feeds.items()}},
        outputs={"OutputTensor": got},
        backend="cuda",
    )
    _close(got.get(), want, dtype)


@pytest.mark.parametrize("reduce", ["AVERAGE", "MAX"])
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("index_type", ["UINT32", "UINT64"])
def test_roi_align_bad_batch_index_raises_on_every_path(gpu, reduce, layout, index_type) -> None:
    """Every kernel reports the lowest bad ROI, with 40 channels in several channel groups
    (only one block per ROI reports); indices written by a kernel queued just before the
    call are the ones checked; the next call with good indices runs normally (the flag is
    reset)."""
    import dataclasses

    cp = gpu
    from dmlops.errors import DataIndexError

    n, c, h, w, r = 2, 40, 9, 11, 64
    desc = _roi_desc(n, c, h, w, r, "FLOAT32", sr=2, reduce=reduce)
    desc = dataclasses.replace(desc, batch_indices_tensor=TensorDesc(data_type=index_type, sizes=(r,)))
    itype = cp.uint32 if index_type == "UINT32" else cp.uint64
    x = cp.ones((n, c, h, w), cp.float32)
    if layout == "nhwc":
        x = cp.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    boxes = cp.asarray(np.tile(np.array([[0, 0, 8, 8]], np.float32), (r, 1)))
    batch = cp.zeros(r, itype)
    huge = 2**32 - 1 if index_type == "UINT32" else 2**40
    for bad_rois, value in (((63,), 2), ((40, 17, 63), huge)):
        batch[...] = 0
        for roi in bad_rois:
            batch[roi] = value  # a kernel on the current stream, not waited for
        with pytest.raises(DataIndexError, match=rf"ROI {min(bad_rois)} has batch index {value}, outside"):
            dmlops.execute(desc, {"InputTensor": x, "ROITensor": boxes, "BatchIndicesTensor": batch}, backend="cuda")
    batch[...] = 1
    ok = dmlops.execute(desc, {"InputTensor": x, "ROITensor": boxes, "BatchIndicesTensor": batch}, backend="cuda")[
        "OutputTensor"
    ]
    assert bool(cp.all(ok == 1))


def _roi_on_gpu(cp, desc, x, boxes, batch, layout):
    """The CUDA backend's ROI_ALIGN output (NumPy) for host inputs, the input NCHW or NHWC-strided."""
    xd = cp.asarray(x)
    if layout == "nhwc":
        xd = cp.ascontiguousarray(xd.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    feeds = {"InputTensor": xd, "ROITensor": cp.asarray(boxes), "BatchIndicesTensor": cp.asarray(batch)}
    return dmlops.execute(desc, feeds, backend="cuda")["OutputTensor"].get()


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("reduce, out", [("MAX", (4, 4)), ("MAX", (5, 3)), ("AVERAGE", (4, 4)), ("AVERAGE", (70, 3))])
@pytest.mark.parametrize("oob", [0.25, float("nan")])
def test_roi_align_untabled_axes_visit_the_in_bounds_run(gpu, layout, reduce, out, oob) -> None:
    """More samples per axis than the kernels' tables hold (300 per output; 5 x 3 MAX on
    NCHW keeps its column table): only the run of in-bounds samples is visited. ROIs overhang the input on each side, or lie wholly
    outside it, with a NaN in the input and a NaN or finite OutOfBoundsInputValue (MAX
    folds OutOfBoundsInputValue in at the first skipped sample's place)."""
    import dataclasses

    cp = gpu
    rng = np.random.default_rng(41)
    n, c, h, w = 1, 2, 9, 12
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    x.view(np.uint32)[0, 1, 4, 5] = 0x7FC00002
    boxes = np.array(
        [[-6, -5, 8, 7], [3, 2, 20, 15], [-30, 4, 5, 8], [2, -40, 10, 5], [4, 3, 30, 40], [20, 20, 30, 30], [9, 8, -3, -4]],
        np.float32,
    )  # fmt: skip
    r = len(boxes)
    desc = _roi_desc(n, c, h, w, r, "FLOAT32", sr=300, reduce=reduce, out=out, scale=(1.0, 1.0))
    oob_value = np.uint32(0x7FC00001).view(np.float32) if np.isnan(oob) else oob
    desc = dataclasses.replace(desc, out_of_bounds_input_value=float(oob_value))
    batch = np.zeros(r, np.uint32)
    want = dmlops.execute(desc, {"InputTensor": x, "ROITensor": boxes, "BatchIndicesTensor": batch})["OutputTensor"]
    got = _roi_on_gpu(cp, desc, x, boxes, batch, layout)
    _close(got, want, np.float32)  # the interpolation runs in float32 on the GPU; NaN matches NaN


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("reduce", ["MAX", "AVERAGE"])
def test_roi_align_huge_regions_finish(gpu, layout, reduce) -> None:
    """Adaptive sampling of regions a million pixels across (10^6 samples per output
    along each axis, 10^12 per output) over a 9 x 12 input finishes at once: the kernels
    visit only the in-bounds samples. AVERAGE agrees with the cpu backend (the numpy
    reference visits every sample, 10^12 per output: it would not finish) and, for the
    centred box, with the float32 running sum worked out by hand; MAX of a constant input is
    that constant where a sample reads the input, else OutOfBoundsInputValue."""
    cp = gpu
    n, c, h, w = 1, 3, 9, 12
    boxes = np.array([[-5e5, -5e5, 5e5, 5e5], [0, 0, 1e6, 1e6], [-1e6, 2, 0, 6]], np.float32)
    r = len(boxes)
    desc = _roi_desc(n, c, h, w, r, "FLOAT32", sr=0, reduce=reduce, out=(2, 3), scale=(1.0, 1.0), oob=-1.0)
    x = np.full((n, c, h, w), 2.0, np.float32)
    batch = np.zeros(r, np.uint32)
    got = _roi_on_gpu(cp, desc, x, boxes, batch, layout)
    if reduce == "AVERAGE":
        pytest.importorskip("numba")
        feeds = {"InputTensor": x, "ROITensor": boxes, "BatchIndicesTensor": batch}
        want = dmlops.execute(desc, feeds, backend="cpu")["OutputTensor"]
        _close(got, want, np.float32)
        # Box 0's outputs start with ~1.7e11 out-of-bounds samples of -1: the float32 running sum
        # stops at -2^24 (-2^24 - 1 rounds back to it), and after a run of in-bounds 2s the
        # later -1s bring it back there, so each output is -2^24 / (samples per output).
        count = np.float32(np.ceil(1e6 / 3) * np.ceil(1e6 / 2))
        assert got[0].tolist() == np.full((c, 2, 3), np.float32(-(2.0**24)) / count).tolist()
    else:
        # Every output of these regions has out-of-bounds samples; those whose bin meets the input read 2.
        assert set(np.unique(got).tolist()) <= {2.0, -1.0}
        assert got[0, :, 0, 0].tolist() == [-1.0] * c and got[0, :, 1, 1].tolist() == [2.0] * c


@pytest.mark.parametrize("spins", [20000, 0])
def test_roi_align_verdict_wait(gpu, monkeypatch, spins) -> None:
    """The host gets the check's verdict by polling the pinned word or by the fall-back
    (stream synchronized when no spin saw it; 0 spins forces it): the same errors and
    results either way, behind a slow kernel queued before the call."""
    from dmlops.cuda import roi as cuda_roi
    from dmlops.errors import DataIndexError

    cp = gpu
    monkeypatch.setattr(cuda_roi, "POLL_SPINS", spins)
    n, c, h, w, r = 2, 3, 9, 11, 5
    desc = _roi_desc(n, c, h, w, r, "FLOAT32", sr=2)
    x = cp.full((n, c, h, w), 2.0, cp.float32)
    boxes = cp.asarray(np.tile(np.array([[0, 0, 8, 8]], np.float32), (r, 1)))
    feeds = {"InputTensor": x, "ROITensor": boxes}
    for bad in (3, None, 0):
        batch = cp.zeros(r, cp.uint32)
        cp.matmul(cp.ones((1024, 1024), cp.float32), cp.ones((1024, 1024), cp.float32))  # keeps the GPU busy
        if bad is not None:
            batch[bad] = n
            with pytest.raises(DataIndexError, match=rf"ROI {bad} has batch index {n}, outside"):
                dmlops.execute(desc, {**feeds, "BatchIndicesTensor": batch}, backend="cuda")
        else:
            y = dmlops.execute(desc, {**feeds, "BatchIndicesTensor": batch}, backend="cuda")["OutputTensor"]
            assert bool(cp.all(y == 2.0))


@pytest.mark.parametrize("shape", [(2, 3, 45, 70), (1, 2, 9, 71)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(
    "window, stride, pad", [((3, 3), (2, 2), (1, 1)), ((2, 2), (2, 2), (0, 0)), ((3, 2), (1, 2), (2, 1))]
)
def test_max_pooling_grad_fused_tiles(gpu, shape, dtype, window, stride, pad) -> None:
    """The 2-D fast path: several blocks per plane, odd widths, ties, NaN and -inf windows."""
    cp = gpu

    rng = np.random.default_rng(2)
    x = rng.integers(-3, 3, size=shape).astype(dtype)  # many ties
    x[0, 0, 3:7, 3:9] = -np.inf
    x[-1, -1, 5, 4] = np.nan
    x[-1, -1, 6, 5] = np.nan
    name = "FLOAT32" if dtype == np.float32 else "FLOAT16"
    desc = _pool_grad_desc(shape, name, window, stride, pad)
    oh, ow = desc.input_gradient_tensor.sizes[2:]
    dy = rng.standard_normal((shape[0], shape[1], oh, ow)).astype(dtype)
    want = dmlops.execute(desc, {"InputTensor": x, "InputGradientTensor": dy})["OutputGradientTensor"]
    got = dmlops.execute(desc, {"InputTensor": cp.asarray(x), "InputGradientTensor": cp.asarray(dy)}, backend="cuda")[
        "OutputGradientTensor"
    ]
    _close(got.get(), want, dtype)


@pytest.mark.parametrize("shape", [(2, 3, 45, 72), (1, 2, 9, 16), (1, 2, 7, 520), (1, 2, 11, 27)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(
    "window, stride, pad",
    [((3, 3), (2, 2), (1, 1)), ((3, 3), (2, 2), (0, 0)), ((2, 2), (2, 2), (0, 0)), ((3, 2), (1, 2), (2, 1))],
)
@pytest.mark.parametrize("misaligned", [False, True])
def test_max_pooling_grad_every_variant(gpu, shape, dtype, window, stride, pad, misaligned) -> None:
    """Every 2-D fast path, widths a multiple of 8 (the 16-byte-load pass 1: rows that span
    warps, warps that span rows; the strip pass 2: a partial last strip at widths 72 and
    520 in FLOAT16), an odd width (scalar stores), and a base pointer off by one element
    (scalar fallback). The 2 x 2 block and strip forms of pass 2 sum in the same order:
    their results must be bit-identical."""
    cp = gpu
    from dmlops.cuda import pooling as mpg
    from dmlops.cuda._runtime import element_strides

    rng = np.random.default_rng(3)
    x = rng.integers(-3, 3, size=shape).astype(dtype)  # many ties
    x[0, 0, 2:6, 3:19] = -np.inf
    x[-1, -1, 5, 4] = np.nan
    x[-1, -1, 6, 5] = np.nan
    x[-1, -1, 1, 8:10] = np.nan
    name = "FLOAT32" if dtype == np.float32 else "FLOAT16"
    desc = _pool_grad_desc(shape, name, window, stride, pad)
    oh, ow = desc.input_gradient_tensor.sizes[2:]
    dy = rng.standard_normal((shape[0], shape[1], oh, ow)).astype(dtype)
    want = dmlops.execute(desc, {"InputTensor": x, "InputGradientTensor": dy})["OutputGradientTensor"]
    if misaligned:
        buf = cp.empty(x.size + 1, dtype=dtype)
        gx = buf[1:].reshape(shape)
        gx[...] = cp.asarray(x)
    else:
        gx = cp.asarray(x)
    gdy = cp.asarray(dy)
    outs: dict[str, np.ndarray] = {}
    for v in mpg.VARIANTS:
        out = cp.full(shape, np.nan, dtype=dtype)
        plan = mpg._plan(
            desc, shape, dy.shape, element_strides(gx), element_strides(gdy), element_strides(out), gx.dtype, v
        )
        mpg.launch(plan, gx, gdy, out)
        _close(out.get(), want, dtype)
        outs[v] = out.get()
    # 16-byte row loads and scalar loads must pick the same argmax bytes, and every pass 2
    # (and the single pass) sums in the same order: identical bits.
    for v in mpg.VARIANTS:
        np.testing.assert_array_equal(outs[v], outs["two_pass4v"], err_msg=v)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(
    "window, stride, pad",
    # 3 x 3 windows per block (4x4/s2), 2 x 2, 1 x 1 (2x2/s2, 3x3/s3), 5x5/s3 with padding 2
    [((4, 4), (2, 2), (1, 1)), ((3, 3), (2, 2), (1, 1)), ((2, 2), (2, 2), (0, 0)), ((5, 5), (3, 3), (2, 2)),
     ((3, 3), (3, 3), (0, 0))],
)  # fmt: skip
@pytest.mark.parametrize("layout", ["contiguous", "input inner stride 2", "padded output rows"])
@pytest.mark.parametrize("width", [45, 46, 3])
def test_max_pooling_grad_single_pass_layouts(gpu, dtype, window, stride, pad, layout, width) -> None:
    """The single pass (``stream``) against the reference and, bit for bit, against the two
    passes: windows meeting up to 3 x 3 per block, strips of rows over 41 rows, column
    blocks spanning warps and planes (width 45, and 46 for paired stores), planes narrower
    than a warp's helper lanes (width 3: a warp spans many planes),
    strided InputTensor (element loads) and a strided OutputGradient (scalar stores;
    elements between rows stay untouched)."""
    cp = gpu
    from dmlops.cuda import pooling as mpg
    from dmlops.cuda._runtime import element_strides

    rng = np.random.default_rng(4)
    shape = (2, 3, 41, width)
    x = rng.integers(-3, 3, size=shape).astype(dtype)  # many ties
    x[0, 1, 3:9, 2:12] = -np.inf
    x[1, 2, 7, 8 % width] = np.nan
    name = "FLOAT32" if dtype == np.float32 else "FLOAT16"
    n, c, h, w = shape
    out_strides = (c * h * (w + 3), h * (w + 3), w + 3, 1) if layout == "padded output rows" else None
    desc = _pool_grad_desc(shape, name, window, stride, pad, out_strides)
    oh, ow = desc.input_gradient_tensor.sizes[2:]
    dy = rng.standard_normal((shape[0], shape[1], oh, ow)).astype(dtype)
    size = desc.output_gradient_tensor.total_tensor_size_in_bytes // np.dtype(dtype).itemsize
    want = np.full(size, 7.0, dtype=dtype)
    dmlops.execute(desc, {"InputTensor": x, "InputGradientTensor": dy}, outputs={"OutputGradientTensor": want})
    gx = cp.asarray(x)
    if layout == "input inner stride 2":
        gx = cp.zeros((n, c, h, 2 * w), dtype=dtype)[..., ::2]
        gx[...] = cp.asarray(x)
    gdy = cp.asarray(dy)
    flat_out = cp.full(size, 7.0, dtype=dtype)
    dx = cp.lib.stride_tricks.as_strided(
        flat_out, shape, tuple(e * flat_out.itemsize for e in desc.output_gradient_tensor.element_strides)
    )
    got = {}
    for v in ("stream", "two_pass4v"):
        flat_out[...] = 7.0
        plan = mpg._plan(
            desc, shape, dy.shape, element_strides(gx), element_strides(gdy), element_strides(dx), gx.dtype, v
        )
        # One pass unless the last column block of a plane needs a window column beyond
        # ceil(W / SW) + ceil((PW - KW + 1) / SW) (4 x 4 / s2 / p1 at width 46).
        one_pass = ow <= -(-width // stride[1]) - ((window[1] - 1 - pad[1]) // stride[1])
        assert v != "stream" or (plan[1] == "stream") == one_pass
        mpg.launch(plan, gx, gdy, dx)
        got[v] = flat_out.get()
    _close(got["stream"], want, dtype)
    np.testing.assert_array_equal(got["stream"], got["two_pass4v"])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(
    "window, stride, pad",
    [((3, 3), (2, 2), (1, 1)), ((2, 2), (2, 2), (0, 0)), ((5, 5), (3, 3), (2, 2)), ((3, 2), (1, 2), (1, 0))],
)
@pytest.mark.parametrize("layout", ["contiguous", "strided outputs", "no indices", "UINT64 indices"])
@pytest.mark.parametrize("width", [45, 8, 3])
def test_max_pooling2_fast_path_matches_the_reference_bit_for_bit(gpu, dtype, window, stride, pad, layout, width):
    """The 2-D fast path (max_pool_k2d_m, 4 windows per thread) gives the reference's
    values and indices exactly: ties (lowest index wins), -inf and NaN (never win: a window
    of only -inf / NaN gives the lowest finite value), widths that leave a thread's last
    windows outside the row (45, 3) or fill it (8), strided outputs (elements between
    stay untouched), no indices, and UINT64 indices."""
    cp = gpu
    from dmlops.cuda import pooling as mp2
    from dmlops.cuda._runtime import get_kernel
    from dmlops.descs.pooling import MaxPooling2Desc

    rng = np.random.default_rng(9)
    shape = (2, 3, 13, width)
    x = rng.integers(-3, 3, size=shape).astype(dtype)  # many ties
    x[0, 0, 2:5, : width // 2 + 1] = -np.inf
    bits = x.view(np.uint32 if dtype == np.float32 else np.uint16)
    nan = (0x7FC00001, 0x7FC00002) if dtype == np.float32 else (0x7E01, 0x7E02)  # two NaN payloads
    bits[1, 2, 6, width // 2] = nan[0]
    bits[1, 2, 7, (width // 2 + 1) % width] = nan[1]
    oh = (13 + 2 * pad[0] - window[0]) // stride[0] + 1
    ow = (width + 2 * pad[1] - window[1]) // stride[1] + 1
    if ow < 1:
        pytest.skip("window wider than the padded row")
    name = "FLOAT32" if dtype == np.float32 else "FLOAT16"
    out_shape = (2, 3, oh, ow)
    out_strides = (3 * oh * (ow + 2), oh * (ow + 2), ow + 2, 1) if layout == "strided outputs" else None
    index_type = {"no indices": None, "UINT64 indices": "UINT64"}.get(layout, "UINT32")
    desc = MaxPooling2Desc(
        input_tensor=TensorDesc(data_type=name, sizes=shape),
        output_tensor=TensorDesc(data_type=name, sizes=out_shape, strides=out_strides),
        output_indices_tensor=None
        if index_type is None
        else TensorDesc(data_type=index_type, sizes=out_shape, strides=out_strides),
        strides=stride,
        window_size=window,
        start_padding=pad,
        end_padding=pad,
        dilations=(1, 1),
    )
    want = dmlops.execute(desc, {"InputTensor": x})
    got = dmlops.execute(desc, {"InputTensor": cp.asarray(x)}, backend="cuda")
    assert got.keys() == want.keys()
    for member, value in want.items():
        np.testing.assert_array_equal(cp.asnumpy(got[member]).view(np.uint8), value.view(np.uint8), err_msg=member)
    # The plan took the fast path.
    t = "float" if dtype == np.float32 else "half_t"
    z = {None: "NoIndexOut", "UINT32": "u32", "UINT64": "u64"}[index_type]
    kk = f"{window[0]}, {window[1]}, {stride[0]}, {stride[1]}"
    launch = next(plan[1] for plan in mp2._MAX_POOLING2_PLANS.plans.values() if plan[0] is desc)
    assert launch.fn is get_kernel("pooling.cu", f"max_pool_k2d_m<{t}, {z}, {kk}, 4>")


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(
    "scale, offsets", [(2.0, (0.5, -0.5)), (2.0, (0.0, 0.0)), (3.0, (0.0, 0.0)), (1.5, (0.5, -0.5))]
)
def test_resample_grad_linear_scales(gpu, dtype, scale, offsets) -> None:
    cp = gpu
    from dmlops.descs.resampling import ResampleGrad1Desc

    rng = np.random.default_rng(4)
    small = (2, 3, 37, 70)
    big = (2, 3, int(37 * scale), int(70 * scale))
    name = "FLOAT32" if dtype == np.float32 else "FLOAT16"
    desc = ResampleGrad1Desc(
        input_gradient_tensor=TensorDesc(data_type=name, sizes=big),
        output_gradient_tensor=TensorDesc(data_type=name, sizes=small),
        interpolation_mode="LINEAR",
        rounding_direction="DECREASING",
        scales=(1.0, 1.0, scale, scale),
        input_pixel_offsets=(offsets[0],) * 4,
        output_pixel_offsets=(offsets[1],) * 4,
    )
    dy = rng.standard_normal(big).astype(dtype)
    want = dmlops.execute(desc, {"InputGradientTensor": dy})["OutputGradientTensor"]
    got = dmlops.execute(desc, {"InputGradientTensor": cp.asarray(dy)}, backend="cuda")["OutputGradientTensor"]
    _close(got.get(), want, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(
    "mode, scales, offsets",
    [
        ("LINEAR", (1.0, 1.0, 2.0, 2.0), (0.5, -0.5)),
        ("LINEAR", (1.0, 1.0, 1.5, 0.5), (0.5, -0.5)),
        ("LINEAR", (1.0, 1.0, 3.0, 2.0), (0.0, 0.0)),
        ("NEAREST_NEIGHBOR", (1.0, 1.0, 2.0, 3.0), (0.0, 0.0)),
        ("LINEAR", (1.0, 2.0, 2.0, 2.0), (0.5, -0.5)),  # channels resample too: the general kernel
    ],
)
@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("width", [10, 70])
def test_resample2_height_width_path_equals_the_general_kernel(
    gpu, dtype, mode, scales, offsets, strided, width
) -> None:
    """Where only height and width resample, resample_fwd_hw gives resample_fwd's bits
    (the same products summed in the same order) and the reference's values, inf and NaN
    next to taps included; a strided output keeps the elements between untouched; where
    channels resample too, the general kernel runs. Output rows of 128 outputs or more
    (input width 70 scaled by 2 or 3) take a thread's outputs strided across its warp,
    with a partial last run of 128; shorter rows adjacent outputs."""
    cp = gpu
    from dmlops.cuda import resampling as rs2
    from dmlops.cuda._runtime import get_kernel
    from dmlops.descs.resampling import Resample2Desc

    rng = np.random.default_rng(10)
    small = (2, 3, 9, width)
    x = rng.standard_normal(small).astype(dtype)
    x[0, 1, 4, 5] = np.inf
    x[1, 2, 2, 7] = np.nan
    big = tuple(int(n * s) for n, s in zip(small, scales))
    name = "FLOAT32" if dtype == np.float32 else "FLOAT16"
    out_strides = (big[1] * big[2] * (big[3] + 3), big[2] * (big[3] + 3), big[3] + 3, 1) if strided else None
    desc = Resample2Desc(
        input_tensor=TensorDesc(data_type=name, sizes=small),
        output_tensor=TensorDesc(data_type=name, sizes=big, strides=out_strides),
        interpolation_mode=mode,
        rounding_direction="DECREASING",
        scales=scales,
        input_pixel_offsets=(offsets[0],) * 4,
        output_pixel_offsets=(offsets[1],) * 4,
    )
    size = desc.output_tensor.total_tensor_size_in_bytes // np.dtype(dtype).itemsize
    want = np.full(size, -3.0, dtype=dtype)
    dmlops.execute(desc, {"InputTensor": x}, outputs={"OutputTensor": want})
    got = {}
    for fast in (True, False):
        flat = cp.full(size, -3.0, dtype=dtype)
        rs2._RESAMPLE2_PLANS.plans.clear()
        if not fast:
            rs2.FAST_TYPES, saved = (), rs2.FAST_TYPES
        try:
            dmlops.execute(desc, {"InputTensor": cp.asarray(x)}, outputs={"OutputTensor": flat}, backend="cuda")
            launch = next(iter(rs2._RESAMPLE2_PLANS.plans.values()))[1]
        finally:
            if not fast:
                rs2.FAST_TYPES = saved
        got[fast] = flat.get()
        t, lin = ("float" if dtype == np.float32 else "half_t"), ("true" if mode == "LINEAR" else "false")
        across_warp = "true" if big[3] >= 128 else "false"
        assert rs2.strided_outputs(big[3]) == (big[3] >= 128)
        hw = launch.fn is get_kernel("resample.cu", f"resample_fwd_hw<{t}, {lin}, 4, {across_warp}>")
        assert hw == (fast and scales[1] == 1.0)
    np.testing.assert_array_equal(got[True].view(np.uint8), got[False].view(np.uint8))
    _close(got[True], want, dtype)


@pytest.mark.parametrize("width", [64, 128, 256])
def test_gather_warp_rows(gpu, width) -> None:
    """FLOAT16 rows of 128 B to 512 B (the warp-per-row kernel), negative indices wrap."""
    cp = gpu
    rng = np.random.default_rng(6)
    rows, count = 1000, 777
    table = rng.standard_normal((rows, width)).astype(np.float16)
    idx = rng.integers(-rows, rows, size=(1, count)).astype(np.int64)
    desc = GatherDesc(
        input_tensor=TensorDesc(data_type="FLOAT16", sizes=(rows, width)),
        indices_tensor=TensorDesc(data_type="INT64", sizes=(1, count)),
        output_tensor=TensorDesc(data_type="FLOAT16", sizes=(count, width)),
        axis=0,
        index_dimensions=1,
    )
    got = dmlops.execute(desc, {"InputTensor": cp.asarray(table), "IndicesTensor": cp.asarray(idx)}, backend="cuda")
    np.testing.assert_array_equal(got["OutputTensor"].get(), table[np.where(idx[0] < 0, idx[0] + rows, idx[0])])


def test_float32_subnormals_are_not_flushed(gpu) -> None:
    """The kernels are compiled without flush-to-zero (CuPy's own compile path would add
    -ftz=true): subnormal float32 values compare, route gradients and interpolate as the
    reference computes them."""
    cp = gpu
    x = np.arange(1, 65, dtype=np.float32).reshape(1, 1, 8, 8) * np.float32(1e-40)  # all subnormal
    x[0, 0, ::2, ::2] *= -1
    want_y, want_i = dmlops.max_pooling2(x, (2, 2), strides=(2, 2), return_indices=True)
    got_y, got_i = dmlops.max_pooling2(cp.asarray(x), (2, 2), strides=(2, 2), return_indices=True, backend="cuda")
    np.testing.assert_array_equal(got_y.get(), want_y)
    np.testing.assert_array_equal(got_i.get(), want_i)
    dy = np.full((1, 1, 4, 4), 3e-39, dtype=np.float32)
    want = dmlops.max_pooling_grad(x, dy, (2, 2), strides=(2, 2))
    got = dmlops.max_pooling_grad(cp.asarray(x), cp.asarray(dy), (2, 2), strides=(2, 2), backend="cuda")
    np.testing.assert_array_equal(got.get(), want)
    want = dmlops.resample2(x, (1, 1, 16, 16), interpolation_mode="LINEAR")
    got = dmlops.resample2(cp.asarray(x), (1, 1, 16, 16), interpolation_mode="LINEAR", backend="cuda").get()
    assert np.count_nonzero(got) == np.count_nonzero(want) == want.size
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=0)
    want = dmlops.roi_align(x, [[0.5, 0.5, 6.5, 7.0]], [0], (3, 3))
    got = dmlops.roi_align(cp.asarray(x), cp.asarray(np.array([[0.5, 0.5, 6.5, 7.0]], np.float32)),
                           cp.asarray(np.zeros(1, np.uint32)), (3, 3), backend="cuda").get()  # fmt: skip
    assert np.all(want != 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=0)


def test_packed_launch_grids_and_fixed_pointers(gpu) -> None:
    """A packed launch takes 1 to 3 grid dimensions (more raise) and keeps its fixed
    arrays alive, their pointers in the slots after the per-call ones."""
    import gc

    from dmlops.cuda._runtime import PackedLaunch, get_kernel, params

    cp = gpu
    fn = get_kernel("copy.cu", "strided_copy<u32, 1, 0, 0, int, NoIndex, false>")
    p = params(("count", "i8", 0))
    with pytest.raises(ValueError, match="1 to 3 dimensions"):
        PackedLaunch(fn, (1, 1, 1, 1), 32, 2, p)
    assert PackedLaunch(fn, (2, 3), 32, 2, p).grid == (2, 3, 1)
    table = cp.arange(5, dtype=cp.float32)
    launch = PackedLaunch(fn, 4, 32, 2, p, fixed=(table,))
    ptr = table.data.ptr
    del table
    gc.collect()
    assert launch._fixed[0].data.ptr == ptr  # still alive: the launch holds it
    assert launch._pointers[2] == ptr


def test_copies_launched_from_several_threads_keep_their_own_arrays(gpu) -> None:
    """One SLICE1 plan launched from eight threads at once: each result is its own input
    reversed (the packed launch's pointer slots are shared by the plan's calls)."""
    import threading

    cp = gpu
    desc = Slice1Desc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(64, 64)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(64, 64)),
        input_window_offsets=(0, 0),
        input_window_sizes=(64, 64),
        input_window_strides=(1, -1),
    )
    pairs = [
        (cp.arange(4096, dtype=cp.float32).reshape(64, 64) + 10000 * i, cp.empty((64, 64), cp.float32))
        for i in range(8)
    ]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        x, y = pairs[i]
        try:
            for _ in range(200):
                dmlops.execute(desc, {"InputTensor": x}, outputs={"OutputTensor": y}, backend="cuda")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cp.cuda.Device().synchronize()
    assert not errors
    for x, y in pairs:
        assert bool(cp.array_equal(y, x[:, ::-1]))


def test_roi_batch_index_checks_from_several_threads_stay_apart(gpu) -> None:
    """Calls from several threads at once each see their own batch-index verdict (one
    thread's bad index raises there only: every thread has its own flag) and their own
    results."""
    import threading

    cp = gpu
    n, c, h, w, r = 2, 3, 9, 11, 16
    desc = _roi_desc(n, c, h, w, r, "FLOAT32", sr=2)
    x = cp.arange(n * c * h * w, dtype=cp.float32).reshape(n, c, h, w)
    boxes = cp.asarray(np.tile(np.array([[0, 0, 8, 8]], np.float32), (r, 1)))
    good = cp.zeros(r, cp.uint32)
    bad = cp.zeros(r, cp.uint32)
    bad[5] = 7
    reference = {"InputTensor": x.get(), "ROITensor": boxes.get(), "BatchIndicesTensor": good.get()}
    want = dmlops.execute(desc, reference)["OutputTensor"]  # the NumPy reference
    outcome: dict[int, object] = {}

    def work(i: int) -> None:
        indices = bad if i == 0 else good
        for _ in range(40):
            try:
                got = dmlops.execute(
                    desc, {"InputTensor": x, "ROITensor": boxes, "BatchIndicesTensor": indices}, backend="cuda"
                )["OutputTensor"].get()
            except DataIndexError:
                outcome[i] = "raised"
                if i != 0:
                    return
                continue
            if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
                outcome[i] = "wrong result"
                return
        outcome.setdefault(i, "ok")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcome == {0: "raised", 1: "ok", 2: "ok", 3: "ok"}


def test_operators_run_on_the_device_of_their_inputs(gpu) -> None:
    """With the inputs on device 1 and device 0 current, every kind of launch (packed copy
    launches, the ROI side stream and its check, the single-pass max pool) runs on device 1
    and matches the reference, and the same descs then run on device 0 (plans are per
    device). NumPy inputs beside device-1 arrays go to device 1; arrays on two devices are
    refused."""
    cp = gpu
    from dmlops.errors import TensorMismatchError

    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two CUDA devices")
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 8, 12, 16)).astype(np.float32)
    table = rng.standard_normal((50, 8)).astype(np.float32)
    idx = rng.integers(-50, 50, size=(1, 1, 1, 30)).astype(np.int32)
    boxes = rng.uniform(0, 14, size=(6, 4)).astype(np.float32)
    batch = rng.integers(0, 2, size=6).astype(np.uint32)
    dy = rng.standard_normal((2, 8, 6, 8)).astype(np.float32)
    gather = GatherDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(1, 1, 50, 8)),
        indices_tensor=TensorDesc(data_type="INT32", sizes=(1, 1, 1, 30)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(1, 1, 30, 8)),
        axis=2,
        index_dimensions=1,
    )
    pool = _pool_grad_desc(x.shape, "FLOAT32", (3, 3), (2, 2), (1, 1))
    cases = [
        (_reverse_desc(x.shape), {"InputTensor": x}),
        (gather, {"InputTensor": table.reshape(1, 1, 50, 8), "IndicesTensor": idx}),
        (
            _roi_desc(2, 8, 12, 16, 6, "FLOAT32", sr=2),
            {"InputTensor": x, "ROITensor": boxes, "BatchIndicesTensor": batch},
        ),
        (pool, {"InputTensor": x, "InputGradientTensor": dy}),
    ]
    for desc, feeds in cases:
        want = dmlops.execute(desc, feeds)
        for device in (1, 0):
            with cp.cuda.Device(device):
                on_device = {k: cp.asarray(v) for k, v in feeds.items()}
            with cp.cuda.Device(0):
                got = dmlops.execute(desc, on_device, backend="cuda")
            for member, value in got.items():
                assert value.device.id == device
                np.testing.assert_allclose(value.get(), want[member], rtol=1e-6, atol=1e-6)
    # A NumPy input beside a device-1 array is copied to device 1.
    with cp.cuda.Device(1):
        dev_idx = cp.asarray(idx)
    got = dmlops.execute(gather, {"InputTensor": table.reshape(1, 1, 50, 8), "IndicesTensor": dev_idx}, backend="cuda")
    assert got["OutputTensor"].device.id == 1
    np.testing.assert_array_equal(
        got["OutputTensor"].get(),
        dmlops.execute(gather, {"InputTensor": table.reshape(1, 1, 50, 8), "IndicesTensor": idx})["OutputTensor"],
    )
    with cp.cuda.Device(0):
        dev0 = cp.asarray(table.reshape(1, 1, 50, 8))
    with pytest.raises(TensorMismatchError, match="on CUDA device"):
        dmlops.execute(gather, {"InputTensor": dev0, "IndicesTensor": dev_idx}, backend="cuda")
