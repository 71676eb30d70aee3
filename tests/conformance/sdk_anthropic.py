"""Drivers for the anthropic SDK: messages (plain, beta, streamed), token counting, files."""

from __future__ import annotations

from typing import Any

from .multipart import parse_multipart
from .recorded import Clients, Recorded, split_kwargs
from .sdk_openai import generic_call

__all__ = ["drive_anthropic"]


def drive_anthropic(rec: Recorded, clients: Clients) -> Any:
    import anthropic

    beta = rec.query().get("beta") == "true"
    client = anthropic.Anthropic(
        api_key="sk-ant-conformance",
        base_url=rec.base_url("/v1/"),
        http_client=clients.httpx2(),
        max_retries=0,
    )
    messages = client.beta.messages if beta else client.messages
    headers = (
        {"anthropic-beta": rec.interaction.request.headers["anthropic-beta"]}
        if ("anthropic-beta" in rec.interaction.request.headers)
        else {}
    )
    if rec.method == "POST" and rec.path.endswith("/v1/messages"):
        body = rec.json_body
        kwargs = split_kwargs(messages.create, body)
        if headers:
            kwargs["extra_headers"] = headers
        if body.get("stream"):
            with messages.create(**kwargs) as stream:
                return list(stream)
        return messages.create(**kwargs)
    if rec.method == "POST" and rec.path.endswith("/v1/messages/count_tokens"):
        kwargs = split_kwargs(messages.count_tokens, rec.json_body)
        if headers:
            kwargs["extra_headers"] = headers
        return messages.count_tokens(**kwargs)
    if rec.method == "POST" and rec.path.endswith("/v1/files") and beta:
        _, files = parse_multipart(rec.interaction.request)
        return client.beta.files.upload(file=files["file"], extra_headers=headers or None)
    return generic_call(client, rec, "/v1/")
