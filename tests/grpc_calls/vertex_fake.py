"""A Vertex AI prediction service on 127.0.0.1 that answers with aiplatform's own message
classes, and the clients that call it (over insecure channels, no credentials)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import grpc
from google.cloud import aiplatform_v1 as v1
from google.cloud.aiplatform_v1.services.prediction_service.transports import (
    PredictionServiceGrpcAsyncIOTransport,
    PredictionServiceGrpcTransport,
)
from grpc_servers import GrpcServer, handler, rate_limited, server_stream, unary

SERVICE = "google.cloud.aiplatform.v1.PredictionService"
MODEL = "projects/p/locations/us-central1/publishers/google/models/gemini-fake"
SECRET_METADATA = (
    ("authorization", "Bearer ya29.a0AfB_live-token-never-kept"),
    ("x-goog-api-key", "AIzaSyD-live-key-never-kept-0123456"),
)


def _answer(text: str) -> v1.GenerateContentResponse:
    return v1.GenerateContentResponse(
        candidates=[
            v1.Candidate(
                content=v1.Content(role="model", parts=[v1.Part(text=text)]),
                finish_reason=v1.Candidate.FinishReason.STOP,
                avg_logprobs=-0.1234567,
            )
        ],
        usage_metadata=v1.GenerateContentResponse.UsageMetadata(prompt_token_count=3, total_token_count=8),
        model_version="gemini-fake-001",
    )


def _prompt(request: v1.GenerateContentRequest) -> str:
    return str(request.contents[0].parts[0].text)


def _generate(
    request: v1.GenerateContentRequest, context: grpc.ServicerContext
) -> v1.GenerateContentResponse:
    if "quota" in _prompt(request):
        rate_limited(context, "Quota exceeded for generate_content_requests_per_minute")
    if "unavailable" in _prompt(request):
        context.abort(grpc.StatusCode.UNAVAILABLE, "The service is currently unavailable.")
    if "slow" in _prompt(request):
        time.sleep(1.0)  # past the client's deadline: the live DEADLINE_EXCEEDED a fault imitates
    context.send_initial_metadata((("x-vertex-region", "us-central1"),))
    context.set_trailing_metadata((("x-request-cost", "3"),))
    return _answer(f"echo: {_prompt(request)}")


def _stream(
    request: v1.GenerateContentRequest, context: grpc.ServicerContext
) -> Iterator[v1.GenerateContentResponse]:
    for n, word in enumerate(_prompt(request).split()):
        if n == 2 and "quota" in _prompt(request):
            rate_limited(context, "Quota exceeded mid-stream")
        yield _answer(word)


def vertex_server() -> GrpcServer:
    return GrpcServer(
        handler(
            SERVICE,
            {
                "GenerateContent": unary(_generate, v1.GenerateContentRequest, v1.GenerateContentResponse),
                "StreamGenerateContent": server_stream(
                    _stream, v1.GenerateContentRequest, v1.GenerateContentResponse
                ),
            },
        )
    )


def request(text: str) -> v1.GenerateContentRequest:
    return v1.GenerateContentRequest(
        model=MODEL, contents=[v1.Content(role="user", parts=[v1.Part(text=text)])]
    )


def sync_client(address: str) -> v1.PredictionServiceClient:
    return v1.PredictionServiceClient(
        transport=PredictionServiceGrpcTransport(channel=grpc.insecure_channel(address))
    )


def async_client(address: str) -> tuple[v1.PredictionServiceAsyncClient, grpc.aio.Channel]:
    """The asyncio client and its channel (to close); made inside the running loop."""
    channel = grpc.aio.insecure_channel(address)
    return v1.PredictionServiceAsyncClient(
        transport=PredictionServiceGrpcAsyncIOTransport(channel=channel)
    ), channel
