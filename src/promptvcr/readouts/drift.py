"""``--drift-report FILE``: every request a replaying run missed, with its diff, in one file.

When prompts change, many tests miss at once and their failures scroll past one by one.
The report gathers them: per test, the cassette and what differs from the nearest recorded
request, then the one command that re-records exactly those tests (``--record-mode=record``
records only what missed and keeps everything else as it is).

A ``--record-mode=verify`` run adds a second section: each live answer whose structure
differs from its recording (see :mod:`promptvcr.policies.verifying`), per test, with the
command that re-records those tests (``--record-mode=rewrite``: the answers changed, so the
cassettes are recorded anew).

A replay with ``on_tool_drift="replay"`` adds a third: each request replayed though only its
tool results differ from the recording, with the tool, the call id, and both values.

A report named ``*.json`` holds the same entries as data, for tools: ``promptvcr drift``
reads it to list the drifted tests and to write a summary grouped by severity (the drift
workflow, ``nox -s drift``).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..matching.diagnose import miss_message
from ..matching.key import request_key
from ..policies.modes import record_flag

if TYPE_CHECKING:
    from ..cassette import Cassette

__all__ = [
    "REPORT_VERSION",
    "DriftEntry",
    "drift_entries",
    "read_entries",
    "report_text",
    "shown_path",
    "write_report",
]

#: The version of a ``*.json`` drift report.
REPORT_VERSION = 1


@dataclass(frozen=True)
class DriftEntry:
    nodeid: str
    cassette: str
    message: str
    #: ``"miss"`` (a request no recording matched), ``"verify"`` (a live answer that drifted) or
    #: ``"tool-drift"`` (a request replayed though its tool results changed).
    kind: str = "miss"
    #: For verify: the answer (``interactions[i] METHOD url``) and its differences, one per line.
    where: str = ""
    differences: tuple[str, ...] = ()

    def to_data(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> DriftEntry:
        return cls(**{**data, "differences": tuple(data.get("differences", ()))})


def shown_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` when it lies below it, as reports name a cassette."""
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def drift_entries(cassette: Cassette, nodeid: str, root: Path) -> list[DriftEntry]:
    """One entry per request the cassette missed, and one per answer verify found drifted."""
    shown = shown_path(cassette.path, root)
    entries = [
        DriftEntry(
            nodeid,
            shown,
            "\n".join([drift.where, *(f"  {line}" for line in drift.differences)]),
            "verify",
            drift.where,
            tuple(drift.differences),
        )
        for drift in getattr(cassette, "drift", ())
    ]
    for play in cassette.played:
        if play.outcome == "tool-drift":
            where = f"{play.request.method} {play.request.url}"
            lines = "\n".join([f"tool drift: {where}", *(f"  {line}" for line in play.tool_drift)])
            entries.append(DriftEntry(nodeid, shown, lines, "tool-drift", where, tuple(play.tool_drift)))
    if not cassette.missed:
        return entries
    interactions = cassette.interactions
    keys = [request_key(interaction.request, cassette.rules) for interaction in interactions]
    for request in cassette.missed:
        message = miss_message(
            path=Path(shown_path(cassette.path, root)),
            request=request,
            interactions=interactions,
            rules=cassette.rules,
            file_exists=cassette.path.exists(),
            times_recorded=keys.count(request_key(request, cassette.rules)),
        )
        entries.append(DriftEntry(nodeid, shown_path(cassette.path, root), message))
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


def _tool_drift_text(entries: list[DriftEntry]) -> list[str]:
    entries = sorted(entries, key=lambda entry: (entry.nodeid, entry.cassette))
    lines = [
        f"tool drift: {len(entries)} request(s) replayed (on_tool_drift=replay) though their tool results "
        "differ from the recording; the prompt, the tools and the parameters are as recorded.",
        "Each line: the tool (call id as sent): recorded -> sent.",
    ]
    for entry in entries:
        lines += [
            "",
            f"== tool drift {entry.nodeid or '(outside a test)'}  cassette {entry.cassette}",
            entry.message,
        ]
    return lines


def report_text(entries: list[DriftEntry]) -> str:
    tools = [entry for entry in entries if entry.kind == "tool-drift"]
    if tools:
        head = report_text([entry for entry in entries if entry.kind != "tool-drift"]).rstrip("\n")
        return "\n".join([head, "", *_tool_drift_text(tools)]) + "\n"
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
    """The report as text, or as data when ``path`` ends in ``.json``; a credential in either
    is masked (see :mod:`promptvcr.credentials.printing`)."""
    from ..credentials.printing import safe_text
    from ..files.storage import write_atomic

    if path.suffix == ".json":
        ordered = sorted(entries, key=lambda entry: (entry.nodeid, entry.cassette))
        data = {"version": REPORT_VERSION, "entries": [entry.to_data() for entry in ordered]}
        write_atomic(path, safe_text(json.dumps(data, indent=1) + "\n"))
    else:
        write_atomic(path, safe_text(report_text(entries)))


def read_entries(path: Path) -> list[DriftEntry]:
    """The entries of a ``*.json`` drift report; ``ValueError`` saying what to run when it is not one."""
    how = "Write one with: python -m pytest --record-mode=verify --drift-report=drift.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"There is no drift report at {path}. {how}") from None
    except (OSError, ValueError) as error:
        raise ValueError(f"The drift report {path} cannot be read as JSON ({error}). {how}") from None
    if not isinstance(data, dict) or data.get("version") != REPORT_VERSION:
        raise ValueError(f"{path} is not a drift report this promptvcr writes. {how}")
    try:
        return [DriftEntry.from_data(entry) for entry in data["entries"]]
    except (KeyError, TypeError) as error:
        raise ValueError(f"The drift report {path} is damaged ({error}). {how}") from None
