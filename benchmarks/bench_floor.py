"""Per-request replay cost against a *fair* floor, with every contender in one run (issue 22).

The floor is the same SDK over a bare ``httpx2`` transport that serves, byte for byte, what
promptvcr replays: the same status, the same header list (``content-length`` included), the
same body chunks (one per SSE event for streams), the same ``http_version`` extension. Its
only work per request is reading the body and one dictionary look-up by the raw bytes.

Contenders, interleaved sample by sample (alternating which goes first) so that a noisy
shared machine slows all of them alike:

* ``floor``      the bare transport above, no cassette;
* ``promptvcr``  the SDK's default client, replaying a promptvcr cassette;
* ``vcrpy``      the SDK's default client (vcrpy patches httpx2 too), replaying a vcrpy cassette;
* ``cassetter``  the same, replaying a cassetter cassette (non-stream cases; skipped if absent).

Times are process CPU time per request; a ratio is the median of the ratios of samples taken
side by side, with its quartiles. Samples are short and many (150 pairs of 20 requests): a
shared machine's speed drifts from one sample to the next, and the two samples of a pair share
it. Repeated on one host, the median of 150 such ratios moved by 0.2%, where 15 pairs of 200
requests moved by 2.3% (issue 22); shorter still (5 requests) reads 1% higher, each switch of
contender costing the one with more code a few cold caches.

Cases: openai chat completions and anthropic messages, sync and async, 1 / 1,000 / 10,000
interactions, requests for the first / last / a random one, and 200-event streams. Then:
record mode against no cassette, loading a 10,000-interaction cassette (YAML and JSON), and
the first use in a fresh process.

``--check`` makes it a regression guard: it exits 1 when a replay case's promptvcr/floor ratio
is above :data:`GUARD` (1.05), naming the cases (issue 48).

Run: [CASSETTER_PATH=DIR] python benchmarks/bench_floor.py [--quick] [--profile] [--only openai|anthropic]
     [--check]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import promptvcr
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.files import fileformat

# cassetter is installed apart from the venv (``pip install --target DIR cassetter``, then
# CASSETTER_PATH=DIR): in the venv its pytest plugin takes the ``cassette`` fixture from ours.
if os.environ.get("CASSETTER_PATH"):
    sys.path.append(os.environ["CASSETTER_PATH"])
try:
    import cassetter
except ImportError:  # pragma: no cover - optional contender
    cassetter = None

OPENAI_BASE = "http://127.0.0.1:9/v1"
ANTHROPIC_BASE = "http://127.0.0.1:9"
HEADERS = {  # what a provider answers with, roughly: a fair floor serves all of them too
    "content-type": "application/json",
    "date": "Tue, 24 Nov 2026 04:52:32 GMT",
    "x-request-id": "req_620e624e1dbc72b933128f1f",
    "openai-processing-ms": "941",
    "x-ratelimit-remaining-requests": "9999",
    "x-ratelimit-remaining-tokens": "199000",
    "server": "cloudflare",
    "cf-ray": "8f0c0c0c0c0c0c0c-AMS",
}
STREAM_EVENTS = 200
clock = time.process_time
#: ``--check`` fails a replay case whose promptvcr/floor ratio is above this.
GUARD = 1.05
#: The replay cases above :data:`GUARD` so far (``--check``).
ABOVE: list[str] = []


# --- workloads -------------------------------------------------------------------------------


class Workload:
    """One SDK call shape: its request body, its answer, how to call it and check the reply."""

    name = ""
    url = ""
    stream = False

    def body(self, i: int) -> dict[str, Any]:
        raise NotImplementedError

    def chunks(self, i: int) -> list[bytes]:
        raise NotImplementedError

    def content_type(self) -> str:
        return "text/event-stream" if self.stream else "application/json"


class OpenAIChat(Workload):
    url = f"{OPENAI_BASE}/chat/completions"

    def __init__(self, stream: bool) -> None:
        self.stream = stream
        self.name = "openai" + (" stream" if stream else "")

    def body(self, i: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "messages": [{"role": "user", "content": f"question number {i}"}],
            "model": "gpt-4o",
        }
        return {**body, "stream": True} if self.stream else body

    def chunks(self, i: int) -> list[bytes]:
        if not self.stream:
            message = {"role": "assistant", "content": f"answer {i}"}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
            answer = {"id": f"chatcmpl-{i}", "object": "chat.completion", "created": 1700000000}
            return [json.dumps({**answer, "model": "gpt-4o", "choices": [choice], "usage": usage}).encode()]
        events = []
        for n in range(STREAM_EVENTS):
            delta = {"index": 0, "delta": {"content": f"w{n} "}, "finish_reason": None}
            chunk = {"id": f"c-{i}", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
            events.append(f"data: {json.dumps({**chunk, 'choices': [delta]})}\n\n".encode())
        return [*events, b"data: [DONE]\n\n"]

    def client(self, asynchronous: bool, http_client: Any = None) -> Any:
        kind = openai.AsyncOpenAI if asynchronous else openai.OpenAI
        extra = {"http_client": http_client} if http_client is not None else {}
        return kind(api_key="k", base_url=OPENAI_BASE, max_retries=0, **extra)

    def call(self, client: Any, i: int) -> Any:
        return client.chat.completions.create(**self.body(i))

    def check(self, reply: Any, i: int) -> None:
        if self.stream:
            assert sum(1 for _ in reply) == STREAM_EVENTS
        else:
            assert reply.choices[0].message.content == f"answer {i}", reply

    async def acheck(self, reply: Any, i: int) -> None:
        if self.stream:
            assert len([c async for c in reply]) == STREAM_EVENTS
        else:
            self.check(reply, i)


class AnthropicMessages(Workload):
    url = f"{ANTHROPIC_BASE}/v1/messages"

    def __init__(self, stream: bool) -> None:
        self.stream = stream
        self.name = "anthropic" + (" stream" if stream else "")

    def body(self, i: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "max_tokens": 64,
            "messages": [{"role": "user", "content": f"question number {i}"}],
            "model": "claude-sonnet-4-5",
        }
        return {**body, "stream": True} if self.stream else body

    def chunks(self, i: int) -> list[bytes]:
        message = {"id": f"msg_{i}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5"}
        usage = {"input_tokens": 5, "output_tokens": 2}
        if not self.stream:
            content = [{"type": "text", "text": f"answer {i}"}]
            done = {"stop_reason": "end_turn", "stop_sequence": None, "usage": usage}
            return [json.dumps({**message, "content": content, **done}).encode()]

        def event(name: str, data: dict[str, Any]) -> bytes:
            return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()

        start = {**message, "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
        events = [
            event("message_start", {"message": start}),
            event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ]
        for n in range(STREAM_EVENTS - 5):
            events.append(
                event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": f"w{n} "}})
            )
        events += [
            event("content_block_stop", {"index": 0}),
            event(
                "message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": usage}
            ),
            event("message_stop", {}),
        ]
        return events

    def client(self, asynchronous: bool, http_client: Any = None) -> Any:
        kind = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
        extra = {"http_client": http_client} if http_client is not None else {}
        return kind(api_key="k", base_url=ANTHROPIC_BASE, max_retries=0, **extra)

    def call(self, client: Any, i: int) -> Any:
        return client.messages.create(**self.body(i))

    def check(self, reply: Any, i: int) -> None:
        if self.stream:
            assert sum(1 for _ in reply) == STREAM_EVENTS
        else:
            assert reply.content[0].text == f"answer {i}", reply

    async def acheck(self, reply: Any, i: int) -> None:
        if self.stream:
            assert len([c async for c in reply]) == STREAM_EVENTS
        else:
            self.check(reply, i)


# --- cassettes -------------------------------------------------------------------------------


def sent_bodies(work: Workload, n: int) -> list[bytes]:
    """The body bytes the SDK itself sends for each request, as a recording through it holds.

    A cassette written with other bytes for the same JSON (``json.dumps``'s spacing, another
    key order) replays too, but canonicalizes each live body once instead of finding its key
    by the bytes: that costs a few microseconds per distinct body, and is not what a cassette
    recorded by the SDK looks like."""
    sent: list[bytes] = []

    def capture(request: httpx2.Request) -> httpx2.Response:
        sent.append(request.content)
        chunks = work.chunks(len(sent) - 1)
        return httpx2.Response(200, headers={"content-type": work.content_type()}, stream=_Chunks(chunks))

    client = work.client(False, http_client=_BareClient(transport=httpx2.MockTransport(capture)))
    for i in range(n):
        reply = work.call(client, i)
        if work.stream:
            for _ in reply:
                pass
    return sent


def interactions(work: Workload, n: int) -> list[Interaction]:
    headers = {**HEADERS, "content-type": work.content_type()}
    return [
        Interaction(
            Request("POST", work.url, {"content-type": "application/json"}, body),
            Response(200, dict(headers), work.chunks(i)),
        )
        for i, body in enumerate(sent_bodies(work, n))
    ]


def write_promptvcr(path: Path, items: list[Interaction]) -> None:
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(i) for i in items], path))


def write_vcrpy(path: Path, items: list[Interaction]) -> None:
    data = [
        {
            "request": {
                "body": i.request.content.decode(),
                "headers": {"content-type": ["application/json"]},
                "method": "POST",
                "uri": i.request.url,
            },
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {k: [v] for k, v in i.response.headers.items()},
                "body": {"string": i.response.content.decode()},
            },
        }
        for i in items
    ]
    path.write_text(yaml.dump({"interactions": data, "version": 1}, Dumper=yaml.CSafeDumper))


def write_cassetter(path: Path, items: list[Interaction]) -> None:
    data = [
        {
            "request": {
                "method": "POST",
                "uri": i.request.url,
                "headers": {"content-type": ["application/json"]},
                "body": {"type": "json", "content": json.loads(i.request.content)},
            },
            "response": {
                "status": 200,
                "headers": {k: [v] for k, v in i.response.headers.items()},
                "body": {"type": "json", "content": json.loads(i.response.content)},
            },
            "recorded_at": "2026-11-24T04:52:32.971594+00:00",
        }
        for i in items
    ]
    path.write_text(yaml.dump({"version": 1, "interactions": data}, Dumper=yaml.CSafeDumper, sort_keys=False))


# --- the floor -------------------------------------------------------------------------------


class _Chunks(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks

    async def __aiter__(self) -> Any:
        for chunk in self._chunks:
            yield chunk


class FloorTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """Serves what promptvcr would replay for each request body, and nothing else."""

    def __init__(self, work: Workload, items: list[Interaction]) -> None:
        self._by_body: dict[bytes, tuple[int, list[tuple[str, str]], list[bytes]]] = {}
        self._pending = {json.dumps(json.loads(i.request.content), sort_keys=True): i.response for i in items}

    def _answer(self, request: httpx2.Request) -> httpx2.Response:
        try:
            status, headers, chunks = self._by_body[request.content]
        except KeyError:  # learnt once per body (warm-up), untimed
            response = self._pending[json.dumps(json.loads(request.content), sort_keys=True)]
            headers = list(response.headers.items())
            if not response.is_event_stream:
                headers.append(("content-length", str(sum(len(c) for c in response.chunks))))
            status, chunks = response.status, response.chunks
            self._by_body[request.content] = status, headers, chunks
        return httpx2.Response(
            status, headers=headers, stream=_Chunks(chunks), extensions={"http_version": b"HTTP/1.1"}
        )

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        return self._answer(request)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        return self._answer(request)


class _BareClient(httpx2.Client):
    """A client that always sends through its own transport: a promptvcr cassette left active
    (so that entering it stays out of the samples) does not see the floor's requests."""

    def _transport_for_url(self, url: httpx2.URL) -> httpx2.BaseTransport:
        return self._transport


