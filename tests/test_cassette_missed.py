"""``Cassette.missed``: the requests that missed, kept even when the code swallowed the miss."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import sdk_calls

import promptvcr

MESSAGES = [{"role": "user", "content": "never recorded"}]


def test_missed_lists_each_missed_request_even_when_the_code_catches_the_miss(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("interactions: []\nversion: 1\n")
    client = sdk_calls.openai_client(sdk_calls.OFFLINE, max_retries=0)
    caught = pytest.raises(
        promptvcr.CassetteMiss, match=r"caught this CassetteMiss and went on \(2 request\(s\) missed"
    )
    with caught, promptvcr.use_cassette(path) as cassette:
        for model in ("first", "second"):
            # An application that swallows everything: the cassette still knows.
            with contextlib.suppress(promptvcr.CassetteMiss):
                client.chat.completions.create(model=model, messages=MESSAGES)  # type: ignore[arg-type]
    assert [json.loads(request.content)["model"] for request in cassette.missed] == ["first", "second"]
    assert all(request.path == "/v1/chat/completions" for request in cassette.missed)
    assert cassette.played == []


def test_missed_starts_empty_on_each_use(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("interactions: []\nversion: 1\n")
    client = sdk_calls.openai_client(sdk_calls.OFFLINE, max_retries=0)
    cassette = promptvcr.use_cassette(path)
    with pytest.raises(promptvcr.CassetteMiss), cassette:
        client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert len(cassette.missed) == 1
    with cassette:
        pass
    assert cassette.missed == []
