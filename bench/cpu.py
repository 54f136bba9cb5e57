"""CPU benchmark: dmlops ``backend="cpu"`` vs onnxruntime CPU vs torch CPU vs the NumPy reference.

Runs the CPU workloads of the performance spec side by side in one process and prints,
per workload, the median time of each implementation, its ratio to dmlops, and its
peak extra memory.

Usage::

    python bench/cpu.py [--repeats 5] [--threads 2] [--only roi,gather,...,elementwise,reduction] [--scale 1.0]

Method
------
* Threads: dmlops's numba kernels and copy threads use ``NUMBA_NUM_THREADS`` (set
  here from ``--threads``), onnxruntime ``intra_op_num_threads``, torch
  ``torch.set_num_threads``. The NumPy reference is single-threaded.
* Time: one warm-up call of each implementation (it also compiles numba kernels or
  loads them from the cache), then ``--repeats`` rounds in which every implementation
  is called once, in an order shuffled per round (seeded; the shared machine's slow moments
  fall on all of them alike, and none always follows the same other one); the median per
  implementation (min and max kept in the JSON line), and against the best peer both the
  ratio of the medians and the median (with quartiles) of the per-round ratios, each
  round's peer time over its dmlops time.
  dmlops writes into preallocated outputs (``outputs=``), as do torch where it can
  (``out=``); the NumPy reference, onnxruntime and most torch ops allocate.
* Memory: before each timed call the process's peak RSS is reset (``5`` written to
  ``/proc/self/clear_refs``); after it, ``VmHWM - VmRSS(before)`` is the call's peak
  extra resident memory, whatever allocated it (NumPy, numba, torch, onnxruntime).
  An implementation that allocates its output has the output in that figure, so
  the reported "extra" subtracts the output bytes for those; for ``out=`` calls the
  output is resident before the call. "mem ratio" = (inputs + outputs + extra) /
  (inputs + outputs); the target is <= 1.2.
* Spin-waits: numba's and torch's OpenMP threads and onnxruntime's pool keep spinning
  for a while after a call; each call is preceded by a short pause (``SETTLE_S``) so
  that it does not share the cores with the previous one's spinners.
* Noise: the machine is shared; trust ratios within one run over absolute times.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def _parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--only", default="", help="comma-separated group names (elementwise, datamove, ...) or workload name prefixes"
    )
    p.add_argument("--skip-impl", default="", help="comma-separated implementations to skip")
    p.add_argument("--json", action="store_true", help="also print one JSON line per measurement")
    p.add_argument("--ew-log2", type=int, default=26, help="element-wise workloads: 2**N elements (default 64M)")
    return p.parse_args()


ARGS = _parse()
os.environ.setdefault("NUMBA_NUM_THREADS", str(ARGS.threads))
os.environ.setdefault("OMP_NUM_THREADS", str(ARGS.threads))

from attributes import PADDING_BORDER_2  # noqa: E402

import dmlops  # noqa: E402
from dmlops import TensorDesc  # noqa: E402
from dmlops.descs.data_movement import GatherDesc, Slice1Desc  # noqa: E402
from dmlops.descs.pooling import MaxPoolingGradDesc  # noqa: E402
from dmlops.descs.resampling import ResampleGrad1Desc  # noqa: E402
from dmlops.descs.roi import UINT32_MAX, RoiAlignDesc  # noqa: E402
from dmlops.enums import FeatureLevel  # noqa: E402

try:
    import torch

    torch.set_num_threads(ARGS.threads)
except ImportError:  # pragma: no cover
    torch = None
try:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper
except ImportError:  # pragma: no cover
    ort = None


# -- measurement ---------------------------------------------------------------------------------


def _status_kb(field_name: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field_name):
                return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


@dataclass
class Result:
    impl: str
    times: list[float] = field(default_factory=list)
    extra_bytes: int = 0
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times)


ROUND_ORDER_SEED = 2026
"""Seed of the per-round shuffle of the implementations' order (the same orders in every run)."""

SETTLE_S = 0.3
"""Pause before each call: OpenMP (numba, torch; KMP_BLOCKTIME is 200 ms) and onnxruntime worker
threads spin-wait for a while after a call and would take the cores from the next call."""


def measure(impl: str, fn: Callable[[], Any], repeats: int, allocates_bytes: int, note: str = "") -> Result:
    """Settle, warm up, then time ``repeats`` calls; peak extra RSS of the worst call."""
    return measure_interleaved([(impl, fn, allocates_bytes, note)], repeats)[0]


def _timed(fn: Callable[[], Any]) -> tuple[float, int]:
    """(seconds, peak extra resident bytes) of one call."""
    gc.collect()
    ok = _reset_peak()
    before = _status_kb("VmRSS")
    t0 = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - t0
    peak = _status_kb("VmHWM") if ok else before
    del out
    return elapsed, (peak - before) * 1024


def measure_interleaved(impls: list[tuple[str, Callable[[], Any], int, str]], repeats: int) -> list[Result]:
    """Each implementation warmed up, then timed in ``repeats`` rounds of one call each, in a shuffled order.

    Interleaving spreads the shared machine's slow moments over every implementation instead of
    one implementation's block of calls; the order is shuffled per round (seeded), so no
    implementation always runs right after the same other one. Each call is preceded by
    ``SETTLE_S`` of sleep.
    """
    results = [Result(name, note=note) for name, _, _, note in impls]
    worst = [0] * len(impls)
    for _, fn, _, _ in impls:
        time.sleep(SETTLE_S)
        fn()
    order = random.Random(ROUND_ORDER_SEED)
    for _ in range(repeats):
        turns = list(enumerate(impls))
        order.shuffle(turns)  # no implementation always follows the same one
        for k, (_, fn, _, _) in turns:
            time.sleep(SETTLE_S)
            elapsed, extra = _timed(fn)
            results[k].times.append(elapsed)
            worst[k] = max(worst[k], extra)
    for r, (_, _, allocates_bytes, _), w in zip(results, impls, worst):
        r.extra_bytes = max(0, w - allocates_bytes)
    return results


# -- onnx helpers ----------------------------------------------------------------------------------


