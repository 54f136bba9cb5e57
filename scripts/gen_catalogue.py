"""Generate dmlops's operator catalogue (src/dmlops/catalogue/_operators.py, _enums.py).

Usage::

    python scripts/gen_catalogue.py --directml-h DirectML.h --schema DirectMLSchema.h \
        [--json-parsers JsonParsersGenerated.cpp] [--docs ../shared/dml-docs] [--write]

Without ``--write`` the two modules are printed to stdout; with it they are written
into the source tree. Cross-check findings (places where the sources disagree) go to
stderr either way.

Where the inputs come from (public repositories; nothing of them is copied into
dmlops, only the facts: names, values, member order and kinds):

- ``DirectML.h``: repository ``microsoft/DirectX-Headers``, ``include/directx/DirectML.h``
  (the header of the Microsoft.AI.DirectML package, DML_TARGET_VERSION 0x6400; the same
  file is ``include/DirectML.h`` in the NuGet package). It is the primary source: every
  DML_OPERATOR_TYPE value and the ``#if DML_TARGET_VERSION >= 0xNNNN`` section that
  introduces it (its feature level), every enumeration's values, and every operator
  struct's members in order with their C types, ``_Maybenull_`` and ``_Field_size_``
  (count member) annotations.
- ``DirectMLSchema.h``: repository ``microsoft/DirectML``,
  ``DxDispatch/src/dxdispatch/DirectMLHelpers/DirectMLSchema.h``. DxDispatch's schema
  tables say which tensor members are inputs and which outputs (DirectML.h cannot:
  ``OutputZeroPointTensor`` is an input of the QUANTIZED_LINEAR operators) and which
  operators may run in place; their member lists are cross-checked against the header.
  The schema stops at DML_FEATURE_LEVEL_6_3: for the operators it lacks, a tensor
  member is an output when its name starts with ``Output``.
- ``JsonParsersGenerated.cpp`` (optional): ``microsoft/DirectML``,
  ``DxDispatch/src/model/JsonParsersGenerated.cpp``, DxDispatch's JSON parser;
  cross-checks enum types, required members and the data-type member of each
  DML_SCALAR_UNION.
- ``--docs`` (optional): a folder of the DirectML reference pages
  (``MicrosoftDocs/sdk-api``, ``sdk-api-src/content/directml``); each operator page's
  members, ``_Maybenull_`` marks, availability and tensor kinds are compared with the
  header, and every difference is reported (errata candidates).

Get the first three with ``git show HEAD:<path> > file`` in clones of the two
repositories.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "src" / "dmlops" / "catalogue"

BASE_LEVEL = 0x1000

FUSABLE_ACTIVATIONS = (
    "ACTIVATION_ELU",
    "ACTIVATION_HARD_SIGMOID",
    "ACTIVATION_IDENTITY",
    "ACTIVATION_LEAKY_RELU",
    "ACTIVATION_LINEAR",
    "ACTIVATION_PARAMETRIC_SOFTPLUS",
    "ACTIVATION_RELU",
    "ACTIVATION_SCALED_ELU",
    "ACTIVATION_SCALED_TANH",
    "ACTIVATION_SIGMOID",
    "ACTIVATION_SOFTPLUS",
    "ACTIVATION_SOFTSIGN",
    "ACTIVATION_TANH",
    "ACTIVATION_THRESHOLDED_RELU",
    "ACTIVATION_SHRINK",
    "ACTIVATION_CELU",
)
"""The page "Using fused operators to improve performance" (dml-fused-activations):
"Activations that are supported for fusion". Not in any header; the real DirectML decides."""

findings: list[str] = []


def note(message: str) -> None:
    """Record a cross-check finding (printed to stderr at the end)."""
    findings.append(message)


# -- DirectML.h ---------------------------------------------------------------------------


def strip_comments(text: str) -> str:
    """C source without its comments."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def level_name(level: int) -> str:
    """0x2100 -> ``2_1``."""
    return f"{level >> 12}_{(level >> 8) & 0xF}"


