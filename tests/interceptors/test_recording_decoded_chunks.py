"""Issue 22: the application reads an encoded body (gzip, deflate, zstd, several codings)
through the library's own response while it is recorded; the recording decodes each chunk it
passes on with a decoder of its own, of the library's kind (``_compat.content_decoder``). The
application must get, and the cassette must keep, exactly the chunks ``iter_bytes`` gives
without a cassette, for httpx2 and httpx, sync and async, the compressed bytes cut anywhere
(empty pieces too), read whole or closed early; a body that does not decode fails with the
library's own error, as without a cassette.
"""

from __future__ import annotations

import asyncio
import gzip
import importlib.util
import random
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest

import promptvcr
from promptvcr.interceptors._compat import content_decoder


def _raw_deflate(body: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(body) + packer.flush()


def _zstd(body: bytes) -> bytes:
    import zstandard

    return bytes(zstandard.ZstdCompressor().compress(body))


CODINGS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "raw deflate": _raw_deflate,  # sent as "deflate": the library retries without the header
    "deflate, gzip": lambda body: gzip.compress(zlib.compress(body)),
    "gzip, identity": gzip.compress,
    "x-unknown, gzip": gzip.compress,  # an unknown coding is skipped by the library
    "broken gzip": lambda body: gzip.compress(body)[:-6] + b"\x00" * 6,
    "not gzip": lambda body: b"plain text, not gzip" + body,
}
#: Codings both libraries decode (zstd only with its package, and not in every version).
DECODED = {"gzip", "deflate", "raw deflate", "deflate, gzip", "gzip, identity", "x-unknown, gzip"}
if importlib.util.find_spec("zstandard") is not None:
    CODINGS["zstd"] = _zstd


def _header(coding: str) -> str:
    return {"raw deflate": "deflate", "broken gzip": "gzip", "not gzip": "gzip"}.get(coding, coding)


def _bodies() -> list[bytes]:
    chosen = random.Random(22)
    return [
        b"",
        b'{"id": "x", "choices": []}',
        b"data: 1\n\ndata: [DONE]\n\n",
        bytes(chosen.randrange(256) for _ in range(3000)),
        b"abc" * 40_000,  # inflates in several pieces
    ] + [bytes(chosen.choices(b"ab\n:{}", k=chosen.choice([1, 50, 900]))) for _ in range(8)]


def _cut(data: bytes, chosen: random.Random) -> list[bytes]:
    """``data`` cut at random places, with empty pieces between some."""
    cuts = sorted(chosen.sample(range(len(data) + 1), min(len(data) + 1, chosen.randint(0, 6))))
    pieces, start = [], 0
    for cut in [*cuts, len(data)]:
        pieces.append(data[start:cut])
        if chosen.random() < 0.3:
            pieces.append(b"")
        start = cut
    return pieces


def _stream_class(module: Any) -> type:
    class Pieces(module.SyncByteStream, module.AsyncByteStream):  # type: ignore[misc, name-defined]
        def __init__(self, pieces: list[bytes]) -> None:
            self._pieces = pieces

        def __iter__(self) -> Iterator[bytes]:
            yield from self._pieces

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for piece in self._pieces:
                yield piece

    return Pieces


def _read(
    module: Any, pieces: list[bytes], coding: str, asynchronous: bool, early: bool, raw: bool = False
) -> list[Any]:
    """The chunks the application reads (decoded, or ``raw``), then the error it got (type and
    text) if any."""
    stream_class = _stream_class(module)

    def answer(request: Any) -> Any:
        headers = {"content-type": "application/octet-stream", "content-encoding": _header(coding)}
        return module.Response(200, headers=headers, stream=stream_class(pieces))

    got: list[Any] = []

    def sync() -> None:
        with (
            module.Client(transport=module.MockTransport(answer)) as client,
            client.stream("GET", "http://provider.test/s") as response,
        ):
            for chunk in response.iter_raw() if raw else response.iter_bytes():
                got.append(chunk)
                if early:
                    break

    async def asynchronously() -> None:
        async with (
            module.AsyncClient(transport=module.MockTransport(answer)) as client,
            client.stream("GET", "http://provider.test/s") as response,
        ):
            async for chunk in response.aiter_raw() if raw else response.aiter_bytes():
                got.append(chunk)
                if early:
                    break

    try:
        asyncio.run(asynchronously()) if asynchronous else sync()
    except Exception as error:  # the error is what is compared
        got.append((type(error), str(error)))
    return got


