"""Removing credentials by name: query parameters of URLs, fields of JSON and form bodies."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from .examples import is_documented_example
from .names import SECRET_BODY_FIELDS, is_secret_field, is_secret_param, words_pattern

__all__ = [
    "REDACTED",
    "may_need_redaction",
    "names_secret_field",
    "redact_form_fields",
    "redact_json_fields",
    "redact_query_values",
    "redact_url",
]

REDACTED = "<redacted>"


def redact_url(url: str) -> str:
    """The URL without credential query parameters and without user:password in the authority."""
    if "?" not in url and "@" not in url:
        return url
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    if not parts.query and netloc == parts.netloc:
        return url
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not is_secret_param(k)]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), parts.fragment))


#: ``?name=value`` or ``&name=value`` anywhere in text: the query of a URL in an answer, a
#: header or a log line. Linear: no part can match in more than one way.
_QUERY_PAIR = re.compile(r"(?<=[?&;])([A-Za-z0-9_.%\-]{1,64})=([^&#\s\"'<>\\]*)")


def redact_query_values(text: str) -> str:
    """``text`` with the value of every credential query parameter of every URL in it
    replaced by ``<redacted>``; the rest stays byte for byte."""
    if "=" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        name = unquote(match.group(1))
        value = match.group(2)
        if not is_secret_param(name) or not value or value == REDACTED or is_documented_example(value):
            return match.group()
        return f"{match.group(1)}={REDACTED}"

    return _QUERY_PAIR.sub(replace, text)


def redact_json_fields(value: Any) -> Any:
    """A copy of a JSON document with the scalar value of every credential field (see
    :data:`SECRET_FIELDS_ANY_DEPTH`, and :data:`SECRET_BODY_FIELDS` at the top level)
    replaced by ``<redacted>``, and credential parameters removed from the URLs in its
    strings. Containers under such a field are searched, not replaced."""
    return _redact_json(value, top=True)


def _redact_json(value: Any, *, top: bool) -> Any:
    if isinstance(value, str):
        return redact_query_values(value)
    if isinstance(value, list):
        return [_redact_json(item, top=False) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        k: (
            REDACTED
            if is_secret_field(k, top) and v is not None and not isinstance(v, (dict, list, bool))
            else _redact_json(v, top=False)
        )
        for k, v in value.items()
    }


#: A credential field's name as JSON writes a key (or a string): ``"api_key"``, in lower case.
_FIELD_NAME = re.compile(f'"{words_pattern(SECRET_BODY_FIELDS)}"')


def names_secret_field(lowered: str) -> bool:
    """Whether JSON text, lower-cased, may hold a credential field (at any depth): ``False``
    means no key of the document it encodes is one of :data:`SECRET_BODY_FIELDS`. The text
    must spell keys out: ``json.dumps(..., ensure_ascii=False)`` does (it escapes only quotes,
    backslashes and control characters, none of which a field name holds); text with a
    ``\\u`` escape in it is always ``True``."""
    return "\\u" in lowered or _FIELD_NAME.search(lowered) is not None


def may_need_redaction(text: str, lowered: str) -> bool:
    """Whether :func:`redact_json_fields` or :func:`redact_query_values` could change any
    string of the data ``text`` is the ``json.dumps(..., ensure_ascii=False)`` of (``lowered``:
    the same, lower-cased). ``False`` (no credential field name, no ``?name=`` pair in it)
    means both return their input as it is. A form body is another matter: its first field
    has no ``?`` or ``&`` before it (:func:`redact_form_fields` is not covered)."""
    return ("=" in text and _QUERY_PAIR.search(text) is not None) or names_secret_field(lowered)


def redact_form_fields(text: str) -> str:
    """A form body (``a=1&b=2``) with credential fields replaced by ``<redacted>``: OAuth
    token exchanges send ``client_secret`` and ``refresh_token`` this way."""
    pairs = parse_qsl(text, keep_blank_values=True)
    if not any(is_secret_field(k, True) or is_secret_param(k) for k, _ in pairs):
        return text
    return urlencode(
        [(k, REDACTED if is_secret_field(k, True) or is_secret_param(k) else v) for k, v in pairs]
    )