def _session(nodes: list[Any], inputs: list[Any], outputs: list[Any], initializers: list[Any] | None = None) -> Any:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=initializers or [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = ARGS.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _vi(name: str, dtype: int, shape: Any) -> Any:
    return helper.make_tensor_value_info(name, dtype, shape)


# -- workloads -------------------------------------------------------------------------------------


@dataclass
class Workload:
    name: str
    in_bytes: int
    out_bytes: int
    impls: list[tuple[str, Callable[[], Any], int, str]]  # (name, fn, bytes it allocates, note)
    check: Callable[[], str] = lambda: ""
    floor_arrays: int = 0
    """Element-wise: arrays of the output's size the operation must move (inputs read once, output
    written once); dmlops's time is then also compared with a copy of that many bytes."""


def roi_workloads() -> list[Workload]:
    rng = np.random.default_rng(0)
    n, c, h, w = 2, 256, 200, 200
    num, oh, ow, scale = 1000, 7, 7, 0.25
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    # boxes 16-512 px (log-uniform side lengths), inside the 800x800 image
    sides = np.exp(rng.uniform(np.log(16), np.log(512), size=(num, 2)))
    x1 = rng.uniform(0, 800 - sides[:, 0])
    y1 = rng.uniform(0, 800 - sides[:, 1])
    rois = np.stack([x1, y1, x1 + sides[:, 0], y1 + sides[:, 1]], axis=1).astype(np.float32)
    batch = rng.integers(0, n, size=num).astype(np.uint32)
    out = np.empty((num, c, oh, ow), np.float32)
    result = []
    for label, lo, hi, ratio in (("1 ROI align sr=2", 2, 2, 2), ("1b ROI align adaptive", 1, UINT32_MAX, 0)):
        desc = RoiAlignDesc(
            input_tensor=TensorDesc(data_type="FLOAT32", sizes=x.shape),
            roi_tensor=TensorDesc(data_type="FLOAT32", sizes=rois.shape),
            batch_indices_tensor=TensorDesc(data_type="UINT32", sizes=batch.shape),
            output_tensor=TensorDesc(data_type="FLOAT32", sizes=out.shape),
            reduction_function="AVERAGE",
            interpolation_mode="LINEAR",
            spatial_scale_x=scale,
            spatial_scale_y=scale,
            out_of_bounds_input_value=0.0,
            minimum_samples_per_output=lo,
            maximum_samples_per_output=hi,
        )
        ins = {"InputTensor": x, "ROITensor": rois, "BatchIndicesTensor": batch}
        impls: list[tuple[str, Callable[[], Any], int, str]] = [
            (
                "dmlops cpu",
                lambda d=desc, i=ins: dmlops.execute(d, i, backend="cpu", outputs={"OutputTensor": out}),
                0,
                "out=",
            ),
        ]
        if ort is not None:
            sess = _session(
                [
                    helper.make_node(
                        "RoiAlign",
                        ["X", "R", "B"],
                        ["Y"],
                        mode="avg",
                        output_height=oh,
                        output_width=ow,
                        sampling_ratio=ratio,
                        spatial_scale=scale,
                        coordinate_transformation_mode="half_pixel",
                    )
                ],
                [
                    _vi("X", TensorProto.FLOAT, x.shape),
                    _vi("R", TensorProto.FLOAT, rois.shape),
                    _vi("B", TensorProto.INT64, batch.shape),
                ],
                [_vi("Y", TensorProto.FLOAT, None)],
            )
            feeds = {"X": x, "R": rois, "B": batch.astype(np.int64)}
            impls.append(("onnxruntime", lambda s=sess, f=feeds: s.run(None, f), out.nbytes, "RoiAlign-16 half_pixel"))
        impls.append(("numpy reference", lambda d=desc, i=ins: dmlops.execute(d, i, backend="numpy"), out.nbytes, ""))

        def check(d: Any = desc, i: Any = ins, r: int = ratio) -> str:
            got = dmlops.execute(d, i, backend="cpu")["OutputTensor"]
            ref = dmlops.execute(d, i, backend="numpy")["OutputTensor"]
            msg = f"max|cpu-ref|={np.max(np.abs(got - ref)):.2e}"
            if ort is not None:
                s = _session(
                    [
                        helper.make_node(
                            "RoiAlign",
                            ["X", "R", "B"],
                            ["Y"],
                            mode="avg",
                            output_height=oh,
                            output_width=ow,
                            sampling_ratio=r,
                            spatial_scale=scale,
                            coordinate_transformation_mode="half_pixel",
                        )
                    ],
                    [
                        _vi("X", TensorProto.FLOAT, x.shape),
                        _vi("R", TensorProto.FLOAT, rois.shape),
                        _vi("B", TensorProto.INT64, batch.shape),
                    ],
                    [_vi("Y", TensorProto.FLOAT, None)],
                )
                y = s.run(None, {"X": x, "R": rois, "B": batch.astype(np.int64)})[0]
                msg += f", max|cpu-ort|={np.max(np.abs(got - y)):.2e}"
            return msg

        result.append(Workload(label, x.nbytes + rois.nbytes + batch.nbytes, out.nbytes, impls, check))
    return result


def gather_workloads() -> list[Workload]:
    rng = np.random.default_rng(1)
    rows, width, count = 1 << 20, 256, 1 << 20
    table = rng.standard_normal((rows, width), dtype=np.float32)
    idx = rng.integers(-rows, rows, size=count, dtype=np.int64)  # half negative (DML wraps them once)
    out = np.empty((count, width), np.float32)
    desc = GatherDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=table.shape),
        indices_tensor=TensorDesc(data_type="INT64", sizes=(1, count)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=out.shape),
        axis=0,
        index_dimensions=1,
    )
    ins = {"InputTensor": table, "IndicesTensor": idx.reshape(1, count)}
    impls: list[tuple[str, Callable[[], Any], int, str]] = [
        ("dmlops cpu", lambda: dmlops.execute(desc, ins, backend="cpu", outputs={"OutputTensor": out}), 0, "out="),
    ]
    if ort is not None:
        sess = _session(
            [helper.make_node("Gather", ["T", "I"], ["Y"], axis=0)],
            [_vi("T", TensorProto.FLOAT, table.shape), _vi("I", TensorProto.INT64, idx.shape)],
            [_vi("Y", TensorProto.FLOAT, None)],
        )
        impls.append(
            ("onnxruntime", lambda: sess.run(None, {"T": table, "I": idx}), out.nbytes, "Gather, negative indices")
        )
    if torch is not None:
        tt, ti, to = torch.from_numpy(table), torch.from_numpy(idx), torch.from_numpy(out.copy())

        def torch_gather() -> Any:
            # index_select rejects negative indices: the wrap is part of the work
            return torch.index_select(tt, 0, torch.where(ti < 0, ti + rows, ti), out=to)

        impls.append(("torch", torch_gather, idx.nbytes, "index_select(out=) after wrapping"))
    impls.append(("numpy reference", lambda: dmlops.execute(desc, ins, backend="numpy"), out.nbytes, ""))

    def check() -> str:
        dmlops.execute(desc, ins, backend="cpu", outputs={"OutputTensor": out})
        ok = np.array_equal(out, np.take(table, idx, axis=0))
        return f"bit-exact vs np.take: {ok}"

    return [Workload("2 gather 1M x 256, 1M int64 idx", table.nbytes + idx.nbytes, out.nbytes, impls, check)]


