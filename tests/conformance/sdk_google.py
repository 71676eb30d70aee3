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
    segments = [s for s in rec.path.split("/") if s and s != "upload"]
    version = vertex["version"] if vertex else segments[0]
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
    if isinstance(data.get("tools"), dict):  # an old single-object form; the SDK takes a list
        data["tools"] = [data["tools"]]
    known = set(config_type.model_fields) | {f.alias for f in config_type.model_fields.values() if f.alias}
    for name in list(data):
        if name not in known:
            extra.setdefault("generationConfig", {})[name] = data.pop(name)
    if extra:
        data["httpOptions"] = types.HttpOptions(extra_body=extra)
    return config_type.model_validate(data) if data else None


def _contents(contents: Any) -> Any:
    """REST ``contents`` (camelCase) as the SDK's models: its converters read model fields,
    and a plain dict in camelCase would lose ``inlineData.mimeType`` on the way."""
    from google.genai import types

    return [types.Content.model_validate(c) for c in contents] if isinstance(contents, list) else contents


def drive_google(rec: Recorded, clients: Clients) -> Any:
    from google.genai import types

    call = _MODEL_CALL.search(rec.path)
    client = _client(rec, clients)
    if call is None:
        return _resource_call(client, rec)
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
    if method in ("batchEmbedContents", "embedContent", "predict"):
        return _embed(client, model, method, body)
    raise NotImplementedError(f"no google-genai driver for models/{model}:{method}")


_EMBED_CONFIG = {
    "taskType": "task_type",
    "task_type": "task_type",
    "outputDimensionality": "output_dimensionality",
    "title": "title",
    "autoTruncate": "auto_truncate",
}


def _embed(client: Any, model: str, method: str, body: dict[str, Any]) -> Any:
    """Embeddings: ``batchEmbedContents`` (Gemini API), ``predict`` and ``embedContent`` (Vertex)."""
    if method == "batchEmbedContents":
        items = body["requests"]
        contents = [item["content"] for item in items]
    elif method == "predict":
        items = body["instances"]
        contents = [item["content"] for item in items]
        items = [{**item, **(body.get("parameters") or {})} for item in items]
    else:
        items = [body]
        contents = [body["content"]]
    config = {_EMBED_CONFIG[k]: v for k, v in items[0].items() if k in _EMBED_CONFIG}
    return client.models.embed_content(model=model, contents=contents, config=config or None)


def _resource_call(client: Any, rec: Recorded) -> Any:
    """Cached contents and file search stores, created, used and deleted by a test."""
    path = rec.path
    name = path.split("/v1beta/", 1)[-1].split("/v1beta1/", 1)[-1]
    if rec.method == "POST" and path.endswith("/cachedContents"):
        body = dict(rec.json_body)
        model = body.pop("model")
        return client.caches.create(model=model, config=body)
    if rec.method == "DELETE" and "/cachedContents/" in path:
        return client.caches.delete(name=name)
    if rec.method == "POST" and path.endswith("/fileSearchStores"):
        return client.file_search_stores.create(config=rec.json_body)
    if rec.method == "DELETE" and "/fileSearchStores/" in path:
        force = rec.query().get("force", "").lower() == "true"
        return client.file_search_stores.delete(name=name, config={"force": force} if force else None)
    if rec.method == "POST" and path.endswith(":uploadToFileSearchStore"):
        return _upload(client, rec, name.removesuffix(":uploadToFileSearchStore"))
    raise NotImplementedError(f"no google-genai driver for {rec.method} {path}")


def _upload(client: Any, rec: Recorded, store: str) -> Any:
    """A resumable upload: this request starts it, the next recorded one carries the bytes."""
    import io

    metadata = rec.json_body
    content = rec.following[0].request.content if rec.following else b""
    config = {re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower(): value for key, value in metadata.items()}
    return client.file_search_stores.upload_to_file_search_store(
        file_search_store_name=store, file=io.BytesIO(content), config=config
    )
