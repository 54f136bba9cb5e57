"""Repeat calls: the same desc with the very same arrays skips binding and the operator's planning.

Why: after a large operator has streamed through the caches, the Python before a kernel
runs cold. For the last-axis REDUCE of 256 MiB (2 cores), binding and planning took 0.2-0.4
ms of a 9 ms call, all of the gap to torch, whose kernel took the same time as dmlops's
(docs/performance.md).

How: an operator's runner may return a *repeat*, ``repeat(inputs, outputs)``, that redoes
its call for arrays laid out exactly like the ones it ran with. It holds the plan, never an
array or an address: every view its kernels take is made again from the arrays it is given.
:func:`remember` keeps it with weak references to the call's arrays and their layouts;
:func:`replay` runs it when a later call passes the same desc, feature level and ``strict``
flag, and for every member the same array object, still of the same shape, strides and
dtype (an output still writeable). Anything else returns None and the call takes the full
path, with its checks and messages. Only calls whose every array the binding took as it was
(logical shape, exact ``ndarray``) and whose every output was given are remembered, so a
replay returns what the full path would.

The data address is not compared (building ``__array_interface__`` costs more than the rest
of the check): an array keeps its address unless it is resized, and NumPy refuses to resize
an array that has weak references, which the entry's are (``tests/test_cpu_repeat.py``).
So the arrays of a desc's last call cannot be resized in place until that desc runs with
other arrays, its entry is dropped (the table is cleared when full), or
``dmlops.cpu.forget_repeats()`` forgets every entry. An entry holds its desc weakly, so it
never keeps a desc alive (``dmlops.backends`` keeps the descs it has checked).

The entries hold no array: a caller's arrays are freed when the caller drops them, and an
entry whose array died simply never matches again.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..enums import FeatureLevel


class Repeat:
    """What a runner returns to offer a repeat of its call.

    ``run(inputs, outputs)`` redoes the call on arrays of the recorded layouts (the input and
    output mappings by member, as the runner received them).
    """

    __slots__ = ("run",)

    def __init__(self, run: Callable[[Mapping[str, Any], Mapping[str, Any]], None]) -> None:
        self.run = run


NOTHING = Repeat(lambda inputs, outputs: None)
"""The repeat of a call with nothing to compute (an empty output)."""

MAX_ENTRIES = 1024
"""Descs remembered at once (one call each); the table is cleared when full."""


def _signature(array: np.ndarray) -> tuple[Any, ...]:
    return (weakref.ref(array), array.shape, array.strides, array.dtype)


def _same(array: Any, signature: tuple[Any, ...]) -> bool:
    ref, shape, strides, dtype = signature
    return ref() is array and array.shape == shape and array.strides == strides and array.dtype is dtype


class _Entry:
    __slots__ = ("desc", "inputs", "level", "outputs", "repeat", "strict")

    def __init__(
        self,
        desc: Any,
        level: FeatureLevel,
        strict: bool,
        inputs: Mapping[str, np.ndarray],
        outputs: Mapping[str, np.ndarray],
        repeat: Repeat,
    ) -> None:
        # weakly: a desc that nothing else holds takes its entry (and the weak references that
        # keep the call's arrays from being resized) with it; no id is reused while its object lives
        key = id(desc)
        self.desc = weakref.ref(desc, lambda ref: _drop(key, ref))  # no cycle through the entry
        self.level = level
        self.strict = strict
        self.inputs = {member: _signature(a) for member, a in inputs.items()}
        self.outputs = {member: _signature(a) for member, a in outputs.items()}
        self.repeat = repeat


_ENTRIES: dict[int, _Entry] = {}


def _drop(key: int, ref: Any) -> None:
    """A desc died: drop its entry (the one whose weak reference ``ref`` is)."""
    entry = _ENTRIES.get(key)
    if entry is not None and entry.desc is ref:
        _ENTRIES.pop(key, None)


def remember(
    desc: Any,
    level: FeatureLevel,
    strict: bool,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any] | None,
    bound_inputs: Mapping[str, Any],
    bound_outputs: Mapping[str, Any],
    repeat: Any,
) -> None:
    """Keep ``repeat``, a runner's return value, for ``desc``.

    Only a :class:`Repeat`, and only when the call's arrays are ones a replay can check (see
    the module doc); any other call forgets the desc's entry.
    """
    _ENTRIES.pop(id(desc), None)
    if type(repeat) is not Repeat or type(inputs) is not dict or type(outputs) is not dict:
        return
    if outputs.keys() != bound_outputs.keys() or inputs.keys() != bound_inputs.keys():
        return
    for given, bound in ((inputs, bound_inputs), (outputs, bound_outputs)):
        for member, array in given.items():
            if type(array) is not np.ndarray or bound[member] is not array:
                return
    if len(_ENTRIES) >= MAX_ENTRIES:
        _ENTRIES.clear()
    try:
        entry = _Entry(desc, level, strict, inputs, outputs, repeat)
    except TypeError:  # a desc (or array) without weak references: nothing to remember it by
        return
    _ENTRIES[id(desc)] = entry


def replay(desc: Any, inputs: Any, outputs: Any, level: FeatureLevel, strict: bool) -> dict[str, np.ndarray] | None:
    """The outputs after re-running a remembered call with these arrays, or None when it does not apply."""
    entry = _ENTRIES.get(id(desc))
    if (
        entry is None
        or entry.desc() is not desc
        or entry.level is not level
        or entry.strict is not strict
        or type(inputs) is not dict
        or type(outputs) is not dict
        or inputs.keys() != entry.inputs.keys()
        or outputs.keys() != entry.outputs.keys()
    ):
        return None
    for member, signature in entry.inputs.items():
        if not _same(inputs[member], signature):
            return None
    for member, signature in entry.outputs.items():
        out = outputs[member]
        if not _same(out, signature) or not out.flags.writeable:
            return None
    entry.repeat.run(inputs, outputs)
    return dict(outputs)


def forget() -> None:
    """Drop every entry: the arrays of remembered calls can then be resized again (``dmlops.cpu.forget_repeats``)."""
    _ENTRIES.clear()
