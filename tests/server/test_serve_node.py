"""The node recipe (examples/node): node's own test runner, four tests each starting its own
cassette through the admin API, the openai and @anthropic-ai/sdk npm packages pointed at
``promptvcr serve``. Recorded from a loopback provider, replayed with it stopped and no
``--upstream`` (the cassettes remember theirs); a miss the code swallows fails its test."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from fake_provider import FakeProvider
from serve_clients import npm_modules

from promptvcr.server import serve

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "examples" / "node"
NAMES = ["anthropic-message", "openai-chat", "openai-stream", "rate-limited"]


@pytest.fixture(scope="module")
def modules() -> Path:
    return npm_modules()


def _node_test(
    modules: Path, test_file: Path, server_url: str, **env: str
) -> subprocess.CompletedProcess[str]:
    environment = {
        "PATH": __import__("os").environ["PATH"],
        "NODE_PATH": str(modules),
        "PROMPTVCR_URL": server_url,
        "OPENAI_API_KEY": "sk-proj-nodetest-0123456789abcdefghij",
        "ANTHROPIC_API_KEY": "sk-ant-api03-nodetest-0123456789abcdefghij",
        **env,
    }
    return subprocess.run(
        ["node", "--test", "--test-reporter=spec", str(test_file)],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_node_recipe_records_then_replays_each_test_from_its_own_cassette(
    tmp_path: Path, modules: Path
) -> None:
    cassettes = tmp_path / "cassettes"
    with FakeProvider() as fake:
        upstreams = {"openai": fake.base_url, "anthropic": fake.base_url}
        with serve(None, record_mode="record", upstreams=upstreams, cwd=tmp_path) as server:
            recording = _node_test(
                modules, RECIPE / "chat.test.js", server.url, PROMPTVCR_CASSETTES=str(cassettes)
            )
        assert recording.returncode == 0, recording.stdout + recording.stderr + server.log_text
        assert len(fake.requests) == 5  # four tests, and the retry after the 429
    assert sorted(p.stem for p in cassettes.iterdir()) == NAMES
    limited = yaml.safe_load((cassettes / "rate-limited.yaml").read_text())["interactions"]
    assert [i["response"]["status"] for i in limited] == [429, 200]
    for path in cassettes.iterdir():
        assert "nodetest" not in path.read_text()  # no key on disk
    assert server.process.returncode == 0

    # the provider is gone, and the server is told no upstream: every answer from the cassettes;
    # twice against the same server, as each start is a fresh playback (nothing used up)
    with serve(None, record_mode="replay", cwd=tmp_path) as server:
        for _ in range(2):
            replaying = _node_test(
                modules, RECIPE / "chat.test.js", server.url, PROMPTVCR_CASSETTES=str(cassettes)
            )
            assert replaying.returncode == 0, replaying.stdout + replaying.stderr + server.log_text
            assert "pass 4" in replaying.stdout
        # a miss the code swallows fails its test, and the server's exit
        swallowed = _node_test(
            modules,
            ROOT / "tests" / "server" / "node" / "swallowed.test.js",
            server.url,
            PROMPTVCR_RECIPE=str(RECIPE / "promptvcr.js"),
            PROMPTVCR_SWALLOWED=str(cassettes / "openai-chat.yaml"),
        )
    served = [(Path(e["path"]).stem, e["outcomes"], e["missed"]) for e in server.report["cassettes"]]
    assert (
        served[:4]
        == served[4:8]
        == [
            ("openai-chat", {"replayed": 1}, []),
            ("openai-stream", {"replayed": 1}, []),
            ("anthropic-message", {"replayed": 1}, []),
            ("rate-limited", {"replayed": 2}, []),
        ]
    )
    assert swallowed.returncode == 1, swallowed.stdout
    assert "fail 1" in swallowed.stdout
    assert "never recorded" in swallowed.stdout and "Nearest recorded request" in swallowed.stdout
    assert served[8][0] == "openai-chat" and len(served[8][2]) == 1
    assert server.process.returncode == 1


def test_the_docs_show_the_recipe_as_it_is_tested() -> None:
    page = (ROOT / "docs" / "serve.md").read_text(encoding="utf-8")
    blocks = [block.split("\n", 1)[1].rsplit("```", 1)[0] for block in page.split("```javascript")[1:]]
    shown = [block.split("\n```", 1)[0].rstrip() for block in blocks]
    files = [
        (RECIPE / name).read_text(encoding="utf-8").rstrip() for name in ("promptvcr.js", "chat.test.js")
    ]
    assert shown == files
