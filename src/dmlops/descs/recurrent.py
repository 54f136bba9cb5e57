"""The recurrent family: which operators it holds and their own rules.

RNN, LSTM, GRU keep the generic descs made from their catalogue rows (:mod:`.generic`); this
module claims them (``family = "recurrent"``) and adds the rules of their pages that the
catalogue does not hold (:func:`validate_generic`). Only the ``directml`` backend runs them yet.

Rules, each checked against DirectML 1.15.4's CreateOperator (it wins where the pages are
silent or say otherwise). ``num_directions`` is 2 for a BIDIRECTIONAL ``Direction``, else 1;
``gates`` is the number of gate blocks stacked in the weights (RNN 1, GRU 3, LSTM 4);
``seq_length``, ``batch_size`` and ``input_size`` are InputTensor's Sizes[1..3] and
``hidden_size`` is RecurrenceTensor's Sizes[3]:

* Every present tensor has exactly the Sizes of :data:`SHAPES` (DirectML checks every
  dimension, InputTensor's leading 1 included): Weight ``{1, num_directions, gates *
  hidden_size, input_size}``, Recurrence ``{1, num_directions, gates * hidden_size,
  hidden_size}``, Bias ``{1, 1, num_directions, 2 * gates * hidden_size}``, HiddenInit,
  CellMemInit (LSTM), OutputSingle and OutputCellSingle (LSTM) ``{1, num_directions,
  batch_size, hidden_size}``, SequenceLengths ``{1, 1, 1, batch_size}``, Peephole (LSTM)
  ``{1, 1, num_directions, 3 * hidden_size}``, OutputSequence ``{seq_length,
  num_directions, batch_size, hidden_size}``.
* ``ActivationDescCount`` is num_directions times RNN 1, GRU 2 (f, g), LSTM 3 (f, g, h).
* Each of ``ActivationDescs`` is an element-wise activation: the fusable ones and GELU,
  SWISH, HARD_SWISH; DirectML rejects SOFTMAX, LOG_SOFTMAX, HARDMAX (and their ``1``
  versions), PARAMETERIZED_RELU and RELU_GRAD, which the pages do not exclude (erratum E121).
* OutputSequenceTensor or OutputSingleTensor is present: the pages make both optional,
  DirectML rejects a desc with neither (LSTM's OutputCellSingleTensor alone does not
  count; erratum E120).
* Accepted as they are (no rule): LSTM's ClipThreshold of any value (0, negative, inf,
  NaN) whether or not UseClipThreshold is set, CoupleInputForget with or without a
  PeepholeTensor, GRU's LinearBeforeReset either way; any optional input left out.
"""

from __future__ import annotations

from typing import Any

from ..catalogue import FUSABLE_ACTIVATIONS
from ..enums import FeatureLevel
from ._base import family_claim

FAMILY = "recurrent"

OPERATORS: frozenset[str] = frozenset("RNN LSTM GRU".split())
"""Every operator of the family."""

GATES: dict[str, int] = {"RNN": 1, "GRU": 3, "LSTM": 4}
"""Gate blocks stacked along WeightTensor's and RecurrenceTensor's Sizes[2] (RNN i; GRU z, r, h; LSTM i, o, f, c)."""

ACTIVATIONS_PER_DIRECTION: dict[str, int] = {"RNN": 1, "GRU": 2, "LSTM": 3}
"""ActivationDescs each direction takes (RNN f; GRU f, g; LSTM f, g, h)."""

ACTIVATIONS: frozenset[str] = frozenset(FUSABLE_ACTIVATIONS) | {
    "ACTIVATION_GELU",
    "ACTIVATION_SWISH",
    "ACTIVATION_HARD_SWISH",
}
"""The activations DirectML 1.15.4 takes in ActivationDescs (element-wise ones; E121)."""

