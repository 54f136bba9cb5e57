"""Run the data-dependent kernels on hostile inputs, for ``compute-sanitizer --tool memcheck``.

GATHER with indices far out of range (both signs, INT64/UINT64/INT32/UINT32 extremes)
on every index type, small and 8-D strided cases, the flat reads of erratum E41 (gaps of
strided flat buffers, INT8 padding, IndexDimensions 0 slabs past the input), ROI_ALIGN with batch indices out
of range (DataIndexError expected, but the kernel must still stay in bounds), the 2-D
MAX_POOLING_GRAD and MAX_POOLING2 fast paths (also with windows of padding only and
output sizes beyond the floor), and the 2x RESAMPLE_GRAD1 kernel (vector
loads and lane shuffles) with its forward on small planes with odd sizes, where any
overrun leaves the allocation. CuPy's memory pool is disabled so every array is its own
cudaMalloc allocation and memcheck sees any access past it.
"""

from __future__ import annotations

import itertools
import sys

import cupy as cp
import numpy as np
from attributes import BILINEAR_2X

import dmlops
from dmlops import TensorDesc
from dmlops.descs.data_movement import GatherDesc
from dmlops.descs.pooling import MaxPooling2Desc, MaxPoolingGradDesc
from dmlops.descs.resampling import Resample2Desc, ResampleGrad1Desc
from dmlops.descs.roi import RoiAlignDesc
from dmlops.errors import BackendUnavailableError, DataIndexError, UnsupportedError

cp.cuda.set_allocator(None)


