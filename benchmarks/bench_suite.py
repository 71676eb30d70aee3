"""A whole pytest suite: 200 tests, each replaying one openai request (issue 22).

Contenders, each a fresh ``pytest`` process over the same generated suite, interleaved
round by round (alternating the order) on this noisy shared machine:

* ``floor``             a fixture builds the same openai client per test, its default httpx2
                        client sending to a bare transport that serves the recorded bytes;
                        promptvcr's plugin is off (``-p no:promptvcr``);
* ``promptvcr``         ``@pytest.mark.promptvcr``, one cassette per test;
* ``pytest-recording``  ``@pytest.mark.vcr``, one vcrpy cassette per test, ``--record-mode=none``
                        (installed apart from the venv: ``pip install --target DIR pytest-recording``,
                        then PYTEST_RECORDING_PATH=DIR; skipped without it);
* ``unmigrated``        the same suite and vcrpy cassettes run on promptvcr, without pytest-recording
                        (its vcr compatibility: issue 48), each run after the first reading the
                        conversions kept in the parse cache's folder, as a developer's runs do.

Each is run serially and with ``-n 2`` (pytest-xdist). Times are wall-clock seconds of the
whole process; ratios are medians of the ratios of runs taken side by side, with quartiles.
Each is also given in CPU seconds (user + system) of the whole process tree, workers included:
on this shared 2-core machine a ``-n 2`` run's wall clock moves by +-3% between rounds, more
than the contenders differ, while the work each run does moves by about 1%.
Last, what promptvcr adds to one test's setup and teardown: the median of each test's setup +
teardown (timed by a small plugin, less the suite's own client fixture), promptvcr's run minus
the floor's; and, exact on any host, the Python and C functions called per test (setup, call
and teardown of the second half of the tests, counted by ``sys.setprofile``), which tells
whether a change made the path a test takes shorter when its time is lost in the noise.

Run: [PYTEST_RECORDING_PATH=DIR] [PROMPTVCR_SRC=other/src] python benchmarks/bench_suite.py
     [--rounds N] [--tests N] [--serial]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_floor import OpenAIChat, sent_bodies, write_promptvcr, write_vcrpy

from promptvcr.cassettes.models import Interaction, Request, Response

CONFTEST = """
import json, sys
import httpx2, openai, pytest
sys.path.insert(0, {bench!r})
from bench_floor import FloorTransport, OpenAIChat, bare
from promptvcr.files import fileformat
from pathlib import Path

SERVED = fileformat.loads(Path({served!r}).read_text(), Path({served!r}))
TRANSPORT = FloorTransport(OpenAIChat(False), SERVED)

@pytest.fixture
def client(request):
    if request.config.getoption("--floor"):
        return bare(OpenAIChat(False).client(False), TRANSPORT)
    return OpenAIChat(False).client(False)

def pytest_addoption(parser):
    parser.addoption("--floor", action="store_true")
"""

TEST = """
import pytest

{marker}
def test_{i}(client):
    reply = client.chat.completions.create(messages=[{{"role": "user", "content": "question number {i}"}}],
                                           model="gpt-4o")
    assert reply.choices[0].message.content == "answer {i}"
"""


#: Times each test's setup and teardown, less the suite's own ``client`` fixture (the same in
#: every contender, and 30 times larger than what is measured); printed at the end as a median.
#: The floor's are subtracted from promptvcr's: what promptvcr adds per test.
TIMING_PLUGIN = """
import statistics, time
import pytest

SPENT = []
CLIENT = []


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    started = time.perf_counter()
    try:
        return (yield)
    finally:
        if fixturedef.argname == "client":
            CLIENT.append(time.perf_counter() - started)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    started, CLIENT[:] = time.perf_counter(), []
    try:
        return (yield)
    finally:
        SPENT.append(time.perf_counter() - started - sum(CLIENT))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    started = time.perf_counter()
    try:
        return (yield)
    finally:
        SPENT[-1] += time.perf_counter() - started


def pytest_unconfigure(config):
    if SPENT:
        print("SETUP+TEARDOWN", statistics.median(SPENT))
