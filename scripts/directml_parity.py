"""Run the differential and validation-parity campaign against the real DirectML; write docs/directml-parity.md.

Usage (the directml backend must be set up: ``dmlops directml setup``)::

    python scripts/directml_parity.py --cases 2000 --seed 0
    python scripts/directml_parity.py --family elementwise --cases 500 --seed 0

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
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import re
import subprocess
import sys
import time
from collections import Counter
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


def _split(page: str) -> tuple[str, str]:
    """The page's seed part and its element-wise section ("" when absent)."""
    at = page.find(ELEMENTWISE_HEADING)
    return (page, "") if at < 0 else (page[:at].rstrip() + "\n", page[at:])


def main(argv: list[str] | None = None) -> int:
    """Run the campaign and write the page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000, help="differential cases per operator")
    parser.add_argument("--validation-cases", type=int, default=None, help="validation descs per operator")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ops", default=None, help="comma-separated operator names")
    parser.add_argument("--family", choices=("seed", "elementwise", "all"), default="seed")
    parser.add_argument("--minimise-budget", type=int, default=150, help="CreateOperator calls per example")
    parser.add_argument("--output", default=str(ROOT / "docs" / "directml-parity.md"))
    args = parser.parse_args(argv)
    if args.validation_cases is None:
        args.validation_cases = args.cases
    output = Path(args.output)
    old_seed, old_elementwise = _split(output.read_text() if output.exists() else "")
    seed_part, elementwise_part = old_seed, old_elementwise
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
        elementwise_part = render_elementwise(tallies, args, time.monotonic() - start)
    page = seed_part.rstrip() + "\n" + ("\n" + elementwise_part if elementwise_part else "")
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
