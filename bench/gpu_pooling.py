"""GPU benchmark, the pooling section: AVERAGE_POOLING and MAX_POOLING1 against torch.

Usage (on a machine with an NVIDIA GPU, CuPy and PyTorch; bench/ on the path for bench/gpu.py)::

    PYTHONPATH=src:bench python bench/gpu_pooling.py [--quick] [--json out.json]

It measures the device copy ceiling first (bench/gpu.py's ``measure_copy``) and uses
bench/gpu.py's helpers (``timed``, ``copies``, ``record``, ``run_cuda``): "% copy" is the
floor bytes (the input read once, each output written once) over that ceiling.

Workloads, on an (N, C, H, W) = (32, 64, 112, 112) FLOAT32 and FLOAT16 tensor:

* AVERAGE_POOLING 3x3 stride 1 padding 1, IncludePadding on (torch's
  ``count_include_pad=True``: both divide by 9 here, as no window reaches past the
  padding) and off (``count_include_pad=False``: both divide by the in-bounds count),
  and 2x2 stride 2 (no padding). Target (issue 21): at least torch's speed, 1.0x.
  Also timed: ``SUM_WINDOWS`` (adjacent outputs per thread of the 2-D fast path) at 1, 2
  and 4, and the general one-thread-per-output kernel that other windows take.
* MAX_POOLING1 3x3 stride 2 padding 1 with indices (UINT32 and UINT64) against
  ``torch.max_pool2d(return_indices=True)`` (int64 indices, per plane).

Every result is checked against torch's before it is timed (values within float32 /
float16 rounding for the averages, exactly for the maxima; indices converted from
DirectML's whole-tensor flat indices to torch's per-plane ones).
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

import cupy as cp
import gpu
import torch
import torch.nn.functional as F
from gpu import _setting_us, copies, measure_copy, record, run_cuda, timed, torch_of

import dmlops
from dmlops.descs import desc_from_json

SHAPE = (32, 64, 112, 112)
TYPES = {"fp32": (cp.float32, "FLOAT32"), "fp16": (cp.float16, "FLOAT16")}


def _t(dtype: str, sizes: tuple[int, ...]) -> dict[str, Any]:
    return {"DataType": dtype, "Sizes": list(sizes)}


def _pooled(n: int, k: int, s: int, p: int) -> int:
    return (n + 2 * p - k) // s + 1


def _inputs(cdt: Any) -> tuple[list[Any], list[torch.Tensor], int]:
    """Copies of a random input (enough to defeat L2), their torch views, and their bytes."""
    nbytes = math.prod(SHAPE) * cp.dtype(cdt).itemsize
    sets = copies(lambda: cp.random.standard_normal(SHAPE, dtype=cp.float32).astype(cdt), nbytes)
    return sets, [torch_of(a) for a in sets], nbytes


def _avgpool_case(
    dtype: str, sets: list[Any], tsets: list[torch.Tensor], k: int, s: int, p: int, include: bool
) -> None:
    from dmlops.cuda import pooling as module

    cdt, dml = TYPES[dtype]
    nbytes = sets[0].nbytes
    oh = _pooled(SHAPE[2], k, s, p)
    ys = (*SHAPE[:2], oh, oh)
    desc = desc_from_json(
        "AVERAGE_POOLING",
        {
            "InputTensor": _t(dml, SHAPE),
            "OutputTensor": _t(dml, ys),
            "Strides": [s, s],
            "WindowSize": [k, k],
            "StartPadding": [p, p],
            "EndPadding": [p, p],
            "IncludePadding": include,
        },
    )
    desc.validate()
    out = cp.empty(ys, dtype=cdt)

    def torch_op(i: int) -> torch.Tensor:
        return F.avg_pool2d(tsets[i % len(tsets)], k, s, p, count_include_pad=include)

    def call(d: Any, i: int) -> Any:
        return run_cuda(d, {"InputTensor": sets[i % len(sets)]}, {"OutputTensor": out})

    got = dmlops.execute(desc, {"InputTensor": sets[0]}, outputs={"OutputTensor": out}, backend="cuda")
    want = torch_op(0).float()
    mine_f = torch_of(got["OutputTensor"]).float()
    err = float(torch.max(torch.abs(mine_f - want)))
    scale = float(torch.max(torch.abs(want)))
    # Float32 sums of the same elements (most likely in the same order): equal, or a few ulps apart.
    limit = (4e-3 if dtype == "fp16" else 1e-6) * max(scale, 1.0)
    exact = bool(torch.equal(mine_f, want))
    print(f"  avgpool {k}x{k}/s{s}/p{p} {dtype}: max |dmlops - torch| = {err:.3g} (bitwise equal: {exact})")
    if not err <= limit:
        raise AssertionError(f"AVERAGE_POOLING {k}x{k}/s{s}/p{p} {dtype}: differs from torch by {err}")
    floor = nbytes + out.nbytes
    peer = timed(torch_op)
    mine = timed(lambda i: call(desc, i))
    w = f"AvgPool 32x64x112x112 {k}x{k}/s{s}/p{p}" + (" incl pad" if include else "")
    record(w, dtype, f"torch avg_pool2d (count_include_pad={include})", peer, floor)
    record(w, dtype, f"dmlops cuda ({module.SUM_WINDOWS} outputs per thread)", mine, floor, peer)
    for m in (1, 2, 4):
        if m != module.SUM_WINDOWS:
            us = _setting_us(module, "SUM_WINDOWS", m, desc, call)
            record(w, dtype, f"dmlops cuda, {m} outputs per thread", us, floor, peer)
    us = _setting_us(module, "SUM_FAST_TYPES", (), desc, call)
    record(w, dtype, "dmlops cuda, general kernel", us, floor, peer)
    print(f"  {w} {dtype}: dmlops at {peer / mine:.2f}x torch's speed (target >= 1.0x)", flush=True)


def bench_avgpool() -> None:
    """AVERAGE_POOLING 3x3/s1/p1 (IncludePadding both ways) and 2x2/s2 against torch's avg_pool2d."""
    for dtype, (cdt, _) in TYPES.items():
        sets, tsets, _ = _inputs(cdt)
        for k, s, p, include in ((3, 1, 1, True), (3, 1, 1, False), (2, 2, 0, False)):
            _avgpool_case(dtype, sets, tsets, k, s, p, include)


