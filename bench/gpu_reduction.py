"""GPU benchmark, the reduction section: REDUCE SUM / MAX, CUMULATIVE_SUMMATION and TOP_K against torch.

Run through bench/gpu.py (``PYTHONPATH=src python bench/gpu.py --only reduction``), which
measures the copy ceiling first; this module uses its helpers (``timed``, ``copies``,
``record``, ``run_cuda``) and reports "% copy" against that ceiling.

Workloads (FLOAT32):

* REDUCE SUM and MAX of (16384, 4096) over axis 1 (a block per row) and over axis 0 (a
  thread per column, the rows split over blocks, a second pass); floor bytes: the input
  read once (the output is 1/4096 of it). Peers: ``torch.sum`` / ``torch.amax``.
* CUMULATIVE_SUMMATION over the last axis of (65536, 1024); floor: read + write. Peer:
  ``torch.cumsum`` (a parallel scan: other float32 roundings than DirectML's sequential
  sum, which dmlops keeps, so results are checked against torch within a tolerance).
* TOP_K, K = 8, over the last axis of (65536, 1024); floor: the input read once. Peer:
  ``torch.topk`` (values and indices checked equal on data without ties).

Each result is checked against torch's before timing.
"""

from __future__ import annotations

from typing import Any

import cupy as cp
import torch
from gpu import copies, record, run_cuda, timed, torch_of

import dmlops
from dmlops.cuda import reduction
from dmlops.descs import desc_from_json


def _t(dtype: str, sizes: tuple[int, ...]) -> dict[str, Any]:
    return {"DataType": dtype, "Sizes": list(sizes)}


def _pick(sets: list[Any], k: int) -> Any:
    return sets[k % len(sets)]


def bench_reduce() -> None:
    shape = (16384, 4096)
    rng = cp.random.default_rng(11)
    sets = copies(lambda: rng.standard_normal(shape, dtype=cp.float32), shape[0] * shape[1] * 4)
    tsets = [torch_of(x) for x in sets]
    x0 = sets[0]
    for function, torch_fn in (("SUM", torch.sum), ("MAX", torch.amax)):
        for axis in (1, 0):
            out_shape = tuple(1 if i == axis else n for i, n in enumerate(shape))
            desc = desc_from_json(
                "REDUCE",
                {
                    "InputTensor": _t("FLOAT32", shape),
                    "OutputTensor": _t("FLOAT32", out_shape),
                    "Axes": [axis],
                    "Function": function,
                },
            )
            out = cp.empty(out_shape, dtype=cp.float32)
            got = torch_of(dmlops.execute(desc, {"InputTensor": x0}, backend="cuda")["OutputTensor"])
            want = torch_fn(tsets[0].double() if function == "SUM" else tsets[0], dim=axis, keepdim=True).float()
            if function == "SUM":  # dmlops: a float64 sum rounded once; torch's float32 sums are the inexact ones
                assert torch.allclose(got, want, rtol=1e-6, atol=1e-6), f"REDUCE {function} axis {axis} mismatch"
            else:
                assert torch.equal(got, want), f"REDUCE {function} axis {axis} mismatch"
            w = f"REDUCE {function} (16384, 4096) axis {axis}"
            peer = timed(lambda k: torch_fn(_pick(tsets, k), dim=axis, keepdim=True))  # noqa: B023
            record(w, "fp32", f"torch.{torch_fn.__name__}", peer, x0.nbytes)
            mine = timed(lambda k: run_cuda(desc, {"InputTensor": _pick(sets, k)}, {"OutputTensor": out}))  # noqa: B023
            record(w, "fp32", "dmlops cuda", mine, x0.nbytes, peer)


