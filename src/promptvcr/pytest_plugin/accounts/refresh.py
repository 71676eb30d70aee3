"""``--cassette-unused=drop``: at the end of a run, interactions no test of it played are removed.

With ``--record-mode=record`` this re-records in one step: what the tests now send and their
cassettes miss is recorded, what the cassettes hold and no test sends any more is removed,
and every other interaction stays as it was.

It used to drop, after each passing test, what *that* test left unplayed: a cassette shared
by several tests lost every other test's interactions (issue 42: 3 of 48 left, 15 failures on
the next run). Now it acts once, on the run's usage record (:mod:`.tracking`): an interaction
goes only when every use of its cassette in the run left it unplayed, no test that used the
cassette failed or was skipped (those count as using all of it), and the run covered the whole
suite, so no test outside it may play it. Otherwise nothing is dropped and the summary says
why. The same evidence as ``promptvcr prune``, the same rewrite, under the same lock.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import CassetteError
from ...usage.run_record import CassetteUsage, UsageRecord

__all__ = ["drop_unused"]


def drop_unused(record: UsageRecord, shown: dict[str, str] | None = None) -> list[str]:
    """Remove what ``record`` proves unused from each cassette it names; lines for the summary."""
    from ...usage.removal import remove_interactions

    candidates = {path: usage for path, usage in record.cassettes.items() if usage.unplayed}
    if not candidates:
        return []
    names = shown or {}
    if record.incomplete:
        count = sum(len(usage.unplayed) for usage in candidates.values())
        return [
            f"--cassette-unused=drop: {count} unplayed interaction(s) in {len(candidates)} cassette(s) kept: "
            f"the run did not cover the whole suite ({'; '.join(record.incomplete)}), so another test may "
            f"play them. Run the whole suite with --cassette-unused=drop, or `promptvcr prune` after it."
        ]
    lines = []
    for path, usage in sorted(candidates.items()):
        name = names.get(path, path)
        try:
            remove_interactions(Path(path), usage.unplayed, usage.interactions)
        except CassetteError as error:
            lines.append(f"--cassette-unused=drop: {name} kept as it is: {error}")
            continue
        shown_positions = ", ".join(f"interactions[{p}]" for p in usage.unplayed)
        lines.append(f"removed from {name}: {shown_positions} (no test of the run played them)")
        record.cassettes[path] = CassetteUsage(usage.interactions - len(usage.unplayed), [], usage.users)
    return lines
