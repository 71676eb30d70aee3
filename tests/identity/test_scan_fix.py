"""``promptvcr scan`` finds this machine's values in old cassettes; ``--fix-identity`` plans
writing them as placeholders, ``--apply`` does it, and nothing else in the file changes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_provider import FakeProvider
from hypothesis import given
from hypothesis import strategies as st
from machines import ask, be
from property_settings import property_settings

import promptvcr
from promptvcr.cli import main
from promptvcr.commands.keeping.identityfix import plan_file
from promptvcr.files import fileformat
from promptvcr.files.reading import parse_document
from promptvcr.identity import Identity, MachineValue


def test_an_old_cassette_is_reported_planned_and_fixed_then_replays_elsewhere(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = tmp_path / "old.yaml"
    home = be(monkeypatch, tmp_path / "a", "alicewonder", "alice-laptop")
    with promptvcr.use_cassette(cassette, record_mode="record", identity=False):  # as before issue 58
        ask(fake, f"read {home}/app/notes.txt for alicewonder on alice-laptop")
    before = cassette.read_text()
    assert "alicewonder" in before

    assert main(["scan", str(cassette)]) == 0  # not a secret: the exit status stays
    said = capsys.readouterr().out
    assert "interactions[0]: <host> x2, <project> x2, <user> x2" in said and "--fix-identity" in said
    assert main(["scan", "--fix-identity", str(cassette)]) == 0
    assert "1 file(s) would be rewritten" in capsys.readouterr().out
    assert cassette.read_text() == before  # a plan writes nothing
    assert main(["scan", "--fix-identity", "--apply", str(cassette)]) == 0
    after = cassette.read_text()
    assert "alicewonder" not in after and "alice-laptop" not in after and str(home) not in after
    assert (
        main(["scan", str(cassette)]) == 0 and "identity" not in capsys.readouterr().out.split("rewrote")[-1]
    )

    bob = be(monkeypatch, tmp_path / "b", "bobbuilder", "bob-desktop")
    with promptvcr.use_cassette(cassette):
        answer = ask(fake, f"read {bob}/app/notes.txt for bobbuilder on bob-desktop")
    assert answer.endswith(f"read {bob}/app/notes.txt for bobbuilder on bob-desktop")


def test_apply_without_fix_identity_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", "--apply", str(tmp_path)]) == 2
    assert "give both" in capsys.readouterr().out


def test_a_file_the_writer_does_not_give_back_is_left_with_a_word(tmp_path: Path) -> None:
    path = tmp_path / "hand.yaml"
    text = (
        "interactions:\n- request: {method: GET, url: 'http://127.0.0.1/x?p=/home/alice/src'}\n"
        "  response: {status: 200}\nversion: 1\n"
    )
    path.write_text(text)
    identity = Identity([MachineValue("home", "/home/alice", "path")])
    plan = plan_file(path, text, parse_document(text, path), identity, rewrite=True)
    assert plan is not None and plan.text is None and "not rewritten" in plan.refusal


VALUES = (
    MachineValue("project", "/home/alice/src/app", "path"),
    MachineValue("home", "/home/alice", "path"),
    MachineValue("user", "alicewonder", "name"),
    MachineValue("host", "alice-laptop", "name"),
)
_WORDS = st.sampled_from(
    ["/home/alice/src/app/x.py", "/home/alice", "alicewonder", "alice-laptop", "/home/alicea", "hello"]
)
_TEXT = st.lists(
    st.one_of(
        _WORDS, st.text(st.characters(blacklist_characters="<%\\/", blacklist_categories=("Cs",)), max_size=8)
    ),
    max_size=6,
).map(" ".join)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key != "identity":
                yield key
                yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


_MARKER = re.compile(r"^  identity:\n(?:  - \w+\n)+", re.M)


@property_settings(40)
@given(st.lists(st.tuples(_TEXT, _TEXT), min_size=1, max_size=3))
def test_everything_but_the_machine_values_stays_byte_for_byte(
    tmp_path_factory: Any, texts: list[tuple[str, str]]
) -> None:
    path = tmp_path_factory.mktemp("fix") / "c.yaml"
    items = [
        {
            "request": {
                "method": "POST",
                "url": "http://127.0.0.1:9/v1/chat",
                "json": {"messages": [{"content": asked}]},
            },
            "response": {"status": 200, "json": {"content": said}},
        }
        for asked, said in texts
    ]
    text = fileformat.dumps(items, path)
    plan = plan_file(path, text, parse_document(text, path), Identity(VALUES), rewrite=True)
    if plan is None:
        assert (
            not any(value.text in text for value in VALUES if value.name != "home") or "/home/alicea" in text
        )
        return
    assert plan.text is not None
    new_items = parse_document(plan.text, path)["interactions"]
    expected = Identity(VALUES)
    assert list(_strings(new_items)) == [expected.text(s) for s in _strings(items)]
    kept_before = [line for line in text.splitlines() if expected.text(line) == line]
    kept_after = [line for line in _MARKER.sub("", plan.text).splitlines() if "<" not in line]
    assert kept_after == kept_before
