"""What the plugin was told: the command line, the marker and the ``promptvcr_config`` fixture.

Precedence, written once here: the command line, then the marker, then the
``promptvcr_config`` fixture, then ``$PROMPTVCR_RECORD_MODE``, then the defaults.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..modes import RecordMode, resolve_record_mode
from .naming import default_cassette_path

__all__ = ["MARKER", "Options", "Settings", "parse_options", "settings_for"]

MARKER = "promptvcr"
#: Options of the promptvcr_config fixture that are not use_cassette arguments.
_CONFIG_ONLY = frozenset({"cassette_dir", "allowed_hosts"})


@dataclass(frozen=True)
class Options:
    """The command line, once parsed."""

    record_mode: RecordMode | None = None
    cassette_dir: Path | None = None
    block_network: bool = False
    allowed_hosts: tuple[str, ...] = ()
    unused: str = "warn"


def parse_options(config: pytest.Config) -> Options:
    record_mode = config.getoption("--record-mode")
    cassette_dir = config.getoption("--cassette-dir")
    hosts = [host.strip() for value in config.getoption("--allowed-hosts") for host in value.split(",")]
    return Options(
        record_mode=RecordMode(record_mode) if record_mode else None,
        cassette_dir=(config.invocation_params.dir / cassette_dir) if cassette_dir else None,
        block_network=bool(config.getoption("--block-network")),
        allowed_hosts=tuple(host for host in hosts if host),
        unused=config.getoption("--cassette-unused"),
    )


def _cassette_arguments() -> frozenset[str]:
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


def _record_mode(item: pytest.Item, options: Options, from_marker: Any) -> RecordMode:
    """Command line, then marker, then ``$PROMPTVCR_RECORD_MODE``, then ``replay``."""
    if options.record_mode is not None:
        return options.record_mode
    try:
        return resolve_record_mode(from_marker)
    except ValueError as error:
        where = f"the {MARKER} marker of {item.nodeid}" if from_marker is not None else "the environment"
        pytest.fail(f"promptvcr: {error} Set in {where}.", pytrace=False)


@dataclass(frozen=True)
class Settings:
    path: Path
    record_mode: RecordMode
    allowed_hosts: tuple[str, ...]
    cassette_options: dict[str, Any]


def settings_for(item: pytest.Item, config: Mapping[str, Any], options: Options) -> Settings:
    valid = _cassette_arguments()
    _check_keys(config, valid | _CONFIG_ONLY, "the promptvcr_config fixture")
    marker = item.get_closest_marker(MARKER)
    marker_args: tuple[Any, ...] = marker.args if marker is not None else ()
    marker_kwargs = dict(marker.kwargs) if marker is not None else {}
    if len(marker_args) > 1 or (marker_args and "path" in marker_kwargs):
        pytest.fail(f"promptvcr: the {MARKER} marker of {item.nodeid} takes one path.", pytrace=False)
    path = marker_args[0] if marker_args else marker_kwargs.pop("path", None)
    mode = _record_mode(item, options, marker_kwargs.pop("record_mode", None))
    _check_keys(marker_kwargs, valid, f"the {MARKER} marker of {item.nodeid}")

    test_dir = item.path.parent
    if path is not None:
        cassette_path = test_dir / os.fspath(path)
    else:
        configured = config.get("cassette_dir")
        directory = options.cassette_dir or (test_dir / os.fspath(configured) if configured else None)
        classes = [node.name for node in item.listchain() if isinstance(node, pytest.Class)]
        cassette_path = default_cassette_path(item.path, item.name, classes, directory)
    cassette_options = {k: v for k, v in config.items() if k not in _CONFIG_ONLY} | marker_kwargs
    configured_hosts = config.get("allowed_hosts", ())
    if isinstance(configured_hosts, str):
        configured_hosts = configured_hosts.split(",")
    allowed = (*options.allowed_hosts, *(host.strip() for host in configured_hosts))
    return Settings(cassette_path, mode, allowed, cassette_options)
