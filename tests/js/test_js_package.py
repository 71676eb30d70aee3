"""The npm package (js/promptvcr) as a JavaScript user gets it: ``npm pack``, installed into a
fresh project with vitest, jest, node's test runner and the real npm SDKs (openai,
@anthropic-ai/sdk, @google/genai, the Vercel AI SDK, plain fetch), each runner set up in one line
(tests/js/suite: the vitest plugin, the jest preset, ``--import promptvcr/node-test``).

Per runner, one flow: record against a loopback FakeProvider (each test into its own cassette,
named after its file and its name, no key on disk); replay with the provider stopped and no key
in the environment; then a changed prompt, and a changed prompt the code swallows, fail exactly
those two tests, each with the field that differs printed once. The cassettes vitest recorded
then replay in Python, in-process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import installs
import pytest
import yaml
from fake_provider import FakeProvider
from realtime_server import RealtimeServer

import promptvcr

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "js" / "promptvcr"
SUITE = Path(__file__).parent / "suite"
KEYS = {
    "OPENAI_API_KEY": "sk-proj-jstest-0123456789abcdefghijklmnop",
    "ANTHROPIC_API_KEY": "sk-ant-api03-jstest-0123456789abcdefghijklmnop",
    "GEMINI_API_KEY": "AIzaSyJstest0123456789abcdefghijklmnopq",
}

#: What each runner's suite holds: the cassette of each test, and the runner's command line
#: (each with the reporter its output is read with, never one set in a config file).
_VITEST_ONLY = ["a-shared-cassette", "anthropic-stream", "gemini", "gemini-stream", "plain-fetch", "realtime"]
_EVERY_RUNNER = ["anthropic", "openai.chat", "openai.stream", "swallowed", "vercel-ai-sdk"]
CASSETTES = {
    "vitest": sorted([*_EVERY_RUNNER, *_VITEST_ONLY]),
    "jest": sorted([*_EVERY_RUNNER, "gemini"]),
    "node": sorted([*_EVERY_RUNNER, "subtests", "subtests.inner"]),
}
SUITE_FILES = {
    "vitest": "suite-vitest/chat.test.mjs",
    "jest": "suite-jest/chat.test.cjs",
    "node": "suite-node/chat.test.mjs",
}


#: Each run of a runner with another of its own reporters (the one a user passes on the command
#: line): promptvcr's end-of-run report must not depend on one. The last, the runner's default
#: (node's TAP, as its spec reporter prints each failure twice), is the one the failures are read from.
REPORTERS = {
    "vitest": (["--reporter=verbose"], ["--reporter=dot"], []),
    "jest": (["--verbose"], ["--reporters=summary"], ["--verbose"]),
    "node": (["--test-reporter=spec"], ["--test-reporter=dot"], ["--test-reporter=tap"]),
}


def _command(runner: str, run: int) -> list[str]:
    reporter = REPORTERS[runner][run]
    if runner == "vitest":
        return ["node", "node_modules/vitest/vitest.mjs", "run", *reporter]
    if runner == "jest":
        return ["node", "node_modules/jest/bin/jest.js", *reporter]
    return ["node", "--require", "promptvcr/node-test", "--test", *reporter, "suite-node/"]


def _npm(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["npm", *args, "--no-audit", "--no-fund", "--loglevel=error", "--prefer-offline"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _dependencies() -> Path:
    """A ``node_modules`` of the suite's devDependencies as its lock file pins them, installed
    once per machine (tests/installs.py)."""
    try:
        return installs.js_suite_dependencies()
    except installs.Unavailable as why:  # as tests/server/serve_clients.py: no registry, no npm SDKs
        pytest.skip(str(why))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh project: the suite's files, its dependencies, and promptvcr from ``npm pack``."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed: the npm package cannot be tried")
    deps = _dependencies()
    place = tmp_path_factory.mktemp("js")
    packed = subprocess.run(
        ["npm", "pack", "--pack-destination", str(place), "--loglevel=error"],
        cwd=PACKAGE,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert packed.returncode == 0, packed.stderr
    tarball = place / packed.stdout.strip().splitlines()[-1]
    root = place / "project"
    shutil.copytree(SUITE, root)
    shutil.copy(deps / "package-lock.json", root / "package-lock.json")
    # hard links: a second of copying instead of an install; npm rewrites its own lock file,
    # so that one is a copy of its own, and nothing else in the shared folder is written.
    modules = root / "node_modules"
    linked = subprocess.run(["cp", "-al", str(deps / "node_modules"), str(modules)], check=False)
    if linked.returncode != 0:
        shutil.copytree(deps / "node_modules", root / "node_modules", symlinks=True, dirs_exist_ok=True)
    inner_lock = root / "node_modules" / ".package-lock.json"
    if inner_lock.exists():
        inner_lock.unlink()
        shutil.copy(deps / "node_modules" / ".package-lock.json", inner_lock)
    done = _npm(["install", str(tarball)], root)  # offline: its dependencies are all there
    assert done.returncode == 0, f"npm install {tarball} failed:\n{done.stdout}\n{done.stderr}"
    installed = json.loads((root / "node_modules" / "promptvcr" / "package.json").read_text(encoding="utf-8"))
    assert installed["name"] == "promptvcr"
    return root


def _environment(**extra: str) -> dict[str, str]:
    """This process's environment without any provider key, base URL or promptvcr setting, the
    venv's ``promptvcr`` first on PATH (the package finds it there), no colours."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if not name.endswith(("_API_KEY", "_BASE_URL", "_API_URL"))
        and not (name.startswith("PROMPTVCR_") and name not in ("PROMPTVCR_ALLOW_RECORD_IN_CI",))
        and name not in ("NODE_OPTIONS", "GOOGLE_API_KEY")
    }
    path = os.pathsep.join([str(Path(sys.executable).parent), kept.get("PATH", "")])
    return {**kept, "PATH": path, "NO_COLOR": "1", "FORCE_COLOR": "0", "NO_PROXY": "*", **extra}