@dataclass
class Gates:
    """Which ``#if DML_TARGET_VERSION >= X`` section each line of the header is in."""

    levels: list[int]

    @staticmethod
    def of(lines: list[str]) -> Gates:
        """The gate of every line of ``lines``."""
        stack: list[int | None] = []
        levels = []
        for line in lines:
            s = line.strip()
            m = re.match(r"#if\s+DML_TARGET_VERSION\s*>=\s*(0x[0-9A-Fa-f]+)", s)
            if m:
                stack.append(int(m.group(1), 16))
            elif s.startswith("#if"):
                stack.append(None)
            elif s.startswith("#endif"):
                stack.pop()
            gated = [v for v in stack if v is not None]
            levels.append(max(gated) if gated else BASE_LEVEL)
        return Gates(levels)


@dataclass
class CEnum:
    """An enum of DirectML.h: its level (header section) and (name, value, level) values."""

    name: str
    level: int
    values: list[tuple[str, int, int]]  # (full name, value, level)


@dataclass
class CMember:
    """A member of an operator struct: C type, ``_Maybenull_``, ``_Field_size_`` count."""

    name: str
    ctype: str
    maybenull: bool
    size: str | None


@dataclass
class Header:
    """What the generator reads from DirectML.h."""

    enums: dict[str, CEnum]
    structs: dict[str, list[CMember]]
    struct_aliases: dict[str, str]


def parse_header(path: Path) -> Header:
    """Enums, operator structs and struct aliases of DirectML.h."""
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    gates = Gates.of(lines)
    enums: dict[str, CEnum] = {}
    structs: dict[str, list[CMember]] = {}
    i = 0
    while i < len(lines):
        head = lines[i].strip()
        m = re.match(r"(enum|struct|union)\s+(DML_\w+)\s*$", head)
        if not m or i + 1 >= len(lines) or lines[i + 1].strip() != "{":
            i += 1
            continue
        what, name = m.groups()
        body: list[tuple[str, int]] = []
        j = i + 2
        while not lines[j].strip().startswith("}"):
            body.append((lines[j], gates.levels[j]))
            j += 1
        if what == "enum":
            enums[name] = CEnum(name, gates.levels[i], parse_enum_body(body))
        elif what == "struct" and name.endswith("_OPERATOR_DESC"):
            structs[name] = parse_struct_body(name, body)
        i = j + 1
    aliases = dict(re.findall(r"using\s+(DML_\w+_OPERATOR_DESC)\s*=\s*(DML_\w+_OPERATOR_DESC)\s*;", path.read_text()))
    return Header(enums, structs, aliases)


def parse_enum_body(body: list[tuple[str, int]]) -> list[tuple[str, int, int]]:
    """(name, value, level) of every value, implicit values counted as C does."""
    values: list[tuple[str, int, int]] = []
    by_name: dict[str, int] = {}
    nxt = 0
    for raw, level in body:
        line = strip_comments(raw).strip().rstrip(",").strip()
        if not line or line.startswith("#"):
            continue
        if "=" in line:
            name, expr = (s.strip() for s in line.split("=", 1))
            value = by_name[expr] if expr in by_name else int(expr, 0)
        else:
            name, value = line, nxt
        by_name[name] = value
        values.append((name, value, level))
        nxt = value + 1
    return values


def parse_struct_body(struct: str, body: list[tuple[str, int]]) -> list[CMember]:
    """The members of one operator struct, in order."""
    members = []
    for raw, _ in body:
        line = strip_comments(raw).strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(
            r"(?P<ann>(?:_Maybenull_\s+|_Field_size_\((?P<size>\w+)\)\s+)*)(?P<type>.+?)\s+(?P<name>\w+)\s*;",
            line,
        )
        if m is None:
            raise SystemExit(f"{struct}: cannot read the member line {raw!r}")
        ctype = re.sub(r"\s+\*", "*", m.group("type").strip())
        members.append(CMember(m.group("name"), ctype, "_Maybenull_" in m.group("ann"), m.group("size")))
    return members


