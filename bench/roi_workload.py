"""The ROI_ALIGN benchmark workload of performance.md, shared by the GPU scripts.

Importable without a GPU. Run as a script, it prints the workload's sector footprint:
the distinct 32-byte sectors that the taps of each ROI touch in one NCHW channel, summed
over ROIs and channels. Every tap needs its sector, so this many sectors must reach the
SMs (from L2 or DRAM) at least once per ROI and channel, whatever the kernel.
"""

from __future__ import annotations

import numpy as np

from dmlops import TensorDesc
from dmlops.descs.roi import RoiAlignDesc, sample_taps, samples_per_output


def roi_set(n_rois: int, scale: float) -> np.ndarray:
    rng = np.random.default_rng(7)
    sizes = np.exp(rng.uniform(np.log(16), np.log(512), size=(n_rois, 2)))
    centers = rng.uniform(0, 200 / scale, size=(n_rois, 2))
    boxes = np.concatenate([centers - sizes / 2, centers + sizes / 2], axis=1)  # x1, y1, x2, y2
    return boxes


def roi_desc(dml: str, sampling: int, strides: tuple[int, ...] | None = None) -> RoiAlignDesc:
    """The ROI_ALIGN desc of the benchmark workload (2x256x200x200, 1000 ROIs, 7x7, scale 1/4)."""
    lo, hi = (sampling, sampling) if sampling else (1, 2**32 - 1)
    return RoiAlignDesc(
        input_tensor=TensorDesc(data_type=dml, sizes=(2, 256, 200, 200), strides=strides),
        roi_tensor=TensorDesc(data_type=dml, sizes=(1000, 4)),
        batch_indices_tensor=TensorDesc(data_type="UINT32", sizes=(1000,)),
        output_tensor=TensorDesc(data_type=dml, sizes=(1000, 256, 7, 7)),
        reduction_function="AVERAGE",
        interpolation_mode="LINEAR",
        spatial_scale_x=0.25,
        spatial_scale_y=0.25,
        out_of_bounds_input_value=0.0,
        minimum_samples_per_output=lo,
        maximum_samples_per_output=hi,
    )


def _taps(desc: RoiAlignDesc, start: float, end: float, n_out: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """The in-bounds (first, second) taps of one ROI's samples along an axis (the scaled region start..end)."""
    samples = samples_per_output(end - start, n_out, desc.minimum_samples_per_output, desc.maximum_samples_per_output)
    count = n_out * samples
    j = np.arange(count, dtype=np.float64)
    coord = (j - desc.output_pixel_offset) * ((end - start) / count) + start - desc.input_pixel_offset
    first, second, _, in_bounds = sample_taps(desc, coord, length)
    return first[in_bounds], second[in_bounds]


def sector_footprint(sampling: int, itemsize: int) -> int:
    """Distinct 32-byte sectors of the workload's taps, over all ROIs and channels."""
    desc = roi_desc("FLOAT32", sampling)
    _, c, h, w = desc.input_tensor.sizes
    r, _, oh, ow = desc.output_tensor.sizes
    per_sector = 32 // itemsize
    total = 0
    for x1, y1, x2, y2 in roi_set(r, desc.spatial_scale_x).astype(np.float32).astype(np.float64):
        cols = np.concatenate(_taps(desc, x1 * desc.spatial_scale_x, x2 * desc.spatial_scale_x, ow, w))
        rows = np.concatenate(_taps(desc, y1 * desc.spatial_scale_y, y2 * desc.spatial_scale_y, oh, h))
        total += np.unique(rows).size * np.unique(cols // per_sector).size
    return total * c


def main() -> None:
    for sampling in (2, 0):
        for name, itemsize in (("fp32", 4), ("fp16", 2)):
            sectors = sector_footprint(sampling, itemsize)
            print(
                f"sr={sampling or 'adaptive'} {name}: {sectors / 1e6:.1f} M sectors = {sectors * 32 / 1e9:.2f} GB",
                flush=True,
            )


if __name__ == "__main__":
    main()
