"""What is specific to the numba CPU backend: out= without allocation, the FLOAT16 codec,
float32-then-round-once FLOAT16 arithmetic, a missing numba, thread safety.

Per-operator parity with the reference comes from the operator test modules (they take the
``backend`` fixture).
"""

from __future__ import annotations

import builtins
import threading
import tracemalloc

import numpy as np
import pytest

import dmlops
from conftest import assert_close
from dmlops import TensorDesc
from dmlops.backends import DEFAULT_BACKEND
from dmlops.descs.data_movement import GatherDesc, Slice1Desc
from dmlops.descs.pooling import MaxPooling2Desc, MaxPoolingGradDesc
from dmlops.descs.resampling import Resample2Desc, ResampleGrad1Desc
from dmlops.descs.roi import RoiAlignDesc
from dmlops.errors import BackendUnavailableError

pytest.importorskip("numba")
pytestmark = pytest.mark.cpu_backend

DTYPE_NAMES = {np.float32: "FLOAT32", np.float16: "FLOAT16", np.float64: "FLOAT64"}


def _t(dtype, sizes, **kw) -> TensorDesc:
    return TensorDesc(data_type=DTYPE_NAMES.get(dtype, np.dtype(dtype).name.upper()), sizes=sizes, **kw)


def cases(dtype=np.float32):
    """(desc, inputs, output member) for every operator, small but not trivial."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 12, 10)).astype(dtype)
    dy_pool = rng.standard_normal((2, 3, 6, 5)).astype(dtype)
    dy_rs = rng.standard_normal((2, 3, 24, 15)).astype(dtype)
    rois = np.array([[0, 0, 9, 11], [2.5, 1, 7, 4], [-3, -2, 12, 14]], dtype=dtype)
    out = {}
    out["slice1"] = (
        Slice1Desc(
            input_tensor=_t(dtype, x.shape),
            output_tensor=_t(dtype, (2, 3, 6, 5)),
            input_window_offsets=(0, 0, 0, 0),
            input_window_sizes=x.shape,
            input_window_strides=(1, -1, 2, -2),
        ),
        {"InputTensor": x},
        "OutputTensor",
    )
    idx = np.array([[[[3, -1, 0, 11]]]], dtype=np.int64)
    out["gather"] = (
        GatherDesc(
            input_tensor=_t(dtype, x.shape),
            indices_tensor=_t(np.int64, idx.shape),
            output_tensor=_t(dtype, (2, 3, 4, 10)),
            axis=2,
            index_dimensions=1,
        ),
        {"InputTensor": x, "IndicesTensor": idx},
        "OutputTensor",
    )
    window = dict(strides=(2, 2), window_size=(3, 3), start_padding=(1, 1), end_padding=(0, 0), dilations=(1, 1))
    out["max_pooling2"] = (
        MaxPooling2Desc(input_tensor=_t(dtype, x.shape), output_tensor=_t(dtype, dy_pool.shape), **window),
        {"InputTensor": x},
        "OutputTensor",
    )
    out["max_pooling_grad"] = (
        MaxPoolingGradDesc(
            input_tensor=_t(dtype, x.shape),
            input_gradient_tensor=_t(dtype, dy_pool.shape),
            output_gradient_tensor=_t(dtype, x.shape),
            **window,
        ),
        {"InputTensor": x, "InputGradientTensor": dy_pool},
        "OutputGradientTensor",
    )
    resample = dict(
        interpolation_mode="LINEAR",
        rounding_direction="DECREASING",
        scales=(1.0, 1.0, 2.0, 1.5),
        input_pixel_offsets=(0.5, 0.5, 0.5, 0.5),
        output_pixel_offsets=(-0.5, -0.5, -0.5, -0.5),
    )
    out["resample2"] = (
        Resample2Desc(input_tensor=_t(dtype, x.shape), output_tensor=_t(dtype, dy_rs.shape), **resample),
        {"InputTensor": x},
        "OutputTensor",
    )
    out["resample_grad1"] = (
        ResampleGrad1Desc(
            input_gradient_tensor=_t(dtype, dy_rs.shape), output_gradient_tensor=_t(dtype, x.shape), **resample
        ),
        {"InputGradientTensor": dy_rs},
        "OutputGradientTensor",
    )
    batch = np.array([0, 1, 1], dtype=np.uint32)
    out["roi_align"] = (
        RoiAlignDesc(
            input_tensor=_t(dtype, x.shape),
            roi_tensor=_t(dtype, rois.shape),
            batch_indices_tensor=_t(np.uint32, batch.shape),
            output_tensor=_t(dtype, (3, 3, 4, 3)),
            reduction_function="AVERAGE",
            interpolation_mode="LINEAR",
            spatial_scale_x=1.0,
            spatial_scale_y=1.0,
            out_of_bounds_input_value=0.25,
            minimum_samples_per_output=1,
            maximum_samples_per_output=4,
        ),
        {"InputTensor": x, "ROITensor": rois, "BatchIndicesTensor": batch},
        "OutputTensor",
    )
    return out


OPS = list(cases())


def test_numpy_is_the_default_backend() -> None:
    assert DEFAULT_BACKEND == "numpy"


@pytest.mark.parametrize("op", OPS)
def test_out_is_written_in_place_and_returned(op: str) -> None:
    desc, inputs, member = cases()[op]
    ref = dmlops.execute(desc, inputs, backend="numpy")[member]
    buf = np.full(ref.shape, np.nan, dtype=ref.dtype)
    result = dmlops.execute(desc, inputs, backend="cpu", outputs={member: buf})
    assert result[member] is buf
    np.testing.assert_allclose(buf, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", OPS)
def test_strided_output_writes_only_addressed_elements(op: str) -> None:
    desc, inputs, member = cases()[op]
    ref = dmlops.execute(desc, inputs, backend="numpy")[member]
    sizes = ref.shape
    # every element two apart: a flat buffer twice as long, odd positions untouched
    strides = tuple(2 * int(np.prod(sizes[i + 1 :])) for i in range(len(sizes)))
    tensor = TensorDesc(data_type=desc.tensor(member).data_type, sizes=sizes, strides=strides)
    strided = type(desc)(**{**_fields(desc), _attr_of(desc, member): tensor})
    buf = np.full(2 * ref.size, -7, dtype=ref.dtype)
    dmlops.execute(strided, inputs, backend="cpu", outputs={member: buf})
    np.testing.assert_allclose(buf[::2].reshape(sizes), ref, rtol=1e-5, atol=1e-6)
    assert np.all(buf[1::2] == -7)


def _fields(desc) -> dict:
    import dataclasses

    return {f.name: getattr(desc, f.name) for f in dataclasses.fields(desc)}


def _attr_of(desc, member: str) -> str:
    import dataclasses

    for f in dataclasses.fields(desc):
        info = f.metadata.get("dml")
        if info is not None and info.dml_name == member:
            return f.name
    raise KeyError(member)


@pytest.mark.parametrize("op", ["slice1", "gather", "resample_grad1", "max_pooling_grad", "roi_align"])
def test_out_needs_no_output_sized_allocation(op: str) -> None:
    """With out=, no NumPy allocation anywhere near the output's size happens (tracemalloc
    sees NumPy's allocations; numba's own scratch is per-plane and small)."""
    desc, inputs, member = cases()[op]
    # scale the leading dimension up so that the output is ~1 MB
    ref = dmlops.execute(desc, inputs, backend="cpu")[member]
    buf = np.empty_like(ref)
    dmlops.execute(desc, inputs, backend="cpu", outputs={member: buf})  # warm up (compile)
    tracemalloc.start()
    try:
        dmlops.execute(desc, inputs, backend="cpu", outputs={member: buf})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < max(buf.nbytes // 2, 64 * 1024), (peak, buf.nbytes)


def test_large_out_allocates_little() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 16, 64, 64)).astype(np.float32)
    out = np.empty((8, 16, 64, 64), np.float32)
    desc = Slice1Desc(
        input_tensor=_t(np.float32, x.shape),
        output_tensor=_t(np.float32, out.shape),
        input_window_offsets=(0, 0, 0, 0),
        input_window_sizes=x.shape,
        input_window_strides=(-1, -1, -1, -1),
    )
    dmlops.execute(desc, {"InputTensor": x}, backend="cpu", outputs={"OutputTensor": out})
    tracemalloc.start()
    try:
        dmlops.execute(desc, {"InputTensor": x}, backend="cpu", outputs={"OutputTensor": out})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < out.nbytes // 100
    np.testing.assert_array_equal(out, x[::-1, ::-1, ::-1, ::-1])


# -- FLOAT16 ----------------------------------------------------------------------------------------


def test_half_codec_is_exact() -> None:
    from numba import njit

    from dmlops.cpu._common import float_to_half_bits, half_bits_to_float

    @njit
    def decode(a):
        o = np.empty(a.size, np.float32)
        for i in range(a.size):
            o[i] = half_bits_to_float(a[i])
        return o

    @njit
    def encode(a):
        o = np.empty(a.size, np.uint16)
        for i in range(a.size):
            o[i] = float_to_half_bits(a[i])
        return o

    bits = np.arange(1 << 16, dtype=np.uint16)
    ref = bits.view(np.float16).astype(np.float32)
    got = decode(bits)
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), ref[~nan].view(np.uint32))

    rng = np.random.default_rng(0)
    with np.errstate(all="ignore"):
        f32 = rng.integers(0, 2**32, size=200_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
        halfway = (ref[:-1] + ref[1:]) / 2  # ties: round to even
        f32 = np.concatenate([f32, ref, halfway, np.float32([65519.99, 65520, -65520, 1e-8, -0.0])])
        f32 = f32[~np.isnan(f32)]
        np.testing.assert_array_equal(encode(f32), f32.astype(np.float16).view(np.uint16))
        f64 = rng.standard_normal(100_000) * 10.0 ** rng.integers(-9, 6, 100_000)
        np.testing.assert_array_equal(encode(f64), f64.astype(np.float16).view(np.uint16))
    nan_bits = encode(np.array([np.nan], np.float32))[0]
    assert np.isnan(np.uint16(nan_bits).view(np.float16))


@pytest.mark.parametrize("op", ["max_pooling_grad", "resample2", "resample_grad1", "roi_align"])
def test_float16_is_computed_in_float32_and_rounded_once(op: str) -> None:
    """FLOAT16 on the CPU backend == the FLOAT32 computation on the same values, rounded once."""
    desc16, inputs16, member = cases(np.float16)[op]
    desc32, _, _ = cases(np.float32)[op]
    inputs32 = {k: v.astype(np.float32) if v.dtype == np.float16 else v for k, v in inputs16.items()}
    got = dmlops.execute(desc16, inputs16, backend="cpu")[member]
    want = dmlops.execute(desc32, inputs32, backend="cpu")[member].astype(np.float16)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("op", ["slice1", "gather", "max_pooling2"])
def test_float16_data_movement_keeps_bits(op: str) -> None:
    desc, inputs, member = cases(np.float16)[op]
    x = inputs["InputTensor"].copy()
    x.view(np.uint16).reshape(-1)[::7] = 0x7E01  # NaNs with a payload
    inputs = {**inputs, "InputTensor": x}
    got = dmlops.execute(desc, inputs, backend="cpu")[member]
    ref = dmlops.execute(desc, inputs, backend="numpy")[member]
    np.testing.assert_array_equal(got.view(np.uint16), ref.view(np.uint16))


# -- availability -----------------------------------------------------------------------------------


def test_available_here() -> None:
    import dmlops.cpu

    assert dmlops.cpu.availability() is None


def test_missing_numba_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import dmlops.cpu

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "numba" or name.startswith("numba."):
            raise ImportError("No module named 'numba'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    # A process without numba: no backend found usable earlier in this one.
    monkeypatch.setattr(dmlops.backends, "_LOADED", {})
    reason = dmlops.cpu.availability()
    assert reason is not None and "numba" in reason and "dmlops[cpu]" in reason
    desc, inputs, _ = cases()["slice1"]
    with pytest.raises(BackendUnavailableError, match=r"backend 'cpu' is not available: .*dmlops\[cpu\]"):
        dmlops.execute(desc, inputs, backend="cpu")


def test_unknown_backend_is_a_clear_error() -> None:
    desc, inputs, _ = cases()["slice1"]
    with pytest.raises(BackendUnavailableError, match=r"unknown backend 'gpu'"):
        dmlops.execute(desc, inputs, backend="gpu")


# -- threads ---------------------------------------------------------------------------------------


def test_concurrent_calls_from_python_threads() -> None:
    """Calls from several Python threads at once share the backend's executor (its threads
    claim each call's chunks); every result is still the single-threaded one."""
    all_cases = cases()
    expected = {op: dmlops.execute(d, i, backend="cpu")[m] for op, (d, i, m) in all_cases.items()}
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(5):
                for op, (d, i, m) in all_cases.items():
                    np.testing.assert_array_equal(dmlops.execute(d, i, backend="cpu")[m], expected[op])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# -- kernel paths that the per-operator suites reach only by chance ---------------------------------


