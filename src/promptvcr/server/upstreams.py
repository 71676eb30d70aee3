"""Where each upstream name sends: the built-in providers, ``--upstream NAME=URL``, base-URL variables.

A client reaches upstream ``NAME`` at ``http://127.0.0.1:PORT/NAME/<path>``; the server sends
(and keys) the request as ``<URL of NAME>/<path>``, the URL the SDK would have used without
the server, so that a cassette recorded in-process and one recorded through the server match.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["BASE_URL_VARIABLES", "BUILTIN_UPSTREAMS", "base_url_environment", "parse_upstreams"]

#: The providers a client can reach without ``--upstream``.
BUILTIN_UPSTREAMS: dict[str, str] = {
    "openai": "https://api.openai.com",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
    "mistral": "https://api.mistral.ai",
    "groq": "https://api.groq.com",
    "cohere": "https://api.cohere.com",
    "openrouter": "https://openrouter.ai",
    "deepseek": "https://api.deepseek.com",
    "together": "https://api.together.xyz",
    "fireworks": "https://api.fireworks.ai",
    "xai": "https://api.x.ai",
}

#: Environment variable an SDK reads its base URL from -> (upstream name, path the SDK expects
#: in its base URL). ``OPENAI_BASE_URL`` ends in ``/v1`` as the openai SDKs (Python and npm)
#: append ``/chat/completions`` to it; the anthropic and google-genai SDKs add the version.
BASE_URL_VARIABLES: dict[str, tuple[str, str]] = {
    "OPENAI_BASE_URL": ("openai", "/v1"),
    "ANTHROPIC_BASE_URL": ("anthropic", ""),
    "GOOGLE_GEMINI_BASE_URL": ("gemini", ""),
    "GROQ_BASE_URL": ("groq", ""),
    "CO_API_URL": ("cohere", ""),
}


def parse_upstreams(given: Iterable[str] | Mapping[str, str] = ()) -> dict[str, str]:
    """The built-in upstreams updated with ``given`` (``NAME=URL`` strings or a mapping)."""
    pairs = given.items() if isinstance(given, Mapping) else (_split(text) for text in given)
    upstreams = dict(BUILTIN_UPSTREAMS)
    for name, url in pairs:
        if not name or "/" in name or name.startswith("_"):
            raise ValueError(f"upstream name {name!r}: one path segment, not starting with '_'")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"upstream {name}={url!r}: the URL must start with http:// or https://")
        upstreams[name] = url.rstrip("/")
    return upstreams


def _split(text: str) -> tuple[str, str]:
    name, sep, url = text.partition("=")
    if not sep:
        raise ValueError(f"--upstream {text!r}: expected NAME=URL, e.g. local=http://127.0.0.1:8000")
    return name.strip(), url.strip()


def base_url_environment(server_url: str, prefix: str = "") -> dict[str, str]:
    """The base-URL variables that point each SDK at the server (``prefix``: a folder cassette's name)."""
    root = server_url.rstrip("/") + (f"/{prefix}" if prefix else "")
    return {variable: f"{root}/{name}{path}" for variable, (name, path) in BASE_URL_VARIABLES.items()}