"""

#: Counts the functions (Python and C) called while each test of the second half runs.
CALLS_PLUGIN = """
import sys
import pytest

CALLS = [0]
TESTS = [0, 0]


def _count(frame, event, arg):
    if event == "call" or event == "c_call":
        CALLS[0] += 1


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    TESTS[0] += 1
    counted = TESTS[0] > len(item.session.items) // 2
    if counted:
        TESTS[1] += 1
        sys.setprofile(_count)
    try:
        return (yield)
    finally:
        sys.setprofile(None)


def pytest_unconfigure(config):
    if TESTS[1]:
        print("CALLS", CALLS[0] / TESTS[1])
"""


def make_suite(root: Path, tests: int) -> None:
    work = OpenAIChat(stream=False)
    items = [  # each request body as the SDK sends it: what a cassette recorded through it holds
        Interaction(
            Request("POST", work.url, {"content-type": "application/json"}, body),
            Response(200, {"content-type": "application/json"}, work.chunks(i)),
        )
        for i, body in enumerate(sent_bodies(work, tests))
    ]
    write_promptvcr(root / "served.yaml", items)
    bench = str(Path(__file__).resolve().parent)
    for variant, marker in (("pvcr", "@pytest.mark.promptvcr"), ("vcr", "@pytest.mark.vcr"), ("floor", "")):
        folder = root / variant
        folder.mkdir()
        (folder / "conftest.py").write_text(CONFTEST.format(bench=bench, served=str(root / "served.yaml")))
        for i in range(tests):
            (folder / f"test_{i}.py").write_text(textwrap.dedent(TEST.format(i=i, marker=marker)))
            (folder / "cassettes" / f"test_{i}").mkdir(parents=True, exist_ok=True)
            if variant == "pvcr":
                write_promptvcr(folder / "cassettes" / f"test_{i}" / f"test_{i}.yaml", [items[i]])
            elif variant == "vcr":
                write_vcrpy(folder / "cassettes" / f"test_{i}" / f"test_{i}.yaml", [items[i]])
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "bench_timing_plugin.py").write_text(TIMING_PLUGIN)
    (root / "bench_calls_plugin.py").write_text(CALLS_PLUGIN)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(root: Path, name: str, workers: bool, cpu: list[float] | None = None) -> float:
    """The wall-clock seconds of one run; its CPU seconds (every process of it) appended to ``cpu``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    env["PROMPTVCR_CACHE_DIR"] = str(root / "cache")  # this run's, filled by the warm-up runs
    if os.environ.get("PROMPTVCR_SRC"):  # another promptvcr (a "before" tree) in every variant
        env["PYTHONPATH"] = os.environ["PROMPTVCR_SRC"]
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(root)]
    if workers:
        args += ["-n", "2"]
    if name in ("floor", "promptvcr"):
        args += _suite_args(root, name)
    elif name == "unmigrated":
        args += [str(root / "vcr"), "--record-mode=none"]
    else:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (os.environ["PYTEST_RECORDING_PATH"], os.environ.get("PROMPTVCR_SRC")) if p
        )
        args += ["-p", "no:promptvcr", str(root / "vcr"), "--record-mode=none"]
    started, cpu_before = time.perf_counter(), _children_cpu()
    done = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True)
    took = time.perf_counter() - started
    if cpu is not None:  # xdist's workers are reaped by pytest, so their time is in its children's
        cpu.append(_children_cpu() - cpu_before)
    if done.returncode:
        raise RuntimeError(f"{name}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    return took


def _suite_args(root: Path, name: str) -> list[str]:
    """pytest's arguments for the suite of ``name``: the floor's or promptvcr's."""
    if name == "floor":
        return ["-p", "no:promptvcr", str(root / "floor"), "--floor"]
    return [str(root / "pvcr")]


def _plugin_figure(root: Path, name: str, plugin: str, label: str) -> float:
    """One serial run of ``name``'s suite with ``plugin``: the figure it prints after ``label``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), os.environ.get("PROMPTVCR_SRC")) if p)
    args = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        plugin,
        "--rootdir",
        str(root),
    ]
    done = subprocess.run(
        [*args, *_suite_args(root, name)], cwd=root, env=env, capture_output=True, text=True
    )
    line = next((line for line in done.stdout.splitlines() if line.startswith(label)), None)
    if line is None:
        raise RuntimeError(done.stdout[-2000:] + done.stderr[-2000:])
    return float(line.split()[1])


def fixture_cost(root: Path, rounds: int) -> tuple[float, float]:
    """Median setup + teardown of one test, serial: (floor, promptvcr), medians over rounds."""
    spent: dict[str, list[float]] = {"floor": [], "promptvcr": []}
    for r in range(rounds):
        for name in ("floor", "promptvcr") if r % 2 == 0 else ("promptvcr", "floor"):
            spent[name].append(_plugin_figure(root, name, "bench_timing_plugin", "SETUP+TEARDOWN"))
    return statistics.median(spent["floor"]), statistics.median(spent["promptvcr"])


def calls_per_test(root: Path) -> tuple[float, float]:
    """Functions called per test, serial: (floor, promptvcr). The same every run (one run each)."""
    return (
        _plugin_figure(root, "floor", "bench_calls_plugin", "CALLS"),
        _plugin_figure(root, "promptvcr", "bench_calls_plugin", "CALLS"),
    )


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else values * 3
    return q1, q2, q3


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument(
        "--serial", action="store_true", help="serial runs only (no -n 2, no per-test figures): quicker"
    )
    args = parser.parse_args()
    recording = ["pytest-recording"] if os.environ.get("PYTEST_RECORDING_PATH") else []
    names = ["floor", "promptvcr", "unmigrated", *recording]
    if not recording:
        print("pytest-recording: not given (PYTEST_RECORDING_PATH), skipped")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_suite(root, args.tests)
        for workers in (False,) if args.serial else (False, True):
            for name in names:
                run(root, name, workers)  # bytecode compiled, caches warm
            times: dict[str, list[float]] = {name: [] for name in names}
            cpu: dict[str, list[float]] = {name: [] for name in names}
            for r in range(args.rounds):
                for name in names if r % 2 == 0 else names[::-1]:
                    times[name].append(run(root, name, workers, cpu[name]))
            label = "-n 2" if workers else "serial"
            for measure, taken in (("wall", times), ("cpu", cpu)):
                floor = taken["floor"]
                middle = statistics.median(floor)
                print(f"{args.tests} tests, {label}, {measure}: floor {middle:.2f}s", end="")
                for name in names[1:]:
                    q1, ratio, q3 = quartiles([t / f for t, f in zip(taken[name], floor, strict=True)])
                    per_test = (statistics.median(taken[name]) - statistics.median(floor)) / args.tests * 1e3
                    print(
                        f"; {name} {statistics.median(taken[name]):.2f}s = {ratio:.3f} [{q1:.3f}, {q3:.3f}] "
                        f"({per_test:+.1f} ms/test)",
                        end="",
                    )
                if "pytest-recording" in taken:
                    q1, ratio, q3 = quartiles(
                        [u / r for u, r in zip(taken["unmigrated"], taken["pytest-recording"], strict=True)]
                    )
                    print(f"; unmigrated/pytest-recording {ratio:.3f} [{q1:.3f}, {q3:.3f}]", end="")
                print(flush=True)
        if args.serial:
            return
        floor_cost, ours_cost = fixture_cost(root, args.rounds)
        print(
            f"per test, setup + teardown (median): floor {floor_cost * 1e3:.3f} ms, promptvcr "
            f"{ours_cost * 1e3:.3f} ms: promptvcr adds {(ours_cost - floor_cost) * 1e3:.3f} ms"
        )
        floor_calls, ours_calls = calls_per_test(root)
        print(
            f"per test, functions called (exact): floor {floor_calls:,.0f}, promptvcr {ours_calls:,.0f} "
            f"(+{ours_calls - floor_calls:,.0f})"
        )


if __name__ == "__main__":
    main()