def slice_workloads() -> list[Workload]:
    rng = np.random.default_rng(2)
    shape = (64, 64, 128, 128)
    x = rng.standard_normal(shape, dtype=np.float32)
    result = []
    ins = {"InputTensor": x}
    tx = torch.from_numpy(x) if torch is not None else None
    cases = (
        ("3 slice1 reverse all dims", shape, (-1, -1, -1, -1)),
        ("3b slice1 [:, :, ::2, ::2]", (64, 64, 64, 64), (1, 1, 2, 2)),
    )
    for label, out_shape, strides in cases:
        out = np.empty(out_shape, np.float32)
        desc = Slice1Desc(
            input_tensor=TensorDesc(data_type="FLOAT32", sizes=shape),
            output_tensor=TensorDesc(data_type="FLOAT32", sizes=out_shape),
            input_window_offsets=(0, 0, 0, 0),
            input_window_sizes=shape,
            input_window_strides=strides,
        )
        impls: list[tuple[str, Callable[[], Any], int, str]] = [
            (
                "dmlops cpu",
                lambda d=desc, o=out: dmlops.execute(d, ins, backend="cpu", outputs={"OutputTensor": o}),
                0,
                "out=",
            ),
        ]
        reverse = strides[0] < 0
        if ort is not None:
            if reverse:
                starts, ends, steps = [-1] * 4, [-(2**62)] * 4, [-1] * 4
            else:
                starts, ends, steps = [0, 0], [2**62, 2**62], [2, 2]
            axes = [0, 1, 2, 3] if reverse else [2, 3]
            inits = [
                helper.make_tensor(nm, TensorProto.INT64, [len(v)], v)
                for nm, v in (("s", starts), ("e", ends), ("a", axes), ("p", steps))
            ]
            sess = _session(
                [helper.make_node("Slice", ["X", "s", "e", "a", "p"], ["Y"])],
                [_vi("X", TensorProto.FLOAT, shape)],
                [_vi("Y", TensorProto.FLOAT, None)],
                inits,
            )
            impls.append(("onnxruntime", lambda s=sess: s.run(None, {"X": x}), out.nbytes, "Slice"))
        if torch is not None:
            if reverse:
                impls.append(("torch", lambda: torch.flip(tx, (0, 1, 2, 3)), out.nbytes, "flip"))
            else:
                to = torch.from_numpy(out.copy())
                impls.append(("torch", lambda t=to: t.copy_(tx[:, :, ::2, ::2]), 0, "copy_ of the strided view"))
        impls.append(("numpy reference", lambda d=desc: dmlops.execute(d, ins, backend="numpy"), out.nbytes, ""))

        def check(d: Any = desc, o: Any = out) -> str:
            dmlops.execute(d, ins, backend="cpu", outputs={"OutputTensor": o})
            ref = dmlops.execute(d, ins, backend="numpy")["OutputTensor"]
            return f"bit-exact vs reference: {np.array_equal(o, ref)}"

        result.append(Workload(label, x.nbytes, out.nbytes, impls, check))
    return result


def maxpool_workloads() -> list[Workload]:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((32, 64, 112, 112), dtype=np.float32)
    dy = rng.standard_normal((32, 64, 56, 56), dtype=np.float32)
    dx = np.empty_like(x)
    desc = MaxPoolingGradDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=x.shape),
        input_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=dy.shape),
        output_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=x.shape),
        strides=(2, 2),
        window_size=(3, 3),
        start_padding=(1, 1),
        end_padding=(1, 1),
        dilations=(1, 1),
    )
    ins = {"InputTensor": x, "InputGradientTensor": dy}
    impls: list[tuple[str, Callable[[], Any], int, str]] = [
        (
            "dmlops cpu",
            lambda: dmlops.execute(desc, ins, backend="cpu", outputs={"OutputGradientTensor": dx}),
            0,
            "out=",
        ),
    ]
    if torch is not None:
        tx, tdy = torch.from_numpy(x), torch.from_numpy(dy)

        def torch_grad() -> Any:
            _, ind = torch.nn.functional.max_pool2d(tx, 3, 2, 1, return_indices=True)
            return torch.ops.aten.max_pool2d_with_indices_backward(tdy, tx, [3, 3], [2, 2], [1, 1], [1, 1], False, ind)

        impls.append(("torch", torch_grad, x.nbytes, "max_pool2d(return_indices) + backward (= the DML op)"))
    impls.append(("numpy reference", lambda: dmlops.execute(desc, ins, backend="numpy"), x.nbytes, ""))

    def check() -> str:
        dmlops.execute(desc, ins, backend="cpu", outputs={"OutputGradientTensor": dx})
        msg = ""
        if torch is not None:
            msg = f"max|cpu-torch|={np.max(np.abs(dx - torch_grad().numpy())):.2e}"
        return msg

    return [Workload("4 max pool grad 3x3/s2/p1", x.nbytes + dy.nbytes, dx.nbytes, impls, check)]


def avgpool_workloads() -> list[Workload]:
    """AVERAGE_POOLING 3x3, stride 2, padding 1 of (32, 64, 112, 112) FLOAT32 (without IncludePadding: ONNX's
    and torch's default count), against torch's avg_pool2d and onnxruntime's AveragePool; checked bit for
    bit against the NumPy reference."""
    from dmlops.descs import desc_from_json

    rng = np.random.default_rng(8)
    x = rng.standard_normal((32, 64, 112, 112), dtype=np.float32)
    out = np.empty((32, 64, 56, 56), np.float32)
    window = {"Strides": [2, 2], "WindowSize": [3, 3], "StartPadding": [1, 1], "EndPadding": [1, 1]}
    desc = desc_from_json(
        "AVERAGE_POOLING",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": list(x.shape)},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": list(out.shape)},
            **window,
            "IncludePadding": False,
        },
    )
    ins = {"InputTensor": x}
    impls: list[tuple[str, Callable[[], Any], int, str]] = [
        ("dmlops cpu", lambda: _dmlops_cpu(desc, ins, {"OutputTensor": out}), 0, "out="),
    ]
    if torch is not None:
        tx, to = torch.from_numpy(x), torch.from_numpy(np.empty_like(out))

        def torch_avg() -> Any:
            return torch.ops.aten.avg_pool2d.out(tx, [3, 3], [2, 2], [1, 1], False, False, None, out=to)

        impls.append(("torch", torch_avg, 0, "avg_pool2d(count_include_pad=False), out="))
    if ort is not None:
        node = helper.make_node(
            "AveragePool", ["X"], ["Y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0
        )
        sess = _session([node], [_vi("X", TensorProto.FLOAT, x.shape)], [_vi("Y", TensorProto.FLOAT, None)])
        impls.append(("onnxruntime", lambda: sess.run(None, {"X": x}), out.nbytes, "AveragePool, allocates"))
    impls.append(("numpy reference", lambda: dmlops.execute(desc, ins, backend="numpy"), out.nbytes, ""))

    def check() -> str:
        _dmlops_cpu(desc, ins, {"OutputTensor": out})
        ref = dmlops.execute(desc, ins, backend="numpy")["OutputTensor"]
        msg = f"bit-exact vs reference: {np.array_equal(out, ref)}"
        if torch is not None:
            msg += f", max|cpu-torch|={np.max(np.abs(out - torch_avg().numpy())):.2e}"
        return msg

    return [Workload("4b average pool 3x3/s2/p1", x.nbytes, out.nbytes, impls, check)]


def resample_workloads() -> list[Workload]:
    rng = np.random.default_rng(4)
    dy = rng.standard_normal((32, 64, 128, 128), dtype=np.float32)
    dx = np.empty((32, 64, 64, 64), np.float32)
    ins = {"InputGradientTensor": dy}
    tdy = torch.from_numpy(dy) if torch is not None else None
    result = []
    for label, mode, ipo, opo in (
        ("5 resample grad bilinear 2x", "LINEAR", 0.5, -0.5),
        ("5b resample grad nearest 2x", "NEAREST_NEIGHBOR", 0.0, 0.0),
    ):
        desc = ResampleGrad1Desc(
            input_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=dy.shape),
            output_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=dx.shape),
            interpolation_mode=mode,
            rounding_direction="DECREASING",
            scales=(1.0, 1.0, 2.0, 2.0),
            input_pixel_offsets=(0.5, 0.5, ipo, ipo),
            output_pixel_offsets=(-0.5, -0.5, opo, opo),
        )
        impls: list[tuple[str, Callable[[], Any], int, str]] = [
            (
                "dmlops cpu",
                lambda d=desc: dmlops.execute(d, ins, backend="cpu", outputs={"OutputGradientTensor": dx}),
                0,
                "out=",
            ),
        ]
        if torch is not None:
            if mode == "LINEAR":
                fn = lambda: torch.ops.aten.upsample_bilinear2d_backward(tdy, [128, 128], [32, 64, 64, 64], False)  # noqa: E731
                note = "upsample_bilinear2d_backward (half-pixel)"
            else:
                fn = lambda: torch.ops.aten.upsample_nearest2d_backward(tdy, [128, 128], [32, 64, 64, 64])  # noqa: E731
                note = "upsample_nearest2d_backward (floor(o/2) = DML IPO 0, OPO 0, DECREASING)"
            impls.append(("torch", fn, dx.nbytes, note))
        impls.append(("numpy reference", lambda d=desc: dmlops.execute(d, ins, backend="numpy"), dx.nbytes, ""))

        def check(d: Any = desc, m: str = mode) -> str:
            dmlops.execute(d, ins, backend="cpu", outputs={"OutputGradientTensor": dx})
            if torch is None:
                return ""
            if m == "LINEAR":
                ref = torch.ops.aten.upsample_bilinear2d_backward(tdy, [128, 128], [32, 64, 64, 64], False).numpy()
            else:
                ref = torch.ops.aten.upsample_nearest2d_backward(tdy, [128, 128], [32, 64, 64, 64]).numpy()
            return f"max|cpu-torch|={np.max(np.abs(dx - ref)):.2e}"

        result.append(Workload(label, dy.nbytes, dx.nbytes, impls, check))
    return result


