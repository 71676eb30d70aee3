"""An interceptor module imported a second time in one process still works.

pytester's in-process runs drop the modules a run imported and import them again in the
next run; respx keeps its Mocker registry for the whole process, so a fixed Mocker name
made the second import fail with "Subclasses of Mocker must define a unique name".
"""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

import promptvcr
from promptvcr.files import fileformat

URL = "https://api.example.com/v1/ping"


def _cassette(tmp_path: Path) -> Path:
    path = tmp_path / "ping.yaml"
    response = {"status": 200, "headers": {"content-type": "application/json"}, "json": {"pong": True}}
    data = [{"request": {"method": "GET", "url": URL}, "response": response}]
    path.write_text(fileformat.dumps(data, path))
    return path


def test_httpx_interceptor_works_after_its_module_is_imported_again(tmp_path: Path) -> None:
    path = _cassette(tmp_path)
    with promptvcr.use_cassette(path), httpx.Client() as client:
        assert client.get(URL).json() == {"pong": True}
    first = sys.modules.pop("promptvcr.interceptors.httpx")
    try:
        with promptvcr.use_cassette(path), httpx.Client() as client:
            assert client.get(URL).json() == {"pong": True}
        assert sys.modules["promptvcr.interceptors.httpx"] is not first
    finally:
        sys.modules["promptvcr.interceptors.httpx"] = first
