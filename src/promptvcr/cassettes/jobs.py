"""Long jobs by knowledge: the providers' endpoints that create and poll one, and their end states.

A batch, a file being processed, a video or a long-running operation is created by one request
and then polled by the same request over and over until the job's state says it ended. Replay
treats those polls apart (see :mod:`promptvcr.matching.tape` and :mod:`promptvcr.longjobs`): the
recorded states in order, then the end state again; the sleeps between them skipped. Which
request is a poll is known, never guessed from names: this table lists each provider's job
endpoints as documented, with the field that holds the state and the values that end the job.
A user adds one with :func:`add_job_endpoint` (see docs/long-jobs.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .spool import body_size

__all__ = ["JobEndpoint", "JobState", "add_job_endpoint", "job_endpoints", "job_state", "poll_endpoint"]

#: A job's state is read from a JSON answer no larger than this: a job object is a few kB.
_MAX_STATE_BODY = 1 << 20


@dataclass(frozen=True)
class JobEndpoint:
    """One kind of long job: ``poll`` (a regular expression searched in the URL's path, anchored
    at its end) is the request that reads its state, with one of ``poll_methods``; ``create``
    (optional) the ``POST`` that starts one and answers its first state. ``state`` is the answer's
    field (dotted for a nested one) that holds the state, ``terminal`` the values that end the
    job; a missing field means the job runs on (google's ``done`` appears only once it is true).
    ``job_id`` is the answer's field that names the job."""

    name: str
    poll: str
    state: str
    terminal: frozenset[Any]
    create: str | None = None
    poll_methods: frozenset[str] = frozenset({"GET"})
    job_id: str = "id"

    def __post_init__(self) -> None:
        # Compiled once, here: a bad pattern fails where the endpoint is declared.
        object.__setattr__(self, "_poll", re.compile(f"(?:{self.poll})$"))
        object.__setattr__(
            self, "_create", None if self.create is None else re.compile(f"(?:{self.create})$")
        )

    def polled_by(self, method: str, path: str) -> bool:
        return method in self.poll_methods and self._poll.search(path) is not None  # type: ignore[attr-defined]

    def created_by(self, method: str, path: str) -> bool:
        create: re.Pattern[str] | None = self._create  # type: ignore[attr-defined]
        return create is not None and method == "POST" and create.search(path) is not None


def _endpoint(name: str, poll: str, state: str, terminal: Iterable[Any], **more: Any) -> JobEndpoint:
    return JobEndpoint(name, poll, state, frozenset(terminal), **more)


_ID = r"[^/:]+"
#: The documented long jobs, most specific first (an Anthropic batch's path ends like an OpenAI one).
_ENDPOINTS: list[JobEndpoint] = [
    _endpoint("anthropic message batch", rf"/messages/batches/{_ID}", "processing_status", ["ended"],
              create=r"/messages/batches"),
    _endpoint("openai batch", rf"/batches/{_ID}", "status", ["completed", "failed", "expired", "cancelled"],
              create=r"/batches"),
    _endpoint("openai vector store file", rf"/vector_stores/{_ID}/files/{_ID}", "status",
              ["completed", "failed", "cancelled"], create=rf"/vector_stores/{_ID}/files"),
    _endpoint("openai vector store file batch", rf"/vector_stores/{_ID}/file_batches/{_ID}", "status",
              ["completed", "failed", "cancelled"], create=rf"/vector_stores/{_ID}/file_batches"),
    _endpoint("openai file", rf"/files/{_ID}", "status", ["processed", "error"]),
    _endpoint("openai fine-tuning job", rf"/fine_tuning/jobs/{_ID}", "status",
              ["succeeded", "failed", "cancelled"], create=r"/fine_tuning/jobs"),
    _endpoint("openai video", rf"/videos/{_ID}", "status", ["completed", "failed"], create=r"/videos"),
    _endpoint("google operation", rf"/operations/{_ID}", "done", [True],
              create=rf"/models/{_ID}:predictLongRunning", job_id="name"),
    _endpoint("google operation (vertex)", r":fetchPredictOperation", "done", [True], job_id="name",
              poll_methods=frozenset({"POST"})),
]  # fmt: skip


def job_endpoints() -> tuple[JobEndpoint, ...]:
    """The job endpoints known now: the documented ones, then those a user added."""
    return tuple(_ENDPOINTS)


def add_job_endpoint(endpoint: JobEndpoint) -> None:
    """Teach replay one more kind of long job (a provider this table does not list yet); it is
    tried before the documented ones, so that a more specific path wins."""
    if not isinstance(endpoint, JobEndpoint):
        raise TypeError(f"add_job_endpoint takes a JobEndpoint, not {type(endpoint).__name__}")
    _ENDPOINTS.insert(0, endpoint)


def _path(url: str) -> str:
    return urlsplit(url).path.rstrip("/")


def poll_endpoint(method: str, url: str) -> JobEndpoint | None:
    """The job endpoint ``method url`` polls, or ``None``: not a poll of a known job."""
    path = _path(url)
    return next((e for e in _ENDPOINTS if e.polled_by(method, path)), None)


@dataclass(frozen=True)
class JobState:
    """What one answer says of its job: which job, of which kind, and whether it ended."""

    endpoint: JobEndpoint
    job: str
    ended: bool


def _field(document: Mapping[str, Any], dotted: str) -> Any:
    value: Any = document
    for name in dotted.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(name)
    return value


def job_state(method: str, url: str, content_type: str, chunks: Sequence[bytes]) -> JobState | None:
    """The state a job's answer (its body's ``chunks``) holds, when ``method url`` creates or polls
    a known job and the answer is its JSON object; ``None`` otherwise (any other answer, an error,
    a large body). The body is joined only for a job's answer."""
    path = _path(url)
    endpoint = next((e for e in _ENDPOINTS if e.polled_by(method, path) or e.created_by(method, path)), None)
    if endpoint is None or "json" not in content_type or body_size(chunks) > _MAX_STATE_BODY:
        return None
    body = b"".join(chunks)
    try:
        document = json.loads(body)
    except ValueError:
        return None
    if not isinstance(document, dict) or "error" in document:
        return None
    job = _field(document, endpoint.job_id)
    if not isinstance(job, str) and endpoint.polled_by(method, path):
        job = path  # the polled path names the job
    if not isinstance(job, str):
        return None
    return JobState(endpoint, job, _field(document, endpoint.state) in endpoint.terminal)
