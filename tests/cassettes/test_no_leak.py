"""Issue 16: no credential reaches a cassette by any path, and a legitimate answer is kept.

Each placement records one real client call against a loopback server (``leak_server``)
with a key where real code and real providers put one, then looks for the key everywhere
in the file: raw, URL-decoded, inside every base64 string (gzip inflated), and joined
across the events of a stream. The keys are random and built at run time: most have no
shape the scanner knows, so only redaction by name and by value can remove them.
"""

from __future__ import annotations

import base64
import gzip
import json
import random
import string
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote_plus

import pytest
from leak_calls import (
    JSON,
    SSE,
    call_aiohttp,
    call_anthropic,
    call_genai,
    call_openai,
    call_requests,
    chat,
    chat_stream,
    gemini,
    message,
)
from leak_checks import assert_nowhere
from leak_server import Answer, LeakServer, Received

import promptvcr
from promptvcr.files import persister
from promptvcr.files.redaction import SecretMaskedWarning

_rng = random.Random(16)
ALNUM = string.ascii_letters + string.digits


def shapeless_key() -> str:
    """A key of no known provider's shape: only its place or its value can give it away."""
    return "Zq" + "".join(_rng.choice(ALNUM) for _ in range(34))


def anthropic_shaped() -> str:
    return "sk-ant-api03-" + "".join(_rng.choice(ALNUM + "-_") for _ in range(93)) + "AA"


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


@dataclass(frozen=True)
class Placement:
    name: str
    call: Callable[[str, str], Any]
    reply: Callable[[Received, str], Answer] = lambda request, key: chat("ok")
    #: The key travels in the request (checked on the server, so the placement is real).
    sent: bool = True
    #: The key is in the environment under this name (the run's own credential).
    env: str = ""


def _q(name: str) -> Placement:
    return Placement(
        f"query {name}", lambda url, key: call_requests("GET", f"{url}/v1/models", params={name: key})
    )


def _json(name: str, body: Callable[[str], dict[str, Any]], client: str) -> Placement:
    def call(url: str, key: str) -> Any:
        if client == "openai":
            return call_openai(url, extra_body=body(key))
        if client == "anthropic":
            return call_anthropic(url, extra_body=body(key))
        if client == "aiohttp":
            return call_aiohttp("POST", f"{url}/v1/chat/completions", json={"model": "m", **body(key)})
        return call_requests("POST", f"{url}/v1/chat/completions", json={"model": "m", **body(key)})

    reply: Callable[[Received, str], Answer] = (
        (lambda r, k: message("ok")) if client == "anthropic" else (lambda r, k: chat("ok"))
    )
    return Placement(f"json {name} ({client})", call, reply)


def _sse_raw(pieces: list[str]) -> Answer:
    return Answer(200, SSE, tuple(f"data: {piece}\n\n".encode() for piece in pieces))


def _signed(url: str) -> Callable[[Received, str], Answer]:
    return lambda request, key: Answer(200, JSON, (json.dumps({"data": [{"url": url + key}]}).encode(),))


SHAPED = anthropic_shaped()