def _dmlops_cpu(desc: Any, ins: dict[str, Any], outs: dict[str, Any]) -> Any:
    """dmlops.execute on cpu; through the backend module while the family's claim does not list cpu yet."""
    if "cpu" in desc.backends:
        return dmlops.execute(desc, ins, backend="cpu", outputs=outs)
    from dmlops.backends import load_backend

    desc.validate()
    return load_backend("cpu").execute(desc, ins, outs, feature_level=FeatureLevel.latest(), strict=False)


_COPY_S: list[float] = []


def copy_ceiling_s(nbytes: int) -> float:
    """Seconds to copy ``nbytes`` (one array of that size read, one written): the best of NumPy's
    one-thread copy, NumPy copies split over the threads and torch's ``copy_``, measured once on 256 MiB."""
    if not _COPY_S:
        from concurrent.futures import ThreadPoolExecutor

        n = 1 << 26
        a, b = np.ones(n, np.float32), np.empty(n, np.float32)
        pool = ThreadPoolExecutor(ARGS.threads)
        bounds = [n * i // ARGS.threads for i in range(ARGS.threads + 1)]

        def split() -> None:
            jobs = [pool.submit(np.copyto, b[lo:hi], a[lo:hi]) for lo, hi in itertools.pairwise(bounds)]
            for j in jobs:
                j.result()

        copies: list[Callable[[], Any]] = [lambda: np.copyto(b, a), split]
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            copies.append(lambda: tb.copy_(ta))
        best = min(measure("copy", fn, ARGS.repeats, 0).median for fn in copies)
        _COPY_S.append(best / a.nbytes)
        pool.shutdown()
    return _COPY_S[0] * nbytes


def elementwise_workloads() -> list[Workload]:
    """The issue 20 element-wise workloads: 2**--ew-log2 contiguous FLOAT32 elements, a broadcast ADD
    and SOFTMAX1 over the last axis of a (65536, 1024) tensor, against torch, onnxruntime and NumPy."""
    from dmlops.descs import desc_from_json

    n = 1 << ARGS.ew_log2
    rng = np.random.default_rng(6)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = np.empty(n, np.float32)
    tx, ty, to = (torch.from_numpy(v) for v in (x, y, out)) if torch is not None else (None, None, None)
    t32 = {"DataType": "FLOAT32", "Sizes": [n]}
    sigmoid_np = lambda: np.reciprocal(1 + np.exp(-x))  # noqa: E731
    cases: list[tuple[str, str, dict[str, Any], Any, Any, Any, str]] = [
        # (label, DML operator, extra members, torch fn, onnx (op_type, domain, opset), numpy fn, note)
        (
            "IDENTITY",
            "ELEMENT_WISE_IDENTITY",
            {},
            lambda: to.copy_(tx),
            ("Identity", "", 17),
            lambda: np.copyto(out, x),
            "",
        ),
        ("ABS", "ELEMENT_WISE_ABS", {}, lambda: torch.abs(tx, out=to), ("Abs", "", 17), lambda: np.abs(x, out=out), ""),
        ("EXP", "ELEMENT_WISE_EXP", {}, lambda: torch.exp(tx, out=to), ("Exp", "", 17), lambda: np.exp(x, out=out), ""),
        ("SIGMOID", "ACTIVATION_SIGMOID", {}, lambda: torch.sigmoid(tx, out=to), ("Sigmoid", "", 17), sigmoid_np, ""),
        ("GELU", "ACTIVATION_GELU", {}, lambda: torch.ops.aten.gelu.out(tx, out=to), ("Gelu", "", 20), None, "erf"),
        (
            "ADD",
            "ELEMENT_WISE_ADD",
            {},
            lambda: torch.add(tx, ty, out=to),
            ("Add", "", 17),
            lambda: np.add(x, y, out=out),
            "",
        ),
        (
            "MULTIPLY",
            "ELEMENT_WISE_MULTIPLY",
            {},
            lambda: torch.mul(tx, ty, out=to),
            ("Mul", "", 17),
            lambda: np.multiply(x, y, out=out),
            "",
        ),
        (
            "MAX",
            "ELEMENT_WISE_MAX",
            {},
            lambda: torch.maximum(tx, ty, out=to),
            ("Max", "", 17),
            lambda: np.fmax(x, y, out=out),
            "",
        ),
        (
            "ADD1 + fused RELU",
            "ELEMENT_WISE_ADD1",
            {"FusedActivation": {"Type": "ACTIVATION_RELU"}},
            lambda: torch.add(tx, ty, out=to).relu_(),
            ("AddRelu", "", 17),
            lambda: np.maximum(np.add(x, y, out=out), 0, out=out),
            "",
        ),
    ]
    result = []
    for label, op, extra, torch_fn, onnx_op, numpy_fn, _ in cases:
        binary = op not in ("ELEMENT_WISE_IDENTITY", "ELEMENT_WISE_ABS", "ELEMENT_WISE_EXP") and not op.startswith(
            "ACTIVATION_"
        )
        members = ("ATensor", "BTensor") if binary else ("InputTensor",)
        desc = desc_from_json(op, {**dict.fromkeys(members, t32), "OutputTensor": t32, **extra})
        ins = dict(zip(members, (x, y)))
        impls: list[tuple[str, Callable[[], Any], int, str]] = [
            ("dmlops cpu", lambda d=desc, i=ins: _dmlops_cpu(d, i, {"OutputTensor": out}), 0, "out="),
        ]
        if torch is not None:
            impls.append(("torch", torch_fn, 0, "out="))
        if ort is not None:
            kind, domain, opset = onnx_op
            names = ["A", "B"] if binary else ["X"]
            if kind == "AddRelu":
                nodes = [helper.make_node("Add", names, ["S"]), helper.make_node("Relu", ["S"], ["Y"])]
            else:
                nodes = [helper.make_node(kind, names, ["Y"], domain=domain)]
            graph = helper.make_graph(
                nodes, "g", [_vi(nm, TensorProto.FLOAT, [n]) for nm in names], [_vi("Y", TensorProto.FLOAT, None)]
            )
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
            model.ir_version = 9
            so = ort.SessionOptions()
            so.intra_op_num_threads = ARGS.threads
            so.inter_op_num_threads = 1
            sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
            feeds = dict(zip(names, (x, y)))
            impls.append(("onnxruntime", lambda s=sess, f=feeds: s.run(None, f), out.nbytes, "allocates its output"))
        if numpy_fn is not None:
            impls.append(("numpy", numpy_fn, out.nbytes if label == "SIGMOID" else 0, "one thread"))

        def check(d: Any = desc, i: Any = ins, fn: Any = torch_fn) -> str:
            _dmlops_cpu(d, i, {"OutputTensor": out})
            got = out.copy()
            if torch is None:
                return ""
            fn()
            with np.errstate(invalid="ignore"):
                return f"max|cpu-torch|={np.nanmax(np.abs(got - out)):.2e}"

        arrays = len(members) + 1
        result.append(Workload(f"6 {label} {n >> 20}M f32", x.nbytes * len(members), out.nbytes, impls, check, arrays))

    # broadcast ADD: a (rows, 1024) tensor plus one row read through 0-strides
    rows, width = n // 1024, 1024
    x2, out2 = x.reshape(rows, width), out.reshape(rows, width)
    row = y[:width].copy()
    desc = desc_from_json(
        "ELEMENT_WISE_ADD",
        {
            "ATensor": {"DataType": "FLOAT32", "Sizes": [rows, width]},
            "BTensor": {"DataType": "FLOAT32", "Sizes": [rows, width], "Strides": [0, 1]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [rows, width]},
        },
    )
    ins = {"ATensor": x2, "BTensor": row}
    impls = [
        (
            "dmlops cpu",
            lambda d=desc, i=ins: _dmlops_cpu(d, i, {"OutputTensor": out2}),
            0,
            "out=, B strides (0, 1)",
        )
    ]
    if torch is not None:
        tx2, trow, to2 = torch.from_numpy(x2), torch.from_numpy(row), torch.from_numpy(out2)
        impls.append(("torch", lambda: torch.add(tx2, trow, out=to2), 0, "out="))
    if ort is not None:
        sess = _session(
            [helper.make_node("Add", ["A", "B"], ["Y"])],
            [_vi("A", TensorProto.FLOAT, [rows, width]), _vi("B", TensorProto.FLOAT, [width])],
            [_vi("Y", TensorProto.FLOAT, None)],
        )
        impls.append(("onnxruntime", lambda: sess.run(None, {"A": x2, "B": row}), out.nbytes, "allocates its output"))
    impls.append(("numpy", lambda: np.add(x2, row, out=out2), 0, "one thread"))
    result.append(Workload(f"6 broadcast ADD ({rows}, {width}) + row", x.nbytes, out.nbytes, impls, floor_arrays=2))

    # SOFTMAX1 over the last axis of (65536, 1024)
    srows = 65536
    xs = rng.standard_normal((srows, 1024), dtype=np.float32)
    outs = np.empty_like(xs)
    desc = desc_from_json(
        "ACTIVATION_SOFTMAX1",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [srows, 1024]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [srows, 1024]},
            "Axes": [1],
        },
    )
    softmax = desc
    impls = [("dmlops cpu", lambda: _dmlops_cpu(softmax, {"InputTensor": xs}, {"OutputTensor": outs}), 0, "out=")]
    if torch is not None:
        txs, tos = torch.from_numpy(xs), torch.from_numpy(outs)
        impls.append(("torch", lambda: torch.ops.aten._softmax.out(txs, -1, False, out=tos), 0, "_softmax.out"))
    if ort is not None:
        sess_s = _session(
            [helper.make_node("Softmax", ["X"], ["Y"], axis=-1)],
            [_vi("X", TensorProto.FLOAT, [srows, 1024])],
            [_vi("Y", TensorProto.FLOAT, None)],
        )
        impls.append(("onnxruntime", lambda: sess_s.run(None, {"X": xs}), outs.nbytes, "allocates its output"))

    def softmax_np() -> Any:
        e = np.exp(xs - xs.max(axis=1, keepdims=True))
        return np.divide(e, e.sum(axis=1, keepdims=True), out=e)

    impls.append(("numpy", softmax_np, outs.nbytes, "one thread, allocates"))

    def check_softmax() -> str:
        _dmlops_cpu(softmax, {"InputTensor": xs}, {"OutputTensor": outs})
        e = np.exp(xs.astype(np.float64) - xs.max(axis=1, keepdims=True))
        return f"max rel err vs float64: {np.max(np.abs(outs - e / e.sum(axis=1, keepdims=True)) / outs):.2e}"

    result.append(Workload("6 SOFTMAX1 (65536, 1024) last axis", xs.nbytes, outs.nbytes, impls, check_softmax, 2))
    return result


