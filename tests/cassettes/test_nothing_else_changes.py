"""Issue 53: nothing the provider said is changed; only a credential is, and each change is said.

The guard, three ways:

- every interaction of the shared corpus (real traffic of 20 providers, 542 vcrpy cassettes:
  ``tests/corpus/pydantic-ai`` and ``pydantic-ai-rest``) is imported and read back: each body
  byte for byte, each header and URL as the source held it, but credentials; and
  ``promptvcr scan`` finds nothing in what import wrote;
- every scripted answer of the fake provider, called with tools whose arguments are named
  like credentials (``key``, ``api_key``, ``password``, ``token``, ``authorization``) and hold
  none, is recorded and replayed through the real SDK's transport (httpx) byte for byte;
- property tests: tool-call arguments, message content and response headers whose names look
  like credentials and whose values are not, recorded, stay byte for byte.
"""

from __future__ import annotations

import gzip
import json
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from fake_provider import FakeProvider
from heap import objects_so_far_frozen
from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

import promptvcr
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cassettes.wire import WIRE_HEADERS
from promptvcr.credentials.detect import detect
from promptvcr.credentials.headers import ALL_HEADERS
from promptvcr.credentials.names import is_secret_header
from promptvcr.files import fileformat, redaction
from promptvcr.importers import import_vcr

CORPUS = Path(__file__).parents[1] / "corpus"
#: libyaml's reader when PyYAML has it: the corpus is 15 MB of YAML.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)


FOLDERS = [CORPUS / "pydantic-ai", CORPUS / "pydantic-ai-rest"]


# The shared corpus ---------------------------------------------------------------------------


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_text(item) for item in value)
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def _headers(data: Any) -> dict[str, str]:
    return {str(k).lower(): _text(v) for k, v in (data or {}).items()}


def _original(part: dict[str, Any]) -> bytes:
    """The body the client saw, as vcrpy replays it."""
    if "parsed_body" in part:
        return json.dumps(part["parsed_body"]).encode()
    body = part.get("body")
    if isinstance(body, dict) and "string" in body:
        body = body["string"]
    elif isinstance(body, dict | list):
        return json.dumps(body).encode()
    content = body.encode() if isinstance(body, str) else (body or b"")
    encoding = _headers(part.get("headers")).get("content-encoding", "")
    if content and "gzip" in encoding:
        content = gzip.decompress(content)
    elif content and "deflate" in encoding:
        content = zlib.decompress(content)
    return content


@pytest.fixture(scope="module", autouse=True)
def _worker_objects_frozen() -> Iterator[None]:
    """The corpus tests make and read back 15 MB of YAML (twice the sources, once what import
    wrote): the worker's own objects are kept out of the collections that causes (tests/heap.py)."""
    with objects_so_far_frozen():
        yield


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, Path, str]]:
    """(source, output, what import printed) of every corpus file, imported once."""
    out = tmp_path_factory.mktemp("imported")
    done = []
    for folder in FOLDERS:
        report = import_vcr([folder], out / folder.name)
        assert not report.failed and not report.partial, report.summary()
        done += [(f.source, f.output, f.describe()) for f in report.files if f.output is not None]
    assert len(done) == 542
    return done


def _changes(imported: list[tuple[Path, Path, str]]) -> tuple[int, list[str]]:
    """(interactions compared, every difference from the source that is not a credential)."""
    count, changed = 0, []
    for source, output, _ in imported:
        raw = _load(source)["interactions"]
        stored = fileformat.loads(output.read_text(encoding="utf-8"), output)
        assert len(stored) == len(raw), source
        for index, (original, interaction) in enumerate(zip(raw, stored, strict=True)):
            count += 1
            where = f"{source.relative_to(CORPUS)}[{index}]"
            if original["request"]["uri"] != interaction.request.url:
                changed.append(f"{where}.request.url")
            for side, part in (("request", interaction.request), ("response", interaction.response)):
                if _original(original[side]) != part.content:
                    changed.append(f"{where}.{side} body")
                held = part.headers
                for name, value in _headers(original[side].get("headers")).items():
                    if name in WIRE_HEADERS or is_secret_header(name):
                        continue  # framing the replay writes anew; a credential
                    if held.get(name) != value:
                        changed.append(f"{where}.{side}.headers.{name}")
    return count, changed


