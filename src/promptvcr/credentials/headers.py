"""Which headers reach a cassette file.

Headers are stored from an allowlist rather than filtered by a denylist, because a new
provider's key header (``x-portkey-api-key``, ``helicone-auth``...) must never slip into a
committed file just because nobody listed it yet. Even an allowlisted header is dropped
when its name looks like a credential.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .byname import redact_query_values
from .names import is_secret_header

__all__ = ["REQUEST_HEADERS", "RESPONSE_HEADERS", "keep_headers"]

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