# -- DirectMLSchema.h ---------------------------------------------------------------------


@dataclass
class SchemaField:
    """One DML_SCHEMA_FIELD of DxDispatch's schema."""

    kind: str  # INPUT_TENSOR, OUTPUT_TENSOR, ATTRIBUTE
    type: str  # TENSOR_DESC, UINT, ...
    name: str
    optional: bool


@dataclass
class Schema:
    """DxDispatch's schema: fields and in-place flag per DML_OPERATOR_X."""

    fields: dict[str, list[SchemaField]] = field(default_factory=dict)  # by DML_OPERATOR_X
    in_place: dict[str, bool] = field(default_factory=dict)


def parse_schema(path: Path) -> Schema:
    """Read DirectMLSchema.h."""
    text = path.read_text(encoding="utf-8-sig")
    schema = Schema()
    tables: dict[str, list[SchemaField]] = {}
    for m in re.finditer(r"constexpr DML_SCHEMA_FIELD (\w+)_SCHEMA_FIELDS\[\d+\]\s*\{(.*?)\};", text, re.S):
        tables[m.group(1)] = [
            SchemaField(k, t, n, o == "true")
            for k, t, n, o in re.findall(
                r"DML_SCHEMA_FIELD_KIND_(\w+), DML_SCHEMA_FIELD_TYPE_(\w+), \"(\w+)\", (true|false)", m.group(2)
            )
        ]
    for m in re.finditer(
        r"constexpr DML_OPERATOR_SCHEMA (\w+)_SCHEMA\s*\{\s*\"(DML_OPERATOR_\w+)\","
        r"\s*\w+,\s*([\w|\s]+),\s*\d+,\s*(\w+)",
        text,
    ):
        op = m.group(2)
        table = m.group(4).removesuffix("_SCHEMA_FIELDS")
        schema.fields[op] = tables.get(table, [])
        schema.in_place[op] = "IN_PLACE_EXECUTION" in m.group(3)
    return schema


# -- JsonParsersGenerated.cpp -------------------------------------------------------------


@dataclass
class ParsedField:
    """One member read by DxDispatch's generated JSON parser."""

    name: str
    parser: str
    required: bool | None
    data_type: str | None = None


def parse_json_parsers(path: Path) -> dict[str, list[ParsedField]]:
    """Struct name -> the members DxDispatch's generated parser reads, in order."""
    text = path.read_text(encoding="utf-8-sig")
    out: dict[str, list[ParsedField]] = {}
    for m in re.finditer(r"auto desc = allocator\.Allocate<(DML_\w+_OPERATOR_DESC)>\(\);(.*?)auto opDesc", text, re.S):
        fields = []
        for line in m.group(2).splitlines():
            call = re.search(r"desc->(\w+) = .*?(Parse\w+)\(value, \"(\w+)\"(?:, \"(\w+)\")?(.*)$", line)
            if call is None:
                continue
            args = call.group(5)
            flags = re.findall(r"\b(true|false)\b", args)
            required = None if not flags else flags[-1] == "true"
            if call.group(2) == "ParseDmlOperatorDescField" and len(flags) >= 2:
                required = flags[1] == "true"
            fields.append(ParsedField(call.group(3), call.group(2), required, call.group(4)))
        out[m.group(1)] = fields
    return out


# -- building the catalogue ---------------------------------------------------------------


@dataclass
class Member:
    """A catalogue member being built."""

    name: str
    kind: str
    optional: bool = False
    enum: str | None = None
    count: str | None = None
    data_type: str | None = None


@dataclass
class Operator:
    """A catalogue operator being built."""

    name: str
    value: int
    level: int
    struct: str
    members: list[Member]
    aliases: list[str]
    in_place: bool
    in_dxdispatch: bool


SCALAR_KINDS = {"UINT": "uint", "INT": "int", "FLOAT": "float", "float": "float", "BOOL": "bool"}
ARRAY_KINDS = {"const UINT*": "uint_array", "const INT*": "int_array", "const FLOAT*": "float_array"}


def struct_of(op_name: str, header: Header) -> str:
    """The struct of an operator (through DirectML.h's ``using`` aliases)."""
    struct = f"DML_{op_name}_OPERATOR_DESC"
    return header.struct_aliases.get(struct, struct)


def tensor_direction(op: str, member: str, schema: Schema) -> str:
    """``input`` or ``output``: the schema's word, else the member's name."""
    fields = {f.name: f for f in schema.fields.get(f"DML_OPERATOR_{op}", [])}
    f = fields.get(member)
    if f is not None:
        return "output" if f.kind == "OUTPUT_TENSOR" else "input"
    return "output" if member.startswith("Output") else "input"


def build_members(op: str, cmembers: list[CMember], header: Header, schema: Schema) -> list[Member]:
    """The catalogue members of one struct."""
    counted = {c.size for c in cmembers if c.size}
    members: list[Member] = []
    last_data_type: str | None = None
    for c in cmembers:
        t = c.ctype
        if t == "const DML_TENSOR_DESC*":
            direction = tensor_direction(op, c.name, schema)
            kind = f"{direction}_array" if c.size else direction
            members.append(Member(c.name, kind, optional=c.maybenull, count=c.size))
        elif t == "const DML_OPERATOR_DESC*":
            kind = "operator_desc_array" if c.size else "operator_desc"
            members.append(Member(c.name, kind, optional=c.maybenull, count=c.size))
        elif t in ARRAY_KINDS:
            members.append(Member(c.name, ARRAY_KINDS[t], optional=c.maybenull, count=c.size))
        elif t == "const DML_SCALE_BIAS*":
            members.append(Member(c.name, "scale_bias", optional=c.maybenull))
        elif t == "DML_SIZE_2D":
            members.append(Member(c.name, "size_2d"))
        elif t == "DML_SCALAR_UNION":
            if last_data_type is None:
                raise SystemExit(f"{op}.{c.name}: DML_SCALAR_UNION without a DML_TENSOR_DATA_TYPE member before it")
            members.append(Member(c.name, "scalar_union", data_type=last_data_type))
        elif t == "UINT" and c.name in counted:
            members.append(Member(c.name, "count"))
        elif t in SCALAR_KINDS:
            members.append(Member(c.name, SCALAR_KINDS[t]))
        elif t in header.enums:
            members.append(Member(c.name, "enum", enum=t))
            if t == "DML_TENSOR_DATA_TYPE":
                last_data_type = c.name
        else:
            raise SystemExit(f"{op}.{c.name}: unknown member type {t!r}")
        if c.maybenull and members[-1].kind not in ("input", "output", "scale_bias", "operator_desc"):
            raise SystemExit(f"{op}.{c.name}: _Maybenull_ on a {members[-1].kind} member")
    return members


def build(header: Header, schema: Schema) -> list[Operator]:
    """Every operator of DML_OPERATOR_TYPE, in value order."""
    ops_enum = header.enums["DML_OPERATOR_TYPE"]
    by_value: dict[int, Operator] = {}
    for full, value, level in ops_enum.values:
        name = full.removeprefix("DML_OPERATOR_")
        if name == "INVALID":
            continue
        if value in by_value:  # an alias (DML_OPERATOR_SCATTER = DML_OPERATOR_SCATTER_ELEMENTS)
            by_value[value].aliases.append(name)
            continue
        struct = struct_of(name, header)
        if struct not in header.structs:
            raise SystemExit(f"DML_OPERATOR_{name}: no struct {struct} in the header")
        members = build_members(name, header.structs[struct], header, schema)
        by_value[value] = Operator(name, value, level, struct, members, [], False, False)
    for op in by_value.values():
        for dml_name in [op.name, *op.aliases]:
            key = f"DML_OPERATOR_{dml_name}"
            if key in schema.fields:
                op.in_dxdispatch = True
                op.in_place = schema.in_place[key]
    return [by_value[v] for v in sorted(by_value)]


