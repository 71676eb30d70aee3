"""Many writers, one cassette: threads, asyncio tasks and pytest-xdist workers record at once.

Each test counts what was written against what the file holds (nothing lost, nothing
duplicated) and checks the order per key: the answers recorded for one request come back
in replay in the order the provider gave them (the fake provider numbers its answers).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
from collections import defaultdict
from pathlib import Path

import sdk_calls

import promptvcr
from promptvcr.files import fileformat

THREADS, PER_THREAD = 8, 12
TASKS, PER_TASK = 50, 4


def _prompts_in_file(path: Path) -> list[str]:
    interactions = fileformat.loads(path.read_text(), path)
    stored = [fileformat.interaction_to_data(i) for i in interactions]
    return [item["request"]["json"]["messages"][0]["content"] for item in stored]


def _ask(client, prompt: str) -> str:  # type: ignore[no-untyped-def]
    reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
    return str(reply.choices[0].message.content)


def _replay_in_order(path: Path, answers: dict[str, list[str]]) -> None:
    """Each key's answers replay in the order they were received while recording."""
    client = sdk_calls.openai_client(sdk_calls.OFFLINE)
    with promptvcr.use_cassette(path) as cassette:
        for prompt, received in answers.items():
            assert [_ask(client, prompt) for _ in received] == received
    assert cassette.all_played


def test_threads_recording_into_one_cassette_lose_and_duplicate_nothing(tmp_path: Path, provider) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "threads.yaml"
    answers: dict[str, list[str]] = defaultdict(list)
    start = threading.Barrier(THREADS)

    def worker(number: int) -> None:
        client = sdk_calls.openai_client(provider.base_url)
        start.wait()
        for _ in range(PER_THREAD):
            answers[f"thread {number}"].append(_ask(client, f"thread {number}"))

    with promptvcr.use_cassette(path, record_mode="record"):
        threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    written = THREADS * PER_THREAD
    found = _prompts_in_file(path)
    assert len(found) == written == len(provider.requests)
    assert sorted(found) == sorted(f"thread {n}" for n in range(THREADS) for _ in range(PER_THREAD))
    assert all(len(set(a)) == PER_THREAD for a in answers.values())  # distinct answers per key
    _replay_in_order(path, answers)


def test_asyncio_tasks_recording_into_one_cassette_lose_nothing(tmp_path: Path, provider) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "tasks.json"
    answers: dict[str, list[str]] = defaultdict(list)

    async def task(client, number: int) -> None:  # type: ignore[no-untyped-def]
        for _ in range(PER_TASK):
            reply = await client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": f"task {number}"}]
            )
            answers[f"task {number}"].append(str(reply.choices[0].message.content))

    async def main() -> None:
        client = sdk_calls.openai_async(provider.base_url)
        async with promptvcr.use_cassette(path, record_mode="record"):
            await asyncio.gather(*(task(client, n) for n in range(TASKS)))

    asyncio.run(main())
    found = _prompts_in_file(path)
    assert len(found) == TASKS * PER_TASK == len(provider.requests)
    assert sorted(found) == sorted(f"task {n}" for n in range(TASKS) for _ in range(PER_TASK))
    _replay_in_order(path, answers)


XDIST_TESTS, CASSETTES, PER_TEST = 40, 4, 3

XDIST_MODULE = f"""
import os
from pathlib import Path

import openai
import pytest

import promptvcr

CASSETTES = Path(os.environ["CASSETTE_DIR"])


@pytest.mark.parametrize("number", range({XDIST_TESTS}))
def test_record(number):
    client = openai.OpenAI(api_key="sk-test", base_url=os.environ["OPENAI_BASE_URL"])
    with promptvcr.use_cassette(CASSETTES / f"shared-{{number % {CASSETTES}}}.yaml", record_mode="record"):
        for step in range({PER_TEST}):
            client.chat.completions.create(
                model="gpt-4o", messages=[{{"role": "user", "content": f"test {{number}} step {{step}}"}}]
            )
"""


def test_four_xdist_workers_recording_into_shared_cassettes(tmp_path: Path, provider) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "test_shared.py").write_text(textwrap.dedent(XDIST_MODULE))
    cassettes = tmp_path / "cassettes"
    env = {**os.environ, "CASSETTE_DIR": str(cassettes), "OPENAI_BASE_URL": provider.openai_base_url}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only xdist: the workers start in seconds
    env.pop("PROMPTVCR_RECORD_MODE", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "xdist", "-n", "4", "-p", "no:cacheprovider"]
    result = subprocess.run(
        [*command, "test_shared.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{XDIST_TESTS} passed" in result.stdout
    written = XDIST_TESTS * PER_TEST
    found: list[str] = []
    for index in range(CASSETTES):
        prompts = _prompts_in_file(cassettes / f"shared-{index}.yaml")
        tests = [n for n in range(XDIST_TESTS) if n % CASSETTES == index]
        assert sorted(prompts) == sorted(f"test {n} step {s}" for n in tests for s in range(PER_TEST))
        for n in tests:  # each test's steps in order: each is appended as it completes (issue 42)
            positions = [prompts.index(f"test {n} step {s}") for s in range(PER_TEST)]
            assert positions == sorted(positions)
        found += prompts
    assert len(found) == written == len(provider.requests)
