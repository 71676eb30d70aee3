"""Declared faults on gRPC calls (docs/faults.md): each raises, through Vertex AI's client, what
the same client raises when a live server fails that way."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.api_core import exceptions as core_exceptions
from vertex_fake import async_client, request, sync_client, vertex_server

from promptvcr import use_cassette
from promptvcr.faults import cut_stream, http_error, read_timeout

UNARY = "/google.cloud.aiplatform.v1.PredictionService/GenerateContent"
STREAM = "/google.cloud.aiplatform.v1.PredictionService/StreamGenerateContent"


def _seen(error: core_exceptions.GoogleAPICallError) -> dict[str, Any]:
    cause = error.__cause__
    return {
        "class": type(error).__name__,
        "grpc code": cause.code() if isinstance(cause, grpc.RpcError) else None,  # type: ignore[attr-defined]
        "retry": [str(d.retry_delay.seconds) for d in error.details if hasattr(d, "retry_delay")],
    }


def _sync(address: str, text: str, streamed: bool, timeout: float | None = None) -> tuple[list[str], Any]:
    client, got = sync_client(address), []
    try:
        if streamed:
            for m in client.stream_generate_content(request(text), timeout=timeout):
                got.append(m.candidates[0].content.parts[0].text)
        else:
            got.append(
                client.generate_content(request(text), timeout=timeout).candidates[0].content.parts[0].text
            )
    except core_exceptions.GoogleAPICallError as error:
        return got, _seen(error)
    return got, None


def _async(address: str, text: str, streamed: bool, timeout: float | None = None) -> tuple[list[str], Any]:
    async def run() -> tuple[list[str], Any]:
        (client, channel), got = async_client(address), []
        try:
            if streamed:
                async for m in await client.stream_generate_content(request(text), timeout=timeout):
                    got.append(m.candidates[0].content.parts[0].text)
            else:
                answer = await client.generate_content(request(text), timeout=timeout)
                got.append(answer.candidates[0].content.parts[0].text)
        except core_exceptions.GoogleAPICallError as error:
            return got, _seen(error)
        finally:
            await channel.close()
        return got, None

    return asyncio.run(run())


CALLS: dict[str, Callable[..., tuple[list[str], Any]]] = {"sync": _sync, "async": _async}


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A recording of one answer and one stream per client, and what a live server's failures
    look like through each client (the references the faults are compared with)."""
    folder = tmp_path_factory.mktemp("vertex-faults")
    live: dict[str, dict[str, Any]] = {}
    with vertex_server() as server:
        for flavour, call in CALLS.items():
            with use_cassette(folder / f"{flavour}.yaml", record_mode="rewrite"):
                call(server.address, "hello vertex", False)
                call(server.address, "one two three", True)
            live[flavour] = {
                "unavailable": call(server.address, "unavailable", False),
                "quota": call(server.address, "quota", False),
                "deadline": call(server.address, "slow", False, 0.3),
            }
    return {"folder": folder, "address": server.address, "live": live}


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize(
    ("case", "fault"),
    [
        ("unavailable", http_error(503, path=UNARY)),
        ("quota", http_error(429, retry_after=7, path=UNARY)),
        ("deadline", read_timeout(path=UNARY)),
    ],
)
def test_a_failing_call_raises_what_the_client_raises_live(
    setting: dict[str, Any], flavour: str, case: str, fault: Any
) -> None:
    with use_cassette(Path(setting["folder"]) / f"{flavour}.yaml", faults=[fault]):
        got, error = CALLS[flavour](setting["address"], "hello vertex", False)
    live_got, live_error = setting["live"][flavour][case]
    assert live_error is not None and live_got == []
    assert (got, error) == (live_got, live_error)


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_stream_cut_after_one_message_gives_that_message_then_unavailable(
    setting: dict[str, Any], flavour: str
) -> None:
    folder = Path(setting["folder"])
    with use_cassette(folder / f"{flavour}.yaml"):
        whole, no_error = CALLS[flavour](setting["address"], "one two three", True)
    with use_cassette(folder / f"{flavour}.yaml", faults=[cut_stream(after_events=1, path=STREAM)]):
        got, error = CALLS[flavour](setting["address"], "one two three", True)
    assert (whole, no_error) == (["one", "two", "three"], None)
    assert got == ["one"]
    assert error["class"] == setting["live"][flavour]["unavailable"][1]["class"]
    assert error["grpc code"] == grpc.StatusCode.UNAVAILABLE
