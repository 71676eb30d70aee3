"""Compressed payloads opened and closed again: gzip, deflate, zstd and brotli, found by their bytes.

A stored request keeps no ``content-encoding``, and a base64 payload inside an answer has
none at all, so a compressed payload is recognised by its own first bytes (brotli, which has
none, by not being text). Opening is bounded (a bomb must not fill the memory); closing uses
the algorithm the payload was written with, so that an answer masked inside it keeps its form.
"""

from __future__ import annotations

import gzip
import zlib

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


def _zstd(content: bytes) -> bytes | None:
    try:
        import zstandard  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - without it no client sends zstd either
        return None
    try:
        reader = zstandard.ZstdDecompressor().decompressobj()
        out: bytes = reader.decompress(content[:MAX_INFLATED])
        return out[:MAX_INFLATED]
    except zstandard.ZstdError:
        return None


def _brotli(content: bytes) -> bytes | None:
    try:
        import brotli  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # without it no client sends brotli either (httpx, aiohttp, urllib3 need it)
        return None
    try:
        out: bytes = brotli.decompress(content)
        return out[:MAX_INFLATED]
    except Exception:  # brotli raises its own error type, or a plain one
        return None


def decompressed(content: bytes) -> bytes | None:
    """A compressed body's bytes (gzip, deflate, zstd, brotli), or ``None``: what a client that
    compresses its request bodies sent, found by the bytes themselves (a stored request keeps
    no ``content-encoding``). Brotli has no magic number: it is tried on bytes that are not
    text."""
    if content[:2] == b"\x1f\x8b":
        return _zlib(content, 16 + zlib.MAX_WBITS)
    if content[:2] in _ZLIB_HEADERS:
        return _zlib(content, zlib.MAX_WBITS)
    if content[:4] == b"\x28\xb5\x2f\xfd":
        return _zstd(content)
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
    if original[:4] == b"\x28\xb5\x2f\xfd":
        try:
            import zstandard  # type: ignore[import-not-found,unused-ignore]
        except ImportError:  # pragma: no cover - it decompressed, so it is installed
            return None
        compressed: bytes = zstandard.ZstdCompressor().compress(payload)
        return compressed
    try:
        import brotli  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - it decompressed, so it is installed
        return None
    compressed = brotli.compress(payload)
    return compressed
