"""Drivers for groq, mistralai, cohere, huggingface_hub, and plain HTTP (asset downloads)."""

from __future__ import annotations

from typing import Any

from promptvcr.credentials.byname import redact_json_fields

from .recorded import Clients, Recorded, split_kwargs

__all__ = ["drive_cohere", "drive_groq", "drive_huggingface", "drive_mistral", "drive_plain_http"]


def _stream(events: Any) -> list[Any]:
    return list(events)


def drive_groq(rec: Recorded, clients: Clients) -> Any:
    import groq

    client = groq.Groq(
        api_key="gsk-conformance",
        base_url=rec.base_url("/openai/v1"),
        http_client=clients.httpx(),
        max_retries=0,
    )
    body = rec.json_body
    result = client.chat.completions.create(**split_kwargs(client.chat.completions.create, body))
    return _stream(result) if body.get("stream") else result


def drive_plain_http(rec: Recorded, clients: Clients) -> Any:
    import httpx2

    client = clients.httpx2() or httpx2.Client()
    with client:
        request = rec.interaction.request
        response = client.request(
            rec.method, rec.url, content=request.content or None, headers=request.headers
        )
        if "json" in response.headers.get("content-type", ""):
            # JSON is stored parsed and replayed compactly: its meaning is what must match.
            # Credential fields (an OAuth token answer) are redacted in the cassette by design.
            return {"status": response.status_code, "json": redact_json_fields(response.json())}
        return {"status": response.status_code, "content": response.content.hex()}


def drive_mistral(rec: Recorded, clients: Clients) -> Any:
    from mistralai.client import Mistral

    client = Mistral(api_key="conformance", server_url=rec.base_url("/v1/"), client=clients.httpx2())
    body = dict(rec.json_body)
    if body.pop("stream", False):
        return _stream(client.chat.stream(**split_kwargs(client.chat.stream, body)))
    return client.chat.complete(**split_kwargs(client.chat.complete, body))


def drive_cohere(rec: Recorded, clients: Clients) -> Any:
    import cohere

    origin = rec.base_url("/v")
    body = dict(rec.json_body)
    if rec.path.endswith("/v1/tokenize"):
        v1 = cohere.Client(api_key="conformance", base_url=origin, httpx_client=clients.httpx())
        return v1.tokenize(**body, offline=False)
    client = cohere.ClientV2(api_key="conformance", base_url=origin, httpx_client=clients.httpx())
    if rec.path.endswith("/v2/embed"):
        return client.embed(**body)
    if body.pop("stream", False):
        return _stream(client.chat_stream(**body))
    return client.chat(**body)


def drive_huggingface(rec: Recorded, clients: Clients) -> Any:
    import huggingface_hub
    from huggingface_hub.utils import _http

    http_client = clients.httpx2()
    previous = _http._GLOBAL_CLIENT_FACTORY
    if http_client is not None:
        huggingface_hub.set_client_factory(lambda: http_client)
    try:
        # The full URL: huggingface_hub appends nothing to a URL that ends with /chat/completions.
        client = huggingface_hub.InferenceClient(base_url=rec.url, api_key="hf_conformance")
        body = dict(rec.json_body)
        stream = bool(body.pop("stream", False))
        kwargs = split_kwargs(client.chat_completion, body)
        result = client.chat_completion(stream=stream, **kwargs)
        return _stream(result) if stream else result
    finally:
        if http_client is not None:
            huggingface_hub.set_client_factory(previous)
