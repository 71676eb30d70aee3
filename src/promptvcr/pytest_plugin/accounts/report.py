"""What the suite did with its cassettes: one record per test, and the session's summary.

Records are plain data so that pytest-xdist workers can send theirs to the controller,
which prints one summary for the whole run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..upkeep import drift_lines
from .spending import add_model_tokens, budget_lines, price_line, pricing_installed

if TYPE_CHECKING:
    from ...cassette import Cassette

__all__ = ["CassetteUse", "summary_lines", "unused_of", "use_of"]

_SHOWN_PER_CASSETTE = 5


@dataclass
class CassetteUse:
    """One test's use of one cassette."""

    nodeid: str
    path: str
    mode: str
    outcomes: dict[str, int] = field(default_factory=dict)
    """Requests per outcome: replayed, recorded, passthrough, ..."""
    missed: list[str] = field(default_factory=list)
    """``METHOD url`` of each request that missed."""
    unused: list[str] = field(default_factory=list)
    """``interactions[i] METHOD url`` of each interaction no request played."""
    replayed_tokens: tuple[int, int] = (0, 0)
    recorded_tokens: tuple[int, int] = (0, 0)
    verified_tokens: tuple[int, int] = (0, 0)
    """Tokens of the live answers ``verify`` compared: spent, as a recording's are."""
    drift: list[dict[str, Any]] = field(default_factory=list)
    """What ``--record-mode=verify`` found: ``{where, differences}`` per drifted answer."""
    tool_drift: list[dict[str, Any]] = field(default_factory=list)
    """Requests replayed with ``on_tool_drift="replay"``: ``{where, differences}``, a line per result."""
    models: dict[str, list[int]] = field(default_factory=dict)
    """With genai-prices installed, to price the tokens: ``provider<TAB>model`` -> replayed
    input, output, then spent (recorded or verified) input, output."""
    aside: str = ""
    """A rewrite whose test failed: the file its recordings were kept in (none in the cassette)."""

    def to_data(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> CassetteUse:
        use = cls(**data)
        use.replayed_tokens = (int(use.replayed_tokens[0]), int(use.replayed_tokens[1]))
        use.recorded_tokens = (int(use.recorded_tokens[0]), int(use.recorded_tokens[1]))
        use.verified_tokens = (int(use.verified_tokens[0]), int(use.verified_tokens[1]))
        return use


def use_of(nodeid: str, active: Cassette, shown: str) -> CassetteUse:
    """What one test did with its cassette ``active`` (shown in reports as ``shown``)."""
    from ...cassettes.tokens import Tokens, tokens_of

    outcomes: dict[str, int] = {}
    tokens = {"replayed": Tokens(), "recorded": Tokens(), "verified": Tokens()}
    saved = active.saved
    models: dict[str, list[int]] | None = {} if pricing_installed() else None
    for play in active.played:
        outcomes[play.outcome] = outcomes.get(play.outcome, 0) + 1
        spent = "replayed" if play.outcome == "tool-drift" else play.outcome  # served from the cassette
        if play.response is not None and spent in tokens:
            answer = tokens_of(play.response)
            tokens[spent] += answer
            if models is not None and answer.total:
                add_model_tokens(models, play, answer)
    replayed, recorded, verified = tokens["replayed"], tokens["recorded"], tokens["verified"]
    if saved.aside is not None:  # recorded and paid for, but not in the cassette: counted apart
        outcomes["recorded"] = saved.written
        outcomes["kept aside"] = saved.aside_count
    return CassetteUse(
        nodeid=nodeid,
        path=shown,
        mode=active.record_mode.value,
        outcomes=outcomes,
        missed=[f"{request.method} {request.url}" for request in active.missed],
        unused=unused_of(active) if active.record_mode.reads_cassette else [],
        replayed_tokens=(replayed.input, replayed.output),
        recorded_tokens=(recorded.input, recorded.output),
        verified_tokens=(verified.input, verified.output),
        drift=[{"where": drift.where, "differences": list(drift.differences)} for drift in active.drift],
        tool_drift=[
            {"where": f"{play.request.method} {play.request.url}", "differences": list(play.tool_drift)}
            for play in active.played
            if play.outcome == "tool-drift"
        ],
        models=models or {},
        aside="" if saved.aside is None else str(saved.aside),
    )


def unused_of(active: Cassette) -> list[str]:
    """``interactions[i] METHOD path`` of each interaction of ``active`` that no request played."""
    unplayed = {id(interaction) for interaction in active.unplayed}
    return [
        f"interactions[{position}] {interaction.request.method} {interaction.request.path}"
        for position, interaction in enumerate(active.interactions)
        if id(interaction) in unplayed
    ]


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _tokens_line(label: str, tokens: tuple[int, int], note: str) -> str:
    spent_in, spent_out = tokens
    return f"{label}: {spent_in + spent_out:,} (input {spent_in:,}, output {spent_out:,}), {note}"


def _token_lines(
    outcomes: Counter[str], replayed: tuple[int, int], recorded: tuple[int, int], verified: tuple[int, int]
) -> list[str]:
    """What the run's answers cost, from their ``usage``: replayed (not spent), recorded and
    verified (spent). A run that replayed nothing says nothing of tokens replayed, and a
    passthrough answer is never read: its tokens are said to be uncounted, not zero."""
    lines = []
    if outcomes["replayed"] or not any(outcomes[o] for o in ("recorded", "verified", "passthrough")):
        lines.append(_tokens_line("tokens replayed", replayed, "not spent on this run"))
    if sum(recorded):
        lines.append(_tokens_line("tokens recorded", recorded, "spent on this run"))
    if sum(verified):
        lines.append(_tokens_line("tokens verified", verified, "spent on this run (live answers)"))
    if passthrough := outcomes["passthrough"]:
        requests = _plural(passthrough, "request")
        lines.append(f"passthrough: {requests} sent live and not recorded; their tokens are not counted")
    return lines


def _add(total: tuple[int, int], more: tuple[int, int]) -> tuple[int, int]:
    return total[0] + more[0], total[1] + more[1]


def _listing(by_path: dict[str, list[str]]) -> list[str]:
    lines = []
    for path, items in by_path.items():
        shown = ", ".join(items[:_SHOWN_PER_CASSETTE])
        more = f", and {len(items) - _SHOWN_PER_CASSETTE} more" if len(items) > _SHOWN_PER_CASSETTE else ""
        lines.append(f"  {path}: {shown}{more}")
    return lines


def _unused_by_cassette(uses: list[CassetteUse]) -> dict[str, list[str]]:
    """Each cassette's interactions that no test played, each counted once: a cassette that
    15 tests share, each leaving 48 unplayed, has at most 48 unused, not 720."""
    unplayed: dict[str, list[str]] = {}
    for use in uses:
        if use.path not in unplayed:
            unplayed[use.path] = list(use.unused)
        else:  # unused only if every test left it unplayed (a rewrite or passthrough uses all)
            kept = set(use.unused)
            unplayed[use.path] = [line for line in unplayed[use.path] if line in kept]
    return {path: lines for path, lines in unplayed.items() if lines}


def _tool_drift_lines(uses: list[CassetteUse]) -> list[str]:
    """Each request replayed though its tool results changed: the tool, the call id, both values."""
    found = [(use.nodeid, use.path, d["where"], d["differences"]) for use in uses for d in use.tool_drift]
    if not found:
        return []
    lines = [f"tool drift: {_plural(len(found), 'request')} replayed though only tool results differ "
             "from the recording (on_tool_drift=replay):"]  # fmt: skip
    for nodeid, path, where, differences in found[: _SHOWN_PER_CASSETTE * 2]:
        lines.append(f"  {nodeid or '(outside a test)'}  {path}: {where}")
        lines.extend(f"    {line}" for line in differences)
    if len(found) > _SHOWN_PER_CASSETTE * 2:
        lines.append(
            f"  and {len(found) - _SHOWN_PER_CASSETTE * 2} more (--drift-report FILE lists them all)"
        )
    return lines


def _provider_model(key: str) -> tuple[str, str]:
    provider, _, model = key.partition("\t")
    return provider, model


def summary_lines(uses: Iterable[CassetteUse]) -> list[str]:
    """The lines of the terminal summary; none when no test used a cassette."""
    uses = sorted(uses, key=lambda use: (use.path, use.nodeid))
    if not uses:
        return []
    paths = {use.path for use in uses}
    modes = Counter(use.mode for use in uses)
    outcomes: Counter[str] = Counter()
    for use in uses:
        outcomes.update(use.outcomes)
    missed: dict[str, list[str]] = {}
    unused = _unused_by_cassette(uses)
    replayed = recorded = verified = (0, 0)
    for use in uses:
        if use.missed:
            missed.setdefault(use.path, []).extend(use.missed)
        replayed = _add(replayed, use.replayed_tokens)
        recorded = _add(recorded, use.recorded_tokens)
        verified = _add(verified, use.verified_tokens)

    if len(modes) == 1:
        mode_text = f"record mode: {next(iter(modes))}"
    else:
        per_mode = (f"{mode} in {_plural(count, 'test')}" for mode, count in sorted(modes.items()))
        mode_text = "record modes: " + ", ".join(per_mode)
    lines = [f"cassettes used: {len(paths):,}, by {_plural(len(uses), 'test')} ({mode_text})"]
    counts = [f"{outcomes['replayed']:,} replayed", f"{outcomes['recorded']:,} recorded"]
    counts.append(f"{sum(len(items) for items in missed.values()):,} missed")
    others = sorted((o, n) for o, n in outcomes.items() if o not in ("replayed", "recorded"))
    counts.extend(f"{count:,} {outcome}" for outcome, count in others if count)
    lines.append("requests: " + ", ".join(counts))
    if missed:
        lines.append(f"missed requests, by cassette ({_plural(len(missed), 'cassette')}):")
        lines.extend(_listing(missed))
    total_unused = sum(len(items) for items in unused.values())
    if total_unused:
        lines.append(f"unused interactions: {total_unused:,} in {_plural(len(unused), 'cassette')}")
        lines.extend(_listing(unused))
    else:
        lines.append("unused interactions: none")
    lines.extend(_token_lines(outcomes, replayed, recorded, verified))
    priced = [(*_provider_model(key), counts) for use in uses for key, counts in use.models.items()]
    if priced:
        lines.extend(
            price_line([(p, m, c[0], c[1]) for p, m, c in priced], [(p, m, c[2], c[3]) for p, m, c in priced])
        )
    lines.extend(budget_lines())
    lines.extend(drift_lines((use.path, d["where"], d["differences"]) for use in uses for d in use.drift))
    lines.extend(_tool_drift_lines(uses))
    aside = [use for use in uses if use.aside]
    if aside:
        lines.append(f"recordings kept aside (the test failed, its cassette left as it was): {len(aside)}")
        lines.extend(f"  {use.nodeid}: {use.aside}" for use in aside)
    return lines
