"""Issue 22: the record path's shortcuts decide nothing redaction would have decided otherwise.

Redaction looks at an interaction's bodies field by field only when the text of the whole
interaction shows a credential field name or a URL query; masking and the secret scan search
that text once. Each case below compares the fast path with the field-by-field one, on bodies
built to slip past a substring search: escaped keys, keys that lower-case into a credential
name, nested fields, queries in answers, forms, streams.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cassettes.timing import Timing
from promptvcr.credentials.masking import request_credentials
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
