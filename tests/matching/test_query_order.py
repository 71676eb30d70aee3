"""A repeated query parameter keeps the order of its values in the key; every other key is
unchanged (cassettes recorded before still match)."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx2
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from network_guard import no_network

import promptvcr
from promptvcr.cassettes.models import Request
from promptvcr.matching.parts import key_parts

sys.path.insert(0, str(Path(__file__).parents[1] / "interceptors"))
from scripted_server import Script, scripted

OFFLINE = "http://127.0.0.1:9"


def _query(url: str) -> tuple[tuple[str, str], ...]:
    return key_parts(Request("GET", url)).query


def test_a_repeated_parameter_keeps_the_order_of_its_values() -> None:
    assert _query("https://x/v1?a=1&a=2") != _query("https://x/v1?a=2&a=1")
    assert _query("https://x/v1?b=0&a=2&a=1") == (("a", "2"), ("a", "1"), ("b", "0"))
    assert _query("https://x/v1?b=0&a=1") == _query(
        "https://x/v1?a=1&b=0"
    )  # other orders still do not matter


@given(st.dictionaries(st.text(min_size=1), st.text(), max_size=6))
def test_without_a_repeated_parameter_the_key_is_what_it_was(params: dict[str, str]) -> None:
    url = str(httpx2.URL("https://x/v1", params=params))
    before = tuple(sorted(parse_qsl(urlsplit(url).query, keep_blank_values=True)))  # the old key
    assert _query(url) == before


def test_a_recording_of_a2_a1_does_not_answer_a1_a2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "q.yaml"

    def get(base: str, query: str) -> str:
        client = openai.OpenAI(api_key="sk-test", base_url=base, max_retries=0)
        return client.get(f"/models?{query}", cast_to=httpx2.Response).text

    with scripted() as server:
        url = server.add("q", Script("text/plain", [(0.0, b"ok")], length=True))
        with promptvcr.use_cassette(path, record_mode="record"):
            assert get(url, "a=2&a=1") == "ok"
        assert server.queries == ["/q/models?a=2&a=1"]
    with no_network(monkeypatch), promptvcr.use_cassette(path) as cassette:
        assert get(OFFLINE + "/q", "a=2&a=1") == "ok"
    assert cassette.played[0].hit
    with (
        no_network(monkeypatch),
        pytest.raises(promptvcr.CassetteMiss),
        promptvcr.use_cassette(path),
    ):
        get(OFFLINE + "/q", "a=1&a=2")
