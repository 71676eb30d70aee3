"""A save imports nothing that the entry of its cassette did not (issue 39).

promptvcr imports much of its write path lazily, so that a process that only replays never
pays for it. But between a cassette's entry and its save the code under test may change what
the process can import: drop privileges while the checkout sits in a 0700 folder, or have the
package upgraded under it. A recording must not be lost to an ImportError then, so entering a
cassette that may write imports what its save will need.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fake_provider import FakeProvider

import promptvcr
from promptvcr.files import fileformat

TESTS = str(Path(__file__).resolve().parents[1])

#: A cassette entered, one request recorded, then ``BETWEEN`` run before the block ends;
#: prints the modules the save imported, and the interactions the file holds.
SCRIPT = """
import json, sys
from pathlib import Path
sys.path.insert(1, {tests!r})
import httpx2, promptvcr
from promptvcr.files import fileformat
with promptvcr.use_cassette({path!r}, record_mode={mode!r}):
    httpx2.post({url!r}, json={{"model": "gpt-4o", "messages": [{{"role": "user", "content": "Hi"}}]}})
    {between}
    before = set(sys.modules)
print(json.dumps({{"imported": sorted(set(sys.modules) - before), "file": promptvcr.__file__}}))
print(len(fileformat.loads(open({path!r}).read(), Path({path!r}))))
"""


def _record(path: Path, mode: str, url: str, *, between: str = "pass", site: Path | None = None) -> list[str]:
    code = textwrap.dedent(SCRIPT.format(tests=TESTS, path=str(path), mode=mode, url=url, between=between))
    if site is not None:  # this package from a copy the code under test can move away
        code = f"import sys; sys.path.insert(0, {str(site)!r})\n{code}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize(
    ("name", "existing", "mode"),
    [
        ("chat.yaml", True, "record"),
        ("chat.yaml", False, "record"),
        ("chat.yaml", True, "rewrite"),
        ("chat.json", True, "record"),
    ],
)
def test_a_save_imports_nothing_its_cassettes_entry_did_not(
    tmp_path: Path, provider: FakeProvider, name: str, existing: bool, mode: str
) -> None:
    path = tmp_path / name
    if existing:
        path.write_text(fileformat.dumps([], path))
    report, count = _record(path, mode, provider.openai_base_url + "/chat/completions")
    assert '"imported": []' in report, report
    assert count == "1"


def test_a_recording_is_saved_when_the_package_moved_away_during_the_block(
    tmp_path: Path, provider: FakeProvider
) -> None:
    site = tmp_path / "site"
    shutil.copytree(Path(promptvcr.__file__).parent, site / "promptvcr")
    moved = f"import os; os.rename({str(site / 'promptvcr')!r}, {str(site / 'moved')!r})"
    path = tmp_path / "chat.yaml"
    path.write_text(fileformat.dumps([], path))

    url = provider.openai_base_url + "/chat/completions"
    report, count = _record(path, "record", url, between=moved, site=site)

    assert str(site / "promptvcr") in report  # the copy was the one imported, and then moved away
    assert count == "1"
