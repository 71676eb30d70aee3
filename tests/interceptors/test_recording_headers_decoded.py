"""Issue 22: ``Recording.headers_decoded`` (the httpx family's path, which skips lower-casing
names it knows are lower-case) records exactly what ``headers_arrived`` records from the
library's own ``items()``: the same kept headers in the same order, the same declared length.
Random header sets: repeated names in either case, wire headers, odd and non-ASCII names,
content-lengths that are not numbers, every encoding the library may read them in.
"""

from __future__ import annotations

import random
from typing import Any

import httpx
import httpx2
import pytest

from promptvcr.cassettes.models import Response
from promptvcr.interceptors._compat import HEADERS_ENCODING, HEADERS_LINES
from promptvcr.interceptors._httpx_family import decoded_items
from promptvcr.interceptors._httpx_record import ASCII_SAFE, received_headers
from promptvcr.interceptors.recording import Recording

NAMES = [
    b"Content-Type",
    b"content-length",
    b"Content-Length",
    b"Content-Encoding",
    b"Transfer-Encoding",
    b"Connection",
    b"X-A",
    b"x-a",
    b"Set-Cookie",
    "X-\u00c4rger".encode("latin-1"),
    "X-\u00c4rger".encode(),
]
VALUES = [
    b"12",
    b" 7 ",
    b"x",
    b"-1",
    b"gzip",
    b"a, b",
    "caf\u00e9".encode(),
    "caf\u00e9".encode("latin-1"),
    b"",
]


class _Kept:
    """The recorder: keeps the response handed over."""

    def __init__(self) -> None:
        self.response: Response | None = None

    def __call__(self, response: Response) -> None:
        self.response = response

    def started(self) -> None:
        pass


def _recorded(fill: Any) -> tuple[dict[str, str], bool]:
    kept = _Kept()
    recording = Recording(kept)
    fill(recording)
    reads_rest = recording.reads_rest()  # decided by the declared length
    recording.complete()
    recording.hand_over()
    assert kept.response is not None
    return kept.response.headers, reads_rest


@pytest.mark.parametrize("module", [httpx2, httpx], ids=["httpx2", "httpx"])
def test_headers_decoded_records_what_headers_arrived_records(module: Any) -> None:
    chosen = random.Random(22)
    compared = 0
    for _ in range(1500):
        lines = [(chosen.choice(NAMES), chosen.choice(VALUES)) for _ in range(chosen.randint(0, 7))]
        headers = module.Headers(lines, encoding=chosen.choice([None, "utf-8", "iso-8859-1", "utf-16-le"]))
        try:
            items = list(headers.items())
            decoded = decoded_items(headers, getattr(headers, HEADERS_LINES))
        except UnicodeDecodeError:
            continue
        plain = _recorded(lambda recording, items=items: recording.headers_arrived(200, items))
        fast = _recorded(lambda recording, decoded=decoded: recording.headers_decoded(200, decoded))
        assert fast == plain, lines
        assert list(fast[0]) == list(plain[0]), lines  # the same order too
        compared += 1
    assert compared > 1000


@pytest.mark.parametrize("module", [httpx2, httpx], ids=["httpx2", "httpx"])
def test_headers_read_in_one_pass_are_what_the_library_decodes(module: Any) -> None:
    """``received_headers`` (a recorded response's lines in one pass) keeps what ``decoded_items``
    then ``headers_decoded`` keep: the same headers in the same order, the same declared length
    (repeated content-lengths joined as the library joins them) and the same content-encoding
    verdict; it declines (``None``) only what the library must decode itself."""
    chosen = random.Random(23)
    compared = 0
    for _ in range(1500):
        lines = [(chosen.choice(NAMES), chosen.choice(VALUES)) for _ in range(chosen.randint(0, 7))]
        headers = module.Headers(lines, encoding=chosen.choice([None, "utf-8", "iso-8859-1", "utf-16-le"]))
        kept_lines = getattr(headers, HEADERS_LINES)
        try:
            decoded = decoded_items(headers, kept_lines)
        except UnicodeDecodeError:
            continue
        one_pass = received_headers(headers, kept_lines)
        if one_pass is None:
            ascii_lines = all(part.isascii() for line in kept_lines for part in line)
            assert getattr(headers, HEADERS_ENCODING) not in ASCII_SAFE or not ascii_lines, lines
            continue
        kept, length, encoded = one_pass
        plain = _recorded(lambda recording, decoded=decoded: recording.headers_decoded(200, decoded))
        fast = _recorded(
            lambda recording, kept=kept, length=length: recording.headers_kept(200, kept, length)
        )
        assert fast == plain, lines
        assert list(fast[0]) == list(plain[0]), lines
        assert encoded == ("content-encoding" in decoded), lines
        compared += 1
    assert compared > 300