# -- cross-checks -------------------------------------------------------------------------

SCHEMA_TYPES = {
    "input": {"TENSOR_DESC"},
    "output": {"TENSOR_DESC"},
    "input_array": {"TENSOR_DESC_ARRAY"},
    "output_array": {"TENSOR_DESC_ARRAY"},
    "uint": {"UINT"},
    "count": {"UINT"},
    "int": {"INT"},
    "float": {"FLOAT"},
    "bool": {"BOOL", "UINT"},
    "enum": {"UINT"},
    "uint_array": {"UINT_ARRAY"},
    "int_array": {"INT_ARRAY"},
    "float_array": {"FLOAT_ARRAY"},
    "scale_bias": {"SCALE_BIAS"},
    "size_2d": {"SIZE_2D"},
    "scalar_union": {"SCALAR_UNION"},
    "operator_desc": {"OPERATOR_DESC"},
    "operator_desc_array": {"OPERATOR_DESC_ARRAY"},
}


def check_schema(ops: list[Operator], schema: Schema) -> None:
    """Compare the header's member lists with DxDispatch's schema."""
    known = {n for op in ops for n in [op.name, *op.aliases]}
    for key in schema.fields:
        if key.removeprefix("DML_OPERATOR_") not in known:
            note(f"schema: {key} is not a DML_OPERATOR_TYPE of DirectML.h")
    bool_as_uint = []
    for op in ops:
        key = next((f"DML_OPERATOR_{n}" for n in [op.name, *op.aliases] if f"DML_OPERATOR_{n}" in schema.fields), None)
        if key is None:
            level = level_name(op.level)
            note(f"schema: DML_OPERATOR_{op.name} (DML_FEATURE_LEVEL_{level}) is not in DxDispatch's schema")
            continue
        fields = schema.fields[key]
        names = [m.name for m in op.members]
        if [f.name for f in fields] != names:
            note(f"schema: {op.struct} members differ: schema {[f.name for f in fields]}, header {names}")
            continue
        for f, m in zip(fields, op.members):
            if f.type not in SCHEMA_TYPES[m.kind]:
                note(f"schema: {op.struct}.{m.name}: schema type {f.type}, header kind {m.kind}")
            if m.kind == "bool" and f.type == "UINT":
                bool_as_uint.append(f"{op.name}.{m.name}")
            tensor = m.kind in ("input", "output", "scale_bias", "operator_desc")
            if tensor and f.optional != m.optional:
                note(f"schema: {op.struct}.{m.name}: schema optional={f.optional}, header _Maybenull_={m.optional}")
            if m.kind in ("input", "output") and not m.name.startswith("Output") and m.kind == "output":
                note(f"schema: {op.struct}.{m.name} is an output tensor whose name does not start with 'Output'")
            if m.kind == "input" and m.name.startswith("Output"):
                note(f"schema: {op.struct}.{m.name} is an input tensor although its name starts with 'Output'")
    if bool_as_uint:
        note(f"schema: {len(bool_as_uint)} BOOL members are typed UINT in the schema: {', '.join(bool_as_uint)}")


ENUM_PARSERS = {"ParseDmlTensorDataTypeField": "DML_TENSOR_DATA_TYPE"}


def enum_of_parser(parser: str) -> str | None:
    """``ParseDmlPaddingModeField`` -> ``DML_PADDING_MODE``."""
    m = re.fullmatch(r"ParseDml(\w+)Field", parser)
    if m is None:
        return None
    return "DML_" + re.sub(r"(?<!^)(?=[A-Z])", "_", m.group(1)).upper()


