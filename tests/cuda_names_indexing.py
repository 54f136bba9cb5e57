"""The specialisations of kernels/indexing.cu that the cuda backend can request (tests/test_cuda_kernels_compile.py)."""

from __future__ import annotations

import itertools

STORAGE = ["u8", "u16", "u32", "u64"]
OFFSETS = ["int", "long long"]
INDEX_WRAP = [("i32", "true"), ("i32", "false"), ("i64", "true"), ("i64", "false"), ("u32", "false"), ("u64", "false")]
"""Unsigned index types never ask for the signed wrap (UINT64's own wrap is built in)."""

NAMES: list[str] = []
for t, (idx, wrap), i in itertools.product(STORAGE, INDEX_WRAP, OFFSETS):
    NAMES.append(f"gather_elements<{t}, {idx}, {wrap}, {i}>")
    NAMES.append(f"gather_nd<{t}, {idx}, {wrap}, {i}>")
    NAMES.append(f"scatter_nd_write<{t}, {idx}, {wrap}, {i}>")
    NAMES.append(f"one_hot<{t}, {idx}, {wrap}, {i}>")
for t, (idx, wrap), shared in itertools.product(STORAGE, INDEX_WRAP, ["true", "false"]):
    NAMES.append(f"scatter_elements<{t}, {idx}, {wrap}, {shared}>")
for idx, wrap in INDEX_WRAP:
    NAMES.append(f"scatter_nd_claim<{idx}, {wrap}>")
for t, length, i in itertools.product(STORAGE, ["u32", "u64", "i32", "i64"], OFFSETS):
    NAMES.append(f"reverse_subsequences<{t}, {length}, {i}>")
for t, has_input, i in itertools.product(STORAGE, ["true", "false"], OFFSETS):
    NAMES.append(f"diagonal_matrix<{t}, {has_input}, {i}>")
for t, (idx, wrap), vec in itertools.product(STORAGE, INDEX_WRAP, [1, 4]):
    NAMES.append(f"gather_elements_rows<{t}, {idx}, {wrap}, {vec}>")
for t, (idx, wrap), vec in itertools.product(STORAGE, INDEX_WRAP, [1, 4]):
    NAMES.append(f"scatter_elements_staged<{t}, {idx}, {wrap}, {vec}, 2>")  # U: data_movement.SCATTER_BATCH
