"""A process that only replays loads what replaying needs. PyYAML is imported at the first
YAML text parsed; filelock, the redaction and the secret scan at the first save; the miss
diagnostics (difflib) at the first miss; the multipart parser at the first multipart body;
the token counts with the first cassette parsed; the faults with the first cassette given
some; the response shapes in verify mode. So a cassette read from the parse cache costs none
of them (together about 45 ms of a first use of ~110 on a slow host, issue 22). Each case
runs in a fresh interpreter, since the test process has imported everything already."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from promptvcr.files import fileformat

URL = "http://api.example.com/v1/ping"
HEAVY = (
    "yaml",
    "filelock",
    "difflib",
    "promptvcr.files.redaction",
    "promptvcr.credentials.keyshapes",
    "promptvcr.cassettes.multipart",
    "promptvcr.cassettes.tokens",
    "promptvcr.policies.shapes",
    "promptvcr.faults",
    "promptvcr.matching.diagnose",
)


def _cassette(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    response = {"status": 200, "headers": {"content-type": "application/json"}, "json": {"pong": True}}
    data = [{"request": {"method": "GET", "url": URL}, "response": response}]
    path.write_text(fileformat.dumps(data, path))
    return path


def _imported_while_replaying(path: Path, cache: Path) -> list[str]:
    """The heavy modules imported by a fresh process that replays ``path`` once."""
    code = f"""
        import sys
        import httpx2
        import promptvcr
        with promptvcr.use_cassette({str(path)!r}) as cassette:
            assert httpx2.get({URL!r}).json() == {{"pong": True}}
        assert [play.outcome for play in cassette.played] == ["replayed"]
        print(",".join(m for m in {HEAVY!r} if m in sys.modules))
    """
    env = {**os.environ, "PROMPTVCR_CACHE_DIR": str(cache)}
    command = [sys.executable, "-c", textwrap.dedent(code)]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return [name for name in done.stdout.strip().split(",") if name]


def test_a_yaml_cassette_read_from_the_cache_imports_neither_pyyaml_nor_filelock(tmp_path: Path) -> None:
    path = _cassette(tmp_path, "ping.yaml")
    # the first process parses the text (so it needs PyYAML) and leaves the result cached
    assert "yaml" in _imported_while_replaying(path, tmp_path / "cache")
    assert _imported_while_replaying(path, tmp_path / "cache") == []


def test_a_json_cassette_never_imports_pyyaml(tmp_path: Path) -> None:
    path = _cassette(tmp_path, "ping.json")
    assert "yaml" not in _imported_while_replaying(path, tmp_path / "cache")
    assert _imported_while_replaying(path, tmp_path / "cache") == []


def test_a_changed_cassette_is_parsed_again_with_pyyaml(tmp_path: Path) -> None:
    """The cache does not hide an edit: the new text is parsed, so PyYAML is imported."""
    path = _cassette(tmp_path, "ping.yaml")
    _imported_while_replaying(path, tmp_path / "cache")
    path.write_text(path.read_text() + "# reviewed\n")
    assert "yaml" in _imported_while_replaying(path, tmp_path / "cache")
