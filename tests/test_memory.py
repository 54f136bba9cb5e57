"""The allocation guard refuses impossible sizes before anything is allocated."""

from __future__ import annotations

import numpy as np
import pytest

import dmlops
from dmlops.memory import available_memory, check_allocation


def test_limit_and_available_memory_are_enforced() -> None:
    check_allocation(1024, "a small tensor", limit=2048)
    with pytest.raises(dmlops.AllocationError, match=r"a big tensor needs 4096 bytes, more than the limit of 2048"):
        check_allocation(4096, "a big tensor", limit=2048)
    free = available_memory()
    assert free is None or free > 0
    if free is not None:
        with pytest.raises(MemoryError, match=r"more than the \d+ bytes of memory available"):
            check_allocation(free + 1, "everything")


def test_execute_refuses_outputs_larger_than_memory() -> None:
    n = 2**32 - 1  # the largest DML tensor: a valid desc whose output cannot fit in this test's memory
    desc = dmlops.Slice1Desc(
        input_tensor=dmlops.TensorDesc(data_type="FLOAT64", sizes=(n,), strides=(0,)),
        output_tensor=dmlops.TensorDesc(data_type="FLOAT64", sizes=(n,)),
        input_window_offsets=(0,),
        input_window_sizes=(n,),
        input_window_strides=(1,),
    )
    free = available_memory()
    if free is not None and free > n * 16:
        pytest.skip("this machine could hold the output")
    with pytest.raises(
        dmlops.AllocationError, match=r"DML_SLICE1_OPERATOR_DESC: allocating the outputs needs \d+ bytes"
    ):
        dmlops.execute(desc, {"InputTensor": np.zeros(1)})