def _run(project: Path, runner: str, run: int, **env: str) -> tuple[int, str]:
    command, environment = _command(runner, run), _environment(**env)
    done = subprocess.run(command, cwd=project, env=environment, capture_output=True, text=True, timeout=240)
    return done.returncode, done.stdout + done.stderr


def _failed_tests(runner: str, output: str) -> list[str]:
    """The names of the tests the runner reported failed, from its own reporter's output."""
    if runner == "vitest":
        names = re.findall(r"^ FAIL  \S+ > (.+)$", output, re.MULTILINE)
    elif runner == "jest":
        names = re.findall(r"^\s*✕ (.+?)(?: \(\d+ ms\))?$", output, re.MULTILINE)
    else:
        names = [n for n in re.findall(r"^\s*not ok \d+ - (.+)$", output, re.MULTILINE) if n != "openai"]
    return sorted(set(names))  # a test with two errors (the SDK's, the diff) is named twice


def _changed(project: Path, runner: str, old: str, new: str) -> None:
    path = project / SUITE_FILES[runner]
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 2, old  # the prompt and the assertion's pattern
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.mark.parametrize("runner", ["vitest", "jest", "node"])
def test_a_suite_records_then_replays_without_provider_or_key_and_a_changed_prompt_fails_its_test(
    project: Path, runner: str
) -> None:
    cassettes = project / Path(SUITE_FILES[runner]).parent / "cassettes" / "chat.test"
    with FakeProvider() as fake, RealtimeServer() as live:
        code, output = _run(
            project,
            runner,
            0,
            PROMPTVCR_RECORD_MODE="record",
            PROMPTVCR_UPSTREAMS=f"rt={live.url.replace('ws://', 'http://')}",
            OPENAI_BASE_URL=f"{fake.base_url}/v1",
            ANTHROPIC_BASE_URL=fake.base_url,
            GOOGLE_GEMINI_BASE_URL=fake.base_url,
            **KEYS,
        )
        assert code == 0, output
        recorded = len(fake.requests) + len(live.paths)
    # one cassette per test, named after it; the Vercel AI SDK's test made two requests
    assert sorted(p.stem for p in cassettes.iterdir()) == CASSETTES[runner]
    assert recorded == len(CASSETTES[runner]) + 1 + (runner == "vitest")  # and the shared cassette's
    if runner == "node":  # a subtest's cassette, then its test's again
        inner = (cassettes / "subtests.inner.yaml").read_text(encoding="utf-8")
        outer = (cassettes / "subtests.yaml").read_text(encoding="utf-8")
        assert "inner from node" in inner and "outer from node" in outer and "inner" not in outer
    if runner == "vitest":  # useCassette's, at the path it named; the test's own has the request after
        shared = yaml.safe_load((cassettes.parent / "shared.yaml").read_text(encoding="utf-8"))
        assert "shared greeting" in json.dumps(shared)
        own = yaml.safe_load((cassettes / "a-shared-cassette.yaml").read_text(encoding="utf-8"))
        assert "after the shared one" in json.dumps(own) and "shared greeting" not in json.dumps(own)
    assert len(live.paths) == (runner == "vitest")  # vitest's suite has the realtime session
    for path in cassettes.iterdir():
        assert "jstest" not in path.read_text(encoding="utf-8"), path  # no key on disk
    count = len(CASSETTES[runner]) + (runner == "vitest")  # and the shared one
    assert f"promptvcr (record): {recorded} requests in {count} cassettes: {recorded} recorded" in output

    # the provider is gone, and no key nor base URL is in the environment
    code, output = _run(project, runner, 1, PROMPTVCR_USAGE_RECORD=".promptvcr/usage.json")
    assert code == 0, output
    assert f"{recorded} requests in {count} cassettes: {recorded} replayed" in output
    assert "tokens not spent: replaying saved" in output
    record = json.loads((project / ".promptvcr" / "usage.json").read_text(encoding="utf-8"))
    assert record["incomplete"] == []
    shared = {"shared"} if runner == "vitest" else set()  # useCassette's own
    assert {Path(p).stem for p in record["cassettes"]} == set(CASSETTES[runner]) | shared

    # a changed prompt fails its test; one the code swallows fails its test too; the others pass
    source = (project / SUITE_FILES[runner]).read_text(encoding="utf-8")
    try:
        _changed(project, runner, f"hello claude from {runner}", f"hello claude from {runner}, changed")
        _changed(project, runner, f"swallow from {runner}", f"swallow from {runner}, changed")
        code, output = _run(project, runner, 2, PROMPTVCR_USAGE_RECORD=".promptvcr/failed.json")
    finally:
        (project / SUITE_FILES[runner]).write_text(source, encoding="utf-8")
    assert code != 0, output
    assert _failed_tests(runner, output) == ["anthropic", "swallowed"], output
    for prompt in (f"hello claude from {runner}", f"swallow from {runner}"):
        diff = f'messages[0].content: "{prompt}" -> "{prompt}, changed"'
        assert output.count(diff) == 1, output
    assert "2 requests missed" in output
    # the test whose own code failed told serve so (its usage may need all of its cassette)
    failed = json.loads((project / ".promptvcr" / "failed.json").read_text(encoding="utf-8"))
    assert "1 test(s) failed (their stop said passed: false)" in failed["incomplete"], failed["incomplete"]


