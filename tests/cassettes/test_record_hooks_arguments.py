"""``before_record_request`` / ``before_record_response`` as ``use_cassette`` arguments.

Recorded through the real openai SDK from a loopback server: what a hook trims is what the
file holds, the code under test still gets the whole answer, and a hook returning ``None``
leaves that interaction out.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import openai
import pytest
from fake_provider import FakeProvider

import promptvcr
from promptvcr import Request, Response


def _ask(base_url: str, question: str) -> str:
    client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
    reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
    return reply.choices[0].message.content or ""


def test_a_response_hook_changes_what_is_written_not_what_the_code_got(tmp_path: Path) -> None:
    path = tmp_path / "hooked.yaml"

    def trim(response: Response) -> Response:
        body = json.loads(response.content)
        body["choices"][0]["message"]["content"] = "trimmed"
        return dataclasses.replace(response, chunks=[json.dumps(body).encode()])

    hooked = promptvcr.use_cassette(path, record_mode="record", before_record_response=trim)
    with FakeProvider() as server, hooked:
        live = _ask(server.openai_base_url, "Say hello")
    assert live != "trimmed"
    assert "trimmed" in path.read_text()
    with promptvcr.use_cassette(path):
        assert _ask("http://127.0.0.1:9/v1", "Say hello") == "trimmed"


def test_a_request_hook_returning_none_leaves_the_interaction_out(tmp_path: Path) -> None:
    path = tmp_path / "dropped.yaml"

    def drop_goodbyes(request: Request) -> Request | None:
        return None if b"goodbye" in request.content else request

    hooked = promptvcr.use_cassette(path, record_mode="record", before_record_request=drop_goodbyes)
    with FakeProvider() as server, hooked as rec:
        _ask(server.openai_base_url, "hello")
        _ask(server.openai_base_url, "goodbye")
    assert [play.outcome for play in rec.played] == ["recorded", "recorded"]
    text = path.read_text()
    assert "hello" in text and "goodbye" not in text
    with promptvcr.use_cassette(path) as replaying:
        assert len(replaying.interactions) == 1


def test_the_hooks_are_kept_by_the_decorator_for_each_call(tmp_path: Path) -> None:
    path = tmp_path / "decorated.yaml"
    seen: list[str] = []

    def note(request: Request) -> Request:
        seen.append(request.method)
        return request

    with FakeProvider() as server:

        @promptvcr.use_cassette(path, record_mode="rewrite", before_record_request=note)
        def run() -> str:
            return _ask(server.openai_base_url, "hi")

        run()
        run()
    assert seen == ["POST", "POST"]


def test_a_hook_returning_the_wrong_type_is_a_clear_error_that_keeps_the_recording(tmp_path: Path) -> None:
    """A vcrpy habit (issue 54, scenario 10): the hook returns a dict. The interactions it
    returned one for are left out and named; every other recording is written and replays."""
    from promptvcr.files.saving import HookError

    path = tmp_path / "typed.yaml"

    def as_vcrpy(response: Response) -> Response:
        if b"vcrpy" in response.content:
            return {"status": {"code": 200}, "body": {"string": ""}}  # type: ignore[return-value]
        return response

    recording = promptvcr.use_cassette(path, record_mode="record", before_record_response=as_vcrpy)
    with FakeProvider() as server, pytest.raises(HookError) as raised, recording:
        assert _ask(server.openai_base_url, "first") == "echo 1: first"
        assert _ask(server.openai_base_url, "as vcrpy") == "echo 2: as vcrpy"
        assert _ask(server.openai_base_url, "third") == "echo 3: third"
    message = str(raised.value)
    assert "before_record_response returned a dict" in message and "must return the Response" in message
    assert "1 left out so, 2 written" in message and str(path) in message
    with promptvcr.use_cassette(path):
        assert _ask("http://127.0.0.1:9/v1", "first") == "echo 1: first"
        assert _ask("http://127.0.0.1:9/v1", "third") == "echo 3: third"
