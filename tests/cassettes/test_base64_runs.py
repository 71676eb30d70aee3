"""Base64 that is only part of something: inside a longer text, in a stream's pieces, in a binary body.

Issue 41 decoded a string that is base64 as a whole; a key in base64 inside a longer text (a
``data:`` URL, a blob in a markdown answer, ``Basic ...`` quoted in an error, a URL's path
segment), split across a stream's events, or in a string field of a binary message was written
to the cassette as it came, and ``promptvcr scan`` did not see it either.

Each case records a real client's call (the openai SDK, httpx) against a loopback server, then
checks: the key is in no decoding of the cassette (an oracle written apart from promptvcr's
search: every run at every alignment, both alphabets, layers), ``promptvcr scan`` finds nothing,
the rest of the answer is as the server sent it, the recording replays with the server stopped.
The same shapes written into a cassette by hand are found by ``promptvcr scan`` (old cassettes).
What is no credential (pictures, hashes, ids, base64 of ordinary text) stays byte for byte.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import json
import random
import re
import string
import struct
import threading
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st
from leak_calls import JSON, call_openai, chat, chat_stream
from leak_checks import all_decodings, assert_in_no_decoding, scan
from leak_server import Answer, LeakServer
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect
from websockets.sync.server import ServerConnection, serve

import promptvcr
from promptvcr.credentials.decode import holds_base64
from promptvcr.credentials.reencode import masked_within
from promptvcr.files.redaction import SecretMaskedWarning

_rng = random.Random(4242)
_ALNUM = string.ascii_letters + string.digits
#: A realistic fake OpenAI key (works nowhere).
KEY = "sk-proj-" + "".join(_rng.choice(_ALNUM) for _ in range(48))
MASKED = "<redacted:openai-key>"


def _b64(raw: str | bytes, *, urlsafe: bool = False, padded: bool = True) -> str:
    data = raw.encode() if isinstance(raw, str) else raw
    encoded = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data).decode()
    return encoded if padded else encoded.rstrip("=")


def _unb64(text: str, *, urlsafe: bool = False) -> bytes:
    return (base64.urlsafe_b64decode if urlsafe else base64.b64decode)(text + "=" * (-len(text) % 4))


def _between(text: str, before: str, after: str) -> str:
    return text.split(before, 1)[1].split(after, 1)[0]


@dataclass(frozen=True)
class Case:
    name: str
    #: The answer's text as the server sends it.
    content: str
    #: The stored text decoded back to the payload that held the key.
    decode: Callable[[str], str]
    #: That payload as it must be: the key, and only the key, replaced.
    expected: str


_NOTE = json.dumps({"note": f"use {KEY} for the eval", "models": ["gpt-4o", "o3"]})
_ENV = f"# staging\nOPENAI_API_KEY={KEY}\nMODEL=gpt-4o\n"
_PATH_TEXT = f"??> shared by ada: {KEY} (expires in 1h)"
_URLSAFE_PATH = _b64(_PATH_TEXT, urlsafe=True, padded=False)
assert "-" in _URLSAFE_PATH or "_" in _URLSAFE_PATH  # the run mixes both alphabets with its path

TEXT_CASES = [
    Case(
        "a data URL in a markdown answer",
        f"Here is the config:\n\n[config](data:application/json;base64,{_b64(_NOTE)}) - open it.",
        lambda stored: _unb64(_between(stored, "base64,", ")")).decode(),
        _NOTE.replace(KEY, MASKED),
    ),
    Case(
        "a base64 blob in a markdown code block",
        f"Your file, encoded:\n```\n{_b64(_ENV)}\n```\nDecode it with `base64 -d`.",
        lambda stored: _unb64(_between(stored, "```\n", "\n```")).decode(),
        _ENV.replace(KEY, MASKED),
    ),
    Case(
        "Authorization: Basic quoted in prose",
        f'The proxy logged "Authorization: Basic {_b64("ada:" + KEY)}" and refused it.',
        lambda stored: _unb64(_between(stored, "Basic ", '"')).decode(),
        f"ada:{MASKED}",
    ),
    Case(
        "a signed session token's payload segment (URL-safe, unpadded)",
        f"session={_b64(_NOTE, urlsafe=True, padded=False)}.Q2hlY2tzdW0xMjM0NTY3OA; Path=/",
        lambda stored: _unb64(_between(stored, "session=", "."), urlsafe=True).decode(),
        _NOTE.replace(KEY, MASKED),
    ),
    Case(
        "a URL path segment after /v1/share/ (two alphabets in one run)",
        f"Download: https://files.test/v1/share/{_URLSAFE_PATH} (one use)",
        lambda stored: _unb64(_between(stored, "/v1/share/", " "), urlsafe=True).decode(),
        _PATH_TEXT.replace(KEY, MASKED),
    ),
    Case(
        "base64 wrapped at 76 characters a line, the key cut by a line break",
        f"Your .env, encoded:\n{base64.encodebytes(_ENV.encode()).decode()}That's all.",
        lambda stored: _unb64("".join(_between(stored, "encoded:\n", "That's").split())).decode(),
        _ENV.replace(KEY, MASKED),
    ),
    Case(
        "gzip in base64 inside a sentence",
        f"Compressed: {_b64(gzip.compress(_ENV.encode(), mtime=0))} (gzip).",
        lambda stored: gzip.decompress(_unb64(_between(stored, "Compressed: ", " "))).decode(),
        _ENV.replace(KEY, MASKED),
    ),
]


def _stored_message(path: Path) -> str:
    response = yaml.safe_load(path.read_text())["interactions"][0]["response"]
    content: str = response["json"]["choices"][0]["message"]["content"]
    return content


def _record(
    path: Path, reply: Callable[[Any], Answer], call: Callable[[str], Any]
) -> tuple[Any, str, list[Any]]:
    """``call(url)`` recorded against a server answering ``reply``: (what the client got, the
    server's address, the warnings)."""
    with LeakServer() as server:
        server.reply = reply
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with promptvcr.use_cassette(path, record_mode="record"):
                live = call(server.url)
        url = server.url
    return live, url, list(caught)


def _check_clean(path: Path) -> None:
    assert_in_no_decoding(path, KEY)
    scanned = scan(path)
    assert scanned.returncode == 0, scanned.stdout + scanned.stderr


@pytest.mark.parametrize("case", TEXT_CASES, ids=[c.name for c in TEXT_CASES])
def test_base64_inside_a_longer_answer_is_masked(case: Case, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    live, url, caught = _record(path, lambda request: chat(case.content), call_openai)
    assert live == case.content
    assert any(issubclass(w.category, SecretMaskedWarning) for w in caught), "the mask is reported"
    _check_clean(path)
    stored = _stored_message(path)
    assert case.decode(stored) == case.expected  # the rest of the payload is intact
    assert stored.split(case.content[:8], 1)[0] == ""  # the prose around it too
    with promptvcr.use_cassette(path, record_mode="none"):  # the server is gone
        assert call_openai(url) == stored


def _pieces(text: str, seed: int) -> list[str]:
    """``text`` cut as a model streams it: a few characters per delta."""
    rng, pieces, at = random.Random(seed), [], 0
    while at < len(text):
        size = rng.randint(3, 9)
        pieces.append(text[at : at + size])
        at += size
    return pieces


STREAM_CASES = [
    Case(
        "the whole answer is base64, a few characters per event",
        _b64(_ENV),
        lambda stored: _unb64(stored).decode(),
        _ENV.replace(KEY, MASKED),
    ),
    Case(
        "a base64 blob in a markdown answer, streamed",
        f"Here it is:\n```\n{_b64(_NOTE)}\n```\nAnything else?",
        lambda stored: _unb64(_between(stored, "```\n", "\n```")).decode(),
        _NOTE.replace(KEY, MASKED),
    ),
    Case(
        "a data URL of gzip, streamed",
        f"![x](data:application/gzip;base64,{_b64(gzip.compress(_ENV.encode(), mtime=0))})",
        lambda stored: gzip.decompress(_unb64(_between(stored, "base64,", ")"))).decode(),
        _ENV.replace(KEY, MASKED),
    ),
]


def _stored_deltas(path: Path) -> list[str]:
    events = yaml.safe_load(path.read_text())["interactions"][0]["response"]["events"]
    return [e["data"]["choices"][0]["delta"]["content"] for e in events if isinstance(e["data"], dict)]


@pytest.mark.parametrize("case", STREAM_CASES, ids=[c.name for c in STREAM_CASES])
def test_base64_sent_in_pieces_by_a_stream_is_masked_in_its_pieces(case: Case, tmp_path: Path) -> None:
    """The key appears only once the deltas are joined and decoded: the pieces it spans are
    rewritten so that they join to the masked payload; every piece outside them is kept."""
    path = tmp_path / "c.yaml"
    sent = _pieces(case.content, seed=len(case.name))
    live, url, caught = _record(
        path, lambda request: chat_stream(sent), lambda url: call_openai(url, stream=True)
    )
    assert live == case.content
    assert any(issubclass(w.category, SecretMaskedWarning) for w in caught), "the mask is reported"
    _check_clean(path)
    stored = _stored_deltas(path)
    assert len(stored) == len(sent)  # one event per event sent
    joined = "".join(stored)
    assert case.decode(joined) == case.expected
    blob = max(re.finditer(r"[A-Za-z0-9+/=]{24,}", case.content), key=lambda m: len(m.group()))
    at, outside = 0, []
    for old, new in zip(sent, stored, strict=True):
        if at + len(old) <= blob.start() or at >= blob.end():
            outside.append(old == new)
        at += len(old)
    assert all(outside), "a piece outside the base64 was changed"
    assert stored != sent
    with promptvcr.use_cassette(path, record_mode="none"):
        assert call_openai(url, stream=True) == joined


def test_base64_a_websocket_session_sends_in_pieces_is_masked_in_its_frames(tmp_path: Path) -> None:
    """The same through a websocket (a realtime API's text deltas): a session's frames are a
    stream too, searched and masked joined."""
    content = f"Here it is:\n```\n{_b64(_NOTE)}\n```"
    sent = _pieces(content, seed=11)

    def handler(ws: ServerConnection) -> None:
        ws.recv()
        for piece in sent:
            ws.send(json.dumps({"type": "response.output_text.delta", "delta": piece}))
        ws.send(json.dumps({"type": "response.done"}))
        with contextlib.suppress(ConnectionClosed):
            ws.recv()

    def session(url: str) -> str:
        with connect(f"{url}/v1/realtime?model=gpt-realtime") as ws:
            ws.send(json.dumps({"type": "response.create"}))
            deltas = []
            while (event := json.loads(ws.recv()))["type"] != "response.done":
                deltas.append(event["delta"])
        return "".join(deltas)

    path = tmp_path / "ws.yaml"
    server = serve(handler, "127.0.0.1", 0, compression=None)
    url = f"ws://127.0.0.1:{server.socket.getsockname()[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with promptvcr.use_cassette(path, record_mode="record"):
                assert session(url) == content
    finally:
        server.shutdown()
        thread.join(5)
    assert any(issubclass(w.category, SecretMaskedWarning) for w in caught), "the mask is reported"
    _check_clean(path)
    frames = yaml.safe_load(path.read_text())["interactions"][0]["response"]["websocket"]["frames"]
    stored = "".join(f["json"].get("delta", "") for f in frames if f["from"] == "server" and "json" in f)
    assert _unb64(_between(stored, "```\n", "\n```")).decode() == _NOTE.replace(KEY, MASKED)
    with promptvcr.use_cassette(path, record_mode="none"):  # the server is gone
        assert session(url) == stored


# A binary body: a protobuf message written by hand (the wire format: tag, length, bytes) -------


def _field(number: int, value: bytes) -> bytes:
    assert len(value) < 128
    return bytes([number << 3 | 2, len(value)]) + value


def _varint(number: int, value: int) -> bytes:
    return bytes([number << 3, value])


def _fields(message: bytes) -> dict[int, bytes | int]:
    """The fields of a flat protobuf message (short strings and small varints only)."""
    out: dict[int, bytes | int] = {}
    at = 0
    while at < len(message):
        tag, at = message[at], at + 1
        if tag & 7 == 0:
            out[tag >> 3], at = message[at], at + 1
        else:
            length = message[at]
            out[tag >> 3], at = message[at + 1 : at + 1 + length], at + 1 + length
    return out


_REPORT = f"key {KEY}"  # 60 bytes: 80 characters of base64, and 80 is "P"
#: File name, a base64 field whose length byte is a letter (so the run starts one early), a
#: count, and field 10 after it (tag 0x52: "R", so the run ends one late).
PROTOBUF = _field(1, b"report.txt") + _field(2, _b64(_REPORT).encode()) + _field(10, b"Rz") + _varint(3, 7)


def test_base64_in_a_binary_body_is_masked_keeping_its_length(tmp_path: Path) -> None:
    """A protobuf answer through httpx: the key is masked in the field's base64, padded to the
    key's length, so that every length byte of the message still holds and the client parses it."""
    length_at = 2 + len(b"report.txt") + 1  # the premise above: letters on either side of the run
    assert chr(PROTOBUF[length_at]) == "P" and chr(PROTOBUF[length_at + 1 + PROTOBUF[length_at]]) == "R"
    path = tmp_path / "c.yaml"
    reply = Answer(200, {"content-type": "application/x-protobuf"}, (PROTOBUF,))
    live, url, caught = _record(
        path, lambda request: reply, lambda url: httpx.get(f"{url}/v1/report").content
    )
    assert live == PROTOBUF
    assert any(issubclass(w.category, SecretMaskedWarning) for w in caught)
    _check_clean(path)
    with promptvcr.use_cassette(path, record_mode="none"):
        replayed = httpx.get(f"{url}/v1/report").content
    assert len(replayed) == len(PROTOBUF)
    fields, original = _fields(replayed), _fields(PROTOBUF)
    assert {n: v for n, v in fields.items() if n != 2} == {n: v for n, v in original.items() if n != 2}
    field = fields[2]
    assert isinstance(field, bytes)
    assert _unb64(field.decode()).decode() == _REPORT.replace(KEY, MASKED.ljust(len(KEY)))


# What is no credential is kept byte for byte --------------------------------------------------


def _png(width: int = 16) -> bytes:
    rows = b"".join(b"\x00" + random.Random(row).randbytes(width * 3) for row in range(width))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, width, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


ORDINARY = (
    f"![chart](data:image/png;base64,{_b64(_png())})\n"
    f"sha256: {hashlib.sha256(b'report').hexdigest()}\n"
    f"md5 (base64): {_b64(hashlib.md5(b'report').digest())}\n"
    f"id: chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT, file-6F2ksmvXxt4VdoqmHRw6kL, msg_01XFDUDYJgAACzvnptvVoYEL\n"
    f"config (base64): {_b64('region=eu-west-1; retries=3; model=gpt-4o; temperature=0.2')}\n"
    f"gzip: {_b64(gzip.compress(b'hello from a compressed note, nothing secret here', mtime=0))}\n"
    "path: /v1/organizations/org-Xk3mQ9vB2nR7tL5wZ8yP/projects/proj_abcDEF123ghiJKL456\n"
)


def test_ordinary_base64_hashes_and_ids_are_kept_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    live, url, caught = _record(path, lambda request: chat(ORDINARY), call_openai)
    assert live == ORDINARY
    assert not any(issubclass(w.category, SecretMaskedWarning) for w in caught)
    assert _stored_message(path) == ORDINARY
    with promptvcr.use_cassette(path, record_mode="none"):
        assert call_openai(url) == ORDINARY


def test_an_ordinary_stream_and_binary_body_are_kept_byte_for_byte(tmp_path: Path) -> None:
    sent = _pieces(ORDINARY, seed=7)
    path = tmp_path / "s.yaml"
    live, _, caught = _record(
        path, lambda request: chat_stream(sent), lambda url: call_openai(url, stream=True)
    )
    assert live == ORDINARY and _stored_deltas(path) == sent
    assert not any(issubclass(w.category, SecretMaskedWarning) for w in caught)
    message = _field(1, b"chart.png") + _field(
        2, _b64("region=eu-west-1; retries=3; nothing secret").encode()
    )
    body = message + _png()
    path = tmp_path / "b.yaml"
    reply = Answer(200, {"content-type": "application/octet-stream"}, (body,))
    live, url, caught = _record(path, lambda request: reply, lambda url: httpx.get(f"{url}/v1/blob").content)
    assert live == body
    assert not any(issubclass(w.category, SecretMaskedWarning) for w in caught)
    with promptvcr.use_cassette(path, record_mode="none"):
        assert httpx.get(f"{url}/v1/blob").content == body


# A request is what replay matches on: there a key in base64 is refused, as a whole string was ---


def test_a_key_in_base64_inside_a_request_text_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    prompt = f"Summarise this file: data:text/plain;base64,{_b64(_ENV)} please."
    with LeakServer() as server:
        server.reply = lambda request: Answer(200, JSON, (b'{"ok": true}',))
        with pytest.raises(promptvcr.CassetteSecretError) as refused, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with promptvcr.use_cassette(path, record_mode="record"):
                httpx.post(f"{server.url}/v1/jobs", json={"prompt": prompt})
    message = str(refused.value)
    assert str(path) in message and "recorded[0]" in message and "REQUEST" in message
    assert KEY not in message
    assert not path.exists() or KEY not in path.read_text()


# promptvcr scan finds each shape in a cassette written by hand (a leak check for old cassettes) --


def _interaction(response: dict[str, Any]) -> dict[str, Any]:
    return {
        "request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions"},
        "response": response,
    }


def _message(content: str) -> dict[str, Any]:
    return {"status": 200, "json": {"choices": [{"message": {"role": "assistant", "content": content}}]}}


def _events(pieces: list[str]) -> dict[str, Any]:
    events = [{"data": {"choices": [{"delta": {"content": piece}}]}} for piece in pieces]
    return {"status": 200, "events": [*events, {"data": "[DONE]"}]}


HAND_WRITTEN = {
    **{case.name: _message(case.content) for case in TEXT_CASES},
    **{f"{case.name} (stream)": _events(_pieces(case.content, seed=3)) for case in STREAM_CASES},
    "a protobuf body": {"status": 200, "base64": _b64(PROTOBUF)},
    "vcrpy: a data URL in a body string": {
        "status": {"code": 200},
        "body": {"string": chat(TEXT_CASES[0].content).chunks[0].decode()},
    },
}


@pytest.mark.parametrize("name", list(HAND_WRITTEN))
def test_scan_finds_each_shape_in_a_cassette_written_by_hand(name: str, tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "interactions": [_interaction(HAND_WRITTEN[name])]}))
    scanned = scan(path)
    assert scanned.returncode == 1, scanned.stdout
    assert "old.yaml" in scanned.stdout and KEY not in scanned.stdout + scanned.stderr


