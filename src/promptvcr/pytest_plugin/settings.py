"""What the plugin was told: the command line, the marker and the ``promptvcr_config`` fixture.

Precedence, written once here: the command line, then the marker, then the
``promptvcr_config`` fixture, then ``$PROMPTVCR_RECORD_MODE``, then the defaults.
vcrpy's mode names (``none``, ``once``, ``new_episodes``, ``all``) are accepted everywhere a
mode is; ``once`` is resolved per cassette (record it if missing, else replay).
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..policies.modes import ENV_RECORD_MODE, RecordMode, resolve_record_mode
from .naming import cassette_in, default_cassette_path

__all__ = [
    "MARKER",
    "Options",
    "Settings",
    "export_env",
    "export_record_mode",
    "parse_options",
    "settings_for",
]

MARKER = "promptvcr"
#: Options of the promptvcr_config fixture that are not use_cassette arguments.
_CONFIG_ONLY = frozenset({"cassette_dir", "allowed_hosts", "record_mode"})


@dataclass(frozen=True)
class Options:
    """The command line, once parsed."""

    #: As given (one of ours or a vcrpy name), resolved per cassette: ``once`` depends on the file.
    record_mode: str | None = None
    cassette_dir: Path | None = None
    block_network: bool = False
    allowed_hosts: tuple[str, ...] = ()
    unused: str = "warn"


def parse_options(config: pytest.Config) -> Options:
    # By dest, not by flag: with pytest-recording active these options are its own (see .coexist),
    # and its --record-mode reaches promptvcr's cassettes too unless --promptvcr-record-mode is given.
    record_mode = config.getoption("promptvcr_record_mode", None) or config.getoption("record_mode", None)
    cassette_dir = config.getoption("--cassette-dir")
    given_hosts = config.getoption("allowed_hosts", None) or []
    given_hosts = [given_hosts] if isinstance(given_hosts, str) else given_hosts
    hosts = [host.strip() for value in given_hosts for host in value.split(",")]
    return Options(
        record_mode=str(record_mode) if record_mode else None,
        cassette_dir=(config.invocation_params.dir / cassette_dir) if cassette_dir else None,
        block_network=bool(config.getoption("block_network", False)),
        allowed_hosts=tuple(host for host in hosts if host),
        unused=config.getoption("--cassette-unused"),
    )


def export_record_mode(config: pytest.Config, options: Options) -> None:
    """``--record-mode`` for every cassette of the run, ``use_cassette(...)`` in a test included:
    as ``$PROMPTVCR_RECORD_MODE`` until pytest ends (a ``record_mode=`` written in code still wins)."""
    if options.record_mode is not None:
        export_env(config, ENV_RECORD_MODE, options.record_mode)


def export_env(config: pytest.Config, name: str, value: str) -> None:
    """``$name`` set to ``value`` until pytest ends: how a command-line option reaches the
    cassettes a test opens itself, and subprocesses (``promptvcr serve``), without pytest code."""
    before = os.environ.get(name)
    os.environ[name] = value

    def restore() -> None:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before

    config.add_cleanup(restore)


@functools.cache
def cassette_arguments() -> frozenset[str]:
    """``use_cassette``'s arguments, read from its signature once (not once per test)."""
    from ..cassette import use_cassette

    return frozenset(inspect.signature(use_cassette).parameters) - {"path", "record_mode"}


def _check_keys(given: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(set(given) - allowed)
    if unknown:
        pytest.fail(
            f"promptvcr: unknown option(s) {', '.join(unknown)} in {where}. "
            f"Valid options: {', '.join(sorted(allowed))}.",
            pytrace=False,
        )


def _record_mode(item: pytest.Item, options: Options, from_marker: Any, path: Path) -> RecordMode:
    """Command line, marker, ``promptvcr_config``, ``$PROMPTVCR_RECORD_MODE``, then ``replay``."""
    given = options.record_mode if options.record_mode is not None else from_marker
    try:
        return resolve_record_mode(given, path)
    except ValueError as error:
        where = "--record-mode" if options.record_mode is not None else None
        if where is None:
            where = f"the {MARKER} marker of {item.nodeid}" if from_marker is not None else "the environment"
        pytest.fail(f"promptvcr: {error} Set in {where}.", pytrace=False)


@dataclass(frozen=True)
class Settings:
    path: Path
    record_mode: RecordMode
    allowed_hosts: tuple[str, ...]
    cassette_options: dict[str, Any]
    #: The file the cassette opens when it is not ``path`` (a vcrpy cassette converted to replay).
    opened: Path | None = None


def settings_for(
    item: pytest.Item, config: Mapping[str, Any], options: Options, module_dir: Any = None
) -> Settings:
    """``module_dir``: the ``promptvcr_cassette_dir`` fixture's folder, if it gives one."""
    valid = cassette_arguments()
    _check_keys(config, valid | _CONFIG_ONLY, "the promptvcr_config fixture")
    marker = item.get_closest_marker(MARKER)
    marker_args: tuple[Any, ...] = marker.args if marker is not None else ()
    marker_kwargs = dict(marker.kwargs) if marker is not None else {}
    if len(marker_args) > 1 or (marker_args and "path" in marker_kwargs):
        pytest.fail(f"promptvcr: the {MARKER} marker of {item.nodeid} takes one path.", pytrace=False)
    path = marker_args[0] if marker_args else marker_kwargs.pop("path", None)
    given_mode = marker_kwargs.pop("record_mode", config.get("record_mode"))
    _check_keys(marker_kwargs, valid, f"the {MARKER} marker of {item.nodeid}")

    test_dir = item.path.parent
    if path is not None:
        cassette_path = test_dir / os.fspath(path)
    else:
        configured = config.get("cassette_dir")
        directory = options.cassette_dir or (test_dir / os.fspath(configured) if configured else None)
        classes = [node.name for node in item.listchain() if isinstance(node, pytest.Class)]
        cassette_path = default_cassette_path(item.path, item.name, classes, directory)
        if module_dir is not None and options.cassette_dir is None:
            cassette_path = cassette_in(Path(os.fspath(module_dir)), item.name, classes)
    mode = _record_mode(item, options, given_mode, cassette_path)
    cassette_options = {k: v for k, v in config.items() if k not in _CONFIG_ONLY} | marker_kwargs
    configured_hosts = config.get("allowed_hosts", ())
    if isinstance(configured_hosts, str):
        configured_hosts = configured_hosts.split(",")
    allowed = (*options.allowed_hosts, *(host.strip() for host in configured_hosts))
    return Settings(cassette_path, mode, allowed, cassette_options)
