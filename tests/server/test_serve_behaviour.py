"""How ``promptvcr serve`` serves: unbuffered streams, the in-process cassettes, concurrency,
timing, provider-shaped errors, and the pytest fixtures."""

from __future__ import annotations

import http.client
import json
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import anthropic
import openai
import pytest
from fake_provider import FakeProvider
from plugin_suites import QUIET
from serve_clients import run_curl, run_python

from promptvcr import use_cassette
from promptvcr.server import serve

STREAM = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "stream please"}], "stream": True}


def _post(url: str, body: dict[str, object]) -> http.client.HTTPResponse:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.netloc, timeout=30)
    connection.request("POST", parts.path, json.dumps(body), {"content-type": "application/json"})
    return connection.getresponse()


def test_a_stream_being_recorded_reaches_the_client_unbuffered(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        fake.hold_stream = release = threading.Event()
        with serve(tmp_path / "s.yaml", record_mode="record", upstreams={"openai": fake.base_url}) as server:
            response = _post(f"{server.url}/openai/v1/chat/completions", STREAM)
            assert response.status == 200
            first = response.read1(65536)  # the upstream holds every later event until released
            assert first.startswith(b"data: ") and b"chatcmpl" in first
            release.set()
            rest = response.read()
        assert rest.rstrip().endswith(b"data: [DONE]")
    assert server.report["cassettes"][0]["outcomes"] == {"recorded": 1}


def test_in_process_and_served_cassettes_replay_each_other(tmp_path: Path) -> None:
    in_process, served = tmp_path / "in_process.yaml", tmp_path / "served.yaml"
    question = [{"role": "user", "content": "shared"}]
    with FakeProvider() as fake:
        client = openai.OpenAI(api_key="sk-test", base_url=fake.openai_base_url, max_retries=0)
        with use_cassette(in_process, record_mode="record"):
            live = client.chat.completions.create(model="gpt-4o-mini", messages=question)  # type: ignore[arg-type]
        with serve(served, record_mode="record", upstreams={"openai": fake.base_url}) as server:
            through_server = run_python(server.env(), "served")
        upstream = fake.base_url
    # recorded in-process, replayed through the server to another process
    with serve(in_process, record_mode="replay", upstreams={"openai": upstream}) as server:
        status, body = run_curl(
            f"{server.url}/openai/v1/chat/completions",
            json.dumps({"model": "gpt-4o-mini", "messages": question}),
        )
    assert (
        status == 200
        and json.loads(body)["choices"][0]["message"]["content"] == live.choices[0].message.content
    )
    # recorded through the server, replayed in-process
    with use_cassette(served, record_mode="replay"):
        again = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "served"}]
        )
    assert f"sync: {again.choices[0].message.content}" == through_server[0]


