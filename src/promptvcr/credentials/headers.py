"""Which headers reach a cassette file: what code reads is kept, review noise and credentials are not.

Responses keep every header but the noise a reviewer does not want and no code reads
(:data:`NOISE`: dates, server banners, CDN and proxy bookkeeping): SDKs and frameworks read
request ids (``x-request-id``, ``request-id``: the SDKs' ``._request_id``), rate limits
(``x-ratelimit-*``, ``anthropic-ratelimit-*``: LiteLLM's router), token counts
(``x-amzn-bedrock-input-token-count``: boto3's ``invoke_model`` result), ``retry-after``
and processing times. Requests keep a short allowlist (they take no part in the key, and
their headers are mostly the client's own noise). ``request_headers=``/``response_headers=``
replace the defaults; they never keep a credential: a credential header a list names is
stored as ``<redacted:header:NAME>``, so a reviewer sees it was there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .byname import redact_query_values
from .names import is_secret_header
from .placeholder import placeholder

__all__ = [
    "ALL_HEADERS",
    "NOISE",
    "NOISE_PREFIXES",
    "REQUEST_HEADERS",
    "RESPONSE_HEADERS",
    "AllHeadersBut",
    "keep_headers",
]

#: Request headers written to a cassette (for the reader: they are never part of the key).
REQUEST_HEADERS = frozenset({"content-type", "accept", "anthropic-version", "anthropic-beta", "openai-beta"})


class AllHeadersBut(frozenset[str]):
    """Every header but the names it holds: a default that keeps what a new provider adds.
    (A list given by the user is a plain set: exactly those names.)"""

    __slots__ = ()

    def keeps(self, lowered: str) -> bool:
        return lowered not in self


class _AllButNoise(AllHeadersBut):
    """Every header but :data:`NOISE` and the CDN and proxy families (``cf-*``, ``x-envoy-*``):
    the default of a new recording. Import and migrate keep all (:data:`ALL_HEADERS`)."""

    __slots__ = ()

    def keeps(self, lowered: str) -> bool:
        return lowered not in self and not lowered.startswith(_NOISE_PREFIXES)


#: Response headers that mean nothing to code and change on every call: left out by default.
#: ``openai-organization``/``openai-project`` name the recording account.
NOISE = frozenset(
    {"date", "server", "via", "age", "expires", "alt-svc", "nel", "report-to", "vary", "connection"}
    | {"keep-alive", "strict-transport-security", "x-content-type-options", "x-frame-options"}
    | {"x-xss-protection", "x-powered-by", "x-cache", "x-cache-hits", "x-served-by", "x-timer"}
    | {"cache-control", "pragma", "access-control-allow-origin", "access-control-allow-credentials"}
    | {"access-control-expose-headers", "access-control-allow-headers", "access-control-allow-methods"}
    | {"openai-organization", "openai-project", "x-cloud-trace-context", "server-timing", "traceparent"}
)
_NOISE_PREFIXES = ("cf-", "x-envoy-", "x-amz-cf-", "x-azure-ref", "x-msedge-", "x-gfe-")
#: The header families a new recording leaves out with :data:`NOISE` (documented in docs/).
NOISE_PREFIXES = _NOISE_PREFIXES

#: The default response headers of a new recording: all of them but :data:`NOISE` (and the
#: families of :data:`NOISE_PREFIXES`). Never a header for its name's last word alone: a
#: credential is left out by :func:`.names.is_secret_header`, and ``x-ratelimit-key`` or
#: ``x-time-per-token`` is none.
RESPONSE_HEADERS = _AllButNoise(NOISE)
#: Every header (what import and migrate keep unless told otherwise): ``cf-ray`` and
#: ``x-envoy-upstream-service-time`` too; only credentials are left out.
ALL_HEADERS = AllHeadersBut()

#: Per header choice, each header name met so far: its lower-case form when it is kept, ``""``
#: when it is not, ``"!"``+name for a credential that a list names. The same dozen names come
#: with every request and response, and deciding each anew was most of a record's header work.
_KEPT_NAMES: dict[tuple[type, frozenset[str]], dict[str, str]] = {}
_MAX_NAMES = 4096


def _kept_name(name: str, allowed: frozenset[str]) -> str:
    lowered = name.lower()
    if is_secret_header(lowered):
        return "!" + lowered if lowered in allowed and not isinstance(allowed, AllHeadersBut) else ""
    if isinstance(allowed, AllHeadersBut):
        return lowered if allowed.keeps(lowered) else ""
    return lowered if lowered in allowed else ""


def keep_headers(headers: Mapping[str, str], allowed: Iterable[str]) -> dict[str, str]:
    """The chosen headers, lower-cased: a credential never (its placeholder when a list names
    it), and without the credential query parameters of the URLs they hold (``location``,
    upload URLs)."""
    allowed_set = allowed if isinstance(allowed, frozenset) else frozenset(allowed)
    # By type too: a plain set and an AllHeadersBut of the same names compare equal.
    choice = (type(allowed_set), allowed_set)
    names = _KEPT_NAMES.get(choice)
    if names is None:
        if len(_KEPT_NAMES) >= 64:  # choices built anew per call: keep the memory bounded
            _KEPT_NAMES.clear()
        names = _KEPT_NAMES[choice] = {}
    kept: dict[str, str] = {}
    for name, value in headers.items():
        lowered = names.get(name)
        if lowered is None:
            lowered = _kept_name(name, allowed_set)
            if len(names) < _MAX_NAMES:
                names[name] = lowered
        if lowered:
            if lowered[0] == "!":
                kept[lowered[1:]] = placeholder("header", lowered[1:])
            else:
                kept[lowered] = redact_query_values(value)
    return kept