def elementwise_cases() -> int:
    """The element-wise kernels on odd sizes, misaligned views, broadcasts and rows (no out-of-bounds access)."""
    from dmlops.backends import load_backend
    from dmlops.descs import desc_from_json
    from dmlops.enums import FeatureLevel as Level

    backend = load_backend("cuda")
    rng = np.random.default_rng(0)
    count = 0

    def run(op: str, body: dict, inputs: dict, out: cp.ndarray, **attrs: object) -> None:
        desc = desc_from_json(op, {**body, **attrs})
        desc.validate()
        backend.execute(desc, inputs, {"OutputTensor": out}, feature_level=Level.latest(), strict=False)

    for n in (1, 3, 7, 17, 4099):
        for offset in (0, 1, 3):
            for dtype, name in ((np.float32, "FLOAT32"), (np.float16, "FLOAT16"), (np.int8, "INT8")):
                a = cp.asarray(rng.standard_normal(n + offset).astype(dtype))[offset:]
                b = cp.asarray(rng.standard_normal(n + offset).astype(dtype))[offset:]
                out = cp.empty(n + offset, dtype=dtype)[offset:]
                t = {"DataType": name, "Sizes": [n]}
                run(
                    "ELEMENT_WISE_ADD",
                    {"ATensor": t, "BTensor": t, "OutputTensor": t},
                    {"ATensor": a, "BTensor": b},
                    out,
                )
                if dtype != np.int8:
                    run("ACTIVATION_GELU", {"InputTensor": t, "OutputTensor": t}, {"InputTensor": a}, out)
                    row = {"DataType": name, "Sizes": [1, n]}
                    for op in ("ACTIVATION_SOFTMAX", "ACTIVATION_HARDMAX"):
                        run(op, {"InputTensor": row, "OutputTensor": row}, {"InputTensor": a[None]}, out[None])
                count += 4
    for length in (31, 1024, 1025, 2048, 4097, 9000):  # warp rows, block rows in registers, re-read rows
        x = cp.asarray(rng.standard_normal((3, length)).astype(np.float32))
        out = cp.empty((3, length), dtype=np.float32)
        t = {"DataType": "FLOAT32", "Sizes": [3, length]}
        for op in ("ACTIVATION_SOFTMAX", "ACTIVATION_LOG_SOFTMAX", "ACTIVATION_HARDMAX"):
            run(op, {"InputTensor": t, "OutputTensor": t}, {"InputTensor": x}, out)
            count += 1
    # broadcast and strided flat buffers, 8-D
    sizes = [2, 3, 1, 2, 3, 2, 1, 5]
    a = cp.asarray(rng.standard_normal(5).astype(np.float32))
    b = cp.asarray(rng.standard_normal(int(np.prod(sizes)) * 2).astype(np.float32))
    out = cp.empty(int(np.prod(sizes)), dtype=np.float32)
    body = {
        "ATensor": {"DataType": "FLOAT32", "Sizes": sizes, "Strides": [0, 0, 0, 0, 0, 0, 0, 1]},
        "BTensor": {"DataType": "FLOAT32", "Sizes": sizes, "Strides": [2 * s for s in (180, 60, 60, 30, 10, 5, 5, 1)]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": sizes},
    }
    for op in ("ELEMENT_WISE_MAX", "ELEMENT_WISE_DIFFERENCE_SQUARE"):
        run(op, body, {"ATensor": a, "BTensor": b}, out)
        count += 1
    # vectors along padded rows, a row broadcast and a column broadcast
    for dtype, name in ((np.float32, "FLOAT32"), (np.float16, "FLOAT16"), (np.int8, "INT8")):
        for b_strides, b_size in (([0, 1], 48), ([1, 0], 7), ([64, 1], 7 * 64)):
            a = cp.asarray(rng.standard_normal(7 * 56).astype(dtype))
            b = cp.asarray(rng.standard_normal(b_size).astype(dtype))
            out = cp.empty((7, 48), dtype=dtype)
            body = {
                "ATensor": {"DataType": name, "Sizes": [7, 48], "Strides": [56, 1]},
                "BTensor": {"DataType": name, "Sizes": [7, 48], "Strides": b_strides},
                "OutputTensor": {"DataType": name, "Sizes": [7, 48]},
            }
            run("ELEMENT_WISE_ADD", body, {"ATensor": a, "BTensor": b}, out)
            count += 1
    cp.cuda.Device().synchronize()
    return count


if sys.argv[1:] == ["elementwise"]:
    print(f"sanitize cases passed: {elementwise_cases()}")
    sys.exit(0)

checked = elementwise_cases()
for idx_dtype in (np.int64, np.uint64, np.int32, np.uint32):
    info = np.iinfo(idx_dtype)
    wild = np.array(
        [info.min, info.max, info.min + 1, info.max - 1, -1, 0, 1, 2, 3, 4, -4, -3, -5, -6, 5, 6, 2**31 - 1, 2**15],
        dtype=np.float64,
    )
    wild = np.clip(wild, info.min, info.max).astype(idx_dtype)
    for dtype in (np.float32, np.float16, np.int8, np.float64):
        for width in (1, 3, 64):  # scalar rows, odd rows, vectorised rows
            table = cp.asarray(np.arange(5 * width).reshape(5, width).astype(dtype))
            desc = GatherDesc(
                input_tensor=TensorDesc(data_type=dmlops.enums.TensorDataType.from_numpy(dtype), sizes=(5, width)),
                indices_tensor=TensorDesc(
                    data_type=dmlops.enums.TensorDataType.from_numpy(idx_dtype), sizes=(1, wild.size)
                ),
                output_tensor=TensorDesc(
                    data_type=dmlops.enums.TensorDataType.from_numpy(dtype), sizes=(wild.size, width)
                ),
                axis=0,
                index_dimensions=1,
            )
            idx = cp.asarray(wild.reshape(1, -1))
            got = dmlops.execute(desc, {"InputTensor": table, "IndicesTensor": idx}, backend="cuda")["OutputTensor"]
            ref = dmlops.execute(desc, {"InputTensor": table.get(), "IndicesTensor": wild.reshape(1, -1)})[
                "OutputTensor"
            ]
            assert np.array_equal(got.get(), ref), (idx_dtype, dtype, width)
            try:
                dmlops.execute(desc, {"InputTensor": table, "IndicesTensor": idx}, backend="cuda", strict=True)
                raise AssertionError("strict gather did not raise")
            except DataIndexError:
                pass
            checked += 1
    # last axis gather (one index per element) on a strided 8-D view
    base = cp.arange(2 * 3 * 2 * 5 * 2 * 1 * 2 * 7, dtype=cp.float32).reshape(2, 3, 2, 5, 2, 1, 2, 7)
    view = base[::-1, :, ::-1, ::2, :, :, ::-1, :]
    shape = view.shape
    idx8 = cp.asarray(np.resize(wild, 6).reshape(1, 1, 1, 1, 1, 1, 2, 3))
    desc = GatherDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=shape),
        indices_tensor=TensorDesc(data_type=dmlops.enums.TensorDataType.from_numpy(idx_dtype), sizes=idx8.shape),
        # Input[0:7] ++ Indices[-2:] has 9 entries; the output holds the last 8 (E5)
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(*shape[:7], 2, 3)[-8:]),
        axis=7,
        index_dimensions=2,
    )
    desc.validate()
    got = dmlops.execute(desc, {"InputTensor": view, "IndicesTensor": idx8}, backend="cuda")["OutputTensor"]
    ref = dmlops.execute(desc, {"InputTensor": view.get(), "IndicesTensor": idx8.get()})["OutputTensor"]
    assert np.array_equal(got.get(), ref)
    checked += 1

