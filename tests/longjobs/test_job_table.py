"""Which requests create and poll a long job, and when the job ended: the table of
promptvcr.cassettes.jobs, and a job a user adds to it, recorded and replayed with a plain
HTTP client against the jobs server on 127.0.0.1."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from fake_jobs import FakeJobs

import promptvcr
from promptvcr import JobEndpoint, add_job_endpoint, use_cassette
from promptvcr.cassettes import jobs
from promptvcr.longjobs import clock

BASE = "https://api.example.test"


@pytest.mark.parametrize(
    ("method", "path", "answer", "kind", "ended"),
    [
        ("GET", "/v1/batches/batch_1", {"id": "batch_1", "status": "in_progress"}, "openai batch", False),
        ("GET", "/v1/batches/batch_1", {"id": "batch_1", "status": "completed"}, "openai batch", True),
        ("POST", "/v1/batches", {"id": "batch_1", "status": "validating"}, "openai batch", False),
        ("GET", "/v1/messages/batches/m1", {"id": "m1", "processing_status": "ended"},
         "anthropic message batch", True),
        ("GET", "/v1/messages/batches/m1", {"id": "m1", "processing_status": "in_progress"},
         "anthropic message batch", False),
        ("GET", "/v1/vector_stores/vs/files/f1", {"id": "f1", "status": "completed"},
         "openai vector store file", True),
        ("GET", "/v1/fine_tuning/jobs/ft1", {"id": "ft1", "status": "running"},
         "openai fine-tuning job", False),
        ("GET", "/v1/videos/v1", {"id": "v1", "status": "completed"}, "openai video", True),
        ("GET", "/v1beta/models/veo/operations/op1", {"name": "models/veo/operations/op1"},
         "google operation", False),
        ("GET", "/v1beta/models/veo/operations/op1", {"name": "models/veo/operations/op1", "done": True},
         "google operation", True),
    ],
)  # fmt: skip
def test_each_documented_job_is_known_with_its_end_states(
    method: str, path: str, answer: dict[str, object], kind: str, ended: bool
) -> None:
    state = jobs.job_state(method, BASE + path, "application/json", [json.dumps(answer).encode()])
    assert state is not None and state.endpoint.name == kind and state.ended is ended


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/files/file_1/content"),  # a download, not a poll
        ("POST", "/v1/batches/batch_1/cancel"),
        ("GET", "/v1/messages/batches/m1/results"),
        ("POST", "/v1/chat/completions"),
        ("GET", "/v1/models/gpt-4o"),
    ],
)
def test_what_is_not_a_poll_is_not_taken_for_one(method: str, path: str) -> None:
    assert jobs.poll_endpoint(method, BASE + path) is None


def test_an_error_or_a_large_answer_is_no_state() -> None:
    error = json.dumps({"error": {"message": "no"}}).encode()
    assert jobs.job_state("GET", BASE + "/v1/batches/b", "application/json", [error]) is None
    big = [b'{"id": "b", "status": "completed", "pad": "', b"x" * (2 << 20), b'"}']
    assert jobs.job_state("GET", BASE + "/v1/batches/b", "application/json", big) is None


def test_a_job_a_user_adds_replays_its_states_and_its_sleeps_fast(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jobs, "_ENDPOINTS", list(jobs.job_endpoints()))  # this test's additions undone after
    add_job_endpoint(
        JobEndpoint(name="acme render", poll=r"/renders/[^/]+", create=r"/renders", state="job.state",
                    terminal=frozenset({"done", "failed"}))
    )  # fmt: skip
    cassette_path, states = tmp_path / "render.yaml", []

    def render(client: httpx.Client, base: str) -> float:
        asked, job = 0.0, client.post(f"{base}/acme/renders").json()
        while job["job"]["state"] != "done":
            time.sleep(5)
            asked += 5
            job = client.get(f"{base}/acme/renders/{job['id']}").json()
            states.append(job["job"]["state"])
        return asked

    with FakeJobs(polls=3) as server, httpx.Client() as client:
        with monkeypatch.context() as patch, use_cassette(cassette_path, record_mode="all"):
            patch.setattr(time, "sleep", lambda seconds: None)
            render(client, server.base_url)
        base = server.base_url
    recorded, states[:] = list(states), []
    with httpx.Client() as client, use_cassette(cassette_path, timing="fast") as cassette:
        started = time.perf_counter()
        asked = render(client, base)
        job = client.get(f"{base}/acme/renders/render_0001").json()  # once more: the end state again
        seconds = time.perf_counter() - started
    assert states == recorded == ["running", "running", "done"] and job["job"]["state"] == "done"
    assert cassette.all_played and not cassette.missed and not clock.skipping()
    assert seconds < asked / 2, (seconds, asked)


def test_add_job_endpoint_refuses_what_is_not_an_endpoint() -> None:
    with pytest.raises(TypeError, match="JobEndpoint"):
        promptvcr.add_job_endpoint({"poll": "/x"})  # type: ignore[arg-type]
