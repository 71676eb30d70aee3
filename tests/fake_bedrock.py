"""A real HTTP server on 127.0.0.1 that speaks AWS Bedrock Runtime's Converse API.

boto3's ``bedrock-runtime`` client is pointed at it with ``endpoint_url``: ``converse``
answers JSON, ``converse-stream`` answers binary AWS event-stream frames, sent one frame
per HTTP chunk as Bedrock does; a model id starting with ``invalid`` gets Bedrock's 400
``ValidationException``; ``invoke`` answers ``{"echo": n}`` with the service tier headers
InvokeModel reports and its token-count headers. The frames are encoded here, with the standard library
only, independently of promptvcr's own encoder, so a byte-exact replay test compares two
separate implementations. Answers are deterministic (``echo <n>: <last user text>``).

Usage::

    with FakeBedrock() as fake:
        client = boto3.client("bedrock-runtime", endpoint_url=fake.base_url, ...)
"""

from __future__ import annotations

import json
import re
import struct
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeBedrock", "encode_frame"]

_ROUTE = re.compile(r"/model/(?P<model>[^/]+)/(?P<op>converse|converse-stream|invoke)")


def encode_frame(event_type: str, payload: dict[str, Any]) -> bytes:
    """One event-stream frame: prelude, CRC, string headers, JSON payload, CRC."""
    headers = b""
    for name, value in (
        (":event-type", event_type),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ):
        raw_name, raw_value = name.encode(), value.encode()
        headers += bytes([len(raw_name)]) + raw_name + b"\x07" + struct.pack(">H", len(raw_value)) + raw_value
    body = json.dumps(payload, separators=(",", ":")).encode()
    prelude = struct.pack(">II", 16 + len(headers) + len(body), len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


def _words(text: str) -> list[str]:
    return re.findall(r"\s*\S+\s*", text) or [text]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests must not see server chatter."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        n = self.server.owner._count(self.path, body)
        match = _ROUTE.fullmatch(self.path)
        if match is None:
            self._send(404, b'{"message":"Unknown operation"}', "application/json")
            return
        if match["model"].startswith("invalid"):
            # As Bedrock answers: the error's name only in x-amzn-ErrorType, the body a message.
            self._send(
                400,
                b'{"message":"The provided model identifier is invalid."}',
                "application/json",
                {
                    "x-amzn-ErrorType": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"
                },
            )
            return
        if match["op"] == "invoke":
            # InvokeModel: the body is the model's own; boto3 returns these headers as results.
            tier = {
                "X-Amzn-Bedrock-Service-Tier": "flex",
                "X-Amzn-Bedrock-PerformanceConfig-Latency": "standard",
                # What OpenTelemetry's Bedrock instrumentation reads as the call's usage.
                "X-Amzn-Bedrock-Input-Token-Count": "18",
                "X-Amzn-Bedrock-Output-Token-Count": str(n),
                "X-Amzn-Bedrock-Cache-Read-Input-Token-Count": "0",
                "X-Amzn-Bedrock-Invocation-Latency": "7",
            }
            self._send(200, json.dumps({"echo": n}).encode(), "application/json", tier)
            return
        request = json.loads(body)
        texts = [part.get("text", "") for m in request.get("messages", []) for part in m.get("content", [])]
        answer = f"echo {n}: {texts[-1] if texts else ''}"
        usage = {"inputTokens": len(" ".join(texts).split()), "outputTokens": len(answer.split())}
        usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
        if match["op"] == "converse":
            reply = {
                "output": {"message": {"role": "assistant", "content": [{"text": answer}]}},
                "stopReason": "end_turn",
                "usage": usage,
                "metrics": {"latencyMs": 1},
            }
            self._send(200, json.dumps(reply).encode(), "application/json")
        else:
            self._stream(self._frames(answer, usage))

    @staticmethod
    def _frames(answer: str, usage: dict[str, int]) -> Iterator[bytes]:
        yield encode_frame("messageStart", {"role": "assistant"})
        for piece in _words(answer):
            yield encode_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}})
        yield encode_frame("contentBlockStop", {"contentBlockIndex": 0})
        yield encode_frame("messageStop", {"stopReason": "end_turn"})
        yield encode_frame("metadata", {"usage": usage, "metrics": {"latencyMs": 1}})

    def _send(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-amzn-RequestId", "00000000-0000-0000-0000-000000000000")
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, frames: Iterator[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.amazon.eventstream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for frame in frames:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: FakeBedrock) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


class FakeBedrock:
    """Context manager: serves on 127.0.0.1 port 0 in a daemon thread until exit."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, bytes]] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "FakeBedrock is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def _count(self, path: str, body: bytes) -> int:
        with self._lock:
            self.requests.append((path, body))
            return len(self.requests)

    def __enter__(self) -> FakeBedrock:
        self._server = _Server(self)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
