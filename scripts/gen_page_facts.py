"""Generate the page facts of every operator (src/dmlops/catalogue/_page_facts.py).

Usage::

    python scripts/gen_page_facts.py [--docs ../shared/dml-docs] [--current-pages DIR] [--write]

Reads every operator page ``ns-directml-dml_<op>_operator_desc.md`` of the DirectML
reference (copies of ``MicrosoftDocs/sdk-api``, ``sdk-api-src/content/directml``) and
extracts, per operator, facts only (no page prose is copied):

- its "Tensor support" tables: per feature level ("DML_FEATURE_LEVEL_X_Y and above", or
  a single table without a heading, which applies from the operator's own level), each
  tensor member's kind, supported dimension counts and data types;
- its "Tensor constraints" sentences of the form "A, B, and C must have the same
  DataType, DimensionCount, and Sizes", as ``Same`` rules. Every other constraint
  sentence is listed as unparsed (page file and line) and printed to stderr.

Many stored copies are old (``ms.date`` 2018-2021) and lack the tables of feature levels
4_0 to 6_4, or the "Tensor support" section altogether. ``CURRENT`` below holds tables
transcribed from the current pages on learn.microsoft.com (read through the ``search``
tool; only the tables' facts, with the page address as source). Where a current table
exists for a level, it replaces the stored one; the source of every table is recorded.

``--current-pages DIR`` reads newer versions of the pages, fetched from the public
repositories ``MicrosoftDocs/sdk-api`` (``sdk-api-src/content/directml/``) or
``MicrosoftDocs/windows-ai-docs`` (``docs/directml/api/``, where the pages of the operators
of feature levels 5_1 to 6_4 live now) and saved outside the repository (they are not
copied into it): files ``ns-directml-dml_<op>_operator_desc.md`` (or the page's own file
name, e.g. ``..._reverse_subsequences_desc.md``) with the front matter's ``UID`` and
``ms.date``, a ``<repository>-commit:`` line (``sdk-api-commit:`` or
``windows-ai-docs-commit:``) naming the repository and the commit they were read at, and
the page's "Availability", "Tensor constraints" and "Tensor support" sections as they are
on the page. Per operator, the page whose newest table is of the highest feature level
wins (a tie goes to the newer page, the stored copies being older snapshots); its tables
and constraints are used, and the source records the repository and commit.

A "Tensor support according to function" section (REDUCE) has one group of tables per set
of functions ("### ARGMIN and ARGMAX"): they are kept per function (``SUPPORT_BY_FUNCTION``)
and the operator's own row at each level is their union (every function's table of the
highest level <= that level: the widest dimension counts and all data types), which is
what a desc-level check can use without knowing the function. A table whose data-type
column is empty (FOLD, UNFOLD) lists no restriction: every data type is taken, and the
finding is printed.

Without ``--write`` the module is printed to stdout; with it, it is written into the
source tree. Findings (table members that are not tensor members of the catalogue row,
operators with no table from any source, unparsed sentences) go to stderr.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from dmlops import catalogue  # noqa: E402
from dmlops.catalogue import TENSOR_MEMBER_KINDS  # noqa: E402

OUT = ROOT / "src" / "dmlops" / "catalogue" / "_page_facts.py"
DOCS = ROOT.parent / "shared" / "dml-docs"
LEARN = "https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-"

ALL_TYPES = ("FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8")
ALL_DIMS = (1, 8)
F = ("FLOAT32", "FLOAT16")
TYPE_ORDER = ("FLOAT64", *ALL_TYPES, "INT4", "UINT4")
REPOSITORIES = {"sdk-api": "MicrosoftDocs/sdk-api", "windows-ai-docs": "MicrosoftDocs/windows-ai-docs"}
"""``<tag>-commit:`` line of a saved page -> the public repository it was read from."""

# -- tables of the current pages (facts transcribed; the newest level of each page) ----------
# op -> (level, {member: (kind, (lo, hi), types)}). The source is LEARN + the struct's page.
CURRENT: dict[str, tuple[str, dict[str, tuple[str, tuple[int, int], tuple[str, ...]]]]] = {
    # 5_1: 64-bit integers and 8/16-bit integers for ADD (current page, 2024)
    "ELEMENT_WISE_ADD": (
        "5_1",
        {
            "ATensor": ("input", ALL_DIMS, ALL_TYPES),
            "BTensor": ("input", ALL_DIMS, ALL_TYPES),
            "OutputTensor": ("output", ALL_DIMS, ALL_TYPES),
        },
    ),
    "ELEMENT_WISE_COS": ("3_0", {"InputTensor": ("input", ALL_DIMS, F), "OutputTensor": ("output", ALL_DIMS, F)}),
    "ELEMENT_WISE_COSH": ("3_0", {"InputTensor": ("input", ALL_DIMS, F), "OutputTensor": ("output", ALL_DIMS, F)}),
}


@dataclass
class Table:
    """One "DML_FEATURE_LEVEL_X_Y and above" table and where it was read."""

    level: str
    rows: dict[str, tuple[str, tuple[int, int], tuple[str, ...]]]
    source: str
    functions: tuple[str, ...] = ()


@dataclass
class PageFacts:
    """What one operator page states."""

    op: str
    page: str
    date: str
    tables: list[Table]
    same: list[tuple[tuple[str, ...], tuple[str, ...]]]
    unparsed: list[tuple[int, str]]
    by_function: dict[str, list[Table]] | None = None
    empty_types: list[str] | None = None


_KIND = {
    "input": "input",
    "output": "output",
    "optional input": "input",
    "optional output": "output",
    "array of inputs": "input",
    "array of outputs": "output",
}


def _dims(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)(?:\s+to\s+(\d+))?", text.strip())
    if not m:
        raise ValueError(f"dimension counts {text!r}")
    lo = int(m.group(1))
    return lo, int(m.group(2) or lo)


def _section(lines: list[str], title: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    inside = False
    for no, line in enumerate(lines, 1):
        if re.match(r"^#{1,2} ", line):
            inside = line.strip().lstrip("#").strip().lower() == title
            continue
        if inside:
            out.append((no, line.rstrip()))
    return out


def _support_section(lines: list[str]) -> list[tuple[int, str]]:
    """The "Tensor support" section, or "Tensor support according to function"."""
    out: list[tuple[int, str]] = []
    inside = False
    for no, line in enumerate(lines, 1):
        if re.match(r"^#{1,2} ", line):
            inside = line.strip().lstrip("#").strip().lower().startswith("tensor support")
            continue
        if inside:
            out.append((no, line.rstrip()))
    return out


def _function_names(heading: str) -> tuple[str, ...]:
    """The function names of a heading such as ``AVERAGE, L2, LOG_SUM, and LOG_SUM_EXP`` (empty: not one)."""
    tokens = [t for t in re.split(r"[,\s]+", heading.strip()) if t]
    if not tokens or not all(t == "and" or re.fullmatch(r"[A-Z][A-Z0-9_]*", t) for t in tokens):
        return ()
    if any(t.startswith("DML_") for t in tokens):
        return ()
    return tuple(t for t in tokens if t != "and")


def _tables(
    section: list[tuple[int, str]], first_level: str, source: str, empty: list[str] | None = None
) -> list[Table]:
    tables: list[Table] = []
    level = first_level
    header: list[str] | None = None
    current: Table | None = None
    functions: tuple[str, ...] = ()
    for _, line in section:
        h = re.match(r"^#+\s*DML_FEATURE_LEVEL_(\d+_\d+) and above", line)
        if h:
            level, header, current = h.group(1), None, None
            continue
        g = re.match(r"^#+\s+(.+)$", line.strip())
        if g and _function_names(g.group(1)):
            # a group of functions ("### ARGMIN and ARGMAX"): its tables start at the operator's level
            functions, level, header, current = _function_names(g.group(1)), first_level, None, None
            continue
        if not line.startswith("|"):
            if line.strip():
                header, current = None, None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if set("".join(cells)) <= set("-: "):
            continue
        row = dict(zip(header, cells))
        member = row["tensor"]
        kind = _KIND[row["kind"].lower()]
        dims = _dims(row["supported dimension counts"])
        types = tuple(t.strip() for t in row["supported data types"].split(",") if t.strip())
        if not types:  # the page lists no data type: no restriction stated
            types = TYPE_ORDER
            if empty is not None:
                empty.append(f"{level} {member}")
        if current is None:
            current = Table(level, {}, source, functions)
            tables.append(current)
        current.rows[member] = (kind, dims, types)
    return tables


def _union(tables: list[Table]) -> tuple[list[Table], dict[str, list[Table]]]:
    """Tables per function, and the operator's tables: at each level, the union over functions."""
    by_function: dict[str, list[Table]] = {}
    for table in tables:
        for function in table.functions:
            by_function.setdefault(function, []).append(table)
    levels = sorted({t.level for t in tables}, key=_level_key)
    union: list[Table] = []
    for level in levels:
        rows: dict[str, tuple[str, tuple[int, int], tuple[str, ...]]] = {}
        for function_tables in by_function.values():
            below = [t for t in function_tables if _level_key(t.level) <= _level_key(level)]
            if not below:
                continue
            table = max(below, key=lambda t: _level_key(t.level))
            for member, (kind, dims, types) in table.rows.items():
                if member in rows:
                    _, (lo, hi), old = rows[member]
                    dims = (min(lo, dims[0]), max(hi, dims[1]))
                    types = tuple(t for t in TYPE_ORDER if t in {*old, *types})
                rows[member] = (kind, dims, types)
        union.append(Table(level, rows, f"union over functions of {tables[0].source}"))
    return union, by_function


