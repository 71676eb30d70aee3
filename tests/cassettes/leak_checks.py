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

__all__ = ["assert_nowhere", "scan"]


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


def scan(path: Path) -> subprocess.CompletedProcess[str]:
    """``promptvcr scan PATH``, run as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "promptvcr", "scan", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )
