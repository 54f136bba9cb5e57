"""GPU benchmark, the indexing section: GATHER_ELEMENTS and SCATTER_ELEMENTS against torch.gather / torch.scatter_.

Run through bench/gpu.py (``PYTHONPATH=src python bench/gpu.py --only indexing``), which
measures the copy ceiling first; this module uses its helpers (``timed``, ``copies``,
``record``, ``run_cuda``) and reports "% copy" against that ceiling.

Workloads (FLOAT32 data of 16384 x 4096, 256 MiB, along axis 1):

* GATHER_ELEMENTS with random INT32 (and INT64) indices of the data's shape. Floor
  bytes: data read + indices read + output written, each once (768 MiB with INT32).
* SCATTER_ELEMENTS with unique indices: a random permutation of each row, INT32, and
  updates of the data's shape. Every output element then comes from an update, so the
  input need not be read at all: floor bytes = updates read + indices read + output
  written (768 MiB), not counting the input (counting it, as "data read" of both data
  inputs, would add 256 MiB and flatter the result by a third).

SCATTER_ELEMENTS is timed with both forms of its kernel's last phase
(``dmlops.cuda.data_movement.SCATTER_STORES``: the winning updates stored where they point,
or each output element gathered from its update). Each result is checked against
torch's before timing. torch.gather / scatter_ take
int64 indices (their own index type), so the torch rows read 1 GiB of indices where
dmlops' INT32 rows read 256 MiB; the INT64 dmlops row compares like with like.
"""

from __future__ import annotations

from typing import Any

import cupy as cp
import gpu
import torch
from gpu import copies, record, run_cuda, timed, torch_of

import dmlops
import dmlops.cuda.data_movement as dm
from dmlops.descs import desc_from_json

ROWS, WIDTH = 16384, 4096


def _t(dtype: str, sizes: tuple[int, ...]) -> dict[str, Any]:
    return {"DataType": dtype, "Sizes": list(sizes)}


def bench_gather_elements() -> None:
    shape = (ROWS, WIDTH)
    rng = cp.random.default_rng(7)
    sets = copies(
        lambda: (
            rng.standard_normal(shape, dtype=cp.float32),
            rng.integers(0, WIDTH, size=shape, dtype=cp.int64),
        ),
        2 * ROWS * WIDTH * 4,
    )
    out = cp.empty(shape, dtype=cp.float32)
    x0, i0 = sets[0]
    want = torch.gather(torch_of(x0), 1, torch_of(i0))
    w = "GatherElements 16384x4096 axis 1, random idx"
    tsets = [(torch_of(x), torch_of(i)) for x, i in sets]
    tout = torch_of(out)
    peer = timed(lambda k: torch.gather(_pick(tsets, k, 0), 1, _pick(tsets, k, 1), out=tout))
    assert torch.equal(tout, want), "torch.gather mismatch"
    record(w, "fp32", "torch.gather(out=) int64 idx", peer, 2 * x0.nbytes + i0.nbytes)
    for itype, ctype in (("INT32", cp.int32), ("INT64", cp.int64)):
        desc = desc_from_json(
            "GATHER_ELEMENTS",
            {
                "InputTensor": _t("FLOAT32", shape),
                "IndicesTensor": _t(itype, shape),
                "OutputTensor": _t("FLOAT32", shape),
                "Axis": 1,
            },
        )
        desc.validate()
        indexed = [(x, i.astype(ctype)) for x, i in sets]
        got = dmlops.execute(
            desc, {"InputTensor": x0, "IndicesTensor": indexed[0][1]}, outputs={"OutputTensor": out}, backend="cuda"
        )["OutputTensor"]
        assert torch.equal(torch_of(got), want), f"GATHER_ELEMENTS {itype} mismatch"
        floor = 2 * x0.nbytes + indexed[0][1].nbytes

        def call(k: int, indexed: Any = indexed, desc: Any = desc) -> Any:
            x, i = indexed[k % len(indexed)]
            return run_cuda(desc, {"InputTensor": x, "IndicesTensor": i}, {"OutputTensor": out})

        record(w, "fp32", f"dmlops cuda {itype} idx", timed(call), floor, peer)


def _pick(sets: list[Any], k: int, j: int) -> Any:
    return sets[k % len(sets)][j]


def bench_scatter_elements() -> None:
    shape = (ROWS, WIDTH)
    rng = cp.random.default_rng(8)

    def make() -> tuple[Any, Any, Any]:
        x = rng.standard_normal(shape, dtype=cp.float32)
        perm = cp.argsort(rng.random(shape, dtype=cp.float32), axis=1)  # a permutation per row: unique targets
        return x, perm.astype(cp.int32), rng.standard_normal(shape, dtype=cp.float32)

    sets = copies(make, 3 * ROWS * WIDTH * 4)
    out = cp.empty(shape, dtype=cp.float32)
    desc = desc_from_json(
        "SCATTER_ELEMENTS",
        {
            "InputTensor": _t("FLOAT32", shape),
            "IndicesTensor": _t("INT32", shape),
            "UpdatesTensor": _t("FLOAT32", shape),
            "OutputTensor": _t("FLOAT32", shape),
            "Axis": 1,
        },
    )
    desc.validate()
    x0, i0, u0 = sets[0]
    tsets = [(torch_of(x), torch_of(i.astype(cp.int64)), torch_of(u)) for x, i, u in sets]
    tout = torch_of(out)
    want = torch_of(x0).scatter(1, tsets[0][1], torch_of(u0))
    inputs = {"InputTensor": x0, "IndicesTensor": i0, "UpdatesTensor": u0}
    got = dmlops.execute(desc, inputs, outputs={"OutputTensor": out}, backend="cuda")["OutputTensor"]
    assert torch.equal(torch_of(got), want), "SCATTER_ELEMENTS mismatch"
    strict = dmlops.execute(desc, inputs, backend="cuda", strict=True)["OutputTensor"]
    assert torch.equal(torch_of(strict), want), "SCATTER_ELEMENTS (strict) mismatch"
    floor = u0.nbytes + i0.nbytes + out.nbytes

    def torch_call(k: int) -> Any:
        x, i, u = tsets[k % len(tsets)]
        tout.copy_(x)
        return tout.scatter_(1, i, u)

    def call(k: int) -> Any:
        x, i, u = sets[k % len(sets)]
        return run_cuda(desc, {"InputTensor": x, "IndicesTensor": i, "UpdatesTensor": u}, {"OutputTensor": out})

    w = "ScatterElements 16384x4096 axis 1, row perms"
    peer = timed(torch_call)
    record(w, "fp32", "torch copy_ + scatter_ int64 idx", peer, floor)
    record(w, "fp32", "dmlops cuda INT32 idx", timed(call), floor, peer)
    # the kernel's last phase in its other form (SCATTER_STORES: scatter stores or gathers)
    default = dm.SCATTER_STORES
    dm.SCATTER_STORES = not default
    try:
        got = dmlops.execute(desc, inputs, outputs={"OutputTensor": out}, backend="cuda")["OutputTensor"]
        assert torch.equal(torch_of(got), want), "SCATTER_ELEMENTS (other form) mismatch"
        other = "gathers" if default else "scatter stores"
        record(w, "fp32", f"dmlops cuda INT32 idx, as {other}", timed(call), floor, peer)
    finally:
        dm.SCATTER_STORES = default


def bench_indexing() -> None:
    """The indexing section of bench/gpu.py (needs its copy ceiling: gpu.measure_copy)."""
    if not gpu.COPY_BPS:
        gpu.measure_copy()
    bench_gather_elements()
    bench_scatter_elements()
