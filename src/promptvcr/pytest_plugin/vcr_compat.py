"""A pytest-recording suite, unmigrated, on promptvcr (registered when pytest-recording is absent).

``@pytest.mark.vcr``, the ``vcr_config``, ``vcr_cassette_dir`` and ``default_cassette_name``
fixtures and vcrpy-format cassettes are honoured as pytest-recording would: the cassette is
``<vcr_cassette_dir>/<default_cassette_name>.yaml``, the marker's positional arguments are
extra cassettes to read, its keywords win over ``vcr_config``, and ``--record-mode`` wins
over both. vcrpy's ``match_on`` becomes a rule: what it leaves out (by default the body)
the key leaves out, and the summary counts the tests whose outcome would change with body
matching: a miss, or another recording served (an older body recorded first for the same URL).
A vcrpy-format file is converted for replay into a promptvcr copy, once per content
(:mod:`promptvcr.importers.replaycopy`), and in place (as ``promptvcr migrate`` does) when
the test records. What does not map is named once in the summary, with ``promptvcr migrate``
as the way out.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..policies.modes import resolve_record_mode, vcr_mode_note
from .record_hooks import HOOKS, vcr_style
from .settings import Options, Settings, cassette_arguments

if TYPE_CHECKING:
    from ..cassette import Cassette
    from ..matching.parts import KeyParts, Rule

__all__ = ["VCR_MARKER", "after_test", "applies", "match_on_rule", "match_on_rules", "settings"]

VCR_MARKER = "vcr"
NAME = "promptvcr-vcr-compat"
_WORKER_OUTPUT = "promptvcr_vcr_compat"
#: Set on a match_on rule that leaves bodies out: its tests are checked for stale cassettes.
_VCR_RULE = "_promptvcr_ignores_bodies"
#: vcr_config keys that need nothing here besides those ``promptvcr migrate`` drops
#: (``importers.suite.DROPPED``): promptvcr names cassettes itself.
_ALSO_HANDLED = frozenset({"path_transformer"})
_MATCHERS = frozenset(
    {"method", "scheme", "host", "port", "path", "query", "uri", "body", "raw_body", "headers"}
)


@dataclass
class _Compat:
    tests: set[str] = field(default_factory=set)
    #: Tests whose outcome body matching would change -> ``"miss"`` or ``"other"`` (see below).
    body_changes: dict[str, str] = field(default_factory=dict)
    notes: dict[str, None] = field(default_factory=dict)  # ordered, once each
    temp: Path | None = None
    configured: bool = False


_STATE = pytest.StashKey[_Compat]()


def applies(item: pytest.Item) -> bool:
    """A test pytest-recording would have run: ``@pytest.mark.vcr`` and no promptvcr marker.

    Asked on entering a test's cassette and again after the test: the answer is kept with the
    test, since looking for a marker that is not there walks every node above it (issue 22)."""
    found = item.stash.get(_APPLIES, None)
    if found is None:
        found = item.stash[_APPLIES] = (
            _STATE in item.config.stash
            and item.get_closest_marker(VCR_MARKER) is not None
            and item.get_closest_marker("promptvcr") is None
        )
    return found


_APPLIES = pytest.StashKey[bool]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_STATE] = _Compat()
    config.addinivalue_line("markers", "vcr: pytest-recording's marker, run by promptvcr until migrated.")
    config.addinivalue_line("markers", "default_cassette(name): pytest-recording's cassette name override.")
    config.addinivalue_line("markers", "block_network: pytest-recording's marker, honoured by promptvcr.")
    config.addinivalue_line("markers", "allowed_hosts: pytest-recording's marker, honoured by promptvcr.")


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None and state.temp is not None:
        import shutil

        shutil.rmtree(state.temp, ignore_errors=True)


# pytest-recording's fixtures, with its defaults -------------------------------------------


@pytest.fixture
def vcr_config() -> dict[str, Any]:
    return {}


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    module = request.node.path
    return os.path.join(module.parent, "cassettes", module.stem)


@pytest.fixture
def default_cassette_name(request: pytest.FixtureRequest) -> str:
    marker = request.node.get_closest_marker("default_cassette")
    if marker is not None and marker.args:
        return str(marker.args[0])
    name = f"{request.cls.__name__}.{request.node.name}" if request.cls else request.node.name
    return re.sub(r"[<>?%*:|\"'/\\]", "-", name)


@pytest.fixture
def vcr(_promptvcr_cassette: Cassette) -> Cassette:
    """pytest-recording's ``vcr`` fixture: here, the test's promptvcr cassette."""
    return _promptvcr_cassette


def after_test(item: pytest.Item, active: Cassette) -> None:
    """After a test with a cassette, before it exits: note an unmigrated test, and one whose
    vcrpy-style matching (``match_on`` without the body) hides a stale cassette.

    A migrated test matching like vcrpy (rules=match_on_rules(...)) is watched too, so a
    stale cassette stays named after ``promptvcr migrate`` kept vcrpy's matching."""
    state = item.config.stash.get(_STATE, None)
    if state is None:  # pytest-recording runs the vcr marker itself
        return
    if applies(item):
        state.tests.add(item.nodeid)
    elif not _matches_like_vcr(active.rules):
        return
    from ..importers.body_preview import change_with_bodies  # a test matching like vcrpy only

    if (change := change_with_bodies(active)) is not None:
        state.body_changes[item.nodeid] = change


