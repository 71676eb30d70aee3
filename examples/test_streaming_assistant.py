"""The streaming assistant against Anthropic's real stream, recorded once and replayed offline."""

from __future__ import annotations

import anthropic
import pytest
from streaming_assistant import stream_answer

import promptvcr


@pytest.mark.asyncio
# The recording is real and was made with a model Anthropic has since deprecated.
@pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")
async def test_answer_streams_piece_by_piece(
    anthropic_client: anthropic.AsyncAnthropic, cassette: promptvcr.Cassette
) -> None:
    """No marker: asking for the ``cassette`` fixture starts this test's default cassette."""
    seen: list[str] = []
    answer = await stream_answer(anthropic_client, "How do I cross the street?", on_text=seen.append)

    assert answer.thinking  # the model thought before answering, and that streamed too
    assert answer.pieces == len(seen) > 10  # the answer arrived in many pieces, as recorded
    assert "".join(seen) == answer.text
    assert "crosswalk" in answer.text.lower()
    assert answer.output_tokens == 282
    assert len(cassette.played) == 1  # replayed, or recorded when re-recording
