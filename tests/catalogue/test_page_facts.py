"""The generated page facts: every catalogued operator has a table, REDUCE's union over functions."""

from __future__ import annotations

import pytest

from dmlops.catalogue import OPERATORS, page_facts
from dmlops.catalogue._page_facts import SUPPORT, SUPPORT_BY_FUNCTION
from dmlops.descs import REGISTRY
from dmlops.enums import FeatureLevel

REDUCE_FUNCTIONS = "ARGMAX ARGMIN AVERAGE L1 L2 LOG_SUM LOG_SUM_EXP MAX MIN MULTIPLY SUM SUM_SQUARE".split()


@pytest.mark.parametrize("op", [op for op in OPERATORS if op.name not in REGISTRY], ids=lambda op: op.name)
def test_every_generic_operator_has_a_support_table(op):
    tables = page_facts.support(op.name)
    assert tables, f"{op.name}: no tensor-support table"
    assert min(tables) <= max(op.feature_level, min(tables))
    assert all(page_facts.sources(op.name)[level] for level in tables)


def test_reduce_rows_are_the_union_of_its_functions():
    assert sorted(SUPPORT_BY_FUNCTION["REDUCE"]) == sorted(REDUCE_FUNCTIONS)
    for level in SUPPORT["REDUCE"]:
        union = page_facts.support("REDUCE")[level]
        for member, row in union.items():
            per_function = [
                page_facts.function_support("REDUCE", f)[
                    max(fl for fl in page_facts.function_support("REDUCE", f) if fl <= level)
                ][member]
                for f in REDUCE_FUNCTIONS
                if any(fl <= level for fl in page_facts.function_support("REDUCE", f))
            ]
            assert row.data_types == frozenset().union(*(r.data_types for r in per_function))
            assert row.dims == (min(r.dims[0] for r in per_function), max(r.dims[1] for r in per_function))


def test_reduce_function_rows():
    argmax = page_facts.function_support("REDUCE", "ARGMAX")
    assert {t.name for t in argmax[FeatureLevel.V4_1]["OutputTensor"].data_types} == {
        "INT64",
        "INT32",
        "UINT64",
        "UINT32",
    }
    assert page_facts.function_support("REDUCE", "AVERAGE")[FeatureLevel.V1_0]["InputTensor"].dims == (4, 4)
    assert page_facts.function_support("REDUCE", "NOT_A_FUNCTION") == {}


def test_pages_read_from_windows_ai_docs_are_recorded_as_such():
    source = page_facts.sources("ACTIVATION_GELU")[FeatureLevel.V5_1]
    assert "MicrosoftDocs/windows-ai-docs" in source
    assert "MicrosoftDocs/sdk-api" in page_facts.sources("CONVOLUTION")[FeatureLevel.V4_0]


@pytest.mark.parametrize(("function", "valid"), [("SUM", False), ("MAX", True), ("AVERAGE", False)])
def test_reduce_validates_the_row_of_its_function(function, valid):
    """INT8 is in REDUCE's union row (MIN and MAX take it) but not in SUM's or AVERAGE's row:
    dmlops rejects it there, naming the member and the function (DirectML 1.15.4 agrees)."""
    from dmlops.descs import desc_from_json
    from dmlops.errors import InvalidDescError

    desc = desc_from_json(
        "REDUCE",
        {
            "InputTensor": {"DataType": "INT8", "Sizes": [1, 1, 1, 5]},
            "OutputTensor": {"DataType": "INT8", "Sizes": [1, 1, 1, 1]},
            "Function": function,
            "Axes": [3],
        },
    )
    if valid:
        desc.validate()
    else:
        with pytest.raises(InvalidDescError, match=rf"InputTensor.DataType: must be one of .* for Function {function}"):
            desc.validate()
