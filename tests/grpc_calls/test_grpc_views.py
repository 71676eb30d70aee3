"""What a reviewer and the commands see of a gRPC cassette: ``show`` reads the messages, a key
the server sent back is masked in message fields and metadata at record time, ``scan`` finds
one planted in either by hand, and bytes kept for an exact replay never carry a key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest
from google.cloud import aiplatform_v1 as v1
from grpc_servers import PLANTED_KEY, GrpcServer, handler
from vertex_fake import SERVICE, _answer, request, sync_client

from promptvcr import use_cassette
from promptvcr.cli import main

#: A field number no GenerateContentResponse has: kept by protobuf as an unknown field, which
#: its JSON form cannot hold (so the recording keeps the bytes, unless they hold a key).
UNKNOWN_FIELD = b"\xf8\x3e\x2a"  # field 999, varint 42


def _leaky(request: v1.GenerateContentRequest, context: grpc.ServicerContext) -> v1.GenerateContentResponse:
    prompt = str(request.contents[0].parts[0].text)
    if "leak" in prompt:
        context.send_initial_metadata((("x-debug-token", PLANTED_KEY),))
        return _answer(f"your key is {PLANTED_KEY}")
    return _answer(f"echo: {prompt}")


def _serialize(message: v1.GenerateContentResponse) -> bytes:
    return v1.GenerateContentResponse.serialize(message) + UNKNOWN_FIELD


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("grpc-views")
    method = grpc.unary_unary_rpc_method_handler(_leaky, v1.GenerateContentRequest.deserialize, _serialize)
    with GrpcServer(handler(SERVICE, {"GenerateContent": method})) as server:
        client = sync_client(server.address)
        raw = client._transport.grpc_channel.unary_unary(f"/{SERVICE}/GenerateContent")
        live = raw(v1.GenerateContentRequest.serialize(request("plain")))
        masked = pytest.warns(UserWarning, match=r"removed 2 credential\(s\) from the RESPONSE")
        with masked, use_cassette(folder / "views.yaml", record_mode="rewrite"):
            client.generate_content(request("please leak"))
            assert raw(v1.GenerateContentRequest.serialize(request("plain"))) == live
    return {"folder": folder, "address": server.address, "live": live}


def test_show_reads_the_messages_as_a_conversation(
    recorded: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", str(recorded["folder"] / "views.yaml")]) == 0
    out = capsys.readouterr().out
    assert "grpc://" in out and "PredictionService/GenerateContent" in out
    assert "user: please leak" in out and "assistant: your key is <redacted:" in out


def test_a_key_sent_back_is_masked_in_fields_metadata_and_kept_bytes(recorded: dict[str, Any]) -> None:
    text = (recorded["folder"] / "views.yaml").read_text()
    assert PLANTED_KEY not in text
    assert 'x-debug-token: "<redacted:' in text and "your key is <redacted:" in text
    assert text.count("@bytes") == 2  # the plain call's request and answer; never the leaky answer


def test_unknown_fields_replay_byte_for_byte_from_the_kept_bytes(recorded: dict[str, Any]) -> None:
    assert recorded["live"].endswith(UNKNOWN_FIELD)
    with use_cassette(recorded["folder"] / "views.yaml"):
        client = sync_client(recorded["address"])
        raw = client._transport.grpc_channel.unary_unary(f"/{SERVICE}/GenerateContent")
        assert raw(v1.GenerateContentRequest.serialize(request("plain"))) == recorded["live"]
        answer = client.generate_content(request("please leak"))
    assert answer.candidates[0].content.parts[0].text.startswith("your key is <redacted:")


def test_scan_finds_a_key_planted_in_a_message_field_and_in_metadata(
    recorded: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = (recorded["folder"] / "views.yaml").read_text()
    assert main(["scan", str(recorded["folder"])]) == 0
    for place, planted in {
        "field": clean.replace("your key is <redacted:openai-key>", f"your key is {PLANTED_KEY}"),
        "metadata": clean.replace('x-debug-token: "<redacted:openai-key>"', f"x-debug-token: {PLANTED_KEY}"),
    }.items():
        assert planted != clean, place
        (tmp_path / place).mkdir()
        (tmp_path / place / "planted.yaml").write_text(planted)
        capsys.readouterr()
        assert main(["scan", str(tmp_path / place)]) == 1, place
        out = capsys.readouterr().out
        line = next(n for n, text in enumerate(planted.splitlines(), 1) if PLANTED_KEY in text)
        assert f"planted.yaml:{line}:" in out and PLANTED_KEY not in out, out


def test_the_html_report_shows_the_grpc_conversation(recorded: dict[str, Any], tmp_path: Path) -> None:
    pytest.importorskip("jinja2", reason="the report extra; nox -s compat installs only the interceptors'")
    page = tmp_path / "report.html"
    assert main(["report", str(recorded["folder"]), "--html", str(page)]) == 0
    html = page.read_text()
    assert "PredictionService/GenerateContent" in html
    assert "please leak" in html and "your key is &lt;redacted:" in html and PLANTED_KEY not in html


def test_bytes_no_protobuf_class_reads_are_kept_with_their_keys_overwritten(tmp_path: Path) -> None:
    """A bare channel without serializers sends and receives bytes: they are stored as bytes,
    each key overwritten in place (same length, so the message still decodes), on both sides."""
    method = grpc.unary_unary_rpc_method_handler(
        _leaky, v1.GenerateContentRequest.deserialize, v1.GenerateContentResponse.serialize
    )
    sent = v1.GenerateContentRequest.serialize(request(f"please leak {PLANTED_KEY}"))
    path = tmp_path / "raw.yaml"
    with GrpcServer(handler(SERVICE, {"GenerateContent": method})) as server:
        raw = grpc.insecure_channel(server.address).unary_unary(f"/{SERVICE}/GenerateContent")
        with pytest.warns(UserWarning, match="removed"), use_cassette(path, record_mode="rewrite"):
            live = raw(sent)
        assert PLANTED_KEY.encode() in live
    assert PLANTED_KEY not in path.read_text() and main(["scan", str(path)]) == 0
    with use_cassette(path):
        replayed = raw(sent)
    answer = v1.GenerateContentResponse.deserialize(replayed)
    assert len(replayed) == len(live) and answer.candidates[0].content.parts[0].text.startswith(
        "your key is <redacted>**"
    )


def test_a_message_a_reviewer_edited_replays_edited(recorded: dict[str, Any], tmp_path: Path) -> None:
    """Fields edited in the file are what the client gets, whether or not bytes were kept beside
    them, and an event given another field (an ``id``) is still read."""
    text = (recorded["folder"] / "views.yaml").read_text()
    edited = text.replace("your key is <redacted:openai-key>", "an edited answer", 1)
    edited = edited.replace("    - event: message\n", "    - event: message\n      id: '7'\n", 1)
    assert edited.count("an edited answer") == 1 and "id: '7'" in edited
    (tmp_path / "edited.yaml").write_text(edited)
    with use_cassette(tmp_path / "edited.yaml"):
        answer = sync_client(recorded["address"]).generate_content(request("please leak"))
    assert answer.candidates[0].content.parts[0].text == "an edited answer"
