"""What may reach a cassette file: secrets are removed and only headers that matter are kept.

Headers are stored from an allowlist rather than filtered by a denylist, because a new
provider's key header (``x-portkey-api-key``, ``helicone-auth``...) must never slip into a
committed file just because nobody listed it yet. Even an allowlisted header is dropped
when its name looks like a credential.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = [
    "REDACTED",
    "REQUEST_HEADERS",
    "RESPONSE_HEADERS",
    "SECRET_BODY_FIELDS",
    "SECRET_QUERY_PARAMS",
    "is_secret_header",
    "keep_headers",
    "redact_form_fields",
    "redact_json_fields",
    "redact_url",
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
    }
)

#: Query parameters that carry credentials (Gemini's ``key=``, presigned AWS URLs, OAuth).
SECRET_QUERY_PARAMS = frozenset(
    {
        "key",
        "api_key",
        "api-key",
        "apikey",
        "access_token",
        "token",
        "client_secret",
        "sig",
        "signature",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
    }
)

#: Top-level JSON or form fields that carry credentials (OAuth token exchanges, key-in-body APIs).
SECRET_BODY_FIELDS = frozenset(
    {
        "api_key",
        "apikey",
        "client_secret",
        "refresh_token",
        "access_token",
        "id_token",
        "password",
        "private_key",
    }
)

_SECRET_HEADER_NAME = re.compile(r"auth|token|secret|key|cookie|signature|password|credential|session")


def is_secret_header(name: str) -> bool:
    lowered = name.lower()
    return lowered in ("openai-organization", "openai-project") or bool(_SECRET_HEADER_NAME.search(lowered))


def keep_headers(headers: Mapping[str, str], allowed: Iterable[str]) -> dict[str, str]:
    """The allowed headers, lower-cased, without any whose name looks like a credential."""
    allowed_set = allowed if isinstance(allowed, (set, frozenset)) else frozenset(allowed)
    return {
        name.lower(): value
        for name, value in headers.items()
        if name.lower() in allowed_set and not is_secret_header(name)
    }


def redact_url(url: str) -> str:
    """The URL without credential query parameters and without user:password in the authority."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    if not parts.query and netloc == parts.netloc:
        return url
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in SECRET_QUERY_PARAMS
    ]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), parts.fragment))


def redact_json_fields(value: Any) -> Any:
    """A copy of a top-level JSON object with credential fields replaced by ``<redacted>``."""
    if not isinstance(value, dict) or SECRET_BODY_FIELDS.isdisjoint(
        k.lower() for k in value if isinstance(k, str)
    ):
        return value
    return {
        k: (REDACTED if isinstance(k, str) and k.lower() in SECRET_BODY_FIELDS else v)
        for k, v in value.items()
    }


def redact_form_fields(text: str) -> str:
    """A form body (``a=1&b=2``) with credential fields replaced by ``<redacted>``: OAuth
    token exchanges send ``client_secret`` and ``refresh_token`` this way."""
    pairs = parse_qsl(text, keep_blank_values=True)
    if not any(k.lower() in SECRET_BODY_FIELDS for k, _ in pairs):
        return text
    return urlencode([(k, REDACTED if k.lower() in SECRET_BODY_FIELDS else v) for k, v in pairs])