def _matches_like_vcr(rules: Sequence[Rule]) -> bool:
    """Whether ``rules`` hold a rule made from vcrpy's ``match_on`` that leaves bodies out. A
    suite's tests share their rules (the defaults, or a ``promptvcr_config``'s), so a tuple of
    them is looked through once."""
    if type(rules) is tuple:
        try:
            return _tuple_matches_like_vcr(rules)
        except TypeError:  # a rule that cannot be hashed
            pass
    return _has_vcr_rule(rules)


def _has_vcr_rule(rules: Sequence[Rule]) -> bool:
    return any(getattr(rule, _VCR_RULE, False) for rule in rules)


_tuple_matches_like_vcr = functools.lru_cache(maxsize=64)(_has_vcr_rule)


# The settings of one test -------------------------------------------------------------------


def match_on_rule(match_on: tuple[str, ...]) -> Rule:
    """The key parts vcrpy's ``match_on`` leaves out, left out of the key (host is never in it)."""
    names = set(match_on)
    whole_uri = "uri" in names
    keep_body = bool({"body", "raw_body"} & names)

    def vcr_match_on(parts: KeyParts) -> KeyParts:
        return replace(
            parts,
            method=parts.method if "method" in names else "",
            path=parts.path if whole_uri or "path" in names else "",
            query=parts.query if whole_uri or "query" in names else (),
            body=parts.body if keep_body else None,
        )

    setattr(vcr_match_on, _VCR_RULE, not keep_body)  # the summary then checks bodies (see above)
    return vcr_match_on


def match_on_rules(match_on: Sequence[str]) -> list[Rule]:
    """The default rules, then vcrpy's ``match_on``: ``promptvcr migrate`` writes this for it."""
    from ..matching.rules import default_rules

    return [*default_rules(), match_on_rule(tuple(match_on))]


def _note(state: _Compat, text: str) -> None:
    state.notes.setdefault(text, None)


def _merged(request: pytest.FixtureRequest, item: pytest.Item) -> tuple[dict[str, Any], list[str]]:
    merged = dict(request.getfixturevalue("vcr_config"))
    extras: list[str] = []
    for marker in reversed(list(item.iter_markers(VCR_MARKER))):  # the closest marker wins
        merged.update(marker.kwargs)
        extras.extend(str(arg) for arg in marker.args)
    return merged, extras


def _rules(merged: dict[str, Any], state: _Compat) -> list[Rule]:
    from ..importers.suite import DEFAULT_MATCH_ON  # vcrpy's, as migrate writes it out
    from ..matching.rules import default_rules

    match_on = tuple(merged.pop("match_on", DEFAULT_MATCH_ON))
    custom = [
        m if isinstance(m, str) else getattr(m, "__name__", repr(m)) for m in match_on if m not in _MATCHERS
    ]
    if custom:
        _note(
            state, f"vcr_config match_on {', '.join(custom)}: custom matchers are not run (promptvcr rules=)"
        )
    names = tuple(m for m in match_on if isinstance(m, str) and m in _MATCHERS)
    return [*merged.pop("rules", default_rules()), match_on_rule(names)]


def settings(request: pytest.FixtureRequest, options: Options) -> Settings:
    """What pytest-recording would have used for this test, in promptvcr's terms."""
    item = request.node
    assert isinstance(item, pytest.Item)
    state = item.config.stash[_STATE]
    _configure_hook(item.config, state)
    merged, extras = _merged(request, item)
    directory = Path(merged.pop("cassette_library_dir", None) or request.getfixturevalue("vcr_cassette_dir"))
    suffix = str(merged.get("serializer", "yaml"))
    path = directory / f"{request.getfixturevalue('default_cassette_name')}.{suffix}"
    given_mode = merged.pop("record_mode", None)
    given_mode = options.record_mode or given_mode  # --record-mode wins, as with pytest-recording
    if given_mode is not None and (note := vcr_mode_note(given_mode)) is not None:
        _note(state, note)
    try:
        mode = resolve_record_mode(given_mode, path)
    except ValueError as error:
        pytest.fail(
            f"promptvcr: {error} Set in vcr_config or the vcr marker of {item.nodeid}.", pytrace=False
        )
    rules = _rules(merged, state)
    hosts = merged.pop("allowed_hosts", None) or ()
    hosts = hosts.split(",") if isinstance(hosts, str) else list(hosts)
    if merged.get("ignore_hosts"):
        from ..matching.background import DEFAULT_PASSTHROUGH_HOSTS

        merged["passthrough_hosts"] = (*DEFAULT_PASSTHROUGH_HOSTS, *merged.pop("ignore_hosts"))
    from ..importers.suite import DROPPED  # the same list migrate uses; importers load only here

    accepted = cassette_arguments() | {"path", "record_mode"}
    options_out: dict[str, Any] = {"rules": rules}
    for key, value in merged.items():
        if key in HOOKS and value is not None:
            options_out[key] = vcr_style(value)  # vcrpy's hooks take vcrpy's values
        elif key in accepted:
            options_out[key] = value
        elif key not in DROPPED and key not in _ALSO_HANDLED:
            _note(state, f"vcr_config {key}: not translated (no promptvcr equivalent)")
    opened = _opened(path, extras, directory, mode.writes_cassette, state)
    return Settings(path, mode, (*options.allowed_hosts, *hosts), options_out, opened=opened)


