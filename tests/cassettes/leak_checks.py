"""Looking for a key everywhere in a cassette file: raw, URL-decoded, in every base64 string
(gzip inflated), and joined across the events of a stream; and ``promptvcr scan`` on a file."""

from __future__ import annotations

import base64
import binascii
import contextlib
import gzip
import os
import re
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote_plus

import yaml
import zstandard

__all__ = ["all_decodings", "assert_in_no_decoding", "assert_nowhere", "scan"]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _leaves(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(field with list positions left out, string) of every string: joined, a stream's pieces."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{where}.{key}")
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, f"{where}[]")


def _decoded(text: str) -> Iterator[bytes]:
    for blob in re.findall(r"[A-Za-z0-9+/]{16,}={0,2}", text):
        try:
            raw = base64.b64decode(blob + "=" * (-len(blob) % 4))
        except (binascii.Error, ValueError):
            continue
        yield raw
        yield from _inflated(raw)


def _inflated(raw: bytes) -> Iterator[bytes]:
    """A compressed payload decompressed: gzip, deflate (zlib) or zstd."""
    if raw[:2] == b"\x1f\x8b":
        yield gzip.decompress(raw)
    elif raw[:1] == b"\x78":
        with contextlib.suppress(zlib.error):
            yield zlib.decompress(raw)
    elif raw[:4] == b"\x28\xb5\x2f\xfd":
        with contextlib.suppress(zstandard.ZstdError):
            yield zstandard.ZstdDecompressor().decompressobj().decompress(raw)


def assert_nowhere(path: Path, key: str) -> None:
    text = path.read_text()
    data = yaml.safe_load(text)
    strings = list(_strings(data))
    for variant in (key, quote(key, safe="")):
        assert variant not in text, "raw"
        assert not any(variant in s or variant in unquote_plus(s) for s in strings), "in a field, URL-decoded"
        assert not any(variant.encode() in raw for s in strings for raw in _decoded(s)), "base64-decoded"
    for interaction in data["interactions"]:
        joined: dict[str, str] = {}
        for where, piece in _leaves(interaction["response"].get("events") or []):
            joined[where] = joined.get(where, "") + piece
        assert not any(key in value for value in joined.values()), "joined across events"
    assert_in_no_decoding(path, key)


def _runs_decoded(data: bytes) -> Iterator[bytes]:
    """Every base64 run of either alphabet in ``data`` (16 characters or more), decoded at each
    of the four alignments (a run's first characters may not be its payload's), inflated."""
    for run in re.findall(rb"[A-Za-z0-9+/_\-]{16,}={0,2}", data):
        for start in range(4):
            piece = run[start:].rstrip(b"=")
            piece = piece[: len(piece) - (len(piece) % 4 == 1)]
            for altchars in (None, b"-_"):
                with contextlib.suppress(binascii.Error, ValueError):
                    raw = base64.b64decode(piece + b"=" * (-len(piece) % 4), altchars=altchars)
                    yield raw
                    yield from _inflated(raw)


def all_decodings(data: bytes, depth: int = 0) -> Iterator[bytes]:
    """``data``, and each of its decodings (see :func:`assert_in_no_decoding`)."""
    yield data
    if depth < 4:
        if b"%" in data:
            unquoted = unquote_plus(data.decode("latin-1"), encoding="latin-1")
            yield from all_decodings(unquoted.encode("latin-1"), depth + 1)
        for raw in _runs_decoded(data):
            yield from all_decodings(raw, depth + 1)


def assert_in_no_decoding(path: Path, key: str) -> None:
    """``key`` is in no decoding of the file: not raw, not in a base64 run anywhere (inside a
    longer string, in a binary body, in a stream's pieces joined), at any alignment, not
    URL-decoded, not inflated, a few layers deep. Written apart from promptvcr's own search."""
    data = yaml.safe_load(path.read_text())
    texts: list[bytes] = [path.read_bytes()]
    texts += [s.encode("utf-8") for s in _strings(data)]
    for interaction in data.get("interactions") or []:
        joined: dict[str, str] = {}
        response = interaction.get("response") or {}
        for stream in (response.get("events"), (response.get("websocket") or {}).get("frames")):
            for where, piece in _leaves(stream or []):
                joined[where] = joined.get(where, "") + piece
        texts += [value.encode("utf-8") for value in joined.values()]
    needle = key.encode()
    for text in texts:
        for decoded in all_decodings(text):
            assert needle not in decoded, "in a decoding of the file"


def scan(path: Path) -> subprocess.CompletedProcess[str]:
    """``promptvcr scan PATH``, run as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "promptvcr", "scan", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )
