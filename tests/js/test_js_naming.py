"""The npm package's cassette names (js/promptvcr/lib/naming.cjs) are the pytest plugin's: a
JavaScript test ``describe("a") > test("b")`` and a Python test ``A.b`` get the same file name,
whatever the names hold, and every test's cassette stays in its test file's folder of cassettes
(a name with ``/``, ``..`` or a NUL opens nothing outside it)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr.pytest_plugin.naming import cassette_file_name

NAMING = Path(__file__).resolve().parents[2] / "js" / "promptvcr" / "lib" / "naming.cjs"
SCRIPT = """
const naming = require(process.argv[1]);
const chains = JSON.parse(require("fs").readFileSync(0, "utf8"));
const file = "/project/tests/chat.test.ts";
console.log(JSON.stringify({
  folder: naming.cassetteFolder(file, {}),
  names: chains.map((chain) => naming.cassetteFileName(chain)),
  paths: chains.map((chain) => naming.cassettePath(file, chain, {})),
}));
"""

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

names = st.text(st.characters(exclude_categories=("Cs",)), max_size=140) | st.sampled_from(
    ["..", "../../etc/passwd", "a/b", "\x00", ".hidden", "-", "test", "x" * 300, "é" * 120]
)


def _js(chains: list[list[str]]) -> dict[str, object]:
    done = subprocess.run(
        ["node", "-e", SCRIPT, str(NAMING)],
        input=json.dumps(chains),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


@property_settings(15)
@given(st.lists(st.lists(names, min_size=1, max_size=3), min_size=1, max_size=12))
def test_a_cassette_is_named_as_pytest_names_it_and_stays_in_its_folder(chains: list[list[str]]) -> None:
    result = _js(chains)
    assert result["folder"] == "/project/tests/cassettes/chat.test"
    assert result["names"] == [cassette_file_name(chain[-1], chain[:-1]) for chain in chains]
    for name, path in zip(result["names"], result["paths"], strict=True):  # type: ignore[call-overload]
        assert path == f"/project/tests/cassettes/chat.test/{name}.yaml"
        assert "/" not in name and "\x00" not in name and name not in ("", ".", "..")