def test_cassettes_a_javascript_suite_recorded_replay_in_python(project: Path) -> None:
    import anthropic
    import openai

    cassettes = project / "suite-python"
    with FakeProvider() as fake, RealtimeServer() as live:
        env = {
            "PROMPTVCR_RECORD_MODE": "record",
            "PROMPTVCR_UPSTREAMS": f"rt={live.url.replace('ws://', 'http://')}",
            "PROMPTVCR_CASSETTE_DIR": str(cassettes),
            "OPENAI_BASE_URL": f"{fake.base_url}/v1",
            "ANTHROPIC_BASE_URL": fake.base_url,
            "GOOGLE_GEMINI_BASE_URL": fake.base_url,
            **KEYS,
        }
        code, output = _run(project, "vitest", 2, **env)
        assert code == 0, output
        base = fake.base_url
    # the provider is stopped: every answer comes from the cassettes vitest wrote
    openai_client = openai.OpenAI(api_key="sk-replay", base_url=f"{base}/v1", max_retries=0)
    with promptvcr.use_cassette(cassettes / "chat.test" / "openai.chat.yaml", record_mode="replay"):
        answer = openai_client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hello openai from vitest"}]
        )
    assert str(answer.choices[0].message.content).endswith("hello openai from vitest")
    anthropic_client = anthropic.Anthropic(api_key="sk-ant-replay", base_url=base, max_retries=0)
    with promptvcr.use_cassette(cassettes / "chat.test" / "anthropic.yaml", record_mode="replay"):
        message = anthropic_client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=64,
            messages=[{"role": "user", "content": "hello claude from vitest"}],
        )
    block: Any = message.content[0]
    assert block.text.endswith("hello claude from vitest")
    stored = yaml.safe_load((cassettes / "chat.test" / "openai.chat.yaml").read_text(encoding="utf-8"))
    assert stored["interactions"][0]["request"]["url"] == f"{base}/v1/chat/completions"


def test_the_pages_show_the_one_line_set_ups_the_suites_use() -> None:
    """docs/javascript.md and the package's README show each runner's set-up as tests/js/suite
    uses it (and _command runs node's)."""
    used = [
        "plugins: [promptvcr()]",  # tests/js/suite/vitest.config.mjs
        '"preset": "promptvcr"',  # tests/js/suite/package.json
        "node --require promptvcr/node-test --test",
    ]
    assert used[0] in (SUITE / "vitest.config.mjs").read_text(encoding="utf-8")
    assert used[1] in (SUITE / "package.json").read_text(encoding="utf-8")
    assert " ".join(_command("node", 0)).startswith("node --require promptvcr/node-test --test")
    for page in (ROOT / "docs" / "javascript.md", PACKAGE / "README.md"):
        text = page.read_text(encoding="utf-8")
        assert all(line in text for line in used), page


def test_the_types_check_in_a_strict_typescript_project(project: Path) -> None:
    """ESM and CommonJS imports, the vitest plugin; a wrong record mode is a type error (the
    types are not ``any``: ``@ts-expect-error`` fails when no error is found)."""
    done = subprocess.run(
        ["node", "node_modules/typescript/bin/tsc", "-p", "tsconfig.json"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_versions_page_names_the_versions_the_suite_pins() -> None:
    page = (ROOT / "docs" / "versions.md").read_text(encoding="utf-8")
    pins = json.loads((SUITE / "package.json").read_text(encoding="utf-8"))["devDependencies"]
    missing = [f"{name} {version}" for name, version in pins.items() if f"{name} {version}" not in page]
    assert not missing, f"docs/versions.md does not name {missing}"
