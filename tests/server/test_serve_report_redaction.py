"""What ``promptvcr serve`` reports (the stop's answer, ``--report``, its stderr, a JavaScript
suite's end-of-run report) names requests without the values of credential query parameters
(Gemini's ``?key=``), and keeps every other query parameter as sent."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from promptvcr.server import serve

KEY = "AIzaSyA0123456789abcdefghijklmnopqrstuv"
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _post(url: str) -> int:
    call = urllib.request.Request(
        url, data=b'{"contents": []}', headers={"content-type": "application/json"}, method="POST"
    )
    try:
        with _opener.open(call, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_a_missed_request_s_key_is_not_in_the_report(tmp_path: Path) -> None:
    cassette = tmp_path / "gemini.yaml"
    path = "/v1beta/models/gemini-2.0-flash:streamGenerateContent"
    with serve(None, record_mode="replay") as server:
        server.admin("start", {"cassette": str(cassette)})
        assert _post(f"{server.url}/gemini{path}?alt=sse&key={KEY}") == 404
        _, report = server.admin("stop", {"cassette": str(cassette)})
    shown = f"POST https://generativelanguage.googleapis.com{path}?alt=sse&key=<redacted:query:key>"
    assert report["missed"] == [shown] and report["misses"][0]["request"] == shown
    assert KEY not in str(report) and KEY not in str(server.report) and KEY not in server.log_text