_SAME = re.compile(r"^(?P<names>.+?)\s+must have the same\s+(?P<attrs>.+?)\.?$")
_NAME = re.compile(r"[*`]([A-Za-z0-9]+)[*`]")


def _constraints(section: list[tuple[int, str]]) -> tuple[list, list]:
    same, unparsed = [], []
    for no, line in section:
        text = line.strip()
        if not text or text.startswith("|") or text.startswith("#"):
            continue
        m = _SAME.match(re.sub(r"^\*\s+", "", text))
        if m:
            names = tuple(_NAME.findall(m.group("names")))
            attrs = tuple(a for a in ("DataType", "DimensionCount", "Sizes") if a in m.group("attrs"))
            leftover = re.sub(r"[*`,]|\band\b|DataType|DimensionCount|Sizes", "", m.group("attrs")).strip()
            if len(names) >= 2 and attrs and not leftover:
                same.append((names, attrs))
                continue
        unparsed.append((no, text))
    return same, unparsed


def read_pages(docs: Path, kind: str = "stored copy") -> dict[str, PageFacts]:
    """The facts of every operator page in ``docs``, by catalogue name."""
    by_struct = {op.struct: op for op in catalogue.OPERATORS}
    facts: dict[str, PageFacts] = {}
    for path in sorted(docs.glob("ns-directml-dml_*_desc.md")):
        text = path.read_text(encoding="utf-8")
        uid = re.search(r"^UID: NS:directml\.(\S+)", text, re.M)
        if not uid or uid.group(1) not in by_struct:
            if not uid or (uid.group(1).endswith("_OPERATOR_DESC") and uid.group(1) != "DML_OPERATOR_DESC"):
                print(f"{path.name}: no catalogue row for {uid.group(1) if uid else '?'}", file=sys.stderr)
            continue
        op = by_struct[uid.group(1)]
        date = re.search(r"^ms\.date:\s*(\S+)", text, re.M)
        lines = text.splitlines()
        level = str(op.feature_level).removeprefix("DML_FEATURE_LEVEL_")
        d = date.group(1) if date else "?"
        commit = re.search(r"^([a-z-]+)-commit:\s*([0-9a-f]+)", text, re.M)
        if commit and commit.group(1) in REPOSITORIES:
            repository = REPOSITORIES[commit.group(1)]
            source = f"{kind} {path.name} ({repository} {commit.group(2)[:12]}, ms.date {d})"
        elif commit:
            raise ValueError(f"{path.name}: unknown repository {commit.group(1)!r} (known: {sorted(REPOSITORIES)})")
        else:
            source = f"{kind} {path.name} (ms.date {d})"
        empty: list[str] = []
        tables = _tables(_support_section(lines), level, source, empty)
        by_function = None
        if any(t.functions for t in tables):
            tables, by_function = _union(tables)
        same, unparsed = _constraints(_section(lines, "tensor constraints"))
        # A "Tensor constraints" section that runs into the support tables (CONVOLUTION_INTEGER)
        facts[op.name] = PageFacts(op.name, path.name, d, tables, same, unparsed, by_function, empty or None)
    return facts


