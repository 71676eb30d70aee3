"""A test's stop waits for what its clients left under way in its cassette: an answer the client
stopped reading is still arriving (the cassette keeps it whole), a websocket session it closed is
still closing upstream. Stopped at once, the answer was cut short and failed the test, or the
session landed after the stop's report."""

from __future__ import annotations

from pathlib import Path

import openai
import yaml
from fake_provider import FakeProvider

from promptvcr.server import serve


def test_a_stream_the_client_left_is_recorded_whole_before_the_stop_reports(tmp_path: Path) -> None:
    cassette = tmp_path / "left.yaml"
    words = " ".join(f"word{n}" for n in range(12))
    with (
        FakeProvider(chunk_delay=0.05) as fake,
        serve(None, upstreams={"openai": fake.base_url}, cwd=tmp_path) as server,
    ):
        server.admin("start", {"cassette": str(cassette), "record_mode": "record"})
        client = openai.OpenAI(api_key="sk-test", base_url=f"{server.url}/openai/v1", max_retries=0)
        stream = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": words}], stream=True
        )
        next(iter(stream))  # the first event, then the code under test is done with it
        stream.close()
        status, report = server.admin("stop", {"cassette": str(cassette)})
    assert status == 200
    assert report["ok"] and report["cut_short"] == [] and report["outcomes"] == {"recorded": 1}
    response = yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"][0]["response"]
    assert "word11" in yaml.safe_dump(response) and response.get("end") != "closed"
