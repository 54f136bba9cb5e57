"""Compile every CUDA kernel source with NVRTC, without a GPU.

NVRTC compiles CUDA C to PTX with no driver and no device, so this runs wherever the
NVRTC library is importable (through CuPy's ``cupy_backends``, which needs
``cupy-cuda13x`` (or 12x) plus the matching ``nvidia-cuda-nvrtc`` wheel). It skips
cleanly elsewhere. Each source is compiled once with a representative set of
template specialisations (every data type, index type, vector width and mode the
host code can ask for), for compute_90 (Hopper) and compute_75.
"""

from __future__ import annotations

import importlib
import itertools
import re
from pathlib import Path

import pytest

from dmlops.cuda._compile import compile_source
from dmlops.cuda._runtime import kernel_source, kernel_sources
from dmlops.cuda.elementwise import ACTIVATIONS, OP_TABLE, SIGN_BITS
from dmlops.cuda.pooling import _block_offset

DATA = ["float", "half_t", "double", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]
INDEX = ["i32", "i64", "u32", "u64"]


def _block_offsets(window_and_strides: str, pad: int) -> str:
    """The DH, DW arguments of max_pool_grad_blk2d for "KH, KW, SH, SW" and a padding."""
    kh, kw, sh, sw = (int(v) for v in window_and_strides.split(","))
    return f"{_block_offset(2, kh, sh, pad)}, {_block_offset(2, kw, sw, pad)}"