def _opened(path: Path, extras: list[str], directory: Path, writes: bool, state: _Compat) -> Path | None:
    """The file the cassette opens: ``path`` itself, or a promptvcr copy of vcrpy-format files."""
    sources = [path, *(p if p.is_absolute() else directory / p for p in map(Path, extras))]
    if writes:
        from ..importers.inplace import convert_in_place, is_promptvcr_file

        if not any(p.is_file() for p in sources) or (len(sources) == 1 and is_promptvcr_file(path)):
            return None
        if extras:
            _note(state, "vcr marker extra cassettes are read only while replaying")
        if path.is_file() and not is_promptvcr_file(path):
            convert_in_place(path)
            _note(state, f"converted {path.name} (and others) to promptvcr's format to record into it")
        return None
    from ..importers.replaycopy import replay_copy  # converted once per content (issue 48)

    return replay_copy(path, sources, lambda: _scratch(state))


def _scratch(state: _Compat) -> Path:
    """A folder of this run's, for copies the parse cache's folder cannot keep."""
    if state.temp is None:
        import tempfile

        state.temp = Path(tempfile.mkdtemp(prefix="promptvcr-vcr-"))
    return state.temp


# pytest_recording_configure(config, vcr) ----------------------------------------------------


class _VcrStandIn:
    """What a conftest's ``pytest_recording_configure`` gets for ``vcr``: it notes each call."""

    _state: _Compat

    def __init__(self, state: _Compat) -> None:
        object.__setattr__(self, "_state", state)

    def __getattr__(self, name: str) -> Callable[..., None]:
        def noted(*args: Any, **kwargs: Any) -> None:
            _note(self._state, f"pytest_recording_configure: vcr.{name}(...) is not honoured")

        return noted

    def __setattr__(self, name: str, value: Any) -> None:
        _note(self._state, f"pytest_recording_configure: vcr.{name} = ... is not honoured")


def _configure_hook(config: pytest.Config, state: _Compat) -> None:
    if state.configured:
        return
    state.configured = True
    hook = getattr(config.hook, "pytest_recording_configure", None)
    if hook is not None:
        hook(config=config, vcr=_VcrStandIn(state))


# What the suite would do with body matching -------------------------------------------------


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    state = session.config.stash.get(_STATE, None)
    if workeroutput is not None and state is not None:
        workeroutput[_WORKER_OUTPUT] = [
            sorted(state.tests),
            sorted(state.body_changes.items()),
            list(state.notes),
        ]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    data = getattr(node, "workeroutput", {}).get(_WORKER_OUTPUT)
    state = node.config.stash.get(_STATE, None)
    if data and state is not None:
        state.tests.update(data[0])
        state.body_changes.update((str(nodeid), str(change)) for nodeid, change in data[1])
        for note in data[2]:
            _note(state, note)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if hasattr(config, "workerinput") or state is None or not (state.tests or state.body_changes):
        return
    write = terminalreporter.write_line
    if state.tests:
        write(
            f"promptvcr: {len(state.tests)} test(s) ran from pytest-recording's @pytest.mark.vcr and "
            f"vcr_config (pytest-recording is not installed); `promptvcr migrate` converts cassettes and "
            f"markers for good."
        )
    stale = sorted(state.body_changes)
    misses = sum(change == "miss" for change in state.body_changes.values())
    how = f"({misses} would miss, {len(stale) - misses} would replay another recording)"
    if stale and state.tests:
        write(
            f"promptvcr: {len(stale)} of them would change outcome with body matching {how}: their "
            f"cassettes are stale (vcrpy's match_on ignored bodies): " + ", ".join(stale)
        )
    elif stale:
        write(
            f"promptvcr: {len(stale)} test(s) matching like vcrpy (match_on_rules, no bodies) would change "
            f"outcome with body matching {how}: their cassettes are stale; re-record them "
            f"(--record-mode=rewrite), then drop match_on_rules from promptvcr_config: " + ", ".join(stale)
        )
    for note in state.notes:
        write(f"promptvcr: {note}")
