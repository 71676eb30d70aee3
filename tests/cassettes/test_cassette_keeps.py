"""Issue 41: what a cassette keeps. Everything code reads (token counts, rate limits, request
ids, a HEAD answer's length) replays; a credential removed anywhere (a nested field, an MCP
tool argument, a form field, a websocket frame) no longer stops the recording replaying;
nothing printed shows a credential; a key in any encoding is found."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import random
import string
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import boto3
import httpx
import openai
import pytest
import requests
import yaml
from botocore.config import Config
from fake_bedrock import FakeBedrock
from hypothesis import given
from hypothesis import strategies as st
from leak_calls import JSON, call_openai, call_requests, chat
from leak_checks import assert_nowhere
from leak_server import Answer, LeakServer
from mcp import Client
from mcp_server import McpServer
from network_guard import no_network
from property_settings import property_settings
from realtime_server import RealtimeServer
from websockets.sync.client import connect

import promptvcr
from promptvcr import faults
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.credentials.decode import texts
from promptvcr.credentials.detect import detect
from promptvcr.files.redaction import SecretMaskedWarning, redact
from promptvcr.importers import import_vcr
from promptvcr.readouts.drift import DriftEntry, write_report

_rng = random.Random(4141)
URLSAFE = string.ascii_letters + string.digits


def shapeless() -> str:
    return "Zq" + "".join(_rng.choice(URLSAFE) for _ in range(34))


def _bedrock(endpoint: str) -> Any:
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"max_attempts": 1}),
    )


TOKEN_HEADERS = ("x-amzn-bedrock-input-token-count", "x-amzn-bedrock-output-token-count")


def test_bedrock_token_counts_replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenTelemetry's Bedrock instrumentation reads the usage of invoke_model from these."""
    path = tmp_path / "invoke.yaml"

    def invoke(client: Any) -> dict[str, str]:
        answer = client.invoke_model(modelId="cohere.embed-english-v3", body=b'{"texts":["hi"]}')
        headers: dict[str, str] = answer["ResponseMetadata"]["HTTPHeaders"]
        return {name: headers[name] for name in TOKEN_HEADERS if name in headers}

    with FakeBedrock() as fake, promptvcr.use_cassette(path, record_mode="record"):
        live = invoke(_bedrock(fake.base_url))
    with no_network(monkeypatch), promptvcr.use_cassette(path):
        replayed = invoke(_bedrock("http://127.0.0.1:9"))
    assert live == {"x-amzn-bedrock-input-token-count": "18", "x-amzn-bedrock-output-token-count": "1"}
    assert replayed == live


def test_import_keeps_every_header_but_credentials_and_names_those(tmp_path: Path) -> None:
    source = tmp_path / "vcr" / "chat.yaml"
    source.parent.mkdir()
    kept = {
        "x-request-id": "req_1",
        "request-id": "req_2",
        "x-ratelimit-remaining-tokens": "99",
        "anthropic-ratelimit-input-tokens-remaining": "98",
        "x-amzn-bedrock-input-token-count": "18",
        "openai-processing-ms": "12",
        "date": "Sat, 28 Nov 2026 06:00:00 GMT",
    }
    interaction = {
        "request": {
            "method": "POST",
            "uri": "https://api.openai.com/v1/chat/completions",
            "body": '{"model": "m"}',
            "headers": {
                "Authorization": ["Bearer sk-test-secret-value"],
                "Content-Type": ["application/json"],
            },
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {**{k: [v] for k, v in kept.items()}, "Set-Cookie": ["s=abcdefghijklmnop"]},
            "body": {"string": '{"id": "x"}'},
        },
    }
    source.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}))
    report = import_vcr([source.parent], tmp_path / "out")
    written = yaml.safe_load((tmp_path / "out" / "chat.yaml").read_text())["interactions"][0]
    assert kept.items() <= written["response"]["headers"].items()
    assert "set-cookie" not in written["response"]["headers"]
    assert "authorization" not in written["request"].get("headers", {})
    described = report.files[0].describe()
    assert "request.headers.authorization: header authorization (removed)" in described
    assert "response.headers.set-cookie: header set-cookie (removed)" in described


def _head_with_requests(url: str) -> dict[str, str]:
    return dict(requests.head(url, timeout=5).headers)


def _head_with_httpx(url: str) -> dict[str, str]:
    return dict(httpx.head(url, timeout=5).headers)


def _head_with_aiohttp(url: str) -> dict[str, str]:
    async def head() -> dict[str, str]:
        async with aiohttp.ClientSession() as session, session.head(url) as answer:
            assert await answer.read() == b""
            return dict(answer.headers)

    return asyncio.run(head())


