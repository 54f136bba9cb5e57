"""Data movement as data: the copy programs that every backend runs with its strided copy.

SLICE, JOIN, SPLIT, TILE, PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1) and
FILL_VALUE_CONSTANT move elements without arithmetic. Each is written here once as a
*copy program*: a short sequence of steps, each a strided copy (or a fill) over an
iteration space, whose source and destination are affine maps from the iteration
coordinates to a tensor's logical coordinates (``start + matrix @ iteration``). A
backend turns a map into element strides (``strides @ matrix``) and a base offset of
its bound array and runs the step with its own copy (NumPy views on cpu, the strided
copy kernel on cuda), in order. The NumPy reference computes the same operators by
their own formulas (``reference/data_movement.py``): the tests compare the two.

PADDING writes the interior first, then axis by axis the padded slabs: along axis
``d`` the slab reads the output's own interior rows (already padded along the axes
before ``d``), split into runs where :func:`~dmlops.descs.data_movement.padding_indices`
is an arithmetic progression (EDGE: step 0, REFLECTION and SYMMETRIC: -1 or +1, WRAP:
+1), or fills CONSTANT's value. Sources and destinations of one step never overlap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from .data_movement import COPY_PROGRAM_OPERATORS, padding_indices, padding_value, slice_grad_positions

Matrix = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Affine:
    """Tensor ``member``'s logical coordinates ``start + matrix @ i`` for iteration coordinates ``i``.

    ``matrix`` has a row per tensor axis and a column per iteration axis.
    """

    member: str
    start: tuple[int, ...]
    matrix: Matrix

    def element_map(self, strides: Sequence[int]) -> tuple[int, tuple[int, ...]]:
        """``(base offset, stride per iteration axis)`` in elements, for a tensor of these element strides."""
        base = sum(s * t for s, t in zip(self.start, strides))
        columns = len(self.matrix[0]) if self.matrix else 0
        return base, tuple(sum(strides[r] * self.matrix[r][c] for r in range(len(strides))) for c in range(columns))


@dataclass(frozen=True)
class Copy:
    """``dst[i] = src[i]`` for every ``i`` in ``sizes``."""

    sizes: tuple[int, ...]
    dst: Affine
    src: Affine


@dataclass(frozen=True)
class Fill:
    """``dst[i] = value`` for every ``i`` in ``sizes`` (``value`` a NumPy scalar of the tensor's type)."""

    sizes: tuple[int, ...]
    dst: Affine
    value: Any


Step = Copy | Fill


def _diagonal(steps: Sequence[int]) -> Matrix:
    return tuple(tuple(step if r == c else 0 for c in range(len(steps))) for r, step in enumerate(steps))


def window(member: str, start: Sequence[int], steps: Sequence[int]) -> Affine:
    """Axis ``k`` of the iteration is axis ``k`` of the tensor, from ``start[k]`` by ``steps[k]``."""
    return Affine(member, tuple(int(v) for v in start), _diagonal([int(v) for v in steps]))


def whole(member: str, rank: int, start: Sequence[int] | None = None) -> Affine:
    """The identity map (from ``start``, zeros by default)."""
    return window(member, start if start is not None else (0,) * rank, (1,) * rank)


# -- the operators ----------------------------------------------------------------------------------


def _slice(desc: Any) -> list[Step]:
    sizes = tuple(desc.output_tensor.sizes)
    src = window("InputTensor", desc.offsets, desc.strides)
    return [Copy(sizes, whole("OutputTensor", len(sizes)), src)]


def _slice_grad(desc: Any) -> list[Step]:
    """Zeros, then InputGradientTensor into SLICE1's window (where every position is in range and distinct).

    The reference's other cases (a coordinate before the axis, with DirectML's flat
    address, or positions that repeat) are not copies: the cpu and cuda backends refuse them.
    """
    out = desc.output_gradient_tensor
    sizes = tuple(desc.input_gradient_tensor.sizes)
    starts, steps = [], []
    for p, n, stride in zip(slice_grad_positions(desc), out.sizes, desc.input_window_strides):
        stride = 0 if n == 1 else int(stride)  # an axis of size 1 is written at 0 (as the reference)
        if p.size and (p.min() < 0 or (p.size > 1 and stride == 0)):
            raise UnsupportedError(
                f"{desc.dml_name}: a window position before its axis or repeated is written as DirectML "
                "writes it (flat addresses, the last write winning) only by numpy and directml"
            )
        starts.append(0 if n == 1 or not p.size else int(p[0]))
        steps.append(stride)
    rank = len(sizes)
    zero = np.zeros((), dtype=out.dtype)[()]
    dst = window("OutputGradientTensor", starts, steps)
    return [
        Fill(tuple(out.sizes), whole("OutputGradientTensor", rank), zero),
        Copy(sizes, dst, whole("InputGradientTensor", rank)),
    ]


def _along(axis: int, rank: int, offset: int) -> tuple[int, ...]:
    return tuple(offset if i == axis else 0 for i in range(rank))


def _pieces(desc: Any, joined: str, parts: str, into_joined: bool) -> list[Step]:
    """JOIN (``into_joined``) or SPLIT: tensor ``parts[k]`` is the k-th piece of ``joined`` along Axis."""
    axis, rank, offset = int(desc.axis), desc.tensor(joined).dimension_count, 0
    steps: list[Step] = []
    for k, tensor in enumerate(getattr(desc, "input_tensors" if into_joined else "output_tensors")):
        piece, whole_part = whole(joined, rank, _along(axis, rank, offset)), whole(f"{parts}[{k}]", rank)
        steps.append(Copy(tuple(tensor.sizes), *((piece, whole_part) if into_joined else (whole_part, piece))))
        offset += tensor.sizes[axis]
    return steps


def _tile(desc: Any) -> list[Step]:
    """Iteration axes (repeat, element) per tensor axis: ``Output[r n + k] = Input[k]``."""
    sizes = tuple(desc.input_tensor.sizes)
    rank = len(sizes)
    iteration = tuple(v for n, r in zip(sizes, desc.repeats) for v in (int(r), n))
    dst = tuple(
        tuple(n if c == 2 * a else (1 if c == 2 * a + 1 else 0) for c in range(2 * rank)) for a, n in enumerate(sizes)
    )
    src = tuple(tuple(1 if c == 2 * a + 1 else 0 for c in range(2 * rank)) for a in range(rank))
    return [Copy(iteration, Affine("OutputTensor", (0,) * rank, dst), Affine("InputTensor", (0,) * rank, src))]


def _runs(index: np.ndarray) -> list[tuple[int, int, int, int]]:
    """``(first position, length, first value, step)`` of the maximal arithmetic runs of ``index``."""
    runs: list[tuple[int, int, int, int]] = []
    p = 0
    while p < len(index):
        if p + 1 == len(index):
            runs.append((p, 1, int(index[p]), 0))
            break
        step = int(index[p + 1] - index[p])
        diffs = np.diff(index[p:])
        breaks = np.flatnonzero(diffs != step)
        length = int(breaks[0]) + 1 if breaks.size else len(index) - p
        runs.append((p, length, int(index[p]), step))
        p += length
    return runs


def _padding(desc: Any) -> list[Step]:
    sizes = tuple(desc.input_tensor.sizes)
    rank = len(sizes)
    start = tuple(int(v) for v in desc.start_padding)
    out_sizes = tuple(desc.output_tensor.sizes)
    mode = desc.padding_mode.name
    steps: list[Step] = [Copy(sizes, whole("OutputTensor", rank, start), whole("InputTensor", rank))]
    value = None
    if mode == "CONSTANT":
        if getattr(desc, "padding_value_data_type", None) is None:  # PADDING: a FLOAT converted on the host
            value = padding_value(desc.padding_value, desc.output_tensor.data_type)
        else:
            value = np.asarray(desc.padding_value, dtype=desc.output_tensor.dtype)[()]
    for d in range(rank):
        index = padding_indices(mode, sizes[d], start[d], int(desc.end_padding[d]))
        # the slab of axis d: full extent before d (padded already), the interior after it
        extent = [*out_sizes[:d], 0, *sizes[d + 1 :]]
        first = [*(0,) * d, 0, *start[d + 1 :]]
        pads = [(0, start[d]), (start[d] + sizes[d], out_sizes[d])]
        for lo, hi in pads:
            if lo >= hi:
                continue
            for p, length, source, step in _runs(index[lo:hi]) if mode != "CONSTANT" else [(0, hi - lo, -1, 0)]:
                extent[d], first[d] = length, lo + p
                dst = whole("OutputTensor", rank, first)
                if mode == "CONSTANT":
                    steps.append(Fill(tuple(extent), dst, value))
                    continue
                src_start = [*first[:d], start[d] + source, *first[d + 1 :]]
                src_steps = [1] * rank
                src_steps[d] = step
                steps.append(Copy(tuple(extent), dst, window("OutputTensor", src_start, src_steps)))
    return steps


def _depth_space(desc: Any, to_space: bool) -> list[Step]:
    """DEPTH_TO_SPACE: ``Output[n, c, h b + i, w b + j] = Input[n, c', h, w]`` over (n, c, h, i, w, j).

    ``c' = (i b + j) C + c`` in DEPTH_COLUMN_ROW order, ``c b b + i b + j`` in
    COLUMN_ROW_DEPTH; SPACE_TO_DEPTH is the same map with the tensors' roles exchanged.
    """
    b = int(desc.block_size)
    order = getattr(desc, "order", None)
    dcr = order is None or order.name == "DEPTH_COLUMN_ROW"
    deep, shallow = ("InputTensor", "OutputTensor") if to_space else ("OutputTensor", "InputTensor")
    n, c_shallow, hb, wb = desc.tensor(shallow).sizes
    h, w = hb // b, wb // b
    iteration = (n, c_shallow, h, b, w, b)  # (n, c, h, i, w, j)
    space = ((1, 0, 0, 0, 0, 0), (0, 1, 0, 0, 0, 0), (0, 0, b, 1, 0, 0), (0, 0, 0, 0, b, 1))
    channel = (0, 1, 0, b * c_shallow, 0, c_shallow) if dcr else (0, b * b, 0, b, 0, 1)
    depth = ((1, 0, 0, 0, 0, 0), channel, (0, 0, 1, 0, 0, 0), (0, 0, 0, 0, 1, 0))
    maps = {shallow: Affine(shallow, (0, 0, 0, 0), space), deep: Affine(deep, (0, 0, 0, 0), depth)}
    return [Copy(iteration, maps["OutputTensor"], maps["InputTensor"])]


def _fill(desc: Any) -> list[Step]:
    sizes = tuple(desc.output_tensor.sizes)
    value = np.asarray(desc.value, dtype=desc.output_tensor.dtype)[()]
    return [Fill(sizes, whole("OutputTensor", len(sizes)), value)]


PROGRAMS: dict[str, Callable[[Any], list[Step]]] = {
    "SLICE": _slice,
    "SLICE_GRAD": _slice_grad,
    "JOIN": lambda desc: _pieces(desc, "OutputTensor", "InputTensors", True),
    "SPLIT": lambda desc: _pieces(desc, "InputTensor", "OutputTensors", False),
    "TILE": _tile,
    "PADDING": _padding,
    "PADDING1": _padding,
    "DEPTH_TO_SPACE": lambda desc: _depth_space(desc, True),
    "DEPTH_TO_SPACE1": lambda desc: _depth_space(desc, True),
    "SPACE_TO_DEPTH": lambda desc: _depth_space(desc, False),
    "SPACE_TO_DEPTH1": lambda desc: _depth_space(desc, False),
    "FILL_VALUE_CONSTANT": _fill,
}
"""Operator -> its copy program (the operators the cpu and cuda backends run this way)."""
assert set(PROGRAMS) == COPY_PROGRAM_OPERATORS, "descs/data_movement.py claims these for cpu and cuda"


def copy_program(desc: Any) -> tuple[Step, ...]:
    """The steps of a validated desc, in order; steps over no element are left out."""
    return tuple(step for step in PROGRAMS[desc.operator_type.name](desc) if 0 not in step.sizes)


__all__ = ["PROGRAMS", "Affine", "Copy", "Fill", "Step", "copy_program", "whole", "window"]
