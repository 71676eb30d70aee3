"""Issue 22: the record path's shortcuts decide nothing redaction would have decided otherwise.

Redaction looks at an interaction's bodies field by field only when the text of the whole
interaction shows a credential field name or a URL query; masking and the secret scan search
that text once. Each case below compares the fast path with the field-by-field one, on bodies
built to slip past a substring search: escaped keys, keys that lower-case into a credential
name, nested fields, queries in answers, forms, streams.
"""

from __future__ import annotations

import base64
import gzip
import json
import secrets
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cassettes.timing import Timing
from promptvcr.credentials import masking, sentmasker
from promptvcr.credentials.masking import Masker, request_credentials
from promptvcr.files import fileformat
from promptvcr.files.redaction import redact

KEY = "Zq8fK2mWcR7tLx4pN9vB3hJ6dS1gY5aE0uQ"
JSON = {"content-type": "application/json"}

BODIES = {
    "plain": b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}',
    "nested field": b'{"auth": {"api_key": "' + KEY.encode() + b'"}, "x": 1}',
    "upper-case field": b'{"API_KEY": "' + KEY.encode() + b'"}',
    "escaped key": b'{"\\u0061pi_key": "' + KEY.encode() + b'"}',
    "kelvin sign key": '{"\u212aey": "{KEY}"}'.replace("{KEY}", KEY).encode(),
    "top-level token": b'{"token": "' + KEY.encode() + b'", "tokens": 3}',
    "query in a string": b'{"next": "https://x.test/page?key=' + KEY.encode() + b'&n=2"}',
    "escaped query": b'{"next": "https://x.test/page?key\\u003d' + KEY.encode() + b'"}',
    "compact": b'{"a":{"b":[{"password":"' + KEY.encode() + b'"}]}}',
    "usage tokens": b'{"usage": {"prompt_tokens": 3, "total_tokens": 5}}',
}


def _interaction(
    request_body: bytes, response_body: bytes, response_type: str = "application/json"
) -> Interaction:
    # The header's key is another one: KEY is removed from the bodies by name alone.
    headers = {**JSON, "authorization": "Bearer Hd7kPq2xWv9mZt4nRb8cYf3sLg6jAe1u"}
    request = Request("POST", "https://api.test/v1/chat", headers, request_body)
    response = Response(200, {"content-type": response_type}, [response_body], Timing(0.01, (0.02,)))
    return Interaction(request, response, datetime(2026, 1, 2, tzinfo=timezone.utc))


@pytest.mark.parametrize("name", list(BODIES))
def test_the_stored_form_is_the_one_redaction_writes(name: str) -> None:
    interaction = _interaction(BODIES[name], BODIES[name])
    data, text = fileformat.stored_with_text(interaction)
    assert data == fileformat.interaction_to_data(interaction)
    assert text == json.dumps(data, ensure_ascii=False)


@pytest.mark.parametrize("name", [name for name in BODIES if name not in ("plain", "usage tokens")])
def test_no_key_is_written(name: str) -> None:
    redacted = redact([_interaction(BODIES[name], BODIES[name])])
    written = fileformat.dumps(redacted.data, fileformat.Path("c.yaml"))
    assert KEY not in written and not redacted.refused


@pytest.mark.parametrize(
    "body",
    [
        b'{"\\u0070assword": "' + KEY.encode() + b'"}',
        b'{"nested": {"Secret_Key": "' + KEY.encode() + b'"}}',
        '{"\u212aey": "{KEY}"}'.replace("{KEY}", KEY).encode(),
    ],
)
def test_a_request_field_sent_as_a_credential_is_masked_where_it_is_echoed(body: bytes) -> None:
    request = Request("POST", "https://api.test/v1/x", dict(JSON), body)
    assert KEY in request_credentials(request)
    echoed = b'{"error": "bad value ' + KEY.encode() + b'"}'
    response = Response(400, dict(JSON), [echoed])
    redacted = redact([Interaction(request, response)])
    assert KEY not in json.dumps(redacted.data) and "<redacted:sent-credential>" in json.dumps(redacted.data)


def test_a_form_body_is_always_looked_at() -> None:
    request = Request(
        "POST",
        "https://auth.test/token",
        {"content-type": "application/x-www-form-urlencoded"},
        f"client_secret={KEY}&grant_type=x".encode(),
    )
    redacted = redact([Interaction(request, Response(200, dict(JSON), [b'{"ok": true}']))])
    assert KEY not in json.dumps(redacted.data)


def test_a_stream_echoing_the_key_across_events_is_masked() -> None:
    half = len(KEY) // 2
    events = [
        b'data: {"delta": "your key is ' + KEY[:half].encode() + b'"}\n\n',
        b'data: {"delta": "' + KEY[half:].encode() + b' ok"}\n\n',
    ]
    interaction = _interaction(BODIES["nested field"], b"", "text/event-stream")  # KEY sent as auth.api_key
    interaction.response.chunks = events
    interaction.response.timing = None
    redacted = redact([interaction])
    joined = "".join(e["data"]["delta"] for e in redacted.data[0]["response"]["events"])
    assert KEY not in joined and "<redacted:sent-credential>" in joined


def test_a_secret_shaped_value_in_a_request_is_still_refused_and_in_a_response_masked() -> None:
    shaped = "sk-proj-" + "A1b2C3d4" * 6
    refused = redact([_interaction(b'{"content": "my key is ' + shaped.encode() + b'"}', b"{}")])
    assert refused.refused and not refused.data
    masked = redact([_interaction(BODIES["plain"], b'{"content": "' + shaped.encode() + b'"}')])
    assert masked.masked and shaped not in json.dumps(masked.data)