class _BareAsyncClient(httpx2.AsyncClient):
    def _transport_for_url(self, url: httpx2.URL) -> httpx2.AsyncBaseTransport:
        return self._transport


def bare(sdk_client: Any, transport: FloorTransport) -> Any:
    """The SDK's own default HTTP client (its timeouts, limits, redirects), sending through
    ``transport`` by an instance attribute that a promptvcr cassette left active (so that
    entering it stays out of the samples) does not see: only the transport differs."""
    sdk_client._client._transport_for_url = lambda url: transport
    return sdk_client


# --- timing ----------------------------------------------------------------------------------


def run_sync(work: Workload, client: Any, order: list[int]) -> float:
    started = clock()
    for i in order:
        work.check(work.call(client, i), i)
    return (clock() - started) / len(order)


def run_async(work: Workload, client: Any, order: list[int]) -> float:
    async def go() -> float:
        started = clock()
        for i in order:
            await work.acheck(await work.call(client, i), i)
        return (clock() - started) / len(order)

    return asyncio.run(go())


def quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


class Case:
    def __init__(self, work: Workload, n: int, asynchronous: bool, workdir: Path) -> None:
        self.work, self.n, self.asynchronous = work, n, asynchronous
        items = interactions(work, n)
        tag = f"{work.name.replace(' ', '-')}-{n}"
        self.ours = workdir / f"promptvcr-{tag}.yaml"
        self.vcr = workdir / f"vcrpy-{tag}.yaml"
        self.cst = workdir / f"cassetter-{tag}.yaml"
        if not self.ours.exists():
            write_promptvcr(self.ours, items)
            write_vcrpy(self.vcr, items)
            if cassetter is not None and not work.stream:
                write_cassetter(self.cst, items)
        self.run = run_async if asynchronous else run_sync
        served = fileformat.loads(self.ours.read_text(), self.ours)  # exactly what promptvcr replays
        self.floor = bare(work.client(asynchronous), FloorTransport(work, served))
        self.plain = work.client(asynchronous)
        self.run(work, self.floor, list(range(n)))  # the floor learns each body's bytes, untimed

    def sample(self, name: str, order: list[int]) -> float:
        if name == "floor":
            return self.run(self.work, self.floor, order)
        if name == "promptvcr":  # inside the cassette that measure() entered
            return self.run(self.work, self.plain, order)
        if name == "vcrpy":
            import vcr

            config = vcr.VCR(record_mode="none", match_on=["method", "uri", "body"])
            with config.use_cassette(str(self.vcr), allow_playback_repeats=True):
                return self.run(self.work, self.plain, order)
        with cassetter.use_cassette(self.cst, record_mode="none", match_on=["method", "uri", "body"]):
            return self.run(self.work, self.plain, order)


