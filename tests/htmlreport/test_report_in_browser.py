"""The HTML report of a real suite, opened in headless Chromium: turns, filters, a miss, drift.

The inner suite calls the real openai and anthropic SDKs. A first run records their traffic
from the loopback fake provider; the recorded answer of one test is then edited (the
provider "used to" send a field), its prompt changed for another; the second run, which
writes the report, replays three tests, misses one and verifies one live (drift).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import anthropic  # noqa: F401  (imported before pytester, which would import it again in every run)
import pytest
import yaml
from fake_provider import FakeProvider
from plugin_suites import chat, make_suite, run, write_cassette

from promptvcr.htmlreport import collect, render
from promptvcr.htmlreport.model import Report
from promptvcr.htmlreport.pricing import Prices

SUITE = """
import os

import anthropic
import openai
import pytest

BASE = os.environ["REPORT_FAKE_URL"]
RED_SQUARE = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR4nGO4o6FBEmIY1TCqYfhqAAAy"
    "BCwQhvh37QAAAABJRU5ErkJggg=="
)
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def openai_client():
    return openai.OpenAI(api_key="sk-report-test-key-000000000000", base_url=BASE + "/v1", max_retries=0)


@pytest.mark.promptvcr
def test_weather_tool_streamed():
    stream = openai_client().chat.completions.create(
        model="gpt-4o-mini",
        stream=True,
        tools=[WEATHER],
        messages=[
            {"role": "system", "content": "You are a weather bot."},
            {"role": "user", "content": "What is the weather in Paris?"},
        ],
    )
    assert [chunk for chunk in stream]


@pytest.mark.promptvcr
def test_describe_image():
    content = [{"type": "text", "text": "What colour is this square?"},
               {"type": "image_url", "image_url": {"url": RED_SQUARE}}]
    openai_client().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": content}])


@pytest.mark.promptvcr
def test_anthropic_haiku():
    client = anthropic.Anthropic(api_key="sk-ant-report-test-key-0000", base_url=BASE, max_retries=0)
    client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=100,
        system="Answer in one line.",
        messages=[{"role": "user", "content": "Write a haiku about flaky tests"}],
    )


@pytest.mark.promptvcr
def test_release_notes():
    count = os.environ.get("BULLETS", "three")
    text = f"Summarise the release notes in {count} bullet points"
    openai_client().chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])


@pytest.mark.promptvcr(record_mode="verify")
def test_greeting_verified():
    openai_client().chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Say hello"}]
    )
