"""Replaying one request from a large cassette against a one-interaction one, collector on (issue 48).

CPython's cyclic garbage collector walks every tracked container alive, in the collections
that a test's own allocations set off. While each loaded interaction was built whole (four
tracked objects, two more in the tape's index), replaying a request from a 10,000-interaction
cassette cost about 7% more than from a one-interaction cassette, and with ``gc.freeze()``
after loading the difference was gone. promptvcr now holds a loaded cassette in compact form
(:mod:`promptvcr.files.loaded`); this measures what is left, with the collector's default
settings, as a test process has them.

Contenders, each a cassette of the openai chat completions of :mod:`bench_floor`, read from
the parse cache (as in any run after the first), entered once each in a context of its own
(:func:`contextvars.copy_context`), so that all stay loaded and samples alternate between
them: ``n=1``, ``n=2,000`` and ``n=10,000`` interactions. Each sample is 20 requests of the
openai SDK's default client, for a random interaction of the cassette (``--where random``,
a test's usual request) or always its first (``--where first``: the same bytes for every
size, so that only what the cassette holds differs). Times are process CPU time; a ratio is
the median of the ratios of samples taken side by side, with its quartiles.

Because all three stay loaded in one process, what the collector walks is walked for all
of them alike: that run shows what a cassette's size costs a request apart from the
collector (the data it touches, an interaction built on its first use). ``--apart`` runs
each size in a process of its own instead (rounds of three processes, the order rotating),
as a test process holds one cassette: there the collector walks only that cassette's
objects, which is what issue 48 measured and removed. Its ratios are medians over rounds
of each round's ratio.

``--check`` exits 1 when a ratio is above 1.05 (the regression guard; the goal is 1.02).

Run: python benchmarks/bench_gc.py [--samples N] [--where random|first] [--apart ROUNDS] [--check]
"""

from __future__ import annotations

import argparse
import contextvars
import gc
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_floor import OpenAIChat, interactions, quartiles, run_sync, write_promptvcr

import promptvcr

SIZES = (1, 2_000, 10_000)
GUARD = 1.05


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=150)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--where", choices=("random", "first"), default="random")
    parser.add_argument("--check", action="store_true", help=f"exit 1 when a ratio is above {GUARD}")
    parser.add_argument("--apart", type=int, metavar="ROUNDS", help="each size in a process of its own")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # a process of --apart: SIZE:FOLDER
    args = parser.parse_args()
    if args.child:
        size, _, folder = args.child.partition(":")
        print(_one_alone(int(size), Path(folder), args))
        return 0
    if args.apart:
        return _apart(args)
    random.seed(7)
    work = OpenAIChat(stream=False)
    with tempfile.TemporaryDirectory() as tmp:
        paths = _cassettes(Path(tmp), work)
        client = work.client(False)
        contexts = {n: contextvars.copy_context() for n in SIZES}
        cassettes = {n: promptvcr.use_cassette(paths[n], allow_playback_repeats=True) for n in SIZES}
        for n in SIZES:
            contexts[n].run(cassettes[n].__enter__)
            contexts[n].run(run_sync, work, client, [0])  # warm
        print(
            f"collector: {'on' if gc.isenabled() else 'OFF'}, thresholds {gc.get_threshold()}; "
            f"{args.samples} samples of {args.requests} requests ({args.where} interaction)"
        )
        times: dict[int, list[float]] = {n: [] for n in SIZES}
        for s in range(args.samples):
            order = list(SIZES[s % len(SIZES) :] + SIZES[: s % len(SIZES)])
            for n in order if s % 2 == 0 else order[::-1]:
                picks = [0 if args.where == "first" else random.randrange(n) for _ in range(args.requests)]
                times[n].append(contexts[n].run(run_sync, work, client, picks))
        for n in SIZES:
            contexts[n].run(cassettes[n].__exit__, None, None, None)
    failed = False
    base = times[SIZES[0]]
    print(f"n=1: {statistics.median(base) * 1e6:.0f} us per request (median)")
    for n in SIZES[1:]:
        q1, ratio, q3 = quartiles([t / b for t, b in zip(times[n], base, strict=True)])
        flag = "" if ratio <= GUARD else f"  ABOVE {GUARD}"
        failed = failed or bool(flag)
        middle = statistics.median(times[n]) * 1e6
        print(f"n={n:,}: {middle:.0f} us, ratio to n=1 {ratio:.3f} [{q1:.3f}, {q3:.3f}]{flag}")
    return 1 if failed and args.check else 0


def _cassettes(folder: Path, work: OpenAIChat) -> dict[int, Path]:
    """One cassette per size, written and read once: the first read fills the parse cache."""
    os.environ["PROMPTVCR_CACHE_DIR"] = str(folder / "cache")
    items = interactions(work, max(SIZES))
    paths = {}
    for n in SIZES:
        paths[n] = folder / f"c{n}.json"
        write_promptvcr(paths[n], items[:n])
        with promptvcr.use_cassette(paths[n]):
            pass
    return paths


def _one_alone(n: int, folder: Path, args: argparse.Namespace) -> float:
    """In a process of its own: the median seconds per request replayed from the ``n`` cassette."""
    os.environ["PROMPTVCR_CACHE_DIR"] = str(folder / "cache")
    work = OpenAIChat(stream=False)
    client = work.client(False)
    times = []
    with promptvcr.use_cassette(folder / f"c{n}.json", allow_playback_repeats=True):
        run_sync(work, client, [0])  # warm
        for _ in range(args.samples):
            picks = [0 if args.where == "first" else random.randrange(n) for _ in range(args.requests)]
            times.append(run_sync(work, client, picks))
    return statistics.median(times)


def _apart(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _cassettes(folder, OpenAIChat(stream=False))
        rounds: list[dict[int, float]] = []
        for r in range(args.apart):
            order = list(SIZES[r % len(SIZES) :] + SIZES[: r % len(SIZES)])
            found = {}
            for n in order:
                command = [sys.executable, __file__, "--child", f"{n}:{folder}", "--where", args.where]
                command += ["--samples", str(args.samples), "--requests", str(args.requests)]
                found[n] = float(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
            rounds.append(found)
    print(
        f"each size in a process of its own: {args.apart} rounds of {args.samples} x {args.requests} "
        f"requests ({args.where} interaction), collector on"
    )
    print(f"n=1: {statistics.median(r[1] for r in rounds) * 1e6:.0f} us per request (median)")
    failed = False
    for n in SIZES[1:]:
        q1, ratio, q3 = quartiles([r[n] / r[1] for r in rounds])
        flag = "" if ratio <= GUARD else f"  ABOVE {GUARD}"
        failed = failed or bool(flag)
        print(f"n={n:,}: ratio to n=1 {ratio:.3f} [{q1:.3f}, {q3:.3f}]{flag}")
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
