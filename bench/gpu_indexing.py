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

Each workload is timed in its forms (``dmlops.cuda.data_movement``): SCATTER_ELEMENTS with
``SCATTER_BATCH`` 0 (scatter_elements, tiles of lines, its last phase as gathers or as
scatter stores: ``SCATTER_STORES``) and 2 / 4 (scatter_elements_staged, one pass, that many
accesses in flight per thread); both operators with the index flag read from pinned host
memory or copied from a fresh device word (``PINNED_FLAGS``). A "kernel alone" row
launches the default form's kernel without reading the flag: the call's rows include the
host's wait for the flag, and the GPU idles from the kernel's end until the next call's
launch. Each result is checked against torch's before timing. torch.gather / scatter_
take int64 indices (their own index type), so the torch rows read 1 GiB of indices where
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


class _Setting:
    """Module settings of dmlops.cuda.data_movement for a block, restored after it."""

    def __init__(self, **values: Any) -> None:
        self.values = values
        self.saved: dict[str, Any] = {}

    def __enter__(self) -> None:
        for k, v in self.values.items():
            self.saved[k] = getattr(dm, k)
            setattr(dm, k, v)

    def __exit__(self, *exc: Any) -> None:
        for k, v in self.saved.items():
            setattr(dm, k, v)


def _form(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in settings.items())


GATHER_FORMS: list[dict[str, Any]] = [
    {"PINNED_FLAGS": False},  # the form before run B
    {"PINNED_FLAGS": True},
]
SCATTER_FORMS: list[dict[str, Any]] = [
    {"SCATTER_BATCH": 0, "SCATTER_STORES": False, "PINNED_FLAGS": False},  # the form before run B
    {"SCATTER_BATCH": 2, "PINNED_FLAGS": True},
    {"SCATTER_BATCH": 4, "PINNED_FLAGS": True},
]
"""Run B (H200) also timed SCATTER_BATCH 8 (158 registers, one block per SM: 40 % of copy), the
scatter stores (1214.6 us, 16 %), and GATHER_ELEMENTS rows with 2, 4 or 8 loads in flight per
thread and the first indices loaded before the row is staged (a kernel since removed): 2 and
4 within 0.5 % of gather_elements_rows (204.5 / 204.3 against 205.3 us, INT32), 8 slower."""


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
        floor = 2 * x0.nbytes + indexed[0][1].nbytes

        def call(k: int, indexed: Any = indexed, desc: Any = desc) -> Any:
            x, i = indexed[k % len(indexed)]
            return run_cuda(desc, {"InputTensor": x, "IndicesTensor": i}, {"OutputTensor": out})

        forms = GATHER_FORMS if VARIANTS else [{}]
        for settings in forms:
            with _Setting(**settings):
                out.fill(cp.nan)  # every element must be written
                pair = {"InputTensor": x0, "IndicesTensor": indexed[0][1]}
                got = dmlops.execute(desc, pair, outputs={"OutputTensor": out}, backend="cuda")["OutputTensor"]
                assert torch.equal(torch_of(got), want), f"GATHER_ELEMENTS {itype} {settings} mismatch"
                label = f"dmlops cuda {itype} idx" + (f" [{_form(settings)}]" if settings else "")
                record(w, "fp32", label, timed(call), floor, peer)
        # the default form's kernel alone (no flag read, no host wait)
        flag = dm.index_flag()
        launch = dm._rows_launch(x0, indexed[0][1], out, 1, True)  # gather_elements_rows
        assert launch is not None

        def bare(k: int, indexed: Any = indexed, launch: Any = launch, flag: Any = flag) -> None:
            x, i = indexed[k % len(indexed)]
            launch(x.data.ptr, i.data.ptr, out.data.ptr, flag.data.ptr)

        record(w, "fp32", f"dmlops cuda {itype} idx, kernel alone", timed(bare), floor, peer)


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
    forms = SCATTER_FORMS if VARIANTS else [{}]
    for settings in forms:
        with _Setting(**settings):
            for strict in (False, True):
                out.fill(cp.nan)  # every element must be written
                got = dmlops.execute(desc, inputs, outputs={"OutputTensor": out}, backend="cuda", strict=strict)
                assert torch.equal(torch_of(got["OutputTensor"]), want), f"SCATTER_ELEMENTS {settings} {strict}"
            label = "dmlops cuda INT32 idx" + (f" [{_form(settings)}]" if settings else "")
            record(w, "fp32", label, timed(call), floor, peer)
    staged = dm._scatter_staged(x0, i0, u0, out, 1, True)
    assert staged is not None
    flag = dm.index_flag()

    def bare(k: int) -> None:
        x, i, u = sets[k % len(sets)]
        staged(True, x.data.ptr, i.data.ptr, u.data.ptr, out.data.ptr, flag.data.ptr)

    record(w, "fp32", "dmlops cuda INT32 idx, kernel alone", timed(bare), floor, peer)


VARIANTS = True
"""Time every form in GATHER_FORMS / SCATTER_FORMS (else the defaults only)."""


def bench_indexing() -> None:
    """The indexing section of bench/gpu.py (needs its copy ceiling: gpu.measure_copy)."""
    if not gpu.COPY_BPS:
        gpu.measure_copy()
    bench_gather_elements()
    bench_scatter_elements()
