"""The error bodies each provider family really sends, so an injected error parses as a real one.

An SDK builds its exception from the body (openai's ``RateLimitError.code``, anthropic's
``OverloadedError`` type, google-genai's ``status``), so an injected 429 or 529 must carry
the provider's shape, not a generic one. The family is chosen from the request: its host,
then the headers its SDK always sends, then the path, and the OpenAI shape otherwise, as
most OpenAI-compatible servers use it.

Sources. The shapes and messages follow each provider's error documentation
(platform.openai.com/docs/guides/error-codes, docs.anthropic.com/en/api/errors,
ai.google.dev/gemini-api/docs/troubleshooting). Texts marked *corpus* are copied from
real responses recorded in pydantic-ai's test cassettes (github.com/pydantic/pydantic-ai,
commit 4fda38988f2939fa6ea9cdefcf120693e10ef491, tests/**/cassettes), with the model
name made a ``{model}`` placeholder and the account id left out. That project's licence:

    The MIT License (MIT)
    Copyright (c) Pydantic Services Inc. 2024 to present

    Permission is hereby granted, free of charge, to any person obtaining a copy of this
    software and associated documentation files (the "Software"), to deal in the Software
    without restriction, including without limitation the rights to use, copy, modify,
    merge, publish, distribute, sublicense, and/or sell copies of the Software, and to
    permit persons to whom the Software is furnished to do so, subject to the following
    conditions: The above copyright notice and this permission notice shall be included
    in all copies or substantial portions of the Software.

    THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
    INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A
    PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT
    HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
    CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE
    OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

from ..cassettes.models import Request
from ..cassettes.providers import provider_of
from ..cassettes.wire import reason_phrase

__all__ = ["Family", "error_body", "error_headers", "family_of"]

Family = Literal["openai", "anthropic", "gemini", "openrouter"]

#: status -> (type, code, message) in OpenAI's ``{"error": {message, type, param, code}}``.
OPENAI: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request (promptvcr fault)."),
    401: (
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided: sk-****. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
    ),
    403: (
        "invalid_request_error",
        "unsupported_country_region_territory",
        "Country, region, or territory not supported",
    ),
    # corpus: openai/test_model_name_suggestion[openai-chat].yaml
    404: (
        "invalid_request_error",
        "model_not_found",
        "The model `{model}` does not exist or you do not have access to it.",
    ),
    429: (
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for {model} in organization org-promptvcr on requests per min (RPM): "
        "Limit 500, Used 500, Requested 1. Please try again in {retry}. "
        "Visit https://platform.openai.com/account/rate-limits to learn more.",
    ),
    500: ("server_error", None, "The server had an error while processing your request. Sorry about that!"),
    503: ("server_error", None, "The server is overloaded or not ready yet."),
}

#: status -> (type, message) in Anthropic's ``{"type": "error", "error": {...}, "request_id": ...}``.
ANTHROPIC: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request (promptvcr fault)."),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    # corpus: anthropic/test_model_name_suggestion[anthropic].yaml
    404: ("not_found_error", "model: {model}"),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: (
        "rate_limit_error",
        "This request would exceed the rate limit for your organization of 50 requests per minute. "
        "For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response "
        "headers for current usage. Please reduce the prompt length or the maximum tokens requested, "
        "or try again later.",
    ),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}

#: status -> (status name, message) in Google's ``{"error": {code, message, status}}``.
GEMINI: dict[int, tuple[str, str]] = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    403: ("PERMISSION_DENIED", "The caller does not have permission"),
    # corpus: google-gla/TestGoogle.test_embed_error.yaml
    404: (
        "NOT_FOUND",
        "models/{model} is not found for API version v1beta, or is not supported for generateContent. "
        "Call ListModels to see the list of available models and their supported methods.",
    ),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    500: (
        "INTERNAL",
        "An internal error has occurred. Please retry or report in "
        "https://developers.generativeai.google/guide/troubleshooting",
    ),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    504: ("DEADLINE_EXCEEDED", "The request timed out. Please try again."),
}

#: corpus: openrouter/test_openrouter_errors_raised.yaml (a provider behind OpenRouter rate-limited).
OPENROUTER_429: dict[str, Any] = {
    "error": {
        "code": 429,
        "message": "Provider returned error",
        "metadata": {
            "provider_name": "Google",
            "raw": "{model} is temporarily rate-limited upstream. Please retry shortly, or add your own key "
            "to accumulate your rate limits: https://openrouter.ai/settings/integrations",
        },
    }
}

_GEMINI_PATH = re.compile(r"/models/(?P<model>[^/:]+):\w+$")

#: The error shape each provider sends; every other provider answers like OpenAI.
_SHAPES: dict[str, Family] = {"anthropic": "anthropic", "google": "gemini", "openrouter": "openrouter"}


def family_of(request: Request) -> Family:
    """Which provider's error shape a request expects (``gemini`` for Google's APIs)."""
    return _SHAPES.get(provider_of(request.url, request.headers), "openai")


def _model(request: Request) -> str:
    if match := _GEMINI_PATH.search(request.path):
        return match.group("model")
    try:
        body = json.loads(request.content) if request.content else None
    except (ValueError, UnicodeDecodeError):
        body = None
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) else "the model"


def _reason(status: int) -> str:
    return reason_phrase(status, "Overloaded" if status == 529 else "Error")


def error_body(request: Request, status: int, retry_after: float | None) -> dict[str, Any]:
    """The JSON body the request's provider sends with ``status``."""
    family = family_of(request)
    fill = {"model": _model(request), "retry": f"{int((retry_after or 1) * 1000)}ms"}
    if family == "anthropic":
        fallback = ("api_error" if status >= 500 else "invalid_request_error", _reason(status))
        kind, message = ANTHROPIC.get(status, fallback)
        error = {"type": kind, "message": message.format(**fill)}
        return {"type": "error", "error": error, "request_id": "req_promptvcr_fault"}
    if family == "gemini":
        name, message = GEMINI.get(status, ("UNKNOWN", _reason(status)))
        return {"error": {"code": status, "message": message.format(**fill), "status": name}}
    if family == "openrouter":
        if status == 429:
            raw = OPENROUTER_429["error"]["metadata"]["raw"].format(**fill)
            return {"error": {**OPENROUTER_429["error"], "metadata": {"provider_name": "Google", "raw": raw}}}
        return {"error": {"code": status, "message": _reason(status)}}
    kind, code, message = OPENAI.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None, _reason(status))
    )
    return {"error": {"message": message.format(**fill), "type": kind, "param": None, "code": code}}


def error_headers(request: Request, status: int, retry_after: float | None) -> dict[str, str]:
    """Headers of the error: content type, the provider's request id and the retry advice.

    ``retry-after`` is whole seconds, rounded up, as the HTTP standard has it;
    ``retry-after-ms``, which the openai and anthropic SDKs read first, keeps the exact value.
    """
    family = family_of(request)
    content_type = "application/json; charset=UTF-8" if family == "gemini" else "application/json"
    headers = {"content-type": content_type}
    if family == "anthropic":
        headers["request-id"] = "req_promptvcr_fault"
    elif family == "openai":
        headers["x-request-id"] = "req_promptvcr_fault"
    if retry_after is not None:
        headers["retry-after"] = str(math.ceil(retry_after))
        headers["retry-after-ms"] = str(round(retry_after * 1000))
    return headers