# GATHER's flat reads (erratum E41): out-of-range indices landing in the gaps of a strided
# flat buffer, past its span, in an INT8 tensor's padding, and IndexDimensions 0 slabs past
# the input; the flat buffers are exactly the addressed span (every read must stay inside).
for idx_dtype in (np.int64, np.uint64, np.int32, np.uint32):
    info = np.iinfo(idx_dtype)
    wild = np.clip(
        np.array([info.min, info.max, -1, -3, -4, 3, 4, 5, 7, 2**31, 2**32 + 1, 1431655766], dtype=np.float64),
        info.min,
        info.max,
    ).astype(idx_dtype)
    for dtype, sizes, strides in (
        (np.float32, (2, 3), (8, 2)),
        (np.int8, (1, 3), None),
        (np.float16, (3, 64), (80, 1)),
        (np.float32, (5, 64), None),
    ):
        t = dmlops.enums.TensorDataType.from_numpy
        x_desc = TensorDesc(data_type=t(dtype), sizes=sizes, strides=strides)
        span = x_desc.addressed_element_span
        buffer = np.arange(span).astype(dtype)
        desc = GatherDesc(
            input_tensor=x_desc,
            indices_tensor=TensorDesc(data_type=t(idx_dtype), sizes=(1, wild.size)),
            output_tensor=TensorDesc(data_type=t(dtype), sizes=(sizes[0], wild.size)),
            axis=1,
            index_dimensions=1,
        )
        desc.validate()
        idx = wild.reshape(1, -1)
        for arg in (buffer, np.lib.stride_tricks.as_strided(
            buffer, sizes, [e * buffer.itemsize for e in x_desc.element_strides]
        ).copy()):  # fmt: skip
            got = dmlops.execute(
                desc, {"InputTensor": cp.asarray(arg), "IndicesTensor": cp.asarray(idx)}, backend="cuda"
            )
            ref = dmlops.execute(desc, {"InputTensor": arg, "IndicesTensor": idx})["OutputTensor"]
            assert np.array_equal(got["OutputTensor"].get(), ref), ("flat", idx_dtype, dtype, sizes, arg.ndim)
            checked += 1
    for strides in (None, (3, 1)):
        k0 = GatherDesc(
            input_tensor=TensorDesc(data_type="FLOAT32", sizes=(4, 3), strides=strides),
            indices_tensor=TensorDesc(data_type=dmlops.enums.TensorDataType.from_numpy(idx_dtype), sizes=(1, 1)),
            output_tensor=TensorDesc(data_type="FLOAT32", sizes=(5, 4)),
            axis=1,
            index_dimensions=0,
        )
        k0.validate()
        x = np.arange(12, dtype=np.float32).reshape(4, 3)
        for value in wild:
            idx = np.array([[value]], dtype=idx_dtype)
            got = dmlops.execute(k0, {"InputTensor": cp.asarray(x), "IndicesTensor": cp.asarray(idx)}, backend="cuda")
            ref = dmlops.execute(k0, {"InputTensor": x, "IndicesTensor": idx})["OutputTensor"]
            assert np.array_equal(got["OutputTensor"].get(), ref), ("k0", idx_dtype, strides, value)
            checked += 1


def roi_desc(
    dml: str, x_shape: tuple[int, ...], n_rois: int, out: tuple[int, ...], *, reduce: str = "AVERAGE",
    mode: str = "LINEAR", lo: int, hi: int, oob: float = -1.5, index_type: str = "UINT32",
) -> RoiAlignDesc:  # fmt: skip
    """A ROI_ALIGN desc at scale 1 over an NCHW input of ``x_shape``."""
    return RoiAlignDesc(
        input_tensor=TensorDesc(data_type=dml, sizes=x_shape),
        roi_tensor=TensorDesc(data_type=dml, sizes=(n_rois, 4)),
        batch_indices_tensor=TensorDesc(data_type=index_type, sizes=(n_rois,)),
        output_tensor=TensorDesc(data_type=dml, sizes=(n_rois, x_shape[1], *out)),
        reduction_function=reduce,
        interpolation_mode=mode,
        spatial_scale_x=1.0,
        spatial_scale_y=1.0,
        out_of_bounds_input_value=oob,
        minimum_samples_per_output=lo,
        maximum_samples_per_output=hi,
    )