@pytest.mark.parametrize("module", [httpx2, httpx], ids=["httpx2", "httpx"])
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("early", [False, True], ids=["whole", "closed-early"])
def test_recorded_encoded_chunks_are_the_library_s_decoded_chunks(
    tmp_path: Path, module: Any, asynchronous: bool, early: bool
) -> None:
    chosen = random.Random(22)
    number = 0
    for coding, encode in CODINGS.items():
        for body in _bodies():
            pieces = _cut(encode(body), chosen)
            bare = _read(module, pieces, coding, asynchronous, early)
            number += 1
            with promptvcr.use_cassette(tmp_path / f"{number}.yaml", record_mode="rewrite") as cassette:
                seen = _read(module, pieces, coding, asynchronous, early)
            assert seen == bare, (coding, pieces)
            failed = bool(bare) and isinstance(bare[-1], tuple)
            if not failed and not early and coding in DECODED:
                assert b"".join(bare) == body, coding  # the test reads decoded bodies indeed
            if failed:
                continue  # the block raised: a rewrite keeps the old file
            (kept,) = cassette.interactions
            chunks = [chunk for chunk in bare if isinstance(chunk, bytes)]
            if early:  # what arrived before the application let go (a small body is read to its end)
                assert kept.response.chunks[: len(chunks)] == chunks, (coding, pieces)
            else:
                assert kept.response.chunks == chunks, (coding, pieces)
                assert kept.response.end == "complete", (coding, pieces)


@pytest.mark.parametrize("module", [httpx2, httpx], ids=["httpx2", "httpx"])
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("early", [False, True], ids=["whole", "closed-early"])
def test_an_application_reading_the_raw_bytes_gets_them_and_the_cassette_keeps_them_decoded(
    tmp_path: Path, module: Any, asynchronous: bool, early: bool
) -> None:
    """The library does not decode what its ``iter_raw`` gives: the recording decodes it as the
    response closes (``SharedDecoder.catch_up``)."""
    chosen = random.Random(22)
    number = 0
    for coding in sorted(DECODED):
        for body in _bodies():
            pieces = _cut(CODINGS[coding](body), chosen)
            bare = _read(module, pieces, coding, asynchronous, early, raw=True)
            number += 1
            with promptvcr.use_cassette(tmp_path / f"{number}.yaml", record_mode="rewrite") as cassette:
                seen = _read(module, pieces, coding, asynchronous, early, raw=True)
            assert seen == bare, (coding, pieces)
            (kept,) = cassette.interactions
            if early:  # a small body of unknown length: what arrived before the application let go
                assert body.startswith(kept.response.content), (coding, pieces)
            else:
                assert kept.response.content == body, (coding, pieces)
                assert kept.response.end == "complete"


@pytest.mark.parametrize("module", [httpx2, httpx], ids=["httpx2", "httpx"])
def test_a_library_without_its_decoder_method_has_the_body_decoded_whole(module: Any) -> None:
    """``Response._get_content_decoder`` is a private name: were it gone, the recording would
    decode the whole body at its end through the library's public API, to the same bytes."""

    class Older(module.Response):  # type: ignore[misc, name-defined]
        _get_content_decoder = None  # as if the library had no such method

    chosen = random.Random(22)
    for coding in DECODED:
        for body in _bodies():
            response = object.__new__(Older)  # the headers are all the decoder reads
            response.headers = module.Headers({"content-encoding": _header(coding)})
            decoder = content_decoder(response)
            pieces = [decoder.decode(piece) for piece in _cut(CODINGS[coding](body), chosen)]
            assert b"".join([*pieces, decoder.flush()]) == body, coding
    response = object.__new__(Older)
    response.headers = module.Headers({"content-encoding": "gzip"})
    decoder = content_decoder(response)
    decoder.decode(CODINGS["not gzip"](b"{}"))
    with pytest.raises(module.DecodingError):
        decoder.flush()
