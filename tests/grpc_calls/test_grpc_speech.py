"""Google Cloud Speech-to-Text's bidirectional ``streaming_recognize`` (google-cloud-speech, sync
and asyncio) against a real gRPC server on 127.0.0.1: every client message is part of the key,
in order, and every server message comes back byte for byte with the server stopped."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.api_core import exceptions as core_exceptions
from google.cloud import speech_v1 as speech
from google.cloud.speech_v1.services.speech.transports import SpeechGrpcAsyncIOTransport, SpeechGrpcTransport
from grpc_servers import GrpcServer, bidi, handler

from promptvcr import CassetteMiss, use_cassette
from promptvcr.faults import cut_stream

AUDIO = [bytes(range(n, n + 200)) for n in (0, 20, 40)]  # binary audio chunks, not UTF-8
BAD_AUDIO = [AUDIO[0], bytes([255]) * 10, AUDIO[1]]  # the server gives up at the second chunk
CONFIG = speech.StreamingRecognitionConfig(
    config=speech.RecognitionConfig(language_code="en-US", sample_rate_hertz=16000), interim_results=True
)


def _recognize(
    requests: Iterator[speech.StreamingRecognizeRequest], context: grpc.ServicerContext
) -> Iterator[speech.StreamingRecognizeResponse]:
    """One interim result per audio chunk, then a final one: the words say which bytes came.
    All the audio is read first: a server that gives up while the client still writes races
    grpc's own writer live (INTERNAL or the status sent, by timing)."""
    messages = list(requests)
    assert messages[0].streaming_config.config.language_code == "en-US"
    heard: list[str] = []
    for message in messages[1:]:
        heard.append(f"chunk{message.audio_content[0]}")
        if message.audio_content[0] == 255:
            context.abort(
                grpc.StatusCode.OUT_OF_RANGE, "Audio Timeout Error: Long duration elapsed without audio."
            )
        yield speech.StreamingRecognizeResponse(
            results=[
                speech.StreamingRecognitionResult(
                    alternatives=[{"transcript": " ".join(heard)}], stability=0.5
                )
            ]
        )
    final = speech.StreamingRecognitionResult(
        alternatives=[{"transcript": " ".join(heard), "confidence": 0.93}], is_final=True
    )
    yield speech.StreamingRecognizeResponse(results=[final], speech_event_type=0)


def _server() -> GrpcServer:
    method = bidi(_recognize, speech.StreamingRecognizeRequest, speech.StreamingRecognizeResponse)
    return GrpcServer(handler("google.cloud.speech.v1.Speech", {"StreamingRecognize": method}))


def sync_recognize(address: str, audio: list[bytes]) -> list[Any]:
    """The results' bytes, then what failed, if anything (google-api-core's error, its code)."""
    client = speech.SpeechClient(transport=SpeechGrpcTransport(channel=grpc.insecure_channel(address)))
    requests = (speech.StreamingRecognizeRequest(audio_content=chunk) for chunk in audio)
    got: list[Any] = []
    try:
        for result in client.streaming_recognize(CONFIG, requests):
            got.append(speech.StreamingRecognizeResponse.serialize(result))
    except core_exceptions.GoogleAPICallError as error:
        got.append((type(error).__name__, error.message, error.grpc_status_code))
    return got


async def async_recognize(address: str, audio: list[bytes]) -> list[Any]:
    channel = grpc.aio.insecure_channel(address)
    client = speech.SpeechAsyncClient(transport=SpeechGrpcAsyncIOTransport(channel=channel))

    async def requests() -> AsyncIterator[speech.StreamingRecognizeRequest]:
        yield speech.StreamingRecognizeRequest(streaming_config=CONFIG)
        for chunk in audio:
            yield speech.StreamingRecognizeRequest(audio_content=chunk)

    got: list[Any] = []
    try:
        async for result in await client.streaming_recognize(requests=requests()):
            got.append(speech.StreamingRecognizeResponse.serialize(result))
    except core_exceptions.GoogleAPICallError as error:
        got.append((type(error).__name__, error.message, error.grpc_status_code))
    await channel.close()
    return got


RECOGNIZE: dict[str, Any] = {
    "sync": sync_recognize,
    "async": lambda address, audio: asyncio.run(async_recognize(address, audio)),
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("speech")
    with _server() as server:
        live = {flavour: recognize(server.address, AUDIO) for flavour, recognize in RECOGNIZE.items()}
        failed = {flavour: recognize(server.address, BAD_AUDIO) for flavour, recognize in RECOGNIZE.items()}
        for flavour, recognize in RECOGNIZE.items():
            with use_cassette(folder / f"{flavour}.yaml", record_mode="rewrite"):
                assert recognize(server.address, AUDIO) == live[flavour]
                assert recognize(server.address, BAD_AUDIO) == failed[flavour]
    return {"folder": folder, "address": server.address, "live": live, "failed": failed}


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_bidirectional_stream_replays_byte_for_byte(recorded: dict[str, Any], flavour: str) -> None:
    with use_cassette(Path(recorded["folder"]) / f"{flavour}.yaml"):
        replayed = RECOGNIZE[flavour](recorded["address"], AUDIO)
    assert replayed == recorded["live"][flavour]
    assert len(replayed) == 4 and b"chunk0 chunk20 chunk40" in replayed[-1]


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_changed_audio_chunk_misses_naming_its_message(recorded: dict[str, Any], flavour: str) -> None:
    changed = [AUDIO[0], AUDIO[1], bytes(200)]
    with pytest.raises(CassetteMiss) as miss, use_cassette(Path(recorded["folder"]) / f"{flavour}.yaml"):
        RECOGNIZE[flavour](recorded["address"], changed)
    assert "[3].audio_content" in str(miss.value)  # the config is message 0, the third chunk 3


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_stream_that_failed_live_fails_the_same_on_replay(recorded: dict[str, Any], flavour: str) -> None:
    with use_cassette(Path(recorded["folder"]) / f"{flavour}.yaml"):
        replayed = RECOGNIZE[flavour](recorded["address"], BAD_AUDIO)
    assert replayed == recorded["failed"][flavour]
    assert len(replayed) == 2 and replayed[-1][0::2] == ("OutOfRange", grpc.StatusCode.OUT_OF_RANGE)


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_cut_stream_gives_the_first_result_then_unavailable(recorded: dict[str, Any], flavour: str) -> None:
    fault = cut_stream(after_events=1, path="/google.cloud.speech.v1.Speech/StreamingRecognize")
    with use_cassette(Path(recorded["folder"]) / f"{flavour}.yaml", faults=[fault]):
        replayed = RECOGNIZE[flavour](recorded["address"], AUDIO)
    assert replayed[0] == recorded["live"][flavour][0]
    assert replayed[1][0] == "ServiceUnavailable" and replayed[1][2] == grpc.StatusCode.UNAVAILABLE
