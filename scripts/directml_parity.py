"""Run the differential and validation-parity campaign against the real DirectML; write docs/directml-parity.md.

Usage (the directml backend must be set up: ``dmlops directml setup``)::

    python scripts/directml_parity.py --cases 2000 --seed 0
    python scripts/directml_parity.py --family elementwise --cases 500 --seed 0
    python scripts/directml_parity.py --family reduction --cases 1000  # data_movement, pooling_resampling

For each of the seven operators it draws ``--cases`` hypothesis cases
(``tests/directml/_differential.py``), runs each on ``numpy`` and ``directml``,
compares and classifies the differences, then draws ``--validation-cases`` descs
(``tests/directml/_validation_parity.py``) and compares dmlops's validation with
DirectML's CreateOperator at 6_4. The page records the stack's versions, the date and
the commit. One process, one host: keep it to one run at a time on a small machine.

``--family elementwise`` runs the element-wise family's campaign instead
(``tests/directml/_elementwise_campaign.py``: ``--cases`` run cases for each of the 92
operators) and rewrites only the page's element-wise section, keeping the seven seed
operators' text as it is; ``--family seed`` (the default) rewrites the seed sections and
keeps an element-wise section already there; ``--family all`` runs both.

``--family data_movement``, ``reduction`` or ``pooling_resampling`` runs that family's
pytest campaign (``tests/directml/test_directml_<family>.py``) with its case-count
variable (``DMLOPS_<FAMILY>_CASES``) set so that every operator row gets ``--cases``
seeded cases (REDUCE: ``--cases`` per DML_REDUCE_FUNCTION), in a pytest subprocess that
loads this file as a plugin (``DMLOPS_PARITY_RECORDS`` names its JSON-lines output). The
plugin keeps only the seeds each row needs, wraps a few of the test module's helpers to
learn how each case was decided (an invalid desc checked for rejection, lavapipe artefacts
left out, a comparison within tolerance rather than bit for bit, the data types drawn)
and writes one record per test; the script tallies them per operator and rewrites only
that family's section. ``--records PATH`` keeps the records; ``--from-records PATH``
renders them again without running anything. Every other section's text is kept.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for sub in ("tests", "tests/directml", "tests/fuzz"):
    sys.path.insert(0, str(ROOT / sub))

import _differential as diff  # noqa: E402
import _elementwise_campaign as elementwise  # noqa: E402
import _validation_parity as parity  # noqa: E402
import numpy as np  # noqa: E402

import dmlops  # noqa: E402
from dmlops.directml import info, stack  # noqa: E402


def _run(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def _utf16_value(data: bytes, key: str) -> str:
    """A VS_VERSIONINFO string value (UTF-16) following ``key`` in a PE file."""
    at = data.find(key.encode("utf-16-le"))
    if at < 0:
        return "unknown"
    text = data[at : at + 200].decode("utf-16-le", "replace")
    parts = [p for p in text.split("\x00") if p]
    return parts[1] if len(parts) > 1 else "unknown"


def versions() -> dict[str, str]:
    """DirectML, Wine, vkd3d, Mesa (asked of the files and the system), dmlops's side."""
    p = stack.paths()
    out: dict[str, str] = {}
    try:
        dll = p.dll.read_bytes()
        out["DirectML.dll"] = f"{_utf16_value(dll, 'FileVersion')} (sha256 {hashlib.sha256(dll).hexdigest()[:16]}…)"
    except OSError:
        out["DirectML.dll"] = "unknown"
    state = stack.read_state() or {}
    out["DirectML source"] = str(state.get("directml_wheel", "unknown")) + " (PyPI, Windows wheel)"
    wine = stack.wine_binary()
    out["Wine"] = stack.wine_version(wine) if wine else "unknown"
    vkd3d = "unknown"
    candidates = [p.wined3d]
    if wine:
        # Debian's builtin wined3d.dll, next to the loader's library folder.
        candidates += sorted(Path(wine).resolve().parent.parent.glob("**/x86_64-windows/wined3d.dll"))
        candidates += sorted(Path("/usr/lib/x86_64-linux-gnu/wine").glob("x86_64-windows/wined3d.dll"))
    for candidate in candidates:
        try:
            m = re.search(rb"vkd3d-shader (\d+\.\d+[^\x00]{0,40})", candidate.read_bytes())
        except OSError:
            continue
        if m:
            vkd3d = f"{m.group(1).decode('ascii', 'replace')}, bundled in Wine's wined3d.dll"
            break
    out["vkd3d"] = vkd3d
    out["Mesa (lavapipe)"] = _run(["dpkg-query", "-W", "-f", "${Version}", "mesa-vulkan-drivers"])
    out["workaround"] = str(state.get("workaround", "unknown"))
    level = info().max_feature_level
    out["max feature level"] = f"0x{level:04X}"
    out["OS"] = _run(["cat", "/etc/debian_version"])
    out["dmlops / NumPy / hypothesis"] = f"{dmlops.__version__} / {np.__version__} / {_hypothesis_version()}"
    return out


def _hypothesis_version() -> str:
    import hypothesis

    return str(hypothesis.__version__)


def _commit() -> str:
    sha = _run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"])
    dirty = _run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "src"])
    return sha + (" (with uncommitted changes under src/)" if dirty not in ("", "unknown") else "")


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(", ", ": "), default=str)


PREDICATE_ONLY = " [predicate only: its model misses]"


def _whose(kind: str) -> str:
    for cause in diff.DIFFERENCE_CAUSES:
        if cause.label == kind.removesuffix(PREDICATE_ONLY):
            return cause.whose
    if kind.startswith("several causes"):
        return "see each"
    return "-" if kind.startswith("directml rejects") else "?"


def _note(kind: str) -> str:
    for cause in diff.DIFFERENCE_CAUSES:
        if cause.label == kind:
            return cause.note
        if cause.label + PREDICATE_ONLY == kind:
            return "the predicate covers every differing element; the model does not reproduce DirectML's values"
    if kind.startswith("several causes"):
        return "every differing element lies where one of these causes applies"
    return ""


