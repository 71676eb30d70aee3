"""A loaded cassette leaves the garbage collector nothing to walk per interaction (issue 48).

CPython's cyclic collector walks every tracked container alive, in the collections that a
test's own allocations set off: replaying one request from a 10,000-interaction cassette cost
7% more than from a one-interaction cassette while each loaded interaction was four tracked
objects, and the tape's index two more. These tests count what the collector tracks, which
does not depend on the machine's speed: a change that puts tracked objects back per
interaction fails them (``benchmarks/bench_gc.py`` measures the time)."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from heap import objects_so_far_frozen

import promptvcr
from promptvcr.files import fileformat, smallcache
from promptvcr.files.loaded import LoadedInteractions

BASE = "http://127.0.0.1:9/v1"


@pytest.fixture(scope="module", autouse=True)
def _worker_objects_frozen() -> Iterator[None]:
    """These tests collect before and after each count of what the collector tracks, and a full
    collection in a suite worker walks a million objects: the worker's own objects are kept
    out of those collections (tests/heap.py); what is counted is what the tests make."""
    with objects_so_far_frozen():
        yield


def _chat(i: int) -> dict[str, object]:
    return {
        "request": {
            "method": "POST",
            "url": f"{BASE}/chat/completions",
            "headers": {"content-type": "application/json"},
            "json": {"messages": [{"role": "user", "content": f"question {i}"}], "model": "gpt-4o"},
        },
        "response": {
            "status": 200,
            "headers": {"content-type": "application/json"},
            "json": {
                "id": f"chatcmpl-{i}",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": "gpt-4o",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": f"a{i}"},
                    }
                ],
            },
        },
    }


def _cassette(path: Path, n: int, first: int = 0) -> Path:
    path.write_text(fileformat.dumps([_chat(i) for i in range(first, first + n)], path))
    return path


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(folder))
    monkeypatch.setattr(smallcache, "_memo", None)
    return folder


def _collect() -> None:
    """Collections as a long-running process has them: each untracks the tuples all of whose
    parts are untracked, so a tuple in a tuple is untracked by the collection after its own."""
    for _ in range(2):
        gc.collect()


def _tracked_while_replaying(path: Path, client: openai.OpenAI, question: int) -> int:
    """Objects the collector tracks while ``path`` is in use and one request replayed from it,
    beyond those it tracks before."""
    _collect()
    before = len(gc.get_objects())
    with promptvcr.use_cassette(path):
        reply = client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": f"question {question}"}]
        )
        assert reply.choices[0].message.content == f"a{question}"
        del reply
        _collect()
        return len(gc.get_objects()) - before


def test_replaying_from_a_large_cassette_tracks_what_a_small_one_does(cache: Path, tmp_path: Path) -> None:
    client = openai.OpenAI(api_key="sk-test", base_url=BASE, max_retries=0)
    small = _cassette(tmp_path / "small.json", 1)
    large = _cassette(tmp_path / "large.json", 2_000)
    for path in (small, large):  # first reads fill the caches; a later read is a test's
        with promptvcr.use_cassette(path):
            client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "question 0"}]
            )
    one = _tracked_while_replaying(small, client, 0)
    many = _tracked_while_replaying(large, client, 1_234)
    # Built whole, each loaded interaction was 4 tracked objects and its index entry 2: 12,000.
    assert (many - one) / 2_000 < 0.05, (one, many)


def test_what_a_loaded_cassette_holds_is_untracked_but_what_was_played(cache: Path, tmp_path: Path) -> None:
    path = _cassette(tmp_path / "c.json", 300)
    with promptvcr.use_cassette(path):
        pass  # the first read
    with promptvcr.use_cassette(path) as cassette:
        held = cassette._tape.interactions
        assert isinstance(held, LoadedInteractions)
        client = openai.OpenAI(api_key="sk-test", base_url=BASE, max_retries=0)
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "question 7"}])
        _collect()
        items = held._items
        tracked = [i for i, item in enumerate(items) if gc.is_tracked(item)]
        assert tracked == [7]  # the one played was built; the others are plain tuples
        parts = [
            part for item in items if type(item) is tuple for part in item if isinstance(part, (dict, tuple))
        ]
        assert parts and not any(gc.is_tracked(part) for part in parts)
        index = [cassette._tape._index, cassette._tape._turns, *cassette._tape._sent.values()]
        assert not any(gc.is_tracked(value) for value in index[2:])
        assert not gc.is_tracked(cassette._tape._turns) and not gc.is_tracked(cassette._tape._index)
        assert json.loads(held[7].response.content)["id"] == "chatcmpl-7"


def test_the_memo_of_small_cassettes_stays_untracked_over_a_long_suite(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each small cassette's memo entry, its requests' keys included, is plain untracked data."""
    client = openai.OpenAI(api_key="sk-test", base_url=BASE, max_retries=0)
    paths = [_cassette(tmp_path / f"test_{i}.yaml", 1, first=i) for i in range(200)]

    def suite() -> None:
        for i, path in enumerate(paths):
            with promptvcr.use_cassette(path):
                question = [{"role": "user", "content": f"question {i}"}]
                client.chat.completions.create(model="gpt-4o", messages=question)  # type: ignore[arg-type]

    suite()  # the first run: every cassette parsed, its key offered to the memo
    smallcache.flush()
    monkeypatch.setattr(smallcache, "_memo", None)  # a later process reads the memo
    suite()
    _collect()
    memo = smallcache._memo
    assert memo is not None and len(memo.used) == 200
    entries = [*memo.found.values(), *memo.used.values()]
    assert all(entry[2] is not None for entry in entries)  # the keys came back with each
    assert not any(gc.is_tracked(entry) for entry in entries)
