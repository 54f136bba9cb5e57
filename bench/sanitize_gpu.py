"""Run the data-dependent kernels on hostile inputs, for ``compute-sanitizer --tool memcheck``.

GATHER with indices far out of range (both signs, INT64/UINT64/INT32/UINT32 extremes)
on every index type, small and 8-D strided cases, and ROI_ALIGN with batch indices out
of range (DataIndexError expected, but the kernel must still stay in bounds). CuPy's
memory pool is disabled so every array is its own cudaMalloc allocation and memcheck
sees any access past it.
"""

from __future__ import annotations

import cupy as cp
import numpy as np

import dmlops
from dmlops import TensorDesc
from dmlops.descs.gather import GatherDesc
from dmlops.descs.roi_align import RoiAlignDesc
from dmlops.errors import DataIndexError

cp.cuda.set_allocator(None)

checked = 0
for idx_dtype in (np.int64, np.uint64, np.int32, np.uint32):
    info = np.iinfo(idx_dtype)
    wild = np.array(
        [info.min, info.max, info.min + 1, info.max - 1, -1, 0, 1, 2, 3, 4, -4, -3, -5, -6, 5, 6, 2**31 - 1, 2**15],
        dtype=np.float64,
    )
    wild = np.clip(wild, info.min, info.max).astype(idx_dtype)
    for dtype in (np.float32, np.float16, np.int8, np.float64):
        for width in (1, 3, 64):  # scalar rows, odd rows, vectorised rows
            table = cp.asarray(np.arange(5 * width).reshape(5, width).astype(dtype))
            desc = GatherDesc(
                input_tensor=TensorDesc(data_type=dmlops.enums.TensorDataType.from_numpy(dtype), sizes=(5, width)),
                indices_tensor=TensorDesc(
                    data_type=dmlops.enums.TensorDataType.from_numpy(idx_dtype), sizes=(1, wild.size)
                ),
                output_tensor=TensorDesc(
                    data_type=dmlops.enums.TensorDataType.from_numpy(dtype), sizes=(wild.size, width)
                ),
                axis=0,
                index_dimensions=1,
            )
            idx = cp.asarray(wild.reshape(1, -1))
            got = dmlops.execute(desc, {"InputTensor": table, "IndicesTensor": idx}, backend="cuda")["OutputTensor"]
            ref = dmlops.execute(desc, {"InputTensor": table.get(), "IndicesTensor": wild.reshape(1, -1)})[
                "OutputTensor"
            ]
            assert np.array_equal(got.get(), ref), (idx_dtype, dtype, width)
            try:
                dmlops.execute(desc, {"InputTensor": table, "IndicesTensor": idx}, backend="cuda", strict=True)
                raise AssertionError("strict gather did not raise")
            except DataIndexError:
                pass
            checked += 1
    # last axis gather (one index per element) on a strided 8-D view
    base = cp.arange(2 * 3 * 2 * 5 * 2 * 1 * 2 * 7, dtype=cp.float32).reshape(2, 3, 2, 5, 2, 1, 2, 7)
    view = base[::-1, :, ::-1, ::2, :, :, ::-1, :]
    shape = view.shape
    idx8 = cp.asarray(np.resize(wild, 6).reshape(1, 1, 1, 1, 1, 1, 2, 3))
    desc = GatherDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=shape),
        indices_tensor=TensorDesc(data_type=dmlops.enums.TensorDataType.from_numpy(idx_dtype), sizes=idx8.shape),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(*shape[:6], 2, 3)[-8:]),
        axis=7,
        index_dimensions=2,
    )
    try:
        desc.validate()
        got = dmlops.execute(desc, {"InputTensor": view, "IndicesTensor": idx8}, backend="cuda")["OutputTensor"]
        ref = dmlops.execute(desc, {"InputTensor": view.get(), "IndicesTensor": idx8.get()})["OutputTensor"]
        assert np.array_equal(got.get(), ref)
        checked += 1
    except dmlops.InvalidDescError as exc:
        print("skip 8-D case:", exc)

# ROI_ALIGN with a batch index far out of range: DataIndexError, no out-of-bounds read.
x = cp.random.standard_normal((2, 3, 8, 8), dtype=cp.float32)
rois = cp.asarray([[0, 0, 4, 4], [1, 1, 7, 7]], dtype=cp.float32)
for bad in (np.uint32(2**32 - 1), np.uint64(2**64 - 1)):
    bi = cp.asarray(np.array([0, bad], dtype=bad.dtype))
    desc = RoiAlignDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(2, 3, 8, 8)),
        roi_tensor=TensorDesc(data_type="FLOAT32", sizes=(2, 4)),
        batch_indices_tensor=TensorDesc(data_type=dmlops.enums.TensorDataType.from_numpy(bad.dtype), sizes=(2,)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(2, 3, 2, 2)),
        reduction_function="AVERAGE",
        interpolation_mode="LINEAR",
        spatial_scale_x=1.0,
        spatial_scale_y=1.0,
        out_of_bounds_input_value=0.0,
        minimum_samples_per_output=1,
        maximum_samples_per_output=4,
    )
    try:
        dmlops.execute(desc, {"InputTensor": x, "ROITensor": rois, "BatchIndicesTensor": bi}, backend="cuda")
        raise AssertionError("bad batch index did not raise")
    except DataIndexError as exc:
        print("ROI_ALIGN:", exc)
cp.cuda.Device().synchronize()
print(f"sanitize cases passed: {checked}")
