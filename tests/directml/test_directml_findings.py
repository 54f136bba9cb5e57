"""Targeted probes where DirectML 1.15.4 and dmlops's old rulings disagreed, reduced to the smallest case.

They were found by a local differential campaign (hypothesis descs from tests/fuzz, about 400
per operator). Where DirectML computes something deterministic on a valid desc, dmlops now
follows it (docs/errata.md, E26, E27, E41) and the probe is a plain test, GATHER's out-of-range
indices included (the page calls their values undefined; DirectML's flat address clamp wins,
issue 18).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _directml import directml  # noqa: F401  (fixture)

import dmlops
from dmlops.directml import create_operator, run
from dmlops.enums import FeatureLevel
from dmlops.errors import DirectMLRejectedDescError, InvalidDescError

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]


def _gather_probe(i, o, axis, index_type="UINT32", strides=None, total=None, data_type="FLOAT32", k=1):
    tensor = {"DataType": data_type, "Sizes": list(i)}
    if strides is not None:
        tensor["Strides"] = list(strides)
    if total is not None:
        tensor["TotalTensorSizeInBytes"] = total
    return dmlops.desc_from_json(
        "DML_OPERATOR_GATHER",
        {
            "InputTensor": tensor,
            "IndicesTensor": {"DataType": index_type, "Sizes": [1] * len(i)},
            "OutputTensor": {"DataType": data_type, "Sizes": list(o)},
            "Axis": axis,
            "IndexDimensions": k,
        },
    )


def _agree(desc, x, value, want) -> None:
    """DirectML gives ``want`` for one index value, and so do numpy and cpu (erratum E41)."""
    idx = np.full(desc.indices_tensor.sizes, value, desc.indices_tensor.dtype)
    for backend in ("directml", "numpy", "cpu"):
        got = dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": idx}, backend=backend)["OutputTensor"]
        np.testing.assert_array_equal(np.asarray(got).ravel(), want, err_msg=f"{backend}, index {value}")


def test_gather_out_of_range_index() -> None:
    # DirectML clamps the flat read address into the input's memory, not the index per axis:
    # [[1,2,3],[4,5,6]] along axis 1, UINT32 index 3 gives [4, 6] (row 0 reads on into row 1),
    # 5 gives [6, 6] (the last element); ruling 2's per-axis clamp gave [3, 6]. Integer
    # arithmetic only, so not the stack's float conversion. dmlops follows it (E41).
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    for index, want in ((3, [4, 6]), (5, [6, 6]), (100, [6, 6])):
        i = np.array([index], np.uint32)
        np.testing.assert_array_equal(dmlops.gather(x, i, axis=1, backend="directml").ravel(), want)
        np.testing.assert_array_equal(dmlops.gather(x, i, axis=1).ravel(), want)
    desc = _gather_probe((2, 3), (2, 1), 1)
    for index, want in ((3, [4, 6]), (5, [6, 6]), (2**32 - 1, [6, 3])):  # 2^32 - 1 + 3 = 2 mod 2^32
        _agree(desc, x, index, want)


def test_gather_negative_and_wide_indices() -> None:
    # Signed indices wrap once (+n); an address still negative is taken modulo 2^32 (far past the
    # end: the last element). UINT64 / INT64 values of 2^32 and more wrap the 32-bit address.
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    for index_type in ("INT32", "INT64"):
        desc = _gather_probe((2, 3), (2, 1), 1, index_type)
        for index, want in ((-1, [3, 6]), (-3, [1, 4]), (-4, [6, 3]), (-6, [6, 1]), (-7, [6, 6]), (-(2**31), [6, 6])):
            _agree(desc, x, index, want)
    _agree(_gather_probe((2, 3), (2, 1), 1, "INT64"), x, 2**32 + 1, [2, 5])
    _agree(_gather_probe((2, 3), (2, 1), 1, "UINT64"), x, 2**32 + 1, [2, 5])
    # UINT64 is read as INT64: 2^63 and more are negative and wrap once (UINT32 never wraps)
    for index, want in (
        (2**63, [4, 6]),
        (2**63 + 1, [5, 6]),
        (2**64 - 1, [3, 6]),
        (2**64 - 4, [6, 3]),
        (2**63 - 1, [6, 3]),
    ):
        _agree(_gather_probe((2, 3), (2, 1), 1, "UINT64"), x, index, want)
    for index, want in ((2**31, [6, 6]), (2**32 - 1, [6, 3]), (2**32 - 3, [6, 1])):
        _agree(_gather_probe((2, 3), (2, 1), 1, "UINT32"), x, index, want)
    # Axis 0 (stride 3): 3 * 1431655765 = 2^32 - 1 (clamped), 3 * 1431655766 = 2^32 + 2
    _agree(_gather_probe((2, 3), (1, 3), 0), x, 1431655765, [6, 1, 2])
    _agree(_gather_probe((2, 3), (1, 3), 0), x, 1431655766, [3, 4, 5])


def test_gather_out_of_range_reads_the_bound_buffer() -> None:
    # What lies between or after the tensor's elements reads as the bound buffer holds it:
    # the caller's flat buffer, or zeros around the logical elements (directml/buffers.py).
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    gap = _gather_probe((2, 3), (2, 1), 1, strides=(4, 1))
    buf = np.array([1, 2, 3, 99, 4, 5, 6, 77], np.float32)
    for index, flat, logical in ((3, [99, 6], [0, 6]), (4, [4, 6], [4, 6]), (100, [6, 6], [6, 6])):
        _agree(gap, buf, index, flat)
        _agree(gap, x, index, logical)
    big = _gather_probe((2, 3), (2, 1), 1, total=40)
    flat10 = np.arange(1, 11, dtype=np.float32)
    for index, flat, logical in ((5, [6, 9], [6, 0]), (8, [9, 10], [0, 0]), (100, [10, 10], [0, 0])):
        _agree(big, flat10, index, flat)
        _agree(big, x, index, logical)
    # INT8 {1, 3}: the buffer is 4 bytes; index 3 and beyond read the fourth (its padding)
    i8 = _gather_probe((1, 3), (1, 1), 1, data_type="INT8")
    for index in (3, 4, 100):
        _agree(i8, np.array([[1, 2, 3]], np.int8), index, [0])
        _agree(i8, np.array([1, 2, 3, 9], np.int8), index, [9])
        _agree(i8, np.array([1, 2, 3, 9, 8, 7], np.int8), index, [9])  # the buffer is cut to 4 bytes
    # broadcast inputs (stride 0): the buffer is what the strides span
    row = np.array([1, 2, 3], np.float32)
    for index, want in ((1, [2, 2]), (3, [3, 3]), (100, [3, 3])):
        _agree(_gather_probe((2, 3), (2, 1), 1, strides=(0, 1)), row, index, want)
    _agree(_gather_probe((2, 3), (2, 1), 1, strides=(1, 0)), row[:2], 100, [1, 2])


def test_max_pooling2_nan() -> None:
    # DirectML's MAX_POOLING2 ignores NaN and starts from -FLT_MAX: a 1x1 window on NaN gives
    # -3.4028235e+38, a 2x2 window holding NaN and 1, 2, 3 gives 3 (erratum E26).
    y = np.array([np.nan, 1, 2, 3], np.float32).reshape(1, 1, 2, 2)
    for window in ([1, 1], [2, 2]):
        got = dmlops.max_pooling2(y, window_size=window, backend="directml")
        np.testing.assert_array_equal(got, dmlops.max_pooling2(y, window_size=window), err_msg=str(window))


def _pooling(grad: bool, w_in: int, w_out: int, stride: int, window: int, dilation: int) -> dmlops.OperatorDesc:
    spatial = {
        "Strides": [1, stride],
        "WindowSize": [1, window],
        "StartPadding": [0, 0],
        "EndPadding": [0, 0],
        "Dilations": [1, dilation],
    }
    x = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, w_in]}
    y = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, w_out]}
    if grad:
        desc = {"InputTensor": x, "InputGradientTensor": y, "OutputGradientTensor": x, **spatial}
        return dmlops.desc_from_json("DML_OPERATOR_MAX_POOLING_GRAD", desc)
    return dmlops.desc_from_json("DML_OPERATOR_MAX_POOLING2", {"InputTensor": x, "OutputTensor": y, **spatial})


def test_max_pooling_grad_ceil_size() -> None:
    # DirectML's MAX_POOLING_GRAD accepts only the floor-rounded size (input 5, window 2, dilation 2,
    # stride 3: width 1, not the ceil-rounded 2); probed over widths 1..12 for four window settings,
    # exactly one is accepted each time (erratum E27). dmlops agrees.
    create_operator(_pooling(True, 5, 1, 3, 2, 2))
    _pooling(True, 5, 1, 3, 2, 2).validate()
    desc = _pooling(True, 5, 2, 3, 2, 2)
    with pytest.raises(InvalidDescError):
        desc.validate()
    with pytest.raises(DirectMLRejectedDescError):
        create_operator(desc)


@pytest.mark.parametrize("width", range(1, 13))
def test_max_pooling2_any_output_size(width: int) -> None:
    # DirectML's MAX_POOLING2 CreateOperator accepts every output size (input 7, window 2, dilation 2,
    # stride 2: widths 1..12), and computes windows past the input as padding only (erratum E27).
    desc = _pooling(False, 7, width, 2, 2, 2)
    desc.validate()
    create_operator(desc)
    x = np.arange(7, dtype=np.float32).reshape(1, 1, 1, 7)
    np.testing.assert_array_equal(
        dmlops.execute(desc, {"InputTensor": x}, backend="directml")["OutputTensor"],
        dmlops.execute(desc, {"InputTensor": x})["OutputTensor"],
    )


# -- MAX_POOLING2: the sign of a zero maximum ------------------------------------------------------


def _signs(a: np.ndarray) -> list[str]:
    return ["-0" if np.signbit(v) else "+0" for v in np.ravel(a)]


def test_max_pooling2_sign_of_zero_depends_on_the_shader() -> None:
    # The same window elements [-0.0, +0.0] give +0.0 from a 1x2 window with stride 1 (also with
    # OutputIndicesTensor) and -0.0 from the first of three 1x2 windows with stride 2 and no
    # OutputIndicesTensor; [0, -0] with a padding column and no indices gives +0.0. Which of two equal
    # operands max() returns is left open by D3D (DirectML picks among shaders by desc and the driver
    # decides), so no rule of DirectML's to follow: dmlops keeps the selected element's bits (the
    # first zero, the one OutputIndicesTensor names). Index always 0 (the first).
    pair = np.array([-0.0, 0.0], np.float32).reshape(1, 1, 1, 2)
    assert _signs(dmlops.max_pooling2(pair, [1, 2], backend="directml")) == ["+0"]
    y, i = dmlops.max_pooling2(pair, [1, 2], return_indices=True, backend="directml")
    assert _signs(y) == ["+0"] and i.ravel().tolist() == [0]
    row = np.array([-0.0, 0.0, -1, -1, -0.0, 0.0], np.float32).reshape(1, 1, 1, 6)
    y = dmlops.max_pooling2(row, [1, 2], strides=[1, 2], backend="directml")
    assert _signs(y[..., [0, 2]]) == ["-0", "-0"]
    pad = np.array([0.0, -0.0], np.float32).reshape(1, 1, 1, 2)
    assert _signs(dmlops.max_pooling2(pad, [1, 3], end_padding=[0, 1], backend="directml")) == ["+0"]
    assert _signs(dmlops.max_pooling2(pad, [1, 2], backend="directml")) == ["-0"]
    # dmlops: the first zero's bits everywhere
    assert _signs(dmlops.max_pooling2(pair, [1, 2])) == ["-0"]


# -- MAX_POOLING2: zero Strides, WindowSize and Dilations -------------------------------------------


def _max_pooling2(in_sizes, out_sizes, strides, window, dilations, start=None, end=None, indices=True):
    k = len(window)
    desc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": list(in_sizes)},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": list(out_sizes)},
        "Strides": list(strides),
        "WindowSize": list(window),
        "StartPadding": list(start or [0] * k),
        "EndPadding": list(end or [0] * k),
        "Dilations": list(dilations),
    }
    if indices:
        desc["OutputIndicesTensor"] = {"DataType": "UINT32", "Sizes": list(out_sizes)}
    return dmlops.desc_from_json("DML_OPERATOR_MAX_POOLING2", desc)


ZERO_MEMBER_PROBES = {
    # 4x4 input [[0 7 14 5] [12 3 10 1] [8 15 6 13] [4 11 2 9]]
    "Dilations {0, 1}: the 1x2 windows' maxima": ((3, 3), (1, 1), (2, 2), (0, 1), None),
    "Dilations {0, 0}: the identity": ((4, 4), (1, 1), (2, 2), (0, 0), None),
    "Strides {0, 1}: every row the first window row": ((3, 3), (0, 1), (2, 2), (1, 1), None),
    "Strides {0, 0}: every output the first window": ((2, 2), (0, 0), (2, 2), (1, 1), None),
    "Strides {0, 1}, StartPadding 1": ((3, 3), (0, 1), (2, 2), (1, 1), (1, 1)),
    "WindowSize {0, 2}: empty, -FLT_MAX at index 0": ((3, 3), (1, 1), (0, 2), (1, 1), None),
    "Dilations {1, 0}: the H window reads only its first row": ((3, 3), (1, 1), (2, 2), (1, 0), (1, 0)),
    "WindowSize {2, 0}, Dilations {1, 0}: the identity": ((4, 4), (1, 1), (2, 0), (1, 0), None),
    "WindowSize {0, 1}, Dilations {1, 0}: empty": ((4, 4), (1, 1), (0, 1), (1, 0), None),
}


@pytest.mark.parametrize("probe", ZERO_MEMBER_PROBES, ids=str)
def test_max_pooling2_zero_members(probe: str) -> None:
    # DirectML's CreateOperator accepts 0 in Strides, WindowSize and Dilations; what it computes is
    # PoolingWindow.scanned() (docs: descs/pooling.py). dmlops accepts them and matches, values and
    # indices, on numpy and cpu.
    out, strides, window, dilations, start = ZERO_MEMBER_PROBES[probe]
    x = (np.arange(16, dtype=np.float32) * 7 % 16).reshape(1, 1, 4, 4)
    desc = _max_pooling2(x.shape, (1, 1, *out), strides, window, dilations, start=start)
    desc.validate()
    create_operator(desc)
    want = dmlops.execute(desc, {"InputTensor": x}, backend="directml")
    for backend in ("numpy", "cpu"):
        got = dmlops.execute(desc, {"InputTensor": x}, backend=backend)
        for member in want:
            np.testing.assert_array_equal(got[member], want[member], err_msg=f"{backend} {member}")


def test_max_pooling2_zero_members_random() -> None:
    # 120 seeded descs with 0s in Strides, WindowSize, Dilations (2 and 3 spatial dimensions, padding,
    # any output size, distinct values): DirectML and dmlops agree on every value and index (600 such
    # descs were run when the rule was found).
    rng = np.random.default_rng(2026)
    for _ in range(120):
        k = int(rng.integers(2, 4))
        nc = [1, int(rng.integers(1, 3))]
        spatial = [int(v) for v in rng.integers(1, 5, size=k)]
        arrays = [[int(v) for v in rng.integers(0, 3, size=k)] for _ in range(5)]
        out = nc + [int(v) for v in rng.integers(1, 6, size=k)]
        desc = _max_pooling2(nc + spatial, out, arrays[0], arrays[1], arrays[2], arrays[3], arrays[4])
        x = rng.permutation(int(np.prod(nc + spatial))).astype(np.float32).reshape(nc + spatial)
        want = dmlops.execute(desc, {"InputTensor": x}, backend="directml")
        got = dmlops.execute(desc, {"InputTensor": x})
        for member in want:
            np.testing.assert_array_equal(got[member], want[member], err_msg=f"{member} {desc}")


def _max_pooling_grad(in_sizes, dy_sizes, strides, window, dilations, start=None, end=None):
    k = len(window)
    x = {"DataType": "FLOAT32", "Sizes": list(in_sizes)}
    desc = {
        "InputTensor": x,
        "InputGradientTensor": {"DataType": "FLOAT32", "Sizes": list(dy_sizes)},
        "OutputGradientTensor": x,
        "Strides": list(strides),
        "WindowSize": list(window),
        "StartPadding": list(start or [0] * k),
        "EndPadding": list(end or [0] * k),
        "Dilations": list(dilations),
    }
    return dmlops.desc_from_json("DML_OPERATOR_MAX_POOLING_GRAD", desc)


@pytest.mark.parametrize(
    "arrays",
    [((0, 1), (2, 2), (1, 1)), ((1, 0), (2, 2), (1, 1)), ((1, 1), (0, 2), (1, 1)), ((1, 1), (2, 0), (1, 1)),
     ((1, 1), (2, 2), (0, 1)), ((1, 1), (2, 2), (1, 0))],
    ids=str,
)  # fmt: skip
def test_max_pooling_grad_rejects_zero_members(arrays) -> None:
    # DirectML's MAX_POOLING_GRAD rejects a 0 in Strides, WindowSize or Dilations for every
    # InputGradientTensor size 1..6 x 1..6 (also with padding 1 on both sides); dmlops agrees.
    strides, window, dilations = arrays
    for h in range(1, 7):
        for w in range(1, 7):
            desc = _max_pooling_grad((1, 1, 4, 4), (1, 1, h, w), strides, window, dilations)
            with pytest.raises(DirectMLRejectedDescError):
                create_operator(desc)
            with pytest.raises(InvalidDescError, match=r"must be >= 1"):
                desc.validate()


def test_max_pooling_grad_dimension_count_3_on_4d_tensors_is_incoherent() -> None:
    # DirectML's CreateOperator accepts MAX_POOLING_GRAD with three window entries on 4-D tensors
    # (MAX_POOLING2 rejects it); its size check reads the first two entries (WindowSize {1, 2, 2},
    # input 5x6: only InputGradient 5x5, the size of window {1, 2}). What it computes is neither
    # reading: with all windows inside the input, gradient is lost (of 1224 sent, 764 arrive) and
    # the destinations match neither WindowSize {1, 2} nor {2, 2}. dmlops keeps rejecting it.
    rng = np.random.default_rng(1)
    x = rng.permutation(30).astype(np.float32).reshape(1, 1, 5, 6)
    dy = rng.integers(1, 100, size=(1, 1, 5, 5)).astype(np.float32)
    desc = _max_pooling_grad((1, 1, 5, 6), (1, 1, 5, 5), (1, 1, 1), (1, 2, 2), (1, 1, 1))
    create_operator(desc)
    with pytest.raises(InvalidDescError, match=r"DimensionCount: must equal InputTensor.DimensionCount - 2"):
        desc.validate()
    got = run(desc, {"InputTensor": x, "InputGradientTensor": dy}, None,
                              feature_level=FeatureLevel.V6_4)["OutputGradientTensor"]  # fmt: skip
    assert got.sum() == 764 and dy.sum() == 1224
    first = _max_pooling_grad((1, 1, 5, 6), (1, 1, 5, 5), (1, 1), (1, 2), (1, 1))  # the size check's reading
    dx = dmlops.execute(first, {"InputTensor": x, "InputGradientTensor": dy})["OutputGradientTensor"]
    assert dx.sum() == dy.sum() and not np.array_equal(dx, got)
    for window in ((1, 2, 2), (2, 2, 1)):  # MAX_POOLING2 rejects three entries on 4-D tensors
        with pytest.raises(DirectMLRejectedDescError):
            create_operator(_max_pooling2((1, 1, 4, 4), (1, 1, 3, 3), (1, 1, 1), window, (1, 1, 1), indices=False))


# -- GATHER: the output-size rule -------------------------------------------------------------------


def _gather(i, j, o, axis, index_dimensions):
    return dmlops.desc_from_json(
        "DML_OPERATOR_GATHER",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": list(i)},
            "IndicesTensor": {"DataType": "UINT32", "Sizes": list(j)},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": list(o)},
            "Axis": axis,
            "IndexDimensions": index_dimensions,
        },
    )


def _accepts(desc) -> bool:
    try:
        create_operator(desc)
    except DirectMLRejectedDescError:
        return False
    return True


def _validates(desc) -> bool:
    try:
        desc.validate()
    except InvalidDescError:
        return False
    return True


def test_gather_output_size_rule() -> None:
    # DirectML's rule, found over every desc with 1..3 dimensions, sizes 1..2, indices whose leading
    # D - IndexDimensions sizes are 1, and output sizes 1..3 (10242 descs): the last min(D, len(full))
    # output sizes must equal the last ones of full = Input[0:Axis] ++ Indices[D-IndexDimensions:D] ++
    # Input[Axis+1:D]. Dropped leading entries may be anything (dmlops follows: the first slab); with
    # IndexDimensions 0, OutputTensor.Sizes[0] is free (dmlops follows: the extra slabs read as E41
    # says, see the test below). Here the 2-D part of that sweep.
    for i in itertools.product((1, 2), repeat=2):
        for index_dimensions in range(3):
            for tail in itertools.product((1, 2), repeat=index_dimensions):
                j = (1,) * (2 - index_dimensions) + tail
                for axis in range(2):
                    full = (*i[:axis], *j[2 - index_dimensions :], *i[axis + 1 :])
                    for o in itertools.product((1, 2, 3), repeat=2):
                        desc = _gather(i, j, o, axis, index_dimensions)
                        k = min(2, len(full))
                        assert _accepts(desc) == (o[2 - k :] == full[len(full) - k :]), desc
                        assert _validates(desc) == _accepts(desc), desc


def test_gather_dropped_leading_entries_read_the_first_slab() -> None:
    # Input {2, 3}, Indices {2, 2}, Axis 1, IndexDimensions 2: full {2, 2, 2}, Output {2, 2} = the
    # slab of Input row 0 ([[1, 2], [3, 2]] for indices [[0, 1], [2, 1]]); 300 seeded descs with 2..4
    # dimensions and entries dropped from the input, the indices or both agreed on numpy and cpu.
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    indices = np.array([[0, 1], [2, 1]], np.uint32)
    desc = _gather((2, 3), (2, 2), (2, 2), 1, 2)
    for backend in ("directml", "numpy", "cpu"):
        got = dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": indices}, backend=backend)["OutputTensor"]
        np.testing.assert_array_equal(got, [[1, 2], [3, 2]], err_msg=backend)
    rng = np.random.default_rng(0)
    done = 0
    while done < 40:
        d = int(rng.integers(2, 5))
        index_dimensions, axis = int(rng.integers(2, d + 1)), int(rng.integers(0, d))
        i = tuple(int(v) for v in rng.integers(1, 4, size=d))
        j = (1,) * (d - index_dimensions) + tuple(int(v) for v in rng.integers(1, 4, size=index_dimensions))
        full = (*i[:axis], *j[d - index_dimensions :], *i[axis + 1 :])
        if all(s == 1 for s in full[: len(full) - d]):
            continue
        desc = _gather(i, j, full[len(full) - d :], axis, index_dimensions)
        x = np.arange(1, np.prod(i) + 1, dtype=np.float32).reshape(i)
        indices = rng.integers(0, i[axis], size=j).astype(np.uint32)
        want = dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": indices}, backend="directml")
        got = dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": indices}, backend="cpu")
        np.testing.assert_array_equal(got["OutputTensor"], want["OutputTensor"], err_msg=str(desc))
        done += 1


def test_gather_index_dimensions_0_extra_slabs_read_past_the_input() -> None:
    # With IndexDimensions 0, DirectML accepts any OutputTensor.Sizes[0]; slab 0 is the gather and
    # slab o reads o * (element count) further when InputTensor.Strides is NULL: past the input,
    # clamped to its last element (Input {2, 3}, Axis 1, index 1, Output {3, 2}: [[2, 5], [6, 6],
    # [6, 6]]), or the buffer's further elements with a larger TotalTensorSizeInBytes; with
    # explicit Strides (even packed ones) every slab reads slab 0's elements. dmlops follows (E41).
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    desc = _gather((2, 3), (1, 1), (3, 2), 1, 0)
    got = run(desc, {"InputTensor": x, "IndicesTensor": np.array([[1]], np.uint32)}, None,
                              feature_level=FeatureLevel.V6_4)["OutputTensor"]  # fmt: skip
    np.testing.assert_array_equal(got, [[2, 5], [6, 6], [6, 6]])
    desc.validate()
    _agree(_gather_probe((2, 3), (3, 2), 1, k=0), x, 1, [2, 5, 6, 6, 6, 6])
    _agree(_gather_probe((2, 3), (3, 2), 1, strides=(3, 1), k=0), x, 1, [2, 5] * 3)
    buf = np.arange(1, 4001, dtype=np.float32)
    _agree(_gather_probe((4, 3), (3, 4), 1, total=16000, k=0), buf, 0, np.arange(1, 36, 3))
    _agree(_gather_probe((2, 3, 4), (5, 2, 3), 2, total=16000, k=0), buf, 1, np.arange(2, 120, 4))
    _agree(_gather_probe((4, 3), (3, 4), 1, strides=(4, 1), total=16000, k=0), buf, 0, [1, 5, 9, 13] * 3)
    _agree(_gather_probe((4,), (3,), 0, k=0), np.arange(1, 5, dtype=np.float32), 1, [2, 4, 4])


def test_gather_crashing_desc_stays_rejected() -> None:
    # DirectML's CreateOperator kills the host on this desc (IndicesTensor.Sizes[0] = 3 before the
    # last IndexDimensions): dmlops rejects it, and it is not sent to DirectML here.
    desc = _gather((1, 1, 1, 2), (3, 1, 1, 1), (1, 1, 1, 1), 3, 1)
    with pytest.raises(InvalidDescError, match=r"IndicesTensor.Sizes\[0\]"):
        desc.validate()
