"""Real gRPC servers on 127.0.0.1 for the gRPC interceptor's tests: grpc generic handlers that
read and write the client libraries' own message classes (no hand-made bytes)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
from google.protobuf import duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

#: A planted credential a server echoes into a message field (``scan`` must find it).
PLANTED_KEY = "sk-proj-" + "Zq3" * 15 + "T3BlbkFJ" + "x9W" * 8


class GrpcServer:
    """A grpc server with the given generic handlers on a free 127.0.0.1 port, started on
    enter, stopped on exit (``stop()`` too, so a test can replay with nothing listening)."""

    def __init__(self, *handlers: grpc.GenericRpcHandler) -> None:
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self._server.add_generic_rpc_handlers(handlers)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self.address = f"127.0.0.1:{self.port}"
        self.calls = 0

    def __enter__(self) -> GrpcServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop(grace=None).wait()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def rate_limited(context: grpc.ServicerContext, message: str) -> None:
    """Abort as a quota error does: RESOURCE_EXHAUSTED with a RetryInfo in its status details."""
    detail = status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message=message)
    retry = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=7))
    detail.details.add().Pack(retry)
    context.set_trailing_metadata((("x-quota-window", "minute"),))
    context.abort_with_status(rpc_status.to_status(detail))


def handler(service: str, methods: dict[str, grpc.RpcMethodHandler]) -> grpc.GenericRpcHandler:
    return grpc.method_handlers_generic_handler(service, methods)


def unary(
    fn: Callable[[Any, grpc.ServicerContext], Any], request: Any, response: Any
) -> grpc.RpcMethodHandler:
    return grpc.unary_unary_rpc_method_handler(fn, request.deserialize, response.serialize)


def server_stream(
    fn: Callable[[Any, grpc.ServicerContext], Iterator[Any]], request: Any, response: Any
) -> grpc.RpcMethodHandler:
    return grpc.unary_stream_rpc_method_handler(fn, request.deserialize, response.serialize)


def bidi(
    fn: Callable[[Iterator[Any], grpc.ServicerContext], Iterator[Any]], request: Any, response: Any
) -> grpc.RpcMethodHandler:
    return grpc.stream_stream_rpc_method_handler(fn, request.deserialize, response.serialize)
