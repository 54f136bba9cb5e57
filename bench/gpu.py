"""GPU benchmark: the workloads of performance.md, dmlops (cuda) vs its peers, in one run.

Usage (on a machine with an NVIDIA GPU, CuPy, PyTorch and torchvision)::

    PYTHONPATH=src python bench/gpu.py [--quick] [--json out.json]

Every timing is the median over batches of calls bracketed by CUDA events (per-call
time = batch time / calls), after warm-up. The element-wise and SOFTMAX1 workloads time
dmlops, torch and the variants in interleaved batches (``timed_group``) and report the
median per-round ratio torch / dmlops with its interquartile range. Inputs smaller than ~3x the L2 cache are
rotated among copies so that no call reads what the previous one left in L2. The
device-to-device copy ceiling is measured in the same run; "% copy" is the workload's
floor bytes per second (each input read once, each output written once) over it.
Timed dmlops calls go through the CUDA backend's entry point (``dmlops.cuda.execute``,
what ``dmlops.execute(..., backend="cuda")`` calls after validating the desc) with
preallocated outputs, so the backend's own host overhead is included but the per-call
desc validation is not; the "latency" section reports both overheads on tiny inputs.
Every workload's result is first checked through the public ``dmlops.execute``.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import importlib
import json
import math
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import cupy as cp
import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from attributes import BILINEAR_2X, PADDING_BORDER_2
from roi_workload import roi_desc, roi_set

import dmlops
from dmlops import TensorDesc
from dmlops.descs.data_movement import GatherDesc, Slice1Desc
from dmlops.descs.pooling import MaxPoolingGradDesc
from dmlops.descs.resampling import ResampleGrad1Desc
from dmlops.descs.roi import RoiAlignDesc

ROWS: list[dict[str, Any]] = []
MAXPOOL_VARIANTS: list[str] = []
"""2-D max-pool-grad variants also timed as the default (--maxpool-variant)."""
ROI_VARIANTS: dict[str, dict[str, Any]] = {
    "general per-sample kernel (no fast path)": {"FAST_PATH": False},
    "fast kernel, image rows loaded again (FAST_KEEP_ROWS off)": {"FAST_KEEP_ROWS": False},
    "fast kernel, 16 channels per block": {"FAST_CHANNELS": 16},
}
"""Other settings of the ROI_ALIGN kernels (attributes of dmlops.cuda.roi), timed beside the default."""
L2_BYTES = 0
COPY_BPS = 0.0
QUICK = False


def timed(fn: Callable[[int], Any], *, calls: int = 10, batches: int = 15) -> float:
    """Median microseconds per call; ``fn(i)`` runs call ``i`` (rotate inputs on ``i``)."""
    if QUICK:
        calls, batches = 5, 5
    for i in range(3):
        fn(i)
    torch.cuda.synchronize()
    cp.cuda.Device().synchronize()
    stream = cp.cuda.get_current_stream()
    per_call = []
    k = 0
    for _ in range(batches):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record(stream)
        for _ in range(calls):
            fn(k)
            k += 1
        end.record(stream)
        end.synchronize()
        per_call.append(cp.cuda.get_elapsed_time(start, end) * 1000.0 / calls)
    return statistics.median(per_call)


def timed_group(fns: dict[str, Callable[[int], Any]], *, calls: int = 10, batches: int = 31) -> dict[str, list[float]]:
    """Interleaved batches: microseconds per call of every batch, per label of ``fns``.

    Each round runs one batch of ``calls`` calls of every function, back to back on the
    stream (no host wait between batches, so no batch starts on an idle GPU), CUDA events
    around each batch; the order is shuffled each round (seeded), so every function goes
    first, and follows each of the others, about equally often. Drift of clocks or
    temperature over the measurement then lands on all of them alike, and round r's times
    compare like with like: see :func:`pair_stats`. (Until run X the order rotated by one
    each round, so each function always followed the same one; the L2 state that one left
    behind moved an identical kernel by up to 0.8 % at FLOAT16.)
    """
    if QUICK:
        calls, batches = 5, 7
    labels = list(fns)
    for label in labels:
        for i in range(3):
            fns[label](i)
    torch.cuda.synchronize()
    cp.cuda.Device().synchronize()
    stream = cp.cuda.get_current_stream()
    times: dict[str, list[float]] = {label: [] for label in labels}
    k = 0
    for r in range(batches):
        order = labels[:]
        random.Random(r).shuffle(order)
        events = []
        for label in order:
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            fn = fns[label]
            for _ in range(calls):
                fn(k)
                k += 1
            end.record(stream)
            events.append((label, start, end))
        events[-1][2].synchronize()
        for label, start, end in events:
            times[label].append(cp.cuda.get_elapsed_time(start, end) * 1000.0 / calls)
    return times


def pair_stats(mine: list[float], peer: list[float]) -> tuple[float, float, float]:
    """Median and interquartile range (q1, q3) of the per-round ratios peer / mine."""
    ratios = sorted(p / m for m, p in zip(mine, peer))
    q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
    return statistics.median(ratios), q1, q3


def copies(make: Callable[[], Any], nbytes: int) -> list[Any]:
    """Enough independent copies of an input set to defeat L2 (at least 3x its size)."""
    n = max(1, math.ceil(3 * L2_BYTES / max(nbytes, 1)))
    return [make() for _ in range(min(n, 16))]


def record(
    workload: str,
    dtype: str,
    impl: str,
    us: float,
    floor_bytes: float,
    peer_us: float | None = None,
    ratio: tuple[float, float, float] | None = None,
    extra: str = "",
) -> None:
    """One printed and recorded row. ``ratio``: the interleaved measurement's median peer /
    this ratio and its interquartile range (timed_group), printed as the speedup with the
    range beside it; otherwise the speedup is the ratio of the medians ``peer_us / us``."""
    pct = 100.0 * floor_bytes / (us * 1e-6) / COPY_BPS if floor_bytes else float("nan")
    speedup = ratio[0] if ratio else (peer_us / us if peer_us else None)
    row = dict(workload=workload, dtype=dtype, impl=impl, us=us, pct_copy=pct, speedup=speedup)
    if ratio:
        row.update(ratio_q1=ratio[1], ratio_q3=ratio[2])
    ROWS.append(row)
    sp = (f"{speedup:6.3f}x" if ratio else f"{speedup:6.2f}x") if speedup else "      "
    iqr = f" [{ratio[1]:.3f}-{ratio[2]:.3f}]" if ratio else ""
    print(f"{workload:<44} {dtype:<5} {impl:<34} {us:10.1f} us {pct:6.1f}% {sp}{iqr}{extra}", flush=True)


def measure_copy() -> float:
    global COPY_BPS
    n = 1 << 28  # 1 GiB of float32
    a = cp.random.random(n, dtype=cp.float32)
    b = cp.empty_like(a)
    us = timed(lambda i: cp.copyto(b, a), calls=5, batches=9)
    COPY_BPS = 2 * a.nbytes / (us * 1e-6)
    print(f"device-to-device copy: {COPY_BPS / 1e12:.3f} TB/s (read + write), {us:.1f} us for 2 x 1 GiB", flush=True)
    return COPY_BPS


def run_cuda(desc: Any, inputs: dict[str, Any], outputs: dict[str, Any]) -> Any:
    """The CUDA backend's entry point, as ``dmlops.execute`` calls it after validating.

    Timed workloads call this so that GPU time is not hidden behind the per-call
    ``desc.validate()`` of ``dmlops.execute`` (reported separately under "latency").
    """
    from dmlops import cuda as cuda_backend
    from dmlops.enums import FeatureLevel

    return cuda_backend.execute(desc, inputs, outputs, feature_level=FeatureLevel.latest(), strict=False)


def torch_of(a: Any) -> torch.Tensor:
    return torch.from_dlpack(a)


def dt(name: str) -> tuple[Any, torch.dtype, str]:
    return {"fp32": (cp.float32, torch.float32, "FLOAT32"), "fp16": (cp.float16, torch.float16, "FLOAT16")}[name]


# -- workloads ------------------------------------------------------------------------------------


def bench_gather(dtype: str) -> None:
    cdt, _, dml = dt(dtype)
    rows, width, count = 1 << 20, 256, 1 << 20
    table = cp.random.standard_normal((rows, width), dtype=cp.float32).astype(cdt)
    rng = cp.random.default_rng(1)
    idx_pos = rng.integers(0, rows, size=count, dtype=cp.int64)
    idx_dml = idx_pos - cp.where(rng.random(count) < 0.5, rows, 0).astype(cp.int64)  # half negative
    out = cp.empty((count, width), dtype=cdt)
    desc = GatherDesc(
        input_tensor=TensorDesc(data_type=dml, sizes=(rows, width)),
        indices_tensor=TensorDesc(data_type="INT64", sizes=(1, count)),
        output_tensor=TensorDesc(data_type=dml, sizes=(count, width)),
        axis=0,
        index_dimensions=1,
    )
    idx2 = idx_dml.reshape(1, count)
    floor = 2 * out.nbytes + idx_dml.nbytes
    ref = table[idx_pos]
    got = dmlops.execute(
        desc, {"InputTensor": table, "IndicesTensor": idx2}, outputs={"OutputTensor": out}, backend="cuda"
    )
    assert cp.array_equal(got["OutputTensor"], ref), "gather mismatch"
    tt, ti, to = torch_of(table), torch_of(idx_pos), torch_of(out)
    peer = timed(lambda i: torch.index_select(tt, 0, ti, out=to))
    mine = timed(lambda i: run_cuda(desc, {"InputTensor": table, "IndicesTensor": idx2}, {"OutputTensor": out}))
    cupy_take = timed(lambda i: cp.take(table, idx_pos, axis=0, out=out))
    w = "Gather rows 1M x 256, 1M int64 idx"
    record(w, dtype, "torch.index_select(out=)", peer, floor)
    record(w, dtype, "cupy.take(out=)", cupy_take, floor)
    record(w, dtype, "dmlops cuda (half negative idx)", mine, floor, peer)


def bench_slice(dtype: str) -> None:
    cdt, _, dml = dt(dtype)
    shape = (64, 64, 128, 128)
    x = cp.random.standard_normal(shape, dtype=cp.float32).astype(cdt)
    out = cp.empty_like(x)
    rev = Slice1Desc(
        input_tensor=TensorDesc(data_type=dml, sizes=shape),
        output_tensor=TensorDesc(data_type=dml, sizes=shape),
        input_window_offsets=(0, 0, 0, 0),
        input_window_sizes=shape,
        input_window_strides=(-1, -1, -1, -1),
    )
    got = dmlops.execute(rev, {"InputTensor": x}, outputs={"OutputTensor": out}, backend="cuda")["OutputTensor"]
    assert cp.array_equal(got, x[::-1, ::-1, ::-1, ::-1]), "slice reverse mismatch"
    tx = torch_of(x)
    floor = 2 * x.nbytes
    peer = timed(lambda i: torch.flip(tx, (0, 1, 2, 3)))
    mine = timed(lambda i: run_cuda(rev, {"InputTensor": x}, {"OutputTensor": out}))
    cpy = timed(lambda i: cp.copyto(out, x[::-1, ::-1, ::-1, ::-1]))
    w = "Slice1 reverse all dims 64x64x128x128"
    record(w, dtype, "torch.flip", peer, floor)
    record(w, dtype, "cupy.copyto(reversed view)", cpy, floor)
    record(w, dtype, "dmlops cuda", mine, floor, peer)

    half = (64, 64, 64, 64)
    out2 = cp.empty(half, dtype=cdt)
    sub = Slice1Desc(
        input_tensor=TensorDesc(data_type=dml, sizes=shape),
        output_tensor=TensorDesc(data_type=dml, sizes=half),
        input_window_offsets=(0, 0, 0, 0),
        input_window_sizes=shape,
        input_window_strides=(1, 1, 2, 2),
    )
    got = dmlops.execute(sub, {"InputTensor": x}, outputs={"OutputTensor": out2}, backend="cuda")["OutputTensor"]
    assert cp.array_equal(got, x[:, :, ::2, ::2]), "slice ::2 mismatch"
    # DRAM floor: every other row read in full (32-byte sectors), output written once.
    floor2 = x.nbytes / 2 + out2.nbytes
    peer2 = timed(lambda i: tx[:, :, ::2, ::2].contiguous())
    mine2 = timed(lambda i: run_cuda(sub, {"InputTensor": x}, {"OutputTensor": out2}))
    w = "Slice1 [:, :, ::2, ::2] (floor: DRAM sectors)"
    record(w, dtype, "torch .contiguous()", peer2, floor2)
    record(w, dtype, "dmlops cuda", mine2, floor2, peer2)

    if dtype == "fp32":
        shape8 = (4, 8, 6, 8, 4, 8, 8, 24)  # 64 MiB float32
        x8 = cp.random.standard_normal(shape8, dtype=cp.float32)
        steps = (-1, 1, -2, 1, -1, 1, 2, -3)
        sizes_out = tuple(1 + (n - 1) // abs(s) for n, s in zip(shape8, steps))
        out8 = cp.empty(sizes_out, dtype=cp.float32)
        d8 = Slice1Desc(
            input_tensor=TensorDesc(data_type="FLOAT32", sizes=shape8),
            output_tensor=TensorDesc(data_type="FLOAT32", sizes=sizes_out),
            input_window_offsets=(0,) * 8,
            input_window_sizes=shape8,
            input_window_strides=steps,
        )
        view = x8[tuple(slice(None, None, s) for s in steps)]
        got = dmlops.execute(d8, {"InputTensor": x8}, outputs={"OutputTensor": out8}, backend="cuda")["OutputTensor"]
        assert cp.array_equal(got, view), "slice 8-D mismatch"
        floor8 = 2 * out8.nbytes
        cpy8 = timed(lambda i: cp.copyto(out8, view))
        mine8 = timed(lambda i: run_cuda(d8, {"InputTensor": x8}, {"OutputTensor": out8}))
        w = "Slice1 8-D mixed +-strides (64 MiB in)"
        record(w, dtype, "cupy.copyto(strided view)", cpy8, floor8)
        record(w, dtype, "dmlops cuda", mine8, floor8, cpy8)


def bench_maxpool_grad(dtype: str) -> None:
    cdt, _, dml = dt(dtype)
    xs, ys = (32, 64, 112, 112), (32, 64, 56, 56)
    x = cp.random.standard_normal(xs, dtype=cp.float32).astype(cdt)
    dy = cp.random.standard_normal(ys, dtype=cp.float32).astype(cdt)
    dx = cp.empty_like(x)
    desc = MaxPoolingGradDesc(
        input_tensor=TensorDesc(data_type=dml, sizes=xs),
        input_gradient_tensor=TensorDesc(data_type=dml, sizes=ys),
        output_gradient_tensor=TensorDesc(data_type=dml, sizes=xs),
        strides=(2, 2),
        window_size=(3, 3),
        start_padding=(1, 1),
        end_padding=(1, 1),
        dilations=(1, 1),
    )
    tx, tdy = torch_of(x), torch_of(dy)

    def torch_op(i: int) -> torch.Tensor:
        _, ind = F.max_pool2d(tx, 3, 2, 1, return_indices=True)
        return torch.ops.aten.max_pool2d_with_indices_backward(tdy, tx, [3, 3], [2, 2], [1, 1], [1, 1], False, ind)

    got = dmlops.execute(
        desc, {"InputTensor": x, "InputGradientTensor": dy}, outputs={"OutputGradientTensor": dx}, backend="cuda"
    )
    want = torch_op(0)
    err = float(torch.max(torch.abs(torch_of(got["OutputGradientTensor"]).float() - want.float())))
    print(f"  max-pool-grad {dtype}: max |dmlops - torch| = {err:.3g}", flush=True)
    floor = x.nbytes + dy.nbytes + dx.nbytes
    peer = timed(torch_op)
    mine = timed(lambda i: run_cuda(desc, {"InputTensor": x, "InputGradientTensor": dy}, {"OutputGradientTensor": dx}))
    w = "MaxPoolGrad 32x64x112x112 3x3/s2/p1"
    record(w, dtype, "torch fwd-with-indices + bwd", peer, floor)
    record(w, dtype, "dmlops cuda", mine, floor, peer)
    # --maxpool-variant: the whole operator (dmlops.execute's path) with another 2-D fast
    # path as the default, timed beside torch in the same run.
    from dmlops.cuda import pooling as mpg

    default = mpg.VARIANT
    for v in MAXPOOL_VARIANTS:
        mpg.VARIANT = v
        try:
            d2 = dataclasses.replace(desc)  # a new desc: a new plan under this variant
            inputs = {"InputTensor": x, "InputGradientTensor": dy}
            us = timed(lambda i, d2=d2: run_cuda(d2, inputs, {"OutputGradientTensor": dx}))  # noqa: B023
            record(w, dtype, f"dmlops cuda ({v} as default)", us, floor, peer)
        finally:
            mpg.VARIANT = default


def bench_resample_grad(dtype: str, mode: str) -> None:
    cdt, _, dml = dt(dtype)
    ys, xs = (32, 64, 128, 128), (32, 64, 64, 64)
    desc = ResampleGrad1Desc(
        input_gradient_tensor=TensorDesc(data_type=dml, sizes=ys),
        output_gradient_tensor=TensorDesc(data_type=dml, sizes=xs),
        interpolation_mode="LINEAR" if mode == "bilinear" else "NEAREST_NEIGHBOR",
        rounding_direction="DECREASING",
        scales=(1.0, 1.0, 2.0, 2.0),
        # torch's bilinear is half-pixel (0.5 / -0.5); its nearest is floor(o / 2): offsets 0 / 0.
        input_pixel_offsets=(0.5, 0.5, 0.5, 0.5) if mode == "bilinear" else (0.0,) * 4,
        output_pixel_offsets=(-0.5, -0.5, -0.5, -0.5) if mode == "bilinear" else (0.0,) * 4,
    )
    nbytes = int(np.prod(ys)) * cp.dtype(cdt).itemsize
    sets = copies(lambda: cp.random.standard_normal(ys, dtype=cp.float32).astype(cdt), nbytes)
    dx = cp.empty(xs, dtype=cdt)
    tsets = [torch_of(a) for a in sets]
    if mode == "bilinear":

        def torch_op(i: int) -> torch.Tensor:
            return torch.ops.aten.upsample_bilinear2d_backward(tsets[i % len(tsets)], [128, 128], list(xs), False)
    else:

        def torch_op(i: int) -> torch.Tensor:
            return torch.ops.aten.upsample_nearest2d_backward(tsets[i % len(tsets)], [128, 128], list(xs))

    got = dmlops.execute(desc, {"InputGradientTensor": sets[0]}, outputs={"OutputGradientTensor": dx}, backend="cuda")
    want = torch_op(0).float()
    rel = float(torch.linalg.norm(torch_of(got["OutputGradientTensor"]).float() - want) / torch.linalg.norm(want))
    print(f"  resample-grad {mode} {dtype}: ||dmlops - torch|| / ||torch|| = {rel:.3g}", flush=True)
    floor = nbytes + dx.nbytes
    peer = timed(torch_op)
    mine = timed(lambda i: run_cuda(desc, {"InputGradientTensor": sets[i % len(sets)]}, {"OutputGradientTensor": dx}))
    w = f"ResampleGrad {mode} 2x 32x64x128x128 -> 64x64"
    record(w, dtype, f"torch upsample_{mode}2d_backward", peer, floor)
    record(w, dtype, "dmlops cuda", mine, floor, peer)


def _setting_us(module: Any, name: str, value: Any, desc: Any, call: Callable[[Any, int], Any]) -> float:
    """Median µs of ``call(copy of desc, i)`` with ``module.<name>`` set to ``value`` (the
    copy is a new desc, so it gets a new plan under that setting)."""
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        other = dataclasses.replace(desc)
        return timed(lambda i: call(other, i))
    finally:
        setattr(module, name, saved)


def _general_kernel_us(module: Any, desc: Any, call: Callable[[Any, int], Any]) -> float:
    """Median µs of ``call(copy of desc, i)`` with ``module``'s fast path off (its FAST_TYPES
    emptied): the general kernel that other descs take, on the same workload."""
    return _setting_us(module, "FAST_TYPES", (), desc, call)


def bench_forward(dtype: str) -> None:
    """The forward operators the gradients are defined by, on the gradient workloads' tensors.

    RESAMPLE2 bilinear 2x half-pixel on workload 5's dX (32x64x64x64 -> 128x128) against
    torch's interpolate, and MAX_POOLING2 with indices on workload 4's X against torch's
    max_pool2d with indices (int64 there, UINT32 here). No targets in the issue; the floor
    is each input read once and each output written once.
    """
    from dmlops.descs.pooling import MaxPooling2Desc
    from dmlops.descs.resampling import Resample2Desc

    cdt, _, dml = dt(dtype)
    small, big = (32, 64, 64, 64), (32, 64, 128, 128)
    up = Resample2Desc(
        input_tensor=TensorDesc(data_type=dml, sizes=small),
        output_tensor=TensorDesc(data_type=dml, sizes=big),
        **BILINEAR_2X,
    )
    nbytes = int(np.prod(small)) * cp.dtype(cdt).itemsize
    sets = copies(lambda: cp.random.standard_normal(small, dtype=cp.float32).astype(cdt), nbytes)
    out = cp.empty(big, dtype=cdt)
    tsets = [torch_of(a) for a in sets]

    def torch_up(i: int) -> torch.Tensor:
        return F.interpolate(tsets[i % len(tsets)], scale_factor=2, mode="bilinear", align_corners=False)

    got = dmlops.execute(up, {"InputTensor": sets[0]}, outputs={"OutputTensor": out}, backend="cuda")["OutputTensor"]
    want = torch_up(0).float()
    rel = float(torch.linalg.norm(torch_of(got).float() - want) / torch.linalg.norm(want))
    print(f"  resample2 bilinear {dtype}: ||dmlops - torch|| / ||torch|| = {rel:.3g}", flush=True)
    floor = nbytes + out.nbytes
    peer = timed(torch_up)
    mine = timed(lambda i: run_cuda(up, {"InputTensor": sets[i % len(sets)]}, {"OutputTensor": out}))
    w = "Resample2 bilinear 2x 32x64x64x64 -> 128x128"
    record(w, dtype, "torch interpolate", peer, floor)
    record(w, dtype, "dmlops cuda", mine, floor, peer)
    # The kernel over all four axes' taps that other descs take, on the same desc.
    from dmlops.cuda import resampling as rs2

    us = _general_kernel_us(
        rs2, up, lambda d, i: run_cuda(d, {"InputTensor": sets[i % len(sets)]}, {"OutputTensor": out})
    )
    record(w, dtype, "dmlops cuda, general kernel", us, floor, peer)
    # The fast path with a thread's outputs adjacent (one vector store) instead of strided.
    us = _setting_us(
        rs2,
        "STRIDED_OUTPUTS",
        False,
        up,
        lambda d, i: run_cuda(d, {"InputTensor": sets[i % len(sets)]}, {"OutputTensor": out}),
    )
    record(w, dtype, "dmlops cuda, adjacent outputs per thread", us, floor, peer)

    xs, ys = (32, 64, 112, 112), (32, 64, 56, 56)
    pool = MaxPooling2Desc(
        input_tensor=TensorDesc(data_type=dml, sizes=xs),
        output_tensor=TensorDesc(data_type=dml, sizes=ys),
        output_indices_tensor=TensorDesc(data_type="UINT32", sizes=ys),
        strides=(2, 2),
        window_size=(3, 3),
        start_padding=(1, 1),
        end_padding=(1, 1),
        dilations=(1, 1),
    )
    x = cp.random.standard_normal(xs, dtype=cp.float32).astype(cdt)
    y, ind = cp.empty(ys, dtype=cdt), cp.empty(ys, dtype=cp.uint32)
    tx = torch_of(x)
    got = dmlops.execute(
        pool, {"InputTensor": x}, outputs={"OutputTensor": y, "OutputIndicesTensor": ind}, backend="cuda"
    )
    want_y, _ = F.max_pool2d(tx, 3, 2, 1, return_indices=True)
    err = float(torch.max(torch.abs(torch_of(got["OutputTensor"]).float() - want_y.float())))
    print(f"  max-pool2 {dtype}: max |dmlops - torch| = {err:.3g}", flush=True)
    floor = x.nbytes + y.nbytes + ind.nbytes
    peer = timed(lambda i: F.max_pool2d(tx, 3, 2, 1, return_indices=True))
    mine = timed(lambda i: run_cuda(pool, {"InputTensor": x}, {"OutputTensor": y, "OutputIndicesTensor": ind}))
    w = "MaxPool2 with indices 32x64x112x112 3x3/s2/p1"
    record(w, dtype, "torch max_pool2d (int64 indices)", peer, floor)
    record(w, dtype, "dmlops cuda (UINT32 indices)", mine, floor, peer)
    # The one-thread-per-output kernel that other windows take, on the same desc.
    from dmlops.cuda import pooling as mp2

    def pool_call(d: Any, i: int) -> Any:
        return run_cuda(d, {"InputTensor": x}, {"OutputTensor": y, "OutputIndicesTensor": ind})

    record(w, dtype, "dmlops cuda, general kernel", _general_kernel_us(mp2, pool, pool_call), floor, peer)


def bench_roi(dtype: str, sampling: int) -> None:
    cdt, tdt, dml = dt(dtype)
    desc = roi_desc(dml, sampling)
    n, c, h, w = desc.input_tensor.sizes
    r, scale = desc.output_tensor.sizes[0], desc.spatial_scale_x
    boxes = roi_set(r, scale)
    batch = np.random.default_rng(3).integers(0, n, size=r).astype(np.uint32)
    nbytes = n * c * h * w * cp.dtype(cdt).itemsize
    sets = copies(lambda: cp.random.standard_normal((n, c, h, w), dtype=cp.float32).astype(cdt), nbytes)
    rois = cp.asarray(boxes.astype(np.float32)).astype(cdt)
    bi = cp.asarray(batch)
    out = cp.empty((r, c, 7, 7), dtype=cdt)
    tboxes = torch.cat(
        [torch.from_numpy(batch.astype(np.float32))[:, None], torch.from_numpy(boxes.astype(np.float32))], 1
    )
    tboxes = tboxes.to("cuda", tdt)
    tsets = [torch_of(a) for a in sets]

    def torch_op(i: int) -> torch.Tensor:
        return torchvision.ops.roi_align(tsets[i % len(tsets)], tboxes, (7, 7), scale, sampling, aligned=True)

    def mine_op(i: int) -> Any:
        return run_cuda(
            desc,
            {"InputTensor": sets[i % len(sets)], "ROITensor": rois, "BatchIndicesTensor": bi},
            {"OutputTensor": out},
        )

    from dmlops.cuda import roi as cuda_roi
    from dmlops.enums import FeatureLevel

    def kernel_only(i: int, d: RoiAlignDesc = desc, inputs: list[Any] = sets) -> None:
        cuda_roi.run_roi_align(
            d,
            {"InputTensor": inputs[i % len(inputs)], "ROITensor": rois, "BatchIndicesTensor": bi},
            {"OutputTensor": out},
            feature_level=FeatureLevel.latest(),
            strict=False,
            check_batch_indices=False,
        )

    # The same logical tensors stored channels-last, described by NHWC strides (DML
    # tensors may carry any strides); torchvision keeps the NCHW-contiguous copies.
    nhwc = [cp.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2) for a in sets]
    desc_cl = roi_desc(dml, sampling, strides=(h * w * c, 1, w * c, c))

    def kernel_only_cl(i: int) -> None:
        kernel_only(i, desc_cl, nhwc)

    def mine_cl(i: int) -> Any:
        return run_cuda(
            desc_cl,
            {"InputTensor": nhwc[i % len(nhwc)], "ROITensor": rois, "BatchIndicesTensor": bi},
            {"OutputTensor": out},
        )

    got = dmlops.execute(
        desc,
        {"InputTensor": sets[0], "ROITensor": rois, "BatchIndicesTensor": bi},
        outputs={"OutputTensor": out},
        backend="cuda",
    )["OutputTensor"]
    want = torch_op(0).float()
    rel = float(torch.linalg.norm(torch_of(got).float() - want) / torch.linalg.norm(want))
    print(f"  roi-align sr={sampling} {dtype}: ||dmlops - torchvision|| / ||torchvision|| = {rel:.3g}", flush=True)
    got = dmlops.execute(
        desc_cl,
        {"InputTensor": nhwc[0], "ROITensor": rois, "BatchIndicesTensor": bi},
        outputs={"OutputTensor": out},
        backend="cuda",
    )["OutputTensor"]
    rel = float(torch.linalg.norm(torch_of(got).float() - want) / torch.linalg.norm(want))
    print(f"  roi-align NHWC sr={sampling} {dtype}: ||dmlops - torchvision|| / ||torchvision|| = {rel:.3g}", flush=True)
    floor = nbytes + out.nbytes
    peer = timed(torch_op, calls=5)
    mine = timed(mine_op, calls=5)
    kern = timed(kernel_only, calls=5)
    cl = timed(mine_cl, calls=5)
    cl_kern = timed(kernel_only_cl, calls=5)
    wl = f"ROI Align 1000 ROIs 7x7 {'sr=2' if sampling else 'adaptive (sr=0)'}"
    record(wl, dtype, "torchvision.ops.roi_align", peer, floor)
    record(wl, dtype, "dmlops cuda NCHW (checks batch idx)", mine, floor, peer)
    record(wl, dtype, "dmlops cuda NCHW (no idx check)", kern, floor, peer)
    record(wl, dtype, "dmlops cuda NHWC strides (checks idx)", cl, floor, peer)
    record(wl, dtype, "dmlops cuda NHWC strides (no idx check)", cl_kern, floor, peer)
    # Other block shapes of roi_align_avg, kernel only, checked against the default.
    kernel_only(0)
    default = out.copy()
    for name, knobs in ROI_VARIANTS.items():
        saved = {k: getattr(cuda_roi, k) for k in knobs}
        try:
            for k, v in knobs.items():
                setattr(cuda_roi, k, v)
            cuda_roi._PLANS.plans.clear()
            out.fill(float("nan"))
            kernel_only(0)
            err = float(cp.abs(out.astype(cp.float32) - default.astype(cp.float32)).max())
            print(f"  roi-align variant {name} sr={sampling} {dtype}: max |variant - default| = {err:.3g}", flush=True)
            record(wl, dtype, f"variant {name} (no idx check)", timed(kernel_only, calls=5), floor, peer)
        finally:
            for k, v in saved.items():
                setattr(cuda_roi, k, v)
            cuda_roi._PLANS.plans.clear()


def _pool_desc(dml: str, xs: tuple[int, ...], ys: tuple[int, ...], win: Any, st: Any, pad: Any) -> MaxPoolingGradDesc:
    return MaxPoolingGradDesc(
        input_tensor=TensorDesc(data_type=dml, sizes=xs),
        input_gradient_tensor=TensorDesc(data_type=dml, sizes=ys),
        output_gradient_tensor=TensorDesc(data_type=dml, sizes=xs),
        strides=st,
        window_size=win,
        start_padding=pad,
        end_padding=pad,
        dilations=(1, 1),
    )


def _check(name: str, got: Any, want: np.ndarray, dtype: str) -> bool:
    g = cp.asnumpy(got).astype(np.float64)
    w = np.asarray(want).astype(np.float64)
    same_nan = bool(np.array_equal(np.isnan(g), np.isnan(w)))
    same_inf = bool(np.array_equal(np.isinf(g), np.isinf(w)) and np.array_equal(g[np.isinf(w)], w[np.isinf(w)]))
    fin = np.isfinite(w)
    err = float(np.max(np.abs(g[fin] - w[fin]) / (1.0 + np.abs(w[fin])))) if fin.any() else 0.0
    ok = same_nan and same_inf and err <= (2e-6 if dtype == "fp32" else 2e-3)
    print(f"  check {name}: {'OK' if ok else 'FAIL'} (max rel err {err:.3g}, NaN/inf equal: {same_nan}/{same_inf})")
    return ok


def bench_variants() -> None:
    """The 2-D MAX_POOLING_GRAD fast paths and both RESAMPLE_GRAD1 2x kernels, side by side.

    Each variant is first checked against the NumPy reference on planes with ties, NaN
    and -inf windows (several windows, strides, paddings, odd widths), then timed on the
    benchmark workload.
    """
    from dmlops.cuda import pooling as mpg
    from dmlops.cuda import resampling as rg
    from dmlops.cuda._runtime import element_strides

    rng = np.random.default_rng(5)
    for dtype in ("fp32", "fp16"):
        cdt, _, dml = dt(dtype)
        npdt = np.float32 if dtype == "fp32" else np.float16
        for shape, win, st, pad in (
            ((2, 3, 45, 70), (3, 3), (2, 2), (1, 1)),
            ((2, 3, 45, 71), (3, 3), (2, 2), (1, 1)),
            ((2, 3, 44, 70), (2, 2), (2, 2), (0, 0)),
            ((2, 3, 45, 70), (3, 2), (1, 2), (2, 1)),
            ((1, 2, 9, 9), (3, 3), (2, 2), (0, 0)),
            # widths a multiple of 8: 16-byte row chunks (row16), rows spanning warps
            ((2, 3, 45, 72), (3, 3), (2, 2), (1, 1)),
            ((2, 3, 44, 72), (2, 2), (2, 2), (0, 0)),
            ((2, 3, 45, 72), (3, 2), (1, 2), (2, 1)),
            ((1, 2, 9, 16), (3, 3), (2, 2), (0, 0)),
            ((1, 2, 7, 520), (3, 3), (2, 2), (1, 1)),
        ):
            x = rng.integers(-3, 3, size=shape).astype(npdt)
            x[0, 0, 10:14, 30:36] = -np.inf
            x[-1, -1, 3, 4] = np.nan
            x[-1, -1, 4, 5] = np.nan
            oh = (shape[2] + 2 * pad[0] - win[0]) // st[0] + 1
            ow = (shape[3] + 2 * pad[1] - win[1]) // st[1] + 1
            dyh = rng.standard_normal((shape[0], shape[1], oh, ow)).astype(npdt)
            desc = _pool_desc(dml, shape, dyh.shape, win, st, pad)
            want = dmlops.execute(desc, {"InputTensor": x, "InputGradientTensor": dyh})["OutputGradientTensor"]
            gx, gdy = cp.asarray(x), cp.asarray(dyh)
            outs = {}
            for v in mpg.VARIANTS:
                out = outs[v] = cp.full(shape, np.nan, dtype=cdt)
                plan = mpg._plan(
                    desc,
                    gx.shape,
                    gdy.shape,
                    element_strides(gx),
                    element_strides(gdy),
                    element_strides(out),
                    gx.dtype,
                    variant=v,
                )
                mpg.launch(plan, gx, gdy, out)
                _check(f"maxpool {v} {dtype} {shape} {win}/{st}/{pad}", out, want, dtype)
            bits = {v: o.view(f"u{o.itemsize}") for v, o in outs.items()}  # NaN payloads too
            diff = [v for v in bits if not bool(cp.array_equal(bits[v], bits["two_pass4v"]))]
            print(f"  maxpool {dtype} {shape}: bitwise equal to two_pass4v: {'NOT ' + str(diff) if diff else 'all'}")
        xs, ys = (32, 64, 112, 112), (32, 64, 56, 56)
        x = cp.random.standard_normal(xs, dtype=cp.float32).astype(cdt)
        dy = cp.random.standard_normal(ys, dtype=cp.float32).astype(cdt)
        desc = _pool_desc(dml, xs, ys, (3, 3), (2, 2), (1, 1))
        floor = 2 * x.nbytes + dy.nbytes
        ref = None
        for v in mpg.VARIANTS:
            dx = cp.empty_like(x)
            plan = mpg._plan(
                desc, xs, ys, element_strides(x), element_strides(dy), element_strides(dx), x.dtype, variant=v
            )
            mpg.launch(plan, x, dy, dx)
            if ref is None:
                ref = dx.copy()
            print(f"  maxpool {v} {dtype}: equal to {mpg.VARIANTS[0]}: {bool(cp.array_equal(dx, ref))}", flush=True)
            us = timed(lambda i, plan=plan, dx=dx: mpg.launch(plan, x, dy, dx))  # noqa: B023 (called at once)
            record("MaxPoolGrad variants 3x3/s2/p1", dtype, f"dmlops {v}", us, floor)
        # Each pass alone, against its own bytes: pass 1 reads X and writes one argmax byte
        # per window, pass 2 reads those and dY and writes dX (row16: pass 1 is the default's).
        for v in ("two_pass4v", "two_pass4v_row16"):
            dx = cp.empty_like(x)
            plan = mpg._plan(
                desc, xs, ys, element_strides(x), element_strides(dy), element_strides(dx), x.dtype, variant=v
            )
            arg = cp.empty(plan.arg_count, dtype=plan.arg_dtype)
            mpg.first_pass(plan, x, arg)
            us1 = timed(lambda i, plan=plan, arg=arg: mpg.first_pass(plan, x, arg))  # noqa: B023
            us2 = timed(lambda i, plan=plan, arg=arg, dx=dx: mpg.second_pass(plan, arg, dy, dx))  # noqa: B023
            record("MaxPoolGrad passes 3x3/s2/p1", dtype, f"{v} pass 1", us1, x.nbytes + dy.size)
            record("MaxPoolGrad passes 3x3/s2/p1", dtype, f"{v} pass 2", us2, dy.size + dy.nbytes + dx.nbytes)

        # RESAMPLE_GRAD1: resample_grad_x2 vs resample_grad_hw.
        for small, offs in (
            ((2, 3, 37, 70), (0.5, -0.5)),
            ((2, 3, 32, 64), (0.5, -0.5)),
            ((1, 2, 5, 6), (0.5, -0.5)),
            ((2, 3, 37, 70), (0.0, 0.0)),
            ((2, 3, 9, 128), (0.5, -0.5)),
        ):
            big = (small[0], small[1], 2 * small[2], 2 * small[3])
            rdesc = ResampleGrad1Desc(
                input_gradient_tensor=TensorDesc(data_type=dml, sizes=big),
                output_gradient_tensor=TensorDesc(data_type=dml, sizes=small),
                interpolation_mode="LINEAR",
                rounding_direction="DECREASING",
                scales=(1.0, 1.0, 2.0, 2.0),
                input_pixel_offsets=(offs[0],) * 4,
                output_pixel_offsets=(offs[1],) * 4,
            )
            g = rng.standard_normal(big).astype(npdt)
            g[0, 0, 3, 5] = np.inf
            want = dmlops.execute(rdesc, {"InputGradientTensor": g})["OutputGradientTensor"]
            gg = cp.asarray(g)
            for use in (True, False):
                out = cp.full(small, np.nan, dtype=cdt)
                plan = rg._plan(rdesc, gg, out, element_strides(gg), element_strides(out))
                print(f"  resample x2 applies to {small} {offs}: {plan.x2 is not None}", flush=True)
                rg.launch(plan, gg, out, use_x2=use)
                _check(f"resample {'x2' if use else 'hw'} {dtype} {small} {offs}", out, want, dtype)
        ys, xs = (32, 64, 128, 128), (32, 64, 64, 64)
        rdesc = ResampleGrad1Desc(
            input_gradient_tensor=TensorDesc(data_type=dml, sizes=ys),
            output_gradient_tensor=TensorDesc(data_type=dml, sizes=xs),
            interpolation_mode="LINEAR",
            rounding_direction="DECREASING",
            scales=(1.0, 1.0, 2.0, 2.0),
            input_pixel_offsets=(0.5,) * 4,
            output_pixel_offsets=(-0.5,) * 4,
        )
        nbytes = int(np.prod(ys)) * cp.dtype(cdt).itemsize
        sets = copies(lambda: cp.random.standard_normal(ys, dtype=cp.float32).astype(cdt), nbytes)  # noqa: B023
        dx = cp.empty(xs, dtype=cdt)
        plan = rg._plan(rdesc, sets[0], dx, element_strides(sets[0]), element_strides(dx))
        outs = []
        for use in (True, False):
            rg.launch(plan, sets[0], dx, use_x2=use)
            outs.append(dx.astype(cp.float64))
            us = timed(lambda i, use=use: rg.launch(plan, sets[i % len(sets)], dx, use_x2=use))  # noqa: B023
            record(
                "ResampleGrad bilinear 2x variants", dtype, f"dmlops {'x2' if use else 'hw'}", us, nbytes + dx.nbytes
            )
        diff = float(cp.max(cp.abs(outs[0] - outs[1])))
        print(f"  resample x2 vs hw {dtype}: max |diff| = {diff:.3g}", flush=True)


def _latency_cases() -> list[tuple[str, Any, dict[str, Any], dict[str, Any], Callable[[], Any], str]]:
    """Every operator at "inference" size (performance.md workload 6), with its peer.

    Each case is (operator, desc, inputs, preallocated outputs, peer call, peer name).
    """
    from dmlops.descs.pooling import MaxPooling2Desc
    from dmlops.descs.resampling import Resample2Desc

    f32 = cp.float32
    x = cp.random.standard_normal((16, 16, 32, 32), dtype=f32)  # 1 MiB
    slice_desc = Slice1Desc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=x.shape),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=x.shape),
        input_window_offsets=(0, 0, 0, 0),
        input_window_sizes=x.shape,
        input_window_strides=(1, 1, -1, 1),
    )
    table = cp.random.standard_normal((4096, 64), dtype=f32)
    idx = cp.arange(1000, dtype=cp.int64).reshape(1, 1000)
    gather_desc = GatherDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(4096, 64)),
        indices_tensor=TensorDesc(data_type="INT64", sizes=(1, 1000)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(1000, 64)),
        axis=0,
        index_dimensions=1,
    )
    # ROI_ALIGN: 100 ROIs of the benchmark's distribution on a 1 x 256 x 50 x 50 map.
    roi = roi_desc("FLOAT32", 2)
    roi = dataclasses.replace(
        roi,
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(1, 256, 50, 50)),
        roi_tensor=TensorDesc(data_type="FLOAT32", sizes=(100, 4)),
        batch_indices_tensor=TensorDesc(data_type="UINT32", sizes=(100,)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(100, 256, 7, 7)),
    )
    fmap = cp.random.standard_normal((1, 256, 50, 50), dtype=f32)
    boxes = roi_set(100, 0.25) / 4  # the workload's boxes shrunk to the 200 x 200 image of this map
    rois = cp.asarray(boxes.astype(np.float32))
    bi = cp.zeros((100,), dtype=cp.uint32)
    tboxes = torch.cat([torch.zeros(100, 1), torch.from_numpy(boxes.astype(np.float32))], 1).cuda()
    # The pooling and resampling operators on one 8 x 64 x 28 x 28 activation.
    act_shape, pooled_shape = (8, 64, 28, 28), (8, 64, 14, 14)
    act = cp.random.standard_normal(act_shape, dtype=f32)
    pooled = cp.random.standard_normal(pooled_shape, dtype=f32)
    big = cp.random.standard_normal((8, 64, 56, 56), dtype=f32)
    window = dict(strides=(2, 2), window_size=(3, 3), start_padding=(1, 1), end_padding=(0, 0), dilations=(1, 1))
    pool_desc = MaxPooling2Desc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=act_shape),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=pooled_shape),
        output_indices_tensor=TensorDesc(data_type="UINT32", sizes=pooled_shape),
        **window,
    )
    pool_grad_desc = MaxPoolingGradDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=act_shape),
        input_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=pooled_shape),
        output_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=act_shape),
        **window,
    )
    up_desc = Resample2Desc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=act_shape),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=big.shape),
        **BILINEAR_2X,
    )
    up_grad_desc = ResampleGrad1Desc(
        input_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=big.shape),
        output_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=act_shape),
        **BILINEAR_2X,
    )
    tx, tt, ti = torch_of(x), torch_of(table), torch_of(idx.reshape(-1))
    tmap, tact, tpooled, tbig = torch_of(fmap), torch_of(act), torch_of(pooled), torch_of(big)

    def pool_grad_peer() -> Any:
        _, ind = F.max_pool2d(tact, 3, 2, 1, return_indices=True)
        return torch.ops.aten.max_pool2d_with_indices_backward(
            tpooled, tact, [3, 3], [2, 2], [1, 1], [1, 1], False, ind
        )

    empty = cp.empty_like
    return [
        (
            "SLICE1 reverse 1 MiB",
            slice_desc,
            {"InputTensor": x},
            {"OutputTensor": empty(x)},
            lambda: torch.flip(tx, (2,)),
            "torch.flip",
        ),
        (
            "GATHER 1k rows of 64",
            gather_desc,
            {"InputTensor": table, "IndicesTensor": idx},
            {"OutputTensor": cp.empty((1000, 64), dtype=f32)},
            lambda: torch.index_select(tt, 0, ti),
            "torch.index_select",
        ),
        (
            "ROI_ALIGN 100 ROIs sr=2 (checks batch idx)",
            roi,
            {"InputTensor": fmap, "ROITensor": rois, "BatchIndicesTensor": bi},
            {"OutputTensor": cp.empty((100, 256, 7, 7), dtype=f32)},
            lambda: torchvision.ops.roi_align(tmap, tboxes, (7, 7), 0.25, 2, aligned=True),
            "torchvision roi_align",
        ),
        (
            "MAX_POOLING2 8x64x28x28 3x3/s2 (+indices)",
            pool_desc,
            {"InputTensor": act},
            {"OutputTensor": empty(pooled), "OutputIndicesTensor": cp.empty(pooled_shape, dtype=cp.uint32)},
            lambda: F.max_pool2d(tact, 3, 2, 1, return_indices=True),
            "torch max_pool2d (+indices)",
        ),
        (
            "MAX_POOLING_GRAD 8x64x28x28 3x3/s2",
            pool_grad_desc,
            {"InputTensor": act, "InputGradientTensor": pooled},
            {"OutputGradientTensor": empty(act)},
            pool_grad_peer,
            "torch fwd-with-indices + bwd",
        ),
        (
            "RESAMPLE2 bilinear 2x 8x64x28x28",
            up_desc,
            {"InputTensor": act},
            {"OutputTensor": empty(big)},
            lambda: F.interpolate(tact, scale_factor=2, mode="bilinear", align_corners=False),
            "torch interpolate",
        ),
        (
            "RESAMPLE_GRAD1 bilinear 2x 8x64x56x56",
            up_grad_desc,
            {"InputGradientTensor": big},
            {"OutputGradientTensor": empty(act)},
            lambda: torch.ops.aten.upsample_bilinear2d_backward(tbig, [56, 56], list(act_shape), False),
            "torch upsample_bilinear2d_backward",
        ),
    ]


def _elementwise_latency_cases() -> list[tuple[str, Any, dict[str, Any], dict[str, Any], Callable[[], Any], str]]:
    """Issue 20's element-wise workloads at 1,000 FLOAT32 elements, each with torch's same operation.

    Both sides write into preallocated outputs (torch through ``out=`` or an in-place op),
    so each call is one kernel on each side but ADD1 + RELU (torch: add, then relu_).
    """
    n = 1000
    a = cp.random.standard_normal(n, dtype=cp.float32)
    b = cp.random.standard_normal(n, dtype=cp.float32)
    ta, tb = torch_of(a), torch_of(b)
    to = torch.empty_like(ta)
    one = ("InputTensor",)
    two = ("ATensor", "BTensor")
    cases: list[tuple[str, str, tuple[str, ...], dict[str, Any], Callable[[], Any], str]] = [
        ("IDENTITY", "ELEMENT_WISE_IDENTITY", one, {}, lambda: to.copy_(ta), "copy_"),
        ("ABS", "ELEMENT_WISE_ABS", one, {}, lambda: torch.abs(ta, out=to), "torch.abs out="),
        ("EXP", "ELEMENT_WISE_EXP", one, {}, lambda: torch.exp(ta, out=to), "torch.exp out="),
        ("SIGMOID", "ACTIVATION_SIGMOID", one, {}, lambda: torch.sigmoid(ta, out=to), "torch.sigmoid out="),
        ("GELU", "ACTIVATION_GELU", one, {}, lambda: F.gelu(ta), "F.gelu"),
        ("ADD", "ELEMENT_WISE_ADD", two, {}, lambda: torch.add(ta, tb, out=to), "torch.add out="),
        ("MULTIPLY", "ELEMENT_WISE_MULTIPLY", two, {}, lambda: torch.mul(ta, tb, out=to), "torch.mul out="),
        ("MAX", "ELEMENT_WISE_MAX", two, {}, lambda: torch.maximum(ta, tb, out=to), "torch.maximum out="),
        (
            "ADD1 + fused RELU",
            "ELEMENT_WISE_ADD1",
            two,
            {"FusedActivation": {"Type": "ACTIVATION_RELU"}},
            lambda: torch.add(ta, tb, out=to).relu_(),
            "torch.add out= + relu_",
        ),
    ]
    out = []
    for label, op, members, attrs, peer, peer_name in cases:
        desc = _ew_desc(op, "FLOAT32", members, [n], **attrs)
        inputs = dict(zip(members, (a, b)))
        result = {"OutputTensor": cp.empty(n, dtype=cp.float32)}
        out.append((f"{label} 1k FLOAT32", desc, inputs, result, peer, peer_name))
    from dmlops.descs import desc_from_json

    rows, cols = 10, 100  # broadcast ADD: (10, 100) + one row of 100 (stride 0)
    body = {
        "ATensor": {"DataType": "FLOAT32", "Sizes": [rows, cols]},
        "BTensor": {"DataType": "FLOAT32", "Sizes": [rows, cols], "Strides": [0, 1]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [rows, cols]},
    }
    bcast = desc_from_json("ELEMENT_WISE_ADD", body)
    bcast.validate()
    a2, row, o2 = a.reshape(rows, cols), b[:cols], cp.empty((rows, cols), dtype=cp.float32)
    ta2, trow, to2 = torch_of(a2), torch_of(row), torch_of(o2)
    out.append(
        (
            "ADD broadcast (10, 100) + (1, 100)",
            bcast,
            # the row as a 0-strided view of BTensor's Sizes (the flat 100-element buffer
            # works too, through the general binding: about 15 us more per call)
            {"ATensor": a2, "BTensor": cp.broadcast_to(row, (rows, cols))},
            {"OutputTensor": o2},
            lambda: torch.add(ta2, trow, out=to2),
            "torch.add out=",
        )
    )
    soft = _ew_desc("ACTIVATION_SOFTMAX1", "FLOAT32", ("InputTensor",), [1, n], Axes=[1])
    x2, ts = a.reshape(1, n), torch.empty((1, n), device="cuda")
    tx2 = torch_of(x2)
    out.append(
        (
            "SOFTMAX1 (1, 1000) last axis",
            soft,
            {"InputTensor": x2},
            {"OutputTensor": cp.empty((1, n), dtype=cp.float32)},
            lambda: torch.softmax(tx2, 1, out=ts),
            "torch.softmax out=",
        )
    )
    return out


def _wall_us(fn: Callable[[], Any]) -> float:
    """Median wall-clock microseconds per call over 7 runs of 2000 back-to-back calls."""
    for _ in range(200):
        fn()
    cp.cuda.Device().synchronize()
    torch.cuda.synchronize()
    runs = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(2000):
            fn()
        cp.cuda.Device().synchronize()
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - t0) / 2000 * 1e6)
    return statistics.median(runs)


def _host_us(fns: dict[str, Callable[[], Any]], rounds: int = 21) -> dict[str, float]:
    """Median host microseconds per call of each function: 200 calls queued back to back, not waited for.

    This is the host overhead per call: the time the caller's thread spends in it. (A
    call that waits for the GPU itself, as ROI_ALIGN's batch-index check does, includes
    that wait.) 200 tiny launches stay well inside the driver's launch queue. The
    functions take turns, one batch each per round, so that a stretch of interference
    from other tenants of the host spreads over all of them instead of one.
    """
    for fn in fns.values():
        for _ in range(200):
            fn()
    runs: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            cp.cuda.Device().synchronize()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(200):
                fn()
            runs[name].append((time.perf_counter() - t0) / 200 * 1e6)
    cp.cuda.Device().synchronize()
    torch.cuda.synchronize()
    return {name: statistics.median(r) for name, r in runs.items()}


def _idle_host_us(fns: dict[str, Callable[[], Any]], rounds: int = 21, calls: int = 20) -> dict[str, float]:
    """Median host microseconds of one call made with the GPU idle (synchronized before it).

    The call's own cost with nothing queued ahead of it: for a call that waits for the GPU
    (ROI_ALIGN's batch-index check) that is its host work plus one round trip to the GPU,
    not the GPU time of earlier calls. Functions take turns, one batch of ``calls`` each per round.
    """
    runs: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            for _ in range(calls):
                cp.cuda.Device().synchronize()
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                fn()
                runs[name].append((time.perf_counter() - t0) * 1e6)
    cp.cuda.Device().synchronize()
    torch.cuda.synchronize()
    return {name: statistics.median(r) for name, r in runs.items()}


def _graph_gpu_us(fn: Callable[[], Any], calls: int = 20) -> float:
    """GPU microseconds per call with no host in the way: ``calls`` calls captured in a
    CUDA graph on a CuPy stream, the graph replayed between CUDA events."""
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        fn()  # plans and kernels are made outside the capture
        stream.synchronize()
        stream.begin_capture()
        for _ in range(calls):
            fn()
        graph = stream.end_capture()
        per_call = []
        for _ in range(9):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            graph.launch(stream)
            end.record(stream)
            end.synchronize()
            per_call.append(cp.cuda.get_elapsed_time(start, end) * 1000.0 / calls)
    return statistics.median(per_call)


def bench_latency() -> None:
    """Host overhead per call on tiny inputs (performance.md workload 6), every operator.

    Per operator: the host time per call of ``dmlops.execute`` and of the backend's entry
    point (``dmlops.cuda.execute``, no desc validation), queued back to back and not
    waited for, every operator's and peer's batches taking turns; the host time of one
    call made with the GPU idle (the call's own cost, where a queued call that waits for
    the GPU also waits for the calls queued before it); the GPU time per call
    (replayed from a CUDA graph, so no host time is in it; ROI_ALIGN's kernel without the
    batch-index check, which waits for the GPU and cannot be captured); and the wall
    clock per call of 2000 back-to-back calls. The peer gets the host and wall times.
    ROI_ALIGN's call waits for its batch-index check (ruling 3), so its host time
    includes that wait.
    """
    from dmlops import cuda as cuda_backend
    from dmlops.cuda import roi as cuda_roi
    from dmlops.enums import FeatureLevel

    level = FeatureLevel.latest()
    # the compiled launch path (dmlops.cuda._fastlaunch): whether it runs here, else why not
    try:
        from dmlops.cuda import _fastlaunch

        fast = _fastlaunch.status()
    except ImportError:  # a tree from before it
        fast = {"active": False, "reason": "not in this tree"}
    print(f"\ncompiled launch path: {fast}")
    print(
        "per call on tiny inputs, µs (host: queued back to back; idle: one call, the GPU idle before it; "
        "GPU: CUDA graph replay; wall: back to back):"
    )
    print(
        f"  {'operator':<44} {'host':>7} {'idle':>7} {'host*':>7} {'GPU':>7} {'wall':>7} | {'peer host':>9} "
        f"{'idle':>7} {'wall':>7}  "
        "peer   (* the backend's entry point, without desc validation)",
        flush=True,
    )
    cases = _latency_cases() + _elementwise_latency_cases()
    calls: dict[str, Callable[[], Any]] = {}
    gpu_us: dict[str, float] = {}
    wall: dict[str, float] = {}
    for name, desc, inputs, outputs, peer, _ in cases:

        def public(desc: Any = desc, inputs: Any = inputs, outputs: Any = outputs) -> Any:
            return dmlops.execute(desc, inputs, outputs=outputs, backend="cuda")

        def backend(desc: Any = desc, inputs: Any = inputs, outputs: Any = outputs) -> Any:
            return cuda_backend.execute(desc, inputs, outputs, feature_level=level, strict=False)

        def unchecked(desc: Any = desc, inputs: Any = inputs, outputs: Any = outputs) -> None:
            cuda_roi.run_roi_align(desc, inputs, outputs, feature_level=level, strict=False, check_batch_indices=False)

        try:
            gpu_us[name] = _graph_gpu_us(unchecked if name.startswith("ROI_ALIGN") else backend)
            wall[name] = _wall_us(public)
            wall[f"peer {name}"] = _wall_us(peer)
        except Exception as exc:  # one broken case must not hide the others
            print(f"  {name:<44} failed: {type(exc).__name__}: {exc}", flush=True)
            continue
        calls.update({name: public, f"backend {name}": backend, f"peer {name}": peer})
    empty_src, empty_dst = cp.zeros(1, dtype=cp.float32), cp.zeros(1, dtype=cp.float32)
    calls["empty"] = lambda: cp.copyto(empty_dst, empty_src)
    host = _host_us(calls)
    idle = _idle_host_us(calls)
    for name, _, _, _, _, peer_name in cases:
        if name not in gpu_us:
            continue
        for impl, value in (
            ("host", host[name]),
            ("host, GPU idle before the call", idle[name]),
            ("host, backend entry point", host[f"backend {name}"]),
            ("gpu (graph replay)", gpu_us[name]),
            ("wall back to back", wall[name]),
            (f"peer {peer_name} host", host[f"peer {name}"]),
            (f"peer {peer_name} host, GPU idle before the call", idle[f"peer {name}"]),
            (f"peer {peer_name} wall back to back", wall[f"peer {name}"]),
        ):
            ROWS.append(
                dict(workload=f"latency {name}", dtype="fp32", impl=impl, us=value, pct_copy=None, speedup=None)
            )
        print(
            f"  {name:<44} {host[name]:7.2f} {idle[name]:7.2f} {host[f'backend {name}']:7.2f} {gpu_us[name]:7.2f} "
            f"{wall[name]:7.2f} | {host[f'peer {name}']:9.2f} {idle[f'peer {name}']:7.2f} {wall[f'peer {name}']:7.2f}  "
            f"{peer_name}",
            flush=True,
        )
    ROWS.append(
        dict(
            workload="latency empty cupy launch",
            dtype="fp32",
            impl="host",
            us=host["empty"],
            pct_copy=None,
            speedup=None,
        )
    )
    print(f"  {'an empty CuPy launch (cupy.copyto of 4 B)':<44} {host['empty']:7.2f}", flush=True)


# -- element-wise family (issue 20) -------------------------------------------------------------

EW_N = 1 << 26
"""64M elements: far beyond L2, so one input set is never re-read from cache."""


def _ew_desc(op: str, dml: str, members: tuple[str, ...], sizes: list[int], **attrs: Any) -> Any:
    from dmlops.descs import desc_from_json

    body: dict[str, Any] = {m: {"DataType": dml, "Sizes": sizes} for m in (*members, "OutputTensor")}
    body.update(attrs)
    desc = desc_from_json(op, body)
    desc.validate()
    return desc


def _ew_check(name: str, got: Any, want: torch.Tensor, dtype: str) -> None:
    """dmlops against torch (the same function up to rounding); a mismatch stops the workload."""
    g = torch_of(got).float()
    w = want.float()
    tol = 2e-3 if dtype == "fp16" else 2e-5
    if not torch.allclose(g, w, rtol=tol, atol=tol, equal_nan=True):
        bad = (g - w).abs().max().item()
        raise AssertionError(f"{name}: dmlops and torch differ by up to {bad}")


_SHAPES = {f"contiguous kernel block {b}, {v} vectors": {"CONTIG_SHAPE": (b, v)} for b, v in ((128, 1), (256, 2))}
_PAIRS_OFF = {"FLOAT16 element by element (HALF_PAIRS off)": {"HALF_PAIRS": False}}
_EVERY_SIZE = (1, 2, 4, 8)
_PLAIN = {"plain loads and stores (no CONTIG_HINTS, before run W)": {"CONTIG_HINTS": {}}}
_STREAMING = {"streaming loads and stores (ld/st.global.cs)": {"CONTIG_HINTS": dict.fromkeys(_EVERY_SIZE, 3)}}
_UNCAPPED = {"every block resident (no CONTIG_RESIDENT, before run X)": {"CONTIG_RESIDENT": {}}}
EW_VARIANT_CASES: dict[tuple[str, str], dict[str, dict[str, Any]]] = {
    ("ELEMENT_WISE_IDENTITY", "fp32"): _SHAPES,
    ("ELEMENT_WISE_ADD", "fp32"): {**_UNCAPPED, **_SHAPES},
    ("ELEMENT_WISE_MULTIPLY", "fp32"): _UNCAPPED,
    ("ELEMENT_WISE_MAX", "fp32"): _UNCAPPED,
    ("ELEMENT_WISE_ADD1", "fp32"): _UNCAPPED,
    ("ACTIVATION_SIGMOID", "fp16"): _SHAPES,
    ("ELEMENT_WISE_ADD", "fp16"): {**_UNCAPPED, **_PAIRS_OFF},
    ("ELEMENT_WISE_MULTIPLY", "fp16"): {**_UNCAPPED, **_PAIRS_OFF},
    ("ELEMENT_WISE_MAX", "fp16"): _UNCAPPED,
    ("ELEMENT_WISE_ADD1", "fp16"): _UNCAPPED,
}
"""Workloads also timed with other settings (attributes of dmlops.cuda.elementwise); every
64M contiguous workload also with _PLAIN (the contiguous kernel without cache hints), the
FLOAT32 ones with _STREAMING (with them, as FLOAT16 runs by default); the two-input ones
without the occupancy cap (_UNCAPPED)."""
EW_EXPLORE: dict[str, dict[str, Any]] = {
    **{
        f"contiguous kernel block {b}, {v} vectors": {"CONTIG_SHAPE": (b, v)}
        for b, v in ((128, 1), (128, 2), (256, 2), (512, 1))
    },
    "streaming loads only (ld.global.cs)": {"CONTIG_HINTS": dict.fromkeys(_EVERY_SIZE, 1)},
    "streaming stores only (st.global.cs)": {"CONTIG_HINTS": dict.fromkeys(_EVERY_SIZE, 2)},
}
"""With --ew-explore: the settings timed on every contiguous workload, beside EW_VARIANT_CASES.
Torch's vectorized kernel (ncu, run W) takes 128 threads a block and 8 elements a thread:
block 128 with 2 vectors at FLOAT32, 1 vector at FLOAT16."""
EW_EXPLORE_ON = False


def _every_case(value: int) -> dict[tuple[int, int], int]:
    """A CONTIG_RESIDENT table giving ``value`` for every element size and arity."""
    return {(size, arity): value for size in _EVERY_SIZE for arity in (1, 2, 3)}


EW_OCCUPANCY: dict[str, dict[str, Any]] = {
    **{
        f"at most {k} blocks of 256 per SM (shared memory)": {
            "CONTIG_RESIDENT": _every_case(k),
            "RESIDENT_FUNCTORS": None,
        }
        for k in (4, 5, 6)
    },
    **{
        f"block 128, at most {k} per SM (shared memory)": {
            "CONTIG_SHAPE": (128, 1),
            "CONTIG_RESIDENT": _every_case(k),
            "RESIDENT_FUNCTORS": None,
        }
        for k in (10, 12)
    },
    "L2::256B prefetch hint on loads, streaming": {"CONTIG_HINTS": dict.fromkeys(_EVERY_SIZE, 7)},
    "L2::256B prefetch hint on loads, plain": {"CONTIG_HINTS": dict.fromkeys(_EVERY_SIZE, 4)},
}
"""With --ew-occupancy (run X): settings that change the contiguous kernel's memory-level
behaviour, timed on every contiguous workload. Torch's FLOAT16 binary kernel runs at 64 %
achieved occupancy, ours at 82 % (run W): a cap by shared memory reserved per block and
the L2 prefetch-size hint (a grid-stride form over a fixed grid, 5-16 % slower in run X, was
removed)."""
EW_OCCUPANCY_ON = False

BROADCAST_VARIANTS: dict[str, dict[str, Any]] = {
    "ew_strided (ROWS_2D = 0, before run V)": {"ROWS_2D": 0, "HALF_PAIRS": False},
    "ew_strided, FLOAT16 pairs": {"ROWS_2D": 0},
    "ew_rows2d, 2 vectors a thread": {"ROWS_2D": 2},
    "ew_rows2d, 4 vectors a thread": {"ROWS_2D": 4},
    "ew_rows2d, FLOAT16 element by element": {"HALF_PAIRS": False},
}
"""The broadcast ADD's other settings, timed beside the default."""


def _with_settings(desc: Any, settings: dict[str, Any], inputs: dict[str, Any], out: Any) -> Callable[[int], Any]:
    """A call of ``desc`` under ``settings`` (attributes of dmlops.cuda.elementwise, set
    around each call), through a copy of the desc: plans are cached per desc identity, so
    the copy keeps the launch these settings chose beside the default's."""
    from dmlops.cuda import elementwise as ew

    own = copy.copy(desc)
    names = list(settings)

    def call(i: int) -> Any:
        saved = [getattr(ew, k) for k in names]
        for k in names:
            setattr(ew, k, settings[k])
        try:
            return run_cuda(own, inputs, {"OutputTensor": out})
        finally:
            for k, v in zip(names, saved):
                setattr(ew, k, v)

    return call


def _same_bits(a: Any, b: Any) -> bool:
    view = {1: cp.uint8, 2: cp.uint16, 4: cp.uint32, 8: cp.uint64}[a.dtype.itemsize]
    return bool(cp.array_equal(a.view(view), b.view(view)))


def _ew_compare(
    w: str,
    dtype: str,
    desc: Any,
    inputs: dict[str, Any],
    out: Any,
    floor: float,
    peer_label: str,
    peer: Callable[[], Any],
    variants: dict[str, dict[str, Any]],
) -> None:
    """dmlops (``desc`` into ``out``), its ``variants`` and torch's ``peer`` in interleaved
    batches (timed_group); every variant first checked bit for bit against the default."""
    mine = lambda i: run_cuda(desc, inputs, {"OutputTensor": out})  # noqa: E731
    mine(0)
    ref = out.copy()
    fns: dict[str, Callable[[int], Any]] = {"peer": lambda i: peer(), "mine": mine}
    for label, settings in variants.items():
        if dtype == "fp32" and list(settings) == ["HALF_PAIRS"]:
            continue  # the same kernel as the default
        fn = _with_settings(desc, settings, inputs, out)
        out.fill(0)
        fn(0)
        if not _same_bits(out, ref):
            print(f"!! {w} {dtype} variant {label}: other bits than the default", flush=True)
            continue
        fns[f"variant: {label}"] = fn
    times = timed_group(fns)
    med = {k: statistics.median(v) for k, v in times.items()}
    record(w, dtype, peer_label, med["peer"], floor)
    record(w, dtype, "dmlops cuda", med["mine"], floor, ratio=pair_stats(times["mine"], times["peer"]))
    for label in fns:
        if label.startswith("variant: "):
            r, q1, q3 = pair_stats(times[label], times["mine"])
            extra = f"  vs default {r:.3f}x [{q1:.3f}-{q3:.3f}]"
            record(w, dtype, label, med[label], floor, ratio=pair_stats(times[label], times["peer"]), extra=extra)
            ROWS[-1].update(vs_default=r, vs_default_q1=q1, vs_default_q3=q3)


_KERNEL_COPY = {"DRIVER_COPY_MIN_BYTES": 1 << 62}
"""IDENTITY on the contiguous kernel, not the driver's copy (the default since run Z)."""


def _contig_variants(op: str, dtype: str) -> dict[str, dict[str, Any]]:
    streaming = _STREAMING if dtype == "fp32" else {}  # FLOAT16's default streams already
    found = {**_PLAIN, **streaming, **EW_VARIANT_CASES.get((op, dtype), {})}
    if EW_EXPLORE_ON:
        found.update(EW_EXPLORE)
    if EW_OCCUPANCY_ON:
        found.update(EW_OCCUPANCY)
    if op == "ELEMENT_WISE_IDENTITY":  # the kernel's settings on the kernel, and the kernel as it runs by default
        kernel = {"contiguous kernel (no driver copy, before run Z)": dict(_KERNEL_COPY)}
        found = {**kernel, **{f"kernel, {k}": {**v, **_KERNEL_COPY} for k, v in found.items()}}
    return found


def bench_elementwise(dtype: str) -> None:
    """64M-element contiguous IDENTITY ... ADD1+RELU, broadcast ADD; floor: inputs read + output written once.

    dmlops and torch (and the variants) run in interleaved batches (timed_group); the
    speedup is the median of the per-round ratios torch / dmlops, its interquartile range
    beside it."""
    cdt, _, dml = dt(dtype)
    n = EW_N
    a = cp.random.standard_normal(n, dtype=cp.float32).astype(cdt)
    b = cp.random.standard_normal(n, dtype=cp.float32).astype(cdt)
    out = cp.empty(n, dtype=cdt)
    ta, tb, to = torch_of(a), torch_of(b), torch_of(out)
    unary: list[tuple[str, Callable[[], Any], Any]] = [
        ("ELEMENT_WISE_IDENTITY", lambda: to.copy_(ta), ta),
        ("ELEMENT_WISE_ABS", lambda: torch.abs(ta, out=to), torch.abs(ta)),
        ("ELEMENT_WISE_EXP", lambda: torch.exp(ta, out=to), torch.exp(ta)),
        ("ACTIVATION_SIGMOID", lambda: torch.sigmoid(ta, out=to), torch.sigmoid(ta)),
        ("ACTIVATION_GELU", lambda: F.gelu(ta), F.gelu(ta)),
    ]
    for op, peer_fn, want in unary:
        desc = _ew_desc(op, dml, ("InputTensor",), [n])
        got = run_cuda(desc, {"InputTensor": a}, {"OutputTensor": out})["OutputTensor"]
        _ew_check(op, got, want, dtype)
        w = f"{op.split('_', 2)[-1] if op.startswith('ELEMENT') else op.split('_', 1)[1]} 64M contiguous"
        _ew_compare(
            w, dtype, desc, {"InputTensor": a}, out, 2 * out.nbytes, "torch", peer_fn, _contig_variants(op, dtype)
        )
    binary: list[tuple[str, dict[str, Any], Callable[[], Any], Any]] = [
        ("ELEMENT_WISE_ADD", {}, lambda: torch.add(ta, tb, out=to), ta + tb),
        ("ELEMENT_WISE_MULTIPLY", {}, lambda: torch.mul(ta, tb, out=to), ta * tb),
        ("ELEMENT_WISE_MAX", {}, lambda: torch.maximum(ta, tb, out=to), torch.maximum(ta, tb)),
        (
            "ELEMENT_WISE_ADD1",
            {"FusedActivation": {"Type": "ACTIVATION_RELU"}},
            lambda: torch.add(ta, tb, out=to).relu_(),
            torch.relu(ta + tb),
        ),
    ]
    for op, attrs, peer_fn, want in binary:
        desc = _ew_desc(op, dml, ("ATensor", "BTensor"), [n], **attrs)
        inputs = {"ATensor": a, "BTensor": b}
        got = run_cuda(desc, inputs, {"OutputTensor": out})["OutputTensor"]
        _ew_check(op, got, want, dtype)
        w = f"{op.split('_', 2)[-1]}{' + fused RELU' if attrs else ''} 64M contiguous"
        peer_label = "torch" + (" add + relu_" if attrs else "")
        _ew_compare(w, dtype, desc, inputs, out, 3 * out.nbytes, peer_label, peer_fn, _contig_variants(op, dtype))
    # broadcast ADD: (8192, 8192) + a row broadcast along the first axis (stride 0)
    rows, cols = 8192, n // 8192
    row = b[:cols]
    from dmlops.descs import desc_from_json

    body = {
        "ATensor": {"DataType": dml, "Sizes": [rows, cols]},
        "BTensor": {"DataType": dml, "Sizes": [rows, cols], "Strides": [0, 1]},
        "OutputTensor": {"DataType": dml, "Sizes": [rows, cols]},
    }
    desc = desc_from_json("ELEMENT_WISE_ADD", body)
    desc.validate()
    a2, o2 = a.reshape(rows, cols), out.reshape(rows, cols)
    inputs = {"ATensor": a2, "BTensor": row}
    got = run_cuda(desc, inputs, {"OutputTensor": o2})["OutputTensor"]
    _ew_check("broadcast ADD", got, torch_of(a2) + torch_of(row), dtype)
    tr, to2 = torch_of(row), torch_of(o2)
    ta2 = torch_of(a2)
    floor = 2 * out.nbytes + row.nbytes
    w = "ADD broadcast (8192, 8192) + (1, 8192)"
    _ew_compare(w, dtype, desc, inputs, o2, floor, "torch", lambda: torch.add(ta2, tr, out=to2), BROADCAST_VARIANTS)


def bench_softmax(rows: int = 65536, cols: int = 1024) -> None:
    """SOFTMAX1 over the last axis of (rows, cols) FLOAT32; floor: read once, write once.

    Rows of up to ROW_WARP_MAX are also timed on the other row kernel (one block a row);
    longer ones run in chunks are also timed on a block a row reading the row three times,
    and those run on a wide block (the row in registers) also in chunks."""
    from dmlops.cuda import elementwise as ew

    x = cp.random.standard_normal((rows, cols), dtype=cp.float32) * 4
    out = cp.empty_like(x)
    desc = _ew_desc("ACTIVATION_SOFTMAX1", "FLOAT32", ("InputTensor",), [rows, cols], Axes=[1])
    tx = torch_of(x)
    got = run_cuda(desc, {"InputTensor": x}, {"OutputTensor": out})["OutputTensor"]
    _ew_check("SOFTMAX1", got, torch.softmax(tx, -1), "fp32")
    w = f"SOFTMAX1 last axis ({rows}, {cols})"
    mine = lambda i: run_cuda(desc, {"InputTensor": x}, {"OutputTensor": out})  # noqa: E731
    variants = {"peer": lambda i: torch.softmax(tx, -1), "mine": mine}
    other: dict[str, dict[str, Any]] = {}
    if cols <= 1024:
        other = {
            "a block per row" if ew.ROW_WARP_MAX else "a warp per row": {"ROW_WARP_MAX": 0 if ew.ROW_WARP_MAX else 1024}
        }
    else:  # the long rows' default against the other long-row kernel
        default = ew.row_kernel(0, rows, cols)
        if default == "chunks":
            other = {"a block per row, read again": {"ROW_CHUNKS": False, "ROW_WIDE_ROWS": 1 << 62}}
        elif default == "wide":
            other = {"in chunks": {"ROW_WIDE_ROWS": 1 << 62}}
    if other:
        # the other row kernel sums in another order: checked against torch, not bit for bit
        variants["other"] = _with_settings(desc, next(iter(other.values())), {"InputTensor": x}, out)
        again = variants["other"](0)["OutputTensor"]
        _ew_check("SOFTMAX1 (the other row kernel)", again, torch.softmax(tx, -1), "fp32")
    times = timed_group(variants)
    med = {k: statistics.median(v) for k, v in times.items()}
    record(w, "fp32", "torch.softmax", med["peer"], 2 * out.nbytes)
    record(w, "fp32", "dmlops cuda", med["mine"], 2 * out.nbytes, ratio=pair_stats(times["mine"], times["peer"]))
    if other:
        r, q1, q3 = pair_stats(times["other"], times["mine"])
        record(
            w,
            "fp32",
            f"variant: {next(iter(other))}",
            med["other"],
            2 * out.nbytes,
            ratio=pair_stats(times["other"], times["peer"]),
            extra=f"  vs default {r:.3f}x [{q1:.3f}-{q3:.3f}]",
        )


TABLE_VARIANTS: dict[str, dict[str, Any]] = {
    "not widened (WIDEN_BYTES = 0, before run G)": {"WIDEN_BYTES": 0},
    "64 blocks per SM": {"BLOCKS_PER_SM": 64, "NARROW_BLOCKS_PER_SM": 64},
}
"""Other settings of the separable gathers' kernel (attributes of dmlops.cuda._table_copy),
timed beside the default on PADDING, DEPTH_TO_SPACE and TILE (a setting the module lacks is skipped).
Dropped after they were timed (docs/performance.md, runs A2, 52, 55 and G): 32 and 8 bytes a
thread, 8-byte groups, 16 and 128 blocks per SM (128 is the default); widening to 4 bytes at
most (WIDEN_BYTES = 4), FLOAT32 widened too (WIDEN_ITEMS_BELOW = 8), E = 4 for 8-byte elements."""
TILE_VARIANTS: dict[str, dict[str, Any]] = {
    **TABLE_VARIANTS,
    "the copy program (TILE_AS_GATHER = False)": {"TILE_AS_GATHER": False},
}
"""TILE's: the table kernel's settings, and the copy program it ran as before."""


def _dm_case(
    w: str,
    dtype: str,
    op: str,
    body: dict[str, Any],
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    peer: Callable[[int], Any],
    want: Callable[[], Any],
    floor: float,
    variants: dict[str, dict[str, Any]] | None = None,
) -> None:
    """One copy-program workload: check against torch's result, time dmlops and torch side by side.

    ``variants``: settings of ``dmlops.cuda._table_copy`` timed (and checked) beside the default.
    """
    from dmlops.descs import desc_from_json

    desc = desc_from_json(op, body)
    desc.validate()

    def check(label: str) -> None:
        got = run_cuda(desc, inputs, outputs)
        for member, expected in want().items():
            if not torch.equal(torch_of(got[member]), expected):
                raise AssertionError(f"{w} ({label}): {member} differs from torch's")

    for out in outputs.values():
        out.fill(0x55 if out.dtype.kind in "iu" else 7.0)  # poison: a check must see every element written
    check("default")
    peer_us = timed(peer)
    mine = timed(lambda i: run_cuda(desc, inputs, outputs))
    record(w, dtype, "torch", peer_us, floor)
    record(w, dtype, "dmlops cuda", mine, floor, peer_us)
    if not variants:
        return
    table_copy = importlib.import_module("dmlops.cuda._table_copy")
    for name, settings in variants.items():
        if not all(hasattr(table_copy, k) for k in settings):
            continue
        saved = {k: getattr(table_copy, k) for k in settings}
        try:
            for k, v in settings.items():
                setattr(table_copy, k, v)
            table_copy._PLANS.plans.clear()
            for out in outputs.values():
                out.fill(0x55 if out.dtype.kind in "iu" else 7.0)
            check(name)
            us = timed(lambda i: run_cuda(desc, inputs, outputs))
            record(w, dtype, f"variant: {name}", us, floor, peer_us)
        finally:
            for k, v in saved.items():
                setattr(table_copy, k, v)
            table_copy._PLANS.plans.clear()


def _separable_cases(dtype: str, cdt: Any, dml: str) -> None:
    """PADDING (CONSTANT, 2 on each side of the last two axes) and DEPTH_TO_SPACE (block 2) on 256 MiB
    of FLOAT32 (half of it in FLOAT16, a quarter in INT8): the separable gathers, with TABLE_VARIANTS."""
    t = lambda sizes: {"DataType": dml, "Sizes": list(sizes)}  # noqa: E731

    def draw(shape: tuple[int, ...]) -> Any:
        if np.dtype(cdt).kind in "iu":
            return cp.random.randint(-128, 128, shape, dtype=cp.int32).astype(cdt)
        return cp.random.standard_normal(shape, dtype=cp.float32).astype(cdt)

    x = draw((64, 64, 124, 124))
    tx = torch_of(x)
    padded = cp.empty((64, 64, 128, 128), dtype=cdt)
    tp = torch_of(padded)
    body = {"InputTensor": t(x.shape), "OutputTensor": t(padded.shape), **PADDING_BORDER_2}
    _dm_case(
        "PADDING constant 124 -> 128 (64x64 planes)",
        dtype,
        "PADDING",
        body,
        {"InputTensor": x},
        {"OutputTensor": padded},
        lambda i: tp.copy_(torch.nn.functional.pad(tx, (2, 2, 2, 2))),
        lambda: {"OutputTensor": torch.nn.functional.pad(tx, (2, 2, 2, 2))},
        x.nbytes + padded.nbytes,
        TABLE_VARIANTS,
    )
    z = draw((64, 256, 64, 64))
    tz = torch_of(z)
    shuffled = cp.empty((64, 64, 128, 128), dtype=cdt)
    ts = torch_of(shuffled)
    body = {"InputTensor": t(z.shape), "OutputTensor": t(shuffled.shape), "BlockSize": 2, "Order": "COLUMN_ROW_DEPTH"}
    _dm_case(
        "DEPTH_TO_SPACE1 CRD block 2 (pixel_shuffle)",
        dtype,
        "DEPTH_TO_SPACE1",
        body,
        {"InputTensor": z},
        {"OutputTensor": shuffled},
        lambda i: ts.copy_(torch.nn.functional.pixel_shuffle(tz, 2)),
        lambda: {"OutputTensor": torch.nn.functional.pixel_shuffle(tz, 2)},
        z.nbytes + shuffled.nbytes,
        TABLE_VARIANTS,
    )


def bench_datamove(dtype: str) -> None:
    """The copy programs on 256 MiB (issue 21's targets: >= 85 % of copy); floor: read once, write once."""
    cdt, _, dml = dt(dtype)
    n = (256 << 20) // np.dtype(cdt).itemsize
    t = lambda sizes: {"DataType": dml, "Sizes": list(sizes)}  # noqa: E731
    # JOIN of two halves along axis 1, and its SPLIT
    a = cp.random.standard_normal((64, 512, 2048), dtype=cp.float32).astype(cdt)[:, : n // (64 * 2048 * 2)]
    a = cp.ascontiguousarray(a)
    b = cp.ascontiguousarray(a[:, ::-1])
    joined = cp.empty((64, 2 * a.shape[1], 2048), dtype=cdt)
    ta, tb, tj = torch_of(a), torch_of(b), torch_of(joined)
    body = {"InputTensors": [t(a.shape), t(b.shape)], "OutputTensor": t(joined.shape), "Axis": 1}
    _dm_case(
        "JOIN two halves along axis 1",
        dtype,
        "JOIN",
        body,
        {"InputTensors[0]": a, "InputTensors[1]": b},
        {"OutputTensor": joined},
        lambda i: torch.cat((ta, tb), 1, out=tj),
        lambda: {"OutputTensor": torch.cat((ta, tb), 1)},
        2 * joined.nbytes,
    )
    pa, pb = cp.empty_like(a), cp.empty_like(b)
    tpa, tpb = torch_of(pa), torch_of(pb)
    body = {"InputTensor": t(joined.shape), "OutputTensors": [t(a.shape), t(b.shape)], "Axis": 1}
    half = a.shape[1]

    def torch_split(i: int) -> None:
        tpa.copy_(tj[:, :half])
        tpb.copy_(tj[:, half:])

    _dm_case(
        "SPLIT into two halves along axis 1",
        dtype,
        "SPLIT",
        body,
        {"InputTensor": joined},
        {"OutputTensors[0]": pa, "OutputTensors[1]": pb},
        torch_split,
        lambda: {"OutputTensors[0]": tj[:, :half], "OutputTensors[1]": tj[:, half:]},
        2 * joined.nbytes,
    )
    # PADDING and DEPTH_TO_SPACE (the separable gathers; INT8 too in the FLOAT16 pass), TILE (2 x 2,
    # a separable gather too, its copy program as a variant)
    _separable_cases(dtype, cdt, dml)
    if dtype == "fp16":
        _separable_cases("i8", cp.int8, "INT8")
    y = cp.random.standard_normal((64, 64, 64, 64), dtype=cp.float32).astype(cdt)
    ty = torch_of(y)
    tiled = cp.empty((64, 64, 128, 128), dtype=cdt)
    tt = torch_of(tiled)
    body = {"InputTensor": t(y.shape), "OutputTensor": t(tiled.shape), "Repeats": [1, 1, 2, 2]}
    _dm_case(
        "TILE 1x1x2x2 (64^4 -> 256 MiB fp32)",
        dtype,
        "TILE",
        body,
        {"InputTensor": y},
        {"OutputTensor": tiled},
        lambda i: tt.copy_(ty.repeat(1, 1, 2, 2)),
        lambda: {"OutputTensor": ty.repeat(1, 1, 2, 2)},
        y.nbytes + tiled.nbytes,
        TILE_VARIANTS,
    )
    # CAST into the other float type and into INT8 (torch: copy_ converts; into INT8 it wraps, so
    # the check uses values inside INT8's range)
    src = cp.clip(cp.random.standard_normal(n, dtype=cp.float32) * 50, -120, 120).astype(cdt)
    ts_ = torch_of(src)
    for target in ("FLOAT16" if dml == "FLOAT32" else "FLOAT32", "INT8"):
        ndt = {"FLOAT16": cp.float16, "FLOAT32": cp.float32, "INT8": cp.int8}[target]
        dst = cp.empty(n, dtype=ndt)
        td = torch_of(dst)
        body = {"InputTensor": t((n,)), "OutputTensor": {"DataType": target, "Sizes": [n]}}
        _dm_case(
            f"CAST to {target} 256 MiB in",
            dtype,
            "CAST",
            body,
            {"InputTensor": src},
            {"OutputTensor": dst},
            lambda i, td=td: td.copy_(ts_),
            lambda td=td: {"OutputTensor": ts_.to(td.dtype)},
            src.nbytes + dst.nbytes,
        )
    # GATHER_ELEMENTS along the last axis (16384, 4096), INT64 indices: a permutation per row
    rows, cols = 16384 if dml == "FLOAT32" else 32768, 4096
    data = cp.random.standard_normal((rows, cols), dtype=cp.float32).astype(cdt)
    order = cp.argsort(cp.random.random((rows, cols), dtype=cp.float32), axis=1)
    picked = cp.empty_like(data)
    tdata, torder, tpicked = torch_of(data), torch_of(order), torch_of(picked)
    body = {
        "InputTensor": t(data.shape),
        "IndicesTensor": {"DataType": "INT64", "Sizes": [rows, cols]},
        "OutputTensor": t(data.shape),
        "Axis": 1,
    }
    _dm_case(
        "GATHER_ELEMENTS last axis, INT64 indices",
        dtype,
        "GATHER_ELEMENTS",
        body,
        {"InputTensor": data, "IndicesTensor": order},
        {"OutputTensor": picked},
        lambda i: torch.gather(tdata, 1, torder, out=tpicked),
        lambda: {"OutputTensor": torch.gather(tdata, 1, torder)},
        2 * data.nbytes + order.nbytes,
    )
    filled = cp.empty((n,), dtype=cdt)
    tf = torch_of(filled)
    body = {"OutputTensor": t(filled.shape), "ValueDataType": dml, "Value": 1.5}
    _dm_case(
        "FILL_VALUE_CONSTANT 256 MiB",
        dtype,
        "FILL_VALUE_CONSTANT",
        body,
        {},
        {"OutputTensor": filled},
        lambda i: tf.fill_(1.5),
        lambda: {"OutputTensor": torch.full_like(tf, 1.5)},
        filled.nbytes,
    )


def bench_random() -> None:
    """RANDOM_GENERATOR, 256 MiB of UINT32 (issue 21: >= 80 % of the write bandwidth; a fill is the ceiling)."""
    from dmlops.descs import desc_from_json

    n = (256 << 20) // 4
    state = cp.asarray(np.array([1, 2, 3, 4, 0xDEADBEEF, 0xCAFEF00D], dtype=np.uint32))

    def desc_of(count: int) -> Any:
        body = {
            "InputStateTensor": {"DataType": "UINT32", "Sizes": [6]},
            "OutputTensor": {"DataType": "UINT32", "Sizes": [count]},
            "OutputStateTensor": {"DataType": "UINT32", "Sizes": [6]},
            "Type": "PHILOX_4X32_10",
        }
        d = desc_from_json("RANDOM_GENERATOR", body)
        d.validate()
        return d

    small = desc_of(4099)
    got = run_cuda(small, {"InputStateTensor": state}, {})
    want = dmlops.execute(small, {"InputStateTensor": state.get()})
    for member, expected in want.items():
        if not np.array_equal(cp.asnumpy(got[member]), expected):
            raise AssertionError(f"RANDOM_GENERATOR: {member} differs from the reference")
    desc = desc_of(n)
    bits, next_state = cp.empty(n, dtype=cp.uint32), cp.empty(6, dtype=cp.uint32)
    outputs = {"OutputTensor": bits, "OutputStateTensor": next_state}
    mine = timed(lambda i: run_cuda(desc, {"InputStateTensor": state}, outputs))

    def memset(i: int) -> None:
        cp.cuda.runtime.memsetAsync(bits.data.ptr, 7, bits.nbytes, cp.cuda.get_current_stream().ptr)

    # The write ceiling: the driver's memset (CuPy's fill kernel wrote at a quarter of
    # the copy rate on the H200 of run 46).
    fill = timed(memset)
    tb = torch.empty(n, dtype=torch.int32, device="cuda")
    peer = timed(lambda i: tb.random_())
    w = "RANDOM_GENERATOR 256 MiB UINT32 (floor: writes)"
    record(w, "u32", "cudaMemsetAsync (the write ceiling)", fill, bits.nbytes)
    record(w, "u32", "torch random_ (Philox)", peer, bits.nbytes)
    record(w, "u32", "dmlops cuda", mine, bits.nbytes, peer)
    print(f"  RANDOM_GENERATOR at {100 * fill / mine:.1f} % of the memset's write rate", flush=True)


POOLING_BENCHES = ("bench_avgpool", "bench_maxpool1")
"""bench/gpu_pooling.py's workloads: AVERAGE_POOLING and MAX_POOLING1 against torch."""


def main() -> None:
    global L2_BYTES, QUICK, EW_EXPLORE_ON, EW_OCCUPANCY_ON
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", default="")
    ap.add_argument("--ew-explore", action="store_true", help="time EW_EXPLORE's settings on every contiguous workload")
    ap.add_argument(
        "--ew-occupancy", action="store_true", help="time EW_OCCUPANCY's settings on every contiguous workload"
    )
    ap.add_argument(
        "--maxpool-variant", default="", help="comma-separated 2-D max-pool-grad variants to time as default"
    )
    args = ap.parse_args()
    # the family modules (bench/gpu_<family>.py) import this one's helpers as ``gpu``: let
    # them share this run's copy rate and rows instead of a second copy of the module
    sys.modules.setdefault("gpu", sys.modules[__name__])
    QUICK = args.quick
    EW_EXPLORE_ON = args.ew_explore
    EW_OCCUPANCY_ON = args.ew_occupancy
    MAXPOOL_VARIANTS[:] = list(filter(None, args.maxpool_variant.split(",")))
    props = cp.cuda.runtime.getDeviceProperties(0)
    L2_BYTES = int(props["l2CacheSize"])
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except Exception:
        commit = "?"
    print(
        f"device: {name}, {props['multiProcessorCount']} SMs, L2 {L2_BYTES / 2**20:.0f} MiB; "
        f"torch {torch.__version__}, torchvision {torchvision.__version__}, cupy {cp.__version__}; "
        f"date {time.strftime('%Y-%m-%d')}; commit {commit}",
        flush=True,
    )
    measure_copy()
    print(f"{'workload':<44} {'dtype':<5} {'impl':<34} {'median':>13} {'%copy':>7} {'speedup':>7}")
    only = set(filter(None, args.only.split(",")))
    plan = [
        ("gather", lambda: [bench_gather(d) for d in ("fp32", "fp16")]),
        ("slice", lambda: [bench_slice(d) for d in ("fp32", "fp16")]),
        ("maxpool", lambda: [bench_maxpool_grad(d) for d in ("fp32", "fp16")]),
        ("resample", lambda: [bench_resample_grad(d, m) for m in ("bilinear", "nearest") for d in ("fp32", "fp16")]),
        ("forward", lambda: [bench_forward(d) for d in ("fp32", "fp16")]),
        ("roi", lambda: [bench_roi(d, s) for s in (2, 0) for d in ("fp32", "fp16")]),
        ("elementwise", lambda: [bench_elementwise(d) for d in ("fp32", "fp16")]),
        (
            "softmax",
            lambda: [
                bench_softmax(),
                bench_softmax(4096, 8192),
                bench_softmax(8192, 16384),
                bench_softmax(1024, 65536),
                bench_softmax(64, 1 << 20),
                bench_softmax(1, 1 << 24),
            ],
        ),
        ("datamove", lambda: [bench_datamove(d) for d in ("fp32", "fp16")]),
        ("random", bench_random),
        ("reduction", lambda: importlib.import_module("gpu_reduction").bench_reduction()),
        ("indexing", lambda: importlib.import_module("gpu_indexing").bench_indexing()),
        ("pooling", lambda: [getattr(importlib.import_module("gpu_pooling"), f)() for f in POOLING_BENCHES]),
        ("latency", bench_latency),
        ("variants", bench_variants),
    ]
    for key, fn in plan:
        if (only and key not in only) or (not only and key == "variants"):
            continue
        try:
            fn()
        except Exception as exc:  # keep going: one broken workload must not hide the rest
            print(f"!! {key} failed: {type(exc).__name__}: {exc}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=name, copy_bps=COPY_BPS, rows=ROWS, commit=commit), f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
