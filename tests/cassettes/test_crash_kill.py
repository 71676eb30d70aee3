"""A writer killed with SIGKILL at random points never leaves a cassette broken or shorter.

A long-lived helper process imports promptvcr and the openai SDK once, then for each round
forks a writer that records into three cassettes (YAML and JSON) in a loop, lets it run a
random time and kills it with SIGKILL. Between rounds this test loads every cassette with
the real loader: it must parse, and hold what it held before plus the saves the writer
reported, plus at most the one save it made but had no time to report.
The cassettes are seeded with a large interaction so that a kill often lands mid-write.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from promptvcr.files import fileformat

#: Kills per run: 40 land a dozen mid-write here, which is what the test needs; the thorough
#: profile (``HYPOTHESIS_PROFILE=thorough``, for a change to the write path) kills 300 times.
KILLS = 300 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 40
NAMES = ("a.yaml", "b.json", "c.yaml")

WRITER = """
import json, os, random, select, signal, sys, time
from pathlib import Path
import openai
import promptvcr

folder, base_url, kills, seed = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
names = sys.argv[5:]
rng = random.Random(seed)
# Widen the window between the temporary file and the rename (the real write path, only
# slower to flush), so that a good share of the random kills land in the middle of a write.
_fsync = os.fsync
def slow_fsync(fd):
    time.sleep(0.02)
    _fsync(fd)
os.fsync = slow_fsync
# One real call before forking: the interceptors and the SDK's lazy imports load once
# here, so each forked writer starts saving at once.
with openai.OpenAI(api_key="sk-test", base_url=base_url) as warm_up:
    with promptvcr.use_cassette(folder / "unused.yaml", record_mode="passthrough"):
        warm_up.chat.completions.create(model="m", messages=[{"role": "user", "content": "warm up"}])


def write_forever(report, round_):
    client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
    step = 0
    while True:
        name = names[step % len(names)]
        with promptvcr.use_cassette(folder / name, record_mode="record"):
            prompt = f"{name} round {round_} step {step}"
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": prompt}])
        os.write(report, f"{name}\\n".encode())
        step += 1


for round_ in range(kills):
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            write_forever(write_end, round_)
        finally:
            os._exit(1)
    os.close(write_end)
    # Killed at a random point of its next save or so, however long a save takes on this
    # host: a fixed 0.1-0.35 s let a loaded machine kill every writer before its first save.
    started = time.monotonic()
    ready, _, _ = select.select([read_end], [], [], 30)  # its first save reported, or it hangs
    first = os.read(read_end, 4096) if ready else b""  # (b"" too if it died)
    time.sleep(rng.uniform(0, time.monotonic() - started))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    with os.fdopen(read_end) as reports:
        saved = (first.decode() + reports.read()).split()
    print(json.dumps({name: saved.count(name) for name in names}), flush=True)
    if sys.stdin.readline().strip() != "next":
        break
"""


CLEAN_SAVE = """
import sys, openai, promptvcr
with promptvcr.use_cassette(sys.argv[1], record_mode="record"):
    openai.OpenAI(api_key="sk-test", base_url=sys.argv[2]).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "last"}])
"""


def _prompts(path: Path) -> list[str]:
    stored = fileformat.load_document(path.read_text(encoding="utf-8"), path)
    fileformat.loads(path.read_text(encoding="utf-8"), path)  # the full loader accepts it too
    return [item["request"].get("json", {}).get("messages", [{}])[0].get("content", "") for item in stored]


def _seed(path: Path) -> None:
    big = {"choices": [{"message": {"content": "x" * 150_000}}]}
    data = [
        {
            "request": {"method": "POST", "url": "http://seed/", "json": {"seed": True}},
            "response": {"status": 200, "headers": {"content-type": "application/json"}, "json": big},
        }
    ]
    path.write_text(fileformat.dumps(data, path), encoding="utf-8")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork to kill writers cheaply")
def test_sigkill_at_random_points_leaves_every_cassette_whole(tmp_path: Path, provider) -> None:  # type: ignore[no-untyped-def]
    for name in NAMES:
        _seed(tmp_path / name)
    held = {name: _prompts(tmp_path / name) for name in NAMES}
    seed = random.randrange(1_000_000)
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(WRITER),
            str(tmp_path),
            provider.openai_base_url,
            str(KILLS),
            str(seed),
            *NAMES,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdin is not None and writer.stdout is not None
    intact = mid_write = saves = 0
    torn_temp_files: set[str] = set()
    try:
        for _ in range(KILLS):
            line = writer.stdout.readline()
            assert line, f"the writer helper died (seed {seed})"
            reported = json.loads(line)
            for name in NAMES:
                now = _prompts(tmp_path / name)  # raises if a kill broke the file
                before = held[name]
                assert now[: len(before)] == before, f"{name} lost content (seed {seed})"
                added = len(now) - len(before)
                assert added in (reported[name], reported[name] + 1), (name, added, reported, seed)
                mid_write += added == reported[name] + 1
                held[name] = now
                saves += added
            torn_temp_files.update(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp"))
            intact += 1
            writer.stdin.write("next\n")
            writer.stdin.flush()
    finally:
        writer.stdin.close()
        writer.wait(timeout=30)
    assert intact == KILLS
    print(
        f"{KILLS} kills, {intact} times every cassette intact; {saves} saves; {mid_write} kills after an "
        f"unreported save; {len(torn_temp_files)} kills mid-write (temporary file left)"
    )
    assert saves >= KILLS / 5 and len(torn_temp_files) >= 3, "too few kills landed in writes"
    # The next write of a cassette clears what a killed write left behind.
    for name in NAMES:
        command = [sys.executable, "-c", CLEAN_SAVE, str(tmp_path / name), provider.openai_base_url]
        subprocess.run(command, check=True)
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name not in NAMES)
    assert leftovers == [], f"temporary files left in the cassette folder: {leftovers}"


def test_the_next_locked_write_removes_what_a_killed_write_left(tmp_path: Path) -> None:
    from promptvcr.files import storage

    path = tmp_path / "c.yaml"
    torn = tmp_path / ".c.yaml.k1ll3d.tmp"
    torn.write_text("interactions:\n- request: {method: PO")
    other = tmp_path / ".other.yaml.k1ll3d.tmp"  # another cassette's: not ours to touch
    other.write_text("x")
    with storage.cassette_lock(path):
        storage.write_atomic(path, fileformat.dumps([], path))
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.yaml.k1ll3d.tmp", "c.yaml"]
