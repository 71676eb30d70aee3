"""Record mode adds to a cassette without rewriting what it already holds.

A cassette loaded at the start and unchanged on disk at the save gets the new interactions
appended to its text: a reviewer's comments and the stored text stay byte for byte. A
cassette changed meanwhile (another worker saved into it) or laid out by hand is merged
from its parsed content instead, and nothing either writer recorded is lost.
"""

from __future__ import annotations

from pathlib import Path

import sdk_calls

import promptvcr
from promptvcr.files import fileformat


def _ask(base_url: str, question: str) -> str:
    client = sdk_calls.openai_client(base_url)
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
    return str(answer.choices[0].message.content)


def _questions(path: Path) -> list[str]:
    interactions = fileformat.loads(path.read_text(encoding="utf-8"), path)
    return [i.request.content.decode().split('"content":"')[1].split('"')[0] for i in interactions]


def test_recording_more_keeps_the_existing_text_and_comments(tmp_path: Path, provider) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "chat.yaml"
    with promptvcr.use_cassette(path, record_mode="record"):
        _ask(provider.base_url, "first")
    text = path.read_text()
    commented = text.replace("- request:\n", "# reviewed: the first answer is fine\n- request:\n", 1)
    path.write_text(commented)

    with promptvcr.use_cassette(path, record_mode="record") as cassette:
        _ask(provider.base_url, "first")  # replayed from the cassette
        _ask(provider.base_url, "second")  # recorded
    assert [play.outcome for play in cassette.played] == ["replayed", "recorded"]
    after = path.read_text()
    assert after.startswith(commented.removesuffix("version: 1\n"))
    assert after.endswith("version: 1\n")
    assert _questions(path) == ["first", "second"]


def test_a_cassette_another_writer_changed_meanwhile_is_merged(tmp_path: Path, provider) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "chat.yaml"
    with promptvcr.use_cassette(path, record_mode="record"):
        _ask(provider.base_url, "first")
    with promptvcr.use_cassette(path, record_mode="record"):
        _ask(provider.base_url, "mine")
        # Another worker saves into the same cassette before this one does.
        with promptvcr.use_cassette(path, record_mode="record"):
            _ask(provider.base_url, "theirs")
    assert sorted(_questions(path)) == ["first", "mine", "theirs"]


def test_a_cassette_laid_out_by_hand_is_merged_and_loses_nothing(tmp_path: Path, provider) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "chat.yaml"
    with promptvcr.use_cassette(path, record_mode="record"):
        _ask(provider.base_url, "first")
    stored = fileformat.load_document(path.read_text(), path)
    # An indented sequence and an extra key: text appended after it would not parse.
    hand = "interactions:\n" + "".join(
        "  " + line + "\n" for line in fileformat.dumps(stored, path).splitlines()[1:-1]
    )
    path.write_text(hand + "note: kept by hand\nversion: 1\n")
    assert _questions(path) == ["first"]

    with promptvcr.use_cassette(path, record_mode="record"):
        _ask(provider.base_url, "second")
    assert _questions(path) == ["first", "second"]


KILLED_MID_USE = """
import os, signal, sys
import promptvcr, sdk_calls
client = sdk_calls.openai_client(sys.argv[2])
with promptvcr.use_cassette(sys.argv[1], record_mode="record"):
    for n in range(3):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": f"paid {n}"}])
    os.kill(os.getpid(), signal.SIGKILL)  # a CI timeout, the OOM killer: the cassette never exits
"""


def test_a_recording_is_on_disk_as_soon_as_it_completes(tmp_path: Path, provider) -> None:  # type: ignore[no-untyped-def]
    """Issue 42: a process killed inside its cassette loses at most the request in flight."""
    import os
    import signal
    import subprocess
    import sys

    path = tmp_path / "killed.yaml"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", KILLED_MID_USE, str(path), provider.base_url], env=env, timeout=120
    )
    assert done.returncode == -signal.SIGKILL
    assert _questions(path) == ["paid 0", "paid 1", "paid 2"]
