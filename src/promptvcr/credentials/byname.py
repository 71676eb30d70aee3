"""Removing credentials by name: query parameters of URLs, fields of JSON and form bodies."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from .examples import is_documented_example
from .names import NAME_ENDINGS, is_secret_field, is_secret_param, words_pattern
from .placeholder import is_placeholder, placeholder

__all__ = [
    "REDACTED",
    "may_need_redaction",
    "names_secret_field",
    "redact_form_fields",
    "redact_json_fields",
    "redact_query_values",
    "redact_url",
]

#: The placeholder of older cassettes (a prefix of every placeholder, see :mod:`.placeholder`).
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
    replaced by ``<redacted:query:NAME>``; the rest stays byte for byte."""
    if "=" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        name = unquote(match.group(1))
        value = match.group(2)
        if not is_secret_param(name) or not value or is_placeholder(value) or is_documented_example(value):
            return match.group()
        return f"{match.group(1)}={placeholder('query', name.lower())}"

    return _QUERY_PAIR.sub(replace, text)


def redact_json_fields(value: Any) -> Any:
    """A copy of a JSON document with the scalar value of every credential field (see
    :func:`.names.is_secret_field`) replaced by ``<redacted:field:NAME>``, and credential
    parameters removed from the URLs in its strings. Containers under such a field are
    searched, not replaced; a JSON document inside a string is redacted as a document."""
    return _redact_json(value, top=True)


def _redact_json(value: Any, *, top: bool) -> Any:
    if isinstance(value, str):
        return _redact_string(value)
    if isinstance(value, list):
        return [_redact_json(item, top=False) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        k: (
            _field_placeholder(k, v)
            if is_secret_field(k, top) and v is not None and not isinstance(v, (dict, list, bool))
            else _redact_json(v, top=False)
        )
        for k, v in value.items()
    }


def _field_placeholder(name: str, value: Any) -> Any:
    if isinstance(value, str) and (is_placeholder(value) or not value or is_documented_example(value)):
        return value
    return placeholder("field", name)


def _redact_string(text: str) -> str:
    """A string's URLs without credentials; a JSON document in it (MCP tool results, a
    config sent as a string field) redacted as a document and written back compactly."""
    stripped = text.lstrip()[:1]
    if stripped in ("{", "[") and names_secret_field(text.lower()):
        try:
            document = json.loads(text)
        except (ValueError, RecursionError):
            pass
        else:
            redacted = _redact_json(document, top=True)
            if redacted != document:
                return json.dumps(redacted, ensure_ascii=False, separators=(",", ":"))
    return redact_query_values(text)


#: The end of a credential field's name as JSON writes a key, in lower case: ``api_key"``,
#: ``apikey"`` (a JSON document inside a string: ``api_key\\"``).
_FIELD_NAME = re.compile(f'(?:{words_pattern(NAME_ENDINGS)})\\\\?"')


def names_secret_field(lowered: str) -> bool:
    """Whether JSON text, lower-cased, may hold a credential field (at any depth): ``False``
    means no key of the document it encodes is a credential name. The text
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
    """A form body (``a=1&b=2``) with credential fields replaced by ``<redacted:field:NAME>``:
    OAuth token exchanges send ``client_secret`` and ``refresh_token`` this way."""
    pairs = parse_qsl(text, keep_blank_values=True)
    if not any(is_secret_param(k) for k, _ in pairs):
        return text
    return urlencode([(k, _field_placeholder(k.lower(), v) if is_secret_param(k) else v) for k, v in pairs])