def measure(case: Case, where: str, requests: int, samples: int, peers: bool) -> dict[str, Any]:
    n = case.n
    pick: Callable[[], int] = {
        "first": lambda: 0,
        "last": lambda: n - 1,
        "random": lambda: random.randrange(n),
    }[where]
    contenders = ["floor", "promptvcr"]
    times: dict[str, list[float]] = {"floor": [], "promptvcr": [], "vcrpy": [], "cassetter": []}
    with promptvcr.use_cassette(case.ours, allow_playback_repeats=True):  # entered once, untimed
        case.sample("promptvcr", [pick() for _ in range(5)])  # warm up
        for s in range(samples):
            order = [pick() for _ in range(requests)]
            for name in contenders if s % 2 == 0 else contenders[::-1]:
                times[name].append(case.sample(name, order))
    if peers:  # peers are slow (vcrpy scans every interaction): fewer, shorter samples
        short = [pick() for _ in range(20 if n < 10_000 else 3)]
        for name in ("vcrpy", "cassetter"):
            if name == "cassetter" and (cassetter is None or case.work.stream):
                continue
            try:
                for _ in range(3 if n < 10_000 else 1):
                    times[name].append(case.sample(name, short))
            except Exception as error:  # cassetter refuses a 10,000-interaction file
                print(f"  {name} failed: {str(error).splitlines()[0][:110]}")
                times[name] = [float("nan")]
    floor = statistics.median(times["floor"])
    ratios = [o / f for o, f in zip(times["promptvcr"], times["floor"], strict=True)]
    return {
        "floor": floor,
        "ratio": quartiles(ratios),
        "vcrpy": statistics.median(times["vcrpy"]) / floor if times["vcrpy"] else None,
        "cassetter": statistics.median(times["cassetter"]) / floor if times["cassetter"] else None,
    }