# ROI_ALIGN with a batch index far out of range: DataIndexError, no out-of-bounds read.
x = cp.random.standard_normal((2, 3, 8, 8), dtype=cp.float32)
rois = cp.asarray([[0, 0, 4, 4], [1, 1, 7, 7]], dtype=cp.float32)
for bad in (np.uint32(2**32 - 1), np.uint64(2**64 - 1)):
    bi = cp.asarray(np.array([0, bad], dtype=bad.dtype))
    index_type = dmlops.enums.TensorDataType.from_numpy(bad.dtype).name
    desc = roi_desc("FLOAT32", (2, 3, 8, 8), 2, (2, 2), lo=1, hi=4, oob=0.0, index_type=index_type)
    try:
        dmlops.execute(desc, {"InputTensor": x, "ROITensor": rois, "BatchIndicesTensor": bi}, backend="cuda")
        raise AssertionError("bad batch index did not raise")
    except DataIndexError as exc:
        print("ROI_ALIGN:", exc)


def host_reference(desc: object, feeds: dict) -> np.ndarray | None:
    """The numpy reference's output, or the cpu backend's where the reference refuses the size
    (it visits every ROI sample: at most 2^32); None where neither runs here."""
    try:
        return dmlops.execute(desc, feeds)["OutputTensor"]
    except UnsupportedError:
        pass
    try:
        return dmlops.execute(desc, feeds, backend="cpu")["OutputTensor"]
    except BackendUnavailableError:
        print(f"{desc.dml_name}: no host reference for this size here (numba absent): sanitizer check only")
        return None


# ROI_ALIGN AVERAGE on tight planes through every path of roi_align_avg: two samples per
# output (column taps in registers), adaptive sampling (more taps than registers: rows
# read element by element at width 9, in 16-byte chunks at width 8 (FLOAT32) or 16
# (FLOAT16), the last chunk ending at the buffer's end), and tables too small (per
# sample), on NCHW and channels-last strides; ROIs reach past every edge, and one spans a
# million pixels (adaptive sampling: only its in-bounds samples are visited).
roi_cases = [
    (cp.float32, "FLOAT32", 9, 1e-5, False),
    (cp.float32, "FLOAT32", 8, 1e-5, False),
    (cp.float16, "FLOAT16", 16, 2e-3, False),
    (cp.float32, "FLOAT32", 9, 1e-5, True),  # channels last: threads over channels first
]
roi_samples = ((2, 2, (3, 4)), (1, 2**32 - 1, (2, 3)), (3, 3, (5, 2)), (1, 2**32 - 1, (1, 1)), (300, 300, (2, 2)))
for (dtype, dml, width, tol, channels_last), (lo, hi, out), mode in itertools.product(
    roi_cases, roi_samples, ("LINEAR", "NEAREST_NEIGHBOR")
):
    x = cp.random.standard_normal((2, 3, 7, width), dtype=cp.float32).astype(dtype)
    if channels_last:
        x = cp.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    rois = cp.asarray(
        [[-3, -2, 12, 9], [0, 0, 8.5, 6.5], [2.2, 1.1, 2.4, 1.3], [-40, -40, -20, -20], [-5e5, -5e5, 5e5, 5e5]],
        dtype=cp.float32,
    ).astype(dtype)
    bi = cp.asarray(np.array([0, 1, 1, 0, 1], dtype=np.uint32))
    desc = roi_desc(dml, (2, 3, 7, width), 5, out, mode=mode, lo=lo, hi=hi)
    feeds = {"InputTensor": x, "ROITensor": rois, "BatchIndicesTensor": bi}
    got = dmlops.execute(desc, feeds, backend="cuda")["OutputTensor"].get()
    ref = host_reference(desc, {k: v.get() for k, v in feeds.items()})
    if ref is not None:
        np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), rtol=tol, atol=tol)
    checked += 1
