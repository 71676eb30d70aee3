"""Drivers for AWS Bedrock Runtime: boto3's ``bedrock-runtime`` client, which sends through
botocore's own urllib3 pool, and the anthropic SDK's ``AnthropicBedrock`` (httpx2) for the
requests it made.

The boto3 call is found from the recorded request the way botocore built it: the operation
whose HTTP method and ``requestUri`` template match the path (``/model/{modelId}/converse``
is ``Converse``), its URI labels from the path, its header members from the recorded
headers, and its body members from the recorded JSON, read back through the operation's
input shape (a blob travels base64 in JSON and is handed to boto3 as bytes again). Nothing
is special-cased per operation, so ``converse``, ``converse_stream``, ``invoke_model``,
``count_tokens`` and any operation the corpus grows all go the same way.

The reference pass serves the recorded bytes to botocore from its ``before-send`` event,
botocore's documented hook for answering a request without sending it: the answer then goes
through botocore's own parsing (JSON, event-stream frames, streaming bodies) but never
through urllib3, so never through promptvcr.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from promptvcr.cassettes.models import Response

from .recorded import Clients, Recorded, split_kwargs, urllib3_response

__all__ = ["boto3_call", "drive_anthropic_bedrock", "drive_boto3", "is_botocore_request", "serve_recorded"]

_SERVICE = "bedrock-runtime"
_REGION_HOST = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$")
#: Headers that describe the bytes on the wire; the reference recomputes ``content-length``
#: from the recorded body (the corpus's is stale where its body was re-serialized).
#: Per-call values in ``ResponseMetadata``: the request id and the raw headers (a replayed
#: answer carries only the headers promptvcr stores). The status and retry count stay.
_VOLATILE_METADATA = frozenset({"RequestId", "HostId", "HTTPHeaders"})


def is_botocore_request(rec: Recorded) -> bool:
    """botocore stamps every request with ``amz-sdk-invocation-id``/``amz-sdk-request``;
    the anthropic SDK's Bedrock client, which signs with botocore but sends with httpx2,
    does not."""
    return any(name.startswith("amz-sdk-") for name in rec.interaction.request.headers)


@functools.cache
def _session() -> Any:
    """One botocore session for the run: loading the service model is its slow part."""
    import botocore.session

    return botocore.session.Session()


@functools.cache
def _operations() -> tuple[tuple[str, re.Pattern[str], Any], ...]:
    """``(HTTP method, path pattern, operation model)`` for every bedrock-runtime operation;
    the pattern allows a prefix before the template (a gateway mounting Bedrock under
    ``/bedrock``) and captures it as ``prefix``."""
    model = _session().get_service_model(_SERVICE)
    found = []
    for name in model.operation_names:
        operation = model.operation_model(name)
        template = operation.http["requestUri"].split("?", 1)[0]
        pattern = re.escape(template)
        pattern = re.sub(r"\\\{(\w+)\\\+\\\}", r"(?P<\1>.+)", pattern)
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", pattern)
        found.append((operation.http["method"], re.compile(f"(?P<prefix>.*?){pattern}"), operation))
    # The longest template first: ``/async-invoke/{arn}`` before ``/async-invoke``.
    return tuple(sorted(found, key=lambda f: -len(f[2].http["requestUri"])))


def _from_wire(shape: Any, value: Any) -> Any:
    """A JSON value as boto3 takes it for ``shape``: blobs back to bytes, the rest as is."""
    if value is None:
        return None
    kind = shape.type_name
    if kind == "structure" and getattr(shape, "is_document_type", False):
        return value
    if kind == "structure" and isinstance(value, dict):
        members = {m.serialization.get("name", name): (name, m) for name, m in shape.members.items()}
        params = {}
        for key, item in value.items():
            name, member = members.get(key, (key, None))
            params[name] = item if member is None else _from_wire(member, item)
        return params
    if kind == "list" and isinstance(value, list):
        return [_from_wire(shape.member, item) for item in value]
    if kind == "map" and isinstance(value, dict):
        return {key: _from_wire(shape.value, item) for key, item in value.items()}
    if kind == "blob" and isinstance(value, str):
        return base64.b64decode(value)
    return value


def _scalar(shape: Any, text: str) -> Any:
    if shape.type_name in ("integer", "long"):
        return int(text)
    if shape.type_name in ("float", "double"):
        return float(text)
    if shape.type_name == "boolean":
        return text.lower() == "true"
    return text


def boto3_call(rec: Recorded) -> tuple[Any, str, dict[str, Any]]:
    """The operation, the URL prefix before its template, and boto3's keyword arguments."""
    for method, pattern, operation in _operations():
        match = pattern.fullmatch(rec.path)
        if method != rec.method or match is None:
            continue
        shape = operation.input_shape
        params: dict[str, Any] = {}
        request = rec.interaction.request
        query = rec.query()
        body_members = {}
        for name, member in shape.members.items() if shape is not None else ():
            where, wire = member.serialization.get("location"), member.serialization.get("name", name)
            if where == "uri":
                params[name] = unquote(match.group(wire))
            elif where == "header" and wire.lower() in request.headers:
                params[name] = _scalar(member, request.headers[wire.lower()])
            elif where == "querystring" and wire in query:
                params[name] = _scalar(member, query[wire])
            elif where is None:
                body_members[name] = member
        payload = shape.serialization.get("payload") if shape is not None else None
        if payload is not None:
            member = shape.members[payload]
            if member.type_name == "blob":
                params[payload] = request.content
            elif request.content:
                params[payload] = _from_wire(member, json.loads(request.content))
        elif request.content and body_members:
            params.update(_from_wire(shape, json.loads(request.content)))
        return operation, match.group("prefix"), params
    raise LookupError(f"no bedrock-runtime operation is {rec.method} {rec.path}")