SHAPES: dict[str, tuple[str, str, str, str]] = {
    "InputTensor": ("1", "seq_length", "batch_size", "input_size"),
    "RecurrenceTensor": ("1", "num_directions", "gates * hidden_size", "hidden_size"),
    "WeightTensor": ("1", "num_directions", "gates * hidden_size", "input_size"),
    "BiasTensor": ("1", "1", "num_directions", "2 * gates * hidden_size"),
    "HiddenInitTensor": ("1", "num_directions", "batch_size", "hidden_size"),
    "CellMemInitTensor": ("1", "num_directions", "batch_size", "hidden_size"),
    "SequenceLengthsTensor": ("1", "1", "1", "batch_size"),
    "PeepholeTensor": ("1", "1", "num_directions", "3 * hidden_size"),
    "OutputSequenceTensor": ("seq_length", "num_directions", "batch_size", "hidden_size"),
    "OutputSingleTensor": ("1", "num_directions", "batch_size", "hidden_size"),
    "OutputCellSingleTensor": ("1", "num_directions", "batch_size", "hidden_size"),
}
"""Each tensor's Sizes by the pages' names, checked in this order (:func:`extents` gives the values)."""


claim = family_claim(FAMILY, (OPERATORS, ("directml",)))


def num_directions(desc: Any) -> int:
    """2 for a BIDIRECTIONAL desc, else 1."""
    return 2 if desc.direction.name == "BIDIRECTIONAL" else 1


def extents(desc: Any) -> dict[str, int]:
    """The value of every name :data:`SHAPES` uses, read from InputTensor and RecurrenceTensor."""
    _, seq_length, batch_size, input_size = desc.input_tensor.sizes
    hidden_size = desc.recurrence_tensor.sizes[3]
    gates = GATES[desc.operator_type.name]
    return {
        "1": 1,
        "seq_length": seq_length,
        "batch_size": batch_size,
        "input_size": input_size,
        "hidden_size": hidden_size,
        "num_directions": num_directions(desc),
        "gates * hidden_size": gates * hidden_size,
        "2 * gates * hidden_size": 2 * gates * hidden_size,
        "3 * hidden_size": 3 * hidden_size,
    }


def _check_shapes(desc: Any) -> None:
    values = extents(desc)
    present = desc.tensors()
    gates = GATES[desc.operator_type.name]
    for member, shape in SHAPES.items():
        if member in present:
            rule = f"{{ {', '.join(shape)} }}, gates = {gates}"
            desc.require_sizes(member, [values[name] for name in shape], rule)


def _check_activations(desc: Any) -> None:
    operator = desc.operator_type.name
    expected = ACTIVATIONS_PER_DIRECTION[operator] * num_directions(desc)
    count = len(desc.activation_descs)
    if count != expected:
        rule = (
            f"must be {expected}: {ACTIVATIONS_PER_DIRECTION[operator]} per direction, Direction {desc.direction.name}"
        )
        raise desc.invalid("ActivationDescCount", rule, count)
    for i, activation in enumerate(desc.activation_descs):
        if activation.spec.name not in ACTIVATIONS:
            # E121: the pages allow any activation operator
            raise desc.invalid(
                f"ActivationDescs[{i}]",
                "must be an element-wise activation (not one over axes or with tensors)",
                activation.spec.dml_name,
            )


def _check_outputs(desc: Any) -> None:
    # E120: the pages make both optional
    if desc.output_sequence_tensor is None and desc.output_single_tensor is None:
        raise desc.invalid("OutputSequenceTensor", "OutputSequenceTensor or OutputSingleTensor must be present", None)


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The rules of a recurrent operator's own (see the module docstring): InvalidDescError naming ``STRUCT.Member``.

    Called by the generic desc's validation after the page facts; checked against
    DirectML 1.15.4's CreateOperator (tests/rule_cases/recurrent.py).
    """
    _check_outputs(desc)
    _check_shapes(desc)
    _check_activations(desc)


__all__ = [
    "ACTIVATIONS",
    "ACTIVATIONS_PER_DIRECTION",
    "FAMILY",
    "GATES",
    "OPERATORS",
    "SHAPES",
    "claim",
    "extents",
    "num_directions",
    "validate_generic",
]