def bench_cumsum() -> None:
    shape = (65536, 1024)
    rng = cp.random.default_rng(12)
    sets = copies(lambda: rng.standard_normal(shape, dtype=cp.float32), 2 * shape[0] * shape[1] * 4)
    tsets = [torch_of(x) for x in sets]
    body = {
        "InputTensor": _t("FLOAT32", shape),
        "OutputTensor": _t("FLOAT32", shape),
        "Axis": 1,
        "AxisDirection": "INCREASING",
        "HasExclusiveSum": False,
    }
    desc = desc_from_json("CUMULATIVE_SUMMATION", body)
    out = cp.empty(shape, dtype=cp.float32)
    tout = torch_of(out)
    got_cp = dmlops.execute(desc, {"InputTensor": sets[0]}, backend="cuda")["OutputTensor"]
    got_bits = got_cp.view(cp.uint32)
    got = torch_of(got_cp)
    want = torch.cumsum(tsets[0].double(), dim=1).float()
    # a sequential float32 running sum of j terms is within j 2^-24 sum(|x|) of the exact one
    bound = torch.cumsum(tsets[0].abs().double(), dim=1) * torch.arange(1, shape[1] + 1, device="cuda") * 2.0**-24
    assert bool(((got.double() - want.double()).abs() <= bound + 1e-30).all()), "CUMULATIVE_SUMMATION mismatch"
    w = "CUMULATIVE_SUMMATION (65536, 1024) axis 1"
    nbytes = 2 * sets[0].nbytes
    peer = timed(lambda k: torch.cumsum(_pick(tsets, k), dim=1, out=tout))
    record(w, "fp32", "torch.cumsum(out=)", peer, nbytes)
    mine = timed(lambda k: run_cuda(desc, {"InputTensor": _pick(sets, k)}, {"OutputTensor": out}))
    record(w, "fp32", "dmlops cuda", mine, nbytes, peer)
    # other shapes of scan_tiles (reduction.SCAN_LINES, SCAN_WIDTH), checked bit for bit against the default
    defaults = reduction.SCAN_LINES, reduction.SCAN_WIDTH
    variants = {"scan_tiles 8 lines": (8, 64), "scan_tiles 32 lines": (32, 64), "scan_tiles width 32": (16, 32)}
    try:
        for name, (reduction.SCAN_LINES, reduction.SCAN_WIDTH) in variants.items():
            d = desc_from_json("CUMULATIVE_SUMMATION", body)  # a fresh desc: a fresh plan
            alt = cp.empty(shape, dtype=cp.float32)
            run_cuda(d, {"InputTensor": sets[0]}, {"OutputTensor": alt})
            assert bool((alt.view(cp.uint32) == got_bits).all()), f"{name} differs"
            t = timed(lambda k: run_cuda(d, {"InputTensor": _pick(sets, k)}, {"OutputTensor": alt}))  # noqa: B023
            record(w, "fp32", f"variant {name}", t, nbytes, peer)
    finally:
        reduction.SCAN_LINES, reduction.SCAN_WIDTH = defaults


def bench_top_k() -> None:
    shape, k = (65536, 1024), 8
    rng = cp.random.default_rng(13)
    sets = copies(lambda: rng.standard_normal(shape, dtype=cp.float32), shape[0] * shape[1] * 4)
    tsets = [torch_of(x) for x in sets]
    sizes = (shape[0], k)
    desc = desc_from_json(
        "TOP_K",
        {
            "InputTensor": _t("FLOAT32", shape),
            "OutputValueTensor": _t("FLOAT32", sizes),
            "OutputIndexTensor": _t("UINT32", sizes),
            "Axis": 1,
            "K": k,
        },
    )
    values = cp.empty(sizes, dtype=cp.float32)
    indices = cp.empty(sizes, dtype=cp.uint32)
    got = dmlops.execute(desc, {"InputTensor": sets[0]}, backend="cuda")
    want_v, want_i = torch.topk(tsets[0], k, dim=1)
    assert torch.equal(torch_of(got["OutputValueTensor"]), want_v), "TOP_K values mismatch"
    # random normals: ties are rare; where a row has one, the index order may differ from torch's
    same_i = (torch_of(got["OutputIndexTensor"]).long() == want_i).float().mean().item()
    assert same_i > 0.999, f"TOP_K indices differ from torch.topk's on {1 - same_i:.4%} of the outputs"
    w = "TOP_K K=8 (65536, 1024) axis 1"
    tv = torch.empty(sizes, dtype=torch.float32, device="cuda")
    ti = torch.empty(sizes, dtype=torch.int64, device="cuda")
    peer = timed(lambda k_: torch.topk(_pick(tsets, k_), k, dim=1, out=(tv, ti)))
    record(w, "fp32", "torch.topk(out=)", peer, sets[0].nbytes)
    outs = {"OutputValueTensor": values, "OutputIndexTensor": indices}
    mine = timed(lambda k_: run_cuda(desc, {"InputTensor": _pick(sets, k_)}, outs))
    record(w, "fp32", "dmlops cuda", mine, sets[0].nbytes, peer)


def bench_reduction() -> None:
    """Every workload of the section (see the module docstring)."""
    bench_reduce()
    bench_cumsum()
    bench_top_k()
