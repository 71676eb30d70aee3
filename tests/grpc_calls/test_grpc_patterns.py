"""The call patterns and call styles no client above exercises, on a bare channel with
protobuf's own ``Struct`` messages: a client stream with one answer (sync ``__call__``,
``with_call`` and ``future``; asyncio with an iterator and with ``write``/``done_writing``),
each replayed with the server stopped as it was live; and an error the cassette did not keep."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from grpc_servers import GrpcServer, handler

from promptvcr import CassetteMiss, use_cassette

SUM = "/demo.Adder/Sum"


def _struct(**values: Any) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(values)
    return message


def _sum(requests: Iterator[struct_pb2.Struct], context: grpc.ServicerContext) -> struct_pb2.Struct:
    numbers = [message["n"] for message in requests]
    if any(n < 0 for n in numbers):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "negative numbers are not summed")
    if sum(numbers) > 100:
        context.abort(grpc.StatusCode.UNAVAILABLE, "too much to add right now")
    context.set_trailing_metadata((("x-count", str(len(numbers))),))
    return _struct(total=sum(numbers))


def _server() -> GrpcServer:
    method = grpc.stream_unary_rpc_method_handler(
        _sum, struct_pb2.Struct.FromString, struct_pb2.Struct.SerializeToString
    )
    return GrpcServer(handler("demo.Adder", {"Sum": method}))


def _adder(channel: Any) -> Any:
    return channel.stream_unary(
        SUM,
        request_serializer=struct_pb2.Struct.SerializeToString,
        response_deserializer=struct_pb2.Struct.FromString,
    )


def _numbers(*values: float) -> Iterator[struct_pb2.Struct]:
    return iter([_struct(n=value) for value in values])


def sync_styles(address: str) -> dict[str, Any]:
    adder = _adder(grpc.insecure_channel(address))
    seen: dict[str, Any] = {"call": adder(_numbers(1, 2, 3))["total"]}
    answer, call = adder.with_call(_numbers(4, 5))
    seen["with_call"] = (answer["total"], call.code(), dict(call.trailing_metadata()))
    seen["future"] = adder.future(_numbers(6)).result()["total"]
    with pytest.raises(grpc.RpcError) as failed:
        adder(_numbers(1, -1))
    seen["error"] = (type(failed.value).__name__, failed.value.code(), failed.value.details())  # type: ignore[attr-defined]
    seen["unavailable"] = adder.future(_numbers(500)).exception().code()  # type: ignore[union-attr]
    return seen


async def async_styles(address: str) -> dict[str, Any]:
    async with grpc.aio.insecure_channel(address) as channel:
        adder = _adder(channel)
        seen: dict[str, Any] = {"iterator": (await adder(_numbers(1, 2, 3)))["total"]}
        call = adder()
        for value in (7, 8):
            await call.write(_struct(n=value))
        await call.done_writing()
        trailing = dict(tuple(await call.trailing_metadata()))  # pairs: grpcio 1.62's keys() gives pairs too
        seen["written"] = ((await call)["total"], await call.code(), trailing)
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await adder(_numbers(1, -1))
        seen["error"] = (type(failed.value).__name__, failed.value.code(), failed.value.details())
        with pytest.raises(grpc.aio.AioRpcError) as unavailable:
            await adder(_numbers(500))
        seen["unavailable"] = unavailable.value.code()
    return seen


STYLES: dict[str, Any] = {"sync": sync_styles, "async": lambda address: asyncio.run(async_styles(address))}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("patterns")
    with _server() as server:
        live = {flavour: styles(server.address) for flavour, styles in STYLES.items()}
        for flavour, styles in STYLES.items():
            with use_cassette(folder / f"{flavour}.yaml", record_mode="rewrite", on_record_error="keep"):
                assert styles(server.address) == live[flavour]
            warned = pytest.warns(UserWarning, match="got status 503 while recording")
            with warned, use_cassette(folder / f"{flavour}-skip.yaml", record_mode="rewrite"):
                assert styles(server.address) == live[flavour]
    return {"folder": folder, "address": server.address, "live": live}


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_client_stream_replays_in_every_call_style(recorded: dict[str, Any], flavour: str) -> None:
    with use_cassette(Path(recorded["folder"]) / f"{flavour}.yaml"):
        assert STYLES[flavour](recorded["address"]) == recorded["live"][flavour]
    assert recorded["live"][flavour]["error"][1] == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_unavailable_is_not_kept_unless_asked_as_a_503_is_not(recorded: dict[str, Any], flavour: str) -> None:
    """``on_record_error`` reads a gRPC status as the HTTP status that says the same: an
    INVALID_ARGUMENT (400) is an answer and kept; UNAVAILABLE (503) is kept only when asked."""
    kept = (Path(recorded["folder"]) / f"{flavour}.yaml").read_text()
    skipped = (Path(recorded["folder"]) / f"{flavour}-skip.yaml").read_text()
    assert 'grpc-status: "14"' in kept and 'grpc-status: "14"' not in skipped
    assert 'grpc-status: "3"' in skipped
    with pytest.raises(CassetteMiss), use_cassette(Path(recorded["folder"]) / f"{flavour}-skip.yaml"):
        STYLES[flavour](recorded["address"])
