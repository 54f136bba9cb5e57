"""Rule cases of the random operators (see the package docstring)."""

from __future__ import annotations

from typing import Any

from rule_cases import RuleCase

STATE = (1, 1, 1, 6)


def _t(data_type: str, *sizes: int) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": list(sizes)}


def _random(
    output: tuple[int, ...] = (2, 3, 4, 5),
    state: tuple[int, ...] = STATE,
    output_state: tuple[int, ...] | str | None = "state",
) -> dict[str, Any]:
    desc = {"InputStateTensor": _t("UINT32", *state), "OutputTensor": _t("UINT32", *output), "Type": "PHILOX_4X32_10"}
    if output_state is not None:
        desc["OutputStateTensor"] = _t("UINT32", *(state if output_state == "state" else output_state))
    return desc


def _case(name: str, rejects: str | None, why: str, **kwargs: Any) -> RuleCase:
    return RuleCase(f"random_generator_{name}", "RANDOM_GENERATOR", _random(**kwargs), rejects, why)


CASES: list[RuleCase] = [
    _case("valid", None, "Philox state {1, 1, 1, 6} in and out, a 4-D output"),
    _case("valid_no_output_state", None, "OutputStateTensor is optional", output_state=None),
    _case("valid_1d_output", None, "OutputTensor may have any Sizes (1-D)", output=(7,)),
    _case("valid_8d_output", None, "OutputTensor may have any Sizes (8-D)", output=(1, 2, 1, 2, 1, 2, 1, 3)),
    _case("state_split", "InputStateTensor.Sizes[2]", "the 6 state elements lie on the last axis", state=(1, 1, 2, 3)),
    _case("state_first_axis", "InputStateTensor.Sizes[0]", "the 6 elements on the first axis", state=(6, 1, 1, 1)),
    _case("state_seven", "InputStateTensor.Sizes[3]", "Philox's state is 6 elements", state=(1, 1, 1, 7)),
    _case(
        "state_two_states",
        "InputStateTensor.Sizes[0]",
        "one state only, no batch of states",
        state=(2, 1, 1, 6),
        output_state=None,
    ),
    _case(
        "output_state_sizes",
        "OutputStateTensor.Sizes",
        "OutputStateTensor has InputStateTensor's Sizes (a page fact)",
        output_state=(1, 1, 2, 3),
    ),
]
