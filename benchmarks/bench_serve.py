"""``promptvcr serve``: replay through the server against its two neighbours, and the first
chunk's delay while recording, measured in one run.

Throughput (the openai SDK, ``AsyncOpenAI`` over loopback, a plain chat completion), with 1
and 50 concurrent clients, interleaved round by round so a noisy machine slows all alike:

* ``bare``        an aiohttp server in a child process returning the same bytes (the floor
                  for anything behind a socket);
* ``serve``       ``promptvcr serve CASSETTE`` replaying in a child process;
* ``in-process``  the same client on ``use_cassette(CASSETTE)`` (no socket at all).

Reported: requests/s and per-request time (medians over rounds), and the ratios
serve/bare and serve/in-process. Recording: the delay between the upstream's first stream
event and the client's, through the server, against the same upstream reached directly
(a loopback provider sending an event every 50 ms).

Run: python benchmarks/bench_serve.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

import openai

from promptvcr import use_cassette
from promptvcr.server import serve

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fake_provider import FakeProvider

MESSAGES = [{"role": "user", "content": "benchmark"}]

BARE_SERVER = r"""
import sys
from aiohttp import web
body = open(sys.argv[1], "rb").read()
async def answer(request):
    await request.read()
    return web.Response(body=body, content_type="application/json")
app = web.Application()
app.router.add_route("*", "/{tail:.*}", answer)
async def main():
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(runner.addresses[0][1], flush=True)
    await asyncio.Event().wait()
import asyncio
asyncio.run(main())
"""

Run = Callable[[int, int], Awaitable[float]]


async def _load(base_url: str, concurrency: int, total: int) -> float:
    """Seconds for ``total`` requests from ``concurrency`` clients sharing one SDK client."""
    async with openai.AsyncOpenAI(api_key="sk-bench", base_url=base_url, max_retries=0) as client:
        await client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)  # type: ignore[arg-type]
        per_client = total // concurrency

        async def worker() -> None:
            for _ in range(per_client):
                await client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)  # type: ignore[arg-type]

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started


def _first_chunk(url: str) -> float:
    parts = urlsplit(url)
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "SLOW a b c d"}], "stream": True}
    connection = http.client.HTTPConnection(parts.netloc, timeout=30)
    started = time.perf_counter()
    connection.request("POST", parts.path, json.dumps(body), {"content-type": "application/json"})
    response = connection.getresponse()
    response.read1(65536)
    first = time.perf_counter() - started
    response.read()
    connection.close()
    return first


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, total = (2, 100) if args.quick else (5, 400)
    scratch = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    cassette = scratch / "bench.yaml"

    with FakeProvider() as fake:
        upstream = fake.base_url
        with serve(
            cassette, record_mode="record", upstreams={"openai": upstream}, set_environment=False
        ) as s:
            asyncio.run(_load(f"{s.url}/openai/v1", 1, 1))
        # recording: first-chunk delay, direct vs through the server
        direct, through = [], []
        with serve(scratch / "rec.yaml", record_mode="record", upstreams={"openai": upstream}) as s:
            for _ in range(5 if args.quick else 15):
                direct.append(_first_chunk(f"{upstream}/v1/chat/completions"))
                through.append(_first_chunk(f"{s.url}/openai/v1/chat/completions"))

    body_file = scratch / "body.json"
    with use_cassette(cassette, record_mode="replay", allow_playback_repeats=True) as c:
        body_file.write_bytes(c.interactions[0].response.content)
    bare = subprocess.Popen(
        [sys.executable, "-c", BARE_SERVER, str(body_file)], stdout=subprocess.PIPE, text=True
    )
    assert bare.stdout is not None
    bare_url = f"http://127.0.0.1:{bare.stdout.readline().strip()}/v1"

    options = ["--allow-playback-repeats"]
    results: dict[tuple[str, int], list[float]] = {}
    try:
        with serve(cassette, record_mode="replay", upstreams={"openai": upstream}, options=options) as s:
            served_url = f"{s.url}/openai/v1"

            async def in_process(concurrency: int, count: int) -> float:
                with use_cassette(cassette, record_mode="replay", allow_playback_repeats=True):
                    return await _load(upstream + "/v1", concurrency, count)

            contenders: dict[str, Run] = {
                "bare": lambda c, n: _load(bare_url, c, n),
                "serve": lambda c, n: _load(served_url, c, n),
                "in-process": in_process,
            }
            for round_number in range(rounds):
                names = list(contenders)
                names = names[round_number % 3 :] + names[: round_number % 3]
                for concurrency in (1, 50):
                    for name in names:
                        seconds = asyncio.run(contenders[name](concurrency, total))
                        results.setdefault((name, concurrency), []).append(seconds / total)
    finally:
        bare.terminate()
        bare.wait()

    print(f"promptvcr serve benchmark: {total} requests per contender and round, {rounds} rounds (medians)")
    for concurrency in (1, 50):
        print(f"\n{concurrency} concurrent client{'s' if concurrency > 1 else ''}:")
        median = {
            name: statistics.median(results[(name, concurrency)]) for name in ("bare", "serve", "in-process")
        }
        for name, per_request in median.items():
            print(f"  {name:<11} {1 / per_request:9.0f} req/s   {per_request * 1e6:8.0f} us/request")
        print(
            f"  ratios (time per request): serve/bare {median['serve'] / median['bare']:.2f}x, "
            f"serve/in-process {median['serve'] / median['in-process']:.2f}x"
        )
    delay = [t - d for t, d in zip(through, direct, strict=True)]
    print(
        f"\nrecording, time to the first stream event: direct {statistics.median(direct) * 1000:.1f} ms, "
        f"through serve {statistics.median(through) * 1000:.1f} ms "
        f"(added: median {statistics.median(delay) * 1000:.1f} ms, max {max(delay) * 1000:.1f} ms)"
    )


if __name__ == "__main__":
    main()