def _copy_names() -> list[str]:
    names = []
    for storage, vec_bytes, mode in itertools.product(["u8", "u16", "u32", "u64"], [1, 2, 4, 8, 16], [0, 1, 2]):
        size = {"u8": 1, "u16": 2, "u32": 4, "u64": 8}[storage]
        vec = max(1, vec_bytes // size)
        if vec_bytes < size or (vec == 1 and mode):
            continue
        names.append(f"strided_copy<{storage}, {vec}, {mode}, 2, int, NoIndex, false>")
    for ndim in range(8):
        names.append(f"strided_copy<u32, 4, 1, {ndim}, long long, NoIndex, false>")
    for idx, wrap in itertools.product(INDEX, ["true", "false"]):
        if wrap == "true" and idx.startswith("u"):
            continue
        names.append(f"strided_copy<u16, 8, 1, 3, int, {idx}, {wrap}>")
        names.append(f"strided_copy<u8, 4, 2, 2, int, {idx}, {wrap}>")  # reversed vectors, flat reads
        names.append(f"strided_copy<u32, 2, 0, 1, int, {idx}, {wrap}>")
        names.append(f"strided_copy<u64, 1, 0, 7, long long, {idx}, {wrap}>")
        names.append(f"gather_check<{idx}, {wrap}>")
        names.append(f"gather_rows<1, int, {idx}, {wrap}>")
        names.append(f"gather_rows<7, long long, {idx}, {wrap}>")
    return names


def _elementwise_names() -> list[str]:
    """Every functor in the contiguous and strided kernels, with float, FLOAT16 and integer types."""
    ternary = {"OpIf"}
    names = []
    for spec in {s.functor: s for s in OP_TABLE.values()}.values():
        types = (["float", "half_t", "double"] if spec.floats else []) + (["i8", "u32"] if spec.ints else [])
        for i, t in enumerate(types):
            ins = ["u8", t, t] if spec.functor in ternary else [t, t, t]
            out = "u8" if spec.functor.startswith(("OpIs", "OpLogical", "OpEquals", "OpGreater", "OpLess")) else t
            head = f"{spec.functor}, NoFused, {'true' if i == 1 else 'false'}, {', '.join(ins)}, {out}"
            names.append(f"ew_contig<{head}, {4 if i % 2 == 0 else 8}, 256, {1 + i % 4}>")
            names.append(f"ew_strided<{head}, {1 + i * 3 % 8}, {'int' if i % 2 == 0 else 'long long'}, {1 << i % 3}>")
    # functors picked by the operands: the quantizers without a zero point, CAST by its output type
    for functor, ins, out in (
        ("OpQuantizeLinearNoZeroPoint", "i32, float, i32", "u8"),
        ("OpDequantizeLinearNoZeroPoint", "i8, float, i8", "float"),
        ("OpCastToInt", "double, double, double", "u64"),
        ("OpCastToInt", "half_t, half_t, half_t", "i8"),
        ("OpCastToInt", "u64, u64, u64", "i32"),
        ("OpCastToFloat", "i64, i64, i64", "half_t"),
    ):
        names.append(f"ew_contig<{functor}, NoFused, false, {ins}, {out}, 1, 256, 1>")
        names.append(f"ew_strided<{functor}, NoFused, false, {ins}, {out}, 3, int, 1>")
    # the two-dimensional kernel (index types, vector widths, vectors a thread, one to three
    # inputs) and the FLOAT16 pair functors in each kernel
    for i, (head, vec) in enumerate(
        (
            ("OpAdd, NoFused, false, float, float, float, float", 4),
            ("OpAddH2, NoFused, false, half_t, half_t, half_t, half_t", 8),
            ("OpSubtractH2, NoFused, false, half_t, half_t, half_t, half_t", 1),
            ("OpMultiply, FusedRelu, true, half_t, half_t, half_t, half_t", 2),
            ("OpIf, NoFused, false, u8, double, double, double", 2),
            ("ActSigmoid, NoFused, false, float, float, float, float", 1),
            ("OpEquals, NoFused, false, i8, i8, i8, u8", 16),
        )
    ):
        names.append(f"ew_rows2d<{head}, {'int' if i % 2 == 0 else 'long long'}, {vec}, {(1, 2, 4)[i % 3]}>")
    for functor in ("OpAddH2", "OpSubtractH2", "OpMultiplyH2"):
        head = f"{functor}, NoFused, false, half_t, half_t, half_t, half_t"
        names += [f"ew_contig<{head}, 8, 256, 1>", f"ew_contig<{head}, 2, 128, 2>", f"ew_contig<{head}, 1, 256, 1>"]
        # the occupancy-capped instantiation (R), the L2 prefetch hint (H & 4)
        names += [f"ew_contig<{head}, 8, 256, 1, 3, 6>", f"ew_contig<{head}, 8, 128, 1, 7, 12>"]
        names += [f"ew_contig<{head}, 4, 256, 1, 4>", f"ew_contig<{head}, 8, 256, 1, 4, 5>"]
        names += [f"ew_strided<{head}, 3, int, 8>", f"ew_strided<{head}, 2, long long, 1>"]
    # the sign-bit functors of float IDENTITY / ABS / NEGATE (SIGN_BITS), every kernel and float type
    for i, (functor, t) in enumerate(itertools.product(SIGN_BITS.values(), ["half_t", "float", "double"])):
        head = f"{functor}, NoFused, false, {t}, {t}, {t}, {t}"
        vec = 16 // {"half_t": 2, "float": 4, "double": 8}[t]
        names += [f"ew_contig<{head}, {vec}, 256, 1>", f"ew_contig<{head}, {vec}, 256, 1, 3>"]
        names += [f"ew_contig<{head}, 1, 256, 1>", f"ew_contig<{head}, {max(1, vec // 2)}, 128, 2>"]
        names += [f"ew_strided<{head}, {1 + i % 8}, {'int' if i % 2 == 0 else 'long long'}, {(1, vec)[i % 2]}>"]
        names += [f"ew_rows2d<{head}, {'long long' if i % 2 == 0 else 'int'}, {(vec, 1)[i % 2]}, 1>"]
    for fused in ["FusedRelu", *sorted({functor for functor, _ in ACTIVATIONS.values()})]:
        names.append(f"ew_contig<OpAdd, {fused}, false, half_t, half_t, half_t, half_t, 8, 128, 2>")
    names.append("ew_contig<ActGelu, NoFused, false, float, float, float, float, 4, 256, 1, 7>")
    names.append("ew_contig<OpIf, NoFused, true, u8, half_t, half_t, half_t, 1, 128, 4, 0>")
    names.append("ew_contig<ActSigmoid, NoFused, false, double, double, double, double, 2, 256, 1, 0, 4>")
    names += [f"ew_rows<{t}, {k}, {p}>" for t in ("float", "half_t", "double") for k in range(3) for p in (0, 1, 4, 16)]
    names += [f"ew_row_chunk_{k}<{t}>" for t in ("float", "half_t", "double") for k in ("stats", "combine")]
    names += [f"ew_rows<{t}, {k}, {p}, 1024>" for t in ("float", "half_t", "double") for k in range(3) for p in (8, 16)]
    names += [f"ew_row_chunk_apply<{t}, {k}>" for t in ("float", "half_t", "double") for k in range(2)]
    names += [
        f"ew_rows_warp<{t}, {k}, {p}>" for t in ("float", "half_t", "double") for k in range(3) for p in (1, 8, 32)
    ]
    return names


NAMES = {
    "copy.cu": _copy_names(),
    "elementwise.cu": _elementwise_names(),
    "pooling.cu": [
        *(f"max_pool<{t}, {z}, int>" for t in DATA for z in ("NoIndexOut", "u32", "u64")),
        "max_pool<float, u64, long long>",
        *(f"max_pool_grad<{t}, {i}>" for t in ("float", "half_t", "double") for i in ("int", "long long")),
        *(
            f"{k}<{t}, {a}, {i}{', 3' if k.endswith('2d') else ''}>"
            for k in ("max_pool_argmax", "max_pool_grad_gather", "max_pool_grad_gather2d")
            for t in ("float", "half_t")
            for a in ("u8", "i32")
            for i in ("int", "long long")
        ),
        "max_pool_grad_gather2d<float, u8, int, 2>",
        "max_pool_grad_gather2d<half_t, u8, int, 4>",
        *(f"max_pool_argmax2d<{t}, u8, int, {k}>" for t in ("float", "half_t", "double") for k in (2, 3, 4)),
        *(
            f"max_pool_argmax_k2d_m<{t}, {k}, {m}, {v}, {pw}>"
            for t in ("float", "half_t", "double")
            for k in ("3, 3, 2, 2", "2, 2, 2, 2", "3, 2, 1, 2", "5, 1, 1, 5")
            for m in (2, 4)
            for v, pw in (("false", 0), ("true", 0), ("true", 1), ("true", 2))
        ),
        *(
            f"max_pool_k2d_m<{t}, {z}, {k}, 4>"
            for t in ("float", "half_t")
            for z in ("NoIndexOut", "u32", "u64")
            for k in ("3, 3, 2, 2", "2, 2, 2, 2", "3, 2, 1, 2", "5, 1, 1, 5")
        ),
        *(
            f"max_pool_grad_blk2d<{t}, {k}, {v}, {_block_offsets(k, pad)}>"
            for t in ("float", "half_t", "double")
            for k in ("3, 3, 2, 2", "2, 2, 2, 2", "3, 2, 1, 2", "5, 1, 1, 5")
            for v in ("true", "false")
            for pad in (0, 1)
        ),
        # (T, KH, KW, SH, SW, DW, GV) as _row16 picks them: 3x3/s2 p1 and p0, 2x2/s2 p0,
        # 3x2/(1, 2) p1, 2x2/s1, and scalar InputGradient loads.
        *(
            f"max_pool_grad_row16<{t}, {k}, {gv}>"
            for t, gv in (("float", 2), ("float", 4), ("half_t", 4), ("double", 1), ("float", 1), ("half_t", 1))
            for k in ("3, 3, 2, 2, 1", "3, 3, 2, 2, 2", "2, 2, 2, 2, 0", "3, 2, 1, 2, 1", "2, 2, 1, 1, 1")
            if not (t == "half_t" and k.endswith("1, 1, 1"))  # 9 window columns: no row16
        ),
        # (T, KH, KW, SH, SW, PH, PW, VEC): 3x3/s2 p1 and p0, 2x2/s2, 3x2/(1, 2) p(2, 1), 5x5/s3 p2.
        *(
            f"max_pool_grad_stream2d<{t}, {k}, {v}>"
            for t in ("float", "half_t", "double")
            for k in (
                "3, 3, 2, 2, 1, 1",
                "3, 3, 2, 2, 0, 0",
                "2, 2, 2, 2, 0, 0",
                "3, 2, 1, 2, 2, 1",
                "5, 5, 3, 3, 2, 2",
            )
            for v in ("true", "false")
            if v == "false" or k.split(", ")[3] == "2"
        ),
    ],
    "resample.cu": [
        *(
            f"resample_fwd<{t}, {lin}, {i}>"
            for t in ("float", "half_t", "i8", "u8", "double")
            for lin in ("true", "false")
            for i in ("int", "long long")
        ),
        *(
            f"resample_fwd_hw<{t}, {lin}, 4, {strided}>"
            for t in ("float", "half_t")
            for lin in ("true", "false")
            for strided in ("true", "false")
        ),
        *(
            f"resample_grad<{t}, {w}, {i}>"
            for t, w in (("float", "float"), ("half_t", "float"), ("double", "double"))
            for i in ("int", "long long")
        ),
        *(
            f"resample_grad_hw<{t}, {w}, int, {n}>"
            for t, w in (("float", "float"), ("half_t", "float"))
            for n in (2, 4, 8)
        ),
        "resample_grad_hw<double, double, long long, 4>",
        *(
            f"resample_grad_x2<{t}, {lo[0]}, {lo[1]}, {v}>"
            for t in ("float", "half_t")
            for lo in ((4, -1), (2, 0), (3, -1), (1, 0))
            for v in ("true", "false")
        ),
    ],
    "roi_align.cu": [
        f"{k}<{t}, {b}, {m}, {lin}>"
        for k in ("roi_align", "roi_align_cl")
        for t in ("float", "half_t")
        for b in ("u32", "u64")
        for m in ("true", "false")
        for lin in ("true", "false")
    ]
    + [
        f"roi_align_avg<{t}, {b}, {lin}, {off}, {vec}, {cl}, {stage}>"
        for t in ("float", "half_t")
        for b in ("u32", "u64")
        for lin in ("true", "false")
        for off in ("u32", "i64")
        for vec, cl, stage in (
            ("true", "false", "true"),
            ("true", "false", "false"),
            ("false", "false", "true"),
            ("false", "false", "false"),
            ("false", "true", "true"),
        )
    ]
    + [
        f"roi_align_fast<{t}, {b}, {m}, {lin}, {s}, {keep}>"
        for t in ("float", "half_t")
        for b in ("u32", "u64")
        for m in ("true", "false")
        for lin in ("true", "false")
        for s in (1, 2, 3, 4)
        for keep in ("true", "false")
    ]
    + [f"roi_batch_check<{b}>" for b in ("u32", "u64")]
    + [
        f"{k}<{t}, u32, {m}, {lin}>"  # ROI_ALIGN_GRAD's BatchIndicesTensor is UINT32
        for k in ("roi_align_grad", "roi_align_grad_input")
        for t in ("float", "half_t")
        for m in ("true", "false")
        for lin in ("true", "false")
    ]
    + [f"{k}<{t}>" for k in ("roi_pooling", "roi_grad_store") for t in ("float", "half_t")],
    "random.cu": [f"philox4x32_10<{w}, {ilp}>" for w in ("true", "false") for ilp in (1, 2, 4)],
}


def _add_listed_sources() -> None:
    """Sources whose specialisations live in a module of their own: ``tests/cuda_names_<stem>.py``,
    whose ``NAMES`` lists them for ``kernels/<stem>.cu``."""
    for path in sorted(Path(__file__).parent.glob("cuda_names_*.py")):
        module = importlib.import_module(path.stem)
        NAMES[f"{path.stem.removeprefix('cuda_names_')}.cu"] = list(module.NAMES)


_add_listed_sources()


def _nvrtc():
    try:
        from dmlops.cuda._compile import nvrtc_module

        nvrtc = nvrtc_module()
        nvrtc.getVersion()
    except Exception as exc:  # no CuPy, or CuPy without the NVRTC library
        pytest.skip(f"NVRTC is not importable here ({type(exc).__name__}: {exc})")
    return nvrtc


def test_every_source_has_specialisations() -> None:
    assert sorted(NAMES) == kernel_sources()


@pytest.mark.parametrize("arch", ["compute_90", "compute_75"])
@pytest.mark.parametrize("source", sorted(NAMES))
def test_kernel_source_compiles(source: str, arch: str) -> None:
    """Every specialisation compiles without warnings, with the options the runtime uses,
    and no float32 instruction flushes subnormals (no ``.ftz`` anywhere in the PTX)."""
    _nvrtc()
    try:
        ptx, lowered = compile_source(kernel_source(source), source, NAMES[source], arch)
    except RuntimeError as exc:
        pytest.fail(str(exc))
    assert all(lowered)
    text = ptx.decode()
    assert ".entry" in text
    if source == "elementwise.cu":
        # libdevice's float32 exp/log/rcp inner steps use .approx.ftz on ranges where
        # flushing cannot occur; no arithmetic of the kernels' own flushes
        text = re.sub(r"\b[a-z0-9]+\.approx\.ftz\.f(32|64)\b", "", text)
    assert ".ftz" not in text


@pytest.mark.cuda
@pytest.mark.parametrize("source", sorted(NAMES))
def test_kernel_source_assembles_for_hopper(source: str) -> None:
    """Every specialisation assembles to an sm_90 binary: ptxas's limits (static shared memory,
    registers) bind only there, not in the PTX of the test above. Run with the GPU tests (it
    needs no GPU, but doubles the compile test's time, too long for CI's two cores)."""
    from dmlops.cuda import availability

    if availability() is not None:
        pytest.skip(f"with the GPU tests only: {availability()}")
    _nvrtc()
    try:
        binary, lowered = compile_source(kernel_source(source), source, NAMES[source], "sm_90")
    except RuntimeError as exc:
        pytest.fail(str(exc))
    assert all(lowered) and binary


def test_compiled_kernels_are_cached_on_disk(tmp_path, monkeypatch) -> None:
    """A second request for the same kernel reads the stored binary instead of compiling;
    another source text is another entry."""
    _nvrtc()
    from dmlops.cuda import _compile

    monkeypatch.setenv("DMLOPS_CACHE_DIR", str(tmp_path))
    calls = []
    real = _compile.compile_source

    def counting(*args):
        calls.append(args[2])
        return real(*args)

    monkeypatch.setattr(_compile, "compile_source", counting)
    name = "strided_copy<u8, 1, 0, 0, int, NoIndex, false>"
    text = kernel_source("copy.cu")
    first = _compile.cached_binary(text, "copy.cu", name, "compute_75")
    again = _compile.cached_binary(text, "copy.cu", name, "compute_75")
    assert first == again and len(calls) == 1
    assert first[1].startswith("_Z")  # the lowered (mangled) name
    _compile.cached_binary(text + "\n// changed\n", "copy.cu", name, "compute_75")
    assert len(calls) == 2
    assert len(list((tmp_path / "kernels").iterdir())) == 2


def test_unwritable_cache_only_costs_recompiling(tmp_path, monkeypatch) -> None:
    _nvrtc()
    from dmlops.cuda import _compile

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("DMLOPS_CACHE_DIR", str(blocker))
    binary, lowered = _compile.cached_binary(
        kernel_source("copy.cu"), "copy.cu", "strided_copy<u8, 1, 0, 0, int, NoIndex, false>", "compute_75"
    )
    assert binary and lowered


def test_nvrtc_errors_carry_the_compiler_log() -> None:
    _nvrtc()
    with pytest.raises(RuntimeError, match=r"broken\.cu(.|\n)*undeclared"):
        compile_source("__global__ void k() { undeclared = 1; }", "broken.cu", [], "compute_75")
