"""Rule cases of the recurrent operators (see the package docstring)."""

from __future__ import annotations

from typing import Any

from rule_cases import RuleCase

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_ACTIVATIONS = {
    "RNN": ["ACTIVATION_TANH"],
    "GRU": ["ACTIVATION_SIGMOID", "ACTIVATION_TANH"],
    "LSTM": ["ACTIVATION_SIGMOID", "ACTIVATION_TANH", "ACTIVATION_TANH"],
}


def _t(*sizes: int, data_type: str = "FLOAT32") -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": list(sizes)}


def _desc(
    op: str,
    *,
    seq: int = 3,
    batch: int = 2,
    inputs: int = 5,
    hidden: int = 4,
    direction: str = "FORWARD",
    drop: tuple[str, ...] = (),
    sizes: dict[str, tuple[int, ...]] | None = None,
    **members: Any,
) -> dict[str, Any]:
    """A valid desc of ``op`` with every tensor present, then ``drop`` left out, ``sizes`` and ``members`` replaced."""
    directions = 2 if direction == "BIDIRECTIONAL" else 1
    gh = _GATES[op] * hidden
    desc: dict[str, Any] = {
        "InputTensor": _t(1, seq, batch, inputs),
        "WeightTensor": _t(1, directions, gh, inputs),
        "RecurrenceTensor": _t(1, directions, gh, hidden),
        "BiasTensor": _t(1, 1, directions, 2 * gh),
        "HiddenInitTensor": _t(1, directions, batch, hidden),
        "SequenceLengthsTensor": _t(1, 1, 1, batch, data_type="UINT32"),
        "OutputSequenceTensor": _t(seq, directions, batch, hidden),
        "OutputSingleTensor": _t(1, directions, batch, hidden),
        "ActivationDescs": [{"Type": a} for a in _ACTIVATIONS[op]] * directions,
        "Direction": direction,
    }
    if op == "LSTM":
        desc |= {
            "CellMemInitTensor": _t(1, directions, batch, hidden),
            "PeepholeTensor": _t(1, 1, directions, 3 * hidden),
            "OutputCellSingleTensor": _t(1, directions, batch, hidden),
            "ClipThreshold": 10.0,
            "UseClipThreshold": True,
            "CoupleInputForget": False,
        }
    if op == "GRU":
        desc["LinearBeforeReset"] = True
    for member in drop:
        del desc[member]
    for member, new in (sizes or {}).items():
        desc[member] = _t(*new, data_type=desc[member]["DataType"])
    return desc | members


