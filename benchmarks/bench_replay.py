"""Replay and record speed through the real openai SDK, as ratios measured in one run.

Contenders, interleaved round by round so that a noisy shared machine slows all of them alike:

* ``floor``      openai over ``httpx2.MockTransport`` returning a prebuilt response: no cassette at all.
* ``promptvcr``  openai over its default httpx2 client, replaying from a promptvcr cassette.
* ``vcrpy``      openai over an ``httpx.Client`` (vcrpy does not see httpx2), replaying a vcrpy cassette.

Per-request times are medians over interleaved samples (five per round, alternating which goes first,
for the cassettes that load in well under a second); ratios to the floor are medians of the ratios of
samples taken side by side. Cassettes hold 1, 1,000 and
10,000 interactions, each request asking a different question. Then recording: 1,000 requests to a
loopback server with a cassette in ``record`` mode against the same requests with no cassette.

Run: python benchmarks/bench_replay.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_floor import OpenAIChat, sent_bodies

import promptvcr
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.files import fileformat

BASE = "http://127.0.0.1:9/v1"
URL = f"{BASE}/chat/completions"


def question(i: int) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": f"question number {i}"}], "model": "gpt-4o"}


def answer(i: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{i}",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-4o",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": f"answer {i}"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }


def write_promptvcr(path: Path, n: int) -> None:
    """A cassette as a recording through the SDK leaves it: each request with the bytes the
    SDK sends (see ``bench_floor.sent_bodies``), so a live request finds its key by its bytes."""
    bodies = sent_bodies(OpenAIChat(stream=False), n)
    data = [
        fileformat.interaction_to_data(
            Interaction(
                Request("POST", URL, {"content-type": "application/json"}, bodies[i]),
                Response(200, {"content-type": "application/json"}, [json.dumps(answer(i)).encode()]),
            )
        )
        for i in range(n)
    ]
    path.write_text(fileformat.dumps(data, path))


def write_vcrpy(path: Path, n: int) -> None:
    interactions = [
        {
            "request": {
                "body": json.dumps(question(i)),
                "headers": {"content-type": ["application/json"]},
                "method": "POST",
                "uri": URL,
            },
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {"content-type": ["application/json"]},
                "body": {"string": json.dumps(answer(i))},
            },
        }
        for i in range(n)
    ]
    path.write_text(yaml.dump({"interactions": interactions, "version": 1}, Dumper=yaml.CSafeDumper))


def ask(client: openai.OpenAI, i: int) -> None:
    reply = client.chat.completions.create(**question(i))
    assert reply.choices[0].message.content == f"answer {i}", reply


def floor_client() -> openai.OpenAI:
    bodies = {}

    def handler(request: httpx2.Request) -> httpx2.Response:
        i = int(json.loads(request.content)["messages"][0]["content"].rsplit(" ", 1)[1])
        body = bodies.get(i) or bodies.setdefault(i, json.dumps(answer(i)).encode())
        return httpx2.Response(200, headers={"content-type": "application/json"}, content=body)

    return openai.OpenAI(
        api_key="k", base_url=BASE, http_client=httpx2.Client(transport=httpx2.MockTransport(handler))
    )


def timed(order: list[int], client: openai.OpenAI) -> float:
    started = time.perf_counter()
    for i in order:
        ask(client, i)
    return (time.perf_counter() - started) / len(order)


def paired_ratio(ours: list[float], base: list[float]) -> float:
    """The median of the ratios of samples taken side by side: a slow spell on the machine
    hits both of a pair, where a ratio of two medians can take its halves from different spells."""
    return statistics.median(o / b for o, b in zip(ours, base, strict=True))


def timed_with(cassette: Path | None, order: list[int], client: openai.OpenAI) -> float:
    """Per-request time of ``order``, inside ``cassette`` when one is given (entering untimed)."""
    if cassette is None:
        return timed(order, client)
    with promptvcr.use_cassette(cassette, allow_playback_repeats=True):
        return timed(order, client)


def replay_rounds(sizes: list[int], requests: int, rounds: int, workdir: Path) -> dict[int, dict[str, float]]:
    """Each round enters each contender's cassette (loading it, untimed), then times its requests."""
    import vcr

    vcr_config = vcr.VCR(record_mode="none", match_on=["method", "uri", "body"])
    results: dict[int, dict[str, float]] = {}
    floor = floor_client()
    plain = openai.OpenAI(api_key="k", base_url=BASE)
    legacy = openai.OpenAI(api_key="k", base_url=BASE, http_client=httpx.Client())
    for n in sizes:
        ours, theirs = workdir / f"promptvcr-{n}.yaml", workdir / f"vcrpy-{n}.yaml"
        write_promptvcr(ours, n)
        write_vcrpy(theirs, n)
        count = min(requests, n) if n > 1 else requests
        # vcrpy scans every interaction per request (about 1 s each at 10,000): keep its share short.
        vcr_count = min(count, 200 if n < 10_000 else 30)
        samples: dict[str, list[float]] = {"floor": [], "promptvcr": [], "vcrpy": []}

        contenders = [("floor", None, floor), ("promptvcr", ours, plain)]
        # Many short samples, alternating which contender goes first, where entering the
        # cassette is cheap: a burst of other work on this shared machine then spoils one
        # sample of many instead of a seventh of the figure.
        splits = 5 if n < 10_000 else 1
        for r in range(rounds):
            order = [random.randrange(n) for _ in range(count)]
            for s in range(splits):
                turn = contenders if (r * splits + s) % 2 == 0 else contenders[::-1]
                for name, cassette, client in turn:
                    samples[name].append(timed_with(cassette, order[s::splits], client))
            with vcr_config.use_cassette(str(theirs), allow_playback_repeats=True):
                samples["vcrpy"].append(timed(order[:vcr_count], legacy))
        results[n] = {name: statistics.median(values) for name, values in samples.items()}
        results[n]["ours/floor"] = paired_ratio(samples["promptvcr"], samples["floor"])
        results[n]["load"] = statistics.median(load_time(ours) for _ in range(3 if n < 10_000 else 1))
    return results


