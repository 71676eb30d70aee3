"""Drivers for google-genai on the Gemini API and on Vertex AI.

The recorded request is the REST body the SDK built from pydantic-ai's arguments; the
driver turns it back into the SDK's arguments (``contents`` and one ``config``) so the SDK
builds it again. Fields the SDK's config does not model go through ``http_options.extra_body``.
"""

from __future__ import annotations

import re
from typing import Any

from .recorded import Clients, Recorded

__all__ = ["drive_google"]

_VERTEX = re.compile(
    r"/(?P<version>v1[^/]*)/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/publishers/google/"
)
_MODEL_CALL = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>\w+)$")
_CONFIG_FIELDS = ("systemInstruction", "tools", "toolConfig", "safetySettings", "cachedContent", "labels")


def _client(rec: Recorded, clients: Clients) -> Any:
    from google import genai
    from google.genai import types

    vertex = _VERTEX.search(rec.path)
    version = vertex["version"] if vertex else rec.path.split("/")[1]
    options = types.HttpOptions(
        base_url=rec.origin + "/",
        api_version=version,
        httpx_client=clients.httpx2(),
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    if vertex or rec.path.startswith("/google-vertex/"):
        from google.auth.credentials import AnonymousCredentials

        project = vertex["project"] if vertex else "conformance"
        location = vertex["location"] if vertex else "global"
        return genai.Client(
            vertexai=True,
            project=project,
            location=location,
            credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
            http_options=options,
        )
    return genai.Client(api_key="conformance-key", http_options=options)


def _config(body: dict[str, Any], config_type: Any, *fields: str) -> Any:
    from google.genai import types

    data: dict[str, Any] = dict(body.get("generationConfig") or {})
    extra: dict[str, Any] = {}
    for name in fields:
        if name in body:
            data[name] = body[name]
    known = set(config_type.model_fields) | {f.alias for f in config_type.model_fields.values() if f.alias}
    for name in list(data):
        if name not in known:
            extra.setdefault("generationConfig", {})[name] = data.pop(name)
    if extra:
        data["httpOptions"] = types.HttpOptions(extra_body=extra)
    return config_type.model_validate(data) if data else None


def drive_google(rec: Recorded, clients: Clients) -> Any:
    from google.genai import types

    call = _MODEL_CALL.search(rec.path)
    client = _client(rec, clients)
    if call is None:
        raise NotImplementedError(f"no google-genai driver for {rec.method} {rec.path}")
    model, method = call["model"], call["method"]
    body = rec.json_body
    if method == "generateContent":
        config = _config(body, types.GenerateContentConfig, *_CONFIG_FIELDS)
        return client.models.generate_content(model=model, contents=body["contents"], config=config)
    if method == "streamGenerateContent":
        config = _config(body, types.GenerateContentConfig, *_CONFIG_FIELDS)
        return list(
            client.models.generate_content_stream(model=model, contents=body["contents"], config=config)
        )
    if method == "countTokens":
        inner = body.get("generateContentRequest") or body
        config = _config(inner, types.CountTokensConfig, "systemInstruction", "tools")
        return client.models.count_tokens(model=model, contents=inner.get("contents"), config=config)
    raise NotImplementedError(f"no google-genai driver for models/{model}:{method}")
