"""The functional API of the random family: random_generator (RANDOM_GENERATOR).

``dmlops.random_generator(state, sizes)`` fills a UINT32 array of ``sizes`` with Philox
4x32-10 words and returns it with the next state (the counter advanced by
``ceil(n / 4)``), which continues the sequence in the next call::

    state = np.array([0, 0, 0, 0, key0, key1], dtype=np.uint32)   # counter 0, a 64-bit key
    bits, state = dmlops.random_generator(state, (2, 3))

>>> import numpy as np, dmlops.ops.random as R
>>> bits, state = R.random_generator([0, 0, 0, 0, 0, 0], 4)
>>> [hex(v) for v in bits]
['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
>>> state.tolist()
[1, 0, 0, 0, 0, 0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import DEFAULT_BACKEND
from ..enums import FeatureLevel, TensorDataType
from ..errors import ArgumentValueError
from ..tensor import TensorDesc
from ._common import array_argument, check_out, generic_desc, int_tuple, run_outputs, tensor_of, wrong_type


def _sizes(sizes: Any) -> tuple[int, ...]:
    """An int as ``(n,)``, a sequence of ints as a tuple; ArgumentTypeError otherwise."""
    if isinstance(sizes, (int, np.integer)) and not isinstance(sizes, (bool, np.bool_)):
        return (int(sizes),)
    return int_tuple(sizes, "random_generator", "sizes")


def _state(input_state: Any) -> Any:
    """The state as an array: a list of six ints becomes uint32; an array keeps its dtype (validated by the desc)."""
    state = array_argument(input_state, "random_generator", "input_state")
    if not hasattr(input_state, "dtype"):
        if np.any(state < 0) or np.any(state > np.iinfo(np.uint32).max):
            raise ArgumentValueError(
                f"dmlops.random_generator: input_state words must fit UINT32; got {input_state!r:.80}"
            )
        state = state.astype(np.uint32)
    return state


def random_generator(
    input_state: Any,
    sizes: int | Any,
    *,
    type: str = "PHILOX_4X32_10",
    output_state: bool = True,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> tuple[Any, Any]:
    """DML_OPERATOR_RANDOM_GENERATOR: ``(bits, next_state)``, uniformly distributed UINT32 words.

    Parameters
    ----------
    input_state : array of six uint32, shapes (6,) to (1, ..., 1, 6)
        ``InputStateTensor``: PHILOX_4X32_10's 128-bit counter (elements 0 to 3, element 0
        least significant) and 64-bit key (elements 4, 5). A list is converted to uint32.
    sizes : int or sequence of int
        ``OutputTensor``'s Sizes (1 to 8 dimensions).
    type : {"PHILOX_4X32_10"}
        ``Type``, the generator.
    output_state : bool
        Whether to compute ``OutputStateTensor`` (the next state, shaped as
        ``input_state``); False returns None in its place.
    backend, feature_level
        As :func:`dmlops.execute`.
    out : array or None
        A preallocated uint32 array of ``sizes`` for the bits.

    Returns
    -------
    (array of uint32 of shape ``sizes``, array like ``input_state`` or None)
        Element ``i`` (row-major) is word ``i % 4`` of the Philox block of counter
        ``counter + i // 4``; the next state's counter is ``counter + ceil(n / 4)``.
    """
    if not isinstance(output_state, (bool, np.bool_)):
        raise wrong_type("random_generator", "output_state", "a bool", output_state)
    state = _state(input_state)
    check_out(out, "random_generator")
    state_tensor = tensor_of(state, "dmlops.random_generator: input_state")
    members: dict[str, Any] = {
        "input_state_tensor": state_tensor,
        "output_tensor": TensorDesc(data_type=TensorDataType.UINT32, sizes=_sizes(sizes)),
        "type": type,
    }
    outputs = ["OutputTensor"]
    if output_state:
        members["output_state_tensor"] = state_tensor
        outputs.append("OutputStateTensor")
    desc = generic_desc("RANDOM_GENERATOR", **members)
    results = run_outputs(
        desc, {"InputStateTensor": state}, outputs, backend=backend, feature_level=feature_level,
        out=None if out is None else (out,),
    )  # fmt: skip
    return results[0], results[1] if output_state else None


FUNCTIONS = {f.__name__: f for f in (random_generator,)}
"""Function name -> function."""

__all__ = ["FUNCTIONS", "random_generator"]