PROBE_NOTES = """\
## What the earlier unexplained cases were (targeted probes)

docs/directml.md listed three groups of differences it could not explain. Targeted probes (one
operator, one element, values chosen so that each candidate rule gives a different answer) say:

- **Scales = FLT_MAX (RESAMPLE2, RESAMPLE_GRAD1)** is not a phenomenon of its own. With such a scale
  the quotient `q = (o - OutputPixelOffset) / Scale` is 0 or a tiny number of either sign, so every
  coordinate is about `-InputPixelOffset`, and three known rules take over: a NEAREST coordinate that
  rounds below 0 reads the last element (the stack's `ftou`); LINEAR takes its first tap from `q`
  (next item), so a tiny negative `q` turns into tap -1 and an extrapolation from the edge (1-D INT8
  `[2, 126, -2]`, Scales 1e30, InputPixelOffsets -0.5, OutputPixelOffsets 2: DirectML `[2, 2, 64]`, the
  reference `[64, 64, 64]`; the same with Scales 1e6, so FLT_MAX is not special); and RESAMPLE_GRAD1
  NEAREST differs only where coordinates are clamped at an edge (a suspected stack artefact: DirectML
  maps each edge element back to a range of forward outputs whose float bounds leave the integer range).
- **LINEAR with large pixel offsets** is DirectML's own tap rule: it splits `q` into `floor(q)` and
  `frac(q)` and corrects the first tap by at most one step, `i0 = floor(q) - (frac(q) < InputPixelOffset)`,
  with weight `t = x - i0`, then `a + (b - a) t` between the clamped taps. That is the page's
  interpolation while InputPixelOffsets lie in [0, 1) (every seed vector) and an extrapolation
  otherwise: `[2, 126, -2, 50, 7]`, Scales 1, InputPixelOffsets -1.5, OutputPixelOffsets 0 gives
  `[188, -66, 76, -14.5, 7]` where the reference gives `[62, 24, 28.5, 7, 7]`. All coordinates there
  are positive, so no float-to-integer conversion of a negative value is involved: DirectML, not the
  stack. The model reproduces most such cases; the rest ("predicate only") involve a quotient that is
  exactly 0 or subnormal (huge Scales), where the device's result departs from the model again.
- **ROI boxes partly or wholly outside the image** are three things: DirectML's in-bounds test is
  open, `-1 < x < W` and `-1 < y < H`, so a sample exactly at -1 or at W/H reads OutOfBoundsInputValue
  (one NEAREST sample at x = -1: DirectML 100 = OutOfBoundsInputValue, the reference the pixel; at x =
  -0.999 both read the pixel); MAX over samples ignores NaN and starts from -FLT_MAX (as MAX_POOLING2);
  LINEAR samples whose taps hold an infinity give NaN (as RESAMPLE2). Inverted boxes behave like the
  reference (probed with 2x2 outputs on a 4x5 ramp, all four orientations).
"""


