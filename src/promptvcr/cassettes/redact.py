"""What may reach a cassette file: secrets are removed and only headers that matter are kept.

Headers are stored from an allowlist rather than filtered by a denylist, because a new
provider's key header (``x-portkey-api-key``, ``helicone-auth``...) must never slip into a
committed file just because nobody listed it yet. Even an allowlisted header is dropped
when its name looks like a credential.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from .examples import is_documented_example

__all__ = [
    "REDACTED",
    "REQUEST_HEADERS",
    "RESPONSE_HEADERS",
    "SECRET_BODY_FIELDS",
    "SECRET_FIELDS_ANY_DEPTH",
    "SECRET_QUERY_PARAMS",
    "is_secret_header",
    "is_secret_param",
    "keep_headers",
    "may_need_redaction",
    "names_secret_field",
    "redact_form_fields",
    "redact_json_fields",
    "redact_query_values",
    "redact_url",
    "words_pattern",
]

REDACTED = "<redacted>"

#: Request headers written to a cassette (for the reader: they are never part of the key).
REQUEST_HEADERS = frozenset({"content-type", "accept", "anthropic-version", "anthropic-beta", "openai-beta"})

#: Response headers written to a cassette: the ones SDKs read to parse a body or to retry.
#: ``x-goog-upload-url``/``-status`` carry Google's resumable-upload session: google-genai
#: reads them to send the file after the start request. botocore names an AWS error from
#: ``x-amzn-errortype`` alone (Bedrock's error body is just a message), and boto3's
#: ``invoke_model`` returns the ``x-amzn-bedrock-*`` ones below as results.
RESPONSE_HEADERS = frozenset(
    {
        "content-type",
        "content-disposition",
        "location",
        "retry-after",
        "retry-after-ms",
        "x-should-retry",
        "x-goog-upload-url",
        "x-goog-upload-status",
        "x-amzn-errortype",
        "x-amzn-bedrock-content-type",
        "x-amzn-bedrock-performanceconfig-latency",
        "x-amzn-bedrock-service-tier",
        "mcp-session-id",  # an MCP server's session, sent back by the client on every request
        "mcp-protocol-version",
    }
)

#: Query parameters (and form or multipart fields) that carry credentials, compared in lower
#: case: API keys under every spelling (Gemini's ``key=``, Azure APIM's ``subscription-key``),
#: OAuth (``code``, ``access_token``, ``refresh_token``, ``client_secret``), passwords, and the
#: signatures of signed URLs (Azure SAS ``sig``, S3 ``X-Amz-Signature``, GCS ``X-Goog-Signature``).
#: Removed from the request URL and from every URL stored anywhere (``location``, upload URLs,
#: links in answers).
SECRET_QUERY_PARAMS = frozenset(
    {
        *("key", "api_key", "api-key", "apikey", "x-api-key", "x_api_key", "api_token"),
        *("token", "access_token", "access-token", "accesstoken", "refresh_token", "refresh-token"),
        *("id_token", "auth", "auth_token", "authorization", "session_token", "code"),
        *("client_secret", "secret", "password", "passwd", "private_key"),
        *("subscription-key", "subscription_key", "ocp-apim-subscription-key"),
        *("sig", "signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token"),
        *("x-goog-signature", "x-goog-credential", "awsaccesskeyid"),
    }
)

#: JSON fields that carry credentials at any depth (``auth.api_key``, ``providers[0].api_key``,
#: ``credentials.password``), in requests and answers alike.
SECRET_FIELDS_ANY_DEPTH = frozenset(
    {
        *("api_key", "api-key", "apikey", "x-api-key", "x_api_key", "api_token", "auth_token"),
        *("client_secret", "refresh_token", "access_token", "id_token", "session_token"),
        *("password", "passwd", "private_key", "secret_key", "secret_access_key"),
        *("aws_secret_access_key", "subscription_key", "subscription-key", "bearer_token"),
    }
)

#: Top-level JSON or form fields that carry credentials (OAuth token exchanges, key-in-body
#: APIs): the fields above and short names that mean a credential only at the top.
SECRET_BODY_FIELDS = SECRET_FIELDS_ANY_DEPTH | frozenset({"key", "token", "secret", "auth", "credentials"})

_SECRET_HEADER_NAME = re.compile(r"auth|token|secret|key|cookie|signature|password|credential|session")


@functools.lru_cache(maxsize=1024)  # the same few names in every request and response
def is_secret_header(name: str) -> bool:
    lowered = name.lower()
    if lowered == "mcp-session-id":  # a session the server invents and ends, not a credential
        return False
    return lowered in ("openai-organization", "openai-project") or bool(_SECRET_HEADER_NAME.search(lowered))


#: Per allowlist, each header name met so far: its lower-case form when it is kept, ``""``
#: when it is not. The same dozen names come with every request and response, and deciding
#: each anew (lower-case it, look it up, check it for a credential) was most of a record's
#: header work at save time.
_KEPT_NAMES: dict[frozenset[str], dict[str, str]] = {}
_MAX_NAMES = 4096


def _kept_name(name: str, allowed: frozenset[str]) -> str:
    lowered = name.lower()
    return lowered if lowered in allowed and not is_secret_header(lowered) else ""


def keep_headers(headers: Mapping[str, str], allowed: Iterable[str]) -> dict[str, str]:
    """The allowed headers, lower-cased, without any whose name looks like a credential, and
    without the credential query parameters of the URLs they hold (``location``, upload URLs)."""
    allowed_set = allowed if isinstance(allowed, frozenset) else frozenset(allowed)
    names = _KEPT_NAMES.get(allowed_set)
    if names is None:
        if len(_KEPT_NAMES) >= 64:  # allowlists built anew per call: keep the memory bounded
            _KEPT_NAMES.clear()
        names = _KEPT_NAMES[allowed_set] = {}
    kept: dict[str, str] = {}
    for name, value in headers.items():
        lowered = names.get(name)
        if lowered is None:
            lowered = _kept_name(name, allowed_set)
            if len(names) < _MAX_NAMES:
                names[name] = lowered
        if lowered:
            kept[lowered] = redact_query_values(value)
    return kept


def is_secret_param(name: str) -> bool:
    return name.lower() in SECRET_QUERY_PARAMS


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


def _is_secret_field(key: Any, top: bool) -> bool:
    if not isinstance(key, str):
        return False
    lowered = key.lower()
    return lowered in SECRET_FIELDS_ANY_DEPTH or (top and lowered in SECRET_BODY_FIELDS)


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
            if _is_secret_field(k, top) and v is not None and not isinstance(v, (dict, list, bool))
            else _redact_json(v, top=False)
        )
        for k, v in value.items()
    }


def words_pattern(words: Iterable[str]) -> str:
    """A pattern matching any of ``words``, as a trie (one alternative per first character):
    one pass over a text that tries a few characters at each position, about twice as fast
    as a substring search per word."""
    root: dict[str, Any] = {}
    for word in sorted(words):
        node = root
        for character in word:
            node = node.setdefault(character, {})
        node[""] = {}

    def pattern(node: dict[str, Any]) -> str:
        branches = [re.escape(character) + pattern(child) for character, child in node.items() if character]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return pattern(root)


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
    if not any(_is_secret_field(k, True) or is_secret_param(k) for k, _ in pairs):
        return text
    return urlencode(
        [(k, REDACTED if _is_secret_field(k, True) or is_secret_param(k) else v) for k, v in pairs]
    )
