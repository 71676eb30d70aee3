"""The failure text of a miss or a blocked connection: the message, then where the code sent it.

A traceback through the SDK's retry loop and the HTTP client says nothing the message does
not; the frames that matter are the test's and the application's own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["failure_text"]

#: promptvcr's own folder, however deep this module sits in it (its frames are not the test's).
_PACKAGE_DIR = Path(__file__).resolve().parents[__name__.count(".") - 1]
_MAX_FRAMES = 6


def _library_dirs() -> tuple[Path, ...]:
    import sysconfig  # only on a failure

    paths = sysconfig.get_paths()
    names = ("stdlib", "platstdlib", "purelib", "platlib")
    return (*{Path(paths[name]).resolve() for name in names if name in paths}, _PACKAGE_DIR)


def _is_under(path: Path, directories: tuple[Path, ...]) -> bool:
    return any(path.is_relative_to(directory) for directory in directories)


def failure_text(
    item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException], error: BaseException
) -> str:
    """``error``'s message, then the test's and the application's frames that led to it.

    ``error`` is the exception itself, or the one found inside the exception group raised.
    """
    libraries = _library_dirs()
    root = item.config.rootpath
    frames = []
    for entry in excinfo.traceback:
        path = Path(entry.path).resolve()
        if _is_under(path, libraries) or path.name.startswith("<"):
            continue
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        statement = str(entry.statement).strip().splitlines()
        code = f": {statement[0].strip()}" if statement else ""
        frames.append(f"  {shown}:{entry.lineno + 1} in {entry.name}{code}")
    text = str(error)
    if frames:
        text += "\nSent from:\n" + "\n".join(frames[-_MAX_FRAMES:])
    return text
