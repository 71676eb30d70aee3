"""gRPC replay against a bare loopback gRPC server, as ratios measured in one run.

The floor is a grpc server in a child process (so it does not share the client's interpreter)
that answers Vertex AI's ``GenerateContent`` with one prebuilt answer and
``StreamGenerateContent`` with 20 prebuilt messages: what a call behind a loopback socket costs
at the least. Contenders, interleaved round by round (the order rotating) so that a noisy
machine slows both alike, each calling through google-cloud-aiplatform's own client:

* ``bare``    the floor above;
* ``replay``  the same client on ``use_cassette(CASSETTE, allow_playback_repeats=True)``,
              recorded from that server once (the server keeps running: nothing reaches it);
* ``cold``    the same, each call's messages converted anew (the memos of
              ``interceptors/grpc`` emptied before each call): a cassette's first replay.

Calls: the sync client's ``generate_content`` and ``stream_generate_content`` (read to its
end), the asyncio client's ``generate_content``. Reported: the median time per call over
rounds, replay/bare and cold/bare. ``--check`` exits 1 when replay/bare is above 1.0: a replayed
call must never cost more than the loopback call it stands for (cold is reported, not guarded).

Run: python benchmarks/bench_grpc.py [--rounds N] [--calls N] [--check]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from google.cloud import aiplatform_v1 as v1
from google.cloud.aiplatform_v1.services.prediction_service.transports import (
    PredictionServiceGrpcAsyncIOTransport,
    PredictionServiceGrpcTransport,
)

from promptvcr import use_cassette
from promptvcr.interceptors.grpc import exchange, protojson

GUARD = 1.0

#: The floor: a grpc server answering with prebuilt messages; prints its port.
SERVER = r"""
import sys, time
from concurrent import futures
import grpc
from google.cloud import aiplatform_v1 as v1
part = lambda text: v1.Candidate(content=v1.Content(role="model", parts=[v1.Part(text=text)]))
usage = v1.GenerateContentResponse.UsageMetadata(prompt_token_count=12, total_token_count=40)
answer = v1.GenerateContentResponse.serialize(
    v1.GenerateContentResponse(candidates=[part("a short answer " * 8)], usage_metadata=usage,
                               model_version="m-1"))
chunks = [v1.GenerateContentResponse.serialize(v1.GenerateContentResponse(candidates=[part(f"word{n} ")]))
          for n in range(20)]
service = "google.cloud.aiplatform.v1.PredictionService"
handlers = {
    "GenerateContent": grpc.unary_unary_rpc_method_handler(lambda r, c: answer, None, None),
    "StreamGenerateContent": grpc.unary_stream_rpc_method_handler(lambda r, c: iter(chunks), None, None),
}
server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print(port, flush=True)
sys.stdin.read()
"""

REQUEST = v1.GenerateContentRequest(
    model="projects/p/locations/us-central1/publishers/google/models/gemini-x",
    contents=[v1.Content(role="user", parts=[v1.Part(text="what is the floor?")])],
)


def _forget() -> None:
    """Empty the gRPC interceptor's memos: the next call converts its messages anew."""
    exchange._MESSAGES.clear()
    protojson._REQUESTS.clear()


def _nothing() -> None:
    return None


def _calls(address: str) -> dict[str, Callable[[int, Callable[[], None]], None]]:
    """Each call, made ``n`` times with ``before()`` before each."""
    client = v1.PredictionServiceClient(
        transport=PredictionServiceGrpcTransport(channel=grpc.insecure_channel(address))
    )

    def unary(n: int, before: Callable[[], None]) -> None:
        for _ in range(n):
            before()
            client.generate_content(REQUEST)

    def stream(n: int, before: Callable[[], None]) -> None:
        for _ in range(n):
            before()
            if sum(1 for _ in client.stream_generate_content(REQUEST)) != 20:
                raise RuntimeError("a stream of 20 messages expected")

    def async_unary(n: int, before: Callable[[], None]) -> None:
        async def run() -> None:
            channel = grpc.aio.insecure_channel(address)
            aclient = v1.PredictionServiceAsyncClient(
                transport=PredictionServiceGrpcAsyncIOTransport(channel=channel)
            )
            for _ in range(n):
                before()
                await aclient.generate_content(REQUEST)
            await channel.close()

        asyncio.run(run())

    return {"sync unary": unary, "sync stream (20)": stream, "async unary": async_unary}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200, help="calls per round and contender")
    parser.add_argument("--check", action="store_true", help=f"exit 1 when a ratio is above {GUARD}")
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        address = f"127.0.0.1:{server.stdout.readline().strip()}"
        calls = _calls(address)
        with tempfile.TemporaryDirectory() as scratch:
            cassette = Path(scratch) / "grpc.yaml"
            with use_cassette(cassette, record_mode="rewrite"):
                for call in calls.values():
                    call(1, _nothing)
            times: dict[tuple[str, str], list[float]] = {}
            for round_ in range(args.rounds):
                for name, call in calls.items():
                    contenders = ["bare", "replay", "cold"]
                    contenders = contenders[round_ % 3 :] + contenders[: round_ % 3]
                    for contender in contenders:
                        started = time.perf_counter()
                        if contender == "bare":
                            call(args.calls, _nothing)
                        else:
                            with use_cassette(cassette, allow_playback_repeats=True):
                                call(args.calls, _nothing if contender == "replay" else _forget)
                        times.setdefault((name, contender), []).append(
                            (time.perf_counter() - started) / args.calls
                        )
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait(timeout=10)
    failed = False
    print(
        f"{'call':<18} {'bare us':>9} {'replay us':>10} {'cold us':>9} {'replay/bare':>12} {'cold/bare':>10}"
    )
    for name in calls:
        bare, replay, cold = (statistics.median(times[(name, c)]) for c in ("bare", "replay", "cold"))
        failed |= replay / bare > GUARD
        print(
            f"{name:<18} {bare * 1e6:>9.0f} {replay * 1e6:>10.0f} {cold * 1e6:>9.0f}"
            f" {replay / bare:>12.2f} {cold / bare:>10.2f}"
        )
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