"""


def _edit_answer(path: Path) -> None:
    """The recorded answer gets a field the live provider no longer sends: verify calls that drift."""
    data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    interactions = data["interactions"] if isinstance(data, dict) else data
    interactions[0]["response"]["json"]["service_tier"] = "default"
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def report(pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REPORT_FAKE_URL", provider.base_url)
    make_suite(pytester, test_app=SUITE)
    run(pytester, "--record-mode=record").assert_outcomes(passed=5)
    _edit_answer(pytester.path / "cassettes/test_app/test_greeting_verified.yaml")
    monkeypatch.setenv("BULLETS", "five short")
    result = run(pytester, "--promptvcr-html=report.html")
    result.assert_outcomes(passed=4, failed=1)
    assert "promptvcr html report: 5 test(s)" in result.stdout.str()
    return pytester.path / "report.html"


def _test(page: Any, name: str) -> Any:
    return page.locator(f"details.test[data-name*='{name}']")


def test_the_report_shows_turns_filters_a_miss_and_drift(
    report: Path, chromium: Any, tmp_path: Path, keep: Any
) -> None:
    html = report.read_text(encoding="utf-8")
    assert "sk-report-test-key" not in html and "sk-ant-report" not in html  # credentials never appear
    assert "<link" not in html and 'src="http' not in html  # self-contained: nothing fetched at view time
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.goto(report.as_uri())

    streamed = _test(page, "test_weather_tool_streamed")
    for role, text in [("system", "You are a weather bot."), ("user", "What is the weather in Paris?")]:
        turn = streamed.locator(f".turn.r-{role} .text", has_text=text)
        assert turn.is_visible(), (role, text)
    call = streamed.locator(".turn.r-tool .text", has_text="get_weather(")
    assert call.is_visible() and "Paris" in call.inner_text()  # the streamed call's arguments, joined
    assert streamed.locator(".badge.o-replayed").first.is_visible()

    image = _test(page, "test_describe_image").locator("img.image")
    assert image.is_visible()
    assert image.evaluate("img => img.complete && img.naturalWidth") == 16  # decoded from its data URI

    haiku = _test(page, "test_anthropic_haiku")
    assert haiku.locator(".turn.r-system .text", has_text="Answer in one line.").is_visible()
    assert haiku.locator(".turn.r-assistant .text").first.is_visible()

    miss = _test(page, "test_release_notes").locator("section.miss")
    assert miss.is_visible()
    row = miss.locator("table.diff tr", has_text="messages[0].content")
    assert row.locator("td.old mark", has_text="three").is_visible()
    assert row.locator("td.new mark", has_text="five").is_visible()
    assert _test(page, "test_release_notes").locator(".status").inner_text().lower() == "failed"

    drift = _test(page, "test_greeting_verified").locator("section.drift")
    assert drift.locator("h4.sev-breaking").is_visible()
    assert "service_tier" in drift.inner_text()

    page.screenshot(path=tmp_path / "report-full.png", full_page=True)
    miss.screenshot(path=tmp_path / "report-miss.png")
    keep(tmp_path / "report-full.png")
    keep(tmp_path / "report-miss.png")

    page.select_option("#f-outcome", "missed")
    assert page.locator("details.test:visible").count() == 1
    assert _test(page, "test_release_notes").is_visible()
    assert page.inner_text("#shown") == "1 of 5 shown"
    page.select_option("#f-outcome", "")
    page.select_option("#f-provider", "anthropic")
    assert [t.get_attribute("data-name") for t in page.locator("details.test:visible").all()] == [
        "test_app.py::test_anthropic_haiku"
    ]
    page.select_option("#f-provider", "")
    page.select_option("#f-model", "gpt-4o")
    assert page.locator("details.test:visible").count() == 1
    page.select_option("#f-model", "")
    page.fill("#f-name", "WEATHER")  # case does not matter
    assert page.locator("details.test:visible").count() == 1
    page.screenshot(path=tmp_path / "report-filtered.png")
    keep(tmp_path / "report-filtered.png")
    page.close()


def test_a_two_thousand_interaction_report_opens_and_filters(
    chromium: Any, tmp_path: Path, keep: Any
) -> None:
    """A 2,000-interaction report opens whole and its filter works. How fast it opens is a
    benchmark's question (``benchmarks/bench_html_report.py --check``: under 2 s), not a
    test's: a loaded machine would fail a wall-clock bound here for no fault of the page."""
    questions = (chat(f"question {i}: " + "words " * 40, "answer " + "text " * 60) for i in range(10))
    write_cassette(tmp_path / "c/test_one.yaml", *questions)
    prices = Prices()
    (entry,), _ = collect.entries_of_files([tmp_path / "c"], prices)
    entries = [dataclasses.replace(entry, name=f"test_{number:03}") for number in range(200)]
    page_file = tmp_path / "large.html"
    render.write(page_file, Report("2,000 interactions", entries, prices.available))
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.goto(page_file.as_uri(), wait_until="load")
    assert page.inner_text("#shown") == "200 of 200 shown"
    page.fill("#f-name", "test_042")  # a folded test opens with its conversation
    test = _test(page, "test_042")
    from playwright.sync_api import expect  # the chromium fixture has skipped where it is missing

    test.locator("summary").click()
    # A folded test's turns are filled on its "toggle" event, which the browser dispatches as a
    # task after the click: waited for (up to 5 s), not read at once (it raced under load in CI).
    expect(test.locator(".turn.r-user .text", has_text="question 3:")).to_be_visible()
    page.screenshot(path=tmp_path / "report-large.png")
    keep(tmp_path / "report-large.png")
    page.close()
