"""Replaying a large download in bounded memory (issue 57): in-process and through ``promptvcr serve``.

A loopback upstream (a child process) streams ``--mb`` megabytes of binary data as
``application/octet-stream`` in 64 KiB chunks. A child process records it through httpx's
streaming API in a cassette (the body goes to ``bodies/sha256-<hex>`` beside it); then fresh
child processes replay it with the upstream stopped, reading the stream to its end and hashing
it: in-process twice (a first load, which writes the parse caches, and a second, which reads
them) and through ``promptvcr serve``. Each reports its peak resident memory (``VmHWM``) above
what it used just before the cassette was entered (``VmRSS``, after the imports), and whether
the bytes are the ones recorded.

Goal (``--check`` exits 1 otherwise): replaying grows resident memory by at most 100 MB, for
300 MB, in-process and in serve.

Run: python benchmarks/bench_large_bodies.py [--mb 300] [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_serve import process_memory

#: A loopback upstream streaming ``argv[1]`` bytes, never holding them: 64 KiB chunks of a
#: counter's SHA-256 stream (not compressible, the same on every run).
UPSTREAM = r"""
import asyncio, hashlib, sys
from aiohttp import web
size = int(sys.argv[1])
def chunk(index):
    seed = hashlib.sha256(index.to_bytes(8, "big")).digest()
    return (seed * 2048)[: 65536]
async def answer(request):
    response = web.StreamResponse(headers={"content-type": "application/octet-stream",
                                           "content-length": str(size)})
    await response.prepare(request)
    sent, index = 0, 0
    while sent < size:
        data = chunk(index)[: size - sent]
        await response.write(data)
        sent += len(data)
        index += 1
    await response.write_eof()
    return response
async def main():
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(runner.addresses[0][1], flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""

#: One in-process use of the cassette ``argv[1]`` (mode ``argv[2]``) reading ``argv[3]`` by
#: httpx's streaming API: prints the size and SHA-256 read, and the memory figures.
CLIENT = r"""
import hashlib, json, sys
from pathlib import Path
import httpx
import promptvcr
def memory():
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) * 1024
    return found
client = httpx.Client(timeout=600)
idle = memory()["VmRSS"]
digest, size = hashlib.sha256(), 0
with promptvcr.use_cassette(sys.argv[1], record_mode=sys.argv[2]):
    with client.stream("GET", sys.argv[3]) as response:
        for data in response.iter_bytes():
            digest.update(data)
            size += len(data)
print(json.dumps({"size": size, "sha256": digest.hexdigest(), "idle": idle, "peak": memory()["VmHWM"]}))
"""

MB = 1_000_000
GOAL = 100 * MB


def _client(cassette: Path, mode: str, url: str, cache: Path) -> dict[str, int | str]:
    env = {"PROMPTVCR_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin", "HOME": str(cache.parent)}
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, str(cassette), mode, url], capture_output=True, text=True, env=env
    )
    if done.returncode:
        raise SystemExit(f"the {mode} client failed:\n{done.stderr}")
    result: dict[str, int | str] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _through_serve(cassette: Path, path: str, base: str) -> tuple[int, str, int]:
    """Replay through ``promptvcr serve``: the size and SHA-256 read, and serve's growth."""
    import http.client
    from urllib.parse import urlsplit

    from promptvcr.server import serve

    with serve(cassette, record_mode="replay", upstreams={"openai": base}) as served:
        idle = process_memory(served.process.pid)["VmRSS"]
        connection = http.client.HTTPConnection(urlsplit(served.url).netloc, timeout=600)
        connection.request("GET", f"/openai{path}")
        response = connection.getresponse()
        digest, size = hashlib.sha256(), 0
        while data := response.read1(1 << 16):
            digest.update(data)
            size += len(data)
        connection.close()
        peak = process_memory(served.process.pid)["VmHWM"]
    return size, digest.hexdigest(), peak - idle


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=300, help="the download's size in MB (default 300)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a replay grows more than 100 MB")
    args = parser.parse_args()
    size = args.mb * MB
    upstream = subprocess.Popen(
        [sys.executable, "-c", UPSTREAM, str(size)], stdout=subprocess.PIPE, text=True
    )
    failed = []
    with tempfile.TemporaryDirectory(prefix="bench-large-") as tmp:
        scratch = Path(tmp)
        cassette, cache = scratch / "cassettes" / "download.yaml", scratch / "cache"
        path = "/v1/files/file-big/content"
        try:
            assert upstream.stdout is not None
            base = f"http://127.0.0.1:{upstream.stdout.readline().strip()}"
            url = base + path
            recorded = _client(cassette, "record", url, cache)
        finally:
            upstream.terminate()
            upstream.wait()
        bodies = list((cassette.parent / "bodies").iterdir())
        grown = int(recorded["peak"]) - int(recorded["idle"])
        print(
            f"recorded {int(recorded['size']) / MB:.0f} MB in-process: {grown / MB:.0f} MB above idle; "
            f"cassette {cassette.stat().st_size:,} bytes, body files "
            f"{', '.join(f'{b.name[:19]}... {b.stat().st_size / MB:.0f} MB' for b in bodies)}"
        )
        runs = [("in-process, first load", "none"), ("in-process, from the caches", "none")]
        for name, mode in runs:
            replayed = _client(cassette, mode, url, cache)
            grown = int(replayed["peak"]) - int(replayed["idle"])
            same = (replayed["size"], replayed["sha256"]) == (recorded["size"], recorded["sha256"])
            print(
                f"replayed {name}: idle {int(replayed['idle']) / MB:.0f} MB, {grown / MB:.0f} MB above idle "
                f"({grown / size:.2f}x the body; goal <= {GOAL / MB:.0f} MB), "
                f"bytes {'identical' if same else 'DIFFERENT'}"
            )
            if grown > GOAL or not same:
                failed.append(name)
        served_size, served_sha, grown = _through_serve(cassette, path, base)
        same = (served_size, served_sha) == (recorded["size"], recorded["sha256"])
        print(
            f"replayed through serve: {grown / MB:.0f} MB above idle ({grown / size:.2f}x the body; "
            f"goal <= {GOAL / MB:.0f} MB), bytes {'identical' if same else 'DIFFERENT'}"
        )
        if grown > GOAL or not same:
            failed.append("serve")
    if args.check and failed:
        print(f"FAILED: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
