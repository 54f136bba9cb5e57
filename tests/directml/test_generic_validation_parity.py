"""Validation parity of the generic descs with DirectML's CreateOperator, a seeded sample.

The whole campaign is ``scripts/generic_parity.py`` (docs/directml-generic-parity.md): for
each operator without a hand-written desc, a page-shaped valid desc and one desc per page
rule that breaks it (``dmlops.catalogue.page_descs``). Here a seeded sample of operators
runs every one of its descs; dmlops and DirectML must give the same verdict, except where
KNOWN says why not.
"""

from __future__ import annotations

import random
import warnings

import pytest
from _directml import directml  # noqa: F401  (fixture)

from dmlops import catalogue
from dmlops.catalogue import page_descs, page_facts
from dmlops.descs import REGISTRY, desc_from_json
from dmlops.directml import create_operator
from dmlops.enums import FeatureLevel
from dmlops.errors import DirectMLRejectedDescError, InvalidDescError

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]

LEVEL = FeatureLevel.V6_4
KNOWN: dict[tuple[str, str], str] = {}
"""(operator, rule) -> why dmlops and DirectML may disagree there; none left."""
GENERIC = [op.name for op in catalogue.OPERATORS if op.name not in REGISTRY]
SAMPLE = [
    *sorted(random.Random(19).sample(GENERIC, 40)),
    *("ADAM_OPTIMIZER", "ELEMENT_WISE_BIT_COUNT", "JOIN", "MULTIHEAD_ATTENTION", "MULTIHEAD_ATTENTION1"),
]


def _verdicts(name: str, desc_json: dict) -> tuple[bool, bool]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        desc = desc_from_json(name, desc_json)
    try:
        desc.validate(LEVEL)
        ours = True
    except InvalidDescError:
        ours = False
    try:
        create_operator(desc, LEVEL)
        theirs = True
    except DirectMLRejectedDescError:
        theirs = False
    return ours, theirs


@pytest.mark.parametrize("name", SAMPLE)
def test_dmlops_and_directml_agree(name: str):
    cases = [("valid", page_descs.valid_json(name, LEVEL))]
    cases += [(rule, desc) for rule, _, desc in page_descs.broken_descs(name, LEVEL)]
    unexplained = []
    for rule, desc in cases:
        ours, theirs = _verdicts(name, desc)
        if rule == "valid" and (name, rule) not in KNOWN:
            assert ours, f"{name}: dmlops rejects its own page-shaped desc"
        if ours != theirs and (name, rule) not in KNOWN:
            unexplained.append(
                f"{rule}: dmlops {'accepts' if ours else 'rejects'}, DirectML {'accepts' if theirs else 'rejects'}"
            )
    assert not unexplained, unexplained


@pytest.mark.parametrize("function", sorted(page_facts.SUPPORT_BY_FUNCTION["REDUCE"]))
def test_reduce_function_rows_agree(function: str):
    """REDUCE's page has a table per Function: dmlops checks the desc's own Function's row
    (e.g. SUM takes no 8-bit integers, MAX does), and so does DirectML."""
    base = page_descs.valid_json("REDUCE", LEVEL)
    arg = function.startswith("ARG")
    unexplained = []
    for dtype in page_descs.RUNNABLE_TYPES:
        desc = {
            **base,
            "Function": function,
            "InputTensor": {**base["InputTensor"], "DataType": dtype},
            "OutputTensor": {**base["OutputTensor"], "DataType": "UINT32" if arg else dtype},
        }
        ours, theirs = _verdicts("REDUCE", desc)
        if ours != theirs:
            unexplained.append(f"{dtype}: dmlops {ours}, DirectML {theirs}")
    assert not unexplained, unexplained
