"""``dmlops``: run DirectML operator models written in DxDispatch's JSON format.

::

    dmlops run MODEL [--backend NAME] [--dml_feature_level 6_4] [-i N] [-t MS]
                     [--input_path DIR] [--output_path DIR] [--print_commands]
                     [--allow-writes-outside-output-path] [--max_memory BYTES]
    dmlops validate MODEL [--dml_feature_level 6_4] [--input_path DIR]
    dmlops list
    dmlops directml setup|status

Output lines are DxDispatch's (``Resource 'out': 14, 16, 6, 8``) so results can be
diffed against a Windows run. Exit status: 0 on success, 2 for an invalid model or
any other user-facing error (one line on stderr), 1 for an internal error. DxDispatch
options that mean nothing here (``-d``, ``-a``, ``-q``, PIX, ONNX...) are accepted
with a warning. Options take DxDispatch's underscore spelling or a hyphenated one.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from typing import Any, TextIO

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INVALID = 2

# DxDispatch options accepted and ignored: (spellings, takes a value).
_IGNORED_OPTIONS: list[tuple[tuple[str, ...], bool]] = [
    (("-d", "--debug"), False),
    (("-a", "--adapter"), True),
    (("-s", "--show_adapters"), False),
    (("-S", "--show_dependencies"), False),
    (("-q", "--queue_type"), True),
    (("-r", "--dispatch_repeat"), True),
    (("-I", "--dispatch_interval"), True),
    (("-w", "--warmup_samples"), True),
    (("-v", "--timing_verbosity"), True),
    (("--max_gpu_time_measurements",), True),
    (("--post_dispatch_barriers",), True),
    (("--clear_shader_caches",), False),
    (("--disable_custom_heaps",), False),
    (("--disable_gpu_timeout",), False),
    (("--enable_dred",), False),
    (("--disable_background_processing",), False),
    (("--set_stable_power_state",), False),
    (("--disable_agility_sdk",), False),
    (("--print_hlsl_disassembly",), False),
    (("--xbox_allow_precompile",), False),
    (("-c", "--pix_capture_type"), True),
    (("-o", "--pix_capture_name"), True),
    (("--present_separator",), False),
    (("-f", "--onnx_free_dim_name_override"), True),
    (("-F", "--onnx_free_dim_denotation_override"), True),
    (("-e", "--onnx_session_config_entry"), True),
    (("-b", "--binding_shape"), True),
    (("-l", "--onnx_graph_optimization_level"), True),
    (("-L", "--onnx_logging_level"), True),
    (("-p", "--print_onnx_bindings"), False),
    (("-x", "--enable_ort_extensions"), False),
    (("--enable_onnx_profiling",), False),
]


def _spellings(*names: str) -> list[str]:
    """Each long option in DxDispatch's underscore spelling and a hyphenated one."""
    out: list[str] = []
    for n in names:
        out.append(n)
        if n.startswith("--") and "_" in n:
            out.append(n.replace("_", "-"))
    return out


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number; got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number; got {text}")
    return value


