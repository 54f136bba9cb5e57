"""The indexing operators on numpy against independent oracles, and their functional API.

Scalar-loop oracles written from the DirectML pages (one element at a time, Python
ints, no dmlops helper), PyTorch and ``onnx.reference`` where an equivalent operator
exists (``oracles`` mark), the errata the reference follows (E160-E165), and the
functional wrappers of ``dmlops.ops.data_movement``. The page examples are vectors
(tests/vectors/<op>/, run by tests/test_vectors.py).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import dmlops
from dmlops.descs import desc_from_json
from dmlops.errors import DataIndexError
from dmlops.ops.data_movement import (
    diagonal_matrix,
    diagonal_matrix1,
    gather_elements,
    gather_nd,
    gather_nd1,
    nonzero_coordinates,
    one_hot,
    reverse_subsequences,
    scatter_elements,
    scatter_nd,
)

SEEDS = range(12)


def _t(dtype: str, sizes: Any) -> dict[str, Any]:
    return {"DataType": dtype, "Sizes": [int(s) for s in sizes]}


def run(op: str, desc: dict[str, Any], inputs: dict[str, np.ndarray], **kw: Any) -> dict[str, np.ndarray]:
    return dmlops.execute(desc_from_json(op, desc), inputs, backend="numpy", **kw)


def rng_of(name: str, seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, *name.encode()])


# -- scalar-loop oracles (from the pages) -------------------------------------------------


def oracle_gather_elements(x: np.ndarray, idx: np.ndarray, axis: int) -> np.ndarray:
    out = np.empty(idx.shape, x.dtype)
    for o in itertools.product(*map(range, idx.shape)):
        i = int(idx[o])
        i = i + x.shape[axis] if i < 0 else i
        out[o] = x[(*o[:axis], i, *o[axis + 1 :])]
    return out


def oracle_scatter_elements(x: np.ndarray, idx: np.ndarray, upd: np.ndarray, axis: int) -> np.ndarray:
    out = x.copy()
    for u in itertools.product(*map(range, idx.shape)):
        i = int(idx[u])
        i = i + x.shape[axis] if i < 0 else i
        out[(*u[:axis], i, *u[axis + 1 :])] = upd[u]
    return out


def oracle_gather_nd(x: np.ndarray, idx: np.ndarray, batch: int) -> np.ndarray:
    """``x`` and ``idx`` meaningful (no leading 1s); each tuple indexes within its batch."""
    k = idx.shape[-1]
    rows = []
    for pos in itertools.product(*map(range, idx.shape[:-1])):
        b = pos[:batch]
        t = tuple(int(v) + x.shape[batch + j] if int(v) < 0 else int(v) for j, v in enumerate(idx[pos]))
        rows.append(x[b + t])
    return np.array(rows, dtype=x.dtype).reshape(idx.shape[:-1] + x.shape[batch + k :])


def oracle_one_hot(idx: np.ndarray, off: Any, on: Any, depth: int, axis: int, dtype: Any) -> np.ndarray:
    shape = list(idx.shape)
    shape[axis] = depth
    out = np.full(shape, off, dtype)
    for o in itertools.product(*map(range, shape)):
        i = int(idx[(*o[:axis], 0, *o[axis + 1 :])])
        if -depth <= i < depth and o[axis] == (i + depth) % depth:
            out[o] = on
    return out


def oracle_reverse(x: np.ndarray, lengths: np.ndarray, axis: int) -> np.ndarray:
    out = np.empty_like(x)
    n = x.shape[axis]
    for o in itertools.product(*map(range, x.shape)):
        length = min(int(lengths[(*o[:axis], 0, *o[axis + 1 :])]), n)  # the page: clamped
        i = o[axis]
        src = length - 1 - i if i < length else i
        out[o] = x[(*o[:axis], src, *o[axis + 1 :])]
    return out


def oracle_diagonal1(shape: tuple[int, ...], value: Any, begin: int, end: int, x: np.ndarray | None) -> np.ndarray:
    out = np.zeros(shape, np.float32) if x is None else x.copy()
    for o in itertools.product(*map(range, shape)):
        top_x = o[-1] - o[-2]
        if (end >= begin) ^ (top_x >= begin) ^ (top_x < end):
            out[o] = value
    return out


# -- the reference against the oracles ----------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_gather_and_scatter_elements_match_loops(seed: int) -> None:
    rng = rng_of("elements", seed)
    rank = int(rng.integers(1, 5))
    sizes = [int(s) for s in rng.integers(1, 5, rank)]
    axis = int(rng.integers(rank))
    n = sizes[axis]
    x = rng.normal(size=sizes).astype(np.float32)
    isz = list(sizes)
    isz[axis] = int(rng.integers(1, n + 1))
    idx = rng.integers(-n, n, isz).astype(np.int32)
    desc = {"InputTensor": _t("FLOAT32", sizes), "IndicesTensor": _t("INT32", isz), "Axis": axis}
    got = run("GATHER_ELEMENTS", desc | {"OutputTensor": _t("FLOAT32", isz)}, {"InputTensor": x, "IndicesTensor": idx})
    np.testing.assert_array_equal(got["OutputTensor"], oracle_gather_elements(x, idx, axis))
    # distinct targets per line along Axis: the scatter's result is defined
    lines = np.moveaxis(np.zeros(isz, np.int64), axis, -1)
    flat = lines.reshape(-1, isz[axis])
    for row in flat:
        row[:] = rng.permutation(n)[: isz[axis]]
    idx = np.moveaxis(flat.reshape(lines.shape), -1, axis).astype(np.int64)
    idx = np.where(rng.random(isz) < 0.5, idx - n, idx)
    upd = rng.normal(size=isz).astype(np.float32)
    sdesc = desc | {"IndicesTensor": _t("INT64", isz), "UpdatesTensor": _t("FLOAT32", isz)}
    sdesc["OutputTensor"] = _t("FLOAT32", sizes)
    got = run("SCATTER_ELEMENTS", sdesc, {"InputTensor": x, "IndicesTensor": idx, "UpdatesTensor": upd})
    np.testing.assert_array_equal(got["OutputTensor"], oracle_scatter_elements(x, idx, upd, axis))


@pytest.mark.parametrize("seed", SEEDS)
def test_gather_nd1_matches_loop(seed: int) -> None:
    rng = rng_of("nd", seed)
    r = int(rng.integers(1, 4))
    meaningful = [int(s) for s in rng.integers(1, 4, r)]
    batch = int(rng.integers(0, r))
    k = int(rng.integers(1, r - batch + 1))
    grid = meaningful[:batch] + [int(s) for s in rng.integers(1, 4, int(rng.integers(0, 2)))]
    idx = np.stack([rng.integers(-meaningful[batch + t], meaningful[batch + t], grid) for t in range(k)], -1)
    x = rng.integers(-100, 100, meaningful).astype(np.int32)
    want = oracle_gather_nd(x, idx, batch)
    d = max(r, idx.ndim, want.ndim)
    pad = lambda s: [1] * (d - len(s)) + list(s)  # noqa: E731
    desc = {
        "InputTensor": _t("INT32", pad(x.shape)),
        "IndicesTensor": _t("INT64", pad(idx.shape)),
        "OutputTensor": _t("INT32", pad(want.shape)),
        "InputDimensionCount": r,
        "IndicesDimensionCount": idx.ndim,
        "BatchDimensionCount": batch,
    }
    inputs = {"InputTensor": x.reshape(pad(x.shape)), "IndicesTensor": idx.reshape(pad(idx.shape))}
    got = run("GATHER_ND1", desc, inputs)["OutputTensor"]
    np.testing.assert_array_equal(got.reshape(want.shape), want)


@pytest.mark.parametrize("seed", SEEDS)
def test_one_hot_matches_loop(seed: int) -> None:
    rng = rng_of("one_hot", seed)
    rank = int(rng.integers(1, 5))
    sizes = [int(s) for s in rng.integers(1, 5, rank)]
    axis = int(rng.integers(rank))
    depth = sizes[axis]
    isz = list(sizes)
    isz[axis] = 1
    idx = rng.integers(-depth - 2, depth + 2, isz).astype(np.int32)  # some outside: all OffValue
    values = np.array([-3, 5], np.int8).reshape([1] * (rank - 1) + [2])
    desc = {"IndicesTensor": _t("INT32", isz), "ValuesTensor": _t("INT8", values.shape)}
    desc |= {"OutputTensor": _t("INT8", sizes), "Axis": axis}
    got = run("ONE_HOT", desc, {"IndicesTensor": idx, "ValuesTensor": values})["OutputTensor"]
    np.testing.assert_array_equal(got, oracle_one_hot(idx, -3, 5, depth, axis, np.int8))


@pytest.mark.parametrize("seed", SEEDS)
def test_reverse_subsequences_matches_loop_within_the_axis(seed: int) -> None:
    rng = rng_of("reverse", seed)
    rank = int(rng.integers(1, 5))
    sizes = [int(s) for s in rng.integers(1, 6, rank)]
    axis = int(rng.integers(rank))
    lsz = list(sizes)
    lsz[axis] = 1
    lengths = rng.integers(0, sizes[axis] + 1, lsz).astype(np.uint32)  # the page's range: no E162
    x = rng.normal(size=sizes).astype(np.float64)
    desc = {"InputTensor": _t("FLOAT64", sizes), "SequenceLengthsTensor": _t("UINT32", lsz)}
    desc |= {"OutputTensor": _t("FLOAT64", sizes), "Axis": axis}
    got = run("REVERSE_SUBSEQUENCES", desc, {"InputTensor": x, "SequenceLengthsTensor": lengths})["OutputTensor"]
    np.testing.assert_array_equal(got, oracle_reverse(x, lengths, axis))


@pytest.mark.parametrize("seed", SEEDS)
def test_diagonal_matrix1_matches_the_pages_pseudocode(seed: int) -> None:
    rng = rng_of("diagonal", seed)
    sizes = tuple(int(s) for s in rng.integers(1, 6, int(rng.integers(2, 5))))
    begin, end = (int(v) for v in rng.integers(-6, 7, 2))
    x = rng.normal(size=sizes).astype(np.float32) if seed % 2 else None
    desc = {"OutputTensor": _t("FLOAT32", sizes), "ValueDataType": "FLOAT32", "Value": 2.5}
    desc |= {"DiagonalFillBegin": begin, "DiagonalFillEnd": end}
    inputs = {}
    if x is not None:
        desc["InputTensor"] = _t("FLOAT32", sizes)
        inputs["InputTensor"] = x
    got = run("DIAGONAL_MATRIX1", desc, inputs)["OutputTensor"]
    np.testing.assert_array_equal(got, oracle_diagonal1(sizes, 2.5, begin, end, x))
    # DIAGONAL_MATRIX is DIAGONAL_MATRIX1 with [Offset, Offset + 1) (the page's remark)
    dm = run("DIAGONAL_MATRIX", {"OutputTensor": _t("FLOAT32", sizes), "Offset": begin, "Value": 2.5}, {})
    np.testing.assert_array_equal(dm["OutputTensor"], oracle_diagonal1(sizes, 2.5, begin, begin + 1, None))


@pytest.mark.parametrize("seed", SEEDS)
def test_nonzero_coordinates_count_and_order(seed: int) -> None:
    rng = rng_of("nonzero", seed)
    sizes = [int(s) for s in rng.integers(1, 5, int(rng.integers(1, 5)))]
    x = np.where(rng.random(sizes) < 0.5, 0.0, rng.normal(size=sizes)).astype(np.float32)
    x[rng.random(sizes) < 0.1] = -0.0
    x[rng.random(sizes) < 0.05] = np.nan
    want = [o for o in itertools.product(*map(range, sizes)) if not x[o] == 0]  # NaN is nonzero
    m, n = x.size, len(sizes)
    desc = {"InputTensor": _t("FLOAT32", sizes), "OutputCountTensor": _t("UINT32", [1])}
    desc["OutputCoordinatesTensor"] = _t("UINT32", [m, n])
    got = run("NONZERO_COORDINATES", desc, {"InputTensor": x})
    assert int(got["OutputCountTensor"][0]) == len(want)
    np.testing.assert_array_equal(got["OutputCoordinatesTensor"][: len(want)], np.array(want, np.uint32).reshape(-1, n))


# -- DirectML's behaviour where the pages differ or are silent (errata) ---------------------


def test_reverse_subsequences_length_past_the_axis_clamps_the_source_e162() -> None:
    x = np.arange(1, 4, dtype=np.int32)
    for length, want in ((3, [3, 2, 1]), (4, [3, 3, 2]), (5, [3, 3, 3]), (2**32 - 1, [3, 3, 3])):
        desc = {"InputTensor": _t("INT32", [3]), "SequenceLengthsTensor": _t("UINT32", [1])}
        desc |= {"OutputTensor": _t("INT32", [3]), "Axis": 0}
        lengths = np.array([length], np.uint32)
        got = run("REVERSE_SUBSEQUENCES", desc, {"InputTensor": x, "SequenceLengthsTensor": lengths})
        assert got["OutputTensor"].tolist() == want, length


def test_one_hot_int64_compares_low_32_bits_e161() -> None:
    idx = np.array([[-1], [2**32 + 1], [2**32 - 1], [-5]], np.int64)
    desc = {"IndicesTensor": _t("INT64", [4, 1]), "ValuesTensor": _t("FLOAT32", [1, 2])}
    desc |= {"OutputTensor": _t("FLOAT32", [4, 4]), "Axis": 1}
    got = run("ONE_HOT", desc, {"IndicesTensor": idx, "ValuesTensor": np.array([[0, 1]], np.float32)})
    assert got["OutputTensor"].argmax(1).tolist() == [3, 1, 0, 0]
    assert got["OutputTensor"].sum(1).tolist() == [1, 1, 0, 0]


def test_gather_nd_reads_out_of_range_through_the_flat_clamp_e160() -> None:
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    idx = np.array([[0, 5], [3, 0], [-4, -5], [2, -4]], np.int32)
    desc = {"InputTensor": _t("FLOAT32", [3, 4]), "IndicesTensor": _t("INT32", [4, 2])}
    desc |= {"OutputTensor": _t("FLOAT32", [1, 4]), "InputDimensionCount": 2, "IndicesDimensionCount": 2}
    got = run("GATHER_ND", desc, {"InputTensor": x, "IndicesTensor": idx})["OutputTensor"]
    assert got.tolist() == [[6, 12, 12, 9]]  # probed on DirectML 1.15.4
    with pytest.raises(DataIndexError, match="IndicesTensor"):
        run("GATHER_ND", desc, {"InputTensor": x, "IndicesTensor": idx}, strict=True)
    with pytest.raises(DataIndexError, match="reads an unspecified"):
        desc8 = desc | {"InputTensor": _t("INT8", [3, 4]), "OutputTensor": _t("INT8", [1, 4])}
        run("GATHER_ND", desc8, {"InputTensor": x.astype(np.int8), "IndicesTensor": idx})


def test_scatters_refuse_out_of_range_and_strict_duplicates_e163() -> None:
    x = np.zeros(4, np.float32)
    desc = {"InputTensor": _t("FLOAT32", [4]), "IndicesTensor": _t("INT32", [2]), "UpdatesTensor": _t("FLOAT32", [2])}
    desc |= {"OutputTensor": _t("FLOAT32", [4]), "Axis": 0}
    upd = np.array([1, 2], np.float32)
    with pytest.raises(DataIndexError, match="undefined"):
        run(
            "SCATTER_ELEMENTS",
            desc,
            {"InputTensor": x, "IndicesTensor": np.array([0, 4], np.int32), "UpdatesTensor": upd},
        )
    dup = {"InputTensor": x, "IndicesTensor": np.array([1, -3], np.int32), "UpdatesTensor": upd}
    assert run("SCATTER_ELEMENTS", desc, dup)["OutputTensor"].tolist() == [0, 2, 0, 0]  # the last wins
    with pytest.raises(DataIndexError, match="several updates"):
        run("SCATTER_ELEMENTS", desc, dup, strict=True)


def test_scatter_nd_updates_of_more_dimensions_write_one_slab_e165() -> None:
    desc = {
        "InputTensor": _t("FLOAT32", [2, 1, 1, 3]),
        "IndicesTensor": _t("INT32", [2, 1, 1]),
        "UpdatesTensor": _t("FLOAT32", [2, 1, 1, 1, 3]),
        "OutputTensor": _t("FLOAT32", [2, 1, 1, 3]),
        "InputDimensionCount": 4,
        "IndicesDimensionCount": 3,
    }
    inputs = {
        "InputTensor": np.zeros((2, 1, 1, 3), np.float32),
        "IndicesTensor": np.array([1, 0], np.int32).reshape(2, 1, 1),
        "UpdatesTensor": np.arange(1, 7, dtype=np.float32).reshape(2, 1, 1, 1, 3),
    }
    assert run("SCATTER_ND", desc, inputs)["OutputTensor"].ravel().tolist() == [0, 0, 0, 1, 2, 3]  # as DirectML


def test_diagonal_matrix_float_value_into_integers_wraps() -> None:
    got = diagonal_matrix([2, 2], value=200.7, dtype=np.int8)
    assert got.tolist() == [[-56, 0], [0, -56]]


# -- PyTorch and onnx.reference -------------------------------------------------------------


@pytest.mark.oracles
@pytest.mark.parametrize("seed", SEEDS)
def test_elements_match_torch(seed: int) -> None:
    torch = pytest.importorskip("torch")
    rng = rng_of("torch", seed)
    sizes = [int(s) for s in rng.integers(1, 5, 3)]
    axis = int(rng.integers(3))
    x = rng.normal(size=sizes).astype(np.float32)
    idx = rng.integers(0, sizes[axis], sizes).astype(np.int64)
    want = torch.gather(torch.from_numpy(x), axis, torch.from_numpy(idx)).numpy()
    np.testing.assert_array_equal(gather_elements(x, idx, axis=axis), want)
    perm = np.argsort(rng.random(sizes), axis=axis)  # a permutation per line: distinct targets
    upd = rng.normal(size=sizes).astype(np.float32)
    want = torch.from_numpy(x.copy()).scatter(axis, torch.from_numpy(perm), torch.from_numpy(upd)).numpy()
    np.testing.assert_array_equal(scatter_elements(x, perm, upd, axis=axis), want)


@pytest.mark.oracles
@pytest.mark.parametrize("seed", SEEDS)
def test_nd_one_hot_reverse_match_onnx_reference(seed: int) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    def onnx_run(op: str, inputs: dict[str, np.ndarray], **attrs: Any) -> np.ndarray:
        node = helper.make_node(op, list(inputs), ["y"], **attrs)
        graph = helper.make_graph(
            [node],
            "g",
            [
                helper.make_tensor_value_info(k, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                for k, v in inputs.items()
            ],
            [helper.make_tensor_value_info("y", onnx.TensorProto.UNDEFINED, None)],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        return ReferenceEvaluator(model).run(None, inputs)[0]  # type: ignore[no-any-return]

    rng = rng_of("onnx", seed)
    x = rng.normal(size=(3, 4, 2)).astype(np.float32)
    batch = seed % 2
    k = int(rng.integers(1, 3 - batch))
    grid = [3] if batch else [int(rng.integers(1, 4))]
    idx = np.stack([rng.integers(0, x.shape[batch + t], grid) for t in range(k)], -1).astype(np.int64)
    want = onnx_run("GatherND", {"x": x, "i": idx}, batch_dims=batch)
    np.testing.assert_array_equal(gather_nd1(x, idx, batch_dimension_count=batch), want)
    # ScatterND: distinct tuples
    slots = rng.permutation(12)[: int(rng.integers(1, 6))]
    tuples = np.stack(np.unravel_index(slots, (3, 4)), -1).astype(np.int64)
    upd = rng.normal(size=(len(slots), 2)).astype(np.float32)
    np.testing.assert_array_equal(scatter_nd(x, tuples, upd), onnx_run("ScatterND", {"x": x, "i": tuples, "u": upd}))
    # OneHot (axis -1 of ONNX is the last: dmlops keeps the axis with size 1)
    hot = rng.integers(-4, 4, (5,)).astype(np.int64)
    values = np.array([0.5, -2.0], np.float32)
    want = onnx_run("OneHot", {"i": hot, "d": np.array(4, np.int64), "v": values})
    np.testing.assert_array_equal(one_hot(hot.reshape(5, 1), values.reshape(1, 2), 4, axis=1), want)
    # ReverseSequence (batch axis 0, time axis 1), lengths within the axis
    lens = rng.integers(1, 5, (3,)).astype(np.int64)
    want = onnx_run("ReverseSequence", {"x": x, "l": lens}, batch_axis=0, time_axis=1)
    lengths = np.broadcast_to(lens.astype(np.uint32).reshape(3, 1, 1), (3, 1, 2))
    np.testing.assert_array_equal(reverse_subsequences(x, lengths, axis=1), want)


@pytest.mark.oracles
@pytest.mark.parametrize("seed", SEEDS)
def test_diagonals_and_nonzero_match_numpy_and_torch(seed: int) -> None:
    torch = pytest.importorskip("torch")
    rng = rng_of("triangle", seed)
    shape = [int(s) for s in rng.integers(1, 6, 3)]
    x = rng.normal(size=shape).astype(np.float32)
    k = int(rng.integers(-3, 4))
    # triu(x, k): x kept from diagonal k on, 0 below: the fill [INT32_MIN, k) with Value 0
    got = diagonal_matrix1(shape, value=0, diagonal_fill_begin=-(2**31), diagonal_fill_end=k, x=x)
    np.testing.assert_array_equal(got, torch.triu(torch.from_numpy(x), k).numpy())
    eye = np.stack([np.eye(shape[1], shape[2], k, dtype=np.float32)] * shape[0])
    np.testing.assert_array_equal(diagonal_matrix(shape, offset=k), eye)
    x[rng.random(shape) < 0.5] = 0
    np.testing.assert_array_equal(nonzero_coordinates(x), np.argwhere(x).astype(np.uint32))


def test_gather_nd_functional_shapes() -> None:
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    assert gather_nd(x, np.array([[1, 2], [0, 0]], np.uint32)).tolist() == [[20, 21, 22, 23], [0, 1, 2, 3]]
    assert gather_nd(x, np.array([1, 2, 3], np.uint32)).tolist() == 23
