"""A cassette per test through ``promptvcr serve``: the admin start and stop, the header, the
options of ``use_cassette`` as serve's flags and start fields, messages naming those, and a
miss that always reaches the test (the stop's report, the exit status, the pytest fixture).
Clients: the openai SDK (in this process, no cassette of its own) and curl."""

from __future__ import annotations

import json
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest
import yaml
from fake_provider import FakeProvider
from plugin_suites import QUIET
from serve_clients import run_curl

from promptvcr.server import serve

HEADER = "x-promptvcr-cassette"


def _ask(base_url: str, text: str, cassette: Path | None = None, retries: int = 0) -> str:
    headers = {HEADER: str(cassette)} if cassette is not None else None
    client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=retries, default_headers=headers)
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
    return answer.choices[0].message.content or ""


def _swallowed(base_url: str, text: str, cassette: Path | None = None) -> str:
    """The code under test catches the API error and goes on: what it logged."""
    try:
        return _ask(base_url, text, cassette)
    except openai.APIStatusError as error:
        return f"ERROR {error.status_code} {error.message}"


def test_a_cassette_per_test_started_and_stopped_with_its_report(tmp_path: Path) -> None:
    one, two = tmp_path / "one.yaml", tmp_path / "two.yaml"
    with (
        FakeProvider() as fake,
        # the folder served: relative cassette paths are found there
        serve(f"{tmp_path}/", record_mode="replay", upstreams={"openai": fake.base_url}) as server,
    ):
        base = f"{server.url}/openai/v1"
        status, started = server.admin("start", {"cassette": str(one), "record_mode": "record"})
        assert status == 200 and started["mode"] == "record" and started["header"] == {HEADER: str(one)}
        assert _ask(base, "first") == "echo 1: first"  # no header: the one cassette started
        status, report = server.admin("stop", {"cassette": str(one)})
        assert status == 200 and report["ok"] and report["outcomes"] == {"recorded": 1}
        assert "first" in one.read_text()

        # two tests at once, each naming its cassette by the header
        server.admin("start", {"cassette": "two", "record_mode": "record"})  # relative, .yaml added
        server.admin("start", {"cassette": str(one)})
        assert _ask(base, "second", cassette=two) == "echo 2: second"
        assert _ask(base, "first", cassette=one) == "echo 1: first"  # replayed from one
        refused = _swallowed(base, "whose?")  # two started, no header: fails closed
        assert refused.startswith("ERROR 404") and "2 cassettes are started" in refused and HEADER in refused
        report_two = server.admin("stop", {"cassette": "two"})[1]
        report_one = server.admin("stop", {"cassette": str(one)})[1]
        assert report_two["outcomes"] == {"recorded": 1} and report_two["ok"]
        assert report_one["outcomes"] == {"replayed": 1} and report_one["ok"]

        # a miss the code swallowed comes back in the stop's report, with its message
        server.admin("start", {"cassette": str(one)})
        assert _swallowed(base, "not recorded").startswith("ERROR 404")
        status, report = server.admin("stop", {})
        assert (
            status == 200
            and report["ok"] is False
            and report["missed"] == [f"POST {fake.base_url}/v1/chat/completions"]
        )
        message = report["misses"][0]["message"]
        assert '"first" -> "not recorded"' in message
        assert "promptvcr serve --record-mode record" in message and "(pytest:" not in message

        # verify: sent live, the drift in the report
        server.admin("start", {"cassette": str(one), "record_mode": "verify"})
        assert _ask(base, "first") == "echo 3: first" and _ask(base, "new") == "echo 4: new"
        report = server.admin("stop", {})[1]
        assert report["outcomes"] == {"verified": 1, "passthrough": 1}
        assert [d["url"] for d in report["drift"]] == [f"{fake.base_url}/v1/chat/completions"]
        assert "not recorded" in report["drift"][0]["differences"][0]
    assert (tmp_path / "two.yaml").exists() and two.read_text().count("second") >= 1
    assert server.process.returncode == 1  # a request missed


def test_each_start_is_a_fresh_playback(tmp_path: Path) -> None:
    cassette = tmp_path / "again.yaml"
    with (
        FakeProvider() as fake,
        serve(cassette, record_mode="record", upstreams={"openai": fake.base_url}) as server,
    ):
        _ask(f"{server.url}/openai/v1", "once")
    with serve(None, record_mode="replay", cwd=tmp_path) as server:  # no --upstream: the cassette knows it
        for _ in range(3):
            server.admin("start", {"cassette": str(cassette)})
            assert _ask(f"{server.url}/openai/v1", "once") == "echo 1: once"
            assert server.admin("stop", {})[1]["ok"]
        # the header alone (no admin call): the cassette opens on first use, used up after one
        assert _ask(f"{server.url}/openai/v1", "once", cassette=cassette) == "echo 1: once"
        used_up = _swallowed(f"{server.url}/openai/v1", "once", cassette=cassette)
    assert "already been played" in used_up and "--allow-playback-repeats" in used_up
    assert "allow_playback_repeats=True" not in used_up
    assert server.process.returncode == 1


