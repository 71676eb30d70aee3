"""A recorded header value that is not ASCII replays as the text it was recorded as.

httpx and httpx2 encode header text as ASCII: a value such as ``caf\u00e9`` given to them as text
raises ``UnicodeEncodeError``. The stored value goes back as UTF-8 bytes, which both decode
back to the same text (they read UTF-8 before Latin-1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from plugin_suites import write_cassette

import promptvcr

URL = "http://127.0.0.1:9/v1/models"  # nothing listens: only the cassette can answer


def stored(value: str) -> dict[str, Any]:
    return {
        "request": {"method": "GET", "url": URL, "headers": {}},
        "response": {
            "status": 200,
            "headers": {"content-type": "application/json", "x-model-owner": value},
            "json": {"data": []},
        },
    }


@pytest.mark.parametrize("library", [httpx, httpx2], ids=["httpx", "httpx2"])
@pytest.mark.parametrize("value", ["caf\u00e9 \u2014 na\u00efve", "plain"])
def test_a_recorded_header_value_replays_as_its_text(tmp_path: Path, library: Any, value: str) -> None:
    path = write_cassette(tmp_path / "owner.yaml", stored(value))
    with promptvcr.use_cassette(path, allow_playback_repeats=True), library.Client() as client:
        for _ in range(2):  # the second is served from the header list built for the first
            response = client.get(URL)
            assert response.headers["x-model-owner"] == value
            assert response.json() == {"data": []}


@pytest.mark.parametrize("value", ["caf\u00e9", "plain"])
def test_one_stored_response_serves_httpx_and_httpx2_in_turn(tmp_path: Path, value: str) -> None:
    """The header list a replay keeps on a stored response is one library's own ``Headers``: the
    other library, served the same response next, gets its own, with the same lines."""
    path = write_cassette(tmp_path / "owner.yaml", stored(value))
    with promptvcr.use_cassette(path, allow_playback_repeats=True):
        seen = []
        for library in (httpx2, httpx, httpx2, httpx):
            with library.Client() as client:
                response = client.get(URL)
            seen.append((response.headers.raw, response.content))
            assert response.headers["x-model-owner"] == value
            assert response.headers["content-length"] == str(len(response.content))
    assert seen.count(seen[0]) == 4