def _cases(op: str) -> list[RuleCase]:
    p = op.lower()
    g = _GATES[op]
    per = len(_ACTIVATIONS[op])
    cases = [
        RuleCase(f"{p}_valid_forward", op, _desc(op), None, "every tensor at its page Sizes"),
        RuleCase(
            f"{p}_valid_bidirectional",
            op,
            _desc(op, seq=4, batch=3, inputs=2, hidden=6, direction="BIDIRECTIONAL"),
            None,
            f"num_directions 2: {2 * per} activations, every tensor's num_directions 2",
        ),
        RuleCase(
            f"{p}_valid_backward_minimal",
            op,
            _desc(
                op,
                seq=1,
                batch=1,
                inputs=1,
                hidden=7,
                direction="BACKWARD",
                drop=("BiasTensor", "HiddenInitTensor", "SequenceLengthsTensor", "OutputSequenceTensor")
                + (("CellMemInitTensor", "PeepholeTensor", "OutputCellSingleTensor") if op == "LSTM" else ()),
            ),
            None,
            "BACKWARD has one direction; every optional tensor but OutputSingleTensor left out",
        ),
        RuleCase(
            f"{p}_valid_gelu_swish_activations",
            op,
            _desc(
                op,
                ActivationDescs=[
                    {"Type": "ACTIVATION_GELU"},
                    {"Type": "ACTIVATION_SWISH", "SigmoidInputScale": 1.0},
                    {"Type": "ACTIVATION_HARD_SWISH", "Alpha": 0.2, "Beta": 0.5},
                ][:per],
            ),
            None,
            "element-wise activations that are not fusable are accepted (E121)",
        ),
        RuleCase(
            f"{p}_input_leading_dim",
            op,
            _desc(op, sizes={"InputTensor": (2, 3, 2, 5)}),
            "InputTensor.Sizes[0]",
            "InputTensor is { 1, seq_length, batch_size, input_size }",
        ),
        RuleCase(
            f"{p}_recurrence_directions",
            op,
            _desc(op, direction="BIDIRECTIONAL", sizes={"RecurrenceTensor": (1, 1, g * 4, 4)}),
            "RecurrenceTensor.Sizes[1]",
            "RecurrenceTensor.Sizes[1] is num_directions (2 for BIDIRECTIONAL)",
        ),
        RuleCase(
            f"{p}_recurrence_gates",
            op,
            _desc(op, sizes={"RecurrenceTensor": (1, 1, g * 4 + 1, 4)}),
            "RecurrenceTensor.Sizes[2]",
            f"RecurrenceTensor.Sizes[2] is {g} * hidden_size",
        ),
        RuleCase(
            f"{p}_weight_hidden",
            op,
            _desc(op, sizes={"WeightTensor": (1, 1, g * 3, 5)}),
            "WeightTensor.Sizes[2]",
            f"WeightTensor.Sizes[2] is {g} * hidden_size (RecurrenceTensor's hidden_size 4)",
        ),
        RuleCase(
            f"{p}_weight_input_size",
            op,
            _desc(op, sizes={"WeightTensor": (1, 1, g * 4, 4)}),
            "WeightTensor.Sizes[3]",
            "WeightTensor.Sizes[3] is InputTensor's input_size",
        ),
        RuleCase(
            f"{p}_weight_directions",
            op,
            _desc(op, sizes={"WeightTensor": (1, 2, g * 4, 5)}),
            "WeightTensor.Sizes[1]",
            "WeightTensor.Sizes[1] is num_directions (1 for FORWARD)",
        ),
        RuleCase(
            f"{p}_bias_size",
            op,
            _desc(op, sizes={"BiasTensor": (1, 1, 1, g * 4)}),
            "BiasTensor.Sizes[3]",
            f"BiasTensor is {{ 1, 1, num_directions, {2 * g} * hidden_size }}",
        ),
        RuleCase(
            f"{p}_bias_layout",
            op,
            _desc(op, sizes={"BiasTensor": (1, 1, 2 * g * 4, 1)}),
            "BiasTensor.Sizes[2]",
            "BiasTensor's num_directions is Sizes[2], the biases Sizes[3]",
        ),
        RuleCase(
            f"{p}_hidden_init_batch",
            op,
            _desc(op, sizes={"HiddenInitTensor": (1, 1, 3, 4)}),
            "HiddenInitTensor.Sizes[2]",
            "HiddenInitTensor is { 1, num_directions, batch_size, hidden_size }",
        ),
        RuleCase(
            f"{p}_sequence_lengths_batch",
            op,
            _desc(op, sizes={"SequenceLengthsTensor": (1, 1, 2, 1)}),
            "SequenceLengthsTensor.Sizes[2]",
            "SequenceLengthsTensor is { 1, 1, 1, batch_size }",
        ),
        RuleCase(
            f"{p}_output_sequence_length",
            op,
            _desc(op, sizes={"OutputSequenceTensor": (1, 1, 2, 4)}),
            "OutputSequenceTensor.Sizes[0]",
            "OutputSequenceTensor is { seq_length, num_directions, batch_size, hidden_size }",
        ),
        RuleCase(
            f"{p}_output_single_hidden",
            op,
            _desc(op, sizes={"OutputSingleTensor": (1, 1, 2, 5)}),
            "OutputSingleTensor.Sizes[3]",
            "OutputSingleTensor is { 1, num_directions, batch_size, hidden_size }",
        ),
        RuleCase(
            f"{p}_no_output",
            op,
            _desc(op, drop=("OutputSequenceTensor", "OutputSingleTensor")),
            "OutputSequenceTensor",
            "OutputSequenceTensor or OutputSingleTensor must be present (E120; LSTM's cell output does not count)",
        ),
        RuleCase(
            f"{p}_activation_count_bidirectional",
            op,
            _desc(
                op,
                seq=4,
                batch=3,
                inputs=2,
                hidden=6,
                direction="BIDIRECTIONAL",
                ActivationDescs=[{"Type": a} for a in _ACTIVATIONS[op]],
            ),
            "ActivationDescCount",
            f"BIDIRECTIONAL takes {2 * per} activations, {per} per direction",
        ),
        RuleCase(
            f"{p}_activation_count_forward",
            op,
            _desc(op, ActivationDescs=[{"Type": a} for a in _ACTIVATIONS[op]] + [{"Type": "ACTIVATION_RELU"}]),
            "ActivationDescCount",
            f"FORWARD takes {per} activations",
        ),
        RuleCase(
            f"{p}_activation_softmax",
            op,
            _desc(op, ActivationDescs=[{"Type": a} for a in _ACTIVATIONS[op][:-1]] + [{"Type": "ACTIVATION_SOFTMAX"}]),
            f"ActivationDescs[{per - 1}]",
            "SOFTMAX is not element-wise: DirectML rejects it (E121)",
        ),
        RuleCase(
            f"{p}_activation_parameterized_relu",
            op,
            _desc(
                op,
                ActivationDescs=[{"Type": "ACTIVATION_PARAMETERIZED_RELU"}]
                + [{"Type": a} for a in _ACTIVATIONS[op][1:]],
            ),
            "ActivationDescs[0]",
            "PARAMETERIZED_RELU needs a slope tensor: DirectML rejects it (E121)",
        ),
    ]
    return cases


