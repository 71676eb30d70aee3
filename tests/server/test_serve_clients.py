"""Real clients in other processes through ``promptvcr serve``: recorded from a loopback
provider, then replayed with that provider stopped. Python openai SDK, npm openai, curl."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from fake_provider import FakeProvider
from serve_clients import API_KEY, node_modules, run_curl, run_node, run_python

from promptvcr.server import serve

CHAT = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "curl hello"}]})


def _no_key_on_disk(path: Path) -> None:
    files = [path] if path.is_file() else sorted(path.rglob("*.*"))
    assert files
    for file in files:
        text = file.read_text(encoding="utf-8")
        assert API_KEY not in text and "servertest" not in text, file


def test_python_sdk_sync_async_stream_recorded_then_replayed_without_upstream(tmp_path: Path) -> None:
    cassette = tmp_path / "python.yaml"
    with FakeProvider() as fake:
        with serve(cassette, record_mode="record", upstreams={"openai": fake.base_url}) as server:
            recorded = run_python(server.env(), "hello")
        upstream = fake.base_url
    assert recorded == [
        "sync: echo 1: hello",
        "async: echo 2: async hello",
        "stream: |echo |3: |stream |hello|",
    ]
    assert server.report["cassettes"][0]["outcomes"] == {"recorded": 3}
    text = cassette.read_text(encoding="utf-8")
    assert f"url: {upstream}/v1/chat/completions" in text  # keyed and stored by the upstream URL
    _no_key_on_disk(cassette)

    # the provider is gone: every answer comes from the cassette, through the server
    with serve(cassette, record_mode="replay", upstreams={"openai": upstream}) as server:
        replayed = run_python(server.env(), "hello")
    assert replayed == recorded
    assert server.report["cassettes"][0]["outcomes"] == {"replayed": 3}
    assert server.report["cassettes"][0]["missed"] == []


def test_node_openai_plain_and_stream_recorded_then_replayed(tmp_path: Path) -> None:
    modules = node_modules()
    if modules is None:
        pytest.skip("node or npm is not installed: the npm openai SDK cannot run")
    cassette = tmp_path / "node.json"
    with FakeProvider() as fake:
        with serve(cassette, record_mode="record", upstreams={"openai": fake.base_url}) as server:
            recorded = run_node(modules, server.env(), "hi")
        upstream = fake.base_url
    assert recorded == ["plain: echo 1: node hi", "stream: |echo |2: |node |stream |hi|"]
    _no_key_on_disk(cassette)
    with serve(cassette, record_mode="replay", upstreams={"openai": upstream}) as server:
        assert run_node(modules, server.env(), "hi") == recorded
    assert server.report["cassettes"][0]["outcomes"] == {"replayed": 2}


def test_curl_recorded_then_replayed(tmp_path: Path) -> None:
    cassette = tmp_path / "curl.yaml"
    with FakeProvider() as fake:
        with serve(cassette, record_mode="record", upstreams={"openai": fake.base_url}) as server:
            status, live = run_curl(f"{server.url}/openai/v1/chat/completions", CHAT)
        upstream = fake.base_url
    assert status == 200 and json.loads(live)["choices"][0]["message"]["content"] == "echo 1: curl hello"
    _no_key_on_disk(cassette)
    with serve(cassette, record_mode="replay", upstreams={"openai": upstream}) as server:
        status, replayed = run_curl(f"{server.url}/openai/v1/chat/completions", CHAT)
    assert status == 200 and json.loads(replayed) == json.loads(live)


def test_a_miss_from_each_client_shows_the_nearest_request_and_how_to_record(tmp_path: Path) -> None:
    cassette = tmp_path / "miss.yaml"
    with (
        FakeProvider() as fake,
        serve(cassette, record_mode="record", upstreams={"openai": fake.base_url}) as server,
    ):
        run_python(server.env(), "recorded question")
        run_curl(f"{server.url}/openai/v1/chat/completions", CHAT)
    modules = node_modules()
    with serve(cassette, record_mode="replay") as server:  # the built-in openai upstream: never reached
        python_lines = run_python(server.env(), "another question")
        node_lines = run_node(modules, server.env(), "another question") if modules else []
        status, body = run_curl(f"{server.url}/openai/v1/chat/completions", CHAT.replace("hello", "bye"))
    expected = ("promptvcr", str(cassette), "Nearest recorded request", "PROMPTVCR_RECORD_MODE=record")
    assert len(python_lines) == 3
    for line in python_lines:
        assert line.startswith("ERROR 404 ")
        assert all(part in line for part in expected), line
    assert 'messages[0].content: "recorded question" -> "another question"' in python_lines[0]
    if modules is not None:
        assert len(node_lines) == 2
        for line in node_lines:
            assert line.startswith("ERROR 404 ") and all(part in line for part in expected), line
    assert status == 404
    error = json.loads(body)["error"]
    assert error["code"] == "promptvcr_cassette_miss" and error["type"] == "invalid_request_error"
    assert all(part in error["message"] for part in expected)
    assert 'messages[0].content: "recorded question" -> "curl bye"' in error["message"]
    # the server's log prints the same message
    assert error["message"] in server.log_text
    assert len(server.report["cassettes"][0]["missed"]) == 3 + len(node_lines) + 1


def test_two_clients_at_once_on_different_cassettes_of_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    outputs: dict[str, list[str]] = {}

    def client(name: str, env: dict[str, str]) -> None:
        """alpha: the openai SDK in a child process; beta: curl, at the same time."""
        if name == "alpha":
            outputs[name] = run_python(env, name)
        else:
            body = CHAT.replace("curl hello", "beta")
            outputs[name] = list(map(str, run_curl(f"{env['OPENAI_BASE_URL']}/chat/completions", body)))

    with FakeProvider() as fake:
        with serve(folder, record_mode="record", upstreams={"openai": fake.base_url}) as server:
            threads = [threading.Thread(target=client, args=(n, server.env(n))) for n in ("alpha", "beta")]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        upstream = fake.base_url
    assert sorted(p.name for p in folder.iterdir()) == ["alpha.yaml", "beta.yaml"]
    assert (
        "alpha" in (folder / "alpha.yaml").read_text() and "beta" not in (folder / "alpha.yaml").read_text()
    )
    recorded = dict(outputs)
    assert (
        len(recorded["alpha"]) == 3
        and recorded["alpha"][0].startswith("sync: echo ")
        and recorded["alpha"][0].endswith(": alpha")
    )
    assert recorded["beta"][0] == "200" and ": beta" in recorded["beta"][1]
    _no_key_on_disk(folder)

    outputs.clear()
    with serve(folder, record_mode="replay", upstreams={"openai": upstream}) as server:
        threads = [threading.Thread(target=client, args=(n, server.env(n))) for n in ("alpha", "beta")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # a third client names no cassette: told how to address one
        status, body = run_curl(f"{server.url}/openai/v1/chat/completions", CHAT)
    assert outputs == recorded
    assert status == 404 and "/CASSETTE/UPSTREAM/<path>" in json.loads(body)["error"]["message"]
    served = {Path(entry["path"]).name: entry["outcomes"] for entry in server.report["cassettes"]}
    assert served == {"alpha.yaml": {"replayed": 3}, "beta.yaml": {"replayed": 1}}
