"""``promptvcr serve`` against a floor: per request, with many clients, streams, and memory.

The floor is a bare aiohttp server in a child process that answers every request with the
very status, headers and body chunks that serve replays (a stream written and flushed one
event at a time, as serve does): what anything behind a loopback socket costs. Contenders,
interleaved round by round (the order rotating) so that a noisy machine slows all alike:

* ``bare``        the floor above;
* ``serve``       ``promptvcr serve CASSETTE --allow-playback-repeats`` in a child process;
* ``in-process``  the same Python client on ``use_cassette(CASSETTE)`` (no socket at all).

Clients: the openai Python SDK (``AsyncOpenAI``, one client shared by C concurrent tasks),
and the openai node SDK (``npm install openai`` into a scratch folder; skipped, saying so,
when npm cannot), with 1, 50 and 200 concurrent clients; a plain chat completion, and a
200-event stream read to its end. Reported: requests/s and per-request wall time (medians
over rounds), and serve/bare. The issue 48 goals: <= 1.15x the floor at 1 client, <= 1.25x
at 50.

Memory: serve records a 300 MB streamed body from a loopback upstream (64 KiB chunks) while
a client reads it; reported is serve's peak resident memory (``VmHWM``) above what it used
idle, against the goal of <= 100 MB. Then a second serve replays that cassette (its body
from the body file beside it): its peak too, against the same goal (``--check``), and
whether the client got the very bytes it got while recording.

Recording: the delay between the upstream's first stream event and the client's, through
serve, against the same upstream reached directly (an event every 50 ms).

Run: python benchmarks/bench_serve.py [--quick] [--skip node,memory,recording] [--only memory] [--check]
(``--only request-memory``: a ``--memory-mb`` request body recorded and replayed through serve)
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import http.client
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

import openai

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench_floor import OPENAI_BASE, OpenAIChat, interactions, write_promptvcr
from fake_provider import FakeProvider
from loopback import process_memory

from promptvcr import use_cassette
from promptvcr.server import serve

#: The end of each server script below: listen on a free loopback port, print it, serve.
LISTEN = r"""
async def main():
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
    await site.start()
    print(runner.addresses[0][1], flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""

#: Serves one stored answer for every request: ``argv[1]`` is a JSON file of status, headers
#: and chunks (hex), written chunk by chunk and flushed when there are several, as serve does.
BARE_SERVER = (
    r"""
import asyncio, json, sys
from aiohttp import web
stored = json.load(open(sys.argv[1]))
status, headers, chunks = stored["status"], stored["headers"], [bytes.fromhex(c) for c in stored["chunks"]]
whole = b"".join(chunks)
async def answer(request):
    await request.read()
    if len(chunks) == 1:
        return web.Response(status=status, body=whole, headers=headers)
    response = web.StreamResponse(status=status, headers=headers)
    await response.prepare(request)
    for chunk in chunks:
        await response.write(chunk)
    await response.write_eof()
    return response
"""
    + LISTEN
)

#: The openai node SDK: ``total`` requests from ``concurrency`` concurrent loops, one client;
#: prints the seconds they took (after one untimed request).
NODE_CLIENT = r"""
const mod = require("openai");
const OpenAI = mod.OpenAI || mod.default || mod;
const [base, concurrency, total] = [process.argv[2], +process.argv[3], +process.argv[4]];
const stream = process.argv[5] === "1";
const client = new OpenAI({ apiKey: "sk-bench", baseURL: base, maxRetries: 0 });
const body = { model: "gpt-4o", messages: [{ role: "user", content: "question number 0" }] };
async function one() {
  if (stream) {
    let events = 0;
    for await (const _ of await client.chat.completions.create({ ...body, stream: true })) events++;
    if (events !== 200) throw new Error(`${events} events`);
  } else {
    const reply = await client.chat.completions.create(body);
    if (reply.choices[0].message.content !== "answer 0") throw new Error(JSON.stringify(reply));
  }
}
(async () => {
  await one();
  const started = performance.now();
  const loops = Array.from({ length: concurrency }, async () => {
    for (let i = 0; i < total / concurrency; i++) await one();
  });
  await Promise.all(loops);
  console.log((performance.now() - started) / 1000);
})().catch((error) => { console.error(error); process.exit(1); });
"""

Run = Callable[[int, int], Awaitable[float]]
CONCURRENCY = (1, 50, 200)


async def _python_load(base_url: str, work: OpenAIChat, concurrency: int, total: int) -> float:
    """Seconds for ``total`` requests from ``concurrency`` tasks sharing one SDK client."""
    async with openai.AsyncOpenAI(api_key="sk-bench", base_url=base_url, max_retries=0, timeout=600) as sdk:

        async def one() -> None:
            await work.acheck(await work.call(sdk, 0), 0)

        await one()

        async def loop() -> None:
            for _ in range(total // concurrency):
                await one()

        started = time.perf_counter()
        await asyncio.gather(*(loop() for _ in range(concurrency)))
        return time.perf_counter() - started


def _node_setup(scratch: Path) -> Path | None:
    """The node client's folder with the openai npm package, or ``None`` (said why)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        print("node client: node or npm not found, skipped")
        return None
    folder = scratch / "node"
    folder.mkdir()
    (folder / "client.js").write_text(NODE_CLIENT)
    done = subprocess.run(
        ["npm", "install", "--silent", "--no-audit", "--no-fund", "openai"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode:
        print(f"node client: npm install openai failed, skipped: {done.stderr.strip()[-300:]}")
        return None
    return folder


def _node_load(folder: Path, base_url: str, concurrency: int, total: int, stream: bool) -> float:
    done = subprocess.run(
        ["node", "client.js", base_url, str(concurrency), str(total), "1" if stream else "0"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode:
        raise RuntimeError(f"node client: {done.stderr[-2000:]}")
    return float(done.stdout.split()[-1])


def _bare_server(scratch: Path, work: OpenAIChat) -> tuple[subprocess.Popen[str], str]:
    (interaction,) = interactions(work, 1)
    response = interaction.response
    stored = scratch / f"bare-{work.name.replace(' ', '-')}.json"
    headers = dict(response.headers)
    stored.write_text(
        json.dumps(
            {"status": response.status, "headers": headers, "chunks": [c.hex() for c in response.chunks]}
        )
    )
    bare = subprocess.Popen(
        [sys.executable, "-c", BARE_SERVER, str(stored)], stdout=subprocess.PIPE, text=True
    )
    assert bare.stdout is not None
    return bare, f"http://127.0.0.1:{bare.stdout.readline().strip()}/v1"


def throughput(
    scratch: Path, rounds: int, total: int, node: Path | None, concurrency: tuple[int, ...]
) -> None:
    for stream in (False, True):
        _throughput(scratch, OpenAIChat(stream), rounds, total, node, concurrency)


def _throughput(
    scratch: Path, work: OpenAIChat, rounds: int, total: int, node: Path | None, concurrency: tuple[int, ...]
) -> None:
    stream = work.stream
    cassette = scratch / f"{work.name.replace(' ', '-')}.yaml"
    write_promptvcr(cassette, interactions(work, 1))
    bare, bare_url = _bare_server(scratch, work)
    count = total // 4 if stream else total
    results: dict[tuple[str, str, int], list[float]] = {}
    try:
        options = ["--allow-playback-repeats"]
        upstreams = {"openai": OPENAI_BASE.removesuffix("/v1")}
        with serve(cassette, record_mode="replay", upstreams=upstreams, options=options) as served:
            served_url = f"{served.url}/openai/v1"

            async def in_process(c: int, n: int) -> float:
                with use_cassette(cassette, record_mode="replay", allow_playback_repeats=True):
                    return await _python_load(OPENAI_BASE, work, c, n)

            python: dict[str, Run] = {
                "bare": lambda c, n: _python_load(bare_url, work, c, n),
                "serve": lambda c, n: _python_load(served_url, work, c, n),
                "in-process": in_process,
            }
            for r in range(rounds):
                for c in concurrency:
                    names = list(python)
                    names = names[r % 3 :] + names[: r % 3]
                    for name in names:
                        seconds = asyncio.run(python[name](c, max(count, c)))
                        results.setdefault(("python", name, c), []).append(seconds / max(count, c))
                    if node is not None:
                        for name, url in (("bare", bare_url), ("serve", served_url))[:: 1 if r % 2 else -1]:
                            seconds = _node_load(node, url, c, max(count, c), stream)
                            results.setdefault(("node", name, c), []).append(seconds / max(count, c))
    finally:
        bare.terminate()
        bare.wait()
    kind = f"stream ({200} events)" if stream else "chat completion"
    print(f"\n{kind}: {count} requests per contender and round, {rounds} rounds (medians)")
    for client in ("python", "node"):
        for c in concurrency:
            median = {
                name: statistics.median(values)
                for (who, name, cc), values in results.items()
                if who == client and cc == c
            }
            if not median:
                continue
            line = "  ".join(f"{name} {1 / t:7.0f} req/s {t * 1e6:7.0f} us" for name, t in median.items())
            ratio = median["serve"] / median["bare"]
            print(f"  {client:<6} {c:>3} client{'s' if c > 1 else ' '}: {line}  serve/bare {ratio:.2f}x")


#: A loopback upstream streaming ``size`` bytes of SSE-shaped data in 64 KiB chunks.
BIG_UPSTREAM = (
    r"""
import asyncio, sys
from aiohttp import web
size = int(sys.argv[1])
chunk = (b"data: " + b"x" * (65536 - 8) + b"\n\n")
async def answer(request):
    await request.read()
    response = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await response.prepare(request)
    for _ in range(size // len(chunk)):
        await response.write(chunk)
    await response.write_eof()
    return response
"""
    + LISTEN
)


def _read_through(url: str) -> tuple[int, str]:
    """POST the big stream's request to serve; the bytes received and their SHA-256."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.netloc, timeout=600)
    body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "big"}], "stream": True})
    connection.request("POST", "/openai/v1/chat/completions", body, {"content-type": "application/json"})
    response = connection.getresponse()
    received, digest = 0, hashlib.sha256()
    while chunk := response.read1(1 << 16):
        received += len(chunk)
        digest.update(chunk)
    connection.close()
    return received, digest.hexdigest()


