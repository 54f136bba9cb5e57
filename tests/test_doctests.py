"""The examples in the functional layer's docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "dmlops",
    "dmlops.ops.data_movement",
    "dmlops.ops.pooling",
    "dmlops.ops.reduction",
    "dmlops.ops.resampling",
    "dmlops.ops.roi",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    if name != "dmlops":
        assert result.attempted > 0, f"{name} has no examples"
