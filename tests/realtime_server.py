"""A loopback websockets server speaking the event shapes of the OpenAI Realtime API and of
the Gemini Live API, started and stopped by the test that needs it."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import socket
import ssl
import tempfile
import threading
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from websockets.sync.server import Server, ServerConnection, serve

#: 20 ms of 24 kHz 16-bit silence and a tone, as a realtime server streams them.
AUDIO_OUT = base64.b64encode(bytes(range(256)) * 4).decode()


def _openai(ws: ServerConnection, drift: str = "") -> None:
    """``drift``: the server changed since a session was recorded, as providers do: a new
    ``rate_limits.updated`` event (``"event"``) or a new ``item_id`` field in ``response.done``
    (``"field"``)."""
    n = 0

    def send(event: dict[str, Any]) -> None:
        nonlocal n
        n += 1
        ws.send(json.dumps({"event_id": f"event_{n}", **event}))

    send(
        {"type": "session.created", "session": {"id": "sess_1", "type": "realtime", "model": "gpt-realtime"}}
    )
    audio = b""
    for message in ws:
        event = json.loads(message)
        kind = event["type"]
        if kind == "session.update":
            send(
                {
                    "type": "session.updated",
                    "session": {"id": "sess_1", "type": "realtime", **event["session"]},
                }
            )
        elif kind == "input_audio_buffer.append":
            audio += base64.b64decode(event["audio"])
        elif kind == "input_audio_buffer.commit":
            send({"type": "input_audio_buffer.committed", "item_id": "item_1", "previous_item_id": None})
        elif kind == "response.create":
            ids = {"response_id": "resp_1", "item_id": "item_2", "output_index": 0, "content_index": 0}
            send({"type": "response.created", "response": {"id": "resp_1", "object": "realtime.response"}})
            if drift == "event":
                send({"type": "rate_limits.updated", "rate_limits": [{"name": "tokens", "remaining": 9}]})
            for word in ("I heard ", f"{len(audio)} bytes", "."):
                send({"type": "response.output_audio_transcript.delta", **ids, "delta": word})
            send({"type": "response.output_audio.delta", **ids, "delta": AUDIO_OUT})
            send({"type": "response.output_audio.done", **ids})
            done = {"id": "resp_1", "status": "completed", "usage": {"input_tokens": 12, "output_tokens": 7}}
            send(
                {
                    "type": "response.done",
                    "response": done,
                    **({"item_id": "item_2"} if drift == "field" else {}),
                }
            )


def _gemini(ws: ServerConnection) -> None:
    setup = json.loads(ws.recv())
    assert "setup" in setup
    ws.send(json.dumps({"setupComplete": {}}).encode())  # Gemini answers in binary frames
    for message in ws:
        content = json.loads(message)
        turns = (content.get("clientContent") or content.get("client_content") or {}).get("turns", [])
        text = turns[0]["parts"][0]["text"] if turns else "?"
        for part in ("Live ", f"answer to {text}"):
            ws.send(json.dumps({"serverContent": {"modelTurn": {"parts": [{"text": part}]}}}).encode())
        ws.send(json.dumps({"serverContent": {"turnComplete": True}}).encode())


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files in ``folder``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


def _echo(ws: ServerConnection) -> None:
    """Answers each message at once with the same message, then ``done`` when told ``bye``."""
    for message in ws:
        if message == "bye":
            ws.close(1000, "done")
            return
        ws.send(message)


def _cut(ws: ServerConnection, how: str) -> None:
    """Answers ``go`` with two frames, then ends the session as ``how`` says: ``close`` (1011
    with a reason), ``nostatus`` (a close frame without a code), ``violation`` (a text frame
    that is not UTF-8: the client fails the connection with 1007), ``reserved`` (a frame of
    reserved opcode 3) and ``rsv1`` (a text frame with RSV1 set, no extension negotiated): the
    client fails the connection with 1002; ``abrupt`` (the TCP connection closed, no close
    frame), ``going`` (1001 before answering at all)."""
    assert ws.recv() == "go"
    if how == "going":
        ws.close(1001, "going away")
        return
    ws.send("partial 1")
    ws.send(json.dumps({"type": "response.output_text.delta", "delta": "partial 2"}))
    if how == "close":
        ws.close(1011, "internal error")
    elif how == "nostatus":
        with ws.protocol_mutex:
            ws.protocol.send_close()
            ws.send_data()
        ws.recv_events_thread.join(5)
    elif how == "violation":
        ws.socket.sendall(b"\x81\x02\xff\xfe")
        ws.recv_events_thread.join(5)
    elif how == "reserved":
        ws.socket.sendall(b"\x83\x05hello")
        ws.recv_events_thread.join(5)
    elif how == "rsv1":
        ws.socket.sendall(b"\xc1\x05hello")
        ws.recv_events_thread.join(5)
    elif how == "abrupt":
        ws.socket.shutdown(socket.SHUT_RDWR)
        ws.socket.close()


class RealtimeServer:
    """``with RealtimeServer() as server:`` ``server.url`` (``ws://127.0.0.1:port``) until exit.

    ``tls=True`` serves ``wss://`` with a self-signed certificate that ``server.client_ssl``
    trusts (the Gemini SDK speaks only ``wss://``)."""

    def __init__(self, *, tls: bool = False, drift: str = "") -> None:
        self.paths: list[str] = []
        self.tls = tls
        self.drift = drift
        self.client_ssl: ssl.SSLContext | None = None
        self._port = 0
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    def _handler(self, ws: ServerConnection) -> None:
        path = ws.request.path if ws.request is not None else ""
        self.paths.append(path)
        if path.startswith("/echo"):
            _echo(ws)
        elif path.startswith("/cut"):
            _cut(ws, path.partition("how=")[2])
        elif "BidiGenerateContent" in path:
            _gemini(ws)
        else:
            _openai(ws, self.drift)

    def __enter__(self) -> RealtimeServer:
        server_ssl = None
        if self.tls:
            with tempfile.TemporaryDirectory() as folder:
                cert, key = _certificate(Path(folder))
                server_ssl = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                server_ssl.load_cert_chain(cert, key)
                self.client_ssl = ssl.create_default_context(cafile=str(cert))
        self._server = serve(self._handler, "127.0.0.1", 0, compression=None, ssl=server_ssl)
        self._port = int(self._server.socket.getsockname()[1])  # kept: replay runs with it stopped
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"{'wss' if self.tls else 'ws'}://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._thread.join(5)