def memory(scratch: Path, size: int) -> bool:
    """Serve's growth recording then replaying a large stream; whether the replay met its goal
    (<= 100 MB above idle: the body is replayed from its body file, issue 57)."""
    upstream = subprocess.Popen(
        [sys.executable, "-c", BIG_UPSTREAM, str(size)], stdout=subprocess.PIPE, text=True
    )
    assert upstream.stdout is not None
    base = f"http://127.0.0.1:{upstream.stdout.readline().strip()}"
    path = scratch / "big.yaml"
    try:
        with serve(path, record_mode="record", upstreams={"openai": base}) as served:
            idle = process_memory(served.process.pid)["VmRSS"]
            received, recorded = _read_through(served.url)
            peak = process_memory(served.process.pid)["VmHWM"]
    finally:
        upstream.terminate()
        upstream.wait()
    print(
        f"\nmemory: recording a {size / 1e6:.0f} MB streamed body through serve ({received / 1e6:.0f} MB "
        f"received): idle {idle / 1e6:.0f} MB, peak {peak / 1e6:.0f} MB, "
        f"{(peak - idle) / 1e6:.0f} MB above idle (goal: <= 100 MB); "
        f"cassette {path.stat().st_size / 1e6:.0f} MB"
    )
    with serve(path, record_mode="replay") as served:
        idle = process_memory(served.process.pid)["VmRSS"]
        replayed, digest = _read_through(served.url)
        peak = process_memory(served.process.pid)["VmHWM"]
    same = "identical" if (replayed, digest) == (received, recorded) else "DIFFERENT"
    print(
        f"memory: replaying it through serve ({replayed / 1e6:.0f} MB, bytes {same}): "
        f"idle {idle / 1e6:.0f} MB, peak {peak / 1e6:.0f} MB, "
        f"{(peak - idle) / 1e6:.0f} MB above idle (goal: <= 100 MB)"
    )
    return peak - idle <= 100e6 and same == "identical"


