"""Background hosts: telemetry answered locally, token endpoints passed through, both listed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest
import requests
from fake_provider import FakeProvider
from network_guard import no_network

import promptvcr
from promptvcr.matching.background import DEFAULT_IGNORE_HOSTS, DEFAULT_PASSTHROUGH_HOSTS, BackgroundHosts


def test_telemetry_is_answered_locally_in_every_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def exporter() -> int:
        async with (
            aiohttp.ClientSession() as session,
            session.post("https://eu.i.posthog.com/batch", json={}) as r,
        ):
            return r.status

    for mode in ("replay", "record", "rewrite"):
        path = tmp_path / f"{mode}.yaml"
        with no_network(monkeypatch) as attempts, promptvcr.use_cassette(path, record_mode=mode) as cassette:
            assert (
                requests.post("https://api.smith.langchain.com/runs/batch", json={"runs": []}).status_code
                == 204
            )
            assert asyncio.run(exporter()) == 204
        assert attempts == []
        assert cassette.background_hosts == {
            "api.smith.langchain.com": "ignored",
            "eu.i.posthog.com": "ignored",
        }
        assert [p.outcome for p in cassette.played] == ["ignored", "ignored"]
        assert not path.exists() or "posthog" not in path.read_text()


def test_passthrough_hosts_reach_the_server_and_are_never_recorded(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    with (
        FakeProvider() as fake,
        promptvcr.use_cassette(path, record_mode="record", passthrough_hosts=["127.0.0.1"]) as c,
    ):
        assert requests.get(f"{fake.base_url}/raw/json").json()["n"] == 1
    assert c.background_hosts == {"127.0.0.1": "passthrough"} and len(fake.requests) == 1
    assert not path.exists()


def test_empty_lists_make_background_hosts_ordinary_traffic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = promptvcr.use_cassette(tmp_path / "c.yaml", ignore_hosts=())
    with no_network(monkeypatch) as attempts, pytest.raises(promptvcr.CassetteMiss), cassette:
        requests.post("https://us.i.posthog.com/batch", json={})
    assert attempts == []


def test_matching_covers_subdomains_only() -> None:
    hosts = BackgroundHosts(DEFAULT_IGNORE_HOSTS, DEFAULT_PASSTHROUGH_HOSTS)
    assert hosts.treatment("https://o12.ingest.us.sentry.io/api/1/envelope/") == (
        "o12.ingest.us.sentry.io",
        "ignored",
    )
    assert hosts.treatment("https://oauth2.googleapis.com/token") == ("oauth2.googleapis.com", "passthrough")
    assert hosts.treatment("https://notsentry.io/x") is None
    assert hosts.treatment("https://api.openai.com/v1/chat/completions") is None
    with pytest.raises(TypeError, match="collection of host names"):
        BackgroundHosts("posthog.com", ())
