"""Rule cases of the training operators (see the package docstring)."""

from __future__ import annotations

from typing import Any

from rule_cases import RuleCase

_WEIGHTS = (
    "InputParametersTensor",
    "InputFirstMomentTensor",
    "InputSecondMomentTensor",
    "GradientTensor",
    "OutputParametersTensor",
    "OutputFirstMomentTensor",
    "OutputSecondMomentTensor",
)


def _adam(
    sizes: tuple[int, ...] = (2, 3, 4, 5), step: tuple[int, ...] = (1, 1, 1, 1), **members: Any
) -> dict[str, Any]:
    """An ADAM_OPTIMIZER desc: every weight-shaped tensor at ``sizes``, the step at ``step``."""
    desc: dict[str, Any] = {name: {"DataType": "FLOAT32", "Sizes": list(sizes)} for name in _WEIGHTS}
    desc["TrainingStepTensor"] = {"DataType": "UINT32", "Sizes": list(step)}
    desc |= {"LearningRate": 0.001, "Beta1": 0.9, "Beta2": 0.999, "Epsilon": 1e-8}
    return desc | members


CASES: list[RuleCase] = [
    RuleCase("adam_optimizer_valid", "ADAM_OPTIMIZER", _adam(), None, "typical hyperparameters, a 4-D scalar step"),
    RuleCase(
        "adam_optimizer_valid_step_1d",
        "ADAM_OPTIMIZER",
        _adam(sizes=(1, 1, 8, 16), step=(1,)),
        None,
        "the step is a scalar of any DimensionCount DirectML allows (1 to 8), not only 4-D",
    ),
    *(
        RuleCase(
            f"adam_optimizer_valid_{len(sizes)}d",
            "ADAM_OPTIMIZER",
            _adam(sizes=sizes, step=(1,)),
            None,
            "the seven weight-shaped tensors take 1 to 8 dimensions (the page's table says 4)",
        )
        for sizes in ((6,), (2, 3), (2, 3, 4, 5, 1), (1, 2, 1, 2, 1, 2, 1, 2))
    ),
    RuleCase(
        "adam_optimizer_valid_betas_out_of_range",
        "ADAM_OPTIMIZER",
        _adam(Beta1=-0.5, Beta2=1.5, LearningRate=-0.01, Epsilon=0.0),
        None,
        "Beta1 and Beta2 outside the page's 0 to 1 are accepted (E122), as are a negative LearningRate and 0 Epsilon",
    ),
    RuleCase(
        "adam_optimizer_valid_betas_nan",
        "ADAM_OPTIMIZER",
        _adam(Beta1=float("nan"), Beta2=float("inf"), Epsilon=float("-inf")),
        None,
        "non-finite hyperparameters are accepted (E122)",
    ),
    RuleCase(
        "adam_optimizer_step_not_scalar",
        "ADAM_OPTIMIZER",
        _adam(step=(1, 1, 1, 2)),
        "TrainingStepTensor.Sizes[3]",
        "TrainingStepTensor is a scalar: every size 1",
    ),
    RuleCase(
        "adam_optimizer_step_weight_shaped",
        "ADAM_OPTIMIZER",
        _adam(step=(2, 3, 4, 5)),
        "TrainingStepTensor.Sizes[0]",
        "TrainingStepTensor is one step for all weights, not one per weight",
    ),
    RuleCase(
        "adam_optimizer_step_1d_not_scalar",
        "ADAM_OPTIMIZER",
        _adam(step=(2,)),
        "TrainingStepTensor.Sizes[0]",
        "a 1-D step is a scalar only with size 1",
    ),
]
