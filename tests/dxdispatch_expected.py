"""What DxDispatch's own sample models (``DxDispatch/models/dml_*.json``, copied to
``tests/directml/models/dxdispatch``) print: the lines were checked by hand against NumPy
formulas (noted beside each). Shared by the directml and numpy runs of the models.
"""

from __future__ import annotations

from pathlib import Path

MODELS = Path(__file__).parent / "directml" / "models" / "dxdispatch"

EXPECTED: dict[str, list[str]] = {
    # 3x3 of 1..9 cross-correlated with a 2x2 filter of 0.5
    "dml_convolution_2d": ["Resource 'output': 6, 8, 12, 14"],
    "dml_convolution_3d": ["Resource 'output': 4, 4, 4, 4, 4, 4, 4, 4"],
    # cumprod([2, 4, 8, 3])
    "dml_cumulative_product": ["Resource 'Out': 2, 8, 64, 192"],
    "dml_element_wise_add": ["Resource 'Out': 6, 10, -2"],
    # ELU(alpha 0.5) of [6, 10, -2]: 0.5 * (exp(-2) - 1) = -0.432332
    "dml_element_wise_add1": ["Resource 'Out': 6, 10, -0.432332"],
    "dml_element_wise_add_npy": ["Resource 'Out': "],  # checked against the files below
    "dml_element_wise_clip": ["Resource 'A': -2.5, -2.5, -2, -1, 0, 1, 2, 2.5, 2.5"],
    # 2 * [1, 2, 3] + 10
    "dml_element_wise_identity": ["Resource 'Out': 12, 14, 16"],
    # 3.2 + 1.5 * k
    "dml_fill_value_sequence": ["Resource 'Out': 3.2, 4.7, 6.2, 7.7, 9.2"],
    # outer([1, 2, 3], [4, 5, 6]) + 2
    "dml_gemm": ["Resource 'output': 6, 7, 8, 10, 12, 14, 14, 17, 20"],
    "dml_gemm_graph": ["Resource 'output': " + ", ".join(["32"] * 1024)],
    # A[0:3], B[0:2], A[4:9]
    "dml_join": ["Resource 'Out': 1, 2, 3, 100, 115, 5, 6, 7, 8, 9"],
    "dml_owned_tensors": ["Resource 'Out': 6, 10, -2"],
    "dml_reduce": ["Resource 'input': 1, 2, 3, 4, 5, 6, 7, 8, 9", "Resource 'output': 6, 15, 24"],
    "dml_slice": ["Resource 'output': 7, 9, 12, 14, 17, 19"],
    "dml_split": ["Resource 'Out1': 1, 2", "Resource 'Out2': 3, 4", "Resource 'Out3': 5, 6"],
    # bilinear 2x upsampling of [[1, 2], [3, 4]] (half-pixel centres, edges clamped)
    "dml_upsample_2d": [
        "Resource 'output': 1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4"
    ],
}

FP16_ONLY: dict[str, list[str]] = {
    # CLIP1 of [1..5] to [2, 4] in FLOAT16: this Wine stack has no FLOAT16, numpy runs it
    "dml_scalar_union_fp16": ["Resource 'output': 2, 2, 3, 4, 4"],
}
