"""Issue 42: every path that rewrites or deletes cassettes loses nothing, through real suites.

Each test runs a small suite with pytester (the plugin as users meet it), against the fake
provider on 127.0.0.1 when it records, then checks the files and a replay of the next run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_provider import FakeProvider
from plugin_suites import chat, make_suite, run, write_cassette

from promptvcr.cli import main
from promptvcr.files import fileformat

SHARED = """
import os
import pytest
from llm import ask

URL = os.environ["FAKE_URL"]
pytestmark = pytest.mark.promptvcr("data/shared.yaml")

@pytest.mark.parametrize("n", range(8))
def test_one(n):
    assert ask(f"question {n}", URL)
"""


def _count(path: Path) -> int:
    return len(fileformat.loads(path.read_text(encoding="utf-8"), path))


@pytest.fixture
def provider_url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with FakeProvider() as fake:
        monkeypatch.setenv("FAKE_URL", fake.openai_base_url)
        monkeypatch.setenv("COLUMNS", "200")
        yield fake.openai_base_url


@pytest.mark.parametrize(
    "args",
    [
        ("--record-mode=record", "--cassette-unused=drop"),
        ("--record-mode=rewrite",),
        ("--max-age", "1s", "--on-stale", "rewrite"),
    ],
    ids=["record+drop", "rewrite", "stale rewrite"],
)
def test_a_shared_cassette_keeps_every_tests_interactions(
    pytester: pytest.Pytester, provider_url: str, args: tuple[str, ...]
) -> None:
    make_suite(pytester, test_shared=SHARED)
    shared = pytester.path / "data/shared.yaml"
    run(pytester, "--record-mode=record").assert_outcomes(passed=8)
    assert _count(shared) == 8
    if "--max-age" in args:
        time.sleep(1.1)
    run(pytester, *args).assert_outcomes(passed=8)
    assert _count(shared) == 8
    run(pytester).assert_outcomes(passed=8)  # the next run replays every test


FAILING = """
import os
from llm import ask
import pytest

@pytest.mark.promptvcr("data/two.yaml")
def test_fails_after_recording():
    ask("first", os.environ["FAKE_URL"])
    assert False, "the code under test is broken"
"""


def test_a_failing_rewrite_keeps_its_recordings_aside_and_the_summary_says_so(
    pytester: pytest.Pytester, provider_url: str
) -> None:
    make_suite(pytester, test_fail=FAILING)
    two = pytester.path / "data/two.yaml"
    write_cassette(two, chat("first", "old"), chat("second", "old"))
    before = two.read_bytes()
    result = run(pytester, "--record-mode=rewrite")
    result.assert_outcomes(failed=1)
    assert two.read_bytes() == before
    aside = pytester.path / "data/two.rerecorded.yaml"
    assert _count(aside) == 1
    result.stdout.fnmatch_lines(
        [
            "requests: 0 replayed, 0 recorded, 0 missed, 1 kept aside",
            "recordings kept aside (the test failed, its cassette left as it was): 1",
            f"  test_fail.py::test_fails_after_recording: {aside}",
        ]
    )


STREAM_AND_HOOK = """
import os
import openai
import pytest
import promptvcr

URL = os.environ["FAKE_URL"]

def client():
    return openai.OpenAI(api_key="sk-test-key-0000", base_url=URL, max_retries=0)

@pytest.mark.promptvcr("data/stream.yaml")
def test_consumer_raises():
    stream = client().chat.completions.create(
        model="m", messages=[{"role": "user", "content": "tell me"}], stream=True)
    with pytest.raises(ZeroDivisionError):
        for chunk in stream:
            1 / 0

def refuse_one(request):
    if b"bad" in request.content:
        raise ValueError("this hook cannot handle it")
    return request

def test_hook_raises_on_one():
    hooked = promptvcr.use_cassette(
        "data/hooked.yaml", record_mode="record", before_record_request=refuse_one
    )
    with pytest.raises(promptvcr.CassetteWriteError, match="ValueError: this hook cannot") as raised:
        with hooked:
            for text in ("good one", "bad one", "good two"):
                client().chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
    assert isinstance(raised.value.__cause__, ValueError)
"""


def test_an_abandoned_stream_and_a_raising_hook_lose_only_what_they_must(
    pytester: pytest.Pytester, provider_url: str
) -> None:
    make_suite(pytester, test_io=STREAM_AND_HOOK)
    result = run(pytester, "--record-mode=record")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["requests: 0 replayed, 1 recorded, 0 missed"])
    (stream,) = fileformat.loads(
        (pytester.path / "data/stream.yaml").read_text(), pytester.path / "data/stream.yaml"
    )
    assert stream.response.end == "closed" and stream.response.chunks
    hooked = pytester.path / "data/hooked.yaml"
    asked = [i.request.content for i in fileformat.loads(hooked.read_text(), hooked)]
    assert [b"good one" in c for c in asked] == [True, False] and b"good two" in asked[1]


CHILD = """
import os
import subprocess
import sys
from llm import ask
import pytest
import promptvcr

CODE = "import promptvcr, llm\\nwith promptvcr.use_cassette('data/child.yaml'):\\n    assert llm.ask('child')"

def test_through_a_subprocess():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), *sys.path])}
    subprocess.run([sys.executable, "-c", CODE], check=True, env=env, cwd=os.getcwd())

@pytest.mark.promptvcr
def test_hello():
    assert ask("hello") == "Hi!"

def test_through_promptvcr_serve(promptvcr_serve):
    server = promptvcr_serve("data/served.yaml")
    assert ask("served", server.url + "/openai/v1") == "Yes"
"""


def test_prune_keeps_what_a_subprocess_or_a_script_uses(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    make_suite(pytester, test_child=CHILD)
    root = pytester.path
    child = write_cassette(root / "data/child.yaml", chat("child", "Yes"), chat("unused", "No"))
    hello = write_cassette(root / "cassettes/test_child/test_hello.yaml", chat("hello", "Hi!"))
    script = write_cassette(root / "cassettes/hello.yaml", chat("from a script", "Yes"))
    served = write_cassette(root / "data/served.yaml", chat("served", "Yes"), chat("not served", "No"))
    for path in (child, hello, script, served):
        os.utime(path, (time.time() - 60, time.time() - 60))
    run(pytester, "--cassette-unused=ignore").assert_outcomes(passed=3)
    capsys.readouterr()
    assert main(["prune"]) == 0
    out = capsys.readouterr().out
    assert "removed interactions[1] from data/child.yaml (no test played them)" in out
    assert "removed interactions[1] from data/served.yaml (no test played them)" in out
    assert "kept cassettes/hello.yaml: no test of the run used it" in out
    assert _count(child) == 1 and _count(hello) == 1 and _count(script) == 1 and _count(served) == 1
    run(pytester).assert_outcomes(passed=3)  # the pruned suite still replays, the child and the server too