#: A loopback upstream that reads a request body of any size and answers a small JSON.
SINK_UPSTREAM = (
    r"""
import asyncio, sys
from aiohttp import web
async def answer(request):
    async for _ in request.content.iter_chunked(1 << 20):
        pass
    return web.json_response({"id": "x", "choices": [{"message": {"content": "ok"}}]})
"""
    + LISTEN
)


def _post_body(url: str, size: int) -> int:
    """POST a chat request of about ``size`` bytes (one long user message) through serve."""
    parts = urlsplit(url)
    text = "word " * (size // 5)
    body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}).encode()
    del text
    connection = http.client.HTTPConnection(parts.netloc, timeout=600)
    connection.request("POST", "/openai/v1/chat/completions", body, {"content-type": "application/json"})
    status = connection.getresponse().status
    connection.close()
    return status


def request_memory(scratch: Path, size: int) -> bool:
    """Issue 54: serve's peak memory above idle while a large *request* body goes through it,
    recorded then replayed (goal: less than the body's own size; ``--check``: and under 100 MB).
    A small request first: what the first request loads is idle memory."""
    upstream = subprocess.Popen([sys.executable, "-c", SINK_UPSTREAM], stdout=subprocess.PIPE, text=True)
    assert upstream.stdout is not None
    base = f"http://127.0.0.1:{upstream.stdout.readline().strip()}"
    path = scratch / "big-request.yaml"
    held = True
    try:
        for mode in ("record", "replay"):
            with serve(path, record_mode=mode, upstreams={"openai": base}) as served:
                _post_body(served.url, 1000)
                idle = process_memory(served.process.pid)["VmRSS"]
                status = _post_body(served.url, size)
                peak = process_memory(served.process.pid)["VmHWM"]
            grown = peak - idle
            held = held and status == 200 and grown < min(size, 100_000_000)
            print(
                f"request memory: {mode} of a {size / 1e6:.0f} MB request body through serve "
                f"(status {status}): {grown / 1e6:.0f} MB above idle, {grown / size:.2f}x the body "
                f"(goal: < 1x)"
            )
    finally:
        upstream.terminate()
        upstream.wait()
    return held


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