# --- the fixed costs -------------------------------------------------------------------------


def record_ratio(requests: int, samples: int, workdir: Path) -> dict[str, Any]:
    """Recording ``requests`` requests into a new cassette against the same requests with no
    cassette, to a loopback server in this process (wall-clock time, samples paired and
    alternated): the ``ratio`` as median [q1, q3], and the median of what it adds per request,
    ``in flight`` (while the requests are sent) and ``save`` (the cassette's exit, which writes
    the file), so that a change shows which of the two it moved."""
    from fake_provider import FakeProvider

    work = OpenAIChat(stream=False)
    ours: list[float] = []
    bare: list[float] = []
    saves: list[float] = []
    with FakeProvider() as server:
        client = openai.OpenAI(api_key="k", base_url=server.openai_base_url, max_retries=0)
        order = list(range(requests))

        def live() -> float:
            started = time.perf_counter()
            for i in order:
                work.call(client, i)
            return time.perf_counter() - started

        def recorded(s: int) -> float:
            started = time.perf_counter()
            with promptvcr.use_cassette(workdir / f"record-{s}.yaml", record_mode="record"):
                for i in order:
                    work.call(client, i)
                sent = time.perf_counter()
            ended = time.perf_counter()
            saves.append(ended - sent)
            return ended - started

        for s in range(samples):
            if s % 2:
                bare.append(live())
                ours.append(recorded(s))
            else:
                ours.append(recorded(s))
                bare.append(live())
    added = [(o - b) / requests for o, b in zip(ours, bare, strict=True)]
    save = statistics.median(saves) / requests
    return {
        "ratio": quartiles([o / b for o, b in zip(ours, bare, strict=True)]),
        "in flight": statistics.median(added) - save,
        "save": save,
        "live": statistics.median(bare) / requests,
    }


