"""Issue 41: the placements where a key still leaked, each through the real client that puts
it there, on record and in ``promptvcr scan``.

Record: the call is recorded against a loopback server; the key must be nowhere in the file
(raw, URL-decoded, base64-decoded, joined across events). The interaction is written with a
placeholder, or refused (a key-shaped value in a request cannot be masked without changing
what replay matches on): either way nothing leaks. Scan: the same traffic written as vcrpy
writes it (every header, the body as sent) must make ``promptvcr scan`` exit 1. Only public
API and the command line are used, so the cases run unchanged against older code (the
before/after table of the issue's closing note).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import random
import string
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
import zstandard
from leak_calls import JSON, call_aiohttp, call_openai, call_requests, chat
from leak_checks import assert_nowhere, scan
from leak_server import Answer, LeakServer, Received

import promptvcr

_rng = random.Random(41)
URLSAFE = string.ascii_letters + string.digits


def _run(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


#: Realistic fake keys: each has its provider's shape (none of them works anywhere).
OPENAI = "sk-proj-" + _run(URLSAFE, 48)
GOOGLE = "AIza" + _run(URLSAFE, 35)
TELEGRAM = "7" + _run(string.digits, 9) + ":AA" + _run(URLSAFE, 33)
#: 108 characters: as a protobuf string field, its length byte is 108, the letter ``l``.
ANTHROPIC_108 = "sk-ant-api03-" + _run(URLSAFE, 95)


def shapeless() -> str:
    """A key of no known shape: only its name or its value can give it away."""
    return "Zq" + _run(URLSAFE, 34)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@dataclass(frozen=True)
class Case:
    name: str
    key: Callable[[], str]
    call: Callable[[str, str], Any]
    reply: Callable[[Received, str], Answer] = lambda request, key: chat("ok")
    #: The run's environment holds the key under this name.
    env: str = ""
    #: ``promptvcr scan`` can find it in a file (by shape or by name; a value known only to
    #: the recording run cannot be).
    scannable: bool = True


def _post_compressed(
    compress: Callable[[bytes], bytes], encoding: str, body: Callable[[str], dict[str, Any]]
):  # type: ignore[no-untyped-def]
    def call(url: str, key: str) -> Any:
        headers = {"content-type": "application/json", "content-encoding": encoding}
        return call_requests(
            "POST", f"{url}/v1/ingest", data=compress(json.dumps(body(key)).encode()), headers=headers
        )

    return call


CASES = [
    # A key-shaped value needs no boundary before it: escapes, the path of a bot API.
    Case("query value key%3Dsk- (requests)", lambda: OPENAI,
         lambda url, key: call_requests("GET", f"{url}/v1/search", params={"q": f"key={key}"})),
    Case("query value Bearer%20sk- (httpx)", lambda: OPENAI,
         lambda url, key: httpx.get(f"{url}/v1/proxy?h=Bearer%20{key}").content),
    Case("answer link q%3DAIza (requests)", lambda: GOOGLE,
         lambda url, key: call_requests("GET", f"{url}/v1/places"),
         lambda r, k: Answer(200, JSON, (json.dumps({"next": f"https://maps.test/s?x=1&q%3D{k}"}).encode(),))),
    Case("path /bot<token> (requests)", lambda: TELEGRAM,
         lambda url, key: call_requests("GET", f"{url}/bot{key}/getMe")),
    Case("path /bot<sk-key> (httpx)", lambda: OPENAI,
         lambda url, key: httpx.get(f"{url}/bot{key}/getMe").content),
    # Issue 53: shaped keys glued to a word character, where the prefix is distinctive.
    Case("answer x_sk-proj- glued to a word (openai)", lambda: OPENAI,
         lambda url, key: call_openai(url), lambda r, k: chat(f"id x_{k} end")),
    Case("answer 1AIza glued to a digit (requests)", lambda: GOOGLE,
         lambda url, key: call_requests("GET", f"{url}/v1/places"),
         lambda r, k: Answer(200, JSON, (json.dumps({"v": f"1{k}"}).encode(),))),
    Case("query botsk-proj- glued (httpx)", lambda: OPENAI,
         lambda url, key: httpx.get(f"{url}/v1/x?q=bot{key}").content),
    Case("protobuf string field whose length byte is a letter (requests)", lambda: ANTHROPIC_108,
         lambda url, key: call_requests("GET", f"{url}/v1/proto"),
         lambda r, k: Answer(200, {"content-type": "application/x-protobuf"},
                             (b"\x0a\x6c" + k.encode() + b"\x10\x01",))),
    # Issue 53: keys of no known shape, found by the place a format gives them.
    Case("key= in a URL nested in another URL's query (requests)", shapeless,
         lambda url, key: call_requests("GET", f"{url}/v1/fetch", params={"url": f"https://api.test/v?a=1&key={key}"})),
    Case(".env file uploaded as multipart, OPENAI_API_KEY= (requests)", shapeless,
         lambda url, key: call_requests("POST", f"{url}/v1/files", files={
             "file": (".env", f"DEBUG=1\nOPENAI_API_KEY={key}\n", "text/plain")})),
    Case(".env file returned by an answer, export HF_TOKEN= (requests)", shapeless,
         lambda url, key: call_requests("GET", f"{url}/v1/files/env/content"),
         lambda r, k: Answer(200, {"content-type": "text/plain"},
                             (f"# cfg\nexport HF_TOKEN='{k}'\n".encode(),))),
    # Encodings: base64 in a JSON string, JSON in a JSON string, compressed bodies, file parts.
    Case("base64 in a JSON string of an answer (openai)", lambda: OPENAI,
         lambda url, key: call_openai(url), lambda r, k: chat(_b64(f"api_key={k}"))),
    Case("base64 in a JSON string of a request (requests)", lambda: OPENAI,
         lambda url, key: call_requests("POST", f"{url}/v1/jobs", json={"blob": _b64(f"config: {key}")})),
    Case("JSON in a JSON string, openai_api_key (openai)", shapeless,
         lambda url, key: call_openai(url, extra_body={"config": json.dumps({"openai_api_key": key})})),
    Case("gzip request body, api_key (requests)", shapeless,
         _post_compressed(gzip.compress, "gzip", lambda k: {"api_key": k})),
    Case("deflate request body, key in a prompt (requests)", lambda: OPENAI,
         _post_compressed(zlib.compress, "deflate", lambda k: {"prompt": f"use {k}"})),
    Case("zstd request body, key in a prompt (requests)", lambda: OPENAI,
         _post_compressed(zstandard.compress, "zstd", lambda k: {"prompt": f"use {k}"})),
    Case("multipart file part, openai_api_key (requests)", shapeless,
         lambda url, key: call_requests("POST", f"{url}/v1/files", files={
             "file": ("config.json", json.dumps({"openai_api_key": key}), "application/json")})),
    # Names that mean a credential.
    Case("json openai_api_key (openai)", shapeless,
         lambda url, key: call_openai(url, extra_body={"openai_api_key": key})),
    Case("json xi_api_key (requests)", shapeless,
         lambda url, key: call_requests("POST", f"{url}/v1/tts", json={"voice": "v", "xi_api_key": key})),
    Case("json aws.access_key (aiohttp)", shapeless,
         lambda url, key: call_aiohttp("POST", f"{url}/v1/x", json={"aws": {"access_key": key}})),
    Case("query private_token (requests)", shapeless,
         lambda url, key: call_requests("GET", f"{url}/api/v4/projects", params={"private_token": key})),
    # The run's own credentials, under names the environment scan missed.
    *(
        Case(f"environment ${name} echoed (requests)", shapeless,
             lambda url, key: call_requests("GET", f"{url}/v1/config"),
             lambda r, k: Answer(200, JSON, (json.dumps({"gateway": {"value": k}}).encode(),)),
             env=name, scannable=False)
        for name in ("AZURE_OPENAI_KEY", "AWS_SECRET_ACCESS_KEY", "OPENAI_KEY")
    ),
]  # fmt: skip


def _vcrpy_file(path: Path, server: LeakServer, answers: list[Answer], key: str) -> None:
    """The traffic as vcrpy stores it: bodies as sent (bytes as ``!!binary``), every header
    but the SDK's own credential headers that do not hold ``key`` (a scan must find the
    placement, not the client's default key)."""
    interactions = []
    for received, answer in zip(server.requests, answers, strict=True):
        body: Any = received.body
        with contextlib.suppress(UnicodeDecodeError):
            body = body.decode("utf-8")
        query = f"?{received.query}" if received.query else ""
        interactions.append(
            {
                "request": {
                    "method": received.method,
                    "uri": f"{server.url}{received.path}{query}",
                    "body": body or None,
                    "headers": {
                        name: [value]
                        for name, value in received.headers.items()
                        if key in value or name not in ("authorization", "x-api-key")
                    },
                },
                "response": {
                    "status": {"code": answer.status, "message": "OK"},
                    "headers": {name: [value] for name, value in answer.headers.items()},
                    "body": {"string": b"".join(answer.chunks).decode("utf-8", "replace")},
                },
            }
        )
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))