PLACEMENTS = [
    # Headers: the providers' own and ones nobody listed.
    Placement("header authorization (openai)", lambda url, key: call_openai(url, api_key=key)),
    Placement(
        "header x-api-key (anthropic)",
        lambda url, key: call_anthropic(url, api_key=key),
        lambda r, k: message("ok"),
    ),
    Placement(
        "header x-goog-api-key (genai)",
        lambda url, key: call_genai(url, api_key=key),
        lambda r, k: gemini("ok"),
    ),
    Placement(
        "header x-portkey-api-key (requests)",
        lambda url, key: call_requests(
            "POST", f"{url}/v1/chat/completions", json={}, headers={"x-portkey-api-key": key}
        ),
    ),
    Placement(
        "header cookie (aiohttp)",
        lambda url, key: call_aiohttp("GET", f"{url}/v1/models", headers={"cookie": f"session={key}"}),
    ),
    Placement(
        "header basic auth password (requests)",
        lambda url, key: call_requests("GET", f"{url}/v1/models", auth=("me", key)),
    ),
    # Query parameters.
    *(
        _q(name)
        for name in ("x-api-key", "auth", "access-token", "refresh_token", "password", "secret", "code")
    ),
    *(_q(name) for name in ("subscription-key", "key", "api_key", "token", "sig")),
    Placement(
        "query api-key (openai default_query, Azure)",
        lambda url, key: call_openai(url, default_query={"api-key": key}),
    ),
    Placement(
        "query key (aiohttp)",
        lambda url, key: call_aiohttp("GET", f"{url}/v1beta/models", params={"key": key}),
    ),
    # JSON bodies at any depth and under other spellings.
    _json("auth.api_key", lambda k: {"auth": {"api_key": k}}, "openai"),
    _json("metadata.api_key", lambda k: {"metadata": {"api_key": k}}, "openai"),
    _json("providers[0].api_key", lambda k: {"providers": [{"api_key": k}]}, "openai"),
    _json("credentials.password", lambda k: {"credentials": {"password": k}}, "anthropic"),
    _json("api-key", lambda k: {"api-key": k}, "requests"),
    _json("secret", lambda k: {"secret": k}, "requests"),
    _json("token", lambda k: {"token": k}, "aiohttp"),
    _json("key", lambda k: {"key": k}, "requests"),
    # Form bodies.
    Placement(
        "form client_secret (requests)",
        lambda url, key: call_requests(
            "POST", f"{url}/token", data={"grant_type": "x", "client_secret": key}
        ),
        lambda r, k: Answer(200, JSON, (b'{"expires_in": 3599}',)),
    ),
    Placement(
        "response access_token by name (requests)",
        lambda url, key: call_requests("POST", f"{url}/token", data={"grant_type": "client_credentials"}),
        lambda r, k: Answer(200, JSON, (json.dumps({"access_token": k, "expires_in": 3599}).encode(),)),
        sent=False,
    ),
    # The key echoed back by the server.
    Placement(
        "echo in a JSON answer (openai)",
        lambda url, key: call_openai(url, api_key=key),
        lambda r, k: chat(f"Incorrect API key provided: {k}."),
    ),
    Placement(
        "echo in an SSE event (openai)",
        lambda url, key: call_openai(url, api_key=key, stream=True),
        lambda r, k: chat_stream(["Your key ", f"is {k}.", " Bye"]),
    ),
    Placement(
        "echo in an error body (anthropic)",
        lambda url, key: call_anthropic(url, api_key=key),
        lambda r, k: message(f"invalid x-api-key: {k}", status=401),
    ),
    Placement(
        "echo in a JSON answer (genai)",
        lambda url, key: call_genai(url, api_key=key),
        lambda r, k: gemini(f"key {k}"),
    ),
    Placement(
        "echo URL-encoded in a link (requests)",
        lambda url, key: call_requests("GET", f"{url}/v1/items", params={"api_key": key + "/+="}),
        lambda r, k: Answer(
            200, JSON, (json.dumps({"next": f"/v1/items?page=2&x={quote(k + '/+=', safe='')}"}).encode(),)
        ),
    ),
    # Allowed response headers that hold URLs.
    Placement(
        "response header location ?key= (requests)",
        lambda url, key: call_requests("POST", f"{url}/v1/jobs", params={"key": key}, allow_redirects=False),
        lambda r, k: Answer(303, {"location": f"/v1/jobs/1?key={k}", "content-length": "0"}, (b"",)),
    ),
    Placement(
        "response header x-goog-upload-url &key= (requests)",
        lambda url, key: call_requests(
            "POST", f"{url}/upload/v1beta/files", headers={"x-goog-api-key": key}, json={}
        ),
        lambda r, k: Answer(
            200, {**JSON, "x-goog-upload-url": f"http://127.0.0.1/upload?upload_id=1&key={k}"}, (b"{}",)
        ),
    ),
    # Bodies stored as base64.
    Placement(
        "multipart field api_key beside a file (requests)",
        lambda url, key: call_requests(
            "POST", f"{url}/v1/files", data={"api_key": key}, files={"file": ("a.png", PNG)}
        ),
    ),
    Placement(
        "binary response holding the key (requests)",
        lambda url, key: call_requests(
            "GET", f"{url}/v1/files/1", headers={"authorization": f"Bearer {key}"}
        ),
        lambda r, k: Answer(200, {"content-type": "application/octet-stream"}, (PNG + k.encode() + PNG,)),
    ),
    Placement(
        "gzip file holding the key (requests)",
        lambda url, key: call_requests("GET", f"{url}/v1/files/2", headers={"x-api-key": key}),
        lambda r, k: Answer(
            200, {"content-type": "application/gzip"}, (gzip.compress(PNG + k.encode() + PNG),)
        ),
    ),
    Placement(
        "gzip-encoded JSON echo (requests)",
        lambda url, key: call_requests("GET", f"{url}/v1/me", headers={"api-key": key}),
        lambda r, k: Answer(
            200, {**JSON, "content-encoding": "gzip"}, (gzip.compress(json.dumps({"k": k}).encode()),)
        ),
    ),
    # Streams: a key split across two events.
    Placement(
        "request key split across two SSE events (openai)",
        lambda url, key: call_openai(url, api_key=key, stream=True),
        lambda r, k: chat_stream(["it is " + k[:15], k[15:] + " indeed"]),
    ),
    Placement(
        "request key split across two raw SSE events (aiohttp)",
        lambda url, key: call_aiohttp("GET", f"{url}/v1/stream", headers={"x-api-key": key}),
        lambda r, k: _sse_raw([k[:9], k[9:]]),
    ),
    Placement(
        "shaped key split across two SSE events, never sent (openai)",
        lambda url, key: call_openai(url, stream=True),
        lambda r, k: chat_stream(["leaked: " + SHAPED[:30], SHAPED[30:] + " end"]),
        sent=False,
    ),
    # The run's own credential, sent by nobody, answered by the server.
    Placement(
        "environment credential in an answer (requests)",
        lambda url, key: call_requests("GET", f"{url}/v1/config"),
        lambda r, k: Answer(200, JSON, (json.dumps({"gateway": {"secret_value": k}}).encode(),)),
        sent=False,
        env="LEAK_TEST_GATEWAY_TOKEN",
    ),
    # Signed URLs in an answer (image generation, file downloads).
    Placement(
        "Azure SAS sig= in an answer",
        lambda url, key: call_requests("GET", f"{url}/v1/images"),
        _signed("https://acct.blob.core.windows.net/c/img.png?sv=2021-08-06&se=2025-01-01&sp=r&sig="),
        sent=False,
    ),
    Placement(
        "S3 X-Amz-Signature in an answer",
        lambda url, key: call_requests("GET", f"{url}/v1/images"),
        _signed("https://b.s3.amazonaws.com/i.png?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature="),
        sent=False,
    ),
    Placement(
        "GCS X-Goog-Signature in an answer",
        lambda url, key: call_requests("GET", f"{url}/v1/images"),
        _signed("https://storage.googleapis.com/b/i.png?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature="),
        sent=False,
    ),
]


def _sent(server: LeakServer, key: str) -> bool:
    for request in server.requests:
        seen = f"{request.headers} {unquote_plus(request.query)} ".encode() + request.body
        basic = request.headers.get("authorization", "").removeprefix("Basic ")
        if key.encode() in seen or key.encode() in base64.b64decode(basic + "==", validate=False):
            return True
    return False


@pytest.mark.parametrize("placement", PLACEMENTS, ids=[p.name for p in PLACEMENTS])
def test_the_key_is_nowhere_in_the_cassette(
    placement: Placement, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = shapeless_key()
    if placement.env:
        monkeypatch.setenv(placement.env, key)
    path = tmp_path / "c.yaml"
    with LeakServer() as server:
        server.reply = lambda request: placement.reply(request, key)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SecretMaskedWarning)
            with promptvcr.use_cassette(path, record_mode="record"):
                placement.call(server.url, key)
        assert not placement.sent or _sent(server, key), "the placement never sent the key"
    assert len(persister.load(path).interactions) == 1  # recorded, not refused
    assert_nowhere(path, key)
    assert_nowhere(path, SHAPED)


def test_the_placements_cover_the_issue() -> None:
    assert len(PLACEMENTS) >= 36
