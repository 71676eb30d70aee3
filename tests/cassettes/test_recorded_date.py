"""Each recorded interaction keeps its date, and ``max_age`` acts on old ones: warn, fail, rewrite."""

from __future__ import annotations

import json
import random
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path

import jsonschema
import openai
import pytest
import yaml
from fake_provider import FakeProvider
from plugin_suites import OFFLINE, chat, write_cassette

import promptvcr
from promptvcr import RecordMode, StaleCassetteError, StaleCassetteWarning
from promptvcr.files import persister
from promptvcr.files.fileformat import date_text
from promptvcr.policies.staleness import parse_max_age

SCHEMA = Path(promptvcr.__file__).parent / "cassettes" / "cassette.schema.json"


def ask(base_url: str, text: str = "hello") -> str | None:
    client = openai.OpenAI(api_key="sk-test-key-for-replay-0000", base_url=base_url, max_retries=0)
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
    return reply.choices[0].message.content


def dated(question: str, answer: str, recorded: str | None, url: str = OFFLINE) -> dict[str, object]:
    interaction = chat(question, answer)
    interaction["request"]["url"] = f"{url}/chat/completions"  # type: ignore[index]
    if recorded is not None:
        interaction["recorded"] = recorded
    return interaction


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_a_recording_keeps_its_date_in_utc(provider: FakeProvider, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"dated.{suffix}"
    before = datetime.now(timezone.utc).replace(microsecond=0)
    with promptvcr.use_cassette(path, record_mode="record"):
        ask(provider.openai_base_url)
    text = path.read_text(encoding="utf-8")
    document = json.loads(text) if suffix == "json" else yaml.safe_load(text)
    stored = document["interactions"][0]["recorded"]
    assert isinstance(stored, str) and stored.endswith("Z")  # quoted in YAML: text, not a timestamp
    jsonschema.validate(document, json.loads(SCHEMA.read_text(encoding="utf-8")))
    [interaction] = persister.load(path).interactions
    assert interaction.recorded is not None and interaction.recorded.tzinfo is not None
    assert before <= interaction.recorded <= datetime.now(timezone.utc)


def test_a_cassette_without_dates_still_loads_and_a_bad_date_is_reported(tmp_path: Path) -> None:
    old = write_cassette(tmp_path / "old.yaml", chat("hello", "Hi!"))
    [interaction] = persister.load(old).interactions
    assert interaction.recorded is None
    bad = write_cassette(tmp_path / "bad.yaml", dated("hello", "Hi!", "last tuesday"))
    with pytest.raises(promptvcr.CassetteFormatError, match=r"interactions\[0\]\.recorded is 'last tuesday'"):
        persister.load(bad)


def test_a_cassette_older_than_max_age_warns_with_its_age_and_the_command(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "old.yaml", dated("hello", "Hi!", "2020-01-01T00:00:00Z"))
    with pytest.warns(StaleCassetteWarning) as warned, promptvcr.use_cassette(path, max_age="30d"):
        assert ask(OFFLINE) == "Hi!"  # still replayed
    message = str(warned[0].message)
    assert f"cassette {path} is older than max_age=30 days" in message
    age = (datetime.now(timezone.utc) - datetime(2020, 1, 1, tzinfo=timezone.utc)).days
    assert f"1 of its 1 interaction(s) are stale (the oldest was recorded {age} days ago)" in message
    assert "--record-mode=rewrite" in message and "PROMPTVCR_RECORD_MODE=rewrite" in message


def test_fresh_recordings_pass_quietly_and_undated_ones_count_as_stale(tmp_path: Path) -> None:
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    fresh = write_cassette(tmp_path / "fresh.yaml", dated("hello", "Hi!", now))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with promptvcr.use_cassette(fresh, max_age=timedelta(hours=12)):
            ask(OFFLINE)
    undated = write_cassette(tmp_path / "undated.yaml", dated("hello", "Hi!", None), dated("bye", "Bye", now))
    expected = r"1 of its 2 interaction\(s\) are stale \(1 have no recorded date, so their age is unknown\)"
    with pytest.warns(StaleCassetteWarning, match=expected), promptvcr.use_cassette(undated, max_age="12h"):
        ask(OFFLINE)


def test_on_stale_fail_stops_before_the_test_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_cassette(tmp_path / "old.yaml", dated("hello", "Hi!", "2020-01-01T00:00:00Z"))
    failing = promptvcr.use_cassette(path, max_age="30d", on_stale="fail")
    with pytest.raises(StaleCassetteError, match="on_stale=fail stops here") as raised, failing:
        pytest.fail("the body must not run")
    assert raised.value.path == path
    monkeypatch.setenv("PROMPTVCR_MAX_AGE", "4w")  # the environment's, for every cassette
    monkeypatch.setenv("PROMPTVCR_ON_STALE", "fail")
    with pytest.raises(StaleCassetteError), promptvcr.use_cassette(path):
        pass


def test_on_stale_rewrite_records_the_cassette_anew(provider: FakeProvider, tmp_path: Path) -> None:
    url = provider.openai_base_url
    path = write_cassette(tmp_path / "old.yaml", dated("hello", "stale answer", "2020-01-01T00:00:00Z", url))
    with promptvcr.use_cassette(path, max_age="30d", on_stale="rewrite") as cassette:
        assert ask(url) == "echo 1: hello"  # live
    assert cassette.record_mode is RecordMode.REWRITE
    [interaction] = persister.load(path).interactions
    assert b"echo 1: hello" in interaction.response.content
    assert interaction.recorded is not None
    assert datetime.now(timezone.utc) - interaction.recorded < timedelta(minutes=5)
    with warnings.catch_warnings():  # fresh now: replayed, no warning
        warnings.simplefilter("error")
        with promptvcr.use_cassette(path, max_age="30d", on_stale="rewrite") as again:
            assert ask(url) == "echo 1: hello"
    assert again.record_mode is RecordMode.REPLAY and len(provider.requests) == 1


@pytest.mark.parametrize(
    ("given", "seconds"),
    [("30d", 30 * 86400), ("12h", 12 * 3600), ("90m", 5400), ("45s", 45), ("2w", 14 * 86400), (60, 60)],
)
def test_max_age_values(given: str | int, seconds: int) -> None:
    assert parse_max_age(given) == timedelta(seconds=seconds)


def test_a_max_age_that_is_no_age_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_age '30 days' is not an age"):
        promptvcr.use_cassette(tmp_path / "c.yaml", max_age="30 days")
    assert parse_max_age(None) is None and parse_max_age("") is None
    with pytest.raises(ValueError, match="on_stale is 'later'; expected one of warn, fail, rewrite"):
        promptvcr.use_cassette(tmp_path / "c.yaml", on_stale="later")  # type: ignore[arg-type]


def test_the_date_text_of_the_last_second_written_is_the_date_text() -> None:
    """Issue 22: ``date_text`` gives interactions recorded in the same second the text of the
    last one written: the same text as writing each date, for dates naive or aware, in UTC or
    not, a second apart or the same second in another zone, by a datetime subclass too."""

    class Moment(datetime):
        def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
            return "subclass " + super().isoformat(sep, timespec)

    def plain(moment: datetime) -> str:
        if moment.tzinfo is not None:
            moment = moment.astimezone(timezone.utc)
        return moment.replace(tzinfo=None, microsecond=0).isoformat() + "Z"

    chosen = random.Random(22)
    zones = [None, timezone.utc, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5, minutes=-30))]
    start = datetime(2026, 11, 24, 6, 0, 0)
    for _ in range(3000):
        moment = start + timedelta(
            seconds=chosen.choice([0, 0, 1, 59, 3600, -86400 * 400]), microseconds=chosen.randrange(10**6)
        )
        moment = moment.replace(tzinfo=chosen.choice(zones), fold=chosen.randint(0, 1))
        if chosen.random() < 0.05:
            moment = Moment(*moment.timetuple()[:6], moment.microsecond, tzinfo=moment.tzinfo)
        if chosen.random() < 0.01:
            moment = moment.replace(year=chosen.choice([1, 999, 9999]))
        assert date_text(moment) == plain(moment), moment
        start = moment.replace(tzinfo=None) if chosen.random() < 0.1 else start