# ROI_ALIGN MAX per sample with more samples than the tables hold (300 per output, against
# the reference) and adaptive sampling of a region a million pixels across (no reference:
# it would evaluate 10^12 samples per output), NCHW and channels last.
for channels_last, (lo, hi) in itertools.product((False, True), ((300, 300), (1, 2**32 - 1))):
    x = cp.random.standard_normal((1, 3, 7, 9), dtype=cp.float32)
    if channels_last:
        x = cp.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    rois = cp.asarray([[-3, -2, 12, 9], [2.2, 1.1, 2.4, 1.3], [-5e5, -5e5, 5e5, 5e5]], dtype=cp.float32)
    bi = cp.zeros(3, dtype=cp.uint32)
    desc = roi_desc("FLOAT32", (1, 3, 7, 9), 3, (4, 4), reduce="MAX", lo=lo, hi=hi)
    feeds = {"InputTensor": x, "ROITensor": rois, "BatchIndicesTensor": bi}
    got = dmlops.execute(desc, feeds, backend="cuda")["OutputTensor"].get()
    if lo == 300:
        ref = dmlops.execute(desc, {k: v.get() for k, v in feeds.items()})["OutputTensor"]
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    checked += 1
# MAX_POOLING_GRAD 2-D fast paths (every variant), MAX_POOLING2's, and RESAMPLE_GRAD1 2x on tight planes.
from dmlops.cuda import pooling as mpg  # noqa: E402
from dmlops.cuda._runtime import element_strides  # noqa: E402

rng = np.random.default_rng(9)
for dtype, name in ((np.float32, "FLOAT32"), (np.float16, "FLOAT16")):
    for shape, win, st, pad in (
        ((1, 2, 9, 9), (3, 3), (2, 2), (1, 1)),
        ((1, 1, 7, 12), (3, 3), (2, 2), (0, 0)),
        ((2, 1, 6, 6), (2, 2), (2, 2), (0, 0)),
        ((1, 1, 5, 11), (3, 2), (1, 2), (2, 1)),
        ((1, 2, 9, 16), (3, 3), (2, 2), (1, 1)),  # 16-byte-load pass 1
        ((1, 1, 5, 40), (3, 3), (2, 2), (0, 0)),
    ):
        xh = rng.standard_normal(shape).astype(dtype)
        oh = (shape[2] + 2 * pad[0] - win[0]) // st[0] + 1
        ow = (shape[3] + 2 * pad[1] - win[1]) // st[1] + 1
        dyh = rng.standard_normal((shape[0], shape[1], oh, ow)).astype(dtype)
        window = dict(strides=st, window_size=win, start_padding=pad, end_padding=pad, dilations=(1, 1))
        desc = MaxPoolingGradDesc(
            input_tensor=TensorDesc(data_type=name, sizes=shape),
            input_gradient_tensor=TensorDesc(data_type=name, sizes=dyh.shape),
            output_gradient_tensor=TensorDesc(data_type=name, sizes=shape),
            **window,
        )
        want = dmlops.execute(desc, {"InputTensor": xh, "InputGradientTensor": dyh})["OutputGradientTensor"]
        gx, gdy = cp.asarray(xh), cp.asarray(dyh)
        for v in mpg.VARIANTS:
            out = cp.empty(shape, dtype=dtype)
            plan = mpg._plan(
                desc, shape, dyh.shape, element_strides(gx), element_strides(gdy), element_strides(out), gx.dtype, v
            )
            mpg.launch(plan, gx, gdy, out)
            np.testing.assert_allclose(out.get().astype(np.float64), want.astype(np.float64), rtol=2e-3, atol=2e-3)
            checked += 1
        # MAX_POOLING2's 2-D fast path (4 windows per thread, the last ones past the row).
        pdesc = MaxPooling2Desc(
            input_tensor=TensorDesc(data_type=name, sizes=shape),
            output_tensor=TensorDesc(data_type=name, sizes=dyh.shape),
            output_indices_tensor=TensorDesc(data_type="UINT32", sizes=dyh.shape),
            **window,
        )
        want_pool = dmlops.execute(pdesc, {"InputTensor": xh})
        got_pool = dmlops.execute(pdesc, {"InputTensor": gx}, backend="cuda")
        for member, value in want_pool.items():
            np.testing.assert_array_equal(got_pool[member].get(), value)
        checked += 1
    for small in ((1, 1, 3, 6), (1, 2, 5, 70), (1, 1, 2, 128), (1, 1, 4, 2)):
        big = (small[0], small[1], 2 * small[2], 2 * small[3])
        # RESAMPLE_GRAD1 2x, and its forward RESAMPLE2 (the height-width path).
        resamples = (
            (
                ResampleGrad1Desc(
                    input_gradient_tensor=TensorDesc(data_type=name, sizes=big),
                    output_gradient_tensor=TensorDesc(data_type=name, sizes=small),
                    **BILINEAR_2X,
                ),
                "InputGradientTensor",
                big,
            ),
            (
                Resample2Desc(
                    input_tensor=TensorDesc(data_type=name, sizes=small),
                    output_tensor=TensorDesc(data_type=name, sizes=big),
                    **BILINEAR_2X,
                ),
                "InputTensor",
                small,
            ),
        )
        for rdesc, member, shape in resamples:
            g = rng.standard_normal(shape).astype(dtype)
            (want,) = dmlops.execute(rdesc, {member: g}).values()
            (got,) = dmlops.execute(rdesc, {member: cp.asarray(g)}, backend="cuda").values()
            np.testing.assert_allclose(got.get().astype(np.float64), want.astype(np.float64), rtol=2e-3, atol=2e-3)
            checked += 1
