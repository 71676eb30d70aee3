"""Issue 53: import keeps what the source held and says what it changed.

A gzip label over a body that is not compressed (vcrpy with requests stores the decoded body
and keeps the label) is kept as recorded and replays as the original did; a HEAD answer
keeps its content-length, etag and last-modified; the counts and positions printed are those
of what was written; a signed URL's ``sig`` masked in an answer is printed with its place.
Each file is written as vcrpy writes it and replayed through a real httpx client."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import httpx
import pytest
from network_guard import no_network

import promptvcr
from promptvcr.cli import main
from promptvcr.importers import import_vcr

_rng = random.Random(53)
ANSWER = {"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"message": {"content": "hi"}}]}


def _interaction(method: str, uri: str, status: object, headers: dict[str, list[str]], body: str) -> str:
    lines = [
        "- request:",
        "    body: null",
        "    headers: {}",
        f"    method: {method}",
        f"    uri: {uri}",
        "  response:",
        f"    body: {{string: {json.dumps(body)}}}",
        f"    headers: {json.dumps(headers)}",
        f"    status: {json.dumps(status)}",
    ]
    return "\n".join(lines) + "\n"


def _cassette(path: Path, *interactions: str) -> Path:
    path.write_text("interactions:\n" + "".join(interactions) + "version: 1\n")
    return path


def test_a_gzip_label_over_a_plain_body_is_kept_and_replays_as_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    body = json.dumps(ANSWER)
    headers = {"Content-Type": ["application/json"], "Content-Encoding": ["gzip"]}
    source = _cassette(
        tmp_path / "plain.yaml",
        _interaction(
            "GET", "https://api.openai.com/v1/models", {"code": 200, "message": "OK"}, headers, body
        ),
    )
    assert main(["import-vcr", str(source), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "1/1 interactions" in printed and "over a body that is not compressed: kept as recorded" in printed
    with no_network(monkeypatch), promptvcr.use_cassette(tmp_path / "out" / "plain.yaml") as used:
        got = httpx.get("https://api.openai.com/v1/models")
    assert got.content == body.encode() and used.played[0].hit


def test_a_head_answer_keeps_its_length_and_validators(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    headers = {
        "Content-Length": ["50746"],
        "ETag": ['"5f2c-abc"'],
        "Last-Modified": ["Tue, 01 Dec 2026 10:00:00 GMT"],
        "Content-Type": ["application/pdf"],
    }
    url = "https://example.com/paper.pdf"
    source = _cassette(tmp_path / "head.yaml", _interaction("HEAD", url, {"code": 200}, headers, ""))
    report = import_vcr([source], tmp_path / "out")
    assert report.files[0].ok, report.files[0].describe()
    with no_network(monkeypatch), promptvcr.use_cassette(tmp_path / "out" / "head.yaml"):
        got = httpx.head(url)
    assert got.headers["content-length"] == "50746"
    assert got.headers["etag"] == '"5f2c-abc"' and got.headers["last-modified"].startswith("Tue, 01 Dec")


def test_counts_and_positions_are_those_written(tmp_path: Path) -> None:
    key = "sk-proj-" + "".join(_rng.choice(string.ascii_letters + string.digits) for _ in range(48))
    ok = {"code": 200, "message": "OK"}
    json_type = {"Content-Type": ["application/json"]}
    source = _cassette(
        tmp_path / "mixed.yaml",
        _interaction("GET", "https://api.openai.com/v1/a", "not a status", json_type, "{}"),
        _interaction("GET", "https://api.openai.com/v1/b", ok, json_type, "{}"),
        _interaction("GET", f"https://api.openai.com/v1/c/{key}", ok, json_type, "{}"),
        _interaction("GET", "https://api.openai.com/v1/d", ok, json_type, "{}"),
    )
    report = import_vcr([source], tmp_path / "out")
    said = report.files[0].describe()
    assert "2/4 interactions" in said and report.interaction_count == 2, said
    assert "2/4 interactions imported" in report.summary()
    assert "interactions[0].response.status" in said  # the one not converted, at its position
    assert "interactions[2] GET" in said  # the one refused, at its position in the source
    assert key not in (tmp_path / "out" / "mixed.yaml").read_text()


def test_a_signature_masked_in_an_answer_is_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sig = "".join(_rng.choice(string.ascii_letters + string.digits) for _ in range(43)) + "%3D"
    image = f"https://oaidalleapiprodscus.blob.core.windows.net/private/img.png?st=2026&sp=r&sig={sig}"
    body = json.dumps({"created": 1, "data": [{"url": image}]})
    source = _cassette(
        tmp_path / "dalle.yaml",
        _interaction(
            "POST",
            "https://api.openai.com/v1/images/generations",
            {"code": 200},
            {"Content-Type": ["application/json"]},
            body,
        ),
    )
    assert main(["import-vcr", str(source), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "interactions[0].response" in printed and "query sig (removed)" in printed
    assert "1 credential(s) removed or masked in 1 file(s)" in printed
    assert main(["scan", str(tmp_path / "out")]) == 0  # its own placeholder is no finding


def test_import_keeps_every_header_that_is_no_credential(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cf-*, x-envoy-*, and names that merely end in key or token (issue 53: their last word is
    not what makes a credential); only the credentials go, each printed."""
    kept = {
        "cf-ray": ["8f1c2a3b4d5e6f70-AMS"],
        "cf-cache-status": ["DYNAMIC"],
        "x-envoy-upstream-service-time": ["412"],
        "x-time-per-token": ["23"],
        "x-ratelimit-key": ["gpt-4o-eastus-deployment"],
        "Content-Type": ["application/json"],
    }
    source = tmp_path / "headers.yaml"
    source.write_text(
        "interactions:\n- request:\n    body: null\n"
        '    headers: {"google-auth": ["2.35.0"], "Authorization": ["Bearer abcdefghijklmnop1234"]}\n'
        "    method: GET\n    uri: https://api.openai.com/v1/models\n"
        "  response:\n    body: {string: '{}'}\n"
        f"    headers: {json.dumps({**kept, 'Set-Cookie': ['__cf_bm=abcdefghijklmnop; path=/']})}\n"
        "    status: {code: 200, message: OK}\nversion: 1\n"
    )
    report = import_vcr([source], tmp_path / "out")
    said = report.files[0].describe()
    assert "request.headers.authorization: header authorization (removed)" in said
    assert "response.headers.set-cookie: header set-cookie (removed)" in said
    assert report.masked_count == 2, said
    stored = (tmp_path / "out" / "headers.yaml").read_text()
    assert "2.35.0" in stored and "abcdefghijklmnop" not in stored
    with no_network(monkeypatch), promptvcr.use_cassette(tmp_path / "out" / "headers.yaml"):
        got = httpx.get("https://api.openai.com/v1/models")
    for name, (value,) in kept.items():
        assert got.headers[name] == value, name


def test_migrate_prints_each_credential_it_removed_per_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "suite" / "cassettes"
    folder.mkdir(parents=True)
    (folder / "chat.yaml").write_text(
        "interactions:\n- request:\n    body: null\n"
        '    headers: {"Authorization": ["Bearer abcdefghijklmnop1234"]}\n'
        "    method: GET\n    uri: https://api.openai.com/v1/models?api_key=abcdefghijklmnop1234\n"
        "  response:\n    body: {string: '{}'}\n"
        '    headers: {"Content-Type": ["application/json"], "x-ratelimit-key": ["eastus"]}\n'
        "    status: {code: 200, message: OK}\nversion: 1\n"
    )
    main(["migrate", str(tmp_path / "suite")])
    printed = capsys.readouterr().out
    assert f"{folder / 'chat.yaml'}: 2 credential(s) removed or masked" in printed
    assert "interactions[0].request.headers.authorization: header authorization (removed)" in printed
    assert "interactions[0].request.url: query api_key (removed)" in printed
    assert "credentials: 2 removed or masked" in printed
    assert "eastus" in (folder / "chat.yaml").read_text()
