"""A large cassette's headers and bodies are made when first used, and read the same as ever.

Issue 22: reading 10,000 interactions was mostly encoding every stored body back to its bytes,
while a test replays a few. Items in the common form are checked whole on entry and made on
first use (:mod:`promptvcr.cassettes.reading`); any other item is built at once. Either way a
broken item stops the load, with its place in the file, before any test runs.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

import promptvcr
from promptvcr.cassettes import compactform, fileformat, parsecache, persister
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cassettes.reading import StoredRequest, StoredResponse
from promptvcr.cassettes.timing import Timing
from promptvcr.errors import CassetteFormatError

URL = "http://127.0.0.1:9/v1/chat/completions"
#: Enough interactions for a file past parsecache.MIN_SIZE in either format (checked below).
COUNT = 400


def _sent(i: int) -> bytes:
    return json.dumps(
        {"model": "gpt-4o", "messages": [{"role": "user", "content": f"question {i}"}]}
    ).encode()


def _answer(i: int, separators: tuple[str, str] = (", ", ": "), ensure_ascii: bool = True) -> bytes:
    body = {
        "id": f"chatcmpl-{i}",
        "object": "chat.completion",
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": f"answer {i} \u00e9"}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }
    return json.dumps(body, separators=separators, ensure_ascii=ensure_ascii).encode()


def _chat(i: int) -> Interaction:
    """An answer in one of the simple styles, with timing and a date, as promptvcr records."""
    separators, ascii_only = [((", ", ": "), True), ((",", ":"), False), ((", ", ": "), False)][i % 3]
    return Interaction(
        Request("POST", URL, {"content-type": "application/json"}, _sent(i)),
        Response(
            200,
            {"content-type": "application/json", "x-request-id": f"req-{i}"},
            [_answer(i, separators, ascii_only)],
            timing=Timing(0.25, (0.5,)),
        ),
        recorded=datetime(2026, 11, 24, 6, 0, i % 60, tzinfo=timezone.utc),
    )


def _others() -> list[Interaction]:
    """Items built at once: a stream, an indented answer, text, bytes, an answer cut short."""
    stream = Response(
        200,
        {"content-type": "text/event-stream"},
        [b'data: {"a": 1}\n\n', b"data: [DONE]\n\n"],
        Timing(0.1, (0.2, 0.3)),
    )
    indented = Response(
        200, {"content-type": "application/json"}, [json.dumps({"a": [1, 2]}, indent=2).encode()]
    )
    return [
        Interaction(Request("POST", URL, {"content-type": "application/json"}, b'{"stream":true}'), stream),
        Interaction(Request("GET", "http://127.0.0.1:9/v1/models"), indented),
        Interaction(
            Request("POST", URL, {}, b"x=1&y=2"), Response(200, {"content-type": "text/plain"}, [b"ok"])
        ),
        Interaction(
            Request("GET", "http://127.0.0.1:9/img"),
            Response(200, {"content-type": "image/png"}, [bytes(range(256))]),
        ),
        Interaction(
            Request("GET", "http://127.0.0.1:9/cut"),
            Response(200, {"content-type": "text/plain"}, [b"half an ans"], end="disconnect"),
        ),
        Interaction(Request("GET", "http://127.0.0.1:9/empty"), Response(204)),
    ]


def _items() -> list[Interaction]:
    chats = [_chat(i) for i in range(COUNT)]
    return [*chats[:100], *_others(), *chats[100:]]


def _write(path: Path, interactions: list[Interaction]) -> None:
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(i) for i in interactions], path))
    assert path.stat().st_size >= parsecache.MIN_SIZE  # read as a large file


def _built_at_once(path: Path) -> list[Interaction]:
    return fileformat.loads(path.read_text(), path)


def _unmade(interactions: list[Interaction]) -> list[int]:
    """Positions of the interactions whose response is still to be made."""
    return [
        i
        for i, interaction in enumerate(interactions)
        if type(interaction.response) is StoredResponse and interaction.response.unmade is not None
    ]


@pytest.fixture(params=["cache", "no cache"])
def caching(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    setting = str(tmp_path / "cache") if request.param == "cache" else "off"
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", setting)
    return str(request.param)


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_a_large_cassette_reads_as_if_built_at_once(caching: str, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"c.{suffix}"
    _write(path, _items())
    expected = _built_at_once(path)
    # A first read, then (with the cache) a read from the parse cache's entry.
    for loaded in (persister.load(path).interactions, persister.load(path).interactions):
        pending = _unmade(loaded)
        # The chats and the empty answer wait to be made; the stream, indented, text, bytes
        # and cut answers were built at once.
        assert pending == [i for i in range(len(expected)) if not 100 <= i < 105]
        assert all(type(i.request) is StoredRequest for i in loaded[:100])
        assert [(i.request.method, i.request.url) for i in loaded] == [
            (i.request.method, i.request.url) for i in expected
        ]
        assert _unmade(loaded) == pending  # reading the method and URL made nothing
        assert [i.response.timing for i in loaded] == [i.response.timing for i in expected]
        assert [i.recorded for i in loaded] == [i.recorded for i in expected]
        # Every byte and header, made now, as building them at once gives.
        assert [i.response.chunks for i in loaded] == [i.response.chunks for i in expected]
        assert [i.response.headers for i in loaded] == [i.response.headers for i in expected]
        assert [(i.request.headers, i.request.content) for i in loaded] == [
            (i.request.headers, i.request.content) for i in expected
        ]
        assert _unmade(loaded) == []
        assert loaded == expected
        assert [i.response.end for i in loaded] == [i.response.end for i in expected]
        assert [i.response.playback for i in loaded] == [i.response.playback for i in expected]


def test_a_replay_makes_only_the_answers_it_serves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "c.json"
    _write(path, _items())
    client = openai.OpenAI(
        api_key="k", base_url="http://127.0.0.1:9/v1", max_retries=0, http_client=httpx2.Client()
    )
    with promptvcr.use_cassette(path, record_mode="none") as cassette:
        reply = client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "question 250"}]
        )
        assert reply.choices[0].message.content == "answer 250 \u00e9"
        held = cassette.interactions
        made = [
            i for i in range(len(held)) if i not in _unmade(held) and type(held[i].response) is StoredResponse
        ]
        assert made == [256]  # the 251st chat, after the six items built at once
    client.close()


def _broken(tmp_path: Path, suffix: str, edit: Any) -> Path:
    """A large cassette whose item 300 ``edit`` changes in its stored form."""
    path = tmp_path / f"c.{suffix}"
    data = [fileformat.interaction_to_data(i) for i in _items()]
    edit(data[300])
    path.write_text(fileformat.dumps(data, path))
    return path


BREAKAGES = {
    "a status out of range": lambda item: item["response"].update(status=999),
    "headers that are a list": lambda item: item["response"].update(headers=["a"]),
    "a style that is not one": lambda item: item["response"].update(style={"separators": "no"}),
    "two bodies": lambda item: item["response"].update(text="and text"),
    "a timing for two chunks": lambda item: item["response"].update(
        timing={"headers": 0.1, "chunks": [0.1, 0.2]}
    ),
    "a date that is none": lambda item: item.update(recorded="yesterday"),
    "no method": lambda item: item["request"].pop("method"),
    "an end that is none": lambda item: item["response"].update(end="later"),
}


@pytest.mark.parametrize("suffix", ["yaml", "json"])
@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_a_broken_item_stops_the_load_with_its_place(
    caching: str, tmp_path: Path, suffix: str, breakage: str
) -> None:
    path = _broken(tmp_path, suffix, BREAKAGES[breakage])
    with pytest.raises(CassetteFormatError, match=r"interactions\[300\]") as raised:
        persister.load(path)
    assert str(path) in str(raised.value)


def test_a_lone_surrogate_in_a_large_json_file_stops_the_load(caching: str, tmp_path: Path) -> None:
    """JSON text may escape half a surrogate pair, which no body's UTF-8 bytes can hold: such a
    file is built at once, so the load fails rather than a replay later."""

    def half(item: dict[str, Any]) -> None:
        item["response"]["json"]["id"] = "HALF"
        item["response"].pop("style", None)  # compact, not ASCII: an ASCII style escapes it

    path = _broken(tmp_path, "json", half)
    path.write_text(path.read_text().replace('"HALF"', '"\\ud800"'))
    with pytest.raises(CassetteFormatError, match=r"interactions\[300\]\.response\.json is not a valid body"):
        persister.load(path)


def test_a_date_in_a_large_yaml_body_stops_the_load(caching: str, tmp_path: Path) -> None:
    """A hand-written YAML date is no JSON value: a text that needs PyYAML's full loader is
    built at once, so its body is found unwritable on entry."""
    path = _broken(tmp_path, "yaml", lambda item: item["response"]["json"].update(id="DATE"))
    path.write_text(path.read_text().replace("id: DATE", "id: 2026-01-01"))
    with pytest.raises(CassetteFormatError, match=r"interactions\[300\]\.response\.json is not a valid body"):
        persister.load(path)


def test_stored_requests_and_responses_stand_for_plain_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", "off")
    path = tmp_path / "c.yaml"
    _write(path, _items())
    stored = persister.load(path).interactions[0]
    plain = _built_at_once(path)[0]
    request, response = stored.request, stored.response
    assert type(request) is StoredRequest and type(response) is StoredResponse
    assert request == plain.request and plain.request == request
    assert response == plain.response and plain.response == response
    assert response != dataclasses.replace(plain.response, status=201)
    for copied in (copy.deepcopy(stored), pickle.loads(pickle.dumps(stored))):
        assert type(copied.request) is Request and type(copied.response) is Response
        assert copied == plain
    assert type(copy.copy(request)) is Request and copy.copy(response) == plain.response
    replaced = dataclasses.replace(response, status=201)
    assert replaced.status == 201 and replaced.chunks == plain.response.chunks
    assert replaced.unmade is None  # built from values: nothing to make


def test_a_cached_entry_holds_made_and_unmade_interactions_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", "off")
    path = tmp_path / "c.json"
    _write(path, _items())
    loaded = persister.load(path).interactions
    loaded[3].response.chunks  # noqa: B018 - made, as a replay would
    loaded[7].request.headers  # noqa: B018
    part = compactform.compact_part(loaded)
    assert part is not None
    again = list(compactform.interactions_from(part, path))
    assert type(again[3].response) is Response and type(again[7].request) is Request
    assert type(again[8].response) is StoredResponse and again[8].response.unmade is not None
    assert again == _built_at_once(path)
