"""Widen the page's support rows where DirectML accepts more; writes src/dmlops/catalogue/_directml_probes.py.

Usage (the directml backend must be set up)::

    python scripts/probe_directml_support.py [--write]

Many stored pages are old: their newest "Tensor support" table lacks the data types and
dimension counts that later feature levels added. For every operator without a
hand-written desc whose page has a table, this starts from the page-shaped valid desc
(:mod:`dmlops.catalogue.page_descs`) and, for each tensor member, sets the member (with
every member of its same-DataType / same-DimensionCount group) to each data type this
stack runs and each dimension count 1 to 8 outside the page's row, then asks DirectML
1.15.4's CreateOperator at DML_FEATURE_LEVEL_6_4. Accepted values are added to the row
(the level that introduced them is not known: the rows apply at 6_4). The probes measure
with unit sizes; a dimension count that the operator's other members constrain (an axis)
is not seen.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "dmlops" / "catalogue" / "_directml_probes.py"

from dmlops import catalogue  # noqa: E402
from dmlops.catalogue import page_descs  # noqa: E402
from dmlops.catalogue._page_facts import SUPPORT  # noqa: E402
from dmlops.descs import REGISTRY, desc_from_json  # noqa: E402
from dmlops.directml import create_operator  # noqa: E402
from dmlops.directml.host import HostCrashed  # noqa: E402
from dmlops.enums import FeatureLevel, TensorDataType  # noqa: E402
from dmlops.errors import DirectMLRejectedDescError, InvalidDescError  # noqa: E402

LEVEL = FeatureLevel.V6_4


def accepts(name: str, desc: dict) -> bool:
    """DirectML's verdict."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            d = desc_from_json(name, desc)
        except InvalidDescError:
            return False
    try:
        create_operator(d, LEVEL)
        return True
    except (DirectMLRejectedDescError, HostCrashed):  # a crash of the host: not accepted (it restarts)
        return False


def probe(name: str) -> tuple[dict, list[str]]:
    """Rows widened by what DirectML accepts, and what was found.

    Probed from the page-shaped valid desc and, where it holds optional tensors
    (``page_descs.OPTIONAL_TENSORS``), from the desc without them too: a member's row gets
    what either accepted.
    """
    tables = {fl: rows for fl, rows in SUPPORT.get(name, {}).items()}
    if not tables:
        return {}, []
    newest = tables[max(tables)]
    bases = [page_descs.valid_json(name, LEVEL)]
    if name in page_descs.OPTIONAL_TENSORS:
        bases.append(page_descs.valid_json(name, LEVEL, optional=False))
    new_types: dict[str, list[str]] = {}
    new_dims: dict[str, list[int]] = {}
    for base in bases:
        _probe_from(name, base, newest, new_types, new_dims)
    widened: dict = {}
    found: list[str] = []
    order = [t.name for t in TensorDataType]
    for member, (kind, dims, types) in newest.items():
        added_types = list(dict.fromkeys(new_types.get(member, [])))  # in the order probed
        added_dims = sorted(set(new_dims.get(member, [])))
        if not added_types and not added_dims:
            continue
        lo = min([dims[0], *added_dims])
        hi = max([dims[1], *added_dims])
        widened[member] = (kind, (lo, hi), " ".join(sorted({*types.split(), *added_types}, key=order.index)))
        bits = []
        if added_types:
            bits.append("types " + " ".join(added_types))
        if added_dims:
            bits.append("dimension counts " + " ".join(map(str, added_dims)))
        found.append(f"{member}: {', '.join(bits)}")
    return widened, found


def _probe_from(name: str, base: dict, newest: dict, new_types: dict, new_dims: dict) -> None:
    """Add to ``new_types`` / ``new_dims`` what DirectML accepts beyond ``newest``, from ``base``."""
    if not accepts(name, base):
        return
    spec = catalogue.operator(name)
    slots = list(page_descs._tensor_slots(base, spec))
    for member, (_, dims, types) in newest.items():
        listed = types.split()
        for attribute in ("DataType", "DimensionCount"):
            group = next((g for g in page_descs._groups(name, attribute) if member in g), {member})
            targets = [s for m, s, _ in slots if m in group]
            if member not in {m for m, _, _ in slots}:
                continue
            values = (
                [t for t in page_descs.RUNNABLE_TYPES if t not in listed]
                if attribute == "DataType"
                else [d for d in range(1, 9) if not dims[0] <= d <= dims[1]]
            )
            for value in values:
                patch = {"DataType": value} if attribute == "DataType" else {"Sizes": [1] * int(value)}
                desc = base
                for target in targets:
                    desc = page_descs._patched(desc, spec, target, patch)
                if accepts(name, desc):
                    (new_types if attribute == "DataType" else new_dims).setdefault(member, []).append(value)


def render(results: dict) -> str:
    """The generated module."""
    out = [
        '"""Support rows widened by what DirectML 1.15.4 accepts (at DML_FEATURE_LEVEL_6_4).',
        "",
        "Generated by scripts/probe_directml_support.py. Do not edit: run it again.",
        "PROBED: operator -> member -> (kind, (lowest, highest) dimension count, data types), the",
        "page row with what DirectML accepted added. PROBED_WHY: operator -> what was found.",
        '"""',
        "",
        "# fmt: off",
        "# ruff: noqa: E501",
        "",
        "from __future__ import annotations",
        "",
        "PROBED: dict[str, dict[str, tuple[str, tuple[int, int], str]]] = {",
    ]
    for name, (rows, _) in results.items():
        out.append(f"    {name!r}: {{")
        for member, row in rows.items():
            out.append(f"        {member!r}: {row!r},")
        out.append("    },")
    out += ["}", "", "PROBED_WHY: dict[str, str] = {"]
    for name, (_, found) in results.items():
        text = "DirectML 1.15.4 accepts, beyond the newest table of the page: " + "; ".join(found)
        out.append(f"    {name!r}: {text!r},")
    out += ["}", ""]
    return "\n".join(out)


def main() -> int:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    results = {}
    for op in catalogue.OPERATORS:
        if op.name in REGISTRY:
            continue
        rows, found = probe(op.name)
        if rows:
            results[op.name] = (rows, found)
    text = render(results)
    if args.write:
        OUT.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(f"{len(results)} operators widened", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
