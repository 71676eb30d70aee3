"""Interceptors are installed for the client libraries the process has imported, and for
those it imports while a cassette is active: a suite that uses httpx2 alone never imports
urllib3, botocore or websockets, and a library imported inside a cassette is intercepted."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from promptvcr.files import fileformat

URL = "http://api.example.com/v1/ping"


def _cassette(tmp_path: Path) -> Path:
    path = tmp_path / "ping.yaml"
    response = {"status": 200, "headers": {"content-type": "application/json"}, "json": {"pong": True}}
    data = [{"request": {"method": "GET", "url": URL}, "response": response}]
    path.write_text(fileformat.dumps(data, path))
    return path


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_suite_that_uses_httpx2_only_imports_no_other_client_library(tmp_path: Path) -> None:
    out = _run(f"""
        import sys
        import httpx2
        import promptvcr
        with promptvcr.use_cassette({str(_cassette(tmp_path))!r}):
            assert httpx2.get({URL!r}).json() == {{"pong": True}}
        others = ("urllib3", "botocore", "aiohttp", "websockets", "respx")
        print(",".join(m for m in others if m in sys.modules))
    """)
    assert out == ""


def test_a_library_imported_after_the_cassette_is_entered_is_intercepted(tmp_path: Path) -> None:
    out = _run(f"""
        import sys
        import promptvcr
        assert "urllib3" not in sys.modules
        with promptvcr.use_cassette({str(_cassette(tmp_path))!r}) as cassette:
            import urllib3  # first imported here, with a cassette active
            answer = urllib3.PoolManager().request("GET", {URL!r})
            assert answer.json() == {{"pong": True}}, answer.data
        assert [play.outcome for play in cassette.played] == ["replayed"]
        print("ok")
    """)
    assert out == "ok"


def test_a_library_imported_between_cassettes_is_intercepted_by_the_next(tmp_path: Path) -> None:
    path = _cassette(tmp_path)
    out = _run(f"""
        import sys
        import promptvcr
        with promptvcr.use_cassette({str(path)!r}, allow_playback_repeats=True):
            pass
        import urllib3
        with promptvcr.use_cassette({str(path)!r}) as cassette:
            assert urllib3.PoolManager().request("GET", {URL!r}).json() == {{"pong": True}}
        # and once no cassette is active, the import watch is gone from sys.meta_path
        assert not any(type(finder).__module__.startswith("promptvcr") for finder in sys.meta_path)
        print("ok")
    """)
    assert out == "ok"
