"""What ``promptvcr serve`` reports (the stop's answer, ``--report``, its stderr, a JavaScript
suite's end-of-run report) names requests without the values of credential query parameters
(Gemini's ``?key=``), and keeps every other query parameter as sent."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr.cassettes.models import Request
from promptvcr.credentials.names import is_secret_param
from promptvcr.server import serve
from promptvcr.server.shelf import shown_request

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
    with serve(None, record_mode="replay", cwd=tmp_path) as server:
        server.admin("start", {"cassette": str(cassette)})
        assert _post(f"{server.url}/gemini{path}?alt=sse&key={KEY}") == 404
        _, report = server.admin("stop", {"cassette": str(cassette)})
    shown = f"POST https://generativelanguage.googleapis.com{path}?alt=sse&key=<redacted:query:key>"
    assert report["missed"] == [shown] and report["misses"][0]["request"] == shown
    assert KEY not in str(report) and KEY not in str(server.report) and KEY not in server.log_text


_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,20}", fullmatch=True).filter(
    lambda name: not is_secret_param(name)
)
_values = st.text(st.characters(codec="ascii", exclude_characters="&#\"'<> \\\t\n\r\x0b\x0c"), max_size=30)


@property_settings(300)
@given(st.lists(st.tuples(_names, _values), max_size=6), st.sampled_from(["/v1/chat", "/a:b", "/"]))
def test_a_url_with_no_credential_parameter_is_reported_byte_for_byte(
    pairs: list[tuple[str, str]], path: str
) -> None:
    url = "https://api.example" + path + ("?" + "&".join(f"{n}={v}" for n, v in pairs) if pairs else "")
    assert shown_request(Request("GET", url)) == f"GET {url}"


@property_settings(300)
@given(_names, _values, st.from_regex(r"[A-Za-z0-9_-]{12,40}", fullmatch=True))
def test_a_key_parameter_s_value_never_reaches_the_report(name: str, value: str, key: str) -> None:
    url = f"https://generativelanguage.googleapis.com/v1beta/m?{name}={value}&key={key}"
    shown = shown_request(Request("POST", url))
    assert key not in shown.split("key=", 1)[1] and shown.endswith("key=<redacted:query:key>")