LOAD = """
import sys, time
import openai  # a test process has its SDK imported
import promptvcr
with promptvcr.use_cassette({small!r}):  # promptvcr's modules imported, as after a first test
    pass
started, cpu = time.perf_counter(), time.process_time()
with promptvcr.use_cassette({path!r}):
    pass
print(time.perf_counter() - started, time.process_time() - cpu)
"""


def load_times(workdir: Path, n: int, rounds: int) -> dict[str, float]:
    """Entering an n-interaction cassette in a fresh process (as a CI job does), wall-clock
    time and CPU time: ``cold`` is the first read of the file (its parse cache empty, as on a
    fresh CI machine, and no request key known), ``warm`` a read in a later process (the parse
    cache filled by the first; see :mod:`promptvcr.files.parsecache`). The cache is a
    folder of this run's. Not in this process: the replay cases above leave it holding
    millions of objects, which no test process has."""
    items = interactions(OpenAIChat(stream=False), n)
    small = workdir / "load-small.yaml"
    write_promptvcr(small, items[:1])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
    results: dict[str, float] = {}
    for suffix in ("yaml", "json"):
        path = workdir / f"load-{n}.{suffix}"
        write_promptvcr(path, items)
        times: dict[str, list[float]] = {"cold": [], "warm": [], "cold cpu": [], "warm cpu": []}
        for r in range(rounds):
            env["PROMPTVCR_CACHE_DIR"] = str(workdir / f"parse-cache-{suffix}-{r}")
            for which in ("cold", "warm"):  # the first process fills the cache, the second reads it
                code = LOAD.format(small=str(small), path=str(path))
                run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
                if run.returncode:
                    raise RuntimeError(run.stderr)
                wall, cpu = run.stdout.split()
                times[which].append(float(wall))
                times[f"{which} cpu"].append(float(cpu))
        for name, values in times.items():
            results[f"{suffix} {name}"] = statistics.median(values)
    return results