def render(
    tallies: list[diff.OpTally],
    ptallies: list[parity.ParityTally],
    args: argparse.Namespace,
    seconds: float,
) -> str:
    """The Markdown page."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# dmlops vs the real DirectML: differential and validation parity",
        "",
        f"Generated by `python scripts/directml_parity.py --cases {args.cases} "
        f"--validation-cases {args.validation_cases} --seed {args.seed}` on {now}, at commit {_commit()}, "
        f"in {seconds / 60:.1f} minutes on a 2-core machine. Do not edit by hand: run the script again.",
        "",
        "Each case is a hypothesis draw (`tests/directml/_differential.py`): a valid desc from the fuzz "
        "builders, re-typed to the data types this stack runs, at a drawn feature level, with every tensor "
        "in a drawn layout (packed, padded, permuted, broadcast and overlapping inputs, strided outputs), "
        "parameters at their edges and adversarial data (NaN, ±inf, signed zeros, ties, type extremes, "
        "out-of-range and negative indices, ROI boxes partly or wholly outside the image, windows mostly in "
        "padding). It runs on `numpy` and on `directml`; data movement is compared bit for bit, arithmetic "
        "within float32 rounding (see `tolerance` there). A difference is put down to a known cause only "
        "where the cause's predicate holds for the desc and data and, where the cause has a model, the model "
        "reproduces DirectML's output.",
        "",
        "## Stack",
        "",
        "| component | version |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v} |" for k, v in versions().items()]
    lines += [
        "",
        "## Differential campaign",
        "",
        "| operator | drawn | run | agreed | differed | stack limit | not run: dmlops rejects | "
        "DirectML rejects a validated desc | unexplained |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for t in tallies:
        not_run = t.dmlops_rejects + sum(n for k, n in t.not_run.items() if k.startswith("dmlops rejects"))
        lines.append(
            f"| {t.op} | {t.drawn} | {t.run} | {t.agreed} | {t.differed} | {t.stack_limit} | {not_run} | "
            f"{t.directml_rejects} | {t.kinds.get('unexplained', 0)} |"
        )
    total_run = sum(t.run for t in tallies)
    lines += [
        "",
        f"{total_run} cases ran on both backends. *Stack limit*: CompileOperator failed after CreateOperator "
        "accepted (DirectML chose a DXIL shader), counted apart, not as a difference. *Not run*: the drawn "
        "desc is one dmlops rejects (its validation verdict is compared in the next section).",
        "",
        "### Differences by kind",
        "",
        "*known*: a cause dmlops has ruled on (its ruling kept, or being changed to DirectML's); *new*: found by "
        "this campaign, reported, not yet ruled on; *stack* / *suspect stack*: an artefact of Wine's vkd3d on "
        "lavapipe, not DirectML. *[predicate only]*: the cause's predicate covers every differing element but "
        "its model of DirectML's values does not reproduce them (characterised, not fully explained).",
        "",
        "| operator | kind | cases | whose | evidence |",
        "|---|---|---|---|---|",
    ]
    for t in tallies:
        for kind, n in sorted(t.kinds.items(), key=lambda kv: -kv[1]):
            evidence = _note(kind) or t.evidence.get(kind, "")
            lines.append(f"| {t.op} | {kind} | {n} | {_whose(kind)} | {evidence} |")
    lines += [
        "",
        "### Evidence: where each known cause applies",
        "",
        "Within each cause's scope (e.g. NEAREST cases for the nearest-index artefact), the cases run where its "
        "predicate holds and where it does not, and how many of each differed. A cause is the explanation when "
        "the differences vanish where it does not apply (the few left there belong to another cause that "
        "applies to them, as the table above shows: no difference is unexplained).",
        "",
        "| operator | cause | in scope, applies: run | differed | in scope, does not apply: run | differed |",
        "|---|---|---|---|---|---|",
    ]
    for t in tallies:
        for key, (a, ad, n, nd) in t.cause_split.items():
            lines.append(f"| {t.op} | {key} | {a} | {ad} | {n} | {nd} |")
    lines += ["", "### Smallest example of each kind", ""]
    for t in tallies:
        for kind, case in t.examples.items():
            lines.append(f"- {t.op}, {kind}: `{_compact(case.describe())}`")
    lines += ["", PROBE_NOTES]
    lines += [
        "",
        "## Validation parity (feature level 6_4)",
        "",
        "Descs drawn valid, mutated (`tests/fuzz/_desc_strategies.py` `mutate`) and broken by one targeted "
        "rule each (`tests/directml/_validation_parity.py`), sent to dmlops's validation and to DirectML's "
        "CreateOperator. CreateOperator checks against everything the DLL supports (6_4), so only 6_4 is "
        "compared.",
        "",
        "| operator | drawn | compared | agree-accept | agree-reject | dmlops-only-reject | "
        "directml-only-reject | agreement | unexplained |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in ptallies:
        o = p.outcomes
        compared = sum(o.values())
        agree = o.get("agree-accept", 0) + o.get("agree-reject", 0)
        share = f"{100 * agree / compared:.1f}%" if compared else "-"
        lines.append(
            f"| {p.op} | {p.drawn} | {compared} | {o.get('agree-accept', 0)} | {o.get('agree-reject', 0)} | "
            f"{o.get('dmlops-only-reject', 0)} | {o.get('directml-only-reject', 0)} | {share} | {p.unexplained} |"
        )
    lines += [
        "",
        "### Disagreements by kind",
        "",
        "| operator | outcome | kind | count | reason |",
        "|---|---|---|---|---|",
    ]
    reasons = {k.key: k.reason for k in (*parity.KNOWN_DISAGREEMENTS, *parity.NEW_DISAGREEMENTS)}
    for p in ptallies:
        for (outcome, kind), n in sorted(p.kinds.items()):
            lines.append(f"| {p.op} | {outcome} | {kind} | {n} | {reasons.get(kind, 'not explained yet')} |")
    lines += ["", "### Minimised examples of each disagreement", ""]
    for p in ptallies:
        for (outcome, kind, _member), (d, v) in sorted(p.examples.items()):
            said = f"dmlops: {v.dmlops_message}" if v.dmlops else "dmlops accepts"
            said += "; DirectML " + ("accepts" if v.directml else "rejects (E_INVALIDARG)")
            lines.append(f"- {p.op}, {outcome}, {kind} ({v.source}): `{_compact(d)}`. {said}")
    lines += ["", "### Not compared", "", "| operator | reason | descs |", "|---|---|---|"]
    for p in ptallies:
        for reason, n in sorted(p.not_compared.items()):
            lines.append(f"| {p.op} | {reason} | {n} |")
    failures = [(p.op, k, d) for p in ptallies for k, d in p.failures.items()]
    if failures:
        lines += ["", "DirectML failures other than E_INVALIDARG (smallest desc of each):", ""]
        lines += [f"- {op}, {k}: `{_compact(d)}`" for op, k, d in failures]
        lines += [f"- {op}: {reason}" for op, reason in parity.KNOWN_FAILURES.items()]
    lines.append("")
    return "\n".join(lines)


ELEMENTWISE_HEADING = "## Element-wise and activation operators"


def render_elementwise(tallies: dict[str, Any], args: argparse.Namespace, seconds: float) -> str:
    """The element-wise section: per-operator counts, differences by kind, examples."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = f"python scripts/directml_parity.py --family elementwise --cases {args.cases} --seed {args.seed}"
    run = sum(t.run for t in tallies.values())
    lines = [
        ELEMENTWISE_HEADING,
        "",
        f"Generated by `{command}` on {now}, at commit {_commit()}, in {seconds / 60:.1f} minutes on a 2-core "
        "machine. Do not edit by hand: run the script again.",
        "",
        "Each case is a seeded random draw (`tests/directml/_elementwise_campaign.py`) from one of the "
        "operator's templates in `tests/oracles/elementwise.py`: a data type this stack runs for the operator "
        "(from its page's support table at the drawn feature level), 1 to 6 dimensions, every input packed, "
        "padded, permuted or broadcast through 0-strides, a padded or permuted output, jittered parameters, "
        "ScaleBias and FusedActivation where the struct has them, and adversarial data (NaN, ±inf, signed "
        "zeros, subnormals, integer extremes, shift counts ≥ the bit width, zero divisors and scales, "
        "quantization ties). Exact operators compare bit for bit (NaN equal to NaN); the approximated ones "
        "within `TOLERANCE` there. Drawing stops at the requested run count or 4 × as many draws.",
        "",
        f"{run} cases ran on both backends.",
        "",
        "| operator | data types run | drawn | run | agreed | differed | of which stack only | stack limit "
        "| both reject | dmlops rejects, DirectML accepts | DirectML rejects a validated desc | numpy refuses |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for op, t in tallies.items():
        sk = t.skipped
        lines.append(
            f"| {op} | {' '.join(sorted(t.dtypes))} | {t.drawn} | {t.run} | {t.agreed} | {t.differed} "
            f"| {t.stack_only} | {sk['stack limit (DXIL shader)']} | {sk['both reject']} "
            f"| {sk['dmlops rejects, DirectML accepts']} | {sk['DirectML rejects a validated desc']} "
            f"| {sk['numpy: unsupported data type']} |"
        )
    lines += [
        "",
        "*Stack only*: every differing element is lavapipe's float-to-integer conversion (NaN, negative "
        "values into unsigned types and values ≥ 2^31 into signed ones convert to all ones / INT_MIN here "
        "where D3D saturates, NaN → 0; errata, the row after E55); dmlops keeps D3D's conversion. "
        "*Stack limit*: CompileOperator failed after CreateOperator accepted (a DXIL shader). "
        "The ScaleBias'd integer tensors counted there are a predicate (the scaled value is NaN, negative "
        "into an unsigned type or beyond ±2^31), not a model. "
        "*numpy refuses*: a data type the reference does not implement for the operator (64-bit integer "
        "division, moduli and shifts; integer POW, RELU, SHRINK, PARAMETERIZED_RELU and THRESHOLD; float-only "
        "operators on ScaleBias'd integer tensors, E59); it runs on `directml`. *DirectML rejects a validated "
        "desc*: validation divergences, E63.",
        "",
        "### Differences by kind",
        "",
        "| operator | kind | cases | cause |",
        "|---|---|---|---|",
    ]
    for op, t in tallies.items():
        for kind, n in sorted(t.kinds.items()):
            cause = elementwise.KNOWN_KINDS.get(kind)
            if kind.startswith("stack:"):
                cause = "stack: lavapipe's float-to-integer conversion (errata, after E55)"
            lines.append(f"| {op} | {kind} | {n} | {cause or 'not explained yet'} |")
    lines += ["", "### First example of each kind not put down to a cause, and of each validation divergence", ""]
    for op, t in tallies.items():
        for kind, example in sorted(t.examples.items()):
            if kind in elementwise.KNOWN_KINDS:
                continue
            lines.append(f"- {op}, {kind}: `{example[:700]}`")
    others = Counter[str]()
    for t in tallies.values():
        for reason, n in t.skipped.items():
            if reason not in ELEMENTWISE_COUNTED:
                others[reason] += n
    if others:
        lines += ["", "Other draws not run: " + "; ".join(f"{r}: {n}" for r, n in sorted(others.items())) + "."]
    lines.append("")
    return "\n".join(lines)


ELEMENTWISE_COUNTED = frozenset(
    {
        "stack limit (DXIL shader)",
        "both reject",
        "dmlops rejects, DirectML accepts",
        "DirectML rejects a validated desc",
        "numpy: unsupported data type",
    }
)


def _split(page: str) -> tuple[str, dict[str, str]]:
    """The page's seed part and its family sections by heading (absent ones left out)."""
    headings = [ELEMENTWISE_HEADING, *(f.heading for f in FAMILIES.values())]
    found = sorted((page.find(h), h) for h in headings if page.find(h) >= 0)
    if not found:
        return page, {}
    sections = {}
    for i, (at, heading) in enumerate(found):
        end = found[i + 1][0] if i + 1 < len(found) else len(page)
        sections[heading] = page[at:end].rstrip() + "\n"
    return page[: found[0][0]].rstrip() + "\n", sections


# -- the families with pytest campaigns ------------------------------------------------------


@dataclass(frozen=True)
class Family:
    """A family whose DirectML campaign is a pytest file with a case-count variable."""

    name: str
    heading: str
    test_file: str
    env: str
    tests: tuple[str, ...]
    """The differential test functions, parametrised by (operator, seed)."""
    per_seed_rows: dict[str, int] = field(default_factory=dict)
    """Operators whose seeds cycle over sub-rows (REDUCE: one per function)."""
    test_ops: dict[str, str] = field(default_factory=dict)
    """Differential tests parametrised by seed alone: the operator each one runs."""
    about: str = ""
    operators: tuple[str, ...] = ()
    """The operators of the campaign, where the test module keeps them in no tuple constant."""


FAMILIES = {
    "data_movement": Family(
        "data_movement",
        "## Data movement operators (pytest campaign)",
        "tests/directml/test_directml_data_movement.py",
        "DMLOPS_DATA_MOVEMENT_CASES",
        ("test_reference_matches_directml",),
        about=(
            "Each case is a seeded random desc of the operator (ranks 1 to 5, last dimensions mostly not "
            "divisible by 4, every data type this stack runs, every mode, strided and broadcast inputs, strided "
            "outputs), adversarial values (NaN, ±inf, ±0, halves, integer extremes) and about one invalid desc "
            "in eight. A desc dmlops rejects must be rejected by DirectML's CreateOperator too (*invalid, "
            "rejection checked*); the rest compare bit for bit, except CAST's float-to-integer elements that "
            "are lavapipe's conversion (NaN and out-of-range values; errata, after E55), left out."
        ),
    ),
    "reduction": Family(
        "reduction",
        "## Reduction operators (pytest campaign)",
        "tests/directml/test_directml_reduction.py",
        "DMLOPS_REDUCTION_CASES",
        ("test_reference_matches_directml",),
        per_seed_rows={"REDUCE": 12},
        about=(
            "Each case is a seeded random desc (every data type this stack runs, every DML_REDUCE_FUNCTION "
            "and AxisDirection, the exclusive flags, unsorted, repeated and empty axis sets, strided inputs) "
            "with adversarial values (NaN, ±inf, ±0, ties, integer extremes). Integers, MAX, MIN, the "
            "indices, TOP_K's values and the cumulative operators compare bit for bit; the float sums "
            "within the float32 rounding of an n-term accumulation (DirectML's order depends on the sizes, "
            "see descs/reduction.py): *within tolerance* counts those that agreed only within it. REDUCE has "
            "a row per function."
        ),
    ),
    "pooling_resampling": Family(
        "pooling_resampling",
        "## Pooling, resampling and ROI neighbours (pytest campaign)",
        "tests/directml/test_directml_pooling_resampling.py",
        "DMLOPS_POOLING_RESAMPLING_CASES",
        ("test_pooling_matches_directml", "test_resampling_matches_directml", "test_roi_align1_matches_directml"),
        test_ops={"test_roi_align1_matches_directml": "ROI_ALIGN1"},
        about=(
            "Each case is a seeded random desc (every data type the stack runs, 4-D and 5-D inputs with a last "
            "dimension not divisible by 4, strided inputs, zeros in Strides/WindowSize/Dilations, "
            "padding-only windows, output sizes beside the floor formula's) with adversarial values (NaN, "
            "±inf, ±0, ties, ±FLT_MAX). Exact operators compare bit for bit, LP_POOLING with P other than 1 "
            "or 2 within float32 rounding; resampling elements that are lavapipe's float-to-integer "
            "conversion are left out, ROI_ALIGN1 compares within a tolerance for its sample positions. A desc dmlops "
            "rejects must be rejected by CreateOperator too."
        ),
    ),
    "indexing": Family(
        "indexing",
        "## Indexing operators (pytest campaign)",
        "tests/directml/test_directml_indexing.py",
        "DMLOPS_INDEXING_CASES",
        ("test_reference_matches_directml",),
        operators=tuple(
            "DIAGONAL_MATRIX DIAGONAL_MATRIX1 GATHER_ELEMENTS GATHER_ND GATHER_ND1 NONZERO_COORDINATES ONE_HOT "
            "REVERSE_SUBSEQUENCES SCATTER_ELEMENTS SCATTER_ND".split()
        ),
        about=(
            "Each case is a seeded random desc (every data type this stack runs, strided and broadcast inputs) "
            "with awkward indices (negative, past the axis, beyond 2^32 and 2^63, duplicate targets) and "
            "values (NaN, ±0); results compare bit for bit. Out-of-range indices DirectML leaves undefined "
            "and duplicate scatter targets are left out of the comparison (E160, E163)."
        ),
    ),
    "spatial_neighbours": Family(
        "spatial_neighbours",
        "## AVERAGE_POOLING_GRAD, MAX_UNPOOLING, RESAMPLE_GRAD, VALUE_SCALE_2D (pytest campaign)",
        "tests/directml/test_directml_spatial_neighbours.py",
        "DMLOPS_SPATIAL_NEIGHBOURS_CASES",
        ("test_matches_directml",),
        operators=("AVERAGE_POOLING_GRAD", "MAX_UNPOOLING", "RESAMPLE_GRAD", "VALUE_SCALE_2D"),
        about=(
            "Each case is a seeded random desc (windows, strides, paddings, IncludePadding, scales and "
            "offsets, index types) with adversarial values; data movement and VALUE_SCALE_2D compare bit "
            "for bit, the gradients within the float32 rounding of their sums."
        ),
    ),
    "roi_neighbours": Family(
        "roi_neighbours",
        "## ROI_POOLING, ROI_ALIGN_GRAD (pytest campaign)",
        "tests/directml/test_directml_roi_neighbours.py",
        "DMLOPS_ROI_NEIGHBOURS_CASES",
        ("test_matches_directml",),
        operators=("ROI_ALIGN_GRAD", "ROI_POOLING"),
        about=(
            "Each case is a seeded random desc (regions past every edge, inverted and empty ones, batch "
            "indices out of range, every reduction and sample count); ROI_POOLING compares bit for bit, "
            "ROI_ALIGN_GRAD within float32 rounding (finite data: E196)."
        ),
    ),
}

SIXTY_FOUR_BIT = frozenset({"INT64", "UINT64", "FLOAT64"})
TAG_REJECTS = "invalid desc: DirectML rejects too"
TAG_ACCEPTS = "invalid desc: DirectML accepts"
TAG_ARTEFACTS = "lavapipe artefacts left out"
TAG_INEXACT = "not bit for bit"


def _data_types(obj: Any, out: set[str]) -> set[str]:
    """Every DataType value in a desc JSON (or a tuple holding one)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k.endswith("DataType") and isinstance(v, str):
                out.add(v)
            else:
                _data_types(v, out)
    elif isinstance(obj, list | tuple):
        for v in obj:
            _data_types(v, out)
    return out


class Recorder:
    """A pytest plugin: keeps each row's seeds, learns how each case was decided, writes records."""

    def __init__(self, path: str, limits: dict[str, int], test_ops: dict[str, str]) -> None:
        self.path = path
        self.limits = limits
        self.test_ops = test_ops
        self.tags: set[str] = set()
        self.types: set[str] = set()
        self.patched: set[str] = set()
        self.out = open(path, "w", encoding="utf-8")  # closed at pytest_unconfigure

    def _patch(self, module: Any) -> None:
        if module.__name__ in self.patched:
            return
        self.patched.add(module.__name__)
        rec = self
        if hasattr(module, "create_operator"):
            original_create = module.create_operator

            def create_operator(*args: Any, **kwargs: Any) -> Any:
                try:
                    result = original_create(*args, **kwargs)
                except Exception:
                    rec.tags.add(TAG_REJECTS)
                    raise
                rec.tags.add(TAG_ACCEPTS)
                return result

            module.create_operator = create_operator
        for name in ("build", "make_case", "pooling_case", "resampling_case", "roi_align1_case"):
            if hasattr(module, name):
                original_case = getattr(module, name)

                def case(*args: Any, _f: Any = original_case, **kwargs: Any) -> Any:
                    result = _f(*args, **kwargs)
                    _data_types(result if isinstance(result, tuple) else (result,), rec.types)
                    return result

                setattr(module, name, case)
        for name in ("stack_conversion", "stack_artefacts"):
            if hasattr(module, name):
                original_mask = getattr(module, name)

                def mask(*args: Any, _f: Any = original_mask, **kwargs: Any) -> Any:
                    result = _f(*args, **kwargs)
                    if result is not None and bool(np.any(result)):
                        rec.tags.add(TAG_ARTEFACTS)
                    return result

                setattr(module, name, mask)
        if hasattr(module, "compare"):
            original_compare = module.compare

            def compare(*args: Any, **kwargs: Any) -> Any:
                arrays = [a for a in args if isinstance(a, np.ndarray)]  # (want, got), keywords are options
                if len(arrays) >= 2:
                    want, got = arrays[-2], arrays[-1]
                    if want.shape != got.shape or want.dtype != got.dtype or want.tobytes() != got.tobytes():
                        rec.tags.add(TAG_INEXACT)
                return original_compare(*args, **kwargs)

            module.compare = compare

    def _row(self, item: Any) -> tuple[str, int] | None:
        callspec = getattr(item, "callspec", None)
        if callspec is None:
            return None
        params = callspec.params
        op = params.get("op", params.get("operator", self.test_ops.get(item.originalname)))
        seed = params.get("seed")
        if not isinstance(op, str) or not isinstance(seed, int):
            return None
        stem = callspec.id.rsplit("-", 1)[0] if callspec.id.endswith(f"-{seed}") else op.lower()
        sub = stem[len(op) + 1 :] if stem.lower().startswith(op.lower() + "-") else ""
        return (f"{op} {sub.upper()}" if sub else op), seed

    def pytest_collection_modifyitems(self, config: Any, items: list[Any]) -> None:
        """Deselect the seeds beyond each row's count; wrap the test modules' helpers."""
        keep: list[Any] = []
        drop: list[Any] = []
        for item in items:
            row = self._row(item)
            limit = self.limits.get(row[0].split()[0], 0) if row else 0
            (keep if row is None or row[1] < limit else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
        for item in keep:
            if getattr(item, "module", None) is not None:
                self._patch(item.module)

    def pytest_runtest_setup(self, item: Any) -> None:
        """A fresh case: nothing learnt yet."""
        self.tags, self.types = set(), set()

    def pytest_unconfigure(self, config: Any) -> None:
        """Close the records file."""
        self.out.close()

    def pytest_runtest_makereport(self, item: Any, call: Any) -> None:
        """One record per test: its row, outcome, message, what the wrappers learnt."""
        if call.when == "setup" and call.excinfo is None:
            return
        if call.when == "teardown":
            return
        row = self._row(item)
        record: dict[str, Any] = {
            "test": item.originalname,
            "id": item.callspec.id if hasattr(item, "callspec") else item.name,
            "row": row[0] if row else None,
            "seed": row[1] if row else None,
            "tags": sorted(self.tags),
            "types": sorted(self.types),
            "seconds": round(call.duration, 4),
        }
        import pytest

        exc = call.excinfo
        if exc is None:
            record["outcome"] = "passed"
        elif exc.errisinstance(pytest.skip.Exception):
            record["outcome"], record["message"] = "skipped", str(exc.value.msg)
        elif exc.errisinstance(pytest.xfail.Exception):
            record["outcome"], record["message"] = "xfailed", str(exc.value.msg)
        else:
            record["outcome"] = "failed" if call.when == "call" else "error"
            record["message"] = f"{exc.typename}: {str(exc.value)[:600]}"
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()


def pytest_configure(config: Any) -> None:
    """Loaded with ``-p directml_parity``: record when the script asked for it."""
    path = os.environ.get("DMLOPS_PARITY_RECORDS")
    if path:
        limits = json.loads(os.environ.get("DMLOPS_PARITY_LIMITS", "{}"))
        test_ops = json.loads(os.environ.get("DMLOPS_PARITY_TEST_OPS", "{}"))
        config.pluginmanager.register(Recorder(path, limits, test_ops), "dmlops-parity-recorder")


def run_family(family: Family, cases: int, records: Path) -> float:
    """Run the family's pytest file in a subprocess, recording; the seconds it took."""
    ops = _family_operators(family)
    limits = {op: cases * family.per_seed_rows.get(op, 1) for op in ops}
    env = dict(os.environ)
    env[family.env] = str(max(limits.values(), default=cases))
    env["DMLOPS_PARITY_RECORDS"] = str(records)
    env["DMLOPS_PARITY_LIMITS"] = json.dumps(limits)
    env["DMLOPS_PARITY_TEST_OPS"] = json.dumps(family.test_ops)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "scripts"), env.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "directml_parity"]
    cmd += ["-o", "addopts=--strict-markers", "--no-header", "-rN", family.test_file]
    start = time.monotonic()
    print(" ".join(cmd), f"({family.env}={env[family.env]})", flush=True)
    commit = _family_commit(family)  # the tree the tests ran on
    subprocess.run(cmd, cwd=ROOT, env=env, check=False)
    seconds = time.monotonic() - start
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    meta = {"seconds": round(seconds, 1), "cases": cases, "commit": commit, "date": now}
    with records.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"meta": meta}) + "\n")
    return seconds