# MAX_POOLING2 and MAX_POOLING_GRAD windows of padding only (wholly in the start or end
# padding), output sizes beyond the floor (forward), windows larger than the input, NaN and
# -inf, through every path (tests/test_cuda_pooling_rule.py checks the values). Run
# through the backend's entry point and plans, without validation.
from dmlops import cuda as dmlops_cuda  # noqa: E402
from dmlops.cuda import pooling as mp2  # noqa: E402
from dmlops.enums import FeatureLevel  # noqa: E402

for dtype, name in ((np.float32, "FLOAT32"), (np.float16, "FLOAT16")):
    for shape, win, st, ps, pe, extra in (
        ((1, 2, 7, 16), (2, 2), (2, 2), (3, 4), (3, 5), (1, 2)),
        ((1, 1, 2, 3), (5, 5), (1, 1), (0, 0), (0, 0), (2, 3)),
        ((1, 2, 5, 40), (4, 4), (5, 5), (6, 7), (6, 7), (0, 1)),
        ((2, 1, 9, 11), (3, 3), (2, 2), (1, 1), (1, 1), (2, 2)),
        ((1, 1, 1, 2), (1, 1), (1, 1), (0, 2), (0, 0), (0, 3)),
    ):
        xh = rng.standard_normal(shape).astype(dtype)
        xh.reshape(-1)[::5] = np.nan
        xh.reshape(-1)[1::7] = -np.inf
        floor = [max(1, (n + a + b - k) // s + 1) for n, k, s, a, b in zip(shape[2:], win, st, ps, pe)]
        window = dict(strides=st, window_size=win, start_padding=ps, end_padding=pe, dilations=(1, 1))
        dy_shape = (*shape[:2], *floor)
        dyh = rng.standard_normal(dy_shape).astype(dtype)
        gdesc = MaxPoolingGradDesc(
            input_tensor=TensorDesc(data_type=name, sizes=shape),
            input_gradient_tensor=TensorDesc(data_type=name, sizes=dy_shape),
            output_gradient_tensor=TensorDesc(data_type=name, sizes=shape),
            **window,
        )
        gx, gdy = cp.asarray(xh), cp.asarray(dyh)
        for v in mpg.VARIANTS:
            out = cp.empty(shape, dtype=dtype)
            plan = mpg._plan(
                gdesc, shape, dy_shape, element_strides(gx), element_strides(gdy), element_strides(out), gx.dtype, v
            )
            mpg.launch(plan, gx, gdy, out)
            checked += 1
        out_shape = (*shape[:2], *(f + e for f, e in zip(floor, extra)))
        for fused in (mp2.FUSED_MAX, 0):  # the fast path and the generic kernel
            saved, mp2.FUSED_MAX = mp2.FUSED_MAX, fused
            pdesc = MaxPooling2Desc(
                input_tensor=TensorDesc(data_type=name, sizes=shape),
                output_tensor=TensorDesc(data_type=name, sizes=out_shape),
                output_indices_tensor=TensorDesc(data_type="UINT64", sizes=out_shape),
                **window,
            )
            dmlops_cuda.execute(pdesc, {"InputTensor": gx}, None, feature_level=FeatureLevel.latest(), strict=False)
            mp2.FUSED_MAX = saved
            checked += 1
cp.cuda.Device().synchronize()
print(f"sanitize cases passed: {checked}")
