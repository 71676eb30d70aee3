"""The long-job flows of tests/longjobs and benchmarks/bench_long_jobs.py: each written as a
user writes it with the real SDK (upload, create, poll in a loop that sleeps, download), and
recorded once against the jobs server of tests/fake_jobs.py with its sleeps made instant.

Recording makes the sleeps instant itself (``time.sleep`` replaced by :class:`VirtualClock`,
which only adds them up, while recording only: the server does not care how long a client
waits), so a flow's recorded pace is "its recording time plus the waits asked for": the user
loop's 10 s between polls, and the 10 s waits the server declares to the SDK's own poll helper.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from fake_jobs import FakeJobs
from google import genai
from google.genai import types

from promptvcr import use_cassette

__all__ = ["FLOWS", "REQUESTS_JSONL", "USER_WAIT", "Recorded", "Run", "record_flows"]

USER_WAIT = 10.0
OPENAI_TERMINAL = ("completed", "failed", "expired", "cancelled")
REQUESTS_JSONL = b"".join(
    b'{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini",'
    b'"messages":[{"role":"user","content":"hi %d"}]}}\n' % (n, n)
    for n in range(2)
)


@dataclass
class Run:
    """What one run of a flow gave: the downloaded bytes (or parsed results), the waits the code
    and the SDK asked for, how many polls it sent, and its wall time."""

    result: Any
    asked: float
    polls: int
    seconds: float


class VirtualClock:
    """``time.sleep`` while recording: adds the wait up, returns at once."""

    def __init__(self) -> None:
        self.slept = 0.0

    def __call__(self, seconds: float) -> None:
        self.slept += seconds


def openai_batch_flow(
    client: openai.OpenAI, out: Path, *, stop_after: int | None = None, extra: int = 0
) -> Run:
    """Upload -> create -> retrieve polled by the user's loop (sleeping 10 s) -> stream the output
    file to disk; ``stop_after`` polls gives up early, ``extra`` polls again after the end."""
    started, asked, polls = time.perf_counter(), 0.0, 0
    upload = client.files.create(file=("requests.jsonl", REQUESTS_JSONL), purpose="batch")
    batch = client.batches.create(
        input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    while batch.status not in OPENAI_TERMINAL and polls != stop_after:
        time.sleep(USER_WAIT)
        asked += USER_WAIT
        batch = client.batches.retrieve(batch.id)
        polls += 1
    if stop_after is not None:
        return Run(None, asked, polls, time.perf_counter() - started)
    for _ in range(extra):
        batch = client.batches.retrieve(batch.id)
        assert batch.status == "completed"
    assert batch.output_file_id is not None
    with client.files.with_streaming_response.content(batch.output_file_id) as response:
        response.stream_to_file(out)
    return Run(out.read_bytes(), asked, polls, time.perf_counter() - started)


def anthropic_batch_flow(client: anthropic.Anthropic, *, stop_after: int | None = None) -> Run:
    """create -> retrieve polled by the user's loop -> results() (the JSONL results file)."""
    started, asked, polls = time.perf_counter(), 0.0, 0
    requests: Any = [
        {"custom_id": f"q{n}", "params": {"model": "claude-x", "max_tokens": 10,
                                          "messages": [{"role": "user", "content": f"hi {n}"}]}}
        for n in range(2)
    ]  # fmt: skip
    batch = client.messages.batches.create(requests=requests)
    while batch.processing_status != "ended" and polls != stop_after:
        time.sleep(USER_WAIT)
        asked += USER_WAIT
        batch = client.messages.batches.retrieve(batch.id)
        polls += 1
    if stop_after is not None:
        return Run(None, asked, polls, time.perf_counter() - started)
    results = [entry.model_dump() for entry in client.messages.batches.results(batch.id)]
    return Run(results, asked, polls, time.perf_counter() - started)


def genai_operation_flow(client: genai.Client, out: Path) -> Run:
    """``generate_videos`` -> ``operations.get`` polled by the user's loop -> the video saved to disk
    (Vertex AI: the operation's answer holds the video's bytes; google-genai 3 generates videos
    only there)."""
    started, asked, polls = time.perf_counter(), 0.0, 0
    operation = client.models.generate_videos(
        model="veo-2.0-generate-001", source=types.GenerateVideosSource(prompt="a cat on a long job")
    )
    while not operation.done:
        time.sleep(USER_WAIT)
        asked += USER_WAIT
        operation = client.operations.get(operation)
        polls += 1
    assert operation.response is not None and operation.response.generated_videos
    video = operation.response.generated_videos[0].video
    assert video is not None
    video.save(str(out))
    return Run(out.read_bytes(), asked, polls, time.perf_counter() - started)


def vector_store_flow(client: openai.OpenAI) -> Run:
    """``vector_stores.files.upload_and_poll``: the SDK polls, sleeping what the server declares."""
    started = time.perf_counter()
    done = client.vector_stores.files.upload_and_poll(
        vector_store_id="vs_1", file=("notes.txt", b"a note\n" * 50)
    )
    return Run(done.status, 0.0, 0, time.perf_counter() - started)


@dataclass
class Recorded:
    cassette: Path
    base_url: str
    live: Run
    declared: float  # the waits the SDK slept for on the server's word


def _openai(base_url: str, out: Path, **kwargs: Any) -> Run:
    client = openai.OpenAI(api_key="test-key", base_url=base_url + "/v1", max_retries=0)
    return openai_batch_flow(client, out, **kwargs)


def _anthropic(base_url: str, out: Path, **kwargs: Any) -> Run:
    return anthropic_batch_flow(
        anthropic.Anthropic(api_key="test-key", base_url=base_url, max_retries=0), **kwargs
    )


def _genai(base_url: str, out: Path, **kwargs: Any) -> Run:
    options = types.HttpOptions(base_url=base_url)
    return genai_operation_flow(genai.Client(vertexai=True, api_key="test-key", http_options=options), out)


def _vector_store(base_url: str, out: Path, **kwargs: Any) -> Run:
    return vector_store_flow(openai.OpenAI(api_key="test-key", base_url=base_url + "/v1", max_retries=0))


FLOWS = {"openai": _openai, "anthropic": _anthropic, "genai": _genai, "vector_store": _vector_store}


def record_flows(folder: Path, jobs: FakeJobs) -> dict[str, Recorded]:
    """Each flow recorded live into ``folder`` (its sleeps instant, added up)."""
    flows: dict[str, Recorded] = {}
    for name, flow in FLOWS.items():
        virtual, path = VirtualClock(), folder / f"{name}.yaml"
        with pytest.MonkeyPatch.context() as patch, use_cassette(path, record_mode="all"):
            patch.setattr(time, "sleep", virtual)
            live = flow(jobs.base_url, folder / f"{name}-live.out")
        flows[name] = Recorded(path, jobs.base_url, live, virtual.slept - live.asked)
    return flows
