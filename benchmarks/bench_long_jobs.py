"""Long jobs: how fast each recorded flow replays, against the pace it was recorded at.

The four flows of tests/longjob_flows.py (OpenAI files + batches with a user polling loop,
Anthropic message batches, google-genai ``generate_videos`` polled by ``operations.get``,
OpenAI ``vector_stores.files.upload_and_poll``) are recorded once against the jobs server of
tests/fake_jobs.py, with 30-40 s of waits each: the user's loop sleeps 10 s between polls and
the server declares 10 s waits to the SDK's poll helper. Those sleeps are made instant while
recording (the server does not care how long a client waits), so the recorded pace is the
recording's wall time plus the waits asked for: what a live run against a provider whose job
took that long would have taken at the least. Each flow is then replayed ``--rounds`` times
with the server stopped (``timing="fast"``, the real clock), and the median replay reported
with its ratio to the recorded pace.

``--check`` makes it a guard: it exits 1 when a median replay takes 1 s or more (issue 57's
bar); tests/longjobs assert only that replay beats the waits, with a huge margin.

Run: python benchmarks/bench_long_jobs.py [--rounds N] [--check]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_jobs import FakeJobs
from longjob_flows import FLOWS, record_flows

from promptvcr import use_cassette

#: The bar ``--check`` holds each median replay to, in seconds.
BAR = 1.0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--check", action="store_true", help="exit 1 when a median replay takes 1 s or more")
    args = parser.parse_args()
    over = []
    with tempfile.TemporaryDirectory(prefix="bench-long-jobs-") as scratch:
        folder = Path(scratch)
        with FakeJobs(polls=4) as jobs:
            recorded = record_flows(folder, jobs)
        print(f"{'flow':<14} {'recorded pace':>14} {'of it waits':>12} {'replay (median)':>16} {'ratio':>9}")
        for name, flow in recorded.items():
            times = []
            for round_ in range(args.rounds):
                started = time.perf_counter()
                with use_cassette(flow.cassette, timing="fast") as cassette:
                    replay = FLOWS[name](flow.base_url, folder / f"{name}-{round_}.out")
                times.append(time.perf_counter() - started)
                assert replay.result == flow.live.result and not cassette.missed, name
            waits = flow.live.asked + flow.declared
            pace, median = flow.live.seconds + waits, statistics.median(times)
            replayed = f"{median * 1000:>13.1f} ms"
            print(f"{name:<14} {pace:>12.1f} s {waits:>10.0f} s {replayed} {pace / median:>8.0f}x")
            if median >= BAR:
                over.append(name)
    if args.check and over:
        print(f"over the {BAR:g} s bar: {', '.join(over)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
