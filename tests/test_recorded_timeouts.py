"""A timeout while recording: the attempt that got no answer is not stored; the retry's answer is.

A cassette stores the provider's answers. A request that timed out before any response
arrived has none: what replays in its place is the answer its retry recorded, at once and
without the SDK's backoff, so a transient slow provider is not written into every replay.
A test of how the code handles a timeout declares it (``faults=[faults.read_timeout()]``),
which raises the client's own timeout in replay, deterministically (see docs/faults.md).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import openai
import pytest

import promptvcr
from promptvcr import faults

MESSAGES = [{"role": "user", "content": "are you there?"}]
OFFLINE = "http://127.0.0.1:9/v1"
ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1_700_000_000,
    "model": "gpt-4o-mini",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "yes"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


@contextmanager
def silent_first(silent: int) -> Iterator[list[int]]:
    """A loopback server that never answers its first ``silent`` requests, then answers each."""
    listener = socket.create_server(("127.0.0.1", 0))
    received: list[int] = []
    stop = threading.Event()

    def handle(conn: socket.socket, number: int) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536) or b"\r\n\r\n"
            if number <= silent:
                stop.wait(5)  # quiet until the client gives up (or the test ends)
                return
            body = json.dumps(ANSWER).encode()
            head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            conn.sendall(head.encode() + b"connection: close\r\n\r\n" + body)

    listener.settimeout(0.05)  # a blocked accept() does not wake when the socket closes

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            received.append(len(received) + 1)
            threading.Thread(target=handle, args=(conn, received[-1]), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield received, f"http://127.0.0.1:{listener.getsockname()[1]}/v1"  # type: ignore[misc]
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def _client(base: str, retries: int) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test", base_url=base, max_retries=retries, timeout=0.5)


def _ask(client: openai.OpenAI) -> str:
    return str(
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES).choices[0].message.content
    )  # type: ignore[arg-type]


def test_a_timed_out_attempt_is_not_stored_and_its_retry_answer_replays(tmp_path: Path) -> None:
    path = tmp_path / "retry.yaml"
    with silent_first(1) as (received, base), promptvcr.use_cassette(path, record_mode="record") as recording:  # type: ignore[misc]
        assert _ask(_client(base, retries=1)) == "yes"
    assert len(received) == 2  # the timed-out attempt and its retry reached the server
    assert [play.outcome for play in recording.played] == ["recorded"]
    assert len(recording.interactions) == 1

    with promptvcr.use_cassette(path) as replay:
        assert _ask(_client(OFFLINE, retries=1)) == "yes"
    # One play: no timed-out attempt replayed, so no timeout waited for and no retry's backoff.
    assert [play.outcome for play in replay.played] == ["replayed"] and replay.all_played


def test_a_timeout_without_retry_stores_nothing_and_replay_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "timeout.yaml"
    with (
        silent_first(1) as (received, base),  # type: ignore[misc]
        pytest.raises(openai.APITimeoutError),
        promptvcr.use_cassette(path, record_mode="record") as recording,
    ):
        _ask(_client(base, retries=0))
    assert len(received) == 1 and recording.played == [] and not path.exists()

    # Replaying it is a miss, never a silent pass ...
    with pytest.raises(promptvcr.CassetteMiss, match="does not exist"), promptvcr.use_cassette(path):
        _ask(_client(OFFLINE, retries=0))
    # ... and a test of the timeout declares it: the client's own timeout error, as live.
    declared = promptvcr.use_cassette(path, faults=[faults.read_timeout()])
    with pytest.raises(openai.APITimeoutError), declared:
        _ask(_client(OFFLINE, retries=0))
    assert [fired.fault.kind for fired in declared.faults_fired] == ["read_timeout"]