def _add_common(p: argparse.ArgumentParser, *, running: bool) -> None:
    p.add_argument("model", nargs="?", metavar="MODEL", help="the DxDispatch .json model")
    p.add_argument("-m", "--model", dest="model_option", metavar="MODEL", help="the model (DxDispatch's -m)")
    p.add_argument(
        *_spellings("--dml_feature_level"),
        dest="feature_level",
        metavar="LEVEL",
        help="validate descs at this DML_FEATURE_LEVEL, e.g. 6_4 or 6.4 (default: the latest)",
    )
    p.add_argument(*_spellings("--input_path"), dest="input_path", metavar="DIR", help="folder for initializer files")
    if not running:
        return
    p.add_argument("--backend", default=None, metavar="NAME", help="numpy (default), cpu or cuda")
    p.add_argument(*_spellings("--output_path"), dest="output_path", metavar="DIR", help="folder for writeFile targets")
    p.add_argument(
        "-i",
        *_spellings("--dispatch_iterations"),
        dest="iterations",
        type=_positive_int,
        default=None,
        metavar="N",
        help="dispatch each dispatch command N times and print its median CPU time",
    )
    p.add_argument(
        "-t",
        *_spellings("--milliseconds_to_run"),
        dest="milliseconds_to_run",
        type=_positive_float,
        default=None,
        metavar="MS",
        help="repeat each dispatch command until MS milliseconds have passed (or -i N iterations ran, if sooner)",
    )
    p.add_argument(
        "--allow-writes-outside-output-path",
        "--allow_writes_outside_output_path",
        dest="allow_writes_outside",
        action="store_true",
        help="let writeFile targets leave --output_path (absolute paths, '..', symlinks), as DxDispatch does",
    )
    p.add_argument(
        *_spellings("--max_memory"),
        dest="max_memory",
        metavar="BYTES",
        help="refuse models whose peak memory exceeds this (e.g. 4G; default: $DMLOPS_MAX_MEMORY, "
        "else 80%% of the available memory)",
    )
    p.add_argument(*_spellings("--print_commands"), dest="print_commands", action="store_true", help="log each command")
    ignored = p.add_argument_group("DxDispatch options accepted and ignored (with a warning)")
    for names, takes_value in _IGNORED_OPTIONS:
        dest = "ignored_" + names[-1].lstrip("-")
        if takes_value:
            ignored.add_argument(*_spellings(*names), dest=dest, metavar="X", help=argparse.SUPPRESS)
        else:
            ignored.add_argument(*_spellings(*names), dest=dest, action="store_true", help=argparse.SUPPRESS)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dmlops`` command."""
    parser = argparse.ArgumentParser(
        prog="dmlops",
        description="Run DirectML operator models written in DxDispatch's JSON format, on any backend.",
    )
    sub = parser.add_subparsers(dest="command", metavar="{run,validate,list,directml}")
    run = sub.add_parser("run", help="run a model and print what DxDispatch prints")
    _add_common(run, running=True)
    validate = sub.add_parser("validate", help="parse and validate a model without running it")
    _add_common(validate, running=False)
    sub.add_parser("list", help="list operators, backends and feature levels")
    from .directml.setup import add_subparser as add_directml_subparser

    add_directml_subparser(sub)
    return parser


class _Reporter:
    """One-line warnings on stderr: ``dmlops: warning: ...``."""

    def __init__(self, err: TextIO) -> None:
        self.err = err

    def warn(self, message: str) -> None:
        print(f"dmlops: warning: {message}", file=self.err, flush=True)

    def showwarning(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        self.warn(str(message).splitlines()[0] if str(message) else category.__name__)


def _model_path(args: argparse.Namespace) -> str:
    path = args.model_option or args.model
    if not path:
        from .model.errors import ModelError

        raise ModelError("no model given (usage: dmlops run MODEL)")
    return str(path)


def _cmd_run(args: argparse.Namespace, reporter: _Reporter, out: TextIO) -> int:
    from .backends import DEFAULT_BACKEND, resolve_backend_name
    from .model import Executor, load_model

    for names, _ in _IGNORED_OPTIONS:
        value = getattr(args, "ignored_" + names[-1].lstrip("-"))
        if value not in (None, False):
            reporter.warn(f"option {names[-1]} has no meaning for dmlops; ignored")
    backend = resolve_backend_name(args.backend or DEFAULT_BACKEND)
    model = load_model(_model_path(args), input_path=args.input_path, feature_level=_level(args))
    for message in model.warnings:
        reporter.warn(message)
    executor = Executor(
        model,
        backend=backend,
        output_path=args.output_path,
        allow_writes_outside_output_path=args.allow_writes_outside,
        iterations=args.iterations,
        milliseconds_to_run=args.milliseconds_to_run,
        report_timing=args.iterations is not None or args.milliseconds_to_run is not None,
        print_commands=args.print_commands,
        max_memory=args.max_memory,
        out=out,
        progress=reporter.err,
    )
    executor.run()
    return EXIT_OK


def _level(args: argparse.Namespace) -> Any:
    if args.feature_level is None:
        return None
    from .enums import FeatureLevel
    from .model.errors import ModelError

    try:
        return FeatureLevel.from_any(args.feature_level)
    except ValueError:
        levels = ", ".join(fl.name[1:] for fl in FeatureLevel)
        raise ModelError(f"unknown --dml_feature_level {args.feature_level!r} (known: {levels})") from None


def _cmd_validate(args: argparse.Namespace, reporter: _Reporter, out: TextIO) -> int:
    from .model import load_model

    path = _model_path(args)
    model = load_model(path, input_path=args.input_path, feature_level=_level(args))
    for message in model.warnings:
        reporter.warn(message)
    from .backends import DEFAULT_BACKEND
    from .model.peak_memory import estimate_peak

    peak = estimate_peak(model, DEFAULT_BACKEND)
    print(
        f"Model '{path}' is valid at {model.feature_level}: {len(model.resources)} resources, "
        f"{len(model.dispatchables)} dispatchables, {len(model.commands)} commands; "
        f"running it needs about {peak.describe()} on the {DEFAULT_BACKEND} backend",
        file=out,
    )
    return EXIT_OK


def _and(backends: str) -> str:
    """``"numpy, cpu, directml"`` -> ``"numpy, cpu and directml"``; one name: ``"directml only"``."""
    head, _, last = backends.rpartition(", ")
    return f"{head} and {last}" if head else f"{last} only"


def _cmd_list(out: TextIO) -> int:
    from .backends import DEFAULT_BACKEND, backend_status
    from .catalogue import OPERATORS
    from .descs import desc_class
    from .enums import FeatureLevel

    rows = []
    sets: dict[str, int] = {}  # backends -> how many operators run on exactly those
    for op in OPERATORS:
        notes = [f"alias {a}" for a in op.aliases]
        if op.struct != f"DML_{op.name}_OPERATOR_DESC":
            notes.insert(0, f"struct {op.struct}")
        if not op.in_dxdispatch:
            notes.append("not in DxDispatch")
        try:
            backends = ", ".join(desc_class(op.name).backends)
        except ImportError as exc:
            backends = f"not available: {exc}"
        key = "not available" if backends.startswith("not available") else backends
        sets[key] = sets.get(key, 0) + 1
        note = f"  ({'; '.join(notes)})" if notes else ""
        rows.append((op.name, op.feature_level.name[1:], backends + note))
    name_w = max(len(r[0]) for r in rows)
    counts = ", ".join(
        f"{n} not available"
        if b == "not available"
        else f"{n} on {'every backend' if b == 'numpy, cpu, cuda, directml' else _and(b)}"
        for b, n in sorted(sets.items(), key=lambda item: (-item[0].count(","), item[0]))
    )
    print(
        f"Operators: {len(rows)} DML_OPERATOR_TYPEs: {counts}\n"
        "(DxDispatch 'type', whose struct is DML_<type>_OPERATOR_DESC; introduced in; backends):",
        file=out,
    )
    for name, level, backends in rows:
        print(f"  {name:<{name_w}} {level:<4} {backends}", file=out)
    print("Backends:", file=out)
    for name, reason in backend_status().items():
        state = "available" if reason is None else f"not available: {reason}"
        default = " (default)" if name == DEFAULT_BACKEND else ""
        print(f"  {name:<8} {state}{default}", file=out)
    levels = ", ".join(fl.name[1:] for fl in FeatureLevel)
    print(f"Feature levels: {levels} (default {FeatureLevel.latest().name[1:]})", file=out)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dmlops`` console script; returns the exit status."""
    out, err = sys.stdout, sys.stderr
    reporter = _Reporter(err)
    parser = build_parser()
    args = parser.parse_args(argv)  # usage errors: argparse prints usage + one line, exits 2
    if args.command is None:
        parser.print_help(err)
        return EXIT_INVALID
    from .errors import DmlError
    from .model.errors import ModelError

    old_showwarning = warnings.showwarning
    warnings.showwarning = reporter.showwarning
    try:
        if args.command == "run":
            return _cmd_run(args, reporter, out)
        if args.command == "validate":
            return _cmd_validate(args, reporter, out)
        if args.command == "directml":
            return int(args.directml_handler(args, out))
        return _cmd_list(out)
    except (ModelError, DmlError) as exc:
        where = getattr(args, "model_option", None) or getattr(args, "model", None)
        prefix = f"{where}: " if where and isinstance(exc, ModelError) and "model file" not in str(exc) else ""
        print(f"dmlops: error: {prefix}{exc}", file=err, flush=True)
        return EXIT_INVALID
    except MemoryError:
        # Every allocation dmlops can foresee is checked first; this is the machine running
        # out anyway (other processes, overcommit): still one line, still exit 2.
        print("dmlops: error: out of memory (try --max_memory, or a smaller model)", file=err, flush=True)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("dmlops: interrupted", file=err)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # last resort: one line, never a traceback
        print(
            f"dmlops: internal error: {type(exc).__name__}: {exc} (this is a bug in dmlops; please report it)",
            file=err,
            flush=True,
        )
        return EXIT_INTERNAL
    finally:
        warnings.showwarning = old_showwarning


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
