"""``python -m conformance DIR``: replay a folder of vcrpy cassettes through the real SDKs.

Prints the per-provider table, then one line per failure with its reason. Exit code 1 when
any driven interaction did not replay equal.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .runner import run_corpus
from .table import failure_lines, provider_table


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance", description=__doc__)
    parser.add_argument("root", type=Path, help="folder of vcrpy cassettes, one sub-folder per provider")
    parser.add_argument("--provider", action="append", help="only this provider folder (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each interaction's outcome")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        print(f"promptvcr conformance: {args.root} is not a folder of cassettes.")
        return 2
    started = time.perf_counter()

    def show(outcome: object) -> None:
        if args.verbose:
            print(outcome, flush=True)

    outcomes = run_corpus(args.root, providers=args.provider, on_outcome=show)
    print(provider_table(outcomes))
    print(f"\n{len(outcomes)} interactions in {time.perf_counter() - started:.1f} s")
    for line in failure_lines(outcomes):
        print(line)
    return 1 if any(o.status in ("failed", "not-imported") for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
