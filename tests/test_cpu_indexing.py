"""The indexing operators on the cpu backend, against the NumPy reference computed live.

Seeded random cases per operator: every data type the desc accepts (random bits, so
FLOAT16/32/64 NaN payloads and signed zeros too), every index type, negative indices,
indices out of range (the reference's DataIndexError, message included, or DirectML's
flat clamp read), duplicate scatter targets (the last row-major update wins), strict
mode, strided, reversed and broadcast input views, flat buffers addressed through
Strides, and strided preallocated outputs. Results compare bit for bit. Large cases run
the kernels over several threads.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dmlops
from conftest import backend_params, to_numpy
from dmlops.descs import desc_from_json
from dmlops.enums import TensorDataType
from dmlops.errors import DataIndexError, InvalidDescError, UnsupportedError

pytestmark = pytest.mark.cpu_backend
pytest.importorskip("numba")

CPU_CUDA = backend_params("cpu", "cuda")

DATA_TYPES = "FLOAT32 FLOAT16 FLOAT64 INT8 INT16 INT32 INT64 UINT8 UINT16 UINT32 UINT64".split()
BASE_TYPES = "FLOAT32 FLOAT16 INT8 INT16 INT32 UINT8 UINT16 UINT32".split()
"""Every indexing operator's support rows accept these; the 64-bit types where the desc validates."""
INDEX_TYPES = "INT32 INT64 UINT32 UINT64".split()
SEEDS = range(40)
LAYOUTS = ("plain", "strided", "reversed", "broadcast")


def _dtype(name: str) -> np.dtype[Any]:
    return np.dtype(TensorDataType.from_any(name).numpy_dtype)


def _t(dtype: str, sizes: Any) -> dict[str, Any]:
    return {"DataType": dtype, "Sizes": [int(s) for s in sizes]}


def rng_of(name: str, seed: int) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(f"{name}{seed}".encode()))


def random_bits(rng: np.random.Generator, dtype: np.dtype[Any], shape: Any) -> np.ndarray:
    """Any bit pattern (NaNs with payloads, infinities, signed zeros, subnormals); a third of them zero."""
    bits = rng.integers(0, 256, (*shape, dtype.itemsize), dtype=np.uint8)
    bits[rng.random(tuple(shape)) < 0.3] = 0
    return bits.view(dtype).reshape(shape)


def laid_out(rng: np.random.Generator, a: np.ndarray, layout: str) -> np.ndarray:
    """``a``'s values as a view of another layout (same logical array, except "broadcast": its first slab)."""
    if layout == "strided":  # every other element of a larger array on each axis
        big = np.zeros(tuple(2 * s for s in a.shape), a.dtype)
        view = big[tuple(slice(None, None, 2) for _ in a.shape)]
        view[...] = a
        return view
    if layout == "reversed":  # negative strides, and Fortran order
        return np.asfortranarray(a[tuple(slice(None, None, -1) for _ in a.shape)])[
            tuple(slice(None, None, -1) for _ in a.shape)
        ]
    if layout == "broadcast" and a.ndim and a.shape[0] > 1:  # a stride of 0
        return np.broadcast_to(a[:1], a.shape)
    return a


def strided_output(shape: tuple[int, ...], dtype: np.dtype[Any], rng: np.random.Generator, device: bool = False) -> Any:
    """A writeable view with gaps and a negative stride, filled with garbage (a CuPy view with ``device``)."""
    big = random_bits(rng, dtype, tuple(2 * s + 1 for s in shape))
    if device:
        import cupy

        big = cupy.asarray(big)
    return big[tuple(slice(2 * s - 1, None, -2) if s else slice(0, 0) for s in shape)]


def make(op: str, desc: dict[str, Any]) -> Any | None:
    """The validated desc, or None where it does not validate (a data type the operator refuses)."""
    try:
        d = desc_from_json(op, desc)
        d.validate()
    except (InvalidDescError, UnsupportedError):
        return None
    return d


def compare(
    desc: Any,
    inputs: dict[str, np.ndarray],
    rng: np.random.Generator,
    *,
    strict: bool = False,
    out: str = "",
    backend: str = "cpu",
) -> str:
    """Run numpy and ``backend``; assert the same results bit for bit, or the same DataIndexError."""
    try:
        want = dmlops.execute(desc, inputs, backend="numpy", strict=strict)
    except DataIndexError as exc:
        with pytest.raises(DataIndexError) as got:
            dmlops.execute(desc, inputs, backend=backend, strict=strict)
        assert str(got.value) == str(exc)
        return "error"
    outputs = None
    if out == "strided":
        outputs = {m: strided_output(a.shape, a.dtype, rng, device=backend == "cuda") for m, a in want.items()}
    got = dmlops.execute(desc, inputs, backend=backend, strict=strict, outputs=outputs)
    for member, expected in want.items():
        result = got[member]
        if outputs is not None:
            assert result is outputs[member]
        result = to_numpy(result)
        assert result.dtype == expected.dtype and result.shape == expected.shape, member
        bits = np.dtype(f"u{expected.itemsize}")
        same = np.asarray(result).view(bits) == np.ascontiguousarray(expected).view(bits)
        if not same.all():
            bad = np.flatnonzero(~same)[:6]
            pytest.fail(f"{member}: {(~same).sum()} elements differ at {bad.tolist()}")
    return "ok"


