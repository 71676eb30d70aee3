"""A loopback websockets server speaking the event shapes of the OpenAI Realtime API and of
the Gemini Live API, started and stopped by the test that needs it."""

from __future__ import annotations

import base64
import json
import threading
from typing import Any

from websockets.sync.server import Server, ServerConnection, serve

#: 20 ms of 24 kHz 16-bit silence and a tone, as a realtime server streams them.
AUDIO_OUT = base64.b64encode(bytes(range(256)) * 4).decode()


def _openai(ws: ServerConnection) -> None:
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
            for word in ("I heard ", f"{len(audio)} bytes", "."):
                send({"type": "response.output_audio_transcript.delta", **ids, "delta": word})
            send({"type": "response.output_audio.delta", **ids, "delta": AUDIO_OUT})
            send({"type": "response.output_audio.done", **ids})
            send({"type": "response.done", "response": {"id": "resp_1", "status": "completed"}})


def _gemini(ws: ServerConnection) -> None:
    setup = json.loads(ws.recv())
    assert "setup" in setup
    ws.send(json.dumps({"setupComplete": {}}).encode())  # Gemini answers in binary frames
    for message in ws:
        content = json.loads(message)
        turns = content.get("clientContent", {}).get("turns", [])
        text = turns[0]["parts"][0]["text"] if turns else "?"
        for part in ("Live ", f"answer to {text}"):
            ws.send(json.dumps({"serverContent": {"modelTurn": {"parts": [{"text": part}]}}}).encode())
        ws.send(json.dumps({"serverContent": {"turnComplete": True}}).encode())


class RealtimeServer:
    """``with RealtimeServer() as server:`` ``server.url`` (``ws://127.0.0.1:port``) until exit."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    def _handler(self, ws: ServerConnection) -> None:
        path = ws.request.path if ws.request is not None else ""
        self.paths.append(path)
        (_gemini if "BidiGenerateContent" in path else _openai)(ws)

    def __enter__(self) -> RealtimeServer:
        self._server = serve(self._handler, "127.0.0.1", 0, compression=None)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.socket.getsockname()[1])

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._thread.join(5)