def test_bad_starts_say_what_is_wrong(tmp_path: Path) -> None:
    old = tmp_path / "old.yaml"
    with (
        FakeProvider() as fake,
        serve(old, record_mode="record", upstreams={"openai": fake.base_url}) as server,
    ):
        _ask(f"{server.url}/openai/v1", "aging")
    time.sleep(1.1)
    with serve(None, cwd=tmp_path) as server:
        stale = server.admin("start", {"cassette": str(old), "max_age": "1s", "on_stale": "fail"})
        unknown = server.admin("start", {"cassette": str(old), "recordmode": "record"})
        wrong = server.admin("start", {"cassette": str(old), "on_record_error": "always"})
        nothing = server.admin("stop", {"cassette": str(old)})
    assert (
        stale[0] == 400
        and "--max-age 1 second" in stale[1]["error"]
        and "--on-stale fail" in stale[1]["error"]
    )
    assert (
        "promptvcr serve --record-mode rewrite" in stale[1]["error"] and "max_age=" not in stale[1]["error"]
    )
    assert unknown[0] == 400 and "recordmode" in unknown[1]["error"]
    assert wrong[0] == 400 and "always" in wrong[1]["error"]
    assert nothing[0] == 404 and "is not started" in nothing[1]["error"]
    # the same on the command line: a stale cassette stops the start, naming the flags
    import subprocess
    import sys

    from promptvcr.server.launch import READY_PREFIX  # noqa: F401 - the command is the real one

    done = subprocess.run(
        [sys.executable, "-m", "promptvcr", "serve", str(old), "--max-age", "1s", "--on-stale", "fail"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        done.returncode == 2
        and "--on-stale fail stops here" in done.stderr
        and "Traceback" not in done.stderr
    )


def test_the_command_line_takes_the_options_of_use_cassette(tmp_path: Path) -> None:
    kept, skipped = tmp_path / "kept.yaml", tmp_path / "skipped.yaml"
    with FakeProvider() as fake:
        options = ["--on-record-error", "keep"]
        with serve(kept, record_mode="record", upstreams={"openai": fake.base_url}, options=options) as s:
            base = f"{s.url}/openai/v1"
            assert _ask(base, "FLAKY 429 then fine", retries=1) == "echo 2: FLAKY 429 then fine"
            s.admin("start", {"cassette": str(skipped), "on_record_error": "skip"})  # the default, per test
            assert _ask(base, "FLAKY 500 again", retries=1) == "echo 4: FLAKY 500 again"
            assert s.admin("stop", {})[1]["outcomes"] == {"passthrough": 1, "recorded": 1}
    statuses = [i["response"]["status"] for i in yaml.safe_load(kept.read_text())["interactions"]]
    assert statuses == [429, 200]
    assert [i["response"]["status"] for i in yaml.safe_load(skipped.read_text())["interactions"]] == [200]
    # the warning of the skipped 500 names serve's flag
    assert "--on-record-error keep" in s.log_text and 'on_record_error="keep"' not in s.log_text
    # replayed: the 429 first, then the SDK's retry gets the answer
    with serve(kept, record_mode="replay") as server:
        answer = _ask(f"{server.url}/openai/v1", "FLAKY 429 then fine", retries=1)
    assert answer == "echo 2: FLAKY 429 then fine"
    assert server.report["cassettes"][0]["outcomes"] == {"replayed": 2}
    assert server.process.returncode == 0


def test_a_miss_fails_the_server_and_the_fixture_s_test(tmp_path: Path, pytester: pytest.Pytester) -> None:
    cassette = tmp_path / "fixture.yaml"
    body = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "kept"}]})
    with (
        FakeProvider() as fake,
        serve(cassette, record_mode="record", upstreams={"openai": fake.base_url}) as server,
    ):
        assert run_curl(f"{server.url}/openai/v1/chat/completions", body)[0] == 200
    with serve(cassette, record_mode="replay") as server:
        assert run_curl(f"{server.url}/openai/v1/chat/completions", body.replace("kept", "other"))[0] == 404
    assert server.process.returncode == 1
    assert "1 request(s) missed in" in server.log_text

    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    folder = pytester.path / "suite"  # a relative cassette is found beside the test file, not in the cwd
    folder.mkdir()
    (folder / "kept.yaml").write_text(cassette.read_text())
    (folder / "test_child.py").write_text(
        textwrap.dedent(
            f"""
            import json, subprocess
            def _curl(server, text):
                body = {body!r}.replace("kept", text)
                url = server.url + "/openai/v1/chat/completions"
                command = ["curl", "-sS", "--noproxy", "*", "-H", "content-type: application/json"]
                return subprocess.run([*command, "--data", body, url], capture_output=True, text=True).stdout
            def test_swallows_a_miss(promptvcr_serve):
                _curl(promptvcr_serve("kept.yaml"), "other")  # the child ignores the 404
            def test_replays(promptvcr_serve):
                assert json.loads(_curl(promptvcr_serve("kept.yaml"), "kept"))["choices"]
            def test_its_own_cassette_by_default(promptvcr_serve):
                from pathlib import Path
                mine = Path(__file__).parent / "cassettes" / "test_child" / "test_its_own_cassette_by_default"
                assert promptvcr_serve().cassette == mine.with_suffix(".yaml")
            """
        )
    )
    result = pytester.runpytest(*QUIET, "-p", "no:randomly", "--record-mode=replay")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_swallows_a_miss*",
            "*1 request(s) of this test missed the cassette*",
            "*Nearest recorded request*",
        ]
    )


def test_the_admin_endpoints_answer_programs_on_this_machine_only(tmp_path: Path) -> None:
    with serve(None, cwd=tmp_path) as server:
        calls = {
            "web page": {"Origin": "https://evil.example"},
            "rebound name": {"Host": "evil.example"},
        }
        answers = {}
        for name, headers in calls.items():
            request = urllib.request.Request(
                f"{server.url}/_promptvcr/shutdown", data=b"{}", headers=headers, method="POST"
            )
            try:
                urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10)
                answers[name] = 200
            except urllib.error.HTTPError as error:
                answers[name] = error.code
                assert "programs on this machine only" in json.load(error)["error"]
        assert server.live_report() == {"cassettes": []}  # still running
    assert answers == {"web page": 403, "rebound name": 403}
