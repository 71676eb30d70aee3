"""What timing and faults cost on the replay hot path, as ratios measured in one run.

Contenders, interleaved round by round so that a noisy shared machine slows all of them alike,
each asking the openai SDK for a plain answer and for a streamed one (40 events):

* ``floor``           openai over ``httpx2.MockTransport`` returning prebuilt responses.
* ``default``         promptvcr replay, no timing and no faults (the bar: at most 1.10x the floor).
* ``faults declared`` promptvcr replay with two faults declared that match no request.
* ``timing x0``       promptvcr replay with ``timing=1e-9``: the paced path, with delays of ~0.

Per-request times are medians over rounds (the order rotates each round); ratios are to the floor.

Run: python benchmarks/bench_faults_timing.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import openai

import promptvcr
from promptvcr import faults
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cassettes.timing import Timing
from promptvcr.files import fileformat

BASE = "http://127.0.0.1:9/v1"
URL = f"{BASE}/chat/completions"
PLAIN = {"messages": [{"role": "user", "content": "plain"}], "model": "gpt-4o"}
STREAM = {"messages": [{"role": "user", "content": "stream"}], "model": "gpt-4o", "stream": True}
ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1700000000,
    "model": "gpt-4o",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "answer"}, "finish_reason": "stop"}],
}
EVENTS = [
    b"data: "
    + json.dumps(
        {
            "id": "chatcmpl-2",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": "gpt-4o",
            "choices": [{"index": 0, "delta": {"content": f"w{i} "}, "finish_reason": None}],
        },
        separators=(",", ":"),
    ).encode()
    + b"\n\n"
    for i in range(39)
] + [b"data: [DONE]\n\n"]
SSE = {"content-type": "text/event-stream"}
JSON = {"content-type": "application/json"}


def write_cassette(path: Path) -> None:
    plain = Interaction(
        Request("POST", URL, JSON, json.dumps(PLAIN).encode()),
        Response(200, JSON, [json.dumps(ANSWER).encode()], Timing(0.0, (0.0,))),
    )
    stream = Interaction(
        Request("POST", URL, JSON, json.dumps(STREAM).encode()),
        Response(200, SSE, list(EVENTS), Timing(0.0, (0.0,) * len(EVENTS))),
    )
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(i) for i in (plain, stream)], path))


def ask(client: openai.OpenAI) -> None:
    assert client.chat.completions.create(**PLAIN).choices[0].message.content == "answer"  # type: ignore[call-overload]
    pieces = [c.choices[0].delta.content for c in client.chat.completions.create(**STREAM)]  # type: ignore[call-overload]
    assert len(pieces) == 39


def floor_client() -> openai.OpenAI:
    plain, stream = json.dumps(ANSWER).encode(), b"".join(EVENTS)

    def handler(request: httpx2.Request) -> httpx2.Response:
        if json.loads(request.content).get("stream"):
            return httpx2.Response(200, headers=SSE, content=stream)
        return httpx2.Response(200, headers=JSON, content=plain)

    transport = httpx2.MockTransport(handler)
    return openai.OpenAI(api_key="k", base_url=BASE, http_client=httpx2.Client(transport=transport))


def measure(run: Callable[[], None], count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        run()
    return (time.perf_counter() - started) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer requests and rounds (a smoke run)")
    args = parser.parse_args()
    count, rounds = (100, 5) if args.quick else (400, 11)
    floor = floor_client()
    plain_client = openai.OpenAI(api_key="k", base_url=BASE)
    unmatched = [faults.http_error(429, path="/nowhere"), faults.cut_stream(1, method="DELETE")]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.yaml"
        write_cassette(path)
        contenders: dict[str, Callable[[], Any]] = {
            "floor": lambda: None,
            "default": lambda: promptvcr.use_cassette(path, allow_playback_repeats=True),
            "faults declared": lambda: promptvcr.use_cassette(
                path, allow_playback_repeats=True, faults=unmatched
            ),
            "timing x0": lambda: promptvcr.use_cassette(path, allow_playback_repeats=True, timing=1e-9),
        }
        samples: dict[str, list[float]] = {name: [] for name in contenders}
        names = list(contenders)
        for round_number in range(rounds):
            shift = round_number % len(names)  # each contender takes each place in the order in turn
            for name in names[shift:] + names[:shift]:
                cassette = contenders[name]
                if name == "floor":
                    samples[name].append(measure(lambda: ask(floor), count))
                    continue
                with cassette():
                    samples[name].append(measure(lambda: ask(plain_client), count))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    print(f"one plain + one 40-event streamed answer through openai (median of {rounds} interleaved rounds)")
    for name, value in medians.items():
        print(f"  {name:>16}  {value * 1e6:8.0f}us  {value / medians['floor']:6.3f}x floor")


if __name__ == "__main__":
    main()
