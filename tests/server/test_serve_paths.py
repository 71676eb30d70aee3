"""Every cassette path a client names stays in the cassette folder (issue 54, scenario 1).

A client of ``promptvcr serve`` may be a web page reached through DNS rebinding, so a path it
names (``POST /_promptvcr/start``, ``/stop``, the ``x-promptvcr-cassette`` header, a folder's
cassette name) must resolve inside the folder once symlinks are resolved, and be a regular
file or absent: ``../``, absolute paths elsewhere, ``~``, symlinks out, FIFOs and devices are
refused with a ``400``, a foreign ``Host`` or an ``Origin`` with the header a ``403``, and
nothing outside the folder is read or created. A FIFO never blocks the server.

The property test drives :class:`~promptvcr.server.shelf.Shelf` itself (the server's
resolver, in this process) over random path strings in a tree with symlinks and a FIFO; the
others drive the real command through the openai SDK and http.client.
"""

from __future__ import annotations

import http.client
import json
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import openai
import pytest
from fake_provider import FakeProvider
from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr.server import serve
from promptvcr.server.shelf import BadPath, Shelf

HEADER = "x-promptvcr-cassette"


def _tree(base: Path) -> tuple[Path, Path]:
    """``base/cassettes`` (the folder served) and ``base/outside`` (a secret cassette, a folder
    to write into), with links out, a link in, a FIFO and a device inside the folder."""
    folder, outside = base / "cassettes", base / "outside"
    (folder / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.yaml").write_text("interactions: []\nversion: 1\n")
    (folder / "kept.yaml").write_text("interactions: []\nversion: 1\n")
    (folder / "out").symlink_to(outside, target_is_directory=True)
    (folder / "leak.yaml").symlink_to(outside / "secret.yaml")
    (folder / "sub" / "back.yaml").symlink_to(folder / "kept.yaml")  # a link that stays inside
    os.mkfifo(folder / "pipe.yaml")
    (folder / "null.yaml").symlink_to("/dev/null")
    return folder, outside


def _snapshot(where: Path) -> dict[str, tuple[int, int]]:
    return {str(path): (path.lstat().st_size, path.lstat().st_mtime_ns) for path in sorted(where.rglob("*"))}


SEGMENTS = st.sampled_from(
    [
        "..",
        ".",
        "",
        "sub",
        "out",
        "leak",
        "leak.yaml",
        "pipe",
        "pipe.yaml",
        "null",
        "kept",
        "new",
        "secret",
        "secret.yaml",
        "~",
        "~root",
        "cassettes",
        "outside",
        "back.yaml",
        "x.json",
        "...",
    ]
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    yield _tree(tmp_path_factory.mktemp("confined"))


@property_settings(300)
@given(
    segments=st.lists(SEGMENTS, min_size=1, max_size=6),
    absolute=st.sampled_from(["", "folder", "outside", "base", "/"]),
)
def test_no_path_a_client_names_opens_or_creates_anything_outside_the_folder(
    tree: tuple[Path, Path], segments: list[str], absolute: str
) -> None:
    folder, outside = tree
    prefix = {"": "", "folder": f"{folder}/", "outside": f"{outside}/", "base": f"{folder.parent}/", "/": "/"}
    given_path = prefix[absolute] + "/".join(segments)
    before = _snapshot(folder.parent)
    shelf = Shelf(f"{folder}/", {"record_mode": "record"})
    try:
        cassette, _ = shelf.start(given_path, {})
    except BadPath:
        assert _snapshot(folder.parent) == before  # refused: nothing opened, nothing created
        return
    except ValueError:
        pytest.fail(f"{given_path!r}: refused with a ValueError that is not a BadPath")
    resolved = Path(os.path.realpath(cassette.path))
    assert resolved.is_relative_to(folder.resolve()), given_path
    assert not resolved.exists() or resolved.is_file()
    shelf.stop(given_path)
    after = _snapshot(folder.parent)
    changed = {path for path in set(before) | set(after) if before.get(path) != after.get(path)}
    assert all(Path(path).resolve().is_relative_to(folder.resolve()) for path in changed), changed


def _post(url: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, object]]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.request("POST", path, body, headers)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read() or b"{}")
    finally:
        connection.close()


