"""Living beside pytest-recording: who owns the shared options, and the line that says so.

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

__all__ = ["RECORDING", "RecordingHookSpec", "promptvcr_cassette_dir", "recording_loads", "status_line"]

#: pytest-recording's plugin name (its pytest11 entry point).
RECORDING = "recording"


def recording_loads(pluginmanager: pytest.PytestPluginManager) -> bool:
    """Whether pytest-recording is, or is about to be, registered in this run."""
    if pluginmanager.has_plugin(RECORDING):
        return True
    if pluginmanager.is_blocked(RECORDING) or os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    # Entry points load in no fixed order: pytest-recording may come after us.
    return "pytest_recording" in sys.modules or importlib.util.find_spec("pytest_recording") is not None


class RecordingHookSpec:
    """pytest-recording's hook, declared when pytest-recording is absent."""

    @pytest.hookspec
    def pytest_recording_configure(self, config: pytest.Config, vcr: Any) -> None:
        """Called by promptvcr once, with a stand-in ``vcr`` that notes what it is asked."""


def status_line(recording_active: bool) -> str | None:
    if not recording_active:
        return None
    return (
        "promptvcr: pytest-recording is installed too: it runs @pytest.mark.vcr tests and owns "
        "--record-mode/--block-network/--allowed-hosts (vcrpy names: none, once, new_episodes, all, "
        "rewrite; promptvcr maps them for its own cassettes, or use --promptvcr-record-mode); "
        "promptvcr runs @pytest.mark.promptvcr tests. Choose one with -p no:recording or -p no:promptvcr."
    )


@pytest.fixture(scope="module")
def promptvcr_cassette_dir() -> str | os.PathLike[str] | None:
    """The folder of a module's default cassettes, like pytest-recording's ``vcr_cassette_dir``
    (``promptvcr migrate`` renames that one to this). ``None`` (the default):
    ``cassettes/<module>/`` beside the test file, or ``cassette_dir`` of ``promptvcr_config``."""
    return None