def _newest(page: PageFacts) -> tuple[int, int]:
    return max((_level_key(t.level) for t in page.tables), default=(0, 0))


def merge_pages(stored: dict[str, PageFacts], newer: dict[str, PageFacts]) -> dict[str, PageFacts]:
    """Per operator, the page whose newest table is of the highest level (a tie: ``newer``)."""
    facts = dict(stored)
    for name, page in newer.items():
        old = facts.get(name)
        if old is None or (page.tables and _newest(page) >= _newest(old)):
            facts[name] = page
    return facts


def merge_current(facts: dict[str, PageFacts]) -> None:
    """Replace stored tables by the search-transcribed tables of the same level (``CURRENT``).

    A table already read from an sdk-api page (``--current-pages``) of that level is kept.
    """
    for name, (level, rows) in CURRENT.items():
        op = catalogue.operator(name)
        page = facts.setdefault(name, PageFacts(name, "", "", [], [], []))
        if any(t.level == level and t.source.startswith("current page") for t in page.tables):
            continue
        source = f"current page {LEARN}{op.struct.lower()}"
        page.tables = [t for t in page.tables if t.level != level]
        page.tables.append(Table(level, dict(rows), source))


def check(facts: dict[str, PageFacts]) -> list[str]:
    """Findings: operators without a table, table or constraint members that are not tensors."""
    findings = []
    for op in catalogue.OPERATORS:
        tensors = {m.name for m in op.members if m.kind in TENSOR_MEMBER_KINDS}
        page = facts.get(op.name)
        if page is None or not page.tables:
            findings.append(f"{op.name}: no tensor-support table from any source")
            continue
        for table in page.tables:
            for member in table.rows:
                if member not in tensors:
                    findings.append(f"{op.name}: table {table.level} names {member}, not a tensor member")
        for names, _ in page.same:
            for member in names:
                if member not in tensors:
                    findings.append(f"{op.name}: constraint names {member}, not a tensor member")
        for where in page.empty_types or ():
            findings.append(f"{op.name}: table {where} lists no data types (every type taken)")
    return findings