def _attacks(folder: Path, outside: Path) -> list[str]:
    return [
        "../outside/secret.yaml",
        "../outside/created",
        "sub/../../outside/created.yaml",
        str(outside / "secret.yaml"),
        str(outside / "created.yaml"),
        "~/promptvcr-created",
        "~root/promptvcr-created.yaml",
        "out/secret.yaml",
        "out/created.yaml",
        "leak.yaml",
        "leak",
        "pipe.yaml",
        "pipe",
        "null.yaml",
        "/dev/zero",
        "/etc/passwd",
        f"{folder}/../outside/created.yaml",
        "sub/../out/created",
    ]


def test_serve_refuses_every_path_out_of_its_folder_and_never_blocks(tmp_path: Path) -> None:
    folder, outside = _tree(tmp_path)
    home_before = set(Path.home().glob("promptvcr-created*"))
    before = _snapshot(tmp_path)
    chat = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
    attacks = _attacks(folder, outside)
    with (
        FakeProvider() as fake,
        serve(f"{folder}/", record_mode="record", upstreams={"openai": fake.base_url}) as server,
    ):
        started = {}
        for attack in attacks:
            status, answer = _post(
                server.url, "/_promptvcr/start", json.dumps({"cassette": attack}).encode(), {}
            )
            started[attack] = (status, str(answer.get("error", "")))
        named = {}
        for attack in attacks:
            status, answer = _post(
                server.url,
                "/openai/v1/chat/completions",
                json.dumps(chat).encode(),
                {HEADER: attack, "content-type": "application/json"},
            )
            named[attack] = (status, json.dumps(answer))
        status, answer = _post(
            server.url, "/_promptvcr/stop", json.dumps({"cassette": "../outside/secret"}).encode(), {}
        )
        stopped = (status, str(answer.get("error", "")))
        # a folder cassette named after the FIFO, and the server still answers afterwards
        client = openai.OpenAI(api_key="sk-test", base_url=f"{server.url}/pipe/openai/v1", max_retries=0)
        with pytest.raises(openai.BadRequestError, match="not a regular file"):
            client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
        inside = openai.OpenAI(api_key="sk-test", base_url=f"{server.url}/fresh/openai/v1", max_retries=0)
        assert inside.chat.completions.create(**chat).choices[0].message.content == "echo 1: hi"  # type: ignore[call-overload]
    assert {attack: status for attack, (status, _) in started.items()} == {attack: 400 for attack in attacks}
    assert {attack: status for attack, (status, _) in named.items()} == {attack: 400 for attack in attacks}
    assert all(
        "outside the cassette folder" in why or "not a regular file" in why or "home folder" in why
        for _, why in [*started.values(), *named.values()]
    )
    assert stopped[0] == 400 and "outside the cassette folder" in stopped[1]
    after = _snapshot(tmp_path)
    created = set(after) - set(before)
    assert created == {str(folder / "fresh.yaml")}  # the one cassette inside, nothing else
    unchanged = {path: when for path, when in before.items() if path != str(folder)}  # it gained fresh.yaml
    assert {path: after[path] for path in unchanged} == unchanged  # nothing that existed changed
    assert set(Path.home().glob("promptvcr-created*")) == home_before


def test_the_cassette_header_answers_programs_on_this_machine_only(tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    chat = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}).encode()
    with (
        FakeProvider() as fake,
        serve(f"{folder}/", record_mode="record", upstreams={"openai": fake.base_url}) as server,
    ):
        port = urlsplit(server.url).port
        tried = {
            "rebound name": {"Host": f"evil.example:{port}"},
            "web page": {"Origin": "https://evil.example"},
        }
        answers = {}
        for name, headers in tried.items():
            answers[name] = _post(
                server.url,
                "/openai/v1/chat/completions",
                chat,
                {**headers, HEADER: "inside", "content-type": "application/json"},
            )
        fine = _post(
            server.url,
            "/openai/v1/chat/completions",
            chat,
            {HEADER: "inside", "content-type": "application/json"},
        )
    assert {name: status for name, (status, _) in answers.items()} == {"rebound name": 403, "web page": 403}
    assert all("programs on this machine only" in json.dumps(answer) for _, answer in answers.values())
    assert fine[0] == 200 and (folder / "inside.yaml").exists()