def _family_operators(family: Family) -> list[str]:
    """The operators the family's test module parametrises (read from the module's own tuples)."""
    text = (ROOT / family.test_file).read_text()
    names: list[str] = []
    for const in ("OPERATORS", "POOLING", "RESAMPLING", "ROI"):
        m = re.search(rf"^{const} = \(([^)]*)\)", text, re.M)
        if m:
            names += re.findall(r'"([A-Z0-9_]+)"', m.group(1))
    if family.name == "data_movement":
        from dmlops.descs.data_movement import GENERIC_OPERATORS

        names = sorted(GENERIC_OPERATORS)
    if family.operators:
        names = list(family.operators)
    return names + list(family.test_ops.values())


@dataclass
class RowTally:
    """One operator row of a pytest campaign."""

    cases: int = 0
    agreed: int = 0
    inexact: int = 0
    artefacts: int = 0
    rejected: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    differed: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    types: set[str] = field(default_factory=set)
    seconds: float = 0.0


def _skip_kind(record: dict[str, Any]) -> str:
    message = record.get("message", "")
    if "DirectMLStackLimitError" in message or message.startswith("stack limit"):
        wide = SIXTY_FOUR_BIT & set(record["types"])
        return "stack limit (DXIL shader)" + (", a 64-bit data type in the desc" if wide else "")
    if message.startswith("not implemented by the numpy backend"):
        why = re.sub(r"^\s*DML_\w+_DESC: ", "", message.split(":", 1)[1])
        return "numpy backend: " + re.sub(r"\[[^\]]*\]", "[…]", why).strip()[:200]
    return message.split(":")[0][:120]


