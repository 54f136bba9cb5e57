"""Drive the ROI_ALIGN benchmark workload once per configuration, for a profiler.

``ncu --clock-control none -k regex:roi python3 bench/roi_profile.py`` reads the
hardware counters of the dmlops kernels (and torchvision's, for comparison) on the
workload of bench/gpu.py: 2x256x200x200 input, 1000 ROIs, 7x7, sr=2 and adaptive.
"""

from __future__ import annotations

import sys

import cupy as cp
import numpy as np
import torch
import torchvision

sys.path.insert(0, "bench")
from roi_workload import roi_desc, roi_set

from dmlops.cuda import roi as cuda_roi
from dmlops.enums import FeatureLevel


def main() -> None:
    if len(sys.argv) > 1:  # channels per block of roi_align_avg, to compare
        cuda_roi.SEPARABLE_CHANNELS = int(sys.argv[1])
    n, c, h, w, r, scale = 2, 256, 200, 200, 1000, 0.25
    boxes = roi_set(r, scale)
    batch = np.random.default_rng(3).integers(0, n, size=r).astype(np.uint32)
    x = cp.random.standard_normal((n, c, h, w), dtype=cp.float32)
    rois = cp.asarray(boxes.astype(np.float32))
    bi = cp.asarray(batch)
    out = cp.empty((r, c, 7, 7), dtype=cp.float32)
    tx = torch.as_tensor(x, device="cuda")
    tboxes = torch.cat(
        [torch.from_numpy(batch.astype(np.float32))[:, None], torch.from_numpy(boxes.astype(np.float32))], 1
    )
    tboxes = tboxes.cuda()
    for sampling in (2, 0):
        desc = roi_desc("FLOAT32", sampling)
        for _ in range(2):
            cuda_roi.run_roi_align(
                desc,
                {"InputTensor": x, "ROITensor": rois, "BatchIndicesTensor": bi},
                {"OutputTensor": out},
                feature_level=FeatureLevel.latest(),
                strict=False,
                check_batch_indices=False,
            )
        torchvision.ops.roi_align(tx, tboxes, (7, 7), scale, sampling, aligned=True)
    cp.cuda.Device().synchronize()
    for plan in cuda_roi._PLANS.plans.values():
        launch = plan[1]
        attrs = {k: getattr(launch.fn, k, None) for k in ("num_regs", "local_size_bytes", "shared_size_bytes")}
        print(f"grid {launch.grid} threads {launch.block}: {attrs}", flush=True)


if __name__ == "__main__":
    main()