def test_no_byte_of_the_shared_corpus_but_a_credential_changes(
    imported: list[tuple[Path, Path, str]],
) -> None:
    count, changed = _changes(imported)
    print(f"shared corpus: {count} interactions, {len(changed)} non-credential changes")
    assert count == 961
    assert changed == []


def test_what_import_wrote_scans_clean(imported: list[tuple[Path, Path, str]]) -> None:
    findings = [f"{output.name}: {finding}" for _, output, _ in imported for finding in detect(_load(output))]
    assert findings == []


def test_every_removal_is_said(imported: list[tuple[Path, Path, str]]) -> None:
    """The corpus's only credentials are requests' cookies (pydantic-ai keeps them): each one
    removed is printed with its interaction."""
    for source, _, said in imported:
        raw = _load(source)["interactions"]
        cookies = [i for i, item in enumerate(raw) if "cookie" in _headers(item["request"].get("headers"))]
        for index in cookies:
            assert f"interactions[{index}].request.headers.cookie: header cookie (removed)" in said, source


# The fake provider's scripted answers, through the SDKs' transport -----------------------------

#: A tool whose parameters are named like credentials: the model fills them with the user's
#: text, which is no credential.
PARAMETERS = {
    "type": "object",
    "properties": {name: {"type": "string"} for name in ("style", "key", "api_key", "password", "token")}
    | {"authorization": {"type": "string"}, "count": {"type": "integer"}},
}
TEXT = "D major"


def _calls(base: str) -> list[tuple[str, dict[str, Any]]]:
    tool_openai = [{"type": "function", "function": {"name": "compose", "parameters": PARAMETERS}}]
    tool_anthropic = [{"name": "compose", "input_schema": PARAMETERS}]
    tool_gemini = [{"functionDeclarations": [{"name": "compose", "parameters": PARAMETERS}]}]
    chat = {"model": "gpt-4o", "messages": [{"role": "user", "content": TEXT}]}
    message = {"model": "claude", "max_tokens": 50, "messages": [{"role": "user", "content": TEXT}]}
    gemini = {"contents": [{"role": "user", "parts": [{"text": TEXT}]}]}
    return [
        (f"{base}/v1/chat/completions", chat),
        (f"{base}/v1/chat/completions", {**chat, "stream": True}),
        (f"{base}/v1/chat/completions", {**chat, "tools": tool_openai}),
        (f"{base}/v1/chat/completions", {**chat, "tools": tool_openai, "stream": True}),
        (f"{base}/v1/embeddings", {"model": "e", "input": TEXT}),
        (f"{base}/v1/messages", message),
        (f"{base}/v1/messages", {**message, "stream": True}),
        (f"{base}/v1/messages", {**message, "tools": tool_anthropic}),
        (f"{base}/v1/messages", {**message, "tools": tool_anthropic, "stream": True}),
        (f"{base}/v1beta/models/gemini:generateContent", {**gemini, "tools": tool_gemini}),
        (f"{base}/v1beta/models/gemini:streamGenerateContent?alt=sse", {**gemini, "tools": tool_gemini}),
        (f"{base}/raw/json", {}),
        (f"{base}/raw/text", {}),
        (f"{base}/raw/binary", {}),
    ]