def check_json_parsers(ops: list[Operator], parsed: dict[str, list[ParsedField]]) -> None:
    """Compare the header's members with what DxDispatch's JSON parser reads."""
    scalar_parsers = {
        "uint": "ParseUInt32Field",
        "count": "ParseUInt32Field",
        "int": "ParseInt32Field",
        "float": "ParseFloat32Field",
        "bool": "ParseBoolField",
        "uint_array": "ParseUInt32ArrayField",
        "int_array": "ParseInt32ArrayField",
        "float_array": "ParseFloat32ArrayField",
        "input": "ParseDmlTensorDescField",
        "output": "ParseDmlTensorDescField",
        "input_array": "ParseDmlTensorDescArrayField",
        "output_array": "ParseDmlTensorDescArrayField",
        "scale_bias": "ParseDmlScaleBiasField",
        "size_2d": "ParseDmlSize2dField",
        "scalar_union": "ParseDmlScalarUnionField",
        "operator_desc": "ParseDmlOperatorDescField",
        "operator_desc_array": "ParseDmlOperatorDescArrayField",
    }
    for op in ops:
        fields = parsed.get(op.struct)
        if fields is None:
            if op.in_dxdispatch:
                note(f"json: no parser for {op.struct}")
            continue
        names = [m.name for m in op.members]
        if [f.name for f in fields] != names:
            note(f"json: {op.struct} parser reads {[f.name for f in fields]}, header has {names}")
            continue
        for f, m in zip(fields, op.members):
            where = f"json: {op.struct}.{m.name}"
            if m.kind == "enum":
                if enum_of_parser(f.parser) != m.enum:
                    note(f"{where}: parsed with {f.parser}, header type {m.enum}")
            elif f.parser != scalar_parsers[m.kind]:
                note(f"{where}: parsed with {f.parser}, header kind {m.kind}")
            if m.kind == "scalar_union" and f.data_type != m.data_type:
                note(f"{where}: data type member {f.data_type} in DxDispatch, {m.data_type} by position")
            if f.required is not None and m.optional == f.required:
                note(f"{where}: DxDispatch required={f.required}, header _Maybenull_={m.optional}")


def page_type(type_line: str) -> str:
    r"""``Type: \\_Maybenull\\_ **const [DML_X](...)\\***`` -> ``_Maybenull_ const DML_X*``."""
    t = re.sub(r"<[^>]+>|\]\([^)]*\)|[\\\[\]`]", "", type_line).removeprefix("Type:")
    t = t.replace("**", "").replace("*", "*").strip()
    return re.sub(r"\s+", " ", t)


DOC_TYPES = {
    "uint": "UINT", "count": "UINT", "int": "INT", "float": "FLOAT", "bool": "BOOL",
    "uint_array": "const UINT", "int_array": "const INT", "float_array": "const FLOAT",
}  # fmt: skip


