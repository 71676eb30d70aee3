"""Faults without an SDK: which request a fault picks, the provider bodies, and the client
exceptions compared with what a real server going away makes httpx2 and httpx raise."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import pytest

import promptvcr
from promptvcr import faults
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.faults import FaultPlan
from promptvcr.faults.plan import answer_for, break_answer
from promptvcr.faults.provider_errors import error_body, error_headers, family_of
from promptvcr.files import fileformat

EVENTS = [b'data: {"n":%d}\n\n' % n for n in range(5)]
STREAM_BODY = {"model": "m", "stream": True}


def request(
    method: str = "POST", url: str = "http://127.0.0.1:9/v1/chat/completions", **headers: str
) -> Request:
    return Request(method, url, dict(headers), b'{"model": "gpt-4o"}')


# Which request a fault picks --------------------------------------------------------------------


def test_a_fault_fires_on_the_nth_match_for_times_requests() -> None:
    plan = FaultPlan([faults.http_error(503, nth=2, times=2)])
    picked = [plan.pick(request()) for _ in range(5)]
    assert [p.match if p else None for p in picked] == [None, 2, 3, None, None]


def test_every_matching_fault_counts_a_request_even_when_another_fired() -> None:
    first, second = faults.http_error(429), faults.cut_stream(1, nth=2)
    plan = FaultPlan([first, second])
    picked = [plan.pick(request()) for _ in range(3)]
    assert [p.fault if p else None for p in picked] == [first, second, None]


def test_selectors_method_path_and_predicate() -> None:
    by_method = faults.connect_timeout(method="get")
    by_path = faults.connect_timeout(path="*/embeddings")
    by_predicate = faults.connect_timeout(where=lambda r: b"gpt-4o" in r.content)
    assert by_method.matches(request("GET")) and not by_method.matches(request("POST"))
    assert by_path.matches(request(url="https://api.openai.com/v1/embeddings"))
    assert not by_path.matches(request())
    assert by_predicate.matches(request())
    assert not by_predicate.matches(Request("POST", "http://h/v1/chat/completions", {}, b"{}"))


def test_requests_that_match_no_selector_do_not_count() -> None:
    plan = FaultPlan([faults.http_error(500, path="/v1/messages")])
    assert plan.pick(request()) is None
    assert plan.pick(request(url="http://h/v1/messages")) is not None


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: faults.http_error(200), "status=200"),
        (lambda: faults.http_error(429, times=0), "times=0"),
        (lambda: faults.connect_timeout(nth=0), "nth=0"),
        (lambda: faults.cut_stream(-1), "after_events=-1"),
        (lambda: faults.http_error(429, retry_after=-1), "retry_after=-1"),
    ],
)
def test_bad_fault_declarations_say_what_is_wrong(build, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        build()


# What a fault serves ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "headers", "family"),
    [
        ("https://api.openai.com/v1/chat/completions", {}, "openai"),
        ("https://api.anthropic.com/v1/messages", {}, "anthropic"),
        ("https://openrouter.ai/api/v1/chat/completions", {}, "openrouter"),
        ("https://generativelanguage.googleapis.com/v1beta/models/g:generateContent", {}, "gemini"),
        ("http://127.0.0.1:9/v1/messages", {}, "anthropic"),
        ("http://proxy.local/llm/v1/chat", {"anthropic-version": "2023-06-01"}, "anthropic"),
        ("http://127.0.0.1:9/v1beta/models/gemini-x:streamGenerateContent", {}, "gemini"),
        ("http://127.0.0.1:9/v1/chat/completions", {}, "openai"),
    ],
)
def test_the_provider_family_comes_from_host_headers_then_path(
    url: str, headers: dict[str, str], family: str
) -> None:
    assert family_of(Request("POST", url, headers)) == family


def test_error_bodies_have_each_providers_shape() -> None:
    openai_429 = error_body(request(), 429, 0.25)
    assert openai_429["error"]["code"] == "rate_limit_exceeded" and "250ms" in openai_429["error"]["message"]
    assert set(openai_429["error"]) == {"message", "type", "param", "code"}
    anthropic_529 = error_body(request(url="https://api.anthropic.com/v1/messages"), 529, None)
    assert anthropic_529["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    gemini = error_body(
        request(url="https://generativelanguage.googleapis.com/v1beta/models/g:generateContent"), 503, None
    )
    assert gemini == {
        "error": {
            "code": 503,
            "message": "The model is overloaded. Please try again later.",
            "status": "UNAVAILABLE",
        }
    }
    openrouter = error_body(request(url="https://openrouter.ai/api/v1/chat/completions"), 429, None)
    assert openrouter["error"]["metadata"]["raw"].startswith("gpt-4o is temporarily rate-limited upstream")
    assert "user_id" not in openrouter


def test_retry_after_is_whole_seconds_and_exact_milliseconds() -> None:
    headers = error_headers(request(), 429, 0.2)
    assert headers["retry-after"] == "1" and headers["retry-after-ms"] == "200"
    assert "retry-after" not in error_headers(request(), 500, None)


def test_a_declared_body_and_headers_replace_the_providers() -> None:
    fault = faults.http_error(400, body={"error": "mine"}, headers={"X-Trace": "t1"})
    served = answer_for(fault, request())
    assert served.status == 400 and json.loads(served.content) == {"error": "mine"}
    assert served.headers["x-trace"] == "t1" and served.playback is None


def test_malformed_event_cuts_the_json_of_one_event_only() -> None:
    recorded = Response(200, {"content-type": "text/event-stream"}, list(EVENTS))
    broken = break_answer(faults.malformed_event(1), recorded, None)
    assert broken is not None and broken.chunks[0] == EVENTS[0] and broken.chunks[2:] == EVENTS[2:]
    assert broken.chunks[1].startswith(b"data:") and broken.chunks[1].endswith(b"\n\n")
    with pytest.raises(ValueError):
        json.loads(broken.chunks[1][5:])
    assert recorded.chunks == EVENTS  # the cassette's copy is untouched
    assert break_answer(faults.malformed_event(9), recorded, None) is None


# The client's own exceptions, compared with a real server going away ----------------------------


@pytest.fixture
def cutting_server() -> Iterator[str]:
    """A loopback server that sends the first two events of a chunked SSE stream, then hangs up."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(
                    next(
                        line.split(b":")[1]
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    )
                )
                while len(body) < length:
                    body += conn.recv(65536)
                head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
                conn.sendall(head + b"\r\n")
                conn.sendall(b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in EVENTS[:2]))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1/chat/completions"
    stop.set()
    listener.close()
    thread.join(timeout=5)


