"""How fast ``import-vcr`` converts a whole corpus, against just reading it.

Contenders, interleaved round by round so that a noisy shared machine slows both alike:

* ``read``    every cassette's YAML parsed with the same C loader (the floor: no conversion).
* ``import``  ``promptvcr.import_vcr`` on the whole folder: read, convert, redact, write.

Bar (issue 4): the whole shared corpus (542 cassettes, 961 interactions) imports in under 10 s.

Run: python benchmarks/bench_import.py [CORPUS_DIR] [--rounds N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from promptvcr import import_vcr

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "pydantic-ai"
FALLBACK = Path(__file__).resolve().parents[1] / "tests" / "corpus" / "pydantic-ai"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_all(root: Path) -> int:
    count = 0
    for file in sorted(root.rglob("*.yaml")):
        yaml.load(file.read_bytes(), Loader=_Loader)
        count += 1
    return count


def import_all(root: Path, out: Path) -> int:
    report = import_vcr([root], out)
    assert not report.failed, report.summary()
    return report.interaction_count


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", nargs="?", type=Path, default=DEFAULT if DEFAULT.is_dir() else FALLBACK)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    reads, imports = [], []
    files = interactions = 0
    for _ in range(args.rounds):
        started = time.perf_counter()
        files = read_all(args.root)
        reads.append(time.perf_counter() - started)
        out = Path(tempfile.mkdtemp(prefix="promptvcr-bench-import-"))
        try:
            started = time.perf_counter()
            interactions = import_all(args.root, out)
            imports.append(time.perf_counter() - started)
        finally:
            shutil.rmtree(out, ignore_errors=True)
    read_s, import_s = statistics.median(reads), statistics.median(imports)
    print(f"corpus: {args.root} ({files} cassettes, {interactions} interactions)")
    print(f"{args.rounds} rounds, medians")
    print(f"read    {read_s:6.2f} s")
    print(f"import  {import_s:6.2f} s   ({import_s / read_s:.2f}x read; {files / import_s:.0f} cassettes/s)")
    print(f"bar: whole corpus under 10 s -> {'met' if import_s < 10 else 'NOT met'}")


if __name__ == "__main__":
    main()
