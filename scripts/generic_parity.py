"""Validation parity of the generic descs with DirectML; writes docs/directml-generic-parity.md.

Usage (the directml backend must be set up: ``dmlops directml setup``)::

    python scripts/generic_parity.py [--level 6_4] [--write]

For every catalogued operator without a hand-written desc, builds the page-shaped valid
desc and one desc per page rule that breaks it (:mod:`dmlops.catalogue.page_descs`),
then asks dmlops's validation and DirectML's CreateOperator for a verdict on each. A
disagreement is classified: "DirectML looser" (dmlops rejects, DirectML accepts: the
page's fact is stricter than DirectML, or dmlops misread it) or "DirectML stricter"
(dmlops accepts, DirectML rejects: a rule dmlops does not model yet). A desc that makes
DirectML's host process exit (a crash inside CreateOperator) counts as rejected by DirectML
and is listed.
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))

from directml_parity import versions  # noqa: E402

from dmlops import catalogue  # noqa: E402
from dmlops.catalogue import page_descs, page_facts  # noqa: E402
from dmlops.descs import REGISTRY, desc_from_json  # noqa: E402
from dmlops.directml import create_operator  # noqa: E402
from dmlops.directml.host import HostCrashed  # noqa: E402
from dmlops.enums import FeatureLevel, TensorDataType  # noqa: E402
from dmlops.errors import DirectMLRejectedDescError, InvalidDescError  # noqa: E402
from rule_cases import all_cases  # noqa: E402

OUT = ROOT / "docs" / "directml-generic-parity.md"


def verdicts(name: str, desc_json: dict[str, Any], level: FeatureLevel) -> tuple[bool, bool | None]:
    """(dmlops accepts, DirectML accepts) for one desc; None: DirectML's host crashed (rejected)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        desc = desc_from_json(name, desc_json)
    try:
        desc.validate(level)
        ours = True
    except InvalidDescError:
        ours = False
    theirs: bool | None
    try:
        create_operator(desc, level)
        theirs = True
    except DirectMLRejectedDescError:
        theirs = False
    except HostCrashed:
        theirs = None  # the host restarts on the next request
    return ours, theirs


RULE_CASE = "rule case "
"""Prefix of the operator rule cases (tests/rule_cases: the operators' own rules, judged at 6_4)."""


def cases(name: str, level: FeatureLevel) -> list[tuple[str, dict[str, Any]]]:
    """("valid", desc), (rule, desc) for each broken page fact, then the operator's rule cases."""
    out = [("valid", page_descs.valid_json(name, level))]
    out += [(rule, desc) for rule, _, desc in page_descs.broken_descs(name, level)]
    if level == FeatureLevel.V6_4:
        out += [(f"{RULE_CASE}{case.name}", case.desc) for case in all_cases() if case.operator == name]
    return out


def run(level: FeatureLevel) -> list[dict[str, Any]]:
    """One row per operator: its cases, agreements and disagreements."""
    rows = []
    for op in catalogue.OPERATORS:
        if op.name in REGISTRY or op.feature_level > level:
            continue
        row: dict[str, Any] = {
            "op": op.name,
            "cases": 0,
            "agreed": 0,
            "rule_cases": 0,
            "disagreements": [],
            "valid_ok": None,
            "crashes": [],
        }
        for rule, desc in cases(op.name, level):
            ours, verdict = verdicts(op.name, desc, level)
            if verdict is None:
                row["crashes"].append(rule)
            theirs = bool(verdict)
            row["cases"] += 1
            row["rule_cases"] += rule.startswith(RULE_CASE)
            if rule == "valid":
                row["valid_ok"] = theirs
            if ours == theirs:
                row["agreed"] += 1
            else:
                kind = "DirectML looser" if theirs else "DirectML stricter"
                row["disagreements"].append((rule, kind))
        rows.append(row)
    return rows


