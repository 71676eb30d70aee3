"""Drivers for the openai SDK, and for the providers that speak its wire format through it
(Azure OpenAI, OpenRouter, DeepSeek, Cerebras, Together via Hugging Face, Ollama, ...)."""

from __future__ import annotations

import re
from typing import Any

from .multipart import parse_multipart
from .recorded import Clients, Recorded, split_kwargs

__all__ = ["drive_openai"]

_OPERATIONS = (
    "/chat/completions",
    "/responses/input_tokens",
    "/responses/compact",
    "/responses",
    "/embeddings",
    "/conversations",
    "/vector_stores",
    "/files",
    "/realtime",
    "/models",
)


def _client(rec: Recorded, clients: Clients, suffix: str) -> Any:
    import openai

    return openai.OpenAI(
        api_key="sk-conformance",
        base_url=rec.base_url(suffix),
        http_client=clients.httpx2(),
        max_retries=0,
        default_query=rec.query() or None,
    )


def _operation(path: str) -> str:
    for suffix in _OPERATIONS:
        if suffix in path:
            return suffix
    return ""


def _stream(events: Any) -> list[Any]:
    with events:
        return list(events)


def drive_openai(rec: Recorded, clients: Clients) -> Any:
    suffix = _operation(rec.path)
    client = _client(rec, clients, suffix or rec.path)
    tail = rec.path[rec.path.rfind(suffix) + len(suffix) :] if suffix else ""
    if rec.method == "POST" and suffix == "/chat/completions":
        body = rec.json_body
        if body.get("stream"):
            return _stream(
                client.chat.completions.create(**split_kwargs(client.chat.completions.create, body))
            )
        return client.chat.completions.create(**split_kwargs(client.chat.completions.create, body))
    if rec.method == "POST" and suffix == "/responses" and not tail:
        body = rec.json_body
        result = client.responses.create(**split_kwargs(client.responses.create, body))
        return _stream(result) if body.get("stream") else result
    if rec.method == "POST" and suffix == "/embeddings":
        return client.embeddings.create(**split_kwargs(client.embeddings.create, rec.json_body))
    if rec.method == "POST" and suffix == "/responses/input_tokens":
        count = client.responses.input_tokens.count
        return count(**split_kwargs(count, rec.json_body))
    if rec.method == "POST" and suffix == "/responses/compact":
        compact = client.responses.compact
        return compact(**split_kwargs(compact, rec.json_body))
    if rec.method == "GET" and suffix == "/responses" and re.fullmatch(r"/[^/]+", tail):
        query = rec.query()
        if query.get("stream") == "true":
            starting_after = int(query["starting_after"]) if "starting_after" in query else None
            kwargs: dict[str, Any] = {"stream": True}
            if starting_after is not None:
                kwargs["starting_after"] = starting_after
            plain = _client(rec, clients, suffix)
            plain = plain.with_options(default_query={})
            return _stream(plain.responses.retrieve(tail[1:], **kwargs))
        plain = _client(rec, clients, suffix).with_options(default_query={})
        return plain.responses.retrieve(
            tail[1:], **({"stream": False} if query.get("stream") == "false" else {})
        )
    if rec.method == "POST" and suffix == "/files" and not tail:
        fields, files = parse_multipart(rec.interaction.request)
        name, content, content_type = files["file"]
        return client.files.create(file=(name, content, content_type), **fields)
    return generic_call(client, rec, suffix)


def generic_call(client: Any, rec: Recorded, suffix: str) -> Any:
    """Endpoints without a typed driver go through the SDK's own low-level request methods
    (``client.post/get/delete``), which still build, send and parse through the SDK."""
    path = rec.path[rec.path.rfind(suffix) :] if suffix else rec.path
    client = client.with_options(default_query={})
    options: dict[str, Any] = {"params": rec.query()} if rec.query() else {}
    request = rec.interaction.request
    if rec.method == "GET":
        return client.get(path, cast_to=object, options=options)
    if rec.method == "DELETE":
        return client.delete(path, cast_to=object, options=options)
    if "json" in request.content_type:
        return client.post(path, cast_to=object, body=rec.body, options=options)
    if request.content_type == "multipart/form-data":
        fields, files = parse_multipart(request)
        return client.post(
            path,
            cast_to=object,
            body=fields,
            files=[(k, v) for k, v in files.items()],
            options={**options, "headers": {"Content-Type": "multipart/form-data"}},
        )
    headers = {"Content-Type": request.headers.get("content-type", "application/octet-stream")}
    return client.post(path, cast_to=object, body=request.content, options={**options, "headers": headers})