def test_scan_finds_nothing_in_ordinary_base64(tmp_path: Path) -> None:
    path = tmp_path / "clean.yaml"
    responses = [_message(ORDINARY), _events(_pieces(ORDINARY, seed=5))]
    path.write_text(yaml.safe_dump({"version": 1, "interactions": [_interaction(r) for r in responses]}))
    scanned = scan(path)
    assert scanned.returncode == 0, scanned.stdout


@pytest.mark.parametrize("prose", ["~", "?", ">"])  # URL-safe runs that end in "-", "_", "-"
@pytest.mark.parametrize("after", [b"", b"\x00", b"\xff", b"-"])
def test_a_url_safe_run_ending_in_its_own_dash_or_underscore_is_masked_in_binary(
    prose: str, after: bytes
) -> None:
    """In binary a "-" or "_" at a run's edge may be a stray byte (a length, a tag); when the run
    read without it leaves stray bits, it is the run's own last character, and the key inside is
    masked like in text (a hypothesis example found this one: the recording was refused)."""
    payload = f"{prose} {KEY} {prose}"
    run = _b64(payload, urlsafe=True, padded=False)
    assert run[-1] in "-_"
    body = b"\x08\x01\x12" + run.encode() + after
    out = masked_within(body.decode("latin-1"), lambda text: text.replace(KEY, MASKED), binary=True).encode(
        "latin-1"
    )
    assert len(out) == len(body) and out.endswith(after)
    assert not any(KEY.encode() in decoded for decoded in all_decodings(out))
    assert _unb64(out[3 : 3 + len(run)].decode(), urlsafe=True).decode() == payload.replace(
        KEY, MASKED.ljust(len(KEY))
    )


