"""A suite in another language, driven through a standalone ``promptvcr serve``, feeds ``prune``.

Issue 42 left it: outside pytest nothing turned what serve played into a usage record, so
``promptvcr prune`` had no proof for those cassettes. Now ``serve --usage-record FILE`` writes
the record of its run as it stops: every cassette it left (started per test, named by the
header, its command line's), which interactions no use played, and why the run cannot vouch
for the suite (a test whose stop said ``passed: false``, a miss, a run killed or still going).
A real ``promptvcr serve`` process, the openai SDK as the suite's client, the real ``prune``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
import yaml
from fake_provider import FakeProvider

from promptvcr.server import serve

HEADER = "x-promptvcr-cassette"


def _ask(base_url: str, text: str, cassette: Path | None = None) -> str:
    headers = {HEADER: str(cassette)} if cassette is not None else None
    client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0, default_headers=headers)
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
    return answer.choices[0].message.content or ""


def _count(path: Path) -> int:
    return len(yaml.safe_load(path.read_text())["interactions"])


def _prune(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "promptvcr", "prune", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:
    """Three cassettes of two answers each, recorded through serve by each route: ``one`` started
    per test, ``two`` named by the header, ``main`` the command line's."""
    folder = tmp_path / "cassettes"
    folder.mkdir()
    one, two, main = folder / "one.yaml", folder / "two.yaml", folder / "main.yaml"
    with (
        FakeProvider() as fake,
        serve(main, record_mode="record", upstreams={"openai": fake.base_url}) as server,
    ):
        base = f"{server.url}/openai/v1"
        server.admin("start", {"cassette": str(one), "record_mode": "record"})
        _ask(base, "one a"), _ask(base, "one b")
        server.admin("stop", {"cassette": str(one)})
        _ask(base, "two a", two), _ask(base, "two b", two)
        _ask(base, "main a"), _ask(base, "main b")
    assert [_count(path) for path in (one, two, main)] == [2, 2, 2]
    yield one, two, main


def _suite(base: str, server: object, one: Path, two: Path, *, passed: bool = True) -> None:
    """The other language's suite: one test per cassette, each playing part of it or all."""
    admin = server.admin  # type: ignore[attr-defined]
    admin("start", {"cassette": str(one)})
    assert _ask(base, "one a") == "echo 1: one a"
    assert admin("stop", {"cassette": str(one), "passed": passed})[1]["ok"]
    assert _ask(base, "two a", two) == "echo 3: two a"
    assert _ask(base, "two b", two) == "echo 4: two b"
    assert _ask(base, "main a") == "echo 5: main a"


def test_prune_keeps_what_a_served_run_played_and_removes_what_it_proves_unplayed(
    recorded: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two, main = recorded
    fragments = tmp_path / "fragments"
    fragments.mkdir()
    monkeypatch.setenv("PROMPTVCR_USAGE_DIR", str(fragments))  # a run that collects fragments, too
    record = tmp_path / ".promptvcr" / "usage-node.json"
    with serve(main, record_mode="replay", options=["--usage-record", str(record)]) as server:
        _suite(f"{server.url}/openai/v1", server, one, two)
    assert server.process.returncode == 0, server.log_text

    # Each cassette's use went where in-process ones go: the fragment and the run's record.
    data = json.loads(record.read_text())
    assert data["incomplete"] == []
    used = {
        Path(path).name: (usage["interactions"], usage["unplayed"])
        for path, usage in data["cassettes"].items()
    }
    assert used == {"one.yaml": (2, [1]), "two.yaml": (2, []), "main.yaml": (2, [1])}
    (fragment,) = fragments.glob("*.json")
    noted = json.loads(fragment.read_text())["cassettes"]
    assert {Path(path).name: usage["unplayed"] for path, usage in noted.items()} == {
        "one.yaml": [1],
        "two.yaml": [],
        "main.yaml": [1],
    }

    planned = _prune("--record", record, "--dry-run", one.parent)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert f"would remove interactions[1] from {one}" in planned.stdout
    assert f"would remove interactions[1] from {main}" in planned.stdout
    assert str(two) not in planned.stdout
    assert [_count(path) for path in (one, two, main)] == [2, 2, 2]  # a plan changes nothing

    pruned = _prune("--record", record, one.parent)
    assert pruned.returncode == 0, pruned.stdout + pruned.stderr
    assert [_count(path) for path in (one, two, main)] == [1, 2, 1]

    # The same suite replays from what prune kept, with the provider gone.
    monkeypatch.delenv("PROMPTVCR_USAGE_DIR")
    with serve(main, record_mode="replay") as server:
        _suite(f"{server.url}/openai/v1", server, one, two)
    assert server.process.returncode == 0, server.log_text
    assert all(entry["missed"] == [] for entry in server.report["cassettes"])


def test_a_failed_test_or_an_unfinished_run_proves_nothing_unused(
    recorded: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    one, two, main = recorded
    record = tmp_path / "usage.json"
    with serve(main, record_mode="replay", options=["--usage-record", str(record)]) as server:
        # While the run goes on (or after a kill), its record says so.
        running = _prune("--record", record, "--dry-run", one.parent)
        assert running.returncode == 1 and "the run did not end" in running.stdout
        _suite(f"{server.url}/openai/v1", server, one, two, passed=False)

    data = json.loads(record.read_text())
    unplayed = {Path(path).name: usage["unplayed"] for path, usage in data["cassettes"].items()}
    assert unplayed["one.yaml"] == []  # the failed test may have needed every interaction
    refused = _prune("--record", record, one.parent)
    assert refused.returncode == 1 and "1 test(s) failed" in refused.stdout, refused.stdout
    assert [_count(path) for path in (one, two, main)] == [2, 2, 2]
