"""Scope: each cassette serves the code that entered it, with the real openai SDK on loopback.

Threads and tasks record and replay separate cassettes at the same time; a task leaves its
cassette while another's request is in flight; cassettes nest; a worker thread that entered
no cassette goes to the only active one, and fails closed while several are active. Every
test counts the requests sent against those found in the right file (none in a wrong one,
none lost); ``test_zz_totals`` prints the totals (``-s``).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
from collections import Counter
from pathlib import Path

import pytest
import sdk_calls
from fake_provider import FakeProvider

import promptvcr
from promptvcr import Request, activation
from promptvcr.files import fileformat

THREADS, PER_THREAD = 4, 6
TASKS, PER_TASK = 6, 4
totals: Counter[str] = Counter()


def _prompts(path: Path) -> list[str]:
    if not path.exists():
        return []
    stored = [fileformat.interaction_to_data(i) for i in fileformat.loads(path.read_text(), path)]
    return [item["request"]["json"]["messages"][0]["content"] for item in stored]


def _tally(sent: dict[Path, list[str]]) -> None:
    """Each file holds exactly the prompts sent for it: counted for the totals, then asserted."""
    every_file = {path: _prompts(path) for path in sent}
    for path, prompts in sent.items():
        found = every_file[path]
        right = sum(min(found.count(p), prompts.count(p)) for p in set(prompts))
        wrong = len(found) - right
        totals["sent"] += len(prompts)
        totals["right file"] += right
        totals["wrong file"] += wrong
        totals["lost"] += len(prompts) - right
        assert sorted(found) == sorted(prompts), path


def _content(request: Request) -> str:
    return str(json.loads(request.content)["messages"][0]["content"])


def _ask(client, prompt: str) -> str:  # type: ignore[no-untyped-def]
    reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
    return str(reply.choices[0].message.content)


async def _ask_async(client, prompt: str) -> str:  # type: ignore[no-untyped-def]
    reply = await client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": prompt}]
    )
    return str(reply.choices[0].message.content)


def test_threads_record_and_replay_their_own_cassettes_at_once(
    tmp_path: Path, provider: FakeProvider
) -> None:
    paths = {n: tmp_path / f"thread-{n}.yaml" for n in range(THREADS)}
    answers: dict[int, list[str]] = {}
    start = threading.Barrier(THREADS)

    def record(number: int) -> None:
        client = sdk_calls.openai_client(provider.base_url)
        with promptvcr.use_cassette(paths[number], record_mode="record"):
            start.wait()
            answers[number] = [_ask(client, f"thread {number} step {s}") for s in range(PER_THREAD)]

    _run_threads(record)
    assert len(provider.requests) == THREADS * PER_THREAD
    _tally({paths[n]: [f"thread {n} step {s}" for s in range(PER_THREAD)] for n in range(THREADS)})

    replayed: dict[int, list[str]] = {}
    outcomes: Counter[str] = Counter()

    def replay(number: int) -> None:
        client = sdk_calls.openai_client(sdk_calls.OFFLINE, max_retries=0)
        with promptvcr.use_cassette(paths[number]) as cassette:
            start.wait()
            replayed[number] = [_ask(client, f"thread {number} step {s}") for s in range(PER_THREAD)]
        outcomes.update(play.outcome for play in cassette.played)
        assert cassette.all_played and cassette.missed == []

    _run_threads(replay)
    assert replayed == answers
    assert outcomes == {"replayed": THREADS * PER_THREAD}


def _run_threads(target) -> None:  # type: ignore[no-untyped-def]
    errors: list[BaseException] = []

    def guarded(number: int) -> None:
        try:
            target(number)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []


def test_tasks_record_and_replay_their_own_cassettes_at_once(tmp_path: Path, provider: FakeProvider) -> None:
    paths = {n: tmp_path / f"task-{n}.yaml" for n in range(TASKS)}

    async def one(base: str, number: int, mode: str) -> list[str]:
        client = sdk_calls.openai_async(base, max_retries=0)
        async with promptvcr.use_cassette(paths[number], record_mode=mode) as cassette:
            got = []
            for step in range(PER_TASK):
                got.append(await _ask_async(client, f"task {number} step {step}"))
                await asyncio.sleep(0)  # let the other tasks interleave
        assert cassette.missed == []
        return got

    async def every(base: str, mode: str) -> list[list[str]]:
        return await asyncio.gather(*(one(base, n, mode) for n in range(TASKS)))

    recorded = asyncio.run(every(provider.base_url, "record"))
    assert len(provider.requests) == TASKS * PER_TASK
    _tally({paths[n]: [f"task {n} step {s}" for s in range(PER_TASK)] for n in range(TASKS)})
    assert asyncio.run(every(sdk_calls.OFFLINE, "replay")) == recorded


def test_threads_and_tasks_share_one_cassette_while_another_is_active(
    tmp_path: Path, provider: FakeProvider
) -> None:
    """Copied contexts (tasks, ``asyncio.to_thread``, ``copy_context().run``) use the cassette
    of the code that started them, even while an unrelated cassette is active elsewhere."""
    shared, other = tmp_path / "shared.yaml", tmp_path / "other.yaml"
    other_entered, shared_entered, other_sent = threading.Event(), threading.Event(), threading.Event()

    def unrelated() -> None:
        client = sdk_calls.openai_client(provider.base_url)
        with promptvcr.use_cassette(other, record_mode="record"):
            other_entered.set()
            _ask(client, "other before")
            shared_entered.wait(30)
            _ask(client, "other during")  # while the shared cassette, entered later, is active
            other_sent.set()

    thread = threading.Thread(target=unrelated)
    thread.start()
    assert other_entered.wait(10)
    sync_client = sdk_calls.openai_client(provider.base_url)

    async def main() -> None:
        client = sdk_calls.openai_async(provider.base_url)
        async with promptvcr.use_cassette(shared, record_mode="record"):
            shared_entered.set()
            await asyncio.gather(*(_ask_async(client, f"shared task {n}") for n in range(TASKS)))
            await asyncio.gather(
                *(asyncio.to_thread(_ask, sync_client, f"shared to_thread {n}") for n in range(3))
            )
            context = contextvars.copy_context()
            worker = threading.Thread(target=context.run, args=(_ask, sync_client, "shared copied context"))
            worker.start()
            await asyncio.to_thread(worker.join, 30)
            assert await asyncio.to_thread(other_sent.wait, 30)

    asyncio.run(main())
    thread.join(30)
    expected_shared = [f"shared task {n}" for n in range(TASKS)] + [f"shared to_thread {n}" for n in range(3)]
    expected_shared.append("shared copied context")
    _tally({shared: expected_shared, other: ["other before", "other during"]})
    assert len(provider.requests) == len(expected_shared) + 2


def test_a_task_leaving_its_cassette_does_not_lose_another_tasks_request_in_flight(
    tmp_path: Path, provider: FakeProvider
) -> None:
    a_path, b_path = tmp_path / "A.yaml", tmp_path / "B.yaml"
    provider.hold_stream = threading.Event()

    async def task_a(b_entered: asyncio.Event, a_streaming: asyncio.Event) -> str:
        client = sdk_calls.openai_async(provider.base_url)
        async with promptvcr.use_cassette(a_path, record_mode="record") as cassette:
            await b_entered.wait()  # sent while B's cassette is active too
            stream = await client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "paid request"}], stream=True
            )
            text = ""
            async for chunk in stream:
                text += chunk.choices[0].delta.content or "" if chunk.choices else ""
                a_streaming.set()
        assert [play.outcome for play in cassette.played] == ["recorded"]
        return text

    async def task_b(b_entered: asyncio.Event, a_streaming: asyncio.Event) -> None:
        async with promptvcr.use_cassette(b_path, record_mode="record") as cassette:
            b_entered.set()
            await a_streaming.wait()  # A's first event arrived; the rest is held by the server
        assert cassette.played == []  # A's request never reached B
        provider.hold_stream.set()  # type: ignore[union-attr]  # B has left: let A's answer finish

    async def main() -> str:
        b_entered, a_streaming = asyncio.Event(), asyncio.Event()
        text, _ = await asyncio.gather(task_a(b_entered, a_streaming), task_b(b_entered, a_streaming))
        return text

    text = asyncio.run(main())
    assert text and len(provider.requests) == 1
    _tally({a_path: ["paid request"], b_path: []})
    assert not b_path.exists()


def test_nested_cassettes_the_innermost_serves_and_the_outer_sees_nothing(
    tmp_path: Path, provider: FakeProvider
) -> None:
    outer_path, inner_path = tmp_path / "outer.yaml", tmp_path / "inner.yaml"
    client = sdk_calls.openai_client(provider.base_url)
    with promptvcr.use_cassette(outer_path, record_mode="record") as outer:
        _ask(client, "outer 1")
        with promptvcr.use_cassette(inner_path, record_mode="record") as inner:
            _ask(client, "inner 1")
            _ask(client, "inner 2")
        _ask(client, "outer 2")
    assert [_content(p.request) for p in outer.played] == ["outer 1", "outer 2"]
    assert [_content(p.request) for p in inner.played] == ["inner 1", "inner 2"]
    _tally({outer_path: ["outer 1", "outer 2"], inner_path: ["inner 1", "inner 2"]})
    replay = sdk_calls.openai_client(sdk_calls.OFFLINE, max_retries=0)
    with promptvcr.use_cassette(outer_path) as outer, promptvcr.use_cassette(inner_path) as inner:
        assert _ask(replay, "inner 1")  # the inner one serves: the outer would miss
    assert outer.played == [] and len(inner.played) == 1


def test_a_plain_worker_thread_uses_the_only_active_cassette(tmp_path: Path, provider: FakeProvider) -> None:
    path = tmp_path / "only.yaml"
    client = sdk_calls.openai_client(provider.base_url)
    with promptvcr.use_cassette(path, record_mode="record") as cassette:
        worker = threading.Thread(target=_ask, args=(client, "from a plain thread"))
        worker.start()
        worker.join(30)
    assert [play.outcome for play in cassette.played] == ["recorded"]
    _tally({path: ["from a plain thread"]})


def test_a_plain_worker_thread_fails_closed_while_several_cassettes_are_active(
    tmp_path: Path, provider: FakeProvider
) -> None:
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    client = sdk_calls.openai_client(provider.base_url, max_retries=0)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            _ask(client, "whose is this?")
        except BaseException as error:
            errors.append(error)

    caught = pytest.raises(promptvcr.CassetteMiss, match="cannot tell which cassette")  # raised on exit
    with (
        caught,
        promptvcr.use_cassette(first, record_mode="record") as one,
        promptvcr.use_cassette(second, record_mode="record") as two,
    ):
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join(30)
        # The same worker with the context copied goes to the innermost cassette.
        copied = threading.Thread(target=contextvars.copy_context().run, args=(_ask, client, "copied"))
        copied.start()
        copied.join(30)
    (error,) = errors
    assert isinstance(error, promptvcr.CassetteMiss)
    message = str(error)
    assert str(first) in message and str(second) in message
    assert "Enter the cassette in that thread" in message and "copy_context" in message
    assert len(provider.requests) == 1  # the ambiguous request never left
    assert one.played == [] and [p.outcome for p in two.played] == ["recorded"]
    _tally({first: [], second: ["copied"]})


def test_a_cassette_left_in_another_context_is_let_go(tmp_path: Path, provider: FakeProvider) -> None:
    """pytest fixtures and async generators may leave a cassette in another context than the
    one that entered it: the context variable then drops it by value, and no request goes to it."""
    left, still = tmp_path / "left.yaml", tmp_path / "still.yaml"
    client = sdk_calls.openai_client(provider.base_url)
    cassette = promptvcr.use_cassette(left, record_mode="record")
    cassette.__enter__()
    contextvars.copy_context().run(cassette.__exit__, None, None, None)  # left in a copy
    assert activation.active_cassettes() == ()
    with promptvcr.use_cassette(still, record_mode="record") as other:
        worker = threading.Thread(target=contextvars.copy_context().run, args=(_ask, client, "after"))
        worker.start()
        worker.join(30)
        _ask(client, "main")  # this context still lists the left cassette: it is skipped
    assert cassette.played == [] and len(other.played) == 2
    _tally({left: [], still: ["after", "main"]})

    async def generator():  # type: ignore[no-untyped-def]
        async with promptvcr.use_cassette(tmp_path / "gen.yaml", record_mode="record"):
            yield 1

    async def main() -> None:
        agen = generator()
        await agen.__anext__()
        task = asyncio.ensure_future(agen.aclose())  # closed in another task's context
        await task

    asyncio.run(main())
    assert activation.active_cassettes() == ()


def test_zz_totals() -> None:
    """The figures for the note: requests sent, found in the right file, in a wrong one, lost."""
    print(f"\nscope totals: {dict(totals)}")
    # Under pytest-xdist this worker may have run none of them; each test asserts its own counts.
    assert totals["wrong file"] == 0 and totals["lost"] == 0
    assert totals["right file"] == totals["sent"]
