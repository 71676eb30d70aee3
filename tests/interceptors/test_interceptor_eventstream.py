"""AWS event-stream bodies: stored as decoded frames, replayed byte for byte."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
import yaml

from promptvcr import CassetteFormatError
from promptvcr.cassettes.bodies import decode_body, encode_body
from promptvcr.cassettes.eventstream import CONTENT_TYPE, decode_frames, encode_frame
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.files import fileformat

CORPUS = Path(__file__).parents[1] / "data" / "bedrock_corpus"


def _recorded_stream() -> bytes:
    """Real Bedrock converse-stream bytes, as AWS sent them (pydantic-ai's corpus, MIT)."""
    document = yaml.safe_load((CORPUS / "original" / "test_bedrock_model_stream.yaml").read_text())
    body: bytes = document["interactions"][0]["response"]["body"]["string"]
    return body


def test_real_bedrock_stream_decodes_to_readable_frames_and_reencodes_byte_exact() -> None:
    raw = _recorded_stream()
    frames = decode_frames(raw)
    assert frames is not None
    assert [f["headers"][":event-type"] for f in frames][:2] == ["messageStart", "contentBlockDelta"]
    assert frames[1]["json"]["delta"]["text"] == "The"
    assert b"".join(encode_frame(frame) for frame in frames) == raw


def test_stored_form_round_trips_through_the_cassette_file(tmp_path: Path) -> None:
    raw = _recorded_stream()
    interaction = Interaction(
        Request("POST", "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream"),
        Response(200, {"content-type": CONTENT_TYPE}, [raw]),
    )
    path = tmp_path / "c.yaml"
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(interaction)], path))
    text = path.read_text()
    assert "frames:" in text and "base64" not in text and "messageStart" in text
    (loaded,) = fileformat.loads(text, path)
    assert b"".join(loaded.response.chunks) == raw
    assert len(loaded.response.chunks) == len(decode_frames(raw) or [])  # one chunk per frame


def test_every_header_type_round_trips() -> None:
    frame = {
        "headers": {
            "t": True,
            "f": False,
            "b": {"int8": -3},
            "s": {"int16": 300},
            "i": {"int32": -70000},
            "l": {"int64": 2**40},
            "raw": {"bytes": "AAEC"},
            "str": "héllo",
            "when": {"timestamp": 1_700_000_000_000},
            "id": {"uuid": "12345678-1234-5678-1234-567812345678"},
        },
        "text": "not json at all",
    }
    encoded = encode_frame(frame)
    assert decode_frames(encoded) == [frame]


def test_payload_that_json_would_rewrite_is_kept_as_text() -> None:
    spaced = encode_frame({"headers": {}, "text": '{"a": 1}'})
    (frame,) = decode_frames(spaced) or []
    assert frame == {"headers": {}, "text": '{"a": 1}'}
    assert encode_frame(frame) == spaced


@pytest.mark.parametrize("damage", ["crc", "truncated", "trailing"])
def test_damaged_streams_are_kept_raw_not_decoded(damage: str) -> None:
    raw = _recorded_stream()
    if damage == "crc":
        raw = raw[:-1] + bytes([raw[-1] ^ 1])
    elif damage == "truncated":
        raw = raw[:-10]
    else:
        raw += b"\x00\x01"
    assert decode_frames(raw) is None
    stored = encode_body(raw, CONTENT_TYPE)
    assert list(stored) == ["base64"]
    assert b"".join(decode_body(stored)) == raw


def test_a_frame_written_by_hand_gets_correct_checksums() -> None:
    (chunk,) = decode_body({"frames": [{"headers": {":event-type": "x"}, "json": {"a": 1}}]})
    total, _, prelude_crc = struct.unpack(">III", chunk[:12])
    assert total == len(chunk) and prelude_crc == zlib.crc32(chunk[:8])
    assert struct.unpack(">I", chunk[-4:])[0] == zlib.crc32(chunk[:-4])


def test_a_bad_stored_frame_is_a_clear_format_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "interactions:\n- request: {method: POST, url: 'http://x/y'}\n"
        "  response:\n    status: 200\n    frames:\n    - headers: {n: {int99: 1}}\nversion: 1\n"
    )
    with pytest.raises(CassetteFormatError, match=r"interactions\[0\].response.frames"):
        fileformat.loads(path.read_text(), path)