def _roi_desc(dtype, x_shape, n_roi, out_hw, **kw) -> RoiAlignDesc:
    return RoiAlignDesc(
        input_tensor=_t(dtype, x_shape),
        roi_tensor=_t(dtype, (n_roi, 4)),
        batch_indices_tensor=_t(np.uint32, (n_roi,)),
        output_tensor=_t(dtype, (n_roi, x_shape[1], *out_hw)),
        spatial_scale_x=kw.pop("spatial_scale_x", 0.8),
        spatial_scale_y=kw.pop("spatial_scale_y", 1.1),
        **kw,
    )


@pytest.mark.parametrize("form", [None, 0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_roi_align_non_finite_inputs_on_every_loop_order(
    form: int | None, dtype: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AVERAGE's two loop orders (rows first, direct) and MAX's per-sample loop agree with the
    reference on inputs with inf/-inf/nan: a tap of weight exactly 0 is never read (no 0 * inf),
    an inf in reach propagates, and MAX propagates nan."""
    import dmlops.cpu.roi as cpu_roi

    if form is not None:
        monkeypatch.setattr(cpu_roi, "_average_form", lambda ym, xm, oh, ow: np.full(xm[4].shape[0], form, np.int64))
    rng = np.random.default_rng(7)
    for trial in range(24):
        x = rng.standard_normal((2, 3, 7, 9)).astype(dtype)
        x[rng.random(x.shape) < 0.06] = [np.inf, -np.inf, np.nan][trial % 3]
        x[0, 0, 2, 3] = np.inf  # beside exactly hit pixels for integer coordinates
        rois = rng.uniform(-3, 12, size=(4, 4)).astype(dtype)
        rois[0] = [1, 1, 4, 5]
        batch = rng.integers(0, 2, 4).astype(np.uint32)
        desc = _roi_desc(
            dtype,
            x.shape,
            4,
            (3, 2),
            reduction_function=["AVERAGE", "MAX"][trial % 2],
            interpolation_mode=["LINEAR", "NEAREST_NEIGHBOR"][(trial // 2) % 2],
            out_of_bounds_input_value=[0.0, 0.25, np.inf, np.nan][(trial // 4) % 4],
            minimum_samples_per_output=1 + trial % 2,
            maximum_samples_per_output=2 + trial % 3,
        )
        inputs = {"InputTensor": x, "ROITensor": rois, "BatchIndicesTensor": batch}
        with np.errstate(invalid="ignore"):
            want = dmlops.execute(desc, inputs, backend="numpy")["OutputTensor"]
        assert_close(dmlops.execute(desc, inputs, backend="cpu")["OutputTensor"], want)


def test_roi_align_loop_orders_agree_on_large_regions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both AVERAGE loop orders over regions larger than the output (shared rows and columns)."""
    import dmlops.cpu.roi as cpu_roi

    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 5, 40, 33)).astype(np.float32)
    rois = np.array([[0, 0, 32, 39], [3.3, 1.7, 30.1, 12.2], [-5, -5, 45, 50], [10, 10, 10.5, 10.25]], np.float32)
    desc = _roi_desc(
        np.float32,
        x.shape,
        4,
        (4, 5),
        reduction_function="AVERAGE",
        interpolation_mode="LINEAR",
        out_of_bounds_input_value=-2.0,
        minimum_samples_per_output=1,
        maximum_samples_per_output=64,
        spatial_scale_x=1.0,
        spatial_scale_y=1.0,
    )
    inputs = {"InputTensor": x, "ROITensor": rois, "BatchIndicesTensor": np.zeros(4, np.uint32)}
    want = dmlops.execute(desc, inputs, backend="numpy")["OutputTensor"]
    for form in (0, 1):
        monkeypatch.setattr(cpu_roi, "_average_form", lambda ym, xm, oh, ow, f=form: np.full(4, f, np.int64))
        assert_close(dmlops.execute(desc, inputs, backend="cpu")["OutputTensor"], want)


@pytest.mark.parametrize(
    ("window", "strides", "dilations", "pads"),
    [((3, 3), (2, 2), (1, 1), (1, 1)), ((2, 3), (1, 1), (1, 2), (0, 2)), ((3, 2), (3, 3), (2, 1), (2, 1))],
)
def test_max_pooling_grad_row_scan_keeps_ties_and_nan(window, strides, dilations, pads) -> None:
    """The row-vectorised 2-D gradient scan selects the reference's element: ties keep the
    first in row-major order, the first NaN wins, an all -inf window takes its first element."""
    rng = np.random.default_rng(9)
    for dtype in (np.float32, np.float16):
        x = rng.integers(-2, 2, (2, 3, 11, 13)).astype(dtype)  # many ties
        x[0, 0][rng.random((11, 13)) < 0.1] = np.nan
        x[0, 1] = -np.inf
        x[1, 2, 4] = np.inf
        out_sizes = (
            (x.shape[2] + pads[0] - ((window[0] - 1) * dilations[0] + 1)) // strides[0] + 1,
            (x.shape[3] + pads[1] + 1 - ((window[1] - 1) * dilations[1] + 1)) // strides[1] + 1,
        )
        desc = MaxPoolingGradDesc(
            input_tensor=_t(dtype, x.shape),
            input_gradient_tensor=_t(dtype, (2, 3, *out_sizes)),
            output_gradient_tensor=_t(dtype, x.shape),
            strides=strides,
            window_size=window,
            start_padding=pads,
            end_padding=(0, 1),
            dilations=dilations,
        )
        dy = rng.standard_normal((2, 3, *out_sizes)).astype(dtype)
        inputs = {"InputTensor": x, "InputGradientTensor": dy}
        want = dmlops.execute(desc, inputs, backend="numpy")["OutputGradientTensor"]
        assert_close(dmlops.execute(desc, inputs, backend="cpu")["OutputGradientTensor"], want)


@pytest.mark.parametrize("scales", [(1.0, 1.0, 2.0, 2.0), (2.0, 1.0, 1.5, 0.75), (0.5, 3.0, 2.5, 1.0)])
def test_resample_grad_nearest_runs(scales) -> None:
    """NEAREST_NEIGHBOR's transpose sums contiguous runs of source rows and columns."""
    sizes = (2, 3, 6, 8)
    out_sizes = tuple(int(s * f) for s, f in zip(sizes, scales))
    rng = np.random.default_rng(10)
    dy = rng.standard_normal(out_sizes).astype(np.float32)
    desc = ResampleGrad1Desc(
        input_gradient_tensor=_t(np.float32, out_sizes),
        output_gradient_tensor=_t(np.float32, sizes),
        interpolation_mode="NEAREST_NEIGHBOR",
        rounding_direction="INCREASING",
        scales=scales,
        input_pixel_offsets=(0.5, 0.0, 0.5, -0.25),
        output_pixel_offsets=(-0.5, 0.0, -0.5, 0.0),
    )
    inputs = {"InputGradientTensor": dy}
    want = dmlops.execute(desc, inputs, backend="numpy")["OutputGradientTensor"]
    assert_close(dmlops.execute(desc, inputs, backend="cpu")["OutputGradientTensor"], want)


def test_nearest_runs_detects_non_consecutive_sources() -> None:
    from dmlops.cpu.resampling import _runs

    ptr = np.array([0, 2, 2, 3], np.int64)
    lo, hi = _runs(ptr, np.array([4, 5, 9], np.int64))
    np.testing.assert_array_equal(lo, [4, 0, 9])
    np.testing.assert_array_equal(hi, [6, 0, 10])
    assert _runs(ptr, np.array([4, 6, 9], np.int64)) is None


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64])
@pytest.mark.parametrize("wrap", [True, False])
def test_gather_index_normalisation_matches_the_reference(dtype, wrap: bool) -> None:
    from dmlops.cpu.data_movement import normalized
    from dmlops.descs.data_movement import normalize_indices

    info = np.iinfo(dtype)
    values = [info.min, info.max, 0, 1, 6, 7, 8, -1, -7, -8, -9, 2**31 - 1, 2**32 - 1]
    indices = np.array([v for v in values if info.min <= v <= info.max], dtype=dtype).reshape(1, -1)
    # An index out of range: None (the gather then reads flat addresses, erratum E41).
    assert normalized(indices, 8, wrap=wrap, strict=False, what="IndicesTensor") is None
    # Every index in range: the reference's normalisation (one wrap of negatives).
    valid = [0, 1, 6, 7] + ([-1, -7, -8] if wrap and info.min < 0 else [])
    indices = np.array(valid, dtype=dtype).reshape(1, -1)
    want = normalize_indices(indices, 8, wrap_negative=wrap, strict=False)
    got = normalized(indices, 8, wrap=wrap, strict=False, what="IndicesTensor")
    assert got is not None and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
