"""``promptvcr migrate`` changes only the bytes it means to, plans before it writes, skips what it
must not touch with one line each, and does nothing the second time (issue 42: a form feed or
U+2028 above a marker gave a SyntaxError; latin-1 and read-only files aborted with a traceback;
CRLF became LF; symlinks out of the tree were followed; ``ws_interactions`` were emptied)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from promptvcr.importers.vcr_read import read_vcr_file

MARKED = "@pytest.mark.vcr\ndef test_{name}():\n    pass\n"


def _migrate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "promptvcr", "migrate", *args], capture_output=True, text=True, timeout=120
    )


def _vcrpy(path: Path, **extra: object) -> None:
    interaction = {
        "request": {"method": "GET", "uri": "http://127.0.0.1:9/v1/models", "body": None, "headers": {}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1, **extra}))


def _tree(tmp_path: Path) -> dict[str, bytes]:
    root = tmp_path / "suite"
    root.mkdir()
    files = {
        # latin-1, with its cookie, a form feed above the marker
        "test_latin.py": (
            "# -*- coding: latin-1 -*-\nimport pytest\n# caf\u00e9\n\f\n" + MARKED.format(name="latin")
        ).encode("latin-1"),
        # U+2028 in a string above the marker, CRLF line endings
        "test_crlf.py": (
            'import pytest\r\nNOTE = "a\u2028b"\r\n' + MARKED.format(name="crlf").replace("\n", "\r\n")
        ).encode(),
        "test_readonly.py": ("import pytest\n" + MARKED.format(name="ro")).encode(),
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    (root / "test_readonly.py").chmod(0o444)
    outside = tmp_path / "elsewhere.py"
    outside.write_bytes(("import pytest\n" + MARKED.format(name="outside")).encode())
    (root / "test_link.py").symlink_to(outside)
    _vcrpy(root / "cassettes/plain.yaml")
    _vcrpy(root / "cassettes/ws.yaml", ws_interactions=[{"direction": "send", "data": "hello"}])
    return {str(p.relative_to(tmp_path)): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}


def _snapshot(tmp_path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(tmp_path)): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}


def test_migrate_changes_only_its_bytes_and_skips_what_it_must_not_touch(tmp_path: Path) -> None:
    before = _tree(tmp_path)
    root = tmp_path / "suite"
    dry = _migrate(str(root), "--dry-run")
    assert _snapshot(tmp_path) == before  # a dry run writes nothing
    assert "-@pytest.mark.vcr" in dry.stdout and "+@pytest.mark.promptvcr" in dry.stdout

    done = _migrate(str(root))
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1  # things were left to do by hand, each on one line
    after = _snapshot(tmp_path)
    for name in ("suite/test_latin.py", "suite/test_crlf.py"):
        assert after[name] == before[name].replace(b"mark.vcr", b"mark.promptvcr"), name
        compile(after[name], name, "exec")  # still Python
    for untouched in ("suite/test_readonly.py", "elsewhere.py", "suite/cassettes/ws.yaml"):
        assert after[untouched] == before[untouched], untouched
    assert f"skipped {root / 'test_readonly.py'}: read-only; not rewritten" in done.stdout
    assert (
        f"skipped {root / 'test_link.py'}: a symlink to {tmp_path / 'elsewhere.py'}, outside" in done.stdout
    )
    assert (
        f"{root / 'cassettes/ws.yaml'}: cassette not converted, left as it is: it also holds ws_interactions"
        in done.stdout
    )
    assert read_vcr_file(root / "cassettes/plain.yaml").layout == "promptvcr"

    again = _migrate(str(root))
    assert _snapshot(tmp_path) == after  # a second run changes nothing
    assert "source: 0 change(s)" in again.stdout
