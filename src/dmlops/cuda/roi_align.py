"""ROI_ALIGN on the GPU: one block per (ROI, group of channels), see kernels/roi_align.cu.

Batch indices outside ``[0, BatchCount)`` raise DataIndexError (ruling 3): a check
kernel runs alongside the main one (which clamps, so it never reads out of bounds),
and the flag is read back after both are queued.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..descs.roi_align import RoiAlignDesc
from ..enums import FeatureLevel, InterpolationMode, ReduceFunction
from ._copy import C_TYPES, PlanCache
from ._runtime import element_strides, get_kernel, params
from .gather import first_bad_index_async

_PLANS = PlanCache()


def run(
    desc: RoiAlignDesc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
    check_batch_indices: bool = True,
) -> None:
    """Launch ROI_ALIGN on device views (see :func:`dmlops.cuda.execute`).

    ``check_batch_indices=False`` skips the DataIndexError check and its device-to-host
    read (the kernel clamps regardless); only the benchmark uses it, to time the kernel.
    """
    x = inputs["InputTensor"]
    rois = inputs["ROITensor"]
    bi = inputs["BatchIndicesTensor"]
    y = outputs["OutputTensor"]
    xs, rs, bs, ys = element_strides(x), element_strides(rois), element_strides(bi), element_strides(y)
    key = (id(desc), xs, rs, bs, ys)
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        n, c, h, w = desc.input_tensor.sizes
        r, _, oh, ow = desc.output_tensor.sizes
        bins = oh * ow
        per_block = max(1, min(c, 256 // bins)) if bins <= 256 else 1
        threads = min(256, -(-per_block * bins // 32) * 32)
        p = params(
            ("num_rois", "i8", r),
            ("batch_count", "i8", n),
            ("channels", "i8", c),
            ("in_h", "i8", h),
            ("in_w", "i8", w),
            ("out_h", "i8", oh),
            ("out_w", "i8", ow),
            ("channels_per_block", "i8", per_block),
            ("x_stride", "i8", list(xs)),
            ("y_stride", "i8", list(ys)),
            ("roi_stride", "i8", [rs[-2] if len(rs) >= 2 else 0, rs[-1]]),
            ("bi_stride", "i8", bs[-1]),
            ("min_samples", "i8", desc.minimum_samples_per_output),
            ("max_samples", "i8", desc.maximum_samples_per_output),
            ("scale_x", "f8", desc.spatial_scale_x),
            ("scale_y", "f8", desc.spatial_scale_y),
            ("in_offset", "f8", desc.input_pixel_offset),
            ("out_offset", "f8", desc.output_pixel_offset),
            ("oob", "f8", desc.out_of_bounds_input_value),
        )
        reduce_max = desc.reduction_function is ReduceFunction.MAX
        linear = desc.interpolation_mode is InterpolationMode.LINEAR
        bi_c = {"uint32": "u32", "uint64": "u64"}[str(bi.dtype)]
        fn = get_kernel(
            "roi_align.cu",
            f"roi_align<{C_TYPES[x.dtype]}, {bi_c}, {'true' if reduce_max else 'false'}, "
            f"{'true' if linear else 'false'}>",
        )
        plan = _PLANS.put(key, (desc, fn, (r, -(-c // per_block)), threads, p))
    _, fn, grid, threads, p = plan
    flag = first_bad_index_async(bi, desc.batch_count, False) if check_batch_indices else None
    fn(grid, (threads,), (x, rois, bi, y, p))
    if flag is None:
        return
    bad = int(flag.get()[0])
    if bad != 2**64 - 1:
        flat = bi.reshape(-1) if bi.flags.c_contiguous else bi.ravel()
        raise desc.batch_index_error(bad, int(flat[bad].get()))