def function_rows(level: FeatureLevel) -> list[dict[str, Any]]:
    """Pages with a table per function (REDUCE): each function's row at ``level`` against DirectML.

    dmlops validates each desc against its Function's row (``page_facts.function_support``)
    as well as the union (``page_facts.support``); here the page's per-function row and
    dmlops's verdict are compared with CreateOperator, one
    desc per runnable data type: input and output alike, or for an output typed apart from
    the input (ARGMAX, ARGMIN: an index type) the input's types with a UINT32 output and the
    output's types with a FLOAT32 input.
    """
    out = []
    for name in sorted(page_facts.SUPPORT_BY_FUNCTION):
        base = page_descs.valid_json(name, level)
        for function in page_facts.SUPPORT_BY_FUNCTION[name]:
            tables = page_facts.function_support(name, function)
            below = [fl for fl in tables if fl <= level]
            if not below:
                continue
            rows = tables[max(below)]
            inputs, outputs = rows["InputTensor"].data_types, rows["OutputTensor"].data_types
            apart = inputs != outputs
            pairs = (
                [(t, "UINT32") for t in page_descs.RUNNABLE_TYPES] + [("FLOAT32", t) for t in page_descs.RUNNABLE_TYPES]
                if apart
                else [(t, t) for t in page_descs.RUNNABLE_TYPES]
            )
            wrong, disagree = [], []
            for input_type, output_type in dict.fromkeys(pairs):
                desc = {
                    **base,
                    "Function": function,
                    "InputTensor": {**base["InputTensor"], "DataType": input_type},
                    "OutputTensor": {**base["OutputTensor"], "DataType": output_type},
                }
                page = TensorDataType[input_type] in inputs and TensorDataType[output_type] in outputs
                ours, theirs = verdicts(name, desc, level)
                if bool(ours) != bool(theirs):
                    said = f"dmlops {'accepts' if ours else 'rejects'}, DirectML {'accepts' if theirs else 'rejects'}"
                    disagree.append(f"{input_type}->{output_type}: {said}")
                if page != bool(theirs):
                    said = f"page {'yes' if page else 'no'}, DirectML {'yes' if theirs else 'no'}"
                    wrong.append(f"{input_type}->{output_type}: {said}")
            out.append(
                {
                    "op": name,
                    "function": function,
                    "level": max(below),
                    "descs": len(dict.fromkeys(pairs)),
                    "wrong": wrong,
                    "disagree": disagree,
                }
            )
    return out


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    return out.stdout.strip() or "unknown"