def _level_key(level: str) -> tuple[int, int]:
    a, b = level.split("_")
    return int(a), int(b)


def render(facts: dict[str, PageFacts]) -> str:
    """The generated module's text."""
    out = [
        '"""Facts of every operator page: tensor-support tables and same-attribute constraints.',
        "",
        "Generated by scripts/gen_page_facts.py from the DirectML reference pages (stored copies",
        "of MicrosoftDocs/sdk-api, newer versions read from MicrosoftDocs/sdk-api and",
        "MicrosoftDocs/windows-ai-docs, and tables of the current pages on learn.microsoft.com",
        "where the copies are old). Facts only. Do not edit: change the generator and run it again.",
        "",
        "SUPPORT: operator -> feature level -> tensor member -> (kind, (lowest, highest) dimension",
        "count, data types separated by spaces). The table of the highest level <= the requested",
        "one applies.",
        "SOURCES: operator -> feature level -> where that table was read.",
        "SAME: operator -> ((members...), (attributes...)): the members must have the same",
        "DataType / DimensionCount / Sizes.",
        "UNPARSED: operator -> (page, line) of each constraint sentence not read as a rule.",
        "SUPPORT_BY_FUNCTION: operator -> function -> feature level -> tensor member -> row, for a",
        "page with a table per function (REDUCE); its SUPPORT rows are the union over functions.",
        '"""',
        "",
        "# fmt: off",
        "# ruff: noqa: E501",
        "",
        "from __future__ import annotations",
        "",
        "from ..enums import FeatureLevel as FL",
        "",
        "SUPPORT: dict[str, dict[FL, dict[str, tuple[str, tuple[int, int], str]]]] = {",
    ]
    ordered = [op.name for op in catalogue.OPERATORS if op.name in facts]
    for name in ordered:
        page = facts[name]
        if not page.tables:
            continue
        out.append(f"    {name!r}: {{")
        for table in sorted(page.tables, key=lambda t: _level_key(t.level), reverse=True):
            out.append(f"        FL.V{table.level}: {{")
            for member, (kind, dims, types) in table.rows.items():
                out.append(f"            {member!r}: ({kind!r}, {dims!r}, {' '.join(types)!r}),")
            out.append("        },")
        out.append("    },")
    out.append("}")
    out.append("")
    out.append("SOURCES: dict[str, dict[FL, str]] = {")
    for name in ordered:
        page = facts[name]
        if not page.tables:
            continue
        out.append(f"    {name!r}: {{")
        for table in sorted(page.tables, key=lambda t: _level_key(t.level), reverse=True):
            out.append(f"        FL.V{table.level}: {table.source!r},")
        out.append("    },")
    out.append("}")
    out.append("")
    out.append("SAME: dict[str, tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]] = {")
    for name in ordered:
        if facts[name].same:
            rules = ", ".join(f"({names!r}, {attrs!r})" for names, attrs in facts[name].same)
            out.append(f"    {name!r}: ({rules},),")
    out.append("}")
    out.append("")
    out.append("SUPPORT_BY_FUNCTION: dict[str, dict[str, dict[FL, dict[str, tuple[str, tuple[int, int], str]]]]] = {")
    for name in ordered:
        by_function = facts[name].by_function
        if not by_function:
            continue
        out.append(f"    {name!r}: {{")
        for function, tables in by_function.items():
            out.append(f"        {function!r}: {{")
            for table in sorted(tables, key=lambda t: _level_key(t.level), reverse=True):
                rows = ", ".join(f"{m!r}: ({k!r}, {d!r}, {' '.join(t)!r})" for m, (k, d, t) in table.rows.items())
                out.append(f"            FL.V{table.level}: {{{rows}}},")
            out.append("        },")
        out.append("    },")
    out.append("}")
    out.append("")
    out.append("UNPARSED: dict[str, tuple[tuple[str, int], ...]] = {")
    for name in ordered:
        if facts[name].unparsed:
            refs = ", ".join(f"({facts[name].page!r}, {no})" for no, _ in facts[name].unparsed)
            out.append(f"    {name!r}: ({refs},),")
    out.append("}")
    out.append("")
    return "\n".join(out)