def test_an_environment_credential_echoed_in_an_answer_is_found() -> None:
    value = "env-value-0123456789abcdef"
    interaction = _interaction(BODIES["plain"], b'{"echo": "' + value.encode() + b'"}')
    redacted = redact([interaction], environ={"MY_SERVICE_API_KEY": value})
    assert redacted.masked and value not in json.dumps(redacted.data)


# Credentials sent by the run, masked wherever they are echoed: the masker of the run's
# credentials is compiled only for an interaction that may hold one (an import of a large
# vcrpy suite sends hundreds of cookies, one set more with each file).


def _echoed(value: str, form: str) -> tuple[str, list[bytes]]:
    """(content type, chunks) of an answer echoing ``value`` in ``form``."""
    if form == "stream":  # cut in two between the events of a stream
        half = len(value) // 2
        events = [{"delta": f"your key is {value[:half]}"}, {"delta": f"{value[half:]} ok"}]
        return "text/event-stream", [f"data: {json.dumps(event)}\n\n".encode() for event in events]
    if form in ("binary", "gzip", "gzip twice"):
        content = b"\x00\xff key=" + value.encode() + b"\x00"
        for _ in range({"binary": 0, "gzip": 1, "gzip twice": 2}[form]):
            content = gzip.compress(content, mtime=0)
        return "application/octet-stream", [content]
    written = {
        "string": value,
        "percent-encoded": quote(value, safe=""),
        "plus-encoded": quote_plus(value),
        "json in a string": json.dumps({"k": value}, ensure_ascii=False),
    }[form]
    return "application/json", [json.dumps({"error": f"bad value {written}"}).encode()]


def _stored_answer(response: dict[str, object]) -> str:
    """The stored answer's text, its binary body decoded and inflated, its events joined."""
    if isinstance(encoded := response.get("base64"), str):
        content = base64.b64decode(encoded)
        while content[:2] == b"\x1f\x8b":
            content = gzip.decompress(content)
        return content.decode("utf-8", "replace")
    if isinstance(events := response.get("events"), list):
        return "".join(event["data"]["delta"] for event in events)
    return json.dumps(response, ensure_ascii=False)


FORMS = [
    "string",
    "percent-encoded",
    "plus-encoded",
    "json in a string",
    "stream",
    "binary",
    "gzip",
    "gzip twice",
]


@property_settings(150)
@given(
    value=st.text(alphabet='aZ09-._~"\\/ %+&=:!@é\n', min_size=8, max_size=24),
    form=st.sampled_from(FORMS),
)
def test_a_sent_credential_echoed_in_any_form_is_masked_before_anything_is_looked_for(
    value: str, form: str
) -> None:
    """The first masking, by the run's credentials, masks each form without a word: a value
    it missed would be found by the scan after it, reported (``masked``) or refused."""
    masking._SENT.clear()  # as between tests (tests/conftest.py): each example's value alone
    request = Request("POST", "https://api.test/v1/x", dict(JSON), json.dumps({"api_key": value}).encode())
    assume(value in request_credentials(request))
    content_type, chunks = _echoed(value, form)
    response = Response(200, {"content-type": content_type}, chunks)
    redacted = redact([Interaction(request, response)])
    assert not redacted.refused and redacted.masked == []
    answer = _stored_answer(redacted.data[0]["response"])
    assert "<redacted:sent-credential>" in answer, answer
    assert value not in answer and quote(value, safe="") not in answer


def test_new_credentials_in_answers_that_hold_none_compile_no_masker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each new credential the run sends makes a new set to mask; an answer holding none of them
    costs a substring search per value, not a pattern of them all compiled per set."""
    compiled: list[int] = []

    class Counted(Masker):
        def __init__(self, values: Iterable[str] = (), *args: Any, **kwargs: Any) -> None:
            values = list(values)
            compiled.append(len(values))
            super().__init__(values, *args, **kwargs)

    monkeypatch.setattr(sentmasker, "Masker", Counted)
    cookies = [f"session-{secrets.token_hex(12)}" for _ in range(30)]
    answers = [b'{"answer": "plain text"}', b'data: {"delta": "a"}\n\ndata: {"delta": "b"}\n\n']
    for number, cookie in enumerate(cookies):
        headers = {**JSON, "cookie": f"sid={cookie}"}
        request = Request("POST", "https://api.test/v1/x", headers, BODIES["plain"])
        stream = number % 2 == 1  # an answer stored as events: no one text to search
        content_type = "text/event-stream" if stream else "application/json"
        redacted = redact(
            [Interaction(request, Response(200, {"content-type": content_type}, [answers[stream]]))]
        )
        assert redacted.data and not redacted.refused
    assert compiled == []

    request = Request(
        "POST", "https://api.test/v1/x", {**JSON, "cookie": f"sid={cookies[-1]}"}, BODIES["plain"]
    )
    echo = json.dumps({"error": f"bad cookie {cookies[3]}"}).encode()
    redacted = redact([Interaction(request, Response(400, dict(JSON), [echo]))])
    assert len(compiled) == 1 and compiled[0] >= 2 * len(cookies)  # every form of every value, once
    assert cookies[3] not in json.dumps(redacted.data) and redacted.masked == []
