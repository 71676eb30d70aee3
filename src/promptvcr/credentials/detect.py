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
import json
from collections.abc import Iterator
from typing import Any

from .byname import names_secret_field, redact_form_fields, redact_json_fields, redact_query_values
from .compressed import decompressed
from .decode import texts
from .keyshapes import Finding, masked_preview, secret_values
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


def _named_findings(place: str, text: str) -> Iterator[Finding]:
    """Credentials by name in one text: a URL's query, a JSON document's field, a form field,
    a JSON part of a multipart body."""
    if "content-disposition" in text[:4096].lower():
        for line in text.splitlines():
            if line[:1] in ("{", "["):
                yield from _named_findings(place, line)
        return
    if "=" in text and redact_query_values(text) != text:
        yield Finding("credential query parameter", "(not shown)", field=place)
    stripped = text.lstrip()[:1]
    if stripped in ("{", "[") and names_secret_field(text.lower()):
        try:
            document = json.loads(text)
        except (ValueError, RecursionError):
            return
        if redact_json_fields(document) != document:
            yield Finding("credential field", "(not shown)", field=place)
    elif "=" in text and "\n" not in text.strip() and " " not in text and redact_form_fields(text) != text:
        yield Finding("credential form field", "(not shown)", field=place)


def detect(data: Any, where: str = "") -> list[Finding]:
    """Every credential recording would have removed from ``data`` (a parsed cassette file)."""
    plain = _plain(data)
    findings = list(_header_findings(plain, where))
    seen: set[tuple[str, str]] = set()
    for place, text in texts(plain, where):
        for kind, value in secret_values(text):
            if (place, value) not in seen:
                seen.add((place, value))
                findings.append(Finding(kind, masked_preview(value), field=place))
        findings.extend(_named_findings(place, text))
    if isinstance(plain, dict | list):  # stored JSON bodies (promptvcr's ``json``) are documents
        document_fields = _json_fields(plain, where)
        findings.extend(document_fields)
    return findings


def _json_fields(data: Any, where: str) -> list[Finding]:
    """Credential fields of the parsed bodies a promptvcr cassette stores (``json``)."""
    found = []
    stack: list[tuple[str, Any]] = [(where, data)]
    while stack:
        place, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "json" and redact_json_fields(item) != item:
                    found.append(Finding("credential field", "(not shown)", field=f"{place}.json"))
                else:
                    stack.append((f"{place}.{key}" if place else key, item))
        elif isinstance(value, list):
            stack.extend((f"{place}[{index}]", item) for index, item in enumerate(value))
    return found