@pytest.mark.parametrize("head", [_head_with_requests, _head_with_httpx, _head_with_aiohttp])
def test_a_head_answer_replays_its_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, head: Callable[[str], dict[str, str]]
) -> None:
    path = tmp_path / "head.yaml"
    recorded = {
        "content-type": "application/pdf",
        "etag": '"v1"',
        "last-modified": "Tue, 03 Nov 2026 10:00:00 GMT",
    }
    with LeakServer() as server:
        server.reply = lambda r: Answer(200, recorded, (b"x" * 1234,))
        url = f"{server.url}/files/report.pdf"
        with promptvcr.use_cassette(path, record_mode="record"):
            live = {k.lower(): v for k, v in head(url).items()}
    with no_network(monkeypatch), promptvcr.use_cassette(path) as cassette:
        replayed = {k.lower(): v for k, v in head(url).items()}
    assert [play.outcome for play in cassette.played] == ["replayed"]
    assert live["content-length"] == "1234"
    for name in ("content-length", "etag", "last-modified"):
        assert replayed[name] == live[name], name


def test_a_listed_header_is_kept_and_a_listed_credential_is_a_placeholder(tmp_path: Path) -> None:
    path = tmp_path / "listed.yaml"
    headers = {**JSON, "x-ratelimit-remaining-tokens": "7", "x-api-key": "Zq-echoed-0123456789", "date": "d"}
    with LeakServer() as server:
        server.reply = lambda r: Answer(200, headers, (b"{}",))
        listed = ["content-type", "x-ratelimit-remaining-tokens", "x-api-key"]
        with promptvcr.use_cassette(path, record_mode="record", response_headers=listed):
            call_requests("GET", f"{server.url}/v1/models")
    stored = yaml.safe_load(path.read_text())["interactions"][0]["response"]["headers"]
    assert stored == {
        "content-type": "application/json",
        "x-ratelimit-remaining-tokens": "7",
        "x-api-key": "<redacted:header:x-api-key>",
    }


def test_a_signature_removed_from_an_answer_is_reported(tmp_path: Path) -> None:
    sas = "https://acct.blob.core.windows.net/c/img.png?sv=2021-08-06&sp=r&sig=" + shapeless()
    with LeakServer() as server:
        server.reply = lambda r: Answer(200, JSON, (json.dumps({"data": [{"url": sas}]}).encode(),))
        recording = promptvcr.use_cassette(tmp_path / "sas.yaml", record_mode="record")
        with pytest.warns(SecretMaskedWarning, match=r"query sig"), recording:
            call_requests("GET", f"{server.url}/v1/images")
    assert "sig=<redacted:query:sig>" in (tmp_path / "sas.yaml").read_text()


# A recording with a credential removed deep in a request replays -----------------------------


def _replays(path: Path, call: Any, server_url: str) -> None:
    key = shapeless()
    with LeakServer() as server:
        server.reply = lambda r: chat("ok")
        with promptvcr.use_cassette(path, record_mode="record"):
            call(server.url, key)
    assert_nowhere(path, key)
    with promptvcr.use_cassette(path) as cassette:  # another key now: it takes no part in the key
        call(server.url, shapeless())
    assert all(play.hit for play in cassette.played)


def test_a_nested_field_credential_replays(tmp_path: Path) -> None:
    _replays(
        tmp_path / "nested.yaml",
        lambda url, key: call_openai(url, extra_body={"providers": [{"name": "a", "xi_api_key": key}]}),
        "",
    )


def test_a_form_field_credential_replays(tmp_path: Path) -> None:
    _replays(
        tmp_path / "form.yaml",
        lambda url, key: call_requests(
            "POST", f"{url}/oauth/token", data={"grant_type": "x", "private_token": key}
        ),
        "",
    )


async def _add(url: str, authorization: str) -> str:
    async with Client(url, mode="legacy") as client:
        added = await client.call_tool("add", {"a": 2, "b": 3, "authorization": authorization})
    return str(added.content[0].text)  # type: ignore[union-attr]


def test_an_mcp_tool_argument_named_authorization_is_kept_as_the_model_wrote_it(tmp_path: Path) -> None:
    """Issue 53: a tool call's arguments are what a model produced; a name in them means
    nothing (``{"key": "D major"}``): the argument is stored and replayed as it was."""
    path = tmp_path / "mcp.yaml"
    with McpServer() as server:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nothing masked, nothing said
            with promptvcr.use_cassette(path, record_mode="record"):
                live = asyncio.run(_add(server.url, "reader-role"))
        url = server.url
    assert "reader-role" in path.read_text() and "<redacted" not in path.read_text()
    with promptvcr.use_cassette(path, allow_playback_repeats=True) as cassette:
        assert asyncio.run(_add(url, "reader-role")) == live
    assert all(play.hit for play in cassette.played)


