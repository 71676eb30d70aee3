"""The record path's detection, applied to a file already written: what ``promptvcr scan`` finds.

A cassette file (promptvcr's, vcrpy's, any YAML or JSON) is read as data and searched the
way recording searches what it is about to write: every view of every string
(:func:`.decode.texts`: percent-decoded, base64 decoded, compressed bodies inflated) for key
shapes, and every place a credential name says holds one (a header, a query parameter of a
URL anywhere, a field of a JSON document at any depth, a JSON document inside a string, a
form body) for a value recording would have replaced with a placeholder.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from typing import Any

from .byname import names_secret_field, redact_form_fields, redact_json_fields, redact_query_values
from .compressed import decompressed
from .decode import texts
from .keyshapes import Finding, assigned_values, masked_preview, secret_values
from .names import is_secret_header
from .placeholder import is_placeholder

__all__ = ["detect"]


def _plain(value: Any) -> Any:
    """``value`` with bytes (YAML's ``!!binary``) as a stored base64 body, so that the views
    decode them as they decode promptvcr's."""
    if isinstance(value, bytes):
        inflated = decompressed(value)
        return {"base64": base64.b64encode(inflated if inflated is not None else value).decode("ascii")}
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _header_findings(data: Any, where: str) -> Iterator[Finding]:
    """Credential headers left with their value (vcrpy keeps them all)."""
    stack: list[tuple[str, Any]] = [(where, data)]
    while stack:
        place, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if key.lower() == "headers" and isinstance(item, dict):
                    for name, header in item.items():
                        values = header if isinstance(header, list) else [header]
                        if is_secret_header(name) and any(
                            isinstance(v, str) and v.strip() and not is_placeholder(v) for v in values
                        ):
                            yield Finding(
                                f"credential header {name.lower()}", "(not shown)", field=f"{place}.headers"
                            )
                else:
                    stack.append((f"{place}.{key}" if place else key, item))
        elif isinstance(value, list):
            stack.extend((f"{place}[{index}]", item) for index, item in enumerate(value))


def _body_text_findings(place: str, text: str, request: bool) -> Iterator[Finding]:
    """Credentials by name in a body stored as text: a JSON document's fields (its top, as
    recording reads it), a form's fields, the JSON parts of a multipart body."""
    for kind, value in assigned_values(text):  # a dotenv file, uploaded or returned
        yield Finding(kind, masked_preview(value), field=place)
    if "content-disposition" in text[:4096].lower():
        for line in text.splitlines():
            if line[:1] in ("{", "["):
                yield from _body_text_findings(place, line, request)
        return
    stripped = text.lstrip()[:1]
    if stripped in ("{", "["):
        if names_secret_field(text.lower()):
            try:
                document = json.loads(text)
            except (ValueError, RecursionError):
                return
            if redact_json_fields(document, request=request) != document:
                yield Finding("credential field", "(not shown)", field=place)
    elif "=" in text and "\n" not in text.strip() and " " not in text and redact_form_fields(text) != text:
        yield Finding("credential form field", "(not shown)", field=place)


def detect(data: Any, where: str = "") -> list[Finding]:
    """Every credential recording would have removed from ``data`` (a parsed cassette file):
    key shapes and credential query parameters in every view of every string, and credential
    fields by name only in bodies, where recording reads them (never in a JSON document
    inside a string: a tool call's arguments)."""
    plain = _plain(data)
    findings = list(_header_findings(plain, where))
    seen: set[tuple[str, str]] = set()
    for place, text in texts(plain, where):
        for kind, value in secret_values(text):
            if (place, value) not in seen:
                seen.add((place, value))
                findings.append(Finding(kind, masked_preview(value), field=place))
        if "=" in text and redact_query_values(text) != text:
            findings.append(Finding("credential query parameter", "(not shown)", field=place))
    if isinstance(plain, dict | list):
        findings.extend(_body_findings(plain, where))
    return findings


#: The keys a cassette stores a body under: promptvcr's parsed ``json`` (and a frame's),
#: pydantic-ai's ``parsed_body``, vcrpy's ``body`` (text, ``{string: ...}``, or parsed).
_DOCUMENT_KEYS = frozenset({"json", "parsed_body"})


_SESSIONS = (".websocket", ".stdio")
_SESSIONS_KEYS = ("websocket", "stdio")
_SIDES = frozenset({"request", "response", *_SESSIONS_KEYS})


def _body_findings(data: Any, where: str) -> list[Finding]:
    """Credential fields of the bodies a cassette stores, read as recording reads a body: a
    request's and an answer's each by its own rule (:mod:`.bodyfields`), a stream by shape only."""
    found: list[Finding] = []
    stack: list[tuple[str, Any, bool]] = [(where, data, True)]
    while stack:
        place, value, request = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                field = f"{place}.{key}" if place else str(key)
                parsed = key == "body" and isinstance(item, dict | list) and not _stored(item)
                if key in _DOCUMENT_KEYS or parsed:
                    if isinstance(item, dict | list) and redact_json_fields(item, request=request) != item:
                        found.append(Finding("credential field", "(not shown)", field=field))
                elif isinstance(item, str) and (
                    key in ("body", "text") or (key == "string" and place.endswith(".body"))
                ):
                    found.extend(_body_text_findings(field, item, request))
                elif key == "base64" and isinstance(item, str):
                    found.extend(_body_text_findings(field, _decoded(item), request))
                elif key == "events" or (key == "frames" and not place.endswith(_SESSIONS)):
                    continue  # a stream is what a model produced: by shape only
                else:  # a websocket's messages are read as recording reads them: as a request's
                    side = key == "request" or key in _SESSIONS_KEYS if key in _SIDES else request
                    stack.append((field, item, side))
        elif isinstance(value, list):
            stack.extend((f"{place}[{index}]", item, request) for index, item in enumerate(value))
    return found


def _stored(body: Any) -> bool:
    """Whether vcrpy's ``body`` is a holder (``{string: ...}``, bytes read as ``{base64: ...}``)
    rather than a parsed JSON body."""
    return isinstance(body, dict) and ("string" in body or "base64" in body)


def _decoded(stored: str) -> str:
    """A base64 body as text (inflated when compressed); ``""`` when it is no base64."""
    try:
        content = base64.b64decode(stored, validate=True)
    except (binascii.Error, ValueError):
        return ""
    inflated = decompressed(content)
    return (inflated if inflated is not None else content).decode("latin-1")
