"""Where ``import-vcr`` may write: one source to one name, and never over a file holding more.

Output names are derived from source names (``a.yml`` and ``a.yaml.gz`` both become
``a.yaml``), and a folder's tree is kept under ``--out`` (two source folders holding
``chat/a.yaml`` give one output name). Written one after the other, the second source would
silently replace the first: issue 42 measured six sources written as two files, "6/6
imported". So every target is planned before anything is written (:func:`collisions`), and a
target already in ``--out`` is replaced only when the conversion holds every interaction it
holds (:func:`holds_more`): re-importing the same source is a no-op, a richer file stays.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import CassetteError
from ..files import fileformat

__all__ = ["collisions", "holds_more"]


def collisions(planned: Iterable[tuple[Path, Path]]) -> dict[Path, str]:
    """Each source whose output name another source also gets, with the reason it is skipped."""
    by_target: dict[Path, list[Path]] = {}
    for source, target in planned:
        key = Path(str(target).lower())  # a.yaml and A.yaml are one file on macOS and Windows
        by_target.setdefault(key, []).append(source)
    skipped: dict[Path, str] = {}
    for target, sources in by_target.items():
        if len({source.resolve() for source in sources}) < 2:  # one file, given twice
            continue
        names = ", ".join(str(source) for source in sources)
        for source in sources:
            skipped[source] = (
                f"not written: {len(sources)} sources ({names}) would all be written to the same "
                f"output name ({target.name}), each replacing the last. Import them one at a time, "
                f"each with its own --out folder."
            )
    return skipped


def _comparable(item: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in item.items() if k != "recorded"}, sort_keys=True, default=str)


def holds_more(target: Path, data: list[dict[str, Any]]) -> str | None:
    """Why ``target`` must not be replaced by ``data`` (in stored form), or ``None`` when it may:
    absent, or every interaction it holds is in ``data`` too."""
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        return f"{target} exists and cannot be read ({error}); left as it is."
    try:
        existing = fileformat.load_document(text, target)
        written = fileformat.load_document(fileformat.dumps(data, target), target)
    except CassetteError:
        return (
            f"{target} exists and is not a promptvcr cassette; left as it is. Move it away, or "
            f"choose another --out, to import this source."
        )
    new = {_comparable(item) for item in written}
    missing = sum(_comparable(item) not in new for item in existing)
    if not missing:
        return None
    return (
        f"{target} already holds {missing} interaction(s) this import would not write "
        f"({len(existing)} there, {len(written)} imported); left as it is. Move it away, or choose "
        f"another --out, to import this source."
    )
