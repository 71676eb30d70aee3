"""Protobuf messages as the JSON a reviewer reads, and back to the exact bytes a client received.

A message is stored as its protobuf JSON form (field names as the ``.proto`` spells them), with
its full type name under ``@type``, so ``show``, ``scan``, a diff and the matching rules read its
fields like any JSON body. Replay rebuilds the bytes from that JSON through the message class
found by the type name in protobuf's default descriptor pool (generated ``_pb2`` modules and
proto-plus classes both register there). When re-serializing the JSON does not give back the
bytes received (unknown fields, a map's order, a float the JSON form rounds), the bytes are kept
beside it as ``@bytes`` (base64), and used only while they still decode to the stored fields:
a value a reviewer edited replays edited. Bytes that hold a credential are never kept: the
fields, where redaction replaces it with its placeholder, are then all that is stored.
"""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.message import DecodeError, Message

from ...credentials.keyshapes import secret_values
from ...credentials.masking import run_credentials

__all__ = ["BYTES_KEY", "TYPE_KEY", "as_message", "message_bytes", "message_doc"]

TYPE_KEY = "@type"
BYTES_KEY = "@bytes"


def as_message(value: object) -> Message | None:
    """The protobuf message behind ``value``: a generated message as it is, a proto-plus one
    unwrapped (its class's ``pb``); ``None`` for anything else."""
    if isinstance(value, Message):
        return value
    unwrap = getattr(type(value), "pb", None)
    if callable(unwrap):
        try:
            found = unwrap(value)
        except TypeError:
            return None
        return found if isinstance(found, Message) else None
    return None


def _fields(message: Message) -> dict[str, Any]:
    fields: dict[str, Any] = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return fields


#: Request messages already read, by type and bytes: a replayed test sends the same requests
#: each run, and protobuf's JSON conversion is pure Python (see :func:`request_doc`).
_REQUESTS: dict[tuple[str, bytes], dict[str, Any]] = {}
_REQUESTS_KEPT, _REQUEST_BYTES_KEPT = 2048, 64 * 1024


def request_doc(message: Message) -> dict[str, Any]:
    """A request message as its cassette key reads it (:func:`message_doc`), remembered by its
    serialized bytes (protobuf's C code serializes it in a fraction of the JSON conversion);
    the caller only reads it."""
    key = (message.DESCRIPTOR.full_name, message.SerializeToString(deterministic=True))
    doc = _REQUESTS.get(key)
    if doc is None:
        doc = message_doc(message)
        if len(key[1]) <= _REQUEST_BYTES_KEPT:  # audio and images are converted each time
            if len(_REQUESTS) >= _REQUESTS_KEPT:
                _REQUESTS.clear()
            _REQUESTS[key] = doc
    return doc


def message_doc(message: Message, received: bytes | None = None) -> dict[str, Any]:
    """``message`` as stored: ``@type`` and its fields; ``@bytes`` too when ``received`` (the bytes
    it was read from) do not come back from the fields alone (checked here, at record time)."""
    fields = _fields(message)
    doc: dict[str, Any] = {TYPE_KEY: message.DESCRIPTOR.full_name, **fields}
    exact = received is None or _from_fields(message.DESCRIPTOR.full_name, fields) == received
    if received is not None and not exact and not holds_credential(received):
        doc[BYTES_KEY] = base64.b64encode(received).decode("ascii")
    return doc


def _credentials_in(received: bytes) -> set[str]:
    """The keys (by shape) and the credentials this run sent that a message's bytes hold
    (protobuf writes strings as their UTF-8 bytes, so they read as text here)."""
    text = received.decode("utf-8", "replace")
    found = {value for _, value in secret_values(text)}
    return found | {value for value in run_credentials() if value and value in text}


def holds_credential(received: bytes) -> bool:
    return bool(_credentials_in(received))


def masked_bytes(raw: bytes) -> bytes:
    """``raw`` with each credential it holds overwritten in place, ``<redacted>`` then ``*`` to
    its length: a message no protobuf class reads is kept as bytes, and a string's length is
    part of its encoding, so the bytes still decode."""
    for value in sorted(_credentials_in(raw), key=len, reverse=True):
        secret = value.encode("utf-8")
        raw = raw.replace(secret, b"<redacted>"[: len(secret)].ljust(len(secret), b"*"))
    return raw


def _message_class(full_name: str) -> type[Message]:
    try:
        descriptor = descriptor_pool.Default().FindMessageTypeByName(full_name)
    except KeyError:
        raise LookupError(
            f"the cassette holds a gRPC message of type {full_name!r}, which no module imported in "
            f"this process defines: import the client library that uses it before replaying"
        ) from None
    found: type[Message] = message_factory.GetMessageClass(descriptor)
    return found


def _from_fields(full_name: str, fields: dict[str, Any]) -> bytes:
    message = json_format.ParseDict(fields, _message_class(full_name)())
    serialized: bytes = message.SerializeToString()
    return serialized


def message_bytes(doc: Any) -> bytes:
    """The bytes of a stored message: its kept ``@bytes`` while they decode to the stored
    fields, else the fields serialized by the message class its ``@type`` names."""
    if isinstance(doc, dict) and TYPE_KEY not in doc and isinstance(doc.get(BYTES_KEY), str):
        return base64.b64decode(doc[BYTES_KEY])  # a message no protobuf class read: kept as bytes
    if not isinstance(doc, dict) or not isinstance(doc.get(TYPE_KEY), str):
        raise ValueError(f"a stored gRPC message needs its {TYPE_KEY!r} and fields, got {doc!r}")
    full_name = doc[TYPE_KEY]
    fields = {k: v for k, v in doc.items() if k not in (TYPE_KEY, BYTES_KEY)}
    built = _from_fields(full_name, fields)
    kept = doc.get(BYTES_KEY)
    if isinstance(kept, str):
        raw = base64.b64decode(kept)
        try:
            same = _fields(_message_class(full_name).FromString(raw)) == fields
        except DecodeError:
            same = False
        if same:
            return raw
    return built