def _client(rec: Recorded, prefix: str) -> Any:
    from botocore.config import Config

    region = _REGION_HOST.match(rec.host)
    options: dict[str, Any] = {}
    if region is None or prefix:  # a gateway or proxy: the client is pointed at it
        options["endpoint_url"] = rec.origin + prefix
    return _session().create_client(
        _SERVICE,
        region_name=region.group(1) if region else "us-east-1",
        aws_access_key_id="AKIDCONFORMANCE",
        aws_secret_access_key="conformance-not-a-secret",
        config=Config(retries={"total_max_attempts": 1}),
        **options,
    )


def _result(operation: Any, answer: dict[str, Any]) -> dict[str, Any]:
    """The parsed answer in a comparable form: streams read through botocore's own parsers."""
    from botocore.exceptions import ClientError

    plain: dict[str, Any] = {}
    for key, value in answer.items():
        if key == "ResponseMetadata":
            value = {k: v for k, v in value.items() if k not in _VOLATILE_METADATA}
        elif operation.has_event_stream_output and hasattr(value, "__iter__") and hasattr(value, "close"):
            events: list[Any] = []
            try:
                for event in value:
                    events.append(event)
            except ClientError as error:  # an exception event mid-stream ends it: part of the answer
                events.append({"error": type(error).__name__, "response": error.response})
            finally:
                value.close()
            value = events
        elif hasattr(value, "read") and hasattr(value, "close"):  # StreamingBody
            content = value.read()
            value.close()
            try:
                value = {"json": json.loads(content)}
            except (ValueError, UnicodeDecodeError):
                value = {"bytes": base64.b64encode(content).decode("ascii")}
        plain[key] = value
    return plain


def drive_boto3(rec: Recorded, clients: Clients) -> Any:
    from botocore import xform_name

    operation, prefix, params = boto3_call(rec)
    client = _client(rec, prefix)
    clients.botocore(client)
    answer = getattr(client, xform_name(operation.name))(**params)
    return _result(operation, answer)


def drive_anthropic_bedrock(rec: Recorded, clients: Clients) -> Any:
    """``AnthropicBedrock.messages.create``: the model from the path, the rest from the body.
    The client adds ``anthropic_beta`` from ``betas``; ``anthropic_version`` goes in
    ``extra_body``, as a user pins it (the client's default follows the SDK's version)."""
    import anthropic

    region = _REGION_HOST.match(rec.host)
    client = anthropic.AnthropicBedrock(
        aws_access_key="AKIDCONFORMANCE",
        aws_secret_key="conformance-not-a-secret",
        aws_region=region.group(1) if region else "us-east-1",
        base_url=None if region else rec.origin,
        http_client=clients.httpx2(),
        max_retries=0,
    )
    body = dict(rec.json_body)
    betas = body.pop("anthropic_beta", None)
    messages: Any = client.beta.messages if betas else client.messages
    fixed: dict[str, Any] = {"model": unquote(rec.path.split("/")[2])}
    if betas:
        fixed["betas"] = betas
    return messages.create(**split_kwargs(messages.create, body, **fixed))


def serve_recorded(client: Any, next_response: Callable[[], Response]) -> None:
    """Answer every request of a botocore client with the next recorded response, bytes as
    recorded, from botocore's ``before-send`` event (so urllib3 is never reached)."""
    from botocore.awsrequest import AWSResponse

    def answer(request: Any, **_: Any) -> AWSResponse:
        recorded = next_response()
        raw = urllib3_response(recorded)
        return AWSResponse(request.url, recorded.status, dict(raw.headers), raw)

    client.meta.events.register(f"before-send.{client.meta.service_model.service_id.hyphenize()}", answer)
