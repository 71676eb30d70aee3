"""Issue 22: a response without a content-encoding is recorded from the transport's chunks as
they are handed on to the library, with no decoding layer of its own. The application must get,
and the cassette must keep, exactly the chunks the library's ``iter_bytes`` gives without a
cassette: empty chunks left out, boundaries kept, sync and async, read whole or streamed,
closed early. Encoded bodies (gzip, an ``identity`` coding: recorded by the library's own
decoder) and a response the library read already (built from bytes by a transport) are
compared too.
"""

from __future__ import annotations

import asyncio
import gzip
import random
from pathlib import Path

import httpx2
import pytest

import promptvcr
from promptvcr.interceptors._httpx_family import stream_classes

SHAPES = [
    [b"data: 1\n\n", b"", b"data: 2\n\n", b"data: [DONE]\n\n"],
    [b"", b"", b"{}"],
    [b""],
    [],
    [b"x" * 70_000, b"y", b"", b"z" * 3],
]


def _random_shapes() -> list[list[bytes]]:
    chosen = random.Random(22)
    sizes = [0, 0, 1, 5, 300]
    return [
        [bytes(chosen.choices(b"ab\n:", k=chosen.choice(sizes))) for _ in range(chosen.randint(0, 9))]
        for _ in range(40)
    ]


def _answer(chunks: list[bytes], coding: str | None) -> httpx2.Response:
    headers = {"content-type": "text/event-stream"}
    if coding == "gzip":
        return httpx2.Response(
            200, headers={**headers, "content-encoding": "gzip"}, content=gzip.compress(b"".join(chunks))
        )
    if coding == "read already":  # built from bytes: the library reads it at once
        return httpx2.Response(200, headers=headers, content=b"".join(chunks))
    if coding is not None:
        headers["content-encoding"] = coding
    return httpx2.Response(200, headers=headers, stream=_Chunks(chunks))


#: A body of fixed chunks (empty ones too), for either kind of client: the stream a replay serves.
_Chunks = stream_classes(httpx2)[0]


def _sync_read(chunks: list[bytes], coding: str | None, early: bool) -> list[bytes]:
    client = httpx2.Client(transport=httpx2.MockTransport(lambda request: _answer(chunks, coding)))
    with client.stream("GET", "http://provider.test/s") as response:
        got = []
        for chunk in response.iter_bytes():
            got.append(chunk)
            if early:
                break
    return got


async def _async_read(chunks: list[bytes], coding: str | None, early: bool) -> list[bytes]:
    transport = httpx2.MockTransport(lambda request: _answer(chunks, coding))
    async with (
        httpx2.AsyncClient(transport=transport) as client,
        client.stream("GET", "http://provider.test/s") as response,
    ):
        got = []
        async for chunk in response.aiter_bytes():
            got.append(chunk)
            if early:
                break
    return got


@pytest.mark.parametrize("coding", [None, "identity", "gzip", "read already"])
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("early", [False, True], ids=["whole", "closed-early"])
def test_recorded_chunks_are_the_library_s_decoded_chunks(
    tmp_path: Path, coding: str | None, asynchronous: bool, early: bool
) -> None:
    def read(chunks: list[bytes]) -> list[bytes]:
        if asynchronous:
            return asyncio.run(_async_read(chunks, coding, early))
        return _sync_read(chunks, coding, early)

    for number, chunks in enumerate(SHAPES + _random_shapes()):
        bare = read(chunks)
        with promptvcr.use_cassette(tmp_path / f"{number}.yaml", record_mode="rewrite") as cassette:
            seen = read(chunks)
        assert seen == bare, chunks
        (kept,) = cassette.interactions
        recorded = kept.response.chunks
        if early:  # what arrived before the application let go (a small body is read to its end)
            assert recorded[: len(bare)] == bare, chunks
        else:
            whole = coding in ("gzip", "read already")
            assert recorded == ([b"".join(chunks)] if whole and bare else bare), chunks