def reduction_workloads() -> list[Workload]:
    """The issue 21 reduction workloads: REDUCE SUM and MAX of a 256 MiB FLOAT32 tensor (16384, 4096) over
    its last axis and over all axes but one (axis 0), CUMULATIVE_SUMMATION over its last axis and TOP_K
    (K = 8) over the last axis of (65536, 1024), against torch and onnxruntime; each result checked bit for
    bit against the NumPy reference."""
    from dmlops.descs import desc_from_json

    rng = np.random.default_rng(7)
    x = rng.standard_normal((16384, 4096), dtype=np.float32)

    def t32(shape: Any) -> dict[str, Any]:
        return {"DataType": "FLOAT32", "Sizes": list(shape)}

    def bit_exact(got: dict[str, Any], ref: dict[str, Any]) -> bool:
        return all(np.array_equal(np.asarray(got[m]), np.asarray(ref[m]), equal_nan=True) for m in ref)

    result = []
    ins = {"InputTensor": x}  # one input for every workload but TOP_K
    tx = torch.from_numpy(x) if torch is not None else None
    for function in ("SUM", "MAX"):
        for axis in (1, 0):
            out_shape = (16384, 1) if axis == 1 else (1, 4096)
            out = np.empty(out_shape, np.float32)
            desc = desc_from_json(
                "REDUCE",
                {"Function": function, "InputTensor": t32(x.shape), "OutputTensor": t32(out_shape), "Axes": [axis]},
            )
            impls: list[tuple[str, Callable[[], Any], int, str]] = [
                ("dmlops cpu", lambda d=desc, o=out: _dmlops_cpu(d, ins, {"OutputTensor": o}), 0, "out="),
            ]
            if torch is not None:
                to = torch.from_numpy(out.copy())
                fn = torch.sum if function == "SUM" else torch.amax
                impls.append(("torch", lambda f=fn, a=axis, o=to: f(tx, a, keepdim=True, out=o), 0, "out="))
            if ort is not None:
                if function == "SUM":  # opset 13+: axes as an input
                    axes_init = [helper.make_tensor("ax", TensorProto.INT64, [1], [axis])]
                    node = helper.make_node("ReduceSum", ["X", "ax"], ["Y"], keepdims=1)
                else:  # opset 17: axes as an attribute
                    axes_init = []
                    node = helper.make_node("ReduceMax", ["X"], ["Y"], axes=[axis], keepdims=1)
                sess = _session(
                    [node], [_vi("X", TensorProto.FLOAT, x.shape)], [_vi("Y", TensorProto.FLOAT, None)], axes_init
                )
                note = f"Reduce{function.title()}, allocates"
                impls.append(("onnxruntime", lambda s=sess: s.run(None, {"X": x}), out.nbytes, note))

            def check(d: Any = desc, o: Any = out, f: str = function, a: int = axis) -> str:
                got = _dmlops_cpu(d, ins, {"OutputTensor": o})
                msg = f"bit-exact vs reference: {bit_exact(got, dmlops.execute(d, ins, backend='numpy'))}"
                if torch is not None:
                    fn = torch.sum if f == "SUM" else torch.amax
                    msg += f", max|cpu-torch|={np.max(np.abs(o - fn(tx, a, keepdim=True).numpy())):.2e}"
                return msg

            label = f"7 REDUCE {function} {'last axis' if axis == 1 else 'axis 0 (all but one)'}"
            result.append(Workload(label, x.nbytes, out.nbytes, impls, check))

    # CUMULATIVE_SUMMATION over the last axis
    outc = np.empty_like(x)
    cumsum = desc_from_json(
        "CUMULATIVE_SUMMATION",
        {
            "InputTensor": t32(x.shape),
            "OutputTensor": t32(x.shape),
            "Axis": 1,
            "AxisDirection": "INCREASING",
            "HasExclusiveSum": False,
        },
    )
    impls = [("dmlops cpu", lambda: _dmlops_cpu(cumsum, ins, {"OutputTensor": outc}), 0, "out=")]
    if torch is not None:
        toc = torch.from_numpy(np.empty_like(x))
        impls.append(("torch", lambda: torch.cumsum(tx, 1, out=toc), 0, "out="))
    if ort is not None:
        sess_c = _session(
            [helper.make_node("CumSum", ["X", "ax"], ["Y"])],
            [_vi("X", TensorProto.FLOAT, x.shape)],
            [_vi("Y", TensorProto.FLOAT, None)],
            [helper.make_tensor("ax", TensorProto.INT64, [], [1])],
        )
        impls.append(("onnxruntime", lambda: sess_c.run(None, {"X": x}), outc.nbytes, "CumSum, allocates"))

    def check_cumsum() -> str:
        got = _dmlops_cpu(cumsum, ins, {"OutputTensor": outc})
        msg = f"bit-exact vs reference: {bit_exact(got, dmlops.execute(cumsum, ins, backend='numpy'))}"
        if torch is not None:
            msg += f", max|cpu-torch|={np.max(np.abs(outc - torch.cumsum(tx, 1).numpy())):.2e}"
        return msg

    result.append(Workload("7 CUMULATIVE_SUMMATION last axis", x.nbytes, outc.nbytes, impls, check_cumsum))

    # TOP_K, K = 8, over the last axis of (65536, 1024)
    y = x.reshape(65536, 1024)
    k = 8
    values, indices = np.empty((65536, k), np.float32), np.empty((65536, k), np.uint32)
    top_k = desc_from_json(
        "TOP_K",
        {
            "InputTensor": t32(y.shape),
            "OutputValueTensor": t32(values.shape),
            "OutputIndexTensor": {"DataType": "UINT32", "Sizes": list(indices.shape)},
            "Axis": 1,
            "K": k,
        },
    )
    ins_k = {"InputTensor": y}
    outs_k = {"OutputValueTensor": values, "OutputIndexTensor": indices}
    out_bytes = values.nbytes + indices.nbytes
    impls = [("dmlops cpu", lambda: _dmlops_cpu(top_k, ins_k, outs_k), 0, "out=, UINT32 indices")]
    if torch is not None:
        ty = torch.from_numpy(y)
        tv, ti = torch.empty((65536, k)), torch.empty((65536, k), dtype=torch.int64)
        impls.append(("torch", lambda: torch.topk(ty, k, 1, out=(tv, ti)), 0, "out=, int64 indices"))
    if ort is not None:
        sess_k = _session(
            [helper.make_node("TopK", ["X", "K"], ["V", "I"], axis=1, largest=1, sorted=1)],
            [_vi("X", TensorProto.FLOAT, y.shape)],
            [_vi("V", TensorProto.FLOAT, None), _vi("I", TensorProto.INT64, None)],
            [helper.make_tensor("K", TensorProto.INT64, [1], [k])],
        )
        impls.append(("onnxruntime", lambda: sess_k.run(None, {"X": y}), values.nbytes * 3, "TopK, allocates"))

    def check_top_k() -> str:
        got = _dmlops_cpu(top_k, ins_k, outs_k)
        msg = f"bit-exact vs reference: {bit_exact(got, dmlops.execute(top_k, ins_k, backend='numpy'))}"
        if torch is not None:
            v, i = torch.topk(ty, k, 1)
            msg += f", values == torch: {np.array_equal(values, v.numpy())}, indices == torch: "
            msg += f"{np.array_equal(indices.astype(np.int64), i.numpy())}"
        return msg

    result.append(Workload("7 TOP_K K=8 (65536, 1024) last axis", y.nbytes, out_bytes, impls, check_top_k))
    return result


