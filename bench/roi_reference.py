"""ROI_ALIGN on the NumPy reference (the default backend) at many ROIs: time and peak memory.

Usage::

    python bench/roi_reference.py [--rois 100000] [--repeats 3] [--only avg,max,adaptive,wide] [--channels 4]

Each workload runs ``dmlops.execute(desc, ..., backend="numpy")`` once to warm up, then
``--repeats`` times; the median wall time is printed with µs per ROI, the median process
CPU time (less sensitive to other jobs on a shared machine; NumPy and OpenBLAS run
single-threaded here for these small products), and the peak
extra resident memory of the last call (``VmHWM`` after resetting it through
``/proc/self/clear_refs``, minus the resident size before the call; the output is
allocated by the call, so it is in the figure).

Workloads (FLOAT32, LINEAR, OutputSize 7x7, scale 1, random ROIs of 4-48 pixels a side,
some partly outside the image, seed 0):

* ``avg``: input 1x4x64x64 (``--channels`` sets the 4), two samples per output
  (Min = Max = 2), AVERAGE;
* ``max``: the same with MAX;
* ``adaptive``: AVERAGE, Min 1, Max UINT32_MAX (ONNX's sampling_ratio 0);
* ``wide``: performance.md's CPU/GPU workload shape with 256 channels (2x256x200x200,
  scale 1/4, sr=2), at ``--rois / 100`` ROIs: dominated by the per-ROI, per-channel
  products (see docs/performance.md).

To compare with an older tree, run this file with ``PYTHONPATH`` pointing at that
tree's ``src``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import dmlops
from dmlops import TensorDesc
from dmlops.descs.roi import UINT32_MAX, RoiAlignDesc


def _rss_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def workload(name: str, n_rois: int, seed: int = 0, channels: int = 4) -> tuple[RoiAlignDesc, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    if name == "wide":
        n_rois = max(1, n_rois // 100)
        batch, channels, height, width, scale, lo, hi = 2, 256, 200, 200, 0.25, 2, 2
        sizes = np.exp(rng.uniform(np.log(16), np.log(512), size=(n_rois, 2)))
        centers = rng.uniform(0, 200 / scale, size=(n_rois, 2))
    else:
        batch, height, width, scale = 1, 64, 64, 1.0
        lo, hi = (1, UINT32_MAX) if name == "adaptive" else (2, 2)
        sizes = rng.uniform(4, 48, size=(n_rois, 2))
        centers = rng.uniform(-4, 68, size=(n_rois, 2))
    rois = np.concatenate([centers - sizes / 2, centers + sizes / 2], axis=1).astype(np.float32)
    desc = RoiAlignDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(batch, channels, height, width)),
        roi_tensor=TensorDesc(data_type="FLOAT32", sizes=(n_rois, 4)),
        batch_indices_tensor=TensorDesc(data_type="UINT32", sizes=(n_rois,)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(n_rois, channels, 7, 7)),
        reduction_function="MAX" if name == "max" else "AVERAGE",
        interpolation_mode="LINEAR",
        spatial_scale_x=scale,
        spatial_scale_y=scale,
        out_of_bounds_input_value=0.0,
        minimum_samples_per_output=lo,
        maximum_samples_per_output=hi,
    )
    inputs = {
        "InputTensor": rng.standard_normal((batch, channels, height, width)).astype(np.float32),
        "ROITensor": rois,
        "BatchIndicesTensor": rng.integers(0, batch, n_rois).astype(np.uint32),
    }
    return desc, inputs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rois", type=int, default=100_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--only", default="avg,max,adaptive,wide")
    p.add_argument("--channels", type=int, default=4, help="ChannelCount of avg, max and adaptive")
    args = p.parse_args()
    for name in args.only.split(","):
        desc, inputs = workload(name, args.rois, channels=args.channels)
        n = desc.num_rois
        dmlops.execute(desc, inputs, backend="numpy")
        times, cpu = [], []
        for _ in range(args.repeats):
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            before = _rss_kib("VmRSS")
            t0, c0 = time.perf_counter(), time.process_time()
            dmlops.execute(desc, inputs, backend="numpy")
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            peak = _rss_kib("VmHWM") - before
        t = statistics.median(times)
        print(
            f"{name}: {n} ROIs x {desc.input_tensor.sizes[1]} channels: median {t:.3f} s "
            f"({t / n * 1e6:.1f} us per ROI; min {min(times):.3f}, max {max(times):.3f}; "
            f"CPU time median {statistics.median(cpu):.3f} s), "
            f"peak extra memory {peak / 1024:.0f} MiB",
            flush=True,
        )


if __name__ == "__main__":
    main()
