"""What the application gets of a response while it is recorded: the response it would get
without a cassette, header lines included (names as the server wrote them, repeated names
apart, non-ASCII values, the content-encoding and length of an encoded body). The httpx-family
interceptors hand on the library's own response and read its lines rather than decode and
encode them again (issue 22), which a UTF-8 value could not survive.
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import httpx
import httpx2

import promptvcr
from promptvcr.interceptors._compat import HEADERS_LINES
from promptvcr.interceptors._httpx_family import decoded_items

DISPOSITION = 'attachment; filename="r\u00e9sum\u00e9.pdf"'
BODY = b'{"ok": true}'


def answer(request: httpx2.Request) -> httpx2.Response:
    lines = [
        (b"Content-Type", b"application/json"),
        (b"Content-Disposition", DISPOSITION.encode("utf-8")),
        (b"X-Trace", b"first"),
        (b"x-trace", b"second"),
    ]
    if request.url.path == "/gzip":
        return httpx2.Response(
            200, headers=[*lines, (b"Content-Encoding", b"gzip")], content=gzip.compress(BODY)
        )
    return httpx2.Response(200, headers=lines, content=BODY)


def test_a_recorded_response_has_the_header_lines_the_application_gets_without_a_cassette(
    tmp_path: Path,
) -> None:
    client = httpx2.Client(transport=httpx2.MockTransport(answer))
    bare = client.get("http://provider.test/plain")
    with promptvcr.use_cassette(tmp_path / "c.yaml", record_mode="record") as cassette:
        recorded = client.get("http://provider.test/plain")
    assert recorded.headers.raw == bare.headers.raw  # content-length holds: the body is not encoded
    assert recorded.headers.get_list("x-trace") == ["first", "second"]
    assert recorded.content == BODY
    (kept,) = cassette.interactions
    assert kept.response.headers["content-disposition"] == DISPOSITION
    assert kept.response.headers["x-trace"] == "first, second"  # as the library's items() joins them
    assert "r\u00e9sum\u00e9.pdf" in (tmp_path / "c.yaml").read_text(encoding="utf-8")


def test_a_recorded_encoded_response_reaches_the_application_as_without_a_cassette(
    tmp_path: Path,
) -> None:
    client = httpx2.Client(transport=httpx2.MockTransport(answer))
    bare = client.get("http://provider.test/gzip")
    with promptvcr.use_cassette(tmp_path / "c.yaml", record_mode="record") as cassette:
        recorded = client.get("http://provider.test/gzip")
    assert recorded.headers.raw == bare.headers.raw  # the encoding and the encoded length too
    assert recorded.content == bare.content == BODY
    (kept,) = cassette.interactions
    assert kept.response.content == BODY  # the cassette keeps the body decoded, without its encoding
    assert "content-encoding" not in kept.response.headers


def test_header_lines_decode_as_the_library_s_items_do() -> None:
    """:func:`decoded_items` (what a recording and a kept request read) against httpx2's and
    httpx's own ``items()``: repeated names in either case, UTF-8, Latin-1, empty values, an
    encoding the library picked or was told (ASCII lines are shared only where they read alike)."""
    names = [b"X-A", b"x-a", b"Content-Type", b"set-cookie", b"Set-Cookie"]
    values = [b"a", b"b c", "caf\u00e9".encode(), "caf\u00e9".encode("latin-1"), b"x, y", b""]
    chosen = random.Random(22)
    for module in (httpx2, httpx):
        for _ in range(500):
            lines = [(chosen.choice(names), chosen.choice(values)) for _ in range(chosen.randint(0, 6))]
            headers = module.Headers(
                lines, encoding=chosen.choice([None, "utf-8", "iso-8859-1", "utf-16-le"])
            )
            try:
                expected: dict[str, str] | type[Exception] = dict(headers.items())
            except UnicodeDecodeError:
                expected = UnicodeDecodeError
            try:
                got: dict[str, str] | type[Exception] = decoded_items(
                    headers, getattr(headers, HEADERS_LINES)
                )
            except UnicodeDecodeError:
                got = UnicodeDecodeError
            assert got == expected, lines
