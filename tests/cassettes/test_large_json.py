"""A large JSON body as its document with stand-ins (issue 54): the streamed reader that
``promptvcr serve`` uses gives exactly the document the whole parse gives, or gives up.

The properties run with a long string of 8 bytes (the threshold is a module constant read at
each call), so that short generated documents hold many long strings, escapes cut by the
slicing, and keys long enough to stand in too. One test then keys real 5 MB requests.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from hypothesis import example, given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr.cassettes import largejson
from promptvcr.cassettes.largebody import LARGE_BODY_BYTES
from promptvcr.cassettes.largejson import STAND_IN, leaves_replaced, skeleton, stand_in, stood_in
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.files import fileformat
from promptvcr.files.redaction import redact
from promptvcr.matching.key import request_key


@contextlib.contextmanager
def _long_string(size: int) -> Iterator[None]:
    kept = largejson.LONG_STRING
    largejson.LONG_STRING = size
    try:
        yield
    finally:
        largejson.LONG_STRING = kept


_TEXT = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["\U0001f600" * 5, 'quote " and \\ back', "tab\tnew\nline\x01", "é" * 9, "\u2028" * 3, "x" * 30]
)
_DOCUMENTS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


def _sliced(body: bytes, cuts: list[int]) -> list[bytes]:
    ends = sorted({min(max(cut, 1), len(body) - 1) for cut in cuts} if len(body) > 1 else set())
    return [body[start:end] for start, end in zip([0, *ends], [*ends, len(body)], strict=True)]


@given(
    _DOCUMENTS,
    st.booleans(),
    st.sampled_from([None, 2]),
    st.lists(st.integers(min_value=1, max_value=400), max_size=8),
)
@example({"k" * 12: ["\U0001f600\U0001f600", "é" * 5]}, True, None, [10, 11, 12, 13, 14])
@property_settings(300)
def test_the_streamed_reader_gives_the_document_the_whole_parse_gives(
    document: Any, ascii_only: bool, indent: int | None, cuts: list[int]
) -> None:
    body = json.dumps(document, ensure_ascii=ascii_only, indent=indent).encode("utf-8")
    with _long_string(8):
        strings: dict[str, bytes] = {}
        expected = stood_in(json.loads(body), strings)
        made = skeleton(_sliced(body, cuts))
    assert made is not None  # valid UTF-8 JSON without a lone surrogate: always read
    text, spooled = made
    assert json.loads(text) == expected
    assert {name: b"".join(chunks) for name, chunks in spooled.items()} == strings
    for name, data in strings.items():  # each stand-in names its string's length and digest
        found = STAND_IN.fullmatch(name)
        assert found is not None
        assert (int(found.group(1)), found.group(2)) == (len(data), hashlib.sha256(data).hexdigest())
    if not strings:  # nothing long: the text is the body, byte for byte
        assert text == body


@given(_DOCUMENTS, st.data())
@property_settings(300)
def test_the_streamed_reader_vouches_only_for_json(document: Any, data: st.DataObject) -> None:
    """A body broken anywhere (a byte changed, cut, a lone surrogate): the reader gives up, or
    its document is the one the whole parse of that body gives."""
    body = bytearray(json.dumps(document, ensure_ascii=True).encode("utf-8"))
    if body:
        where = data.draw(st.integers(min_value=0, max_value=len(body) - 1))
        change = data.draw(st.sampled_from(["byte", "cut", "control", "high surrogate", "not utf-8"]))
        if change == "byte":
            body[where] = data.draw(st.sampled_from(b'"\\{}[],:u0aZ '))
        elif change == "cut":
            del body[where:]
        elif change == "control":
            body[where:where] = b"\x01"
        elif change == "high surrogate":
            body[where:where] = b"\\ud83d"
        else:
            body[where:where] = b"\xc3"
    cuts = data.draw(st.lists(st.integers(min_value=1, max_value=400), max_size=6))
    with _long_string(4):
        made = skeleton(_sliced(bytes(body), cuts))
        if made is None:
            return
        try:
            document_read = json.loads(made[0])
        except ValueError:
            return  # not JSON outside the strings: the caller parses it and reads the body whole
        whole = json.loads(bytes(body).decode("utf-8"))
        assert document_read == stood_in(whole)


def test_the_reader_gives_up_on_what_it_cannot_vouch_for() -> None:
    with _long_string(4):
        assert skeleton([b'["a lone \\ud83d half of a pair"]']) is None
        assert skeleton([b'["a control \x01 character"]']) is None
        assert skeleton([b'["not utf-8 \xc3 here"]']) is None
        assert skeleton([b'["cut inside a string']) is None
        assert skeleton([b'["an escape cut at the end \\u00']) is None
        made = skeleton([b'["a pair cut by the slices \\ud83d', b'\\ude00 joined"]'])
    assert made is not None and json.loads(made[0]) == [
        stood_in_long("a pair cut by the slices \U0001f600 joined")
    ]


def stood_in_long(text: str) -> str:
    data = text.encode("utf-8")
    return stand_in(len(data), hashlib.sha256(data).hexdigest())


def test_leaves_replaced_copies_and_never_recurses() -> None:
    deep: Any = "leaf"
    for _ in range(10_000):  # deeper than the interpreter's recursion limit
        deep = [deep]
    replaced = leaves_replaced(deep, lambda value: value.upper() if isinstance(value, str) else value)
    for _ in range(10_000):
        replaced = replaced[0]
        deep = deep[0]
    assert (replaced, deep) == ("LEAF", "leaf")
    original = {"a": [1, "x"], "b": {"c": "y"}}
    assert leaves_replaced(original, lambda v: v * 2) == {"a": [2, "xx"], "b": {"c": "yy"}}
    assert original == {"a": [1, "x"], "b": {"c": "y"}}


def _chat(picture: str, question: str = "What is in this picture?") -> bytes:
    message = {"role": "user", "content": [{"type": "text", "text": question}]}
    message["content"].append({"type": "image_url", "image_url": {"url": picture}})  # type: ignore[attr-defined]
    return json.dumps({"model": "gpt-4o", "messages": [message]}).encode()


def test_a_large_request_has_one_key_whole_or_as_its_document() -> None:
    """The key of a request over the threshold, sent whole (in-process) or as its document with
    stand-ins (``serve``), is the same; a change inside a long string changes it, a change in
    the rest of the document too."""
    picture = "data:image/png;base64," + "QUJD" * (LARGE_BODY_BYTES // 3)
    body = _chat(picture)
    assert len(body) > LARGE_BODY_BYTES
    url = "https://api.openai.com/v1/chat/completions"
    headers = {"content-type": "application/json"}
    made = skeleton([body[start : start + 65_536] for start in range(0, len(body), 65_536)])
    assert made is not None and len(made[0]) < 1024 and len(made[1]) == 1
    whole = request_key(Request("POST", url, headers, body))
    assert request_key(Request("POST", url, headers, made[0], made[1])) == whole
    changed = bytearray(body)
    changed[random.Random(54).randrange(len(body) // 2, len(body) - 10)] ^= 1  # inside the picture
    assert request_key(Request("POST", url, headers, bytes(changed))) != whole
    assert request_key(Request("POST", url, headers, _chat(picture, "What is in this photo?"))) != whole


def test_a_long_string_in_a_credential_field_is_never_written(tmp_path: Path) -> None:
    """A field removed by name (``client_secret``) takes its long string with it: no body file
    holds it; the other long string is written under the stand-in the cassette holds."""
    secret = "s" * (LARGE_BODY_BYTES // 2)
    filler = "f" * (LARGE_BODY_BYTES // 2 + 10)
    body = json.dumps({"client_secret": secret, "input": filler}).encode()
    request = Request("POST", "https://api.example.com/v1/embed", {"content-type": "application/json"}, body)
    response = Response(200, {"content-type": "application/json"}, [b'{"ok": true}'])
    redacted = redact([Interaction(request, response)])
    path = tmp_path / "c.yaml"
    path.write_text("".join(fileformat.dump_pieces(redacted.data, path)), encoding="utf-8")
    stored = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"][0]["request"]["json"]
    assert stored["client_secret"].startswith("<redacted:")
    found = STAND_IN.fullmatch(stored["input"])
    assert found is not None
    files = list((tmp_path / "bodies").iterdir())
    assert [file.name for file in files] == [f"sha256-{found.group(2)}"]
    assert files[0].read_bytes() == filler.encode()