def index_array(
    rng: np.random.Generator, index_type: str, n: int, shape: Any, *, outside: float, negative: bool = True
) -> np.ndarray:
    """Indices along an axis of ``n``: negative ones where the type is signed (UINT64's 2^64 - k too), a few outside."""
    dtype = _dtype(index_type)
    v = rng.integers(0, max(n, 1), shape).astype(np.int64)
    if negative and dtype.kind == "i":
        v = np.where(rng.random(shape) < 0.4, v - n, v)
    if negative and dtype == np.uint64:  # read as INT64: 2^64 - k wraps like -k
        v = np.where(rng.random(shape) < 0.2, v - n, v)
    if outside and rng.random() < outside:
        flat = v.reshape(-1)
        if flat.size:
            flat[rng.integers(flat.size)] = rng.choice([n, n + 3, -n - 1, 2**31 + 5, 2**40])
    if dtype.kind == "u":
        return v.astype(np.uint64).astype(dtype)  # two's complement bits
    return v.astype(dtype)


def data_type_for(rng: np.random.Generator, build: Callable[[str], Any | None]) -> tuple[str, Any]:
    """A random data type whose desc validates (falling back to the types every indexing operator takes)."""
    for name in (str(rng.choice(DATA_TYPES)), str(rng.choice(BASE_TYPES))):
        desc = build(name)
        if desc is not None:
            return name, desc
    raise AssertionError("no data type validates")


def shape_of(rng: np.random.Generator, rank: int, *, large: bool) -> list[int]:
    sizes = [int(s) for s in rng.integers(1, 6, rank)]
    if large:  # about 100k elements: several threads
        sizes[-1] = int(rng.integers(200, 400))
        sizes[0] = int(rng.integers(60, 120)) if rank > 1 else 100_000
    return sizes


def case(seed: int) -> tuple[str, str, bool]:
    """(input layout, output kind, large) for a seed."""
    return LAYOUTS[seed % 4], "strided" if seed % 3 == 0 else "", seed % 10 == 9


# -- GATHER_ELEMENTS, SCATTER_ELEMENTS -------------------------------------------------------------


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize("seed", SEEDS)
def test_gather_elements(backend: str, seed: int) -> None:
    rng = rng_of("gather_elements", seed)
    layout, out, large = case(seed)
    rank = int(rng.integers(1, 5))
    sizes = shape_of(rng, rank, large=large)
    axis = int(rng.integers(rank))
    isz = list(sizes)
    isz[axis] = int(rng.integers(1, 2 * sizes[axis] + 1))  # any size on Axis
    itype = str(rng.choice(INDEX_TYPES))

    def build(dtype: str) -> Any:
        desc = {"InputTensor": _t(dtype, sizes), "IndicesTensor": _t(itype, isz), "OutputTensor": _t(dtype, isz)}
        return make("GATHER_ELEMENTS", desc | {"Axis": axis})

    dtype, desc = data_type_for(rng, build)
    x = random_bits(rng, _dtype(dtype), sizes)
    idx = index_array(rng, itype, sizes[axis], isz, outside=0.2)
    inputs = {"InputTensor": laid_out(rng, x, layout), "IndicesTensor": laid_out(rng, idx, layout)}
    compare(desc, inputs, rng, out=out, backend=backend)


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize(
    ("dtype", "sizes", "isz", "layout"),
    [
        ("FLOAT32", [64, 4096], [64, 4096], "contiguous"),
        ("FLOAT32", [3, 12288], [3, 100], "contiguous"),  # a 48 KiB row: staged in shared memory
        ("FLOAT32", [3, 12289], [3, 100], "contiguous"),  # one element more: the general kernel
        ("FLOAT16", [5, 7, 333], [5, 7, 1000], "contiguous"),  # outer axes collapse: one row stride each
        ("FLOAT32", [6, 300], [6, 300], "strided"),  # every other element: strides 2 along Axis
        ("UINT64", [9, 6144], [9, 5], "reversed"),
        ("INT8", [2, 3, 1], [2, 3, 1], "contiguous"),
        ("FLOAT32", [40, 50], [40, 50], "transposed"),  # outer axes do not collapse: the general kernel
        ("FLOAT32", [8, 1, 50, 1], [8, 1, 70, 1], "contiguous"),  # trailing axes of 1 after Axis
    ],
)
@pytest.mark.parametrize("itype", ["INT32", "UINT32", "INT64"])
def test_gather_elements_rows(
    backend: str, dtype: str, sizes: list[int], isz: list[int], layout: str, itype: str
) -> None:
    """In-range (and negative, wrapped) indices along the innermost axis that is not 1: cuda
    stages such Input rows in shared memory where they fit (gather_elements_rows)."""
    rng = rng_of(f"rows{sizes}{isz}{layout}{itype}", 0)
    axis = max(i for i, s in enumerate(sizes) if s != 1 or i == 0) if sizes[-1] == 1 else len(sizes) - 1
    desc = make(
        "GATHER_ELEMENTS",
        {
            "InputTensor": _t(dtype, sizes),
            "IndicesTensor": _t(itype, isz),
            "OutputTensor": _t(dtype, isz),
            "Axis": axis,
        },
    )
    assert desc is not None
    x = random_bits(rng, _dtype(dtype), sizes)
    idx = index_array(rng, itype, sizes[axis], isz, outside=0.0)
    inputs = {"InputTensor": laid_out(rng, x, layout), "IndicesTensor": laid_out(rng, idx, layout)}
    assert compare(desc, inputs, rng, backend=backend) != "error"


