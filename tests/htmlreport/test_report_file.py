"""The HTML report as a file: ``promptvcr report`` on real cassettes (SDK chats, a realtime
session, an MCP session), credentials kept out, entries as xdist workers send them, and the time 2,000
interactions take. The browser's view of it is tested in test_report_in_browser.py."""

from __future__ import annotations

import asyncio
import dataclasses
import html
import re
from pathlib import Path
from typing import Any

import openai
import pytest
from fake_provider import FakeProvider
from google import genai
from mcp import Client
from mcp_server import McpServer
from plugin_suites import chat, make_suite, run, write_cassette
from realtime_server import RealtimeServer

from promptvcr import use_cassette
from promptvcr.cli import main
from promptvcr.htmlreport import collect, render
from promptvcr.htmlreport.model import Entry, Report
from promptvcr.htmlreport.pricing import Prices


def _text(page: str) -> str:
    """The page's text as a reader sees it: tags dropped, entities decoded, spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_report_command_shows_the_corpus_conversations_with_prices(
    converted_corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "corpus.html"
    assert main(["report", str(converted_corpus), "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    text = _text(page)
    assert "You are a helpful assistant." in text  # a system turn of an Anthropic cassette
    assert "spent when they were recorded" in text  # files, not a run: nothing was spent now
    assert re.search(r"tokens [\d,]+ in, [\d,]+ out · \$\d", text)  # priced by genai-prices
    assert "<link" not in page and not re.search(r"<script[^>]+src=", page)  # nothing fetched to view it


def test_report_command_says_what_it_cannot_read(tmp_path: Path) -> None:
    good = write_cassette(tmp_path / "c/good.yaml", chat("hello there", "general kenobi"))
    (tmp_path / "c/broken.yaml").write_text("interactions: [", encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path / "c"), "--html", str(out)]) == 1  # one file skipped
    assert "general kenobi" in _text(out.read_text(encoding="utf-8"))
    assert main(["report", str(tmp_path / "missing"), "--html", str(tmp_path / "x.html")]) == 1
    assert not (tmp_path / "x.html").exists()
    assert good.exists()


def _talk(url: str) -> None:
    client = openai.OpenAI(
        api_key="sk-test", base_url="http://127.0.0.1:9/v1", websocket_base_url=f"{url}/v1"
    )
    with client.realtime.connect(model="gpt-realtime") as conn:
        conn.session.update(session={"type": "realtime", "instructions": "Be brief."})
        conn.input_audio_buffer.append(audio="AAAA" * 200)
        conn.input_audio_buffer.commit()
        conn.response.create()
        for event in conn:
            if event.type == "response.done":
                break


async def _gemini_live(server: RealtimeServer) -> None:
    options: Any = {
        "base_url": f"https://127.0.0.1:{server.port}",
        "async_client_args": {"ssl": server.client_ssl},
    }
    client = genai.Client(api_key="test-key", http_options=options)
    config: Any = {"response_modalities": ["TEXT"]}
    async with client.aio.live.connect(model="gemini-live-2.5-flash", config=config) as session:
        await session.send_client_content(turns={"role": "user", "parts": [{"text": "ping"}]})
        async for _ in session.receive():
            pass


async def _mcp(url: str) -> None:
    async with Client(url) as client:
        await client.call_tool("add", {"a": 2, "b": 3})


def test_a_realtime_session_and_an_mcp_session_read_as_transcripts(tmp_path: Path) -> None:
    with RealtimeServer() as server, use_cassette(tmp_path / "c/realtime.yaml", record_mode="rewrite"):
        _talk(server.url)
    with McpServer() as mcp_server, RealtimeServer(tls=True) as live_server:

        async def record() -> None:
            async with use_cassette(tmp_path / "c/mcp.yaml", record_mode="rewrite"):
                await asyncio.wait_for(_mcp(mcp_server.url), 30)
            async with use_cassette(tmp_path / "c/live.yaml", record_mode="rewrite"):
                await asyncio.wait_for(_gemini_live(live_server), 30)

        asyncio.run(record())
    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path / "c"), "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    text = _text(page)
    assert "assistant I heard 600 bytes." in text  # the transcript's deltas joined into one turn
    assert "client: input_audio_buffer.append" in text and "AAAA" not in text  # audio named, not dumped
    assert 'tool call MCP add({"a": 2, "b": 3})' in text
    assert "tool result 5" in text
    assert "user ping" in text and "assistant Live answer to ping" in text  # Gemini Live, binary frames
    # the models a session names (the handshake's query, Gemini's setup frame), to filter by
    for provider, model in [("openai-compatible", "gpt-realtime"), ("google", "gemini-live-2.5-flash")]:
        assert f'data-providers=" {provider} " data-models=" {model} "' in page
    assert 'data-providers=" mcp "' in page


SECRET_SUITE = """
import openai, pytest

TOKEN = "local-proxy-token-1234567890"

@pytest.mark.promptvcr
def test_says_its_token(fake_url):
    client = openai.OpenAI(api_key=TOKEN, base_url=fake_url, max_retries=0)
    said = [{"role": "user", "content": "I use " + TOKEN}]
    client.chat.completions.create(model="gpt-4o-mini", messages=said)

@pytest.mark.promptvcr
def test_replays(fake_url):
    client = openai.OpenAI(api_key=TOKEN, base_url=fake_url, max_retries=0)
    client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}])
"""


def test_the_run_report_masks_what_the_run_sent_as_a_credential(
    pytester: pytest.Pytester, provider: FakeProvider
) -> None:
    make_suite(pytester, test_app=SECRET_SUITE)
    pytester.makeconftest(
        f"import pytest\n@pytest.fixture\ndef fake_url():\n    return {provider.openai_base_url!r}\n"
    )
    result = run(pytester, "--record-mode=record", "--promptvcr-html=out/report.html")
    result.assert_outcomes(passed=2)
    page = (pytester.path / "out/report.html").read_text(encoding="utf-8")
    assert "local-proxy-token" not in page  # sent as the key, echoed in the prompt and the answer
    text = _text(page)
    assert "user I use <redacted" in text  # the turn is shown, its credential masked
    assert "test_app.py::test_says_its_token" in text and "test_app.py::test_replays" in text
    assert text.count("recorded #1 POST") == 2


def test_an_entry_survives_the_trip_from_an_xdist_worker(converted_corpus: Path) -> None:
    """Workers send entries as plain data (see promptvcr.pytest_plugin.accounts.html); the controller
    rebuilds them. A real xdist run costs 30 s here: the round trip is what can go wrong."""
    entries, _ = collect.entries_of_files([converted_corpus], Prices())
    assert entries
    assert [Entry.from_data(entry.to_data()) for entry in entries] == entries


def test_two_thousand_interactions_render_whole(tmp_path: Path) -> None:
    """Every one of 2,000 interactions is on the page, the bodies folded. How fast it renders is
    ``benchmarks/bench_html_report.py --check``'s question (under 2 s), not a timed test's."""
    questions = (chat(f"question {i}: " + "words " * 40, "answer " + "text " * 60) for i in range(10))
    write_cassette(tmp_path / "c/test_one.yaml", *questions)
    prices = Prices()
    (entry,), _ = collect.entries_of_files([tmp_path / "c"], prices)
    entries = [dataclasses.replace(entry, name=f"test_{number:03}") for number in range(200)]
    report = Report("2,000 interactions", entries, prices.available)
    assert report.exchange_count == 2000
    page = render.render(report)
    assert page.count('class="exchange') == 2000
    assert page.count('<template class="body">') == 200  # folded: laid out when opened
