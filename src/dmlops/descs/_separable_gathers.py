"""Data movement as separable gathers: each output axis names the input coordinates it reads.

PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1) and TILE read, for an output element at
coordinates ``o``, the input element at ``sum_d table_d[o_d]``: every output axis ``d``
contributes a vector of input coordinates that depends on ``o_d`` alone. PADDING's axis
``d`` contributes :func:`~dmlops.descs.data_movement.padding_indices` along input axis
``d`` (or marks the row as padding: the element is the fill value); DEPTH_TO_SPACE's
output row ``H = h b + i`` contributes input row ``h`` and channel ``i b C`` (DCR) or
``i b`` (CRD), and its column likewise; SPACE_TO_DEPTH's output channel contributes the
input channel and the position in the block; TILE's axis ``d`` contributes
``o_d mod InputTensor.Sizes[d]`` along input axis ``d``.

A backend turns the tables into element offsets (``table_d @ input strides``) and runs
one output-ordered pass: each output element is written once and each input element read
where it is needed, which a copy program (``_copy_programs``) of many small steps cannot
do at the copy rate (PADDING's borders, DEPTH_TO_SPACE's block columns). The NumPy
reference computes the same operators by their own formulas (``reference/data_movement.py``);
the tests compare the two through :func:`gather_with_numpy`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .data_movement import padding_indices, padding_value


@dataclass(frozen=True)
class SeparableGather:
    """``Output[o] = Input[sum_d coordinates[d][o_d]]``, or ``fill`` where any ``padding[d][o_d]``.

    ``coordinates[d]`` has a row per position of output axis ``d`` and a column per input
    axis; ``padding[d]`` marks the positions that read ``fill`` (a NumPy scalar of the
    output's type; None where no position pads).
    """

    coordinates: tuple[NDArray[np.int64], ...]
    padding: tuple[NDArray[np.bool_], ...]
    fill: Any = None

    def element_offsets(self, strides: tuple[int, ...]) -> tuple[NDArray[np.int64], ...]:
        """Per output axis, the input element offset of each position (for these input element strides)."""
        s = np.asarray(strides, dtype=np.int64)
        return tuple(c @ s for c in self.coordinates)


def _unit(n: int, rank: int, axis: int, values: NDArray[Any]) -> NDArray[np.int64]:
    """``n`` rows of ``rank`` coordinates: ``values`` on ``axis``, 0 elsewhere."""
    table = np.zeros((n, rank), dtype=np.int64)
    table[:, axis] = values
    return table


def _padding(desc: Any) -> SeparableGather:
    sizes = tuple(desc.input_tensor.sizes)
    rank = len(sizes)
    mode = desc.padding_mode.name
    coordinates, padding = [], []
    for d, n in enumerate(sizes):
        index = padding_indices(mode, n, int(desc.start_padding[d]), int(desc.end_padding[d]))
        pads = index < 0
        coordinates.append(_unit(len(index), rank, d, np.where(pads, 0, index)))
        padding.append(pads)
    fill = None
    if mode == "CONSTANT":
        if getattr(desc, "padding_value_data_type", None) is None:  # PADDING: a FLOAT converted on the host
            fill = padding_value(desc.padding_value, desc.output_tensor.data_type)
        else:
            fill = np.asarray(desc.padding_value, dtype=desc.output_tensor.dtype)[()]
    return SeparableGather(tuple(coordinates), tuple(padding), fill)


def _depth_space(desc: Any, to_space: bool) -> SeparableGather:
    """The maps of ``_copy_programs._depth_space``, by output axis.

    The channel is ``c' = (i b + j) C + c`` in DEPTH_COLUMN_ROW order, ``c b b + i b + j``
    in COLUMN_ROW_DEPTH.
    """
    b = int(desc.block_size)
    order = getattr(desc, "order", None)
    dcr = order is None or order.name == "DEPTH_COLUMN_ROW"
    n, c_out, h_out, w_out = desc.output_tensor.sizes
    c_in = desc.input_tensor.sizes[1]
    batch, channel = np.arange(n), np.arange(c_out)
    tables = [_unit(n, 4, 0, batch)]
    if to_space:  # Output[n, c, h b + i, w b + j] = Input[n, c', h, w]; C = c_out
        rows, cols = np.arange(h_out), np.arange(w_out)
        tables.append(_unit(c_out, 4, 1, channel * (1 if dcr else b * b)))
        row = _unit(h_out, 4, 2, rows // b)
        row[:, 1] = (rows % b) * (b * c_out if dcr else b)
        col = _unit(w_out, 4, 3, cols // b)
        col[:, 1] = (cols % b) * (c_out if dcr else 1)
        tables += [row, col]
    else:  # Output[n, c', h, w] = Input[n, c, h b + i, w b + j]; C = c_in
        if dcr:
            block, depth = channel // c_in, channel % c_in
        else:
            block, depth = channel % (b * b), channel // (b * b)
        chan = _unit(c_out, 4, 1, depth)
        chan[:, 2], chan[:, 3] = block // b, block % b
        tables += [chan, _unit(h_out, 4, 2, np.arange(h_out) * b), _unit(w_out, 4, 3, np.arange(w_out) * b)]
    return SeparableGather(tuple(tables), tuple(np.zeros(len(t), dtype=bool) for t in tables))


def _tile(desc: Any) -> SeparableGather:
    """``Output[o] = Input[o mod InputTensor.Sizes]``: axis ``d`` reads ``o_d mod n_d``, Repeats[d] times over."""
    sizes = tuple(int(n) for n in desc.input_tensor.sizes)
    rank = len(sizes)
    tables = tuple(
        _unit(n * int(r), rank, d, np.arange(n * int(r), dtype=np.int64) % n)
        for d, (n, r) in enumerate(zip(sizes, desc.repeats))
    )
    return SeparableGather(tables, tuple(np.zeros(len(t), dtype=bool) for t in tables))


GATHERS: dict[str, Callable[[Any], SeparableGather]] = {
    "PADDING": _padding,
    "PADDING1": _padding,
    "DEPTH_TO_SPACE": lambda desc: _depth_space(desc, True),
    "DEPTH_TO_SPACE1": lambda desc: _depth_space(desc, True),
    "SPACE_TO_DEPTH": lambda desc: _depth_space(desc, False),
    "SPACE_TO_DEPTH1": lambda desc: _depth_space(desc, False),
    "TILE": _tile,
}
"""Operator -> its separable gather (a backend may run these operators this way)."""


def separable_gather(desc: Any) -> SeparableGather:
    """The separable gather of a validated desc of one of ``GATHERS``'s operators."""
    return GATHERS[desc.operator_type.name](desc)


def gather_with_numpy(gather: SeparableGather, x: NDArray[Any], out_dtype: Any) -> NDArray[Any]:
    """Run ``gather`` on a logical NumPy input: the tables' meaning, written plainly (for tests)."""
    rank_out = len(gather.coordinates)
    coords = [np.zeros((1,) * rank_out, dtype=np.int64) for _ in range(x.ndim)]
    pads = np.zeros((1,) * rank_out, dtype=bool)
    for d, (table, pad) in enumerate(zip(gather.coordinates, gather.padding)):
        shape = [1] * rank_out
        shape[d] = len(table)
        for k in range(x.ndim):
            coords[k] = coords[k] + table[:, k].reshape(shape)
        pads = pads | pad.reshape(shape)
    out = x[tuple(coords)].astype(out_dtype)
    if gather.fill is not None:
        out[np.broadcast_to(pads, out.shape)] = gather.fill
    return out


__all__ = ["GATHERS", "SeparableGather", "gather_with_numpy", "separable_gather"]
