"""Drivers for groq, mistralai, cohere, huggingface_hub, and plain HTTP (asset downloads)."""

from __future__ import annotations

from typing import Any

from .recorded import Clients, Recorded, split_kwargs

__all__ = ["drive_cohere", "drive_groq", "drive_huggingface", "drive_mistral", "drive_plain_http"]


def _stream(events: Any) -> list[Any]:
    return list(events)


def drive_groq(rec: Recorded, clients: Clients) -> Any:
    import groq

    client = groq.Groq(api_key="gsk-conformance", base_url=rec.base_url("/openai/v1"), http_client=clients.httpx(), max_retries=0)
    body = rec.json_body
    result = client.chat.completions.create(**split_kwargs(client.chat.completions.create, body))
    return _stream(result) if body.get("stream") else result


def drive_plain_http(rec: Recorded, clients: Clients) -> Any:
    import httpx2

    client = clients.httpx2() or httpx2.Client()
    with client:
        request = rec.interaction.request
        response = client.request(rec.method, rec.url, content=request.content or None, headers=request.headers)
        return {"status": response.status_code, "content": response.content.hex()}


def drive_mistral(rec: Recorded, clients: Clients) -> Any:
    raise NotImplementedError("mistral driver")


def drive_cohere(rec: Recorded, clients: Clients) -> Any:
    raise NotImplementedError("cohere driver")


def drive_huggingface(rec: Recorded, clients: Clients) -> Any:
    raise NotImplementedError("huggingface driver")
