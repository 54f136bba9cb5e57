"""Specialisations of kernels/reduce.cu compiled by test_cuda_kernels_compile.py.

Every data type with every function it takes (reduce_cols), the index output types of
ARGMAX / ARGMIN, and reduce_rows / reduce_combine at each vector width and block size the
host picks (dmlops.cuda.reduction).
"""

from __future__ import annotations

FLOATS = ("float", "half_t", "double")
INTS = ("i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64")
INDEX = ("u32", "u64", "i32", "i64")
VALUE_FUNCTIONS = {"float": (0, 1, 2, 3, 4, 5, 6, 7, 10, 11), "int": (0, 7, 10, 11)}
ARG_FUNCTIONS = (12, 13, 14, 15)
VEC = {"float": 4, "half_t": 8, "double": 2, "i8": 16, "u8": 16, "i16": 8, "u16": 8}
VEC.update({"i32": 4, "u32": 4, "i64": 2, "u64": 2})

NAMES: list[str] = []
for t in FLOATS + INTS:
    kind = "float" if t in FLOATS else "int"
    combos = [(t, f) for f in VALUE_FUNCTIONS[kind]] + [(INDEX[f % 4], f) for f in ARG_FUNCTIONS]
    for out, f in combos:
        NAMES.append(f"reduce_cols<{t}, {out}, {f}>")
    NAMES.append(f"reduce_combine<{t}, {t}, 0>")
    NAMES.append(f"reduce_combine<{t}, u64, 13>")
    NAMES.append(f"reduce_rows<{t}, {t}, 10, {VEC[t]}, 256>")
    NAMES.append(f"reduce_rows<{t}, u32, 12, 1, 64>")
    NAMES.append(f"reduce_combine<{t}, {t}, 10>")
    NAMES.append(f"reduce_rows<{t}, {t}, 11, 1, 32>")
for block in (32, 64, 128, 256):
    NAMES.append(f"reduce_rows<float, float, 0, 4, {block}>")
    NAMES.append(f"reduce_rows<float, float, 6, 1, {block}>")
    NAMES.append(f"reduce_rows<half_t, half_t, 3, 8, {block}>")
