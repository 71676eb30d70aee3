"""A real HTTP server on 127.0.0.1 that runs providers' long jobs: uploads, batches, vector-store
files, message batches and long-running operations, each progressing one state per poll.

Long-job replay (promptvcr.longjobs, docs/long-jobs.md) is tested with the real SDKs against
this server: a job is created, polled until it ends (each poll moves it one state on, as a
provider's job progresses while the client waits), and its result downloaded. The waits a
provider declares are declared here too (``openai-poll-after-ms``, ``retry-after``), long
ones, so a replay that honoured them would take tens of seconds; recording tests make the
SDK's and their own sleeps instant themselves (the server does not care how long a client waits).

Answers are deterministic (ids from a counter, contents from the uploaded bytes), stdlib only,
like tests/fake_provider.py, whose server and handler plumbing this reuses.

Usage::

    with FakeJobs(polls=4) as jobs:
        client = openai.OpenAI(api_key="test-key", base_url=jobs.openai_base_url)
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["DECLARED_WAIT_MS", "SPEECH_BYTES", "FakeJobs", "batch_output", "video_bytes"]

#: The wait each poll answer declares: 10 s, so that three polls declare 30 s.
DECLARED_WAIT_MS = 10_000
CREATED = 1_700_000_000
#: The size of a speech answer: past the 4 MiB at which a body is stored from its chunks.
SPEECH_BYTES = 5 * 1024 * 1024 + 123


def _dumps(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


def batch_output(lines: bytes, provider: str) -> bytes:
    """A batch's result file: one answer per request line, in the provider's shape."""
    out = []
    for number, line in enumerate(lines.splitlines()):
        request = json.loads(line)
        custom = request["custom_id"]
        if provider == "openai":
            body = {"id": f"chatcmpl-{number}", "object": "chat.completion", "model": "gpt-4o-mini",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": f"done {custom}"},
                                 "finish_reason": "stop"}]}  # fmt: skip
            out.append({"id": f"batch_req_{number}", "custom_id": custom, "response": {"status_code": 200,
                        "request_id": f"req_{number}", "body": body}, "error": None})  # fmt: skip
        else:
            message = {"id": f"msg_{number}", "type": "message", "role": "assistant", "model": "claude-x",
                       "content": [{"type": "text", "text": f"done {custom}"}], "stop_reason": "end_turn",
                       "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 2}}  # fmt: skip
            out.append({"custom_id": custom, "result": {"type": "succeeded", "message": message}})
    return b"".join(_dumps(entry) + b"\n" for entry in out)


def video_bytes(prompt: str, size: int = 300_000) -> bytes:
    """A 'video' (or audio): bytes derived from the prompt, not compressible into nothing."""
    return hashlib.shake_256(prompt.encode()).digest(size)


@dataclass
class _Job:
    states: list[Any]
    render: Callable[[Any], dict[str, Any]]
    polls: int = 0

    def state(self) -> dict[str, Any]:
        return self.render(self.states[min(self.polls, len(self.states) - 1)])

    def poll(self) -> dict[str, Any]:
        self.polls += 1
        return self.state()


@dataclass
class _Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


class FakeJobs:
    """Context manager: a jobs server on 127.0.0.1 port 0; ``polls`` is how many polls a job takes
    to end (its first state is in the create answer, its end state in the ``polls``-th poll)."""

    def __init__(self, *, polls: int = 4) -> None:
        self.polls = polls
        self.files: dict[str, tuple[str, bytes]] = {}
        self.jobs: dict[str, _Job] = {}
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port = 0

    # ---- life ---------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    def start(self) -> FakeJobs:
        jobs = self

        class Handler(_Handler):
            server_jobs = jobs

        self._server = ThreadingHTTPServer(("127.0.0.1", self._port), Handler)
        self._server.daemon_threads = True
        self._port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-jobs", daemon=True)  # fmt: skip
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeJobs:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ---- routes -------------------------------------------------------------------------
    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_{len(self.files) + len(self.jobs) + 1:04d}"

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> _Reply:
        with self._lock:
            self.requests.append((method, path))
            return self._route(method, path.rstrip("/"), headers, body)

    def _route(self, method: str, path: str, headers: dict[str, str], body: bytes) -> _Reply:
        parts = path.strip("/").split("/")
        wait = {"openai-poll-after-ms": str(DECLARED_WAIT_MS), "retry-after": str(DECLARED_WAIT_MS // 1000)}
        # OpenAI files
        if method == "POST" and path == "/v1/files":
            name, content, purpose = _multipart_file(headers.get("content-type", ""), body)
            file_id = self._new_id("file")
            self.files[file_id] = (name, content)
            return _json(_file_object(file_id, name, len(content), purpose))
        if method == "GET" and len(parts) == 4 and parts[:2] == ["v1", "files"] and parts[3] == "content":
            return _Reply(body=self.files[parts[2]][1], content_type="application/octet-stream")
        # OpenAI batches
        if method == "POST" and path == "/v1/batches":
            request = json.loads(body)
            batch_id = self._new_id("batch")
            output = self._new_id("file")
            self.files[output] = (
                "output.jsonl",
                batch_output(self.files[request["input_file_id"]][1], "openai"),
            )
            states = ["validating"] + ["in_progress"] * (self.polls - 1) + ["completed"]
            self.jobs[batch_id] = _Job(states, lambda s: _openai_batch(batch_id, request, s, output))
            return _json(self.jobs[batch_id].state())
        if method == "GET" and len(parts) == 3 and parts[:2] == ["v1", "batches"]:
            return _json(self.jobs[parts[2]].poll(), headers=wait)
        # OpenAI vector store files
        if method == "POST" and len(parts) == 4 and parts[1] == "vector_stores" and parts[3] == "files":
            file_id, store = json.loads(body)["file_id"], parts[2]
            states = ["in_progress"] * self.polls + ["completed"]
            self.jobs[file_id] = _Job(states, lambda s: _vector_store_file(file_id, store, s))
            return _json(self.jobs[file_id].state())
        if method == "GET" and len(parts) == 5 and parts[1] == "vector_stores" and parts[3] == "files":
            return _json(self.jobs[parts[4]].poll(), headers=wait)
        # Anthropic message batches
        if method == "POST" and path == "/v1/messages/batches":
            request = json.loads(body)
            batch_id = self._new_id("msgbatch")
            lines = b"".join(_dumps({"custom_id": r["custom_id"]}) + b"\n" for r in request["requests"])
            self.files[batch_id] = ("results.jsonl", batch_output(lines, "anthropic"))
            states = ["in_progress"] * self.polls + ["ended"]
            base = self.base_url
            self.jobs[batch_id] = _Job(states, lambda s: _anthropic_batch(batch_id, s, base))
            return _json(self.jobs[batch_id].state())
        if method == "GET" and len(parts) == 4 and parts[1:3] == ["messages", "batches"]:
            return _json(self.jobs[parts[3]].poll(), headers={"retry-after": wait["retry-after"]})
        if (
            method == "GET"
            and len(parts) == 5
            and parts[1:3] == ["messages", "batches"]
            and parts[4] == "results"
        ):
            return _Reply(body=self.files[parts[3]][1], content_type="application/binary")
        # google-genai long-running operations (generate_videos, Vertex AI: polled by POST)
        if method == "POST" and path.endswith(":predictLongRunning"):
            prompt = json.loads(body)["instances"][0]["prompt"]
            name = f"{path.split(':')[0].strip('/')}/operations/{self._new_id('op').replace('_', '')}"
            name = name.split("/", 1)[1] if name.startswith("v1") else name  # no API version in a name
            video = video_bytes(prompt)
            self.jobs[name] = _Job([False] * self.polls + [True], lambda done: _operation(name, done, video))
            return _json(self.jobs[name].state())
        if method == "POST" and path.endswith(":fetchPredictOperation"):
            return _json(self.jobs[json.loads(body)["operationName"]].poll())
        # OpenAI speech: audio bytes, large enough to be stored from its chunks (past 4 MiB)
        if method == "POST" and path == "/v1/audio/speech":
            audio = video_bytes(json.loads(body)["input"], SPEECH_BYTES)
            return _Reply(body=audio, content_type="audio/mpeg")
        # A provider no table lists (docs/long-jobs.md: add_job_endpoint)
        if method == "POST" and path == "/acme/renders":
            render_id = self._new_id("render")
            states = ["queued"] + ["running"] * (self.polls - 1) + ["done"]
            self.jobs[render_id] = _Job(states, lambda s: {"id": render_id, "job": {"state": s}})
            return _json(self.jobs[render_id].state())
        if method == "GET" and len(parts) == 3 and parts[:2] == ["acme", "renders"]:
            return _json(self.jobs[parts[2]].poll())
        return _json({"error": {"message": f"no route {method} {path}"}}, status=404)


def _json(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> _Reply:
    return _Reply(status=status, body=_dumps(payload), headers=dict(headers or {}))


def _multipart_file(content_type: str, body: bytes) -> tuple[str, bytes, str]:
    message = BytesParser(policy=HTTP).parsebytes(
        b"content-type: " + content_type.encode() + b"\r\n\r\n" + body
    )
    name, content, purpose = "", b"", ""
    for part in message.iter_parts():
        field_name = part.get_param("name", header="content-disposition")
        if field_name == "file":
            name, content = part.get_filename() or "", part.get_payload(decode=True) or b""
        elif field_name == "purpose":
            purpose = (part.get_payload(decode=True) or b"").decode()
    return name, content, purpose


def _file_object(file_id: str, name: str, size: int, purpose: str) -> dict[str, Any]:
    return {"id": file_id, "object": "file", "bytes": size, "created_at": CREATED, "filename": name,
            "purpose": purpose, "status": "processed"}  # fmt: skip


def _openai_batch(batch_id: str, request: dict[str, Any], status: str, output: str) -> dict[str, Any]:
    done = status == "completed"
    return {"id": batch_id, "object": "batch", "endpoint": request["endpoint"], "errors": None,
            "input_file_id": request["input_file_id"], "completion_window": request["completion_window"],
            "status": status, "output_file_id": output if done else None, "error_file_id": None,
            "created_at": CREATED, "completed_at": CREATED + 60 if done else None,
            "request_counts": {"total": 2, "completed": 2 if done else 0, "failed": 0}}  # fmt: skip


def _vector_store_file(file_id: str, store: str, status: str) -> dict[str, Any]:
    return {"id": file_id, "object": "vector_store.file", "usage_bytes": 120, "created_at": CREATED,
            "vector_store_id": store, "status": status, "last_error": None}  # fmt: skip


def _anthropic_batch(batch_id: str, status: str, base: str) -> dict[str, Any]:
    ended = status == "ended"
    return {"id": batch_id, "type": "message_batch", "processing_status": status,
            "request_counts": {"processing": 0 if ended else 2, "succeeded": 2 if ended else 0, "errored": 0,
                               "canceled": 0, "expired": 0},
            "ended_at": "2024-08-20T18:37:24.100435Z" if ended else None,
            "created_at": "2024-08-20T18:37:24.100435Z", "expires_at": "2024-08-21T18:37:24.100435Z",
            "archived_at": None, "cancel_initiated_at": None,
            "results_url": f"{base}/v1/messages/batches/{batch_id}/results" if ended else None}  # fmt: skip


def _operation(name: str, done: bool, video: bytes) -> dict[str, Any]:
    if not done:
        return {"name": name}
    sample = {"bytesBase64Encoded": base64.b64encode(video).decode(), "mimeType": "video/mp4"}
    kind = "type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse"
    return {"name": name, "done": True, "response": {"@type": kind, "videos": [sample]}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_jobs: FakeJobs

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        reply = self.server_jobs.answer(self.command, urlsplit(self.path).path, headers, body)
        self.send_response(reply.status)
        self.send_header("content-type", reply.content_type)
        self.send_header("content-length", str(len(reply.body)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(reply.body)

    do_GET = do_POST = _serve
