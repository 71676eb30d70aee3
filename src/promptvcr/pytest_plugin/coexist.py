"""Living beside pytest-recording (or cassetter): who owns the shared options, and the line that says so.

pytest-recording defines ``--record-mode``, ``--block-network`` and ``--allowed-hosts``
under the same names (and the same ``dest``), and pytest refuses a second definition. When
pytest-recording is going to load, it owns them: promptvcr reads them by their ``dest`` and
maps vcrpy's mode names onto its own, adds ``--promptvcr-record-mode`` for its own names
(``record``, ``replay``, ...), runs ``@pytest.mark.promptvcr`` tests and leaves
``@pytest.mark.vcr`` ones to pytest-recording. ``-p no:recording`` or ``-p no:promptvcr``
chooses one. Without pytest-recording, its hook ``pytest_recording_configure`` is declared
here so that a conftest implementing it still loads (see :mod:`.vcr_compat`).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

import pytest

from ..policies.modes import ENV_PYTEST_RECORD_FLAG
from .settings import export_env

__all__ = [
    "ENV_PYTEST_RECORD_FLAG",
    "RECORDING",
    "RIVALS",
    "RecordingHookSpec",
    "active_rivals",
    "export_record_flag",
    "promptvcr_cassette_dir",
    "record_flag",
    "recording_loads",
    "status_line",
]

#: pytest-recording's plugin name (its pytest11 entry point).
RECORDING = "recording"
#: Plugins that define ``--record-mode`` (and run ``@pytest.mark.vcr``): plugin name -> module.
RIVALS = {RECORDING: "pytest_recording", "cassetter": "cassetter"}


def _loads(pluginmanager: pytest.PytestPluginManager, name: str) -> bool:
    if pluginmanager.has_plugin(name):
        return True
    if pluginmanager.is_blocked(name) or os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    # Entry points load in no fixed order: the other plugin may come after us.
    module = RIVALS[name]
    return module in sys.modules or importlib.util.find_spec(module) is not None


def active_rivals(pluginmanager: pytest.PytestPluginManager) -> list[str]:
    """The plugins owning ``--record-mode`` in this run (registered, or about to be)."""
    return [name for name in RIVALS if _loads(pluginmanager, name)]


def recording_loads(pluginmanager: pytest.PytestPluginManager) -> bool:
    """Whether pytest-recording is, or is about to be, registered in this run."""
    return _loads(pluginmanager, RECORDING)


def record_flag(rivals: list[str]) -> str:
    """promptvcr's record-mode option in a run where ``rivals`` are active."""
    return "--promptvcr-record-mode" if rivals else "--record-mode"


def export_record_flag(config: pytest.Config) -> None:
    """Tell the messages raised during this run which option records here, until pytest ends.

    With pytest-recording active, ``--record-mode=record`` is refused (its modes are vcrpy's),
    so a miss must name ``--promptvcr-record-mode=record``.
    """
    export_env(config, ENV_PYTEST_RECORD_FLAG, record_flag(active_rivals(config.pluginmanager)))


class RecordingHookSpec:
    """pytest-recording's hook, declared when pytest-recording is absent."""

    @pytest.hookspec
    def pytest_recording_configure(self, config: pytest.Config, vcr: Any) -> None:
        """Called by promptvcr once, with a stand-in ``vcr`` that notes what it is asked."""


def status_line(rivals: list[str]) -> str | None:
    if not rivals:
        return None
    shown = {RECORDING: "pytest-recording"}
    names = " and ".join(shown.get(name, name) for name in rivals)
    options = "--record-mode/--block-network/--allowed-hosts" if RECORDING in rivals else "--record-mode"
    return (
        f"promptvcr: {names} installed too: it runs @pytest.mark.vcr tests and owns {options} "
        f"(vcrpy names: none, once, new_episodes, all, rewrite; promptvcr maps them for its own "
        f"cassettes, or use --promptvcr-record-mode); promptvcr runs @pytest.mark.promptvcr tests. "
        f"Choose one with {' or '.join(f'-p no:{name}' for name in rivals)} or -p no:promptvcr."
    )


@pytest.fixture(scope="module")
def promptvcr_cassette_dir() -> str | os.PathLike[str] | None:
    """The folder of a module's default cassettes, like pytest-recording's ``vcr_cassette_dir``
    (``promptvcr migrate`` renames that one to this). ``None`` (the default):
    ``cassettes/<module>/`` beside the test file, or ``cassette_dir`` of ``promptvcr_config``."""
    return None
