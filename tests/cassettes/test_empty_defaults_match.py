"""Issue 53: an empty value an SDK sends as a default matches its absence; nothing else does.

Recorded through a real client (httpx, as the ollama SDK sends) against a loopback server
with the empty defaults an older client sent (``options: {}``, ``keep_alive: null``,
``format: ""``); replayed by a client that leaves them out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from leak_server import Answer, LeakServer
from property_settings import property_settings

import promptvcr
from promptvcr.cassettes.models import Request
from promptvcr.matching.key import request_key
from promptvcr.matching.rules import DEFAULT_RULES

OLD_CLIENT = {
    "model": "llama3.2",
    "prompt": "Why is the sky blue?",
    "stream": False,
    "options": {},
    "keep_alive": None,
    "format": "",
    "images": [],
    "raw": False,
}


def _record(path: Path, body: dict[str, Any]) -> str:
    with LeakServer() as server:
        server.reply = lambda r: Answer(
            200, {"content-type": "application/json"}, (b'{"response": "Rayleigh"}',)
        )
        with promptvcr.use_cassette(path, record_mode="record"):
            httpx.post(f"{server.url}/api/generate", json=body)
        return server.url


def _replays(path: Path, url: str, body: dict[str, Any]) -> bool:
    try:
        with promptvcr.use_cassette(path, record_mode="none") as cassette:
            httpx.post(f"{url}/api/generate", json=body)
    except promptvcr.CassetteMiss:
        return False
    return all(play.hit for play in cassette.played)


def test_a_client_that_drops_empty_defaults_replays_the_old_recording(tmp_path: Path) -> None:
    path = tmp_path / "ollama.yaml"
    url = _record(path, OLD_CLIENT)
    new_client = {
        k: v for k, v in OLD_CLIENT.items() if k not in ("options", "keep_alive", "format", "images")
    }
    assert _replays(path, url, new_client)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda b: b.pop("raw"), id="false against absent"),
        pytest.param(lambda b: b.update(stream=None), id="false against null"),
        pytest.param(lambda b: b.update(options={"temperature": 0}), id="a non-empty object"),
        pytest.param(lambda b: b.update(prompt="Why is the sea blue?"), id="a changed string"),
    ],
)
def test_anything_but_an_empty_value_still_misses(tmp_path: Path, change: Any) -> None:
    path = tmp_path / "ollama.yaml"
    url = _record(path, OLD_CLIENT)
    body = json.loads(json.dumps(OLD_CLIENT))
    change(body)
    assert not _replays(path, url, body)


def _key(body: Any) -> str:
    request = Request(
        "POST",
        "http://127.0.0.1/api/generate",
        {"content-type": "application/json"},
        json.dumps(body).encode(),
    )
    return request_key(request, DEFAULT_RULES)


_scalars = st.one_of(st.booleans(), st.integers(-3, 3), st.text(min_size=1, max_size=3))
_empties = st.sampled_from([None, {}, [], ""])


_names = st.text("abcdefgh_", min_size=1, max_size=5).map(lambda name: "x" + name)  # no volatile field


@property_settings(60)
@given(st.dictionaries(_names, _scalars, max_size=4), st.dictionaries(_names, _empties, max_size=3))
def test_empty_fields_never_change_the_key_and_other_values_always_do(
    fields: dict[str, Any], empties: dict[str, Any]
) -> None:
    base = {"model": "m", **fields}
    assert _key({**empties, **base}) == _key(base)
    for name, value in fields.items():
        changed = {**base}
        del changed[name]  # false, 0, "x" or true against absent: a real difference
        assert _key(changed) != _key(base), (name, value)