def distinct_or_duplicate_lines(
    rng: np.random.Generator, n: int, isz: list[int], axis: int, *, dup: bool
) -> np.ndarray:
    """Scatter targets along Axis: distinct per line (a permutation's first entries), or with repeats."""
    lines = np.moveaxis(np.zeros(isz, np.int64), axis, -1)
    flat = lines.reshape(-1, isz[axis])
    for row in flat:
        row[:] = rng.integers(0, n, isz[axis]) if dup else rng.permutation(n)[: isz[axis]]
    return np.moveaxis(flat.reshape(lines.shape), -1, axis)


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize("seed", SEEDS)
def test_scatter_elements(backend: str, seed: int) -> None:
    rng = rng_of("scatter_elements", seed)
    layout, out, large = case(seed)
    rank = int(rng.integers(1, 5))
    sizes = shape_of(rng, rank, large=large)
    axis = int(rng.integers(rank))
    isz = list(sizes)
    isz[axis] = int(rng.integers(1, sizes[axis] + 1))
    itype = str(rng.choice(INDEX_TYPES))

    def build(dtype: str) -> Any:
        desc = {"InputTensor": _t(dtype, sizes), "IndicesTensor": _t(itype, isz), "UpdatesTensor": _t(dtype, isz)}
        return make("SCATTER_ELEMENTS", desc | {"OutputTensor": _t(dtype, sizes), "Axis": axis})

    dtype, desc = data_type_for(rng, build)
    n = sizes[axis]
    v = distinct_or_duplicate_lines(rng, n, isz, axis, dup=seed % 2 == 1)
    if _dtype(itype).kind == "i" or itype == "UINT64":
        v = np.where(rng.random(isz) < 0.4, v - n, v)
    if seed % 5 == 4:  # one outside the axis: refused
        v.reshape(-1)[int(rng.integers(v.size))] = n + int(rng.integers(0, 3))
    idx = v.astype(np.uint64).astype(_dtype(itype)) if itype.startswith("U") else v.astype(_dtype(itype))
    inputs = {
        "InputTensor": laid_out(rng, random_bits(rng, _dtype(dtype), sizes), layout),
        "IndicesTensor": laid_out(rng, idx, "plain" if layout == "broadcast" else layout),
        "UpdatesTensor": laid_out(rng, random_bits(rng, _dtype(dtype), isz), layout),
    }
    compare(desc, inputs, rng, out=out, backend=backend)
    if not large:
        compare(desc, inputs, rng, strict=True, backend=backend)  # duplicates refused