def recording(scratch: Path, samples: int) -> None:
    direct, through = [], []
    with FakeProvider() as fake:
        upstream = fake.base_url
        with serve(scratch / "rec.yaml", record_mode="record", upstreams={"openai": upstream}) as s:
            for _ in range(samples):
                direct.append(_first_chunk(f"{upstream}/v1/chat/completions"))
                through.append(_first_chunk(f"{s.url}/openai/v1/chat/completions"))
    delay = [t - d for t, d in zip(through, direct, strict=True)]
    print(
        f"\nrecording, time to the first stream event: direct {statistics.median(direct) * 1000:.1f} ms, "
        f"through serve {statistics.median(through) * 1000:.1f} ms "
        f"(added: median {statistics.median(delay) * 1000:.1f} ms, max {max(delay) * 1000:.1f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=0, help="rounds (default 5, --quick 2)")
    parser.add_argument("--skip", default="", help="comma-separated: node, memory, request-memory, recording")
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated parts to run alone: throughput, memory, request-memory, recording",
    )
    parser.add_argument("--memory-mb", type=int, default=300)
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when serve grows past 100 MB replaying (or relaying a request)",
    )
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    if only := set(filter(None, args.only.split(","))):
        skip |= {"node", "throughput", "memory", "request-memory", "recording"} - only
    rounds = args.rounds or (2 if args.quick else 5)
    failed: list[str] = []
    total = 200 if args.quick else 400
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        scratch = Path(tmp)
        node = None if {"node", "throughput"} & skip else _node_setup(scratch)
        if "throughput" not in skip:
            throughput(scratch, rounds, total, node, CONCURRENCY)
        if "memory" not in skip and not memory(scratch, args.memory_mb * 1_000_000) and args.check:
            failed.append("memory: replay")
        request_held = "request-memory" in skip or request_memory(scratch, args.memory_mb * 1_000_000)
        if not request_held and args.check:
            failed.append("request memory")
        if "recording" not in skip:
            recording(scratch, 5 if args.quick else 15)
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