def indexing_workloads() -> list[Workload]:
    """The issue 21 indexing workloads: GATHER_ELEMENTS and SCATTER_ELEMENTS along the last axis of a
    (4096, 4096) FLOAT32 tensor, INT64 indices (the scatter's unique along each row: a permutation per row)
    against torch.gather / torch.scatter (out=) and onnxruntime's GatherElements / ScatterElements; each
    result checked bit for bit against the NumPy reference."""
    from dmlops.descs import desc_from_json

    rng = np.random.default_rng(21)
    shape = (4096, 4096)
    x = rng.standard_normal(shape, dtype=np.float32)
    gather_idx = rng.integers(0, shape[1], shape, dtype=np.int64)
    scatter_idx = np.argsort(rng.random(shape, dtype=np.float32), axis=1).astype(np.int64)  # unique per row
    updates = rng.standard_normal(shape, dtype=np.float32)
    t32, t64 = ({"DataType": t, "Sizes": list(shape)} for t in ("FLOAT32", "INT64"))
    result = []
    for op in ("GATHER_ELEMENTS", "SCATTER_ELEMENTS"):
        gather = op == "GATHER_ELEMENTS"
        idx = gather_idx if gather else scatter_idx
        members = {"InputTensor": t32, "IndicesTensor": t64, "OutputTensor": t32, "Axis": 1}
        ins = {"InputTensor": x, "IndicesTensor": idx}
        if not gather:
            members["UpdatesTensor"] = t32
            ins["UpdatesTensor"] = updates
        desc = desc_from_json(op, members)
        out = np.empty(shape, np.float32)
        impls: list[tuple[str, Callable[[], Any], int, str]] = [
            ("dmlops cpu", lambda d=desc, i=ins, o=out: _dmlops_cpu(d, i, {"OutputTensor": o}), 0, "out=")
        ]
        if torch is not None:
            t = [torch.from_numpy(a) for a in (x, idx, updates, np.empty_like(out))]
            if gather:
                impls.append(("torch", lambda t=t: torch.gather(t[0], 1, t[1], out=t[3]), 0, "gather(out=)"))
            else:
                impls.append(("torch", lambda t=t: torch.scatter(t[0], 1, t[1], t[2], out=t[3]), 0, "scatter(out=)"))
        if ort is not None:
            names = ["X", "I"] if gather else ["X", "I", "U"]
            node = helper.make_node("GatherElements" if gather else "ScatterElements", names, ["Y"], axis=1)
            types = {"X": TensorProto.FLOAT, "I": TensorProto.INT64, "U": TensorProto.FLOAT}
            sess = _session([node], [_vi(n, types[n], shape) for n in names], [_vi("Y", TensorProto.FLOAT, None)])
            feeds = dict(zip(names, (x, idx, updates)))
            note = ("GatherElements" if gather else "ScatterElements") + ", allocates"
            impls.append(("onnxruntime", lambda s_=sess, f=feeds: s_.run(None, f), out.nbytes, note))

        def check(d: Any = desc, i: Any = ins, o: Any = out) -> str:
            _dmlops_cpu(d, i, {"OutputTensor": o})
            ref = dmlops.execute(d, i, backend="numpy")["OutputTensor"]
            return f"bit-exact vs reference: {np.array_equal(o.view(np.uint32), ref.view(np.uint32))}"

        in_bytes = sum(a.nbytes for a in ins.values())
        result.append(Workload(f"8 {op} (4096, 4096) last axis", in_bytes, out.nbytes, impls, check))
    return result