def _fail_kind(record: dict[str, Any]) -> str:
    message = record.get("message", "")
    if record["outcome"] == "xfailed":
        return "known divergence (xfail): " + re.split(r"[:(]", message)[0].strip()[:160]
    if "DID NOT RAISE" in message or (TAG_ACCEPTS in record["tags"] and TAG_REJECTS not in record["tags"]):
        return "dmlops rejects, DirectML accepts"
    if "CreateOperator rejects" in message:
        return "DirectML rejects a validated desc"
    if "elements differ" in message:
        m = re.match(r"\w+: (?:(\w+): )?(\d+) of \d+ elements differ", message)
        pairs = re.findall(r"numpy np\.\w+\(([^)]*)\) directml np\.\w+\(([^)]*)\)", message)
        zeros = {("0.0", "-0.0"), ("-0.0", "0.0")}
        if m and pairs and int(m.group(2)) == len(pairs) and all(p in zeros for p in pairs):
            return "sign of a zero only (a ±0 tie; cf. MAX_POOLING2's known rule)"
        return "values differ" + (f" ({m.group(1)})" if m and m.group(1) else "")
    if record["outcome"] == "error":
        return "error outside the test: " + message.split(":")[0]
    return "failed: " + message.split(":")[0]


def tally_records(records: list[dict[str, Any]]) -> tuple[dict[str, RowTally], dict[str, Counter[str]]]:
    """Per-row tallies of the differential tests, and outcomes of the file's other tests."""
    rows: dict[str, RowTally] = {}
    others: dict[str, Counter[str]] = defaultdict(Counter)
    for r in records:
        if r["row"] is None:
            others[r["test"]][r["outcome"]] += 1
            continue
        t = rows.setdefault(r["row"], RowTally())
        t.cases += 1
        t.seconds += r["seconds"]
        t.types.update(r["types"])
        if r["outcome"] == "passed":
            if TAG_REJECTS in r["tags"]:
                t.rejected += 1
            else:
                t.agreed += 1
                t.inexact += TAG_INEXACT in r["tags"] and TAG_ARTEFACTS not in r["tags"]
                t.artefacts += TAG_ARTEFACTS in r["tags"]
        elif r["outcome"] == "skipped":
            t.skipped[_skip_kind(r)] += 1
        else:
            kind = _fail_kind(r)
            t.differed[kind] += 1
            t.examples.setdefault(kind, f"seed {r['seed']}: {r.get('message', '')[:500]}")
    return rows, others