# The property behind the binary case: whatever bytes surround the run, the key is masked, the
# length kept, and the bytes around it untouched.


@settings(max_examples=150, deadline=None)
@given(
    before=st.binary(max_size=6),
    after=st.binary(max_size=6),
    urlsafe=st.booleans(),
    padded=st.booleans(),
    prose=st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30),
)
@example(before=b"", after=b"-_", urlsafe=False, padded=False, prose="00")  # a standard run, then -_
def test_a_key_in_base64_between_any_bytes_is_masked_keeping_the_length(
    before: bytes, after: bytes, urlsafe: bool, padded: bool, prose: str
) -> None:
    payload = f"{prose} {KEY} {prose}"
    run = _b64(payload, urlsafe=urlsafe, padded=padded).encode()
    body = before + run + after
    masked = masked_within(body.decode("latin-1"), lambda text: text.replace(KEY, MASKED), binary=True)
    out = masked.encode("latin-1")
    assert len(out) == len(body)
    assert not any(KEY.encode() in decoded for decoded in all_decodings(out))
    assert out[: len(before)] == before and out[len(before) + len(run) :] == after
    masked_run = out[len(before) : len(before) + len(run)].decode()
    # Either alphabet: bytes after a run that holds neither ``+/`` nor ``-_`` (``after=b"-_"``)
    # make the whole stretch one base64url run, and the masked key is written in that alphabet.
    either = masked_run.rstrip("=").translate(str.maketrans("-_", "+/"))
    assert _unb64(either).decode() == payload.replace(KEY, MASKED.ljust(len(KEY)))


def test_an_ordinary_answer_stays_on_the_fast_path() -> None:
    """The record path decodes an answer's runs only when one means something: a chat answer's
    ids, hashes and pictures send it down no field-by-field walk; text in base64 does."""
    answer = {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "system_fingerprint": "fp_a7d06e42a7",
        "choices": [{"message": {"content": f"![chart](data:image/png;base64,{_b64(_png())})\nDone."}}],
        "file": "file-6F2ksmvXxt4VdoqmHRw6kL",
        "sha256": hashlib.sha256(b"report").hexdigest(),
        "trace": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    }
    assert not holds_base64(json.dumps(answer, ensure_ascii=False))
    answer["choices"][0]["message"]["content"] += f"\nconfig: {_b64('region=eu-west-1; retries=3')}"
    assert holds_base64(json.dumps(answer, ensure_ascii=False))
