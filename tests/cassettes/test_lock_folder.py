"""The lock folder ``$TMPDIR/promptvcr-locks-<uid>`` is this user's own (issue 54, scenario 7).

Another local user who creates it first (or makes it writable to all) could hold a cassette's
lock and stall every recording for a minute, or fail it. promptvcr creates it ``0700`` and uses
it only when it belongs to the current user and no one else may write to it; otherwise the
recording fails at once with a clear error, and the file on disk is left as it was.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import openai
import pytest
from fake_provider import FakeProvider

import promptvcr
from promptvcr import CassetteWriteError


def _ask(provider: FakeProvider, text: str) -> str | None:
    sdk = openai.OpenAI(api_key="sk-test", base_url=provider.openai_base_url, max_retries=0)
    reply = sdk.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
    return reply.choices[0].message.content


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return scratch


def _locks(temp: Path) -> Path:
    return temp / f"promptvcr-locks-{os.getuid()}"


def test_the_lock_folder_is_created_private(provider: FakeProvider, tmp_path: Path, temp: Path) -> None:
    with promptvcr.use_cassette(tmp_path / "mine.yaml", record_mode="record"):
        assert _ask(provider, "hello") == "echo 1: hello"
    assert stat.S_IMODE(_locks(temp).stat().st_mode) == 0o700
    assert "hello" in (tmp_path / "mine.yaml").read_text()


def _refused(provider: FakeProvider, cassette: Path) -> str:
    with pytest.raises(CassetteWriteError) as refused, promptvcr.use_cassette(cassette, record_mode="record"):
        _ask(provider, "hello")
    return str(refused.value)


def test_a_lock_folder_others_may_write_to_is_refused(
    provider: FakeProvider, tmp_path: Path, temp: Path
) -> None:
    _locks(temp).mkdir(mode=0o777)
    os.chmod(_locks(temp), 0o777)  # the umask would have narrowed it
    message = _refused(provider, tmp_path / "shared.yaml")
    assert str(_locks(temp)) in message and "writable by other users" in message and "TMPDIR" in message
    assert not (tmp_path / "shared.yaml").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_lock_folder_of_another_user_is_refused(provider: FakeProvider, tmp_path: Path, temp: Path) -> None:
    _locks(temp).mkdir(mode=0o700)
    os.chown(_locks(temp), 4242, 4242)
    message = _refused(provider, tmp_path / "theirs.yaml")
    assert "belongs to user id 4242" in message and str(_locks(temp)) in message


def test_a_symlink_in_place_of_the_lock_folder_is_refused(
    provider: FakeProvider, tmp_path: Path, temp: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    _locks(temp).symlink_to(elsewhere)
    message = _refused(provider, tmp_path / "linked.yaml")
    assert "is not a folder" in message
    assert list(elsewhere.iterdir()) == []