FIRST_USE = """
import sys, time
import httpx2, openai
client = openai.OpenAI(api_key="k", base_url={base!r}, max_retries=0)
question = [{{"role": "user", "content": "question number 0"}}]
if {floor!r}:
    sys.path.insert(0, {here!r})
    from bench_floor import FloorTransport, OpenAIChat, _BareClient
    from promptvcr.files import fileformat
    from pathlib import Path
    served = fileformat.loads(Path({path!r}).read_text(), Path({path!r}))
    client = openai.OpenAI(api_key="k", base_url={base!r}, max_retries=0,
                           http_client=_BareClient(transport=FloorTransport(OpenAIChat(False), served)))
    started = time.perf_counter()
    client.chat.completions.create(messages=question, model="gpt-4o")
    print(0.0, time.perf_counter() - started, "-")
    raise SystemExit
started = time.perf_counter()
import promptvcr
cassette = promptvcr.use_cassette({path!r})
cassette.__enter__()
entered = time.perf_counter()
client.chat.completions.create(messages=question, model="gpt-4o")
done = time.perf_counter()
cassette.__exit__(None, None, None)
libraries = ("aiohttp", "urllib3", "botocore", "requests", "websockets", "httpx", "respx")
print(entered - started, done - entered, ",".join(sorted(m for m in libraries if m in sys.modules)))
"""


def first_use(workdir: Path, rounds: int) -> dict[str, Any]:
    """A fresh process each time, with compiled bytecode as an installed package has it
    (PYTHONDONTWRITEBYTECODE would make every process compile promptvcr anew)."""
    items = interactions(OpenAIChat(stream=False), 1)
    path = workdir / "first.yaml"
    write_promptvcr(path, items)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
    here = str(Path(__file__).parent)
    results: dict[str, list[float]] = {"setup": [], "first request": [], "floor first request": []}
    imported = ""
    for r in range(rounds + 1):
        for floor in (False, True):
            code = FIRST_USE.format(base=OPENAI_BASE, path=str(path), floor=floor, here=here)
            run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
            if run.returncode:
                raise RuntimeError(run.stderr)
            setup, request, names = run.stdout.split()
            if r == 0:  # the first run compiles the bytecode
                continue
            if floor:
                results["floor first request"].append(float(request))
            else:
                results["setup"].append(float(setup))
                results["first request"].append(float(request))
                imported = names
    medians: dict[str, Any] = {name: statistics.median(values) for name, values in results.items()}
    medians["imported"] = imported
    return medians


# --- the profile -----------------------------------------------------------------------------