def render(
    rows: list[dict[str, Any]], level: FeatureLevel, seconds: float, functions: list[dict[str, Any]] | None = None
) -> str:
    """The report's Markdown."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Generic descs vs the real DirectML: validation parity",
        "",
        f"Generated by `python scripts/generic_parity.py --level {str(level).removeprefix('DML_FEATURE_LEVEL_')} "
        f"--write` on {now}, at commit {_commit()}, in {seconds:.1f} s. Do not edit by hand: run the script again.",
        "",
        "For each of the operators without a hand-written desc: one page-shaped valid desc and one desc per page "
        "rule that breaks it (`dmlops.catalogue.page_descs`: a data type or a dimension count outside a tensor's "
        "support row, a member made to differ in a same-DataType/DimensionCount/Sizes constraint), judged by "
        "dmlops's validation and by DirectML's `IDMLDevice::CreateOperator`. The rules are the page facts "
        "(`dmlops.catalogue.page_facts`) with DirectML's corrections (below). At 6_4 each operator's own rules "
        "(output sizes, axis ranges, relations between tensors and attributes: the families' `validate_generic`) "
        "add their cases from `tests/rule_cases` (a valid desc and one desc per rule that breaks it; the column "
        "'of them, rule cases'). FLOAT16, INT16 and UINT16 are left out (unsupported on this stack).",
        "",
        "## Stack",
        "",
        "| component | version |",
        "|---|---|",
    ]
    for key, value in versions().items():
        lines.append(f"| {key} | {value} |")
    total = sum(r["cases"] for r in rows)
    agreed = sum(r["agreed"] for r in rows)
    full = [r for r in rows if r["agreed"] == r["cases"] and r["valid_ok"]]
    no_valid = [r for r in rows if not r["valid_ok"]]
    by_kind: dict[str, int] = {}
    for r in rows:
        for _, kind in r["disagreements"]:
            by_kind[kind] = by_kind.get(kind, 0) + 1
    lines += [
        "",
        "## Summary",
        "",
        f"- operators: {len(rows)}; at 100% (valid desc accepted by both, every broken desc rejected by both): "
        f"{len(full)}",
        f"- descs: {total}; agreed: {agreed}; disagreements: {total - agreed} "
        f"({', '.join(f'{k}: {v}' for k, v in sorted(by_kind.items())) or 'none'})",
        f"- operators whose page-shaped desc DirectML rejects (no valid desc built yet): "
        f"{', '.join(r['op'] for r in no_valid) or 'none'}",
        "",
        "## Per operator",
        "",
        "| operator | table source (newest level) | descs | of them, rule cases | agreed | disagreements |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        src = page_facts.sources(r["op"])
        newest = f"{str(max(src)).removeprefix('DML_FEATURE_LEVEL_')}: {src[max(src)]}" if src else "no table"
        dis = "; ".join(f"{rule} ({kind})" for rule, kind in r["disagreements"]) or ""
        if not r["valid_ok"]:
            dis = ("valid desc rejected by DirectML; " + dis).rstrip("; ")
        lines.append(f"| {r['op']} | {newest} | {r['cases']} | {r['rule_cases']} | {r['agreed']} | {dis} |")
    lines += [
        "",
        "## DirectML's corrections of the pages (errata candidates)",
        "",
        "Where DirectML 1.15.4 disagreed with a page's fact, DirectML wins: "
        "`page_facts.SUPPORT_OVERRIDES` / `SAME_OVERRIDES` hold the corrected facts.",
        "",
        "| operator | page vs DirectML 1.15.4 |",
        "|---|---|",
    ]
    for op, why in sorted(page_facts.WHY.items()):
        lines.append(f"| {op} | {why} |")
    if functions:
        lines += [
            "",
            "## Tables per function (REDUCE): the page's rows against DirectML",
            "",
            "dmlops checks the union of the functions' rows (the operator's row above) and the row of the desc's "
            "own Function. Here each function's row, and dmlops's verdict, are compared with CreateOperator, one "
            "desc per runnable data type (for ARGMAX/ARGMIN the input types with a UINT32 output and the output "
            "types with a FLOAT32 input).",
            "",
            "| operator | function | table | descs | page vs DirectML | dmlops vs DirectML |",
            "|---|---|---|---|---|---|",
        ]
        for f in functions:
            table = str(f["level"]).removeprefix("DML_FEATURE_LEVEL_")
            verdict = "; ".join(f["wrong"]) or "agree"
            ours = "; ".join(f["disagree"]) or "agree"
            lines.append(f"| {f['op']} | {f['function']} | {table} | {f['descs']} | {verdict} | {ours} |")
    crashes = [(r["op"], rule) for r in rows for rule in r["crashes"]]
    lines += [
        "",
        "## Descs that crash DirectML's host",
        "",
        "CreateOperator did not return: the host process exited (counted as rejected above).",
        "",
        "| operator | desc |",
        "|---|---|",
    ]
    lines += [f"| {op} | {rule} |" for op, rule in crashes] or ["| none | |"]
    lines += [
        "",
        "## Constraint sentences not read as rules",
        "",
        "| operator | page:line |",
        "|---|---|",
    ]
    for op, refs in sorted(page_facts.UNPARSED.items()):
        lines.append(f"| {op} | {', '.join(f'{p}:{n}' for p, n in refs)} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", default="6_4")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    level = FeatureLevel.from_any(args.level)
    start = time.time()
    rows = run(level)
    functions = function_rows(level)
    text = render(rows, level, time.time() - start, functions)
    if args.write:
        OUT.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