def _send(client: httpx.Client, url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    if url.split("?")[0].split("/")[-2] == "raw":
        answer = client.get(url)
    else:
        answer = client.post(url, json=body, headers={"authorization": "Bearer sk-test-guard"})
    return answer.status_code, answer.content


def test_every_scripted_answer_replays_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "fake.yaml"
    with FakeProvider() as fake, httpx.Client() as client:
        calls = _calls(fake.base_url)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nothing is masked, so nothing is said
            with promptvcr.use_cassette(path, record_mode="record"):
                live = [_send(client, url, body) for url, body in calls]
    # The tool calls were answered, with the credential-named arguments (whole or streamed).
    assert sum(b'"key": "D major"' in content or b'"key":"D major"' in content for _, content in live) >= 3
    with promptvcr.use_cassette(path, record_mode="none") as cassette, httpx.Client() as client:
        replayed = [_send(client, url, body) for url, body in calls]
    assert all(play.hit for play in cassette.played)
    for (url, _), got, want in zip(calls, replayed, live, strict=True):
        assert got == want, url
    assert "<redacted:" not in path.read_text().replace("<redacted:header:authorization>", "")


# Property tests: names that look like credentials, values that are none ------------------------

_NAMES = st.sampled_from(
    [
        *("key", "token", "api_key", "password", "secret", "auth", "authorization", "access_token"),
        *("apiKey", "private_key", "client_secret", "sessionToken", "x-api-key", "cookie", "sig", "code"),
    ]
)
#: Values no shape matches: words and spaces (a key has no space and is long).
_VALUES = st.text("abcdefghij ABC-", min_size=0, max_size=12)
_ARGUMENTS = st.dictionaries(_NAMES, _VALUES, min_size=1, max_size=4)
#: Header names that end like a credential and are none (their last two words say so).
_HEADER_NAMES = st.builds(
    lambda a, b: f"x-{a}-{b}",
    st.sampled_from(["ratelimit", "time-per", "cache", "request", "deployment", "google", "trace", "route"]),
    st.sampled_from(["key", "token", "tokens", "auth", "id"]),
)


def _round_trip(interaction: Interaction) -> Interaction:
    redacted = redaction.redact(
        [interaction], request_headers=ALL_HEADERS, response_headers=ALL_HEADERS, environ={}
    )
    assert not redacted.refused and not redacted.masked and not redacted.removed
    path = Path("x.yaml")
    return fileformat.loads("".join(fileformat.dump_pieces(redacted.data, path)), path)[0]


def _answer(arguments: str, content: str) -> bytes:
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    message = {"role": "assistant", "content": content, "tool_calls": [call]}
    return json.dumps({"id": "c", "object": "chat.completion", "choices": [{"message": message}]}).encode()


@property_settings(150)
@given(_ARGUMENTS, _ARGUMENTS, st.dictionaries(_HEADER_NAMES, _VALUES, max_size=3))
def test_names_that_look_like_credentials_in_what_a_model_produced_stay_byte_for_byte(
    arguments: dict[str, str], content: dict[str, str], headers: dict[str, str]
) -> None:
    answer = _answer(json.dumps(arguments), json.dumps(content))
    history = {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": arguments}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": json.dumps(content)}],
            },
        ],
    }
    events = b"".join(
        b"data: "
        + json.dumps({"type": "response.function_call_arguments.done", "arguments": text}).encode()
        + b"\n\n"
        for text in (json.dumps(arguments), json.dumps(content))
    )
    for response in (
        Response(200, {"content-type": "application/json", **headers}, [answer]),
        Response(200, {"content-type": "text/event-stream"}, [events]),
    ):
        request = Request(
            "POST",
            "https://api.test/v1/x",
            {"content-type": "application/json"},
            json.dumps(history).encode(),
        )
        back = _round_trip(Interaction(request, response))
        assert back.request.content == request.content
        assert back.response.content == response.content
        for name, value in headers.items():
            assert back.response.headers.get(name) == value if response.headers.get(name) else True


# The repro of issue 53: a Responses API tool call with an argument named "key" ----------------

ARGS = '{"style": "symphony", "key": "D major"}'


def _function_call(arguments: str, status: str = "completed") -> dict[str, Any]:
    return {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "compose"} | {
        "arguments": arguments,
        "status": status,
    }


def _response() -> dict[str, Any]:
    usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
    details = {"input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "gpt-4o",
    } | {
        "output": [_function_call(ARGS)],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage | details,
    }