_LSTM_CASES = [
    RuleCase(
        "lstm_valid_clip_any_value",
        "LSTM",
        _desc("LSTM", ClipThreshold=-1.0, UseClipThreshold=True, CoupleInputForget=True),
        None,
        "no range on ClipThreshold: a negative threshold with UseClipThreshold is accepted, as is CoupleInputForget with a peephole",
    ),
    RuleCase(
        "lstm_valid_cell_output_and_sequence",
        "LSTM",
        _desc("LSTM", direction="BIDIRECTIONAL", drop=("OutputSingleTensor",)),
        None,
        "OutputSequenceTensor alone is enough, beside OutputCellSingleTensor",
    ),
    RuleCase(
        "lstm_only_cell_output",
        "LSTM",
        _desc("LSTM", drop=("OutputSequenceTensor", "OutputSingleTensor")),
        "OutputSequenceTensor",
        "OutputCellSingleTensor alone is not enough (E120)",
    ),
    RuleCase(
        "lstm_cell_mem_init_hidden",
        "LSTM",
        _desc("LSTM", sizes={"CellMemInitTensor": (1, 1, 2, 3)}),
        "CellMemInitTensor.Sizes[3]",
        "CellMemInitTensor is { 1, num_directions, batch_size, hidden_size }",
    ),
    RuleCase(
        "lstm_peephole_size",
        "LSTM",
        _desc("LSTM", sizes={"PeepholeTensor": (1, 1, 1, 16)}),
        "PeepholeTensor.Sizes[3]",
        "PeepholeTensor is { 1, 1, num_directions, 3 * hidden_size } (three gates, not four)",
    ),
    RuleCase(
        "lstm_output_cell_single_directions",
        "LSTM",
        _desc("LSTM", sizes={"OutputCellSingleTensor": (1, 2, 2, 4)}),
        "OutputCellSingleTensor.Sizes[1]",
        "OutputCellSingleTensor is { 1, num_directions, batch_size, hidden_size }",
    ),
]

CASES: list[RuleCase] = _cases("RNN") + _cases("GRU") + _cases("LSTM") + _LSTM_CASES