def render_family(
    family: Family,
    records: list[dict[str, Any]],
    cases: int,
    seconds: float,
    commit: str,
    stack_line: str,
    date: str | None = None,
) -> str:
    """A pytest campaign's section (``date``: when the records were made, else now)."""
    now = date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows, others = tally_records(records)
    command = f"python scripts/directml_parity.py --family {family.name} --cases {cases}"
    total = sum(t.cases for t in rows.values())
    agreed = sum(t.agreed for t in rows.values())
    rejected = sum(t.rejected for t in rows.values())
    skipped = sum(sum(t.skipped.values()) for t in rows.values())
    differed = sum(sum(t.differed.values()) for t in rows.values())
    lines = [
        family.heading,
        "",
        f"Generated by `{command}` on {now}, at commit {commit}, in {seconds / 60:.1f} minutes on a 2-core machine "
        f"({family.env}={cases * max([1, *family.per_seed_rows.values()])}, "
        f"`{family.test_file}`). Do not edit by hand: run the script again.",
        "",
        f"Stack: {stack_line}.",
        "",
        family.about + " Differential tests: " + ", ".join(f"`{t}`" for t in family.tests) + ".",
        "",
        f"{total} cases: {agreed} agreed, {rejected} invalid descs whose rejection DirectML confirmed, {skipped} "
        f"skipped, {differed} differed.",
        "",
        "| operator | data types drawn | cases | agreed | of which within tolerance, not bit for bit | of which "
        "lavapipe artefacts left out | invalid, rejection checked | skipped | differed |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row, t in rows.items():
        lines.append(
            f"| {row} | {' '.join(sorted(t.types))} | {t.cases} | {t.agreed} | {t.inexact} | {t.artefacts} "
            f"| {t.rejected} | {sum(t.skipped.values())} | {sum(t.differed.values())} |"
        )
    lines += [
        "",
        "*Invalid, rejection checked*: dmlops rejects the desc and DirectML's CreateOperator rejects it too "
        "(validation parity on that desc). *Within tolerance*: DirectML's output differs from the reference's "
        "in some bits, within the test's stated tolerance. "
        "*Lavapipe artefacts left out*: some elements were lavapipe's float-to-integer conversion (NaN → "
        "INT_MIN / all ones where D3D gives 0 and saturates) and were not compared; the rest agreed.",
        "",
        "### Skipped, by reason",
        "",
        "| operator | reason | cases |",
        "|---|---|---|",
    ]
    lines += [f"| {row} | {k} | {n} |" for row, t in rows.items() for k, n in sorted(t.skipped.items())]
    if not skipped:
        lines.append("| - | none | 0 |")
    lines += [
        "",
        "*Stack limit (DXIL shader)*: CompileOperator failed after CreateOperator accepted the desc (DirectML "
        "chose a DXIL shader, which Wine's vkd3d cannot run): a limit of this stack, not a verdict.",
        "",
        "### Differences, by kind",
        "",
        "| operator | kind | cases | first example |",
        "|---|---|---|---|",
    ]
    for row, t in rows.items():
        for k, n in sorted(t.differed.items()):
            example = t.examples.get(k, "").replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {row} | {k} | {n} | `{example}` |")
    if not differed:
        lines.append("| - | none | 0 | |")
    if others:
        lines += [
            "",
            "Other tests in the file: "
            + "; ".join(
                f"`{test}` " + ", ".join(f"{n} {o}" for o, n in sorted(c.items())) for test, c in others.items()
            )
            + ".",
        ]
    lines.append("")
    return "\n".join(lines)


def not_measured(family: Family, why: str) -> str:
    """A placeholder section for a family not yet run."""
    return f"{family.heading}\n\n**Not yet measured**: {why}\n"


def _stack_line() -> str:
    v = versions()
    keys = ("DirectML.dll", "Wine", "vkd3d", "Mesa (lavapipe)", "max feature level", "dmlops / NumPy / hypothesis")
    return "; ".join(f"{k} {v.get(k, 'unknown')}" for k in keys) + f"; pytest {_pytest_version()}"


def _pytest_version() -> str:
    import pytest

    return str(pytest.__version__)


def _family_commit(family: Family) -> str:
    commit = _commit()
    dirty = _run(["git", "-C", str(ROOT), "status", "--porcelain", "--", family.test_file])
    return commit + (f" (with uncommitted changes to {family.test_file})" if dirty not in ("", "unknown") else "")


def main(argv: list[str] | None = None) -> int:
    """Run the campaign and write the page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000, help="differential cases per operator")
    parser.add_argument("--validation-cases", type=int, default=None, help="validation descs per operator")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ops", default=None, help="comma-separated operator names")
    parser.add_argument("--family", choices=("seed", "elementwise", "all", *FAMILIES), default="seed")
    parser.add_argument("--minimise-budget", type=int, default=150, help="CreateOperator calls per example")
    parser.add_argument("--records", default=None, help="pytest families: keep the per-test records here (JSON lines)")
    parser.add_argument("--from-records", default=None, help="pytest families: render these records, run nothing")
    parser.add_argument("--output", default=str(ROOT / "docs" / "directml-parity.md"))
    args = parser.parse_args(argv)
    if args.validation_cases is None:
        args.validation_cases = args.cases
    output = Path(args.output)
    seed_part, sections = _split(output.read_text() if output.exists() else "")
    if args.family in ("seed", "all"):
        seed_part = run_seed(args)
    if args.family in ("elementwise", "all"):
        start = time.monotonic()
        ops = args.ops.split(",") if args.ops and args.family == "elementwise" else sorted(elementwise.OPERATORS)

        def progress(op: str, t: Any) -> None:
            print(
                f"{op}: {t.run} run, {t.agreed} agreed, {t.differed} differed {dict(t.kinds)} "
                f"{dict(t.skipped)} ({t.seconds:.0f} s)",
                flush=True,
            )

        tallies = elementwise.campaign(ops, args.cases, args.seed, progress=progress)
        sections[ELEMENTWISE_HEADING] = render_elementwise(tallies, args, time.monotonic() - start)
    if args.family in FAMILIES:
        family = FAMILIES[args.family]
        if args.from_records:
            records_path = Path(args.from_records)
        else:
            records_path = Path(args.records or output.with_name(f".{family.name}-records.jsonl"))
            run_family(family, args.cases, records_path)
        records = [json.loads(line) for line in records_path.read_text().splitlines() if line.strip()]
        meta = [r["meta"] for r in records if "meta" in r]
        records = [r for r in records if "meta" not in r]
        run = meta[-1] if meta else {}
        seconds = run.get("seconds", sum(r["seconds"] for r in records))
        args.cases = run.get("cases", args.cases)
        if args.ops:
            records = [r for r in records if r["row"] is None or r["row"].split()[0] in args.ops.split(",")]
        sections[family.heading] = render_family(
            family,
            records,
            args.cases,
            seconds,
            run.get("commit", _family_commit(family)),
            _stack_line(),
            run.get("date"),
        )
        if not args.records and not args.from_records:
            records_path.unlink(missing_ok=True)
    for name, family in FAMILIES.items():
        if family.heading not in sections:
            sections[family.heading] = not_measured(
                family, f"run `python scripts/directml_parity.py --family {name} --cases 500`."
            )
    order = [ELEMENTWISE_HEADING, *(f.heading for f in FAMILIES.values())]
    page = seed_part.rstrip() + "\n" + "".join("\n" + sections[h] for h in order if h in sections)
    output.write_text(page)
    print(f"wrote {output}")
    return 0


def run_seed(args: argparse.Namespace) -> str:
    """The seven seed operators' campaigns, rendered."""
    start = time.monotonic()
    tallies, ptallies = [], []
    for op in (args.ops or ",".join(diff.OPS)).split(","):
        t0 = time.monotonic()
        t = diff.campaign(op, args.cases, args.seed, run_at_least=args.cases)
        tallies.append(t)
        print(
            f"{op}: {t.run} run, {t.agreed} agreed, {t.differed} differed {t.kinds}, {t.stack_limit} stack limit "
            f"({time.monotonic() - t0:.0f} s)",
            flush=True,
        )
        t0 = time.monotonic()
        p = parity.parity_campaign(op, args.validation_cases, args.seed)
        p.minimise_examples(args.minimise_budget)
        ptallies.append(p)
        print(f"{op} validation: {p.outcomes} {p.kinds} ({time.monotonic() - t0:.0f} s)", flush=True)
    return render(tallies, ptallies, args, time.monotonic() - start)


if __name__ == "__main__":
    raise SystemExit(main())