def streamed(client: httpx.Client | httpx2.Client, url: str) -> tuple[bytes, BaseException | None]:
    received = b""
    try:
        with client.stream("POST", url, json=STREAM_BODY) as response:
            for chunk in response.iter_bytes():
                received += chunk
    except Exception as error:  # the comparison is the point
        return received, error
    return received, None


@pytest.fixture
def stream_cassette(tmp_path: Path) -> Path:
    path = tmp_path / "stream.yaml"
    url = "http://127.0.0.1:9/v1/chat/completions"
    recorded = Interaction(
        Request("POST", url, {"content-type": "application/json"}, json.dumps(STREAM_BODY).encode()),
        Response(200, {"content-type": "text/event-stream"}, list(EVENTS)),
    )
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(recorded)], path))
    return path


@pytest.mark.parametrize("library", [httpx2, httpx], ids=["httpx2", "httpx"])
def test_a_cut_stream_raises_what_a_real_disconnect_raises(
    library, cutting_server: str, stream_cassette: Path
) -> None:  # type: ignore[no-untyped-def]
    with library.Client() as client:
        real_bytes, real_error = streamed(client, cutting_server)
        with promptvcr.use_cassette(stream_cassette, faults=[faults.cut_stream(2)]) as used:
            replayed_bytes, replayed_error = streamed(client, cutting_server)

    assert [play.outcome for play in used.played] == ["fault"]  # served by the cassette, not the server
    assert type(real_error) is library.RemoteProtocolError
    assert type(replayed_error) is type(real_error)
    assert replayed_bytes == real_bytes == b"".join(EVENTS[:2])


@pytest.mark.parametrize("library", [httpx2, httpx], ids=["httpx2", "httpx"])
@pytest.mark.parametrize(
    ("fault", "error"),
    [(faults.connect_timeout(), "ConnectTimeout"), (faults.read_timeout(), "ReadTimeout")],
    ids=["connect", "read"],
)
def test_timeouts_are_the_clients_own_exceptions(library, fault, error: str, stream_cassette: Path) -> None:  # type: ignore[no-untyped-def]
    with library.Client() as client, promptvcr.use_cassette(stream_cassette, faults=[fault]) as used:
        with pytest.raises(getattr(library, error)) as raised:
            client.post("http://127.0.0.1:9/v1/chat/completions", json=STREAM_BODY)
        assert "promptvcr fault" in str(raised.value)
        assert client.post("http://127.0.0.1:9/v1/chat/completions", json=STREAM_BODY).status_code == 200

    assert [play.outcome for play in used.played] == ["fault", "replayed"]


@pytest.mark.parametrize("library", [httpx2, httpx], ids=["httpx2", "httpx"])
def test_async_clients_get_the_same_breakage(library, stream_cassette: Path) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    async def run() -> bytes:
        received = b""
        url = "http://127.0.0.1:9/v1/chat/completions"
        async with library.AsyncClient() as client, client.stream("POST", url, json=STREAM_BODY) as response:
            try:
                async for chunk in response.aiter_bytes():
                    received += chunk
            except library.RemoteProtocolError:
                return received
        raise AssertionError("the stream was not cut")

    with promptvcr.use_cassette(stream_cassette, faults=[faults.cut_stream(3)]):
        assert asyncio.run(run()) == b"".join(EVENTS[:3])
