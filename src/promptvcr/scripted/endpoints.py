"""Which wire format a request expects: its endpoint, whether it streams, and its model.

OpenAI chat completions (and every OpenAI-compatible API, whatever its host), OpenAI
Responses, Anthropic messages and Gemini ``generateContent``; anything else has no scripted
rendering (:func:`endpoint_of` returns ``None``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..cassettes.models import Request, Response
from ..cassettes.providers import provider_of
from .anthropic_messages import render_anthropic
from .chat_completions import render_chat
from .gemini_content import render_gemini
from .rendering import Turn
from .responses_api import render_responses

__all__ = ["ENDPOINTS", "Endpoint", "endpoint_of"]

#: What scripted replies render for, in the words of the error a request to anything else gets.
ENDPOINTS = "OpenAI chat completions, OpenAI Responses, Anthropic messages and Gemini generateContent"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The renderer a request needs, with what it asked for."""

    name: str
    render: Callable[[Turn], Response]
    stream: bool
    model: str
    body: Mapping[str, Any]


def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(request.content or b"{}")
    except (ValueError, UnicodeDecodeError):
        return {}
    return body if isinstance(body, dict) else {}


def _gemini_model(path: str) -> str:
    model = path.rsplit("/models/", 1)[-1] if "/models/" in path else path.rsplit("/", 1)[-1]
    return model.split(":", 1)[0]


def endpoint_of(request: Request) -> Endpoint | None:
    """The endpoint ``request`` hits, or ``None`` when scripted replies do not render for it."""
    if request.method.upper() != "POST":
        return None
    path = request.path.rstrip("/")
    body = _json_body(request)
    model = str(body.get("model") or "")
    streams = body.get("stream") is True
    if path.endswith(":generateContent") or path.endswith(":streamGenerateContent"):
        query = parse_qs(urlsplit(request.url).query)
        streaming = path.endswith(":streamGenerateContent") and query.get("alt") == ["sse"]
        return Endpoint("gemini", render_gemini, streaming, _gemini_model(path), body)
    if path.endswith("/chat/completions"):
        return Endpoint("chat", render_chat, streams, model, body)
    if path.endswith("/responses"):
        return Endpoint("responses", render_responses, streams, model, body)
    if path.endswith("/messages") and provider_of(request.url, request.headers) in ("anthropic", ""):
        return Endpoint("anthropic", render_anthropic, streams, model, body)
    return None
