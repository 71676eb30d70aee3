"""``--drift-report FILE``: every request a replaying run missed, with its diff, in one file.

When prompts change, many tests miss at once and their failures scroll past one by one.
The report gathers them: per test, the cassette and what differs from the nearest recorded
request, then the one command that re-records exactly those tests (``--record-mode=record``
records only what missed and keeps everything else as it is).

A ``--record-mode=verify`` run adds a second section: each live answer whose structure
differs from its recording (see :mod:`promptvcr.policies.verifying`), per test, with the
command that re-records those tests (``--record-mode=rewrite``: the answers changed, so the
cassettes are recorded anew).
"""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..matching.diagnose import miss_message
from ..matching.key import request_key
from ..policies.modes import record_flag

if TYPE_CHECKING:
    from ..cassette import Cassette

__all__ = ["DriftEntry", "drift_entries", "report_text", "write_report"]


@dataclass(frozen=True)
class DriftEntry:
    nodeid: str
    cassette: str
    message: str
    #: ``"miss"`` (a request no recording matched) or ``"verify"`` (a live answer that drifted).
    kind: str = "miss"

    def to_data(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> DriftEntry:
        return cls(**data)


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def drift_entries(cassette: Cassette, nodeid: str, root: Path) -> list[DriftEntry]:
    """One entry per request the cassette missed, and one per answer verify found drifted."""
    shown = _shown(cassette.path, root)
    entries = [
        DriftEntry(
            nodeid, shown, "\n".join([drift.where, *(f"  {line}" for line in drift.differences)]), "verify"
        )
        for drift in getattr(cassette, "drift", ())
    ]
    if not cassette.missed:
        return entries
    interactions = cassette.interactions
    keys = [request_key(interaction.request, cassette.rules) for interaction in interactions]
    for request in cassette.missed:
        message = miss_message(
            path=Path(_shown(cassette.path, root)),
            request=request,
            interactions=interactions,
            rules=cassette.rules,
            file_exists=cassette.path.exists(),
            times_recorded=keys.count(request_key(request, cassette.rules)),
        )
        entries.append(DriftEntry(nodeid, _shown(cassette.path, root), message))
    return entries


def _verify_text(entries: list[DriftEntry]) -> list[str]:
    entries = sorted(entries, key=lambda entry: (entry.nodeid, entry.cassette))
    tests = list(dict.fromkeys(entry.nodeid for entry in entries if entry.nodeid))
    cassettes = {entry.cassette for entry in entries}
    lines = [
        f"verify: {len(entries)} live answer(s) in {len(cassettes)} cassette(s), {len(tests)} test(s), "
        f"differ in structure from the recording.",
        "",
        "Record them anew, to replay what the provider sends now:",
        f"  python -m pytest {record_flag()}=rewrite " + " ".join(shlex.quote(test) for test in tests),
    ]
    for entry in entries:
        lines += [
            "",
            f"== verify {entry.nodeid or '(outside a test)'}  cassette {entry.cassette}",
            entry.message,
        ]
    return lines


def report_text(entries: list[DriftEntry]) -> str:
    verified = [entry for entry in entries if entry.kind == "verify"]
    if verified:
        head = report_text([entry for entry in entries if entry.kind != "verify"]).rstrip("\n")
        return "\n".join([head, "", *_verify_text(verified)]) + "\n"
    if not entries:
        return "promptvcr drift report: no request missed its cassette.\n"
    entries = sorted(entries, key=lambda entry: (entry.nodeid, entry.cassette))
    tests = list(dict.fromkeys(entry.nodeid for entry in entries if entry.nodeid))
    cassettes = {entry.cassette for entry in entries}
    lines = [
        f"promptvcr drift report: {len(entries)} missed request(s) in {len(cassettes)} cassette(s), "
        f"{len(tests)} test(s).",
        "",
        "Re-record exactly these (the other interactions stay as recorded):",
        "  nox -s record -- " + " ".join(shlex.quote(test) for test in tests),
        "or without nox:",
        f"  python -m pytest {record_flag()}=record " + " ".join(shlex.quote(test) for test in tests),
    ]
    for entry in entries:
        lines += ["", f"== {entry.nodeid or '(outside a test)'}  cassette {entry.cassette}", entry.message]
    return "\n".join(lines) + "\n"


def write_report(path: Path, entries: list[DriftEntry]) -> None:
    from ..credentials.printing import safe_text
    from ..files.storage import write_atomic

    write_atomic(path, safe_text(report_text(entries)))
