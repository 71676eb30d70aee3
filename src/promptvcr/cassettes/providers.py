"""Which provider a request is for, in one vocabulary, from its host, headers and path.

The key's provider-aware rules, the error bodies of injected faults and the command
line's inventory and the HTML report all ask this one question. The host decides when it is a provider's;
behind a proxy or a loopback test server, an SDK's own headers, then the path, do.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = ["provider_label", "provider_of", "provider_of_url"]

#: Host suffix -> provider.
_HOSTS = (
    ("anthropic.com", "anthropic"),
    ("googleapis.com", "google"),
    ("mistral.ai", "mistral"),
    ("openai.com", "openai"),
    ("openai.azure.com", "openai"),
    ("openrouter.ai", "openrouter"),
    ("amazonaws.com", "bedrock"),
    ("groq.com", "groq"),
    ("cohere.com", "cohere"),
)
#: Headers only one provider's SDK sends -> provider.
_HEADERS = (
    ("anthropic-version", "anthropic"),
    ("x-goog-api-client", "google"),
    ("x-goog-api-key", "google"),
)
#: Path fragments that name a provider's API (gateways put the provider in the path).
_PATHS = (
    ("/anthropic/", "anthropic"),
    ("/v1/messages", "anthropic"),
    ("/google-vertex/", "google"),
    (":generateContent", "google"),
    (":streamGenerateContent", "google"),
    ("/publishers/google/", "google"),
    ("/bedrock/", "bedrock"),
    ("/model/", "bedrock"),
)

#: Endpoints of OpenAI's API that OpenAI-compatible servers copy (vLLM, Ollama, gateways, a test
#: server): enough to label traffic, never to choose matching rules (see ``provider_label``).
_OPENAI_STYLE = (
    "/chat/completions",
    "/completions",
    "/embeddings",
    "/responses",
    "/moderations",
    "/realtime",
)

_LOOPBACK = ("localhost", "::1")


def _by_host(host: str) -> str:
    host = host.lower()
    for suffix, provider in _HOSTS:
        if host.endswith(suffix):
            return provider
    return ""


def _by_path(path: str) -> str:
    for marker, provider in _PATHS:
        if marker in path:
            return provider
    return ""


@lru_cache(maxsize=1024)
def provider_of_url(host: str, path: str) -> str:
    """``anthropic``, ``google``, ``mistral``, ``openai``, ``openrouter``, ``bedrock``, ... or ``""``."""
    return _by_host(host) or _by_path(path)


def provider_of(url: str, headers: Mapping[str, str]) -> str:
    """The provider of a request: its host, then the SDK headers it carries, then its path."""
    parts = urlsplit(url)
    by_host = _by_host(parts.netloc)
    if by_host:
        return by_host
    for header, provider in _HEADERS:
        if header in headers:
            return provider
    return _by_path(parts.path)


def provider_label(url: str, headers: Mapping[str, str], content: bytes = b"") -> str:
    """The provider to show for a request, the one vocabulary of ``ls``, ``stats``, ``show`` and
    the HTML report: :func:`provider_of` (the host, the SDK's headers, the path); else ``mcp`` for
    JSON-RPC and ``google`` for Gemini Live's websocket; else the host, which names the service
    (``api.deepseek.com``), except a loopback host, which names nobody: OpenAI's wire format there
    (a test server, vLLM, Ollama) is ``openai-compatible``, as speaking OpenAI's protocol does not
    make it OpenAI. Only a label: the key's rules keep asking :func:`provider_of_url`."""
    if provider := provider_of(url, headers):
        return provider
    parts = urlsplit(url)
    if b'"jsonrpc"' in content:
        return "mcp"
    if "BidiGenerateContent" in parts.path:
        return "google"
    host = parts.hostname or ""
    loopback = host in _LOOPBACK or host.startswith("127.")
    if loopback and parts.path.rstrip("/").endswith(_OPENAI_STYLE):
        return "openai-compatible"
    return host or "unknown"
