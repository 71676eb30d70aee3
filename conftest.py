"""How many processes this repository's runs use (pyproject's ``-n auto --maxprocesses=2``).

Two workers halve the whole suite on the 2-core CI machine, but each costs seconds to start
(importing every SDK again): ``python -m pytest examples -q``, the first command of the README,
took 5.4-5.9 s on two workers and 1.3 s in one process. So ``-n auto`` means one process
(no worker at all) for a run of the examples or of files named one by one, and two workers for
the suite or a folder of it. ``-n 2`` on the command line still gets two.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
#: Folders whose tests are few and quick: never worth starting workers for.
SMALL = (ROOT / "examples",)


def _is_small(arg: str, invocation_dir: Path) -> bool:
    path = (invocation_dir / arg.split("::", 1)[0]).resolve()
    return path.is_file() or any(path == small or small in path.parents for small in SMALL)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """0 (run in this process) when every path of the run is small; else xdist's own count."""
    args = [arg for arg in config.args if not arg.startswith("-")]
    invocation_dir = config.invocation_params.dir
    if args and all(_is_small(arg, invocation_dir) for arg in args):
        return 0
    return None