def _datamove_case(
    name: str,
    op: str,
    body: dict[str, Any],
    ins: dict[str, np.ndarray],
    outs: dict[str, np.ndarray],
    torch_call: Callable[[], Any] | None,
    torch_note: str,
    torch_allocates: int,
    onnx_node: Any | None,
    onnx_types: dict[str, int],
    onnx_constants: list[Any] | None = None,
) -> Workload:
    """One issue 21 data-movement workload: dmlops into preallocated outputs, torch, onnxruntime
    (``onnx_node`` reads the feeds in ``ins``' order, named X0, X1..., and ``onnx_constants`` as
    initializers; it writes Y0, Y1...), the result checked bit for bit against the NumPy reference."""
    from dmlops.descs import desc_from_json

    desc = desc_from_json(op, body)
    desc.validate()
    impls: list[tuple[str, Callable[[], Any], int, str]] = [
        ("dmlops cpu", lambda: _dmlops_cpu(desc, ins, outs), 0, "out=")
    ]
    if torch is not None and torch_call is not None:
        impls.append(("torch", torch_call, torch_allocates, torch_note))
    if ort is not None and onnx_node is not None:
        names = [f"X{i}" for i in range(len(ins))]
        arrays = list(ins.values())
        inputs = [_vi(n, onnx_types[n], a.shape) for n, a in zip(names, arrays)]
        outputs = [_vi(f"Y{i}", onnx_types[f"Y{i}"], None) for i in range(len(outs))]
        sess = _session([onnx_node], inputs, outputs, onnx_constants)
        feeds = dict(zip(names, arrays))
        impls.append(("onnxruntime", lambda: sess.run(None, feeds), sum(o.nbytes for o in outs.values()), "allocates"))

    def check() -> str:
        _dmlops_cpu(desc, ins, outs)
        ref = dmlops.execute(desc, ins, backend="numpy")
        same = all(np.array_equal(outs[m].view(np.uint8), r.view(np.uint8)) for m, r in ref.items())
        return f"bit-exact vs reference: {same}"

    in_bytes = sum(a.nbytes for a in ins.values())
    out_bytes = sum(a.nbytes for a in outs.values())
    return Workload(name, in_bytes, out_bytes, impls, check)