def profile(workdir: Path, requests: int) -> None:
    case = Case(OpenAIChat(stream=False), 1_000, False, workdir)
    order = [random.randrange(case.n) for _ in range(requests)]
    with promptvcr.use_cassette(case.ours, allow_playback_repeats=True):
        case.sample("promptvcr", order)  # warm
        profiler = cProfile.Profile()
        profiler.enable()
        run_sync(case.work, case.plain, order)
        profiler.disable()
    stats = pstats.Stats(profiler).sort_stats("cumulative")
    print(f"\nprofile: {requests} replayed openai requests (1,000-interaction cassette)")
    print("promptvcr's own functions, by cumulative time (the SDK's share is the rest):")
    stats.print_stats("promptvcr", 30)


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer cases and samples (under 2 minutes)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the per-request path")
    parser.add_argument("--only", choices=("openai", "anthropic"), help="one SDK only")
    parser.add_argument("--check", action="store_true", help=f"exit 1 when a replay ratio is above {GUARD}")
    args = parser.parse_args()
    random.seed(7)
    quick = args.quick
    requests, samples = (20, 40) if quick else (20, 150)
    sizes = [1, 10_000] if quick else [1, 1_000, 10_000]
    wheres = ["random"] if quick else ["first", "last", "random"]
    sdks = [args.only] if args.only else ["openai", "anthropic"]
    print(f"cassetter: {'installed' if cassetter else 'not installed (skipped)'}")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if args.profile:
            profile(workdir, 1_000)
            return
        print("replay, per request (CPU time); ratio = promptvcr/floor: median [q1, q3] of paired samples")
        print(f"{'case':<34}{'floor':>9}  {'promptvcr/floor':<24}{'vcrpy/floor':>12}{'cassetter/floor':>16}")
        for sdk in sdks:
            for asynchronous in (False, True):
                kind = "async" if asynchronous else "sync"
                plain = OpenAIChat(False) if sdk == "openai" else AnthropicMessages(False)
                # --quick: 10,000 interactions with the sync clients only (each size's setup is long)
                for n in sizes if not (quick and asynchronous) else sizes[:1]:
                    case = Case(plain, n, asynchronous, workdir)
                    for where in wheres if n > 1 else ["first"]:
                        report(
                            f"{sdk} {kind} n={n:,} {where}",
                            measure(case, where, requests, samples, peers=True),
                        )
                streamed = OpenAIChat(True) if sdk == "openai" else AnthropicMessages(True)
                case = Case(streamed, 1, asynchronous, workdir)
                result = measure(case, "first", max(10, requests // 10), samples, peers=True)
                report(f"{sdk} {kind} stream ({STREAM_EVENTS} events)", result)
        recording = record_ratio(200 if quick else 1_000, 4 if quick else 15, workdir)
        q1, ratio, q3 = recording["ratio"]
        print(
            f"\nrecord mode, {200 if quick else 1_000} requests to a loopback server vs no cassette: "
            f"{ratio:.3f} [{q1:.3f}, {q3:.3f}]; per request: no cassette {recording['live'] * 1e6:.0f}us, "
            f"added in flight {recording['in flight'] * 1e6:.0f}us, added by the save at exit "
            f"{recording['save'] * 1e6:.0f}us (medians)"
        )
        loads = load_times(workdir, 10_000, 3 if quick else 5)
        print(
            f"load a 10,000-interaction cassette: YAML {loads['yaml warm']:.3f}s, "
            f"JSON {loads['json warm']:.3f}s from the parse cache; first read (cache empty): "
            f"YAML {loads['yaml cold']:.3f}s, JSON {loads['json cold']:.3f}s "
            f"(CPU {loads['yaml cold cpu']:.3f}s, {loads['json cold cpu']:.3f}s; "
            f"medians of {3 if quick else 5})"
        )
        first = first_use(workdir, 2 if quick else 7)
        print(
            f"first use in a fresh process: import promptvcr + enter {first['setup'] * 1e3:.1f} ms, "
            f"first replayed request {first['first request'] * 1e3:.1f} ms "
            f"(floor's first request {first['floor first request'] * 1e3:.1f} ms); "
            f"client libraries imported: {first['imported']}"
        )
    if ABOVE:
        print(f"\nabove {GUARD}x the floor: {', '.join(ABOVE)}")
        if args.check:
            sys.exit(1)


def report(label: str, result: dict[str, Any]) -> None:
    q1, ratio, q3 = result["ratio"]
    if ratio > GUARD:
        ABOVE.append(f"{label} ({ratio:.3f})")
    peers = "".join(
        f"{result[name]:>12.2f}" if result[name] is not None else f"{'-':>12}" for name in ("vcrpy",)
    )
    cst = f"{result['cassetter']:>16.2f}" if result["cassetter"] is not None else f"{'-':>16}"
    print(
        f"{label:<34}{result['floor'] * 1e6:>7.0f}us  {ratio:.3f} [{q1:.3f}, {q3:.3f}]{'':<6}{peers}{cst}",
        flush=True,
    )


if __name__ == "__main__":
    main()
