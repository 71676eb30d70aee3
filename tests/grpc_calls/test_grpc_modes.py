"""gRPC calls under the run policies every cassette has: verify reports a changed message field,
``timing="recorded"`` paces a stream as it arrived, and a grpcio whose seam moved steps aside
with one warning instead of breaking the cassette."""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import vertex_fake
from google.cloud import aiplatform_v1 as v1
from grpc_servers import GrpcServer, handler, server_stream
from vertex_fake import SERVICE, request, sync_client, vertex_server

from promptvcr import use_cassette
from promptvcr.interceptors.unavailable import InterceptorUnavailableWarning
from promptvcr.policies.verifying import DriftWarning

GAP = 0.15  # between two streamed messages, server side


def test_verify_reports_a_field_the_service_added(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "verify.yaml"
    with vertex_server() as server:
        with use_cassette(path, record_mode="rewrite"):
            sync_client(server.address).generate_content(request("hello vertex"))
        before = path.read_bytes()
        with warnings.catch_warnings(record=True), use_cassette(path, record_mode="verify") as same:
            sync_client(server.address).generate_content(request("hello vertex"))
        original = vertex_fake._answer

        def with_response_id(text: str) -> v1.GenerateContentResponse:
            answer = original(text)
            answer.response_id = "resp-123"
            return answer

        monkeypatch.setattr(vertex_fake, "_answer", with_response_id)
        with (
            warnings.catch_warnings(record=True) as warned,
            use_cassette(path, record_mode="verify") as changed,
        ):
            warnings.simplefilter("always")
            sync_client(server.address).generate_content(request("hello vertex"))
    assert path.read_bytes() == before  # verify writes nothing
    assert [play.outcome for play in same.played] == ["verified"] and same.drift == []
    [drift] = changed.drift
    assert "GenerateContent" in drift.url and "response_id" in str(drift)
    assert any(issubclass(w.category, DriftWarning) for w in warned)


def _slow_stream(
    request: v1.GenerateContentRequest, context: grpc.ServicerContext
) -> Iterator[v1.GenerateContentResponse]:
    for n in range(3):
        if n:
            time.sleep(GAP)
        yield vertex_fake._answer(f"part {n}")


def _arrivals(address: str) -> list[float]:
    start, seen = time.monotonic(), []
    for _ in sync_client(address).stream_generate_content(request("slowly")):
        seen.append(time.monotonic() - start)
    return seen


def test_recorded_timing_paces_the_messages_of_a_stream(tmp_path: Path) -> None:
    """Sleeps never end early, so a lower bound holds on any machine: the replay spaces the
    messages at least as the server did (a generous half of it)."""
    path = tmp_path / "timed.yaml"
    method = server_stream(_slow_stream, v1.GenerateContentRequest, v1.GenerateContentResponse)
    server = GrpcServer(handler(SERVICE, {"StreamGenerateContent": method}))
    with server, use_cassette(path, record_mode="rewrite"):
        live = _arrivals(server.address)
    with use_cassette(path, timing="recorded"):
        paced = _arrivals(server.address)
    assert live[-1] >= 2 * GAP
    assert paced[-1] - paced[0] >= GAP  # two gaps of GAP recorded: at least one of them kept


def test_a_moved_seam_disables_grpc_alone_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Broken for real: grpc.aio's bidirectional multi-callable class is deleted for the test (the
    sync channel below never uses it)."""
    from grpc.aio import _channel

    monkeypatch.delattr(_channel, "StreamStreamMultiCallable")
    path = tmp_path / "unseamed.yaml"
    warned = pytest.warns(InterceptorUnavailableWarning, match=r"grpc.*Disabled: recording and replaying")
    with vertex_server() as server, warned, use_cassette(path, record_mode="rewrite"):
        answer = sync_client(server.address).generate_content(request("hello vertex"))
    assert answer.candidates[0].content.parts[0].text == "echo: hello vertex"  # sent, as without promptvcr
    assert "GenerateContent" not in (path.read_text() if path.exists() else "")


def test_a_stream_left_unread_is_kept_as_far_as_it_was_read(tmp_path: Path) -> None:
    """The code reads one message of a stream and lets it go: the cassette keeps that one (as
    HTTP streams closed early are kept), replays it, and says so if the code reads further."""
    from promptvcr.cassettes.playback import StreamNotRecorded

    path = tmp_path / "unread.yaml"
    with vertex_server() as server, use_cassette(path, record_mode="rewrite"):
        stream = sync_client(server.address).stream_generate_content(request("one two three four"))
        assert next(stream).candidates[0].content.parts[0].text == "one"
    assert path.read_text().count("event: message") == 1
    with use_cassette(path):
        replayed = sync_client(server.address).stream_generate_content(request("one two three four"))
        assert next(replayed).candidates[0].content.parts[0].text == "one"
        with pytest.raises(StreamNotRecorded, match="recorded only as far as the application read it"):
            next(replayed)