def test_a_bearer_token_in_a_tool_argument_is_found_by_its_shape(tmp_path: Path) -> None:
    """A token in a tool call's arguments is found by its shape, not by the argument's name;
    in a request it cannot be masked without changing what replay matches on: refused, said."""
    path = tmp_path / "mcp.yaml"
    token = shapeless()
    refused = pytest.raises(promptvcr.CassetteWriteError, match="bearer token")
    with McpServer() as server, refused, promptvcr.use_cassette(path, record_mode="record"):
        asyncio.run(_add(server.url, f"Bearer {token}"))
    if path.exists():
        assert_nowhere(path, token)


def test_a_websocket_frame_credential_replays(tmp_path: Path) -> None:
    path = tmp_path / "ws.yaml"

    def session(url: str, key: str) -> str:
        with connect(f"{url}/echo?room=41") as ws:
            ws.send(json.dumps({"type": "session.update", "session": {"voice": "a", "xi_api_key": key}}))
            echoed = str(ws.recv())
            ws.send("bye")
        return json.loads(echoed)["session"]["voice"]

    key = shapeless()
    with RealtimeServer() as server:
        with promptvcr.use_cassette(path, record_mode="record"):
            session(server.url, key)
        url = server.url
    assert_nowhere(path, key)
    with promptvcr.use_cassette(path):
        assert session(url, shapeless()) == "a"


# Nothing printed shows a credential --------------------------------------------------------------


def test_a_miss_shows_no_credential(tmp_path: Path) -> None:
    path = tmp_path / "miss.yaml"
    with LeakServer() as server:
        server.reply = lambda r: chat("ok")
        with promptvcr.use_cassette(path, record_mode="record"):
            call_requests("POST", f"{server.url}/v1/x", json={"q": 1, "cfg": {"xi_api_key": shapeless()}})
    live = shapeless()
    with pytest.raises(promptvcr.CassetteMiss) as missed, promptvcr.use_cassette(path):
        call_requests("POST", f"{server.url}/v1/x?key={live}", json={"q": 2, "cfg": {"xi_api_key": live}})
    assert live not in str(missed.value)
    entry = DriftEntry("t", str(path), f"sent {live} and sk-proj-{'Ab3' * 16}")
    write_report(tmp_path / "drift.txt", [entry])
    report = (tmp_path / "drift.txt").read_text()
    assert "sk-proj-Ab3" not in report and "<redacted:openai-key>" in report


def test_faults_fired_shows_no_credential(tmp_path: Path) -> None:
    key = shapeless()
    with LeakServer() as server:
        server.reply = lambda r: chat("ok")
        fault = faults.http_error(429, times=1)
        cassette = promptvcr.use_cassette(tmp_path / "f.yaml", record_mode="record", faults=[fault])
        with cassette, pytest.raises(openai.RateLimitError):  # the 429 the fault answers
            call_openai(server.url, api_key=key)
    assert cassette.faults_fired
    assert key not in repr(cassette.faults_fired)


# A key in any encoding is found ------------------------------------------------------------------

KEYS = [
    "sk-proj-" + "Q7w9E2r4T6y8U1i3O5p7A9s2D4f6G8h1J3k5L7z9Xc4V",
    "AIza" + "SyB3k9QwErTyUiOpAsDfGhJkLzXcVbNm123",
]


def _encode(step: str, text: str) -> str:
    if step == "percent":
        return quote(f"key={text}", safe="")
    if step == "base64":
        return base64.b64encode(text.encode()).decode()
    if step == "json":
        return json.dumps({"note": text})
    if step == "gzip":
        return base64.b64encode(gzip.compress(text.encode())).decode()
    return base64.b64encode(zlib.compress(text.encode())).decode()  # deflate


STEPS = st.lists(st.sampled_from(["percent", "base64", "json", "gzip", "deflate"]), min_size=1, max_size=3)


@property_settings(60)
@given(st.sampled_from(KEYS), STEPS, st.sampled_from(["request", "response"]))
def test_a_key_in_any_encoding_is_found_and_never_written(key: str, steps: list[str], where: str) -> None:
    value = key
    for step in steps:
        value = _encode(step, value)
    document = json.dumps({"model": "m", "data": value}).encode()
    plain = Request("POST", "https://api.test/v1/x", {"content-type": "application/json"}, b'{"model":"m"}')
    request = Request("POST", "https://api.test/v1/x", {"content-type": "application/json"}, document)
    response = Response(200, {"content-type": "application/json"}, [document])
    interaction = (
        Interaction(request, Response(200, {}, [b"{}"]))
        if where == "request"
        else Interaction(plain, response)
    )
    assert detect({where: {"json": json.loads(document)}}), (steps, value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stored = redact([interaction]).data
    assert not any(key in text for item in stored for _, text in texts(item, ""))
