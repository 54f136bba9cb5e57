"""Every worked example of the seed pages, as data files, on every backend."""

from __future__ import annotations

import re

import pytest

import dmlops
from conftest import assert_close
from vector_cases import load_vectors

VECTORS = load_vectors()


def test_vectors_exist_for_every_seed_operator() -> None:
    operators = {v.operator.removeprefix("DML_OPERATOR_") for v in VECTORS}
    assert {
        "SLICE1",
        "GATHER",
        "RESAMPLE2",
        "RESAMPLE_GRAD1",
        "ROI_ALIGN",
        "MAX_POOLING2",
        "MAX_POOLING_GRAD",
    } <= operators


@pytest.mark.parametrize("vector", [v for v in VECTORS if v.expect_invalid is None], ids=lambda v: v.name)
def test_vector_output(vector, backend: str) -> None:
    desc, inputs, expected = vector.build()
    if backend not in desc.backends:
        pytest.skip(f"{desc.operator_type.name} runs on {', '.join(desc.backends)} only, not yet on {backend}")
    result = dmlops.execute(desc, inputs, backend=backend, feature_level=vector.feature_level)
    assert set(result) == set(expected)
    for member, want in expected.items():
        # seed examples are exact: data movement, small integers, dyadic fractions
        assert_close(result[member], want, exact=True)


@pytest.mark.parametrize("vector", [v for v in VECTORS if v.expect_invalid is not None], ids=lambda v: v.name)
def test_vector_rejected(vector) -> None:
    desc = dmlops.desc_from_json(vector.operator, vector.desc)
    with pytest.raises(dmlops.InvalidDescError, match=re.compile(vector.expect_invalid)):
        desc.validate(vector.feature_level)