def test_many_concurrent_clients_are_served(tmp_path: Path) -> None:
    cassette = tmp_path / "many.yaml"
    with FakeProvider() as fake:
        with serve(cassette, record_mode="record", upstreams={"openai": fake.base_url}) as server:
            recorded = _post(f"{server.url}/openai/v1/chat/completions", STREAM).read()
        upstream = fake.base_url
    results: list[bytes] = []
    with serve(
        cassette, record_mode="replay", upstreams={"openai": upstream}, options=["--allow-playback-repeats"]
    ) as server:

        def client() -> None:
            results.append(_post(f"{server.url}/openai/v1/chat/completions", STREAM).read())

        threads = [threading.Thread(target=client) for _ in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(results) == 40 and set(results) == {recorded}
    assert server.report["cassettes"][0]["outcomes"] == {"replayed": 40}


def test_recorded_timing_paces_the_replayed_stream(tmp_path: Path) -> None:
    cassette = tmp_path / "slow.yaml"
    slow = {**STREAM, "messages": [{"role": "user", "content": "SLOW one two three four five"}]}
    # 0.1 s between events: the recorded stream lasts long enough that a replay without pacing,
    # bounded by half of it, has room for a loaded host (0.2 s flat was too tight).
    with FakeProvider(chunk_delay=0.1) as fake:
        with serve(cassette, record_mode="record", upstreams={"openai": fake.base_url}) as server:
            started = time.monotonic()
            _post(f"{server.url}/openai/v1/chat/completions", slow).read()
            live = time.monotonic() - started
        upstream = fake.base_url
    assert live >= 0.6
    elapsed = {}
    for timing in ("none", "recorded"):
        with serve(
            cassette, record_mode="replay", upstreams={"openai": upstream}, options=["--timing", timing]
        ) as s:
            started = time.monotonic()
            _post(f"{s.url}/openai/v1/chat/completions", slow).read()
            elapsed[timing] = time.monotonic() - started
    # Paced, the replay waits the recorded gaps (a lower bound: waiting is what the machine
    # cannot shorten); unpaced, it is quicker than paced by most of them. No bound times the
    # machine itself: a loaded host slows both alike.
    assert elapsed["recorded"] >= 0.7 * live, (elapsed, live)
    assert elapsed["none"] <= elapsed["recorded"] - 0.5 * live, (elapsed, live)


def test_errors_take_the_shape_of_the_provider_sdk(tmp_path: Path) -> None:
    with serve(tmp_path / "empty.yaml", record_mode="replay") as server:
        client = anthropic.Anthropic(api_key="sk-ant-test", base_url=f"{server.url}/anthropic", max_retries=0)
        with pytest.raises(anthropic.NotFoundError) as raised:
            client.messages.create(
                model="claude-x", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
            )
        status, body = run_curl(f"{server.url}/nowhere/v1/chat", "{}")
    assert raised.value.body["error"]["type"] == "not_found_error"  # type: ignore[index]
    message = raised.value.body["error"]["message"]  # type: ignore[index]
    assert (
        "promptvcr" in message
        and "empty.yaml" in message
        and "https://api.anthropic.com/v1/messages" in message
    )
    assert status == 404
    assert "'nowhere' is not an upstream" in body and "--upstream NAME=URL" in body and "openai" in body


def test_the_fixture_points_child_processes_at_the_server(promptvcr_serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with FakeProvider() as fake:
        server = promptvcr_serve(
            tmp_path / "fixture.yaml", upstreams={"openai": fake.base_url}, record_mode="record"
        )
        import os

        assert os.environ["OPENAI_BASE_URL"] == f"{server.url}/openai/v1"
        assert os.environ["ANTHROPIC_BASE_URL"] == f"{server.url}/anthropic"
        assert os.environ["GOOGLE_GEMINI_BASE_URL"] == f"{server.url}/gemini"
        lines = run_python(dict(os.environ), "fixture")
    assert lines[0] == "sync: echo 1: fixture"
    assert server.live_report()["cassettes"][0]["outcomes"] == {"recorded": 3}


def test_the_summary_covers_what_the_server_served(pytester: pytest.Pytester, tmp_path: Path) -> None:
    cassette = tmp_path / "summary.yaml"
    body = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "summed"}]})
    with (
        FakeProvider() as fake,
        serve(cassette, record_mode="record", upstreams={"openai": fake.base_url}) as server,
    ):
        assert run_curl(f"{server.url}/openai/v1/chat/completions", body)[0] == 200
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        f"""
        import json, subprocess
        def test_child(promptvcr_serve):
            server = promptvcr_serve({str(cassette)!r})
            body = {body!r}
            url = server.url + "/openai/v1/chat/completions"
            out = subprocess.run(["curl", "-sS", "--noproxy", "*", "-H", "content-type: application/json",
                                  "--data", body, url], capture_output=True, text=True)
            assert json.loads(out.stdout)["choices"][0]["message"]["content"] == "echo 1: summed", out.stdout
        """
    )
    result = pytester.runpytest(*QUIET, "-p", "no:randomly", "--record-mode=replay")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*promptvcr serve*", "*summary.yaml (replay): 1 replayed, 0 missed*"])


def test_declared_faults_reach_the_clients_of_the_server(tmp_path: Path) -> None:
    cassette = tmp_path / "faults.yaml"
    with FakeProvider() as fake:
        with serve(cassette, record_mode="record", upstreams={"openai": fake.base_url}) as server:
            recorded = _post(f"{server.url}/openai/v1/chat/completions", STREAM).read()
        upstream = fake.base_url
    faults = ["--fault", "http_error:429,retry_after=0.5", "--fault", "cut_stream:2,nth=2"]
    with serve(cassette, record_mode="replay", upstreams={"openai": upstream}, options=faults) as server:
        url = f"{server.url}/openai/v1/chat/completions"
        limited = _post(url, STREAM)
        error = json.loads(limited.read())["error"]
        cut = _post(url, STREAM)
        with pytest.raises(http.client.IncompleteRead) as broken:
            cut.read()
        whole = _post(url, STREAM).read()
    assert limited.status == 429 and limited.headers["retry-after-ms"] == "500"
    assert error["code"] == "rate_limit_exceeded" and "Rate limit reached for gpt-4o-mini" in error["message"]
    assert cut.status == 200 and broken.value.partial.count(b"data: ") == 2
    assert whole == recorded
    assert server.report["cassettes"][0]["outcomes"] == {"fault": 2, "replayed": 1}


def test_fault_flags_say_what_is_wrong() -> None:
    from promptvcr.server.fault_flags import parse_faults

    (fault,) = parse_faults(["read_timeout,after_events=3,path=/v1/*"])
    assert (fault.kind, fault.after_events, fault.path) == ("read_timeout", 3, "/v1/*")
    for wrong, why in (
        ("boom", "unknown kind 'boom'"),
        ("cut_stream:2,when=now", "'when=now'"),
        ("http_error:200", "400 to 599"),
    ):
        with pytest.raises(ValueError, match=why):
            parse_faults([wrong])
