"""One vcrpy interaction (request and response mappings) into promptvcr's values.

vcrpy stores what the HTTP library saw: header values as lists, bodies as text, bytes
(``!!binary``) or, with pydantic-ai's serializer, parsed JSON under ``parsed_body``, and a
response body still compressed when ``content-encoding`` says so. promptvcr stores the
decoded body, so compressed bodies are decompressed here, and the headers that describe
the bytes on the wire (``content-encoding``, ``content-length``, ``transfer-encoding``)
are dropped: they no longer describe what is stored.
"""

from __future__ import annotations

import gzip
import json
import zlib
from typing import Any

from ..cassettes.models import Interaction, Request, Response
from ..cassettes.wire import WIRE_HEADERS

__all__ = ["ConversionError", "to_interaction"]


class ConversionError(Exception):
    """One interaction that cannot be converted; the message names the field and the reason."""


def _header_value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_header_value(item) for item in value)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return "" if value is None else str(value)


def _headers(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConversionError(f"{where}.headers is a {type(value).__name__}, expected a mapping.")
    return {str(name).lower(): _header_value(item) for name, item in value.items()}


def _json_bytes(value: Any) -> bytes:
    # What pydantic-ai's deserializer hands vcrpy: json.dumps with its default separators.
    return json.dumps(value).encode("utf-8")


def _body_bytes(value: Any, where: str) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, dict) and "string" in value:  # a response body: {string: ...}
        return _body_bytes(value["string"], where)
    if isinstance(value, (dict, list)):  # some serializers store a JSON body parsed under body
        return _json_bytes(value)
    raise ConversionError(f"{where}.body is a {type(value).__name__}, expected text or bytes.")


def _decompress(content: bytes, encoding: str, where: str) -> bytes:
    for step in reversed([e.strip().lower() for e in encoding.split(",") if e.strip()]):
        try:
            if step in ("gzip", "x-gzip"):
                content = gzip.decompress(content)
            elif step == "deflate":
                try:
                    content = zlib.decompress(content)
                except zlib.error:
                    content = zlib.decompress(content, -zlib.MAX_WBITS)  # raw deflate, as some servers send
            elif step == "br":
                content = _brotli(content, where)
            elif step != "identity":
                raise ConversionError(
                    f"{where} has content-encoding {step!r}, which promptvcr cannot decode."
                )
        except (OSError, EOFError, zlib.error) as error:
            raise ConversionError(
                f"{where} says content-encoding {encoding!r} but its body does not decompress ({error})."
            ) from None
    return content


def _brotli(content: bytes, where: str) -> bytes:
    try:
        import brotli  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        raise ConversionError(f"{where} is brotli-compressed; install 'brotli' to import it.") from None
    decoded: bytes = brotli.decompress(content)
    return decoded


#: Fields of a vcrpy request or response that the conversion reads or may drop (they hold
#: nothing promptvcr stores). Any other field holding data stops the conversion: no
#: conversion writes less than it read.
_KNOWN = frozenset({"method", "uri", "url", "body", "parsed_body", "content", "headers", "status"})
_DROPPED = frozenset({"http_version", "protocol", "reason"})


def _check_fields(data: dict[str, Any], where: str) -> None:
    unread = sorted(
        str(k) for k, v in data.items() if k not in _KNOWN | _DROPPED and v not in (None, "", {}, [])
    )
    if unread:
        raise ConversionError(
            f"{where} has field(s) {', '.join(unread)} that the vcrpy converter does not read; "
            f"converting it would lose them, so it is left out (is it already a promptvcr cassette?)."
        )


def _looks_like_sse(content: bytes) -> bool:
    """An event stream recognised by its content (for cassettes recorded without headers)."""
    head = content.lstrip()[:512]
    if not head.startswith((b"data:", b"event:", b"id:", b": ")):
        return False
    return b"\n\n" in content or b"\r\n\r\n" in content