def check_docs(ops: list[Operator], docs: Path) -> None:
    """Compare each operator page with the header; report every difference."""
    missing = []
    unmarked: list[str] = []
    no_availability: list[str] = []
    for op in ops:
        page = docs / f"ns-directml-{op.struct.lower()}.md"
        if not page.exists():
            missing.append(op.name)
            continue
        text = page.read_text(encoding="utf-8")
        where = f"docs: {page.name}"
        names = re.findall(r"^### -field (\w+)", text, re.M)
        if names != [m.name for m in op.members]:
            note(f"{where}: members {names}; header {[m.name for m in op.members]}")
        for m in op.members:
            block = re.search(rf"^### -field {m.name}\s*\n(.*?)(?=^### |^## |\Z)", text, re.M | re.S)
            if block is None:
                continue
            type_line = next((ln for ln in block.group(1).splitlines() if ln.startswith("Type:")), "")
            t = page_type(type_line)
            maybenull = "Maybenull" in t
            if m.kind in ("input", "output", "scale_bias", "operator_desc") and maybenull != m.optional:
                if m.optional:
                    unmarked.append(f"{op.name}.{m.name}")
                else:
                    note(f"{where}: {m.name} is _Maybenull_ on the page, not in the header")
            bare = re.sub(r"_Maybenull_|_Field_size_(?:opt_)?\([^)]*\)|^\([^)]*\)", "", t).strip()
            expected = DOC_TYPES.get(m.kind)
            if expected is not None and not re.match(rf"{expected}\b", bare, re.I):
                note(f"{where}: {m.name} page type {bare!r}; header kind {m.kind}")
            if m.kind == "enum" and m.enum not in bare:
                note(f"{where}: {m.name} page type {bare!r}; header type {m.enum}")
        stated = re.findall(r"This operator was introduced in [`*]*DML_FEATURE_LEVEL_(\d_\d)", text)
        if not stated:
            no_availability.append(op.name)
        elif stated != [level_name(op.level)]:
            note(f"{where}: page says introduced in {' and '.join(stated)}, header section {level_name(op.level)}")
        for tensor, kind in re.findall(r"^\|\s*(\w+)\s*\|\s*(Input|Output)\s*\|", text, re.M):
            m = next((x for x in op.members if x.name == tensor), None)
            if m is None:
                note(f"{where}: tensor-support table names {tensor}, not a member")
            elif kind.lower() not in m.kind:
                note(f"{where}: tensor-support table says {tensor} is {kind}; schema kind {m.kind}")
    if unmarked:
        listed = ", ".join(unmarked)
        note(f"docs: {len(unmarked)} optional members lack _Maybenull_ in their page's Type line: {listed}")
    if no_availability:
        note(f"docs: {len(no_availability)} pages state no availability: {', '.join(no_availability)}")
    if missing:
        note(f"docs: no page in {docs} for {len(missing)} operators: {', '.join(missing)}")


# -- writing ------------------------------------------------------------------------------

HEADER_NOTE = '''"""{what}

Generated by scripts/gen_catalogue.py from DirectML.h (microsoft/DirectX-Headers,
DML_TARGET_VERSION 0x6400) and DxDispatch's DirectMLSchema.h (microsoft/DirectML).
Do not edit: change the generator and run it again.
"""

# fmt: off
'''


def fl(level: int) -> str:
    """0x2100 -> ``FL.V2_1``."""
    return f"FL.V{level_name(level)}"


def render_member(m: Member) -> str:
    """One ``M(...)`` row."""
    args = [repr(m.name), repr(m.kind)]
    if m.optional:
        args.append("optional=True")
    if m.enum:
        args.append(f"enum={m.enum!r}")
    if m.count:
        args.append(f"count={m.count!r}")
    if m.data_type:
        args.append(f"data_type={m.data_type!r}")
    return f"M({', '.join(args)})"


def render_operators(ops: list[Operator]) -> str:
    """The text of ``_operators.py``."""
    out = [HEADER_NOTE.format(what="Every DML_OPERATOR_TYPE of DirectML.h: value, feature level, struct, members.")]
    out.append("from __future__ import annotations\n")
    out.append("from ..enums import FeatureLevel as FL")
    out.append("from ._spec import MemberSpec as M")
    out.append("from ._spec import OperatorSpec as Op\n")
    out.append("OPERATORS: tuple[Op, ...] = (")
    for op in ops:
        extra = []
        if op.aliases:
            extra.append(f"aliases={tuple(op.aliases)!r}")
        if op.in_place:
            extra.append("in_place=True")
        if not op.in_dxdispatch:
            extra.append("in_dxdispatch=False")
        tail = "".join(f", {e}" for e in extra)
        head = f"    Op({op.name!r}, {op.value}, {fl(op.level)}, {op.struct!r}, ("
        if len(head) > 120:
            head = f"    Op({op.name!r}, {op.value}, {fl(op.level)},\n       {op.struct!r}, ("
        out.append(head)
        for m in op.members:
            out.append(f"        {render_member(m)},")
        out.append(f"    ){tail}),")
    out.append(")\n")
    out.append("FUSABLE_ACTIVATIONS: tuple[str, ...] = (")
    for a in FUSABLE_ACTIVATIONS:
        out.append(f"    {a!r},")
    out.append(")")
    out.append('"""Operators a FusedActivation may name (the fused-activations page; the real DirectML decides)."""')
    return "\n".join(out) + "\n"