def _record(case: Case, path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, LeakServer, list[Answer]]:
    key = case.key()
    if case.env:
        monkeypatch.setenv(case.env, key)
    answers: list[Answer] = []

    def reply(request: Received) -> Answer:
        answers.append(case.reply(request, key))
        return answers[-1]

    with LeakServer() as server:
        server.reply = reply
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                with promptvcr.use_cassette(path, record_mode="record"):
                    case.call(server.url, key)
            except promptvcr.CassetteSecretError:
                pass  # refused: the request holds a key that cannot be masked where it is
    return key, server, answers


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_on_record_the_key_is_nowhere(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.yaml"
    key, server, _ = _record(case, path, monkeypatch)
    assert server.requests, "the call reached the server"
    if path.exists():
        assert_nowhere(path, key)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.scannable], ids=[c.name for c in CASES if c.scannable]
)
def test_scan_finds_the_key_in_a_file_that_kept_it(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key, server, answers = _record(case, tmp_path / "c.yaml", monkeypatch)
    vcrpy = tmp_path / "vcrpy.yaml"
    _vcrpy_file(vcrpy, server, answers, key)
    scanned = scan(vcrpy)
    assert scanned.returncode == 1, scanned.stdout + scanned.stderr
    assert key not in scanned.stdout + scanned.stderr  # it says where and what, never the value


def test_a_key_sent_in_one_request_is_masked_where_the_next_one_echoes_it(tmp_path: Path) -> None:
    key = shapeless()
    path = tmp_path / "c.yaml"
    with LeakServer() as server:
        server.reply = lambda r: chat(f"the key was {key}" if r.path == "/v1/echo" else "ok")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with promptvcr.use_cassette(path, record_mode="record"):
                call_requests("GET", f"{server.url}/v1/models", headers={"x-api-key": key})
                call_requests("GET", f"{server.url}/v1/echo")
    assert len(yaml.safe_load(path.read_text())["interactions"]) == 2
    assert_nowhere(path, key)


def test_a_key_sent_while_recording_one_cassette_is_masked_in_the_next(tmp_path: Path) -> None:
    key = shapeless()
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    with LeakServer() as server:
        server.reply = lambda r: chat(f"the key was {key}" if r.path == "/v1/echo" else "ok")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with promptvcr.use_cassette(first, record_mode="record"):
                call_requests("GET", f"{server.url}/v1/models", headers={"authorization": f"Bearer {key}"})
            with promptvcr.use_cassette(second, record_mode="record"):
                call_requests("GET", f"{server.url}/v1/echo")
    assert_nowhere(first, key)
    assert_nowhere(second, key)