def main() -> int:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=DOCS)
    parser.add_argument("--current-pages", type=Path, default=None)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    facts = read_pages(args.docs)
    if args.current_pages is not None:
        facts = merge_pages(facts, read_pages(args.current_pages, "current page"))
    merge_current(facts)
    for finding in check(facts):
        print(finding, file=sys.stderr)
    for page in facts.values():
        for no, text in page.unparsed:
            print(f"unparsed {page.op} {page.page}:{no}: {text}", file=sys.stderr)
    n_tables = sum(1 for p in facts.values() if p.tables)
    n_same = sum(len(p.same) for p in facts.values())
    n_unparsed = sum(len(p.unparsed) for p in facts.values())
    by_source: dict[str, int] = {}
    for p in facts.values():
        for t in p.tables:
            repo = re.search(r"\((MicrosoftDocs/[\w-]+) ", t.source)
            kind = repo.group(1) if repo else " ".join(t.source.split(" ", 2)[:2])
            by_source[kind] = by_source.get(kind, 0) + 1
    print(
        f"{len(facts)} pages, {n_tables} operators with tables, tables by source {by_source}, "
        f"{n_same} constraints parsed, {n_unparsed} unparsed",
        file=sys.stderr,
    )
    text = render(facts)
    if args.write:
        OUT.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
