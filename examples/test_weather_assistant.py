"""The weather assistant against OpenAI's real answers, recorded once and replayed offline."""

from __future__ import annotations

import openai
import pytest
from weather_assistant import WeatherAssistant

import promptvcr


@pytest.mark.promptvcr
def test_assistant_calls_the_weather_tool_then_answers(
    openai_client: openai.OpenAI, cassette: promptvcr.Cassette
) -> None:
    answer = WeatherAssistant(openai_client).ask("What's the weather in Paris?")

    assert answer.tool_calls == [("get_weather", {"city": "Paris"})]
    assert "sunny" in answer.text.lower()
    assert "22°C" in answer.text
    # Two calls: answered by the cassette, or by OpenAI when re-recording (--record-mode=rewrite);
    # an assertion on play.outcome ("replayed", "recorded") would hold in one mode only.
    assert len(cassette.played) == 2
    assert cassette.missed == []