def test_scatter_elements_into_its_own_input() -> None:
    """An output that is the input's own array: the scatter happens in place."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[3, 0], [1, -1], [2, 2]], np.int32)
    upd = -np.arange(6, dtype=np.float32).reshape(3, 2)
    desc = desc_from_json(
        "SCATTER_ELEMENTS",
        {
            "InputTensor": _t("FLOAT32", [3, 4]),
            "IndicesTensor": _t("INT32", [3, 2]),
            "UpdatesTensor": _t("FLOAT32", [3, 2]),
            "OutputTensor": _t("FLOAT32", [3, 4]),
            "Axis": 1,
        },
    )
    inputs = {"InputTensor": x, "IndicesTensor": idx, "UpdatesTensor": upd}
    want = dmlops.execute(desc, inputs, backend="numpy")["OutputTensor"]
    dmlops.execute(desc, inputs, backend="cpu", outputs={"OutputTensor": x})
    np.testing.assert_array_equal(x, want)


# -- GATHER_ND, GATHER_ND1, SCATTER_ND ---------------------------------------------------------------


def nd_case(rng: np.random.Generator, seed: int, *, batch_allowed: bool) -> dict[str, Any]:
    r = int(rng.integers(1, 5))
    meaningful = [int(s) for s in rng.integers(1, 5, r)]
    if seed % 10 == 9:
        meaningful[-1] = int(rng.integers(2000, 4000))  # large slabs: threads
    batch = int(rng.integers(0, r)) if batch_allowed else 0
    k = int(rng.integers(1, r - batch + 1))
    grid = meaningful[:batch] + [int(s) for s in rng.integers(1, 5, int(rng.integers(0, 3)))]
    return {"r": r, "meaningful": meaningful, "batch": batch, "k": k, "grid": grid}


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize("op", ["GATHER_ND", "GATHER_ND1"])
@pytest.mark.parametrize("seed", SEEDS)
def test_gather_nd(backend: str, op: str, seed: int) -> None:
    rng = rng_of(op, seed)
    layout, out, _ = case(seed)
    c = nd_case(rng, seed, batch_allowed=op == "GATHER_ND1")
    meaningful, batch, k, grid = c["meaningful"], c["batch"], c["k"], c["grid"]
    itype = str(rng.choice(INDEX_TYPES))
    parts = [index_array(rng, itype, meaningful[batch + t], [*grid, 1], outside=0.25) for t in range(k)]
    idx = np.concatenate(parts, -1)
    want = (*grid, *meaningful[batch + k :])
    extra = int(rng.integers(0, 2))  # leading 1s
    d = max(c["r"], idx.ndim, len(want)) + extra

    def pad(s: Any) -> list[int]:
        return [1] * (d - len(s)) + list(s)

    with_strides = seed % 7 == 3  # a flat buffer through Strides: the clamp reads its bytes

    def build(dtype: str) -> Any:
        x_t = _t(dtype, pad(meaningful))
        if with_strides:
            x_t["Strides"] = [int(s) for s in np.cumprod([1, *pad(meaningful)[::-1]])[:-1][::-1] * 2]
        desc = {"InputTensor": x_t, "IndicesTensor": _t(itype, pad(idx.shape)), "OutputTensor": _t(dtype, pad(want))}
        desc |= {"InputDimensionCount": c["r"], "IndicesDimensionCount": idx.ndim}
        if op == "GATHER_ND1":
            desc["BatchDimensionCount"] = batch
        return make(op, desc)

    dtype, desc = data_type_for(rng, build)
    if with_strides:
        x = random_bits(rng, _dtype(dtype), [2 * int(np.prod(meaningful)) + 3])  # the flat buffer, and more
    else:
        x = laid_out(rng, random_bits(rng, _dtype(dtype), pad(meaningful)), layout)
    inputs = {"InputTensor": x, "IndicesTensor": laid_out(rng, idx.reshape(pad(idx.shape)), layout)}
    compare(desc, inputs, rng, out=out, backend=backend)
    compare(desc, inputs, rng, strict=True, backend=backend)


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize("seed", SEEDS)
def test_scatter_nd(backend: str, seed: int) -> None:
    rng = rng_of("scatter_nd", seed)
    layout, out, _ = case(seed)
    c = nd_case(rng, seed, batch_allowed=False)
    meaningful, k, grid = c["meaningful"], c["k"], c["grid"]
    itype = str(rng.choice(INDEX_TYPES))
    outside = 0.25 if seed % 4 == 1 else 0.0
    parts = [index_array(rng, itype, meaningful[t], [*grid, 1], outside=outside) for t in range(k)]
    idx = np.concatenate(parts, -1)
    want = (*grid, *meaningful[k:])
    # Every tensor at one DimensionCount, or each at its own (an UpdatesTensor of more dimensions
    # than the input and the indices then writes one slab, E165)
    own = seed % 2 == 1
    d = max(c["r"], idx.ndim, len(want))

    def pad(s: Any) -> list[int]:
        return [1] * (d - len(s)) + list(s)

    x_sizes, i_sizes, upd_sizes = ((list(s) or [1]) if own else pad(s) for s in (meaningful, idx.shape, want))

    def build(dtype: str) -> Any:
        desc = {"InputTensor": _t(dtype, x_sizes), "IndicesTensor": _t(itype, i_sizes)}
        desc |= {"UpdatesTensor": _t(dtype, upd_sizes), "OutputTensor": _t(dtype, x_sizes)}
        return make("SCATTER_ND", desc | {"InputDimensionCount": c["r"], "IndicesDimensionCount": idx.ndim})

    dtype, desc = data_type_for(rng, build)
    inputs = {
        "InputTensor": laid_out(rng, random_bits(rng, _dtype(dtype), x_sizes), layout),
        "IndicesTensor": idx.reshape(i_sizes),  # no broadcast: E164
        "UpdatesTensor": laid_out(rng, random_bits(rng, _dtype(dtype), upd_sizes), layout),
    }
    compare(desc, inputs, rng, out=out, backend=backend)
    compare(desc, inputs, rng, strict=True, backend=backend)


# -- ONE_HOT, REVERSE_SUBSEQUENCES ----------------------------------------------------------------------


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize("seed", SEEDS)
def test_one_hot(backend: str, seed: int) -> None:
    rng = rng_of("one_hot", seed)
    layout, out, large = case(seed)
    rank = int(rng.integers(1, 5))
    sizes = shape_of(rng, rank, large=large)
    axis = int(rng.integers(rank))
    isz = list(sizes)
    isz[axis] = 1
    itype = str(rng.choice(INDEX_TYPES))
    n = sizes[axis]
    idx = index_array(rng, itype, n, isz, outside=0.0)
    if seed % 3 == 1:  # outside [-n, n), and the INT64 low-32-bit comparison (E161)
        flat = idx.reshape(-1)
        odd = np.array([n, -n - 1, 2**32 + 1, 2**32 - 1, 2**63 + 1], dtype=object)
        for j in rng.integers(0, flat.size, 3):
            flat[j] = int(rng.choice(odd)) % (1 << (8 * flat.itemsize)) if itype.startswith("U") else flat[j]
        if itype == "INT64":
            flat[int(rng.integers(flat.size))] = 2**32 + int(rng.integers(0, n))
    vsz = [1] * (rank - 1) + [int(rng.integers(2, 5))]

    def build(dtype: str) -> Any:
        desc = {"IndicesTensor": _t(itype, isz), "ValuesTensor": _t(dtype, vsz), "OutputTensor": _t(dtype, sizes)}
        return make("ONE_HOT", desc | {"Axis": axis})

    dtype, desc = data_type_for(rng, build)
    values = random_bits(rng, _dtype(dtype), vsz)
    inputs = {"IndicesTensor": laid_out(rng, idx, layout), "ValuesTensor": laid_out(rng, values, layout)}
    compare(desc, inputs, rng, out=out, backend=backend)


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize("seed", SEEDS)
def test_reverse_subsequences(backend: str, seed: int) -> None:
    rng = rng_of("reverse", seed)
    layout, out, large = case(seed)
    rank = int(rng.integers(1, 5))
    sizes = shape_of(rng, rank, large=large)
    axis = int(rng.integers(rank))
    lsz = list(sizes)
    lsz[axis] = 1
    ltype = str(rng.choice(["UINT32", "UINT64"]))
    n = sizes[axis]
    lengths = rng.integers(0, n + 3, lsz).astype(np.uint64)  # past the axis too (E162)
    if seed % 4 == 2:
        lengths.reshape(-1)[0] = 2**32 + 1 if ltype == "UINT64" else 2**32 - 1  # the low 32 bits
    lengths = lengths.astype(_dtype(ltype))

    def build(dtype: str) -> Any:
        desc = {"InputTensor": _t(dtype, sizes), "SequenceLengthsTensor": _t(ltype, lsz)}
        return make("REVERSE_SUBSEQUENCES", desc | {"OutputTensor": _t(dtype, sizes), "Axis": axis})

    dtype, desc = data_type_for(rng, build)
    x = random_bits(rng, _dtype(dtype), sizes)
    inputs = {"InputTensor": laid_out(rng, x, layout), "SequenceLengthsTensor": laid_out(rng, lengths, layout)}
    compare(desc, inputs, rng, out=out, backend=backend)


# -- DIAGONAL_MATRIX(1), NONZERO_COORDINATES ------------------------------------------------------------


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize("seed", SEEDS)
def test_diagonal_matrix(backend: str, seed: int) -> None:
    rng = rng_of("diagonal", seed)
    _, out, large = case(seed)
    sizes = shape_of(rng, int(rng.integers(2, 5)), large=large)
    offset = int(rng.integers(-6, 7)) if seed % 8 else int(rng.choice([-(2**31), 2**31 - 1]))
    value = float(rng.choice([2.5, -1.5, 200.7, 1e30, np.nan, -np.inf, 65504.0, 70000.0]))
    _, desc = data_type_for(
        rng,
        lambda dt: make("DIAGONAL_MATRIX", {"OutputTensor": _t(dt, sizes), "Offset": offset, "Value": value}),
    )
    compare(desc, {}, rng, out=out, backend=backend)


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize("seed", SEEDS)
def test_diagonal_matrix1(backend: str, seed: int) -> None:
    rng = rng_of("diagonal1", seed)
    layout, out, large = case(seed)
    sizes = shape_of(rng, int(rng.integers(2, 5)), large=large)
    begin, end = (int(v) for v in rng.integers(-6, 7, 2))
    if seed % 8 == 0:
        begin = -(2**31)
    with_input = seed % 2 == 0

    def build(dtype: str) -> Any:
        value = {"i": -3, "u": 200}.get(_dtype(dtype).kind, 0.75)
        desc = {"OutputTensor": _t(dtype, sizes), "ValueDataType": dtype, "Value": value}
        desc |= {"DiagonalFillBegin": begin, "DiagonalFillEnd": end}
        if with_input:
            desc["InputTensor"] = _t(dtype, sizes)
        return make("DIAGONAL_MATRIX1", desc)

    dtype, desc = data_type_for(rng, build)
    inputs = {"InputTensor": laid_out(rng, random_bits(rng, _dtype(dtype), sizes), layout)} if with_input else {}
    compare(desc, inputs, rng, out=out, backend=backend)


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize("seed", SEEDS)
def test_nonzero_coordinates(backend: str, seed: int) -> None:
    rng = rng_of("nonzero", seed)
    layout, out, large = case(seed)
    sizes = shape_of(rng, int(rng.integers(1, 5)), large=large)
    if seed % 5 == 2:
        sizes = [1, *sizes]  # a leading 1: N may drop it
    from dmlops.descs.data_movement import effective_rank

    n = int(rng.integers(max(effective_rank(tuple(sizes)), 1), len(sizes) + 1))
    m = int(np.prod(sizes))
    lead = [1] * int(rng.integers(0, 2))

    def build(dtype: str) -> Any:
        desc = {"InputTensor": _t(dtype, sizes), "OutputCountTensor": _t("UINT32", [1] * int(rng.integers(1, 3)))}
        return make("NONZERO_COORDINATES", desc | {"OutputCoordinatesTensor": _t("UINT32", [*lead, m, n])})

    dtype, desc = data_type_for(rng, build)
    x = random_bits(rng, _dtype(dtype), sizes)
    if _dtype(dtype).kind == "f":  # negative zeros (zero) and the all-zero input
        x[rng.random(sizes) < 0.2] = -0.0
    if seed % 9 == 4:
        x[...] = 0
    compare(desc, {"InputTensor": laid_out(rng, x, layout)}, rng, out=out, backend=backend)


# -- hostile indices (the lead runs the cuda cases under compute-sanitizer) ------------------------------

HOSTILE = {
    "INT32": [2**31 - 1, -(2**31), -1, -7, 7, 2**31 - 2],
    "INT64": [2**63 - 1, -(2**63), 2**40, 2**32 + 1, 2**32 - 1, -(2**32), -7, 7],
    "UINT32": [2**32 - 1, 2**31, 2**31 - 1, 7],
    "UINT64": [2**64 - 1, 2**63, 2**63 - 1, 2**40, 2**32 + 1, 2**64 - 7, 7],
}
"""Index values far outside any axis (and a few of those that wrap into range); the axis is 7 long."""


def hostile(rng: np.random.Generator, itype: str, shape: Any, n: int, *, share: float) -> np.ndarray:
    """In-range indices with a ``share`` of HOSTILE values of ``itype`` (as its two's complement bits)."""
    v = rng.integers(0, n, shape).astype(object)
    flat = v.reshape(-1)
    for j in np.flatnonzero(rng.random(flat.size) < share):
        flat[j] = int(rng.choice(np.array(HOSTILE[itype], dtype=object)))
    bits = 8 * _dtype(itype).itemsize
    wrapped = np.array([int(a) % (1 << bits) for a in flat], dtype=np.uint64).reshape(v.shape)
    return wrapped.astype(f"uint{bits}").view(_dtype(itype))


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize("itype", INDEX_TYPES)
@pytest.mark.parametrize("share", [0.0, 0.05, 0.5])
@pytest.mark.parametrize("strict", [False, True])
def test_hostile_gather_scatter_elements(backend: str, itype: str, share: float, strict: bool) -> None:
    """Huge, negative, out-of-range and duplicate indices: the reference's result or error, never a fault."""
    rng = rng_of(f"hostile{itype}{share}{strict}", 0)
    sizes, isz = [5, 7], [5, 7]
    idx = hostile(rng, itype, isz, 7, share=share)
    x = random_bits(rng, np.dtype(np.float32), sizes)
    for op, extra in (("GATHER_ELEMENTS", {}), ("SCATTER_ELEMENTS", {"UpdatesTensor": _t("FLOAT32", isz)})):
        desc = {"InputTensor": _t("FLOAT32", sizes), "IndicesTensor": _t(itype, isz), **extra}
        d = make(op, desc | {"OutputTensor": _t("FLOAT32", isz if op == "GATHER_ELEMENTS" else sizes), "Axis": 1})
        inputs = {"InputTensor": x, "IndicesTensor": idx}
        if extra:
            inputs["UpdatesTensor"] = random_bits(rng, np.dtype(np.float32), isz)
        compare(d, inputs, rng, strict=strict, backend=backend)


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize("itype", INDEX_TYPES)
@pytest.mark.parametrize("strict", [False, True])
def test_hostile_nd_and_one_hot(backend: str, itype: str, strict: bool) -> None:
    """GATHER_ND (flat reads of 32-bit data, refusals of others), SCATTER_ND, ONE_HOT with hostile values."""
    rng = rng_of(f"hostile_nd{itype}{strict}", 0)
    for dtype in ("FLOAT32", "FLOAT16", "INT64"):
        x = random_bits(rng, _dtype(dtype), [7, 7])
        idx = hostile(rng, itype, [6, 2], 7, share=0.1)
        desc = {"InputTensor": _t(dtype, [7, 7]), "IndicesTensor": _t(itype, [6, 2]), "OutputTensor": _t(dtype, [1, 6])}
        d = make("GATHER_ND", desc | {"InputDimensionCount": 2, "IndicesDimensionCount": 2})
        compare(d, {"InputTensor": x, "IndicesTensor": idx}, rng, strict=strict, backend=backend)
        upd = random_bits(rng, _dtype(dtype), [6])
        for share in (0.0, 0.1):  # duplicates, then hostile values too
            idx = hostile(rng, itype, [6, 2], 2, share=share)
            desc = {"InputTensor": _t(dtype, [7, 7]), "IndicesTensor": _t(itype, [6, 2])}
            desc |= {"UpdatesTensor": _t(dtype, [1, 6]), "OutputTensor": _t(dtype, [7, 7])}
            d = make("SCATTER_ND", desc | {"InputDimensionCount": 2, "IndicesDimensionCount": 2})
            inputs = {"InputTensor": x, "IndicesTensor": idx, "UpdatesTensor": upd.reshape(1, 6)}
            compare(d, inputs, rng, strict=strict, backend=backend)
    idx = hostile(rng, itype, [5, 1], 7, share=0.5)
    desc = {"IndicesTensor": _t(itype, [5, 1]), "ValuesTensor": _t("FLOAT32", [1, 2])}
    d = make("ONE_HOT", desc | {"OutputTensor": _t("FLOAT32", [5, 7]), "Axis": 1})
    values = np.array([[0.5, -2.0]], np.float32)
    compare(d, {"IndicesTensor": idx, "ValuesTensor": values}, rng, strict=strict, backend=backend)


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize("n", [1, 3, 8192, 8193, 20000])
@pytest.mark.parametrize("form", ["staged", "stores", "gathers"])
def test_scatter_elements_line_lengths(backend: str, n: int, form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines of every kind: many short ones per tile, one line per tile, lines past the shared-memory tile.

    On cuda with each kernel: scatter_elements_staged (lines up to 9728 INT16 elements
    here), and scatter_elements with both forms of its last phase (``SCATTER_STORES``).
    """
    if backend == "cuda":
        monkeypatch.setattr("dmlops.cuda.data_movement.SCATTER_STORES", form == "stores")
        if form != "staged":
            monkeypatch.setattr("dmlops.cuda.data_movement.SCATTER_BATCH", 0)
    elif form != "staged":
        pytest.skip("a cuda kernel setting")
    rng = rng_of("scatter_lines", n)
    lines = 3 if n > 100 else 700
    m = max(1, n // 2)
    for dup, strict in ((False, True), (True, False), (True, True)):
        v = distinct_or_duplicate_lines(rng, n, [lines, m], 1, dup=dup)
        desc = {"InputTensor": _t("INT16", [lines, n]), "IndicesTensor": _t("INT32", [lines, m])}
        desc |= {"UpdatesTensor": _t("INT16", [lines, m]), "OutputTensor": _t("INT16", [lines, n]), "Axis": 1}
        inputs = {
            "InputTensor": random_bits(rng, np.dtype(np.int16), [lines, n]),
            "IndicesTensor": v.astype(np.int32),
            "UpdatesTensor": random_bits(rng, np.dtype(np.int16), [lines, m]),
        }
        compare(make("SCATTER_ELEMENTS", desc), inputs, rng, strict=strict, backend=backend)


@pytest.mark.parametrize("backend", CPU_CUDA, indirect=True)
@pytest.mark.parametrize(
    ("dtype", "sizes", "m", "layout"),
    [
        ("FLOAT32", [64, 4096], 4096, "plain"),  # a permutation per line: four elements per access
        ("FLOAT32", [3, 6144], 5000, "plain"),  # 48 KiB of winners and updates
        ("FLOAT32", [3, 6148], 6148, "plain"),  # past 48 KiB: scatter_elements
        ("UINT64", [5, 2048], 1024, "plain"),
        ("FLOAT16", [4, 3, 998], 997, "plain"),  # outer axes collapse; one element per access
        ("INT8", [7, 400], 200, "strided"),
        ("FLOAT32", [6, 300], 300, "reversed"),
        ("FLOAT32", [9, 1, 40, 1], 40, "plain"),  # trailing axes of 1 after Axis
    ],
)
@pytest.mark.parametrize("itype", ["INT32", "UINT32", "INT64"])
@pytest.mark.parametrize("kind", ["distinct", "duplicates", "outside"])
@pytest.mark.parametrize("batch", [2, 4])
def test_scatter_elements_staged_lines(
    backend: str,
    dtype: str,
    sizes: list[int],
    m: int,
    layout: str,
    itype: str,
    kind: str,
    batch: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Lines along the innermost axis that is not 1 (cuda: scatter_elements_staged where they fit,
    ``batch`` accesses in flight per thread), with distinct targets, duplicates (the last wins;
    strict refuses) or one index outside."""
    if backend == "cuda":
        monkeypatch.setattr("dmlops.cuda.data_movement.SCATTER_BATCH", batch)
    elif batch != 2:
        pytest.skip("a cuda kernel setting")
    rng = rng_of(f"staged{sizes}{m}{layout}{itype}{kind}", 0)
    axis = max(i for i, s in enumerate(sizes) if s != 1)
    isz = list(sizes)
    isz[axis] = m
    n = sizes[axis]
    v = distinct_or_duplicate_lines(rng, n, isz, axis, dup=kind == "duplicates")
    if itype != "UINT32":
        v = np.where(rng.random(isz) < 0.3, v - n, v)
    if kind == "outside":
        v.reshape(-1)[int(rng.integers(v.size))] = n
    idx = v.astype(np.uint32) if itype == "UINT32" else v.astype(_dtype(itype))
    desc = make(
        "SCATTER_ELEMENTS",
        {
            "InputTensor": _t(dtype, sizes),
            "IndicesTensor": _t(itype, isz),
            "UpdatesTensor": _t(dtype, isz),
            "OutputTensor": _t(dtype, sizes),
            "Axis": axis,
        },
    )
    assert desc is not None
    inputs = {
        "InputTensor": laid_out(rng, random_bits(rng, _dtype(dtype), sizes), layout),
        "IndicesTensor": laid_out(rng, idx, layout),
        "UpdatesTensor": laid_out(rng, random_bits(rng, _dtype(dtype), isz), layout),
    }
    for strict in (False, True):
        compare(desc, inputs, rng, strict=strict, out="strided" if layout == "strided" else "", backend=backend)


@pytest.mark.parametrize("backend", backend_params("cuda"), indirect=True)
def test_scatter_elements_into_its_own_device_input(backend: str) -> None:
    """cuda: an out= device array that is the input's own: the scatter happens in place."""
    import cupy

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[3, 0], [1, -1], [2, 2]], np.int32)
    upd = -np.arange(6, dtype=np.float32).reshape(3, 2)
    desc = desc_from_json(
        "SCATTER_ELEMENTS",
        {
            "InputTensor": _t("FLOAT32", [3, 4]),
            "IndicesTensor": _t("INT32", [3, 2]),
            "UpdatesTensor": _t("FLOAT32", [3, 2]),
            "OutputTensor": _t("FLOAT32", [3, 4]),
            "Axis": 1,
        },
    )
    want = dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": idx, "UpdatesTensor": upd}, backend="numpy")
    xd = cupy.asarray(x)
    inputs = {"InputTensor": xd, "IndicesTensor": cupy.asarray(idx), "UpdatesTensor": cupy.asarray(upd)}
    dmlops.execute(desc, inputs, backend=backend, outputs={"OutputTensor": xd})
    np.testing.assert_array_equal(to_numpy(xd), want["OutputTensor"])