def _content(data: dict[str, Any], headers: dict[str, str], where: str, notes: list[str]) -> bytes:
    if "parsed_body" in data:
        content = _json_bytes(data["parsed_body"])
    elif "body" not in data and "content" in data:  # older vcrpy httpx stubs
        content = _body_bytes(data.get("content"), where)
    else:
        content = _body_bytes(data.get("body"), where)
    encoding = headers.get("content-encoding", "")
    if encoding and content:
        if _plain_under_label(content, encoding):
            # vcrpy stores what the client handed it: requests and httpx decode the body, then
            # some serializers keep the label. The client saw these bytes: they replay as they are.
            notes.append(
                f"{where}: content-encoding {encoding!r} over a body that is not compressed: kept as recorded"
            )
            return content
        content = _decompress(content, encoding, where)
    return content


#: The first bytes of each compression vcrpy cassettes hold: gzip's magic, zlib's header
#: (any level), zstd's magic. Brotli has none.
_COMPRESSED_STARTS = (b"\x1f\x8b", b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda", b"\x28\xb5\x2f\xfd")


def _plain_under_label(content: bytes, encoding: str) -> bool:
    """Whether a body labelled gzip or deflate is plainly not compressed: no compression's
    first bytes, and text a decoder would reject (JSON, an event stream, UTF-8)."""
    steps = {e.strip().lower() for e in encoding.split(",") if e.strip()} - {"identity"}
    if not steps or not steps <= {"gzip", "x-gzip", "deflate"} or content.startswith(_COMPRESSED_STARTS):
        return False
    try:
        content[:4096].decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start > 4000  # a character cut at the end of the sample
    return True


def _status(value: Any, where: str) -> int:
    code = value.get("code") if isinstance(value, dict) else value
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    if not isinstance(code, int) or isinstance(code, bool) or not 100 <= code <= 599:
        raise ConversionError(f"{where}.status is {value!r}, expected an HTTP status code.")
    return code


def to_interaction(request: Any, response: Any, index: int, notes: list[str] | None = None) -> Interaction:
    """promptvcr's interaction for one vcrpy request/response pair (``ConversionError`` if not);
    what it kept that a reader may not expect is added to ``notes``."""
    notes = [] if notes is None else notes
    where = f"interactions[{index}]"
    if not isinstance(request, dict):
        raise ConversionError(f"{where}.request is missing or not a mapping.")
    if not isinstance(response, dict):
        raise ConversionError(f"{where}.response is missing or not a mapping.")
    method, uri = request.get("method"), request.get("uri") or request.get("url")
    if not isinstance(method, str) or not method:
        raise ConversionError(f"{where}.request has no method.")
    if not isinstance(uri, str) or "://" not in uri:
        raise ConversionError(f"{where}.request.uri is {uri!r}, expected an absolute URL.")
    _check_fields(request, f"{where}.request")
    _check_fields(response, f"{where}.response")
    request_headers = _headers(request.get("headers"), f"{where}.request")
    response_headers = _headers(response.get("headers"), f"{where}.response")
    request_content = _content(request, request_headers, f"{where}.request", notes)
    response_content = _content(response, response_headers, f"{where}.response", notes)
    # A HEAD answer has no body: its content-length is the length of the one it did not send,
    # which the client reads (as recorded; replay serves it as stored).
    kept = {"content-length"} if method.upper() == "HEAD" and not response_content else set()
    if "content-type" not in response_headers and _looks_like_sse(response_content):
        response_headers["content-type"] = "text/event-stream"  # headers stripped: known by content
    return Interaction(
        Request(
            method=method.upper(),
            url=uri,
            headers={k: v for k, v in request_headers.items() if k not in WIRE_HEADERS},
            content=request_content,
        ),
        Response(
            status=_status(response.get("status"), f"{where}.response"),
            headers={k: v for k, v in response_headers.items() if k not in WIRE_HEADERS or k in kept},
            chunks=[response_content] if response_content else [],
        ),
    )
