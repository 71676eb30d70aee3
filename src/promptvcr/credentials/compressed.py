"""Compressed payloads opened and closed again: gzip, deflate, zstd and brotli, found by their bytes.

A stored request keeps no ``content-encoding``, and a base64 payload inside an answer has
none at all, so a compressed payload is recognised by its own first bytes (brotli, which has
none, by not being text). Opening is bounded (a bomb must not fill the memory); closing uses
the algorithm the payload was written with, so that an answer masked inside it keeps its form.
"""

from __future__ import annotations

import functools
import gzip
import importlib
import zlib
from typing import Any

__all__ = ["MAX_INFLATED", "compressed_like", "decompressed", "inflate"]

#: Largest decompressed body searched inside a compressed body.
MAX_INFLATED = 256 * 1024 * 1024

_ZLIB_HEADERS = (b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda")


def inflate(content: bytes) -> bytes | None:
    """A gzip body inflated (``None`` when it is not one, or inflates past the bound)."""
    return _zlib(content, 16 + zlib.MAX_WBITS) if content[:2] == b"\x1f\x8b" else None


def _zlib(content: bytes, wbits: int) -> bytes | None:
    try:
        inflater = zlib.decompressobj(wbits)
        out = inflater.decompress(content, MAX_INFLATED)
        return out if not inflater.unconsumed_tail else None
    except zlib.error:
        return None


@functools.cache
def _library(name: str) -> Any:
    """The module of a compression's library, or ``None`` when it is not installed: looked for
    once (a failed import is not remembered by Python, and costs a search of the path)."""
    try:
        return importlib.import_module(name)
    except ImportError:  # without it no client sends that compression either
        return None


def _zstd(content: bytes) -> bytes | None:
    zstandard = _library("zstandard")
    if zstandard is None:  # pragma: no cover - installed with the test extra
        return None
    try:
        reader = zstandard.ZstdDecompressor().decompressobj()
        out: bytes = reader.decompress(content[:MAX_INFLATED])
        return out[:MAX_INFLATED]
    except zstandard.ZstdError:
        return None


def _brotli(content: bytes) -> bytes | None:
    brotli = _library("brotli")
    if brotli is None:  # httpx, aiohttp and urllib3 need it to send or read brotli
        return None
    try:
        out: bytes = brotli.decompress(content)
        return out[:MAX_INFLATED]
    except Exception:  # brotli raises its own error type, or a plain one
        return None


def decompressed(content: bytes, *, unmarked: bool = True) -> bytes | None:
    """A compressed body's bytes (gzip, deflate, zstd, brotli), or ``None``: what a client that
    compresses its request bodies sent, found by the bytes themselves (a stored request keeps
    no ``content-encoding``). Brotli has no magic number: it is tried on bytes that are not
    text, unless ``unmarked`` is false (a payload decoded from a base64 run of a text: any run
    of noise would be tried)."""
    if content[:2] == b"\x1f\x8b":
        return _zlib(content, 16 + zlib.MAX_WBITS)
    if content[:2] in _ZLIB_HEADERS:
        return _zlib(content, zlib.MAX_WBITS)
    if content[:4] == b"\x28\xb5\x2f\xfd":
        return _zstd(content)
    if not unmarked:
        return None
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return _brotli(content)
    return None


def compressed_like(original: bytes, payload: bytes) -> bytes | None:
    """``payload`` compressed with the algorithm ``original`` was, or ``None`` when this
    process cannot (its library is missing)."""
    if original[:2] == b"\x1f\x8b":
        return gzip.compress(payload, mtime=0)
    if original[:1] == b"\x78":
        return zlib.compress(payload)
    library = _library("zstandard" if original[:4] == b"\x28\xb5\x2f\xfd" else "brotli")
    if library is None:  # pragma: no cover - it decompressed, so it is installed
        return None
    if original[:4] == b"\x28\xb5\x2f\xfd":
        compressed: bytes = library.ZstdCompressor().compress(payload)
        return compressed
    compressed = library.compress(payload)
    return compressed
