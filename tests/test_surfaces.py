"""use_cassette as context manager, async context manager and decorator; record modes from the environment."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import httpx2
import pytest
from fake_provider import FakeProvider

import promptvcr
from promptvcr import RecordMode


def get_json(base_url: str) -> object:
    with httpx2.Client() as client:
        return client.get(f"{base_url}/raw/json").json()


async def aget_json(base_url: str) -> object:
    async with httpx2.AsyncClient() as client:
        return (await client.get(f"{base_url}/raw/json")).json()


@pytest.fixture
def recorded(tmp_path: Path, provider: FakeProvider) -> Path:
    path = tmp_path / "raw.yaml"
    with promptvcr.use_cassette(path, record_mode="record"):
        get_json(provider.base_url)
    return path


def test_decorator_on_a_sync_function_starts_clean_on_every_call(recorded: Path) -> None:
    @promptvcr.use_cassette(recorded)
    def replay() -> object:
        return get_json("http://127.0.0.1:9")

    assert replay() == replay()  # a second call plays the one recorded answer again from the start
    assert replay.__name__ == "replay"


def test_decorator_on_an_async_function(recorded: Path) -> None:
    @promptvcr.use_cassette(recorded)
    async def replay() -> object:
        return await aget_json("http://127.0.0.1:9")

    assert asyncio.run(replay()) == get_json_from_file(recorded)


def get_json_from_file(path: Path) -> object:
    with promptvcr.use_cassette(path):
        return get_json("http://127.0.0.1:9")


def test_async_with(recorded: Path) -> None:
    async def replay() -> tuple[object, list[str]]:
        async with promptvcr.use_cassette(recorded) as cassette:
            value = await aget_json("http://127.0.0.1:9")
        return value, [play.outcome for play in cassette.played]

    value, outcomes = asyncio.run(replay())
    assert outcomes == ["replayed"]
    assert value == get_json_from_file(recorded)


def test_requests_from_worker_threads_are_intercepted(recorded: Path) -> None:
    results: list[object] = []
    with promptvcr.use_cassette(recorded, allow_playback_repeats=True) as cassette:
        workers = [
            threading.Thread(target=lambda: results.append(get_json("http://127.0.0.1:9"))) for _ in range(4)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    assert len(results) == 4 and all(r == results[0] for r in results)
    assert [play.outcome for play in cassette.played] == ["replayed"] * 4


def test_the_innermost_cassette_answers(tmp_path: Path, recorded: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("interactions: []\nversion: 1\n")
    with (
        pytest.raises(promptvcr.CassetteMiss) as miss,
        promptvcr.use_cassette(recorded),
        promptvcr.use_cassette(empty),
    ):
        get_json("http://127.0.0.1:9")
    assert miss.value.cassette == empty


def test_record_mode_comes_from_the_environment_when_not_given(
    recorded: Path, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMPTVCR_RECORD_MODE", "passthrough")
    with promptvcr.use_cassette(recorded) as cassette:
        get_json(provider.base_url)
    assert cassette.record_mode is RecordMode.PASSTHROUGH
    with promptvcr.use_cassette(recorded, record_mode="replay") as cassette:
        get_json("http://127.0.0.1:9")
    assert cassette.record_mode is RecordMode.REPLAY  # the argument wins over the environment


def test_an_unknown_record_mode_lists_the_valid_ones(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMPTVCR_RECORD_MODE", "everything")
    with pytest.raises(ValueError) as error, promptvcr.use_cassette(recorded):
        pass
    assert str(error.value) == (
        "Unknown record mode 'everything' (from the environment variable PROMPTVCR_RECORD_MODE). "
        "Valid modes: replay, record, rewrite, passthrough, verify."
    )
    with pytest.raises(ValueError, match="from the record_mode argument"):
        promptvcr.use_cassette(recorded, record_mode="nope").__enter__()


def test_record_mode_is_a_str_enum() -> None:
    assert RecordMode("record") is RecordMode.RECORD
    assert RecordMode.REPLAY == "replay"
    assert [mode.value for mode in RecordMode] == ["replay", "record", "rewrite", "passthrough", "verify"]


def test_public_api_is_exactly_what_all_lists() -> None:
    import types

    public = {name for name in dir(promptvcr) if not name.startswith("_")}
    # Submodules become attributes once imported; only the names the package defines count.
    submodules = {name for name in public if isinstance(getattr(promptvcr, name), types.ModuleType)}
    assert set(promptvcr.__all__) <= public
    unexpected = public - set(promptvcr.__all__) - submodules
    assert not unexpected, f"public names missing from __all__: {sorted(unexpected)}"