def load_time(path: Path) -> float:
    started = time.perf_counter()
    with promptvcr.use_cassette(path):
        pass
    return time.perf_counter() - started


def record_rounds(requests: int, rounds: int, workdir: Path) -> dict[str, float]:
    """Record mode includes writing the cassette on exit, so it is timed with the requests."""
    from fake_provider import FakeProvider

    samples: dict[str, list[float]] = {"no cassette": [], "record": []}
    with FakeProvider() as server:
        client = openai.OpenAI(api_key="k", base_url=server.openai_base_url)
        order = list(range(requests))
        for r in range(rounds):
            # Alternate which goes first: on this shared machine the second of two back-to-back
            # runs was measured up to 10% slower or faster whatever it was.
            if r % 2:
                samples["no cassette"].append(timed_live(order, client))
            started = time.perf_counter()
            with promptvcr.use_cassette(workdir / f"record-{r}.yaml", record_mode="record"):
                for i in order:
                    client.chat.completions.create(**question(i))
            samples["record"].append((time.perf_counter() - started) / len(order))
            if not r % 2:
                samples["no cassette"].append(timed_live(order, client))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    return {**medians, "ratio": paired_ratio(samples["record"], samples["no cassette"])}


def timed_live(order: list[int], client: openai.OpenAI) -> float:
    started = time.perf_counter()
    for i in order:
        client.chat.completions.create(**question(i))
    return (time.perf_counter() - started) / len(order)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer requests and rounds (a smoke run)")
    args = parser.parse_args()
    requests, rounds = (200, 3) if args.quick else (1000, 7)
    random.seed(7)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        replay = replay_rounds([1, 1_000, 10_000], requests, rounds, workdir)
        record = record_rounds(requests, max(4, rounds), workdir)

    print(f"replay through openai (per request, medians over {rounds} interleaved rounds)")
    columns = ("interactions", "floor", "promptvcr", "vcrpy", "ours/floor", "vcrpy/floor", "load")
    widths = (12, 9, 9, 9, 10, 11, 8)
    print("  ".join(f"{name:>{width}}" for name, width in zip(columns, widths, strict=True)))
    for n, r in replay.items():
        times = "  ".join(f"{r[name] * 1e6:>7.0f}us" for name in ("floor", "promptvcr", "vcrpy"))
        ratios = f"{r['ours/floor']:>10.3f}  {r['vcrpy'] / r['floor']:>11.2f}"
        print(f"{n:>12,}  {times}  {ratios}  {r['load'] * 1e3:>6.0f}ms")
    per_request = {n: r["ours/floor"] for n, r in replay.items()}
    scaling = per_request[10_000] / per_request[1]
    print(f"10,000-interaction cassette vs 1-interaction (each as ratio to its floor): {scaling:.3f}")
    print(f"\nrecording {requests} requests to a loopback server (per request, median)")
    print(
        f"  no cassette {record['no cassette'] * 1e6:.0f}us, record mode {record['record'] * 1e6:.0f}us, "
        f"ratio {record['ratio']:.3f}"
    )


if __name__ == "__main__":
    main()
