"""Vertex AI's gRPC client (google-cloud-aiplatform's PredictionServiceClient and its asyncio
twin) against a real gRPC server on 127.0.0.1: recorded, then replayed with the server stopped
and no credentials, compared with the same client live."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from google.api_core import exceptions as core_exceptions
from google.cloud import aiplatform_v1 as v1
from vertex_fake import SECRET_METADATA, SERVICE, async_client, request, sync_client, vertex_server

from promptvcr import CassetteMiss, use_cassette

PUBLIC_KINDS = (grpc.RpcError, grpc.Call, grpc.Future, grpc.aio.AioRpcError)


def _error(error: core_exceptions.GoogleAPICallError) -> dict[str, Any]:
    cause = error.__cause__
    return {
        "class": type(error).__name__,
        "code": error.code,
        "message": error.message,
        "details": [type(d).__name__ + ":" + str(d) for d in error.details],
        # What grpc promises of the error it raised: a unary call's is its exact class; a sync
        # stream raises the stream object itself (grpc's private class live, promptvcr's in replay).
        "grpc class": type(cause).__name__ if not isinstance(cause, grpc.Future) else "a stream",
        "grpc kinds": [kind.__name__ for kind in PUBLIC_KINDS if isinstance(cause, kind)],
        "grpc code": cause.code() if isinstance(cause, grpc.RpcError) else None,  # type: ignore[attr-defined]
    }


def sync_calls(address: str) -> dict[str, Any]:
    """What the sync client sees of each call, as bytes and statuses to compare."""
    client = sync_client(address)
    seen: dict[str, Any] = {}
    answer = client.generate_content(request("hello vertex"), metadata=SECRET_METADATA)
    seen["unary"] = v1.GenerateContentResponse.serialize(answer)
    seen["stream"] = [
        v1.GenerateContentResponse.serialize(m)
        for m in client.stream_generate_content(request("one two three"), metadata=SECRET_METADATA)
    ]
    with pytest.raises(core_exceptions.GoogleAPICallError) as unary_error:
        client.generate_content(request("over quota"))
    seen["unary error"] = _error(unary_error.value)
    got: list[bytes] = []
    with pytest.raises(core_exceptions.GoogleAPICallError) as stream_error:
        for m in client.stream_generate_content(request("a quota b c")):
            got.append(v1.GenerateContentResponse.serialize(m))
    seen["stream error"] = {**_error(stream_error.value), "before": got}
    transport = client._transport
    raw_call = transport.grpc_channel.unary_unary(f"/{SERVICE}/GenerateContent")  # bytes, no deserializer
    raw, call = raw_call.with_call(v1.GenerateContentRequest.serialize(request("raw bytes")))
    seen["raw"] = (raw, dict(call.initial_metadata()), dict(call.trailing_metadata()), call.code())
    return seen


async def async_calls(address: str) -> dict[str, Any]:
    client, channel = async_client(address)
    seen: dict[str, Any] = {}
    answer = await client.generate_content(request("hello vertex"), metadata=SECRET_METADATA)
    seen["unary"] = v1.GenerateContentResponse.serialize(answer)
    stream = await client.stream_generate_content(request("one two three"), metadata=SECRET_METADATA)
    seen["stream"] = [v1.GenerateContentResponse.serialize(m) async for m in stream]
    with pytest.raises(core_exceptions.GoogleAPICallError) as unary_error:
        await client.generate_content(request("over quota"))
    seen["unary error"] = _error(unary_error.value)
    got: list[bytes] = []
    with pytest.raises(core_exceptions.GoogleAPICallError) as stream_error:
        async for m in await client.stream_generate_content(request("a quota b c")):
            got.append(v1.GenerateContentResponse.serialize(m))
    seen["stream error"] = {**_error(stream_error.value), "before": got}
    call = channel.unary_unary(f"/{SERVICE}/GenerateContent")(
        v1.GenerateContentRequest.serialize(request("raw bytes"))
    )
    raw = await call
    seen["raw"] = (
        raw,
        dict(tuple(await call.initial_metadata())),
        dict(tuple(await call.trailing_metadata())),
        await call.code(),
    )
    await channel.close()
    return seen


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each client live, then recorded, against one server; the server stopped afterwards."""
    folder = tmp_path_factory.mktemp("vertex")
    with vertex_server() as server:
        live = {"sync": sync_calls(server.address), "async": asyncio.run(async_calls(server.address))}
        with use_cassette(folder / "sync.yaml", record_mode="rewrite", on_record_error="keep"):
            recording = {"sync": sync_calls(server.address)}
        with use_cassette(folder / "async.yaml", record_mode="rewrite", on_record_error="keep"):
            recording["async"] = asyncio.run(async_calls(server.address))
    return {"folder": folder, "address": server.address, "live": live, "recording": recording}


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_replay_with_the_server_stopped_gives_what_the_client_saw_live(
    recorded: dict[str, Any], flavour: str
) -> None:
    with use_cassette(recorded["folder"] / f"{flavour}.yaml"):
        replayed = (
            sync_calls(recorded["address"])
            if flavour == "sync"
            else asyncio.run(async_calls(recorded["address"]))
        )
    live = recorded["live"][flavour]
    assert recorded["recording"][flavour] == live  # recording changed nothing the client saw
    assert replayed == live
    assert live["unary error"]["class"] == "TooManyRequests" or live["unary error"]["code"] == 429
    assert len(live["stream error"]["before"]) == 2 and len(live["stream"]) == 3
    assert any("RetryInfo" in d for d in live["unary error"]["details"])
    assert live["raw"][1]["x-vertex-region"] == "us-central1" and live["raw"][2]["x-request-cost"] == "3"


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_the_cassette_is_readable_and_holds_no_credential(recorded: dict[str, Any], flavour: str) -> None:
    text = (recorded["folder"] / f"{flavour}.yaml").read_text()
    assert "google.cloud.aiplatform.v1.GenerateContentResponse" in text
    assert "echo: hello vertex" in text and "grpc://" in text
    assert "ya29" not in text and "AIzaSy" not in text and "never-kept" not in text


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_changed_request_field_misses_with_a_field_diff(recorded: dict[str, Any], flavour: str) -> None:
    with pytest.raises(CassetteMiss) as miss, use_cassette(recorded["folder"] / f"{flavour}.yaml"):
        if flavour == "sync":
            sync_client(recorded["address"]).generate_content(request("hello vortex"))
        else:

            async def call() -> None:
                client, channel = async_client(recorded["address"])
                await client.generate_content(request("hello vortex"))
                await channel.close()

            asyncio.run(call())
    message = str(miss.value)
    assert "GenerateContent" in message
    assert 'contents[0].parts[0].text: "hello vertex" -> "hello vortex"' in message