def _maxpool1_case(dtype: str) -> None:
    cdt, dml = TYPES[dtype]
    sets, tsets, nbytes = _inputs(cdt)
    oh = _pooled(SHAPE[2], 3, 2, 1)
    ys = (*SHAPE[:2], oh, oh)
    want_v, want_i = F.max_pool2d(tsets[0], 3, 2, 1, return_indices=True)
    plane = torch.arange(SHAPE[0] * SHAPE[1], device=want_i.device).reshape(SHAPE[0], SHAPE[1], 1, 1)
    peer = timed(lambda i: F.max_pool2d(tsets[i % len(tsets)], 3, 2, 1, return_indices=True))
    w = "MaxPool1 with indices 32x64x112x112 3x3/s2/p1"
    record(w, dtype, "torch max_pool2d (int64 indices)", peer, nbytes + want_v.nbytes + want_i.nbytes)
    for itype, ctype in (("UINT32", cp.uint32), ("UINT64", cp.uint64)):
        desc = desc_from_json(
            "MAX_POOLING1",
            {
                "InputTensor": _t(dml, SHAPE),
                "OutputTensor": _t(dml, ys),
                "OutputIndicesTensor": _t(itype, ys),
                "Strides": [2, 2],
                "WindowSize": [3, 3],
                "StartPadding": [1, 1],
                "EndPadding": [1, 1],
            },
        )
        desc.validate()
        y, ind = cp.empty(ys, dtype=cdt), cp.empty(ys, dtype=ctype)
        outputs = {"OutputTensor": y, "OutputIndicesTensor": ind}
        dmlops.execute(desc, {"InputTensor": sets[0]}, outputs=outputs, backend="cuda")
        # Distinct random values: no ties, so both pick the same element. DirectML's indices
        # count over the whole tensor, torch's within each (n, c) plane.
        assert torch.equal(torch_of(y), want_v), f"MAX_POOLING1 {dtype}: values differ from torch"
        per_plane = torch_of(ind.astype(cp.int64)) - plane * (SHAPE[2] * SHAPE[3])
        assert torch.equal(per_plane, want_i), f"MAX_POOLING1 {dtype} {itype}: indices differ from torch"
        mine = timed(
            lambda i, desc=desc, outputs=outputs: run_cuda(desc, {"InputTensor": sets[i % len(sets)]}, outputs)
        )
        record(w, dtype, f"dmlops cuda ({itype} indices)", mine, nbytes + y.nbytes + ind.nbytes, peer)


def bench_maxpool1() -> None:
    """MAX_POOLING1 3x3/s2/p1 with UINT32 and UINT64 indices against torch.max_pool2d(return_indices=True)."""
    for dtype in TYPES:
        _maxpool1_case(dtype)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", default="", help="avgpool, maxpool1 (comma-separated; default both)")
    args = ap.parse_args()
    gpu.QUICK = args.quick
    props = cp.cuda.runtime.getDeviceProperties(0)
    gpu.L2_BYTES = int(props["l2CacheSize"])
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"device: {name}; torch {torch.__version__}, cupy {cp.__version__}", flush=True)
    measure_copy()
    only = set(filter(None, args.only.split(",")))
    for key, fn in (("avgpool", bench_avgpool), ("maxpool1", bench_maxpool1)):
        if not only or key in only:
            fn()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=name, copy_bps=gpu.COPY_BPS, rows=gpu.ROWS), f, indent=1)


if __name__ == "__main__":
    main()