def enum_prefix(e: CEnum) -> str:
    """The prefix every value of an enum shares (``DML_TENSOR_FLAG_``)."""
    names = [n for n, _, _ in e.values]
    for prefix in (e.name + "_", e.name.removesuffix("S") + "_"):
        if all(n.startswith(prefix) for n in names):
            return prefix
    raise SystemExit(f"{e.name}: no common value prefix")


def render_enums(header: Header) -> str:
    """The text of ``_enums.py``."""
    out = [HEADER_NOTE.format(what="Every enumeration of DirectML.h but DML_OPERATOR_TYPE, with its values.")]
    out.append("from __future__ import annotations\n")
    out.append("from ..enums import FeatureLevel as FL")
    out.append("from ._spec import EnumSpec as E")
    out.append("from ._spec import EnumValue as V\n")
    out.append("ENUMS: tuple[E, ...] = (")
    for e in sorted(header.enums.values(), key=lambda e: e.name):
        if e.name == "DML_OPERATOR_TYPE":
            continue
        prefix = enum_prefix(e)
        out.append(f"    E({e.name!r}, {prefix!r}, {fl(e.level)}, (")
        for full, value, level in e.values:
            later = f", {fl(level)}" if level != e.level else ""
            shown = f"{value:#x}" if value >= 0x100 else str(value)
            out.append(f"        V({full.removeprefix(prefix)!r}, {shown}{later}),")
        out.append("    )),")
    out.append(")")
    return "\n".join(out) + "\n"


def summary(ops: list[Operator]) -> str:
    """Counts per feature level and member kind."""
    levels = Counter(level_name(op.level) for op in ops)
    kinds = Counter(m.kind for op in ops for m in op.members)
    lines = [f"{len(ops)} operators"]
    lines.append("per feature level: " + ", ".join(f"{k}: {levels[k]}" for k in sorted(levels)))
    lines.append("member kinds: " + ", ".join(f"{k}: {n}" for k, n in kinds.most_common()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Read the headers, cross-check, write or print the modules."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--directml-h", type=Path, required=True, help="DirectML.h (DML_TARGET_VERSION 0x6400)")
    parser.add_argument("--schema", type=Path, required=True, help="DxDispatch's DirectMLSchema.h")
    parser.add_argument("--json-parsers", type=Path, help="DxDispatch's JsonParsersGenerated.cpp (cross-check)")
    parser.add_argument("--docs", type=Path, help="folder of ns-directml-*.md pages (cross-check)")
    parser.add_argument("--write", action="store_true", help=f"write the modules into {OUT_DIR.relative_to(ROOT)}")
    args = parser.parse_args(argv)

    header = parse_header(args.directml_h)
    schema = parse_schema(args.schema)
    ops = build(header, schema)
    check_schema(ops, schema)
    if args.json_parsers:
        check_json_parsers(ops, parse_json_parsers(args.json_parsers))
    if args.docs:
        check_docs(ops, args.docs)

    operators, enums = render_operators(ops), render_enums(header)
    if args.write:
        (OUT_DIR / "_operators.py").write_text(operators, encoding="utf-8")
        (OUT_DIR / "_enums.py").write_text(enums, encoding="utf-8")
    else:
        sys.stdout.write(operators + "\n" + enums)
    for f in findings:
        print(f, file=sys.stderr)
    print(summary(ops), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
