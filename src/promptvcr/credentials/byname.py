"""Removing credentials by name: query parameters of URLs, fields of JSON and form bodies."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, unquote_plus, urlencode, urlsplit, urlunsplit

from .bodyfields import walk_fields
from .examples import is_documented_example
from .names import NAME_ENDINGS, is_secret_param, words_pattern
from .placeholder import is_placeholder, placeholder

__all__ = [
    "REDACTED",
    "may_need_redaction",
    "names_secret_field",
    "redact_form_fields",
    "redact_json_fields",
    "redact_query_values",
    "redact_url",
    "redact_urls",
]

#: The placeholder of older cassettes (a prefix of every placeholder, see :mod:`.placeholder`).
REDACTED = "<redacted>"


def redact_url(url: str) -> str:
    """The URL without credential query parameters and without user:password in the authority;
    every other byte as it was (the order, the escapes, a parameter without a value). A URL
    nested in a parameter's value (``?url=https%3A%2F%2F...%3Fkey%3D...``) has its credential
    parameters replaced by their placeholder."""
    if "?" not in url and "@" not in url:
        return url
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    if not parts.query and netloc == parts.netloc:
        return url
    pairs = [pair for pair in parts.query.split("&") if not _secret_pair(pair)]
    query = redact_query_values("?" + "&".join(pairs))[1:]
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _secret_pair(pair: str) -> bool:
    """Whether ``name=value`` of a URL's query holds a credential (not empty, no placeholder)."""
    name, _, value = pair.partition("=")
    return bool(value) and is_secret_param(unquote_plus(name)) and not _unquoted_placeholder(value)


#: ``?name=value`` or ``&name=value`` anywhere in text: the query of a URL in an answer, a
#: header or a log line. Linear: no part can match in more than one way.
_QUERY_PAIR = re.compile(r"(?<=[?&;])([A-Za-z0-9_.%\-]{1,64})=([^&#\s\"'<>\\]*)")
#: The same pair percent-encoded, as a URL nested in another URL's parameter writes it
#: (``%3Fkey%3D...``, ``%26sig%3D...``); its value ends at an encoded ``&`` or ``#``.
_ENCODED_PAIR = re.compile(r"(?i)(?<=%3F|%26)([A-Za-z0-9_.\-]{1,64})%3D((?:(?!%26|%23)[^&#\s\"'<>\\])*)")


def _unquoted_placeholder(value: str) -> bool:
    """Whether a query value is a placeholder, as written or percent-encoded (``redact_url``
    and ``urlencode`` write ``%3Credacted%3A...``): promptvcr's own, no finding."""
    return is_placeholder(value) or ("%" in value and is_placeholder(unquote_plus(value)))


def redact_query_values(text: str) -> str:
    """``text`` with the value of every credential query parameter of every URL in it
    replaced by ``<redacted:query:NAME>`` (percent-encoded inside an encoded URL); the rest
    stays byte for byte."""
    if "=" not in text and "%3D" not in text and "%3d" not in text:
        return text

    def replace(match: re.Match[str], encoded: bool = False) -> str:
        name = unquote(match.group(1))
        value = match.group(2)
        if not is_secret_param(name) or not value or _unquoted_placeholder(value):
            return match.group()
        if is_documented_example(unquote_plus(value)):
            return match.group()
        slot = placeholder("query", name.lower())
        return f"{match.group(1)}{'%3D' if encoded else '='}{quote(slot, safe='') if encoded else slot}"

    if "=" in text:
        text = _QUERY_PAIR.sub(replace, text)
    if "%3" in text.upper():
        text = _ENCODED_PAIR.sub(lambda match: replace(match, encoded=True), text)
    return text


def redact_json_fields(value: Any, *, request: bool = True) -> Any:
    """A copy of a JSON body (a parsed request or response body, a websocket message) with the
    scalar value of every credential field replaced by ``<redacted:field:NAME>`` where names
    count (see :mod:`.bodyfields`: never in what a model or a tool produced, never below the top
    of an answer), and credential parameters removed from the URLs in its strings. Containers
    under a credential field are searched, not replaced."""
    return walk_fields(value, _field_placeholder, request=request, on_string=redact_query_values)


def redact_urls(value: Any) -> Any:
    """A copy of JSON data with credential parameters removed from the URLs in its strings and
    nothing read by name: a stream's events, which are what a model produced."""
    if isinstance(value, str):
        return redact_query_values(value)
    if isinstance(value, list):
        return [redact_urls(item) for item in value]
    if isinstance(value, dict):
        return {k: redact_urls(v) for k, v in value.items()}
    return value


def _field_placeholder(name: str, value: Any) -> Any:
    if isinstance(value, str) and (is_placeholder(value) or not value or is_documented_example(value)):
        return value
    return placeholder("field", name)


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
