"""qdrant-client with ``prefer_grpc=True`` (sync and asyncio) against a real gRPC server on
127.0.0.1 speaking qdrant's own messages: upsert then query, recorded, then replayed with the
server stopped; the ``api-key`` metadata never reaches the cassette."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_servers import GrpcServer, handler
from qdrant_client import AsyncQdrantClient, QdrantClient, models
from qdrant_client import grpc as q

from promptvcr import CassetteMiss, use_cassette
from promptvcr.faults import http_error

API_KEY = "qdrant-live-key-3f9c2a7e51b84d06"
POINTS = [
    models.PointStruct(id=1, vector=[1.0, 0.0, 0.0], payload={"city": "Berlin"}),
    models.PointStruct(id=2, vector=[0.6, 0.8, 0.0], payload={"city": "Paris"}),
    models.PointStruct(id=3, vector=[0.0, 0.0, 1.0], payload={"city": "Rome"}),
]


def _dense(vector: Any) -> list[float]:
    return list(vector.dense.data) if vector.HasField("dense") else list(vector.data)


class Store:
    """The points upserted, scored by dot product: enough of qdrant to answer these clients."""

    def __init__(self) -> None:
        self.points: dict[int, q.PointStruct] = {}
        self.keys: list[str] = []

    def upsert(self, request: q.UpsertPoints, context: grpc.ServicerContext) -> q.PointsOperationResponse:
        self.keys.append(dict(context.invocation_metadata()).get("api-key", ""))
        if request.collection_name != "cities":
            context.abort(
                grpc.StatusCode.NOT_FOUND, f"Not found: Collection `{request.collection_name}` doesn't exist!"
            )
        for point in request.points:
            self.points[point.id.num] = point
        result = q.UpdateResult(operation_id=len(self.points), status=q.UpdateStatus.Completed)
        return q.PointsOperationResponse(result=result, time=0.000125)

    def query(self, request: q.QueryPoints, context: grpc.ServicerContext) -> q.QueryResponse:
        wanted = _dense(request.query.nearest)
        scored = sorted(
            (
                (sum(a * b for a, b in zip(wanted, _dense(p.vectors.vector), strict=True)), p)
                for p in self.points.values()
            ),
            key=lambda pair: -pair[0],
        )[: request.limit]
        found = [q.ScoredPoint(id=p.id, payload=p.payload, score=score, version=3) for score, p in scored]
        return q.QueryResponse(result=found, time=0.00025)


def _server(store: Store) -> GrpcServer:
    def method(fn: Any, request: Any, response: Any) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(fn, request.FromString, response.SerializeToString)

    points = {
        "Upsert": method(store.upsert, q.UpsertPoints, q.PointsOperationResponse),
        "Query": method(store.query, q.QueryPoints, q.QueryResponse),
    }
    return GrpcServer(handler("qdrant.Points", points))


def _client_options(port: int) -> dict[str, Any]:
    return {
        "host": "127.0.0.1",
        "grpc_port": port,
        "port": 1,  # the REST port: never used here (a REST call would fail at once)
        "prefer_grpc": True,
        "https": False,
        "api_key": API_KEY,
        "check_compatibility": False,
    }


def _seen(updated: models.UpdateResult, found: models.QueryResponse) -> list[Any]:
    return [updated.model_dump(), [(p.id, round(p.score, 6), p.payload, p.version) for p in found.points]]


def _failure(error: grpc.RpcError) -> tuple[Any, ...]:
    return type(error).__name__, error.code(), error.details()  # type: ignore[attr-defined]


def sync_calls(port: int, query: list[float]) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Api key is used with an insecure connection": on purpose
        client = QdrantClient(**_client_options(port))
    updated = client.upsert("cities", points=POINTS)
    found = client.query_points("cities", query=query, limit=2)
    try:
        client.upsert("towns", points=POINTS)
    except grpc.RpcError as error:
        failed = _failure(error)
    client.close()
    return [*_seen(updated, found), failed]


async def async_calls(port: int, query: list[float]) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = AsyncQdrantClient(**_client_options(port))
    updated = await client.upsert("cities", points=POINTS)
    found = await client.query_points("cities", query=query, limit=2)
    try:
        await client.upsert("towns", points=POINTS)
    except grpc.RpcError as error:
        failed = _failure(error)
    await client.close()
    return [*_seen(updated, found), failed]


CALLS: dict[str, Any] = {
    "sync": sync_calls,
    "async": lambda port, query: asyncio.run(async_calls(port, query)),
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("qdrant")
    store = Store()
    with _server(store) as server:
        live = {flavour: call(server.port, [0.8, 0.6, 0.0]) for flavour, call in CALLS.items()}
        for flavour, call in CALLS.items():
            with use_cassette(folder / f"{flavour}.yaml", record_mode="rewrite"):
                assert call(server.port, [0.8, 0.6, 0.0]) == live[flavour]
    assert store.keys and set(store.keys) == {API_KEY}  # the key went out on every call
    return {"folder": folder, "port": server.port, "live": live}


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_upsert_and_query_replay_with_the_server_stopped(recorded: dict[str, Any], flavour: str) -> None:
    with use_cassette(Path(recorded["folder"]) / f"{flavour}.yaml"):
        replayed = CALLS[flavour](recorded["port"], [0.8, 0.6, 0.0])
    assert replayed == recorded["live"][flavour]
    assert [city for _, _, city, _ in replayed[1]] == [{"city": "Paris"}, {"city": "Berlin"}]


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_the_api_key_never_reaches_the_cassette(recorded: dict[str, Any], flavour: str) -> None:
    text = (Path(recorded["folder"]) / f"{flavour}.yaml").read_text()
    assert "qdrant.Points/Query" in text and "qdrant.QueryResponse" in text
    assert API_KEY not in text and "3f9c2a7e51b84d06" not in text


def test_a_changed_query_vector_misses(recorded: dict[str, Any]) -> None:
    with pytest.raises(CassetteMiss) as miss, use_cassette(Path(recorded["folder"]) / "sync.yaml"):
        sync_calls(recorded["port"], [0.0, 1.0, 0.0])
    assert "qdrant.Points/Query" in str(miss.value) and "query.nearest" in str(miss.value)


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_an_error_replays_as_the_same_exception(recorded: dict[str, Any], flavour: str) -> None:
    live = recorded["live"][flavour][2]
    assert live[1] == grpc.StatusCode.NOT_FOUND and live[0] in ("_InactiveRpcError", "AioRpcError")
    with use_cassette(Path(recorded["folder"]) / f"{flavour}.yaml"):
        assert CALLS[flavour](recorded["port"], [0.8, 0.6, 0.0])[2] == live


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_declared_unavailable_fails_the_query(recorded: dict[str, Any], flavour: str) -> None:
    fault = http_error(503, path="/qdrant.Points/Query")
    cassette = use_cassette(Path(recorded["folder"]) / f"{flavour}.yaml", faults=[fault])
    with pytest.raises(grpc.RpcError) as failed, cassette:
        CALLS[flavour](recorded["port"], [0.8, 0.6, 0.0])
    assert failed.value.code() == grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]
    assert type(failed.value).__name__ == recorded["live"][flavour][2][0]