def _events() -> tuple[bytes, ...]:
    added = {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": _function_call("", "in_progress"),
    }
    deltas = [
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 0,
            "delta": piece,
        }
        for piece in ('{"style": "sym', 'phony", "key": "D', ' major"}')
    ]
    done = {"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 0}
    events = [
        added,
        *deltas,
        done | {"arguments": ARGS},
        {"type": "response.completed", "response": _response()},
    ]
    return tuple(
        f"event: {event['type']}\ndata: {json.dumps(event | {'sequence_number': n})}\n\n".encode()
        for n, event in enumerate(events)
    )


def _compose(client: Any) -> tuple[str, str, str]:
    plain = client.responses.create(model="gpt-4o", input="write it")
    events = list(client.responses.create(model="gpt-4o", input="stream it", stream=True))
    deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    done = next(e.arguments for e in events if e.type == "response.function_call_arguments.done")
    return plain.output[0].arguments, deltas, done


def test_a_tool_call_argument_named_key_replays_byte_for_byte(tmp_path: Path) -> None:
    import openai
    from leak_checks import scan
    from leak_server import Answer, LeakServer

    path = tmp_path / "responses.yaml"

    def reply(request: Any) -> Answer:
        if b'"stream": true' in request.body or b'"stream":true' in request.body:
            return Answer(200, {"content-type": "text/event-stream"}, _events())
        return Answer(200, {"content-type": "application/json"}, (json.dumps(_response()).encode(),))

    with LeakServer() as server:
        server.reply = reply
        client = openai.OpenAI(api_key="sk-test-guard", base_url=f"{server.url}/v1", max_retries=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no SecretMaskedWarning: nothing is a credential
            with promptvcr.use_cassette(path, record_mode="record"):
                live = _compose(client)
        with promptvcr.use_cassette(path, record_mode="none"):
            replayed = _compose(client)
    assert live == (ARGS, ARGS, ARGS)
    assert replayed == live  # the final event agrees with the deltas, as it did
    assert "<redacted:field" not in path.read_text()
    assert scan(path).returncode == 0


def test_a_recording_keeps_headers_that_merely_end_in_key_or_token(tmp_path: Path) -> None:
    """A new recording leaves out the documented noise (``cf-*``, ``date``), never a header
    whose name only ends like a credential's."""
    from leak_server import Answer, LeakServer

    headers = {
        "content-type": "application/json",
        "x-ratelimit-key": "gpt-4o-eastus",
        "x-time-per-token": "23",
    }
    path = tmp_path / "headers.yaml"
    with LeakServer() as server:
        server.reply = lambda r: Answer(200, {**headers, "cf-ray": "8f1c-AMS"}, (b"{}",))
        with promptvcr.use_cassette(path, record_mode="record"):
            httpx.get(f"{server.url}/v1/models")
        with promptvcr.use_cassette(path, record_mode="none"):
            got = httpx.get(f"{server.url}/v1/models")
    assert got.headers["x-ratelimit-key"] == "gpt-4o-eastus" and got.headers["x-time-per-token"] == "23"
    assert "cf-ray" not in got.headers  # review noise, documented (docs/secrets.md)


# scan finds what recording finds, and only that ------------------------------------------------

#: Where a field sits in a request or answer body: (path of containers, side).
_PLACES = [
    ((), "request"),
    (("providers", 0), "request"),
    (("litellm_params",), "request"),
    (("settings",), "request"),
    (("messages", 0, "content", 0, "input"), "request"),
    (("contents", 0, "parts", 0, "functionCall", "args"), "request"),
    ((), "response"),
    (("choices", 0, "message"), "response"),
    (("data", 0), "response"),
]


def _placed(path: tuple[Any, ...], name: str, value: str) -> Any:
    document: Any = {name: value}
    for step in reversed(path):
        document = [document] if isinstance(step, int) else {step: document}
    return document if isinstance(document, dict) else {"items": document}


@property_settings(50)  # each example redacts and scans a whole file: 150 cost half a minute of CI
@given(
    st.sampled_from(_PLACES),
    _NAMES,
    st.text("abcdefghijkmnopqrstuvwxyzABCDEFGH0123456789", min_size=16, max_size=24),
)
def test_scan_finds_exactly_what_recording_removes(
    place: tuple[tuple[Any, ...], str], name: str, value: str
) -> None:
    path, side = place
    body = json.dumps(_placed(path, name, value))
    plain = json.dumps({"ok": True})
    request_body, answer = (body, plain) if side == "request" else (plain, body)
    interaction = Interaction(
        Request("POST", "https://api.test/v1/x", {"content-type": "application/json"}, request_body.encode()),
        Response(200, {"content-type": "application/json"}, [answer.encode()]),
    )
    redacted = redaction.redact([interaction], environ={})
    recorded = bool(redacted.removed or redacted.masked or redacted.refused)
    vcrpy = {
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": "https://api.test/v1/x",
                    "body": request_body,
                    "headers": {},
                },
                "response": {"status": {"code": 200}, "headers": {}, "body": {"string": answer}},
            }
        ]
    }
    assert bool(detect(vcrpy)) == recorded, (path, side, name)
    if redacted.data:  # and scan finds nothing in what recording wrote
        assert detect({"interactions": redacted.data}) == []
