"""Model parsing at scale: `dmlops validate` on big models and parser bombs (issue 17, item 4).

Each case runs `python -m dmlops validate` as a subprocess and reports its wall time and
peak resident memory (ru_maxrss of the child). Side by side, in the same run, the
pure-Python `json5` parser (what dmlops used before) reads the 1 MB model with a comment,
when that package is installed.

    python bench/parse_models.py [--sizes 1,5,50]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "slice1_example2.json"


def big_model(megabytes: float, comment: bool) -> str:
    """The SLICE1 example plus a UINT32 array resource padding it to about ``megabytes``."""
    model = json.loads(EXAMPLE.read_text())
    count = int(megabytes * 2**20 / 9)
    model["resources"]["pad"] = {"initialValuesDataType": "UINT32", "initialValues": list(range(count))}
    text = json.dumps(model)
    return "// DxDispatch's lenient JSON: one comment\n" + text if comment else text


BOMBS = {
    "'{' then 50 M spaces": "{" + " " * 50_000_000,
    "5 M nested '['": "[" * 5_000_000,
    "10 M unclosed '/*'": "/*" * 10_000_000,
    "10 M escaped quotes": '"\\"' * 10_000_000,
}


# VmHWM, the process's own peak: ru_maxrss would include the parent's (Linux keeps it across exec).
_CHILD = (
    "import sys\n"
    "from dmlops.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "hwm = [line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:')][0]\n"
    "print('maxrss', hwm, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def run_validate(path: Path) -> tuple[float, float, int]:
    """(seconds, peak RSS in MiB, exit status) of ``dmlops validate path``, in a fresh process."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, "validate", str(path)], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    peak_kib = int(proc.stderr.rsplit("maxrss", 1)[1].split()[0])
    return seconds, peak_kib / 1024, proc.returncode


def json5_seconds(text: str) -> float | None:
    try:
        import json5
    except ImportError:
        return None
    start = time.perf_counter()
    json5.loads(text)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1,5,50", help="model sizes in MB")
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print("| case | bytes | validate s | peak RSS MiB | exit |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for mb in sizes:
            for comment in (False, True):
                text = big_model(mb, comment)
                path = Path(tmp, f"m{mb}{comment}.json")
                path.write_text(text)
                seconds, rss, code = run_validate(path)
                kind = "with a // comment" if comment else "plain JSON"
                print(f"| {mb:g} MB model, {kind} | {len(text)} | {seconds:.2f} | {rss:.0f} | {code} |")
        for name, text in BOMBS.items():
            path = Path(tmp, "bomb.json")
            path.write_text(text)
            seconds, rss, code = run_validate(path)
            print(f"| bomb: {name} | {len(text)} | {seconds:.2f} | {rss:.0f} | {code} |")
        old = json5_seconds(big_model(1, True))
        if old is not None:
            print(f"\njson5 {__import__('json5').__version__} alone on the 1 MB model with a comment: {old:.2f} s")


if __name__ == "__main__":
    main()
