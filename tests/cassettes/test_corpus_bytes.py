"""Every body of the corpus subset (real provider traffic, vcrpy cassettes) replays byte for
byte after ``import_vcr``, while the cassette keeps it parsed: JSON as documents, streams as
events. The original bytes are what vcrpy itself replays: the ``body`` string (decompressed
as its ``content-encoding`` says), or ``json.dumps`` of pydantic-ai's ``parsed_body``."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import anthropic
import pytest
import yaml
from network_guard import no_network

import promptvcr
from promptvcr.files import fileformat
from promptvcr.importers import import_vcr

CORPUS = Path(__file__).parents[1] / "corpus" / "pydantic-ai"


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_text(item) for item in value)
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def _headers(data: dict[str, Any]) -> dict[str, str]:
    return {str(k).lower(): _text(v) for k, v in (data or {}).items()}


def _original(part: dict[str, Any]) -> bytes:
    if "parsed_body" in part:
        return json.dumps(part["parsed_body"]).encode()
    body = part.get("body")
    if isinstance(body, dict):
        body = body.get("string")
    content = body.encode() if isinstance(body, str) else (body or b"")
    encoding = _headers(part.get("headers") or {}).get("content-encoding", "")
    if content and "gzip" in encoding:
        content = gzip.decompress(content)
    elif content and "deflate" in encoding:
        content = zlib.decompress(content)
    return content


def _bodies(tmp_path: Path) -> list[tuple[str, bytes, bytes]]:
    """(where, original, replayed) for every request and response body of the corpus."""
    report = import_vcr([CORPUS], tmp_path)
    assert not report.failed and not report.partial, report.summary()
    seen = []
    for file in report.files:
        assert file.output is not None
        raw = yaml.safe_load(file.source.read_text())["interactions"]
        stored = fileformat.loads(file.output.read_text(), file.output)
        assert len(stored) == len(raw)
        for index, (source, interaction) in enumerate(zip(raw, stored, strict=True)):
            where = f"{file.source.relative_to(CORPUS)}[{index}]"
            for side, replayed in (
                ("request", interaction.request.content),
                ("response", interaction.response.content),
            ):
                original = _original(source[side])
                if original:
                    seen.append((f"{where}.{side}", original, replayed))
    return seen


#: Bodies that differ, on purpose: none. The one OAuth token exchange of the corpus holds
#: vcrpy's ``scrubbed`` where its credentials were: a placeholder is no credential, so it is
#: kept as it is (issue 41: nothing that is not a credential is removed).
REDACTIONS: dict[str, list[tuple[bytes, bytes]]] = {}


def test_every_corpus_body_replays_byte_for_byte(tmp_path: Path) -> None:
    bodies = _bodies(tmp_path)
    exact = [where for where, original, replayed in bodies if original == replayed]
    different = {where: (original, replayed) for where, original, replayed in bodies if original != replayed}
    responses = [b for b in bodies if b[0].endswith(".response")]
    print(
        f"corpus bodies replayed byte for byte: {len(exact)}/{len(bodies)} "
        f"(responses {sum(o == r for _, o, r in responses)}/{len(responses)}); "
        f"the rest differ only by redacted credentials: {sorted(different)}"
    )
    assert sorted(different) == sorted(REDACTIONS)
    for where, (original, replayed) in different.items():
        for secret, redacted in REDACTIONS[where]:
            original = original.replace(secret, redacted)
        assert original == replayed, where
    assert (len(exact), len(bodies)) == (239, 239)


def test_the_cassette_stays_parsed_and_readable(tmp_path: Path) -> None:
    import_vcr([CORPUS / "anthropic"], tmp_path)
    text = (tmp_path / "test_anthropic_web_fetch_tool_stream.yaml").read_text()
    document = yaml.safe_load(text)
    response = document["interactions"][0]["response"]
    ping = next(e for e in response["events"] if e.get("event") == "ping")
    assert ping == {"event": "ping", "data": {"type": "ping"}, "style": {"separators": [", ", ": "]}}
    padded = next(e for e in response["events"] if e.get("event") == "content_block_start")
    assert isinstance(padded["data"], dict) and set(padded["style"]) == {"pad"}
    assert not any("raw" in e for e in response["events"])


def test_anthropic_sdk_replays_the_recorded_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = CORPUS / "anthropic" / "test_anthropic_web_fetch_tool_stream.yaml"
    original = _original(yaml.safe_load(source.read_text())["interactions"][0]["response"])
    import_vcr([source], tmp_path)
    request = yaml.safe_load(source.read_text())["interactions"][0]["request"]
    client = anthropic.Anthropic(api_key="sk-test", base_url="http://127.0.0.1:9", max_retries=0)
    with no_network(monkeypatch), promptvcr.use_cassette(tmp_path / source.name) as cassette:
        body = request["parsed_body"]
        with client.beta.messages.with_streaming_response.create(**body) as response:
            received = b"".join(response.iter_bytes())
    assert cassette.played[0].hit
    assert received == original
    assert b'"signature":""}      }' in received and b'{"type": "ping"}' in received