def datamove_workloads() -> list[Workload]:
    """Issue 21's data movement on the CPU, FLOAT32 at the GPU benchmark's 256 MiB: JOIN, SPLIT, PADDING,
    DEPTH_TO_SPACE, TILE, CAST (to FLOAT16 and INT8), MAX_POOLING1 with indices and RANDOM_GENERATOR,
    against torch (into preallocated outputs where it has ``out=``) and onnxruntime (allocating)."""
    rng = np.random.default_rng(21)
    f32 = f16 = i8 = i64 = 0  # ONNX's element types, where onnxruntime is installed
    if ort is not None:
        f32, f16, i8, i64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT8, TensorProto.INT64
    t = lambda shape, dt="FLOAT32": {"DataType": dt, "Sizes": list(shape)}  # noqa: E731
    tt = torch.from_numpy if torch is not None else (lambda a: a)
    result = []

    a = rng.standard_normal((64, 256, 2048), dtype=np.float32)
    b = rng.standard_normal((64, 256, 2048), dtype=np.float32)
    joined = np.empty((64, 512, 2048), np.float32)
    ta, tb, tj = tt(a), tt(b), tt(joined)
    result.append(
        _datamove_case(
            "9 JOIN two halves along axis 1",
            "JOIN",
            {"InputTensors": [t(a.shape), t(b.shape)], "OutputTensor": t(joined.shape), "Axis": 1},
            {"InputTensors[0]": a, "InputTensors[1]": b},
            {"OutputTensor": joined},
            lambda: torch.cat((ta, tb), 1, out=tj),
            "cat(out=)",
            0,
            helper.make_node("Concat", ["X0", "X1"], ["Y0"], axis=1) if ort is not None else None,
            {"X0": f32, "X1": f32, "Y0": f32},
        )
    )
    joined[...] = rng.standard_normal(joined.shape, dtype=np.float32)
    pa, pb = np.empty_like(a), np.empty_like(b)
    tpa, tpb = tt(pa), tt(pb)

    def torch_split() -> None:
        tpa.copy_(tj[:, :256])
        tpb.copy_(tj[:, 256:])

    result.append(
        _datamove_case(
            "9b SPLIT into two halves along axis 1",
            "SPLIT",
            {"InputTensor": t(joined.shape), "OutputTensors": [t(a.shape), t(b.shape)], "Axis": 1},
            {"InputTensor": joined},
            {"OutputTensors[0]": pa, "OutputTensors[1]": pb},
            torch_split,
            "copy_ of the two slices",
            0,
            helper.make_node("Split", ["X0"], ["Y0", "Y1"], axis=1) if ort is not None else None,
            {"X0": f32, "Y0": f32, "Y1": f32},
        )
    )
    x = rng.standard_normal((64, 64, 124, 124), dtype=np.float32)
    padded = np.empty((64, 64, 128, 128), np.float32)
    tx = tt(x)
    result.append(
        _datamove_case(
            "9c PADDING constant 124 -> 128",
            "PADDING",
            {"InputTensor": t(x.shape), "OutputTensor": t(padded.shape), **PADDING_BORDER_2},
            {"InputTensor": x},
            {"OutputTensor": padded},
            lambda: torch.nn.functional.pad(tx, (2, 2, 2, 2)),
            "F.pad, allocates",
            padded.nbytes,
            helper.make_node("Pad", ["X0", "P"], ["Y0"], mode="constant") if ort is not None else None,
            {"X0": f32, "Y0": f32},
            [helper.make_tensor("P", i64, [8], [0, 0, 2, 2, 0, 0, 2, 2])] if ort is not None else None,
        )
    )
    z = rng.standard_normal((64, 256, 64, 64), dtype=np.float32)
    tz = tt(z)
    result.append(
        _datamove_case(
            "9d DEPTH_TO_SPACE1 CRD block 2",
            "DEPTH_TO_SPACE1",
            {"InputTensor": t(z.shape), "OutputTensor": t(padded.shape), "BlockSize": 2, "Order": "COLUMN_ROW_DEPTH"},
            {"InputTensor": z},
            {"OutputTensor": padded},
            lambda: torch.pixel_shuffle(tz, 2),
            "pixel_shuffle, allocates",
            padded.nbytes,
            helper.make_node("DepthToSpace", ["X0"], ["Y0"], blocksize=2, mode="CRD") if ort is not None else None,
            {"X0": f32, "Y0": f32},
        )
    )
    y = rng.standard_normal((64, 64, 64, 64), dtype=np.float32)
    ty = tt(y)
    result.append(
        _datamove_case(
            "9e TILE 1x1x2x2 (64^4)",
            "TILE",
            {"InputTensor": t(y.shape), "OutputTensor": t(padded.shape), "Repeats": [1, 1, 2, 2]},
            {"InputTensor": y},
            {"OutputTensor": padded},
            lambda: ty.repeat(1, 1, 2, 2),
            "repeat, allocates",
            padded.nbytes,
            helper.make_node("Tile", ["X0", "R"], ["Y0"]) if ort is not None else None,
            {"X0": f32, "Y0": f32},
            [helper.make_tensor("R", i64, [4], [1, 1, 2, 2])] if ort is not None else None,
        )
    )
    n = (256 << 20) // 4
    src = np.clip(rng.standard_normal(n, dtype=np.float32) * 50, -120, 120)
    tsrc = tt(src)
    for target, np_dt, proto in (("FLOAT16", np.float16, f16), ("INT8", np.int8, i8)):
        dst = np.empty(n, np_dt)
        tdst = tt(dst)
        result.append(
            _datamove_case(
                f"9f CAST FLOAT32 to {target}",
                "CAST",
                {"InputTensor": t((n,)), "OutputTensor": t((n,), target)},
                {"InputTensor": src},
                {"OutputTensor": dst},
                lambda d=tdst: d.copy_(tsrc),
                "copy_ (converts)",
                0,
                helper.make_node("Cast", ["X0"], ["Y0"], to=proto) if ort is not None else None,
                {"X0": f32, "Y0": proto},
            )
        )
    px = rng.standard_normal((32, 64, 112, 112), dtype=np.float32)
    pooled = np.empty((32, 64, 56, 56), np.float32)
    indices = np.empty((32, 64, 56, 56), np.uint32)
    tpx = tt(px)
    result.append(
        _datamove_case(
            "9g MAX_POOLING1 3x3/s2/p1 with indices",
            "MAX_POOLING1",
            {
                "InputTensor": t(px.shape),
                "OutputTensor": t(pooled.shape),
                "OutputIndicesTensor": t(indices.shape, "UINT32"),
                "Strides": [2, 2],
                "WindowSize": [3, 3],
                "StartPadding": [1, 1],
                "EndPadding": [1, 1],
            },
            {"InputTensor": px},
            {"OutputTensor": pooled, "OutputIndicesTensor": indices},
            lambda: torch.nn.functional.max_pool2d(tpx, 3, 2, 1, return_indices=True),
            "max_pool2d with int64 indices, allocates",
            pooled.nbytes * 3,
            helper.make_node("MaxPool", ["X0"], ["Y0", "Y1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
            if ort is not None
            else None,
            {"X0": f32, "Y0": f32, "Y1": i64},
        )
    )
    state = np.array([1, 2, 3, 4, 0xDEADBEEF, 0xCAFEF00D], np.uint32)
    bits, next_state = np.empty(n, np.uint32), np.empty(6, np.uint32)
    tbits = tt(bits.view(np.int32))
    result.append(
        _datamove_case(
            "9h RANDOM_GENERATOR 256 MiB",
            "RANDOM_GENERATOR",
            {
                "InputStateTensor": t((6,), "UINT32"),
                "OutputTensor": t((n,), "UINT32"),
                "OutputStateTensor": t((6,), "UINT32"),
                "Type": "PHILOX_4X32_10",
            },
            {"InputStateTensor": state},
            {"OutputTensor": bits, "OutputStateTensor": next_state},
            lambda: tbits.random_(),
            "random_ (mt19937)",
            0,
            None,
            {},
        )
    )
    return result


# -- main ------------------------------------------------------------------------------------------


def _commit() -> str:
    try:
        return subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], text=True).strip()
    except Exception:
        return "unknown"


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main() -> None:
    import numba

    print(f"# dmlops CPU benchmark  {time.strftime('%Y-%m-%d %H:%M')}  commit {_commit()}")
    print(
        f"# {_cpu_name()}, {os.cpu_count()} CPUs; threads={ARGS.threads}; python {platform.python_version()}, "
        f"numpy {np.__version__}, numba {numba.__version__}"
        + (f", torch {torch.__version__}" if torch is not None else "")
        + (f", onnxruntime {ort.__version__}, onnx {onnx.__version__}" if ort is not None else "")
    )
    print(
        f"# median of {ARGS.repeats} interleaved rounds after one warm-up; "
        "ratio = impl time / dmlops time (>1: dmlops faster)"
    )
    builders = {
        "roi": roi_workloads,
        "gather": gather_workloads,
        "slice": slice_workloads,
        "maxpool": maxpool_workloads,
        "avgpool": avgpool_workloads,
        "resample": resample_workloads,
        "elementwise": elementwise_workloads,
        "reduction": reduction_workloads,
        "indexing": indexing_workloads,
        "datamove": datamove_workloads,
    }
    only = [s for s in ARGS.only.split(",") if s]
    skip = {s for s in ARGS.skip_impl.split(",") if s}
    header = (
        f"{'workload':36s} {'impl':16s} {'median ms':>10s} {'min':>8s} {'max':>8s} {'ratio':>6s} "
        f"{'extra MB':>9s} {'mem ratio':>9s}"
    )
    print(header)
    named = [o for o in only if not any(key.startswith(o) for key in builders)]  # workload name prefixes
    for key, build in builders.items():
        whole_group = not only or any(key.startswith(o) for o in only)
        if not whole_group and not named:
            continue
        for wl in build():
            if not whole_group and not any(wl.name.startswith(o) for o in named):
                continue
            base = wl.in_bytes + wl.out_bytes
            rows = measure_interleaved([i for i in wl.impls if i[0] not in skip], ARGS.repeats)
            gc.collect()
            ref = rows[0].median
            peers = [r for r in rows[1:]]
            for r in rows:
                ratio = r.median / ref
                mem = (base + r.extra_bytes) / base
                print(
                    f"{wl.name:36s} {r.impl:16s} {r.median * 1e3:10.1f} {min(r.times) * 1e3:8.1f} "
                    f"{max(r.times) * 1e3:8.1f} "
                    f"{ratio:6.2f} {r.extra_bytes / 1e6:9.1f} {mem:9.2f}  {r.note}"
                )
                if ARGS.json:
                    print(
                        json.dumps(
                            {"workload": wl.name, "impl": r.impl, "times_s": r.times, "extra_bytes": r.extra_bytes}
                        )
                    )
            if peers:
                best = min(peers, key=lambda r: r.median)
                speedup = best.median / ref
                paired = sorted(p / d for p, d in zip(best.times, rows[0].times))
                q1, q2, q3 = statistics.quantiles(paired, n=4) if len(paired) > 1 else paired * 3
                print(
                    f"{'':36s} -> dmlops vs best peer ({best.impl}): {speedup:.2f}x; per round {q2:.2f}x "
                    f"[{q1:.2f}-{q3:.2f}]; in+out {base / 1e6:.1f} MB"
                )
            if wl.floor_arrays:
                ceiling = copy_ceiling_s(wl.out_bytes * wl.floor_arrays // 2)
                print(
                    f"{'':36s} -> copy ceiling ({wl.floor_arrays} arrays moved) {ceiling * 1e3:.1f} ms: "
                    f"dmlops at {ceiling / ref:.0%} of it"
                )
            note = wl.check()
            if note:
                print(f"{'':36s} -> check: {note}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
