"""What the HTML report shows, as plain values: tests, their exchanges, misses and drift.

Everything here is already safe to show (masked as a cassette is, see :mod:`.exchanges`)
and JSON-shaped, so that pytest-xdist workers send their part to the controller, which
writes one report; the template (:mod:`.render`) only lays these values out.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

__all__ = ["DriftLine", "Entry", "Exchange", "FieldDiff", "Miss", "Report", "Total", "TurnView"]

#: The outcomes an exchange or a test is filtered by, in the order the filter lists them.
OUTCOMES = (
    "replayed",
    "tool-drift",
    "recorded",
    "missed",
    "drifted",
    "verified",
    "passthrough",
    "fault",
    "ignored",
)


@dataclass(frozen=True)
class TurnView:
    role: str
    text: str
    image: str = ""

    @property
    def css(self) -> str:
        """The turn's colour class: its role's first word (``tool call`` -> ``tool``)."""
        return self.role.split(" ", 1)[0].split("(", 1)[0] or "body"


@dataclass(frozen=True)
class Exchange:
    """One request and its answer, as sent and received (masked)."""

    outcome: str
    method: str
    url: str
    provider: str
    model: str
    status: int | None
    streamed: bool
    request: list[TurnView]
    answer: list[TurnView]
    tokens_in: int = 0
    tokens_out: int = 0
    price: float | None = None
    """What the tokens cost at the provider's list price (genai-prices), when known."""


@dataclass(frozen=True)
class FieldDiff:
    """One field of a miss: the recorded and the sent value, each as ``(changed, text)`` pieces."""

    path: str
    recorded: list[tuple[bool, str]]
    sent: list[tuple[bool, str]]


@dataclass(frozen=True)
class Miss:
    method: str
    url: str
    nearest: str
    """``interactions[i] METHOD url`` of the nearest recorded request, ``""`` when none."""
    diffs: list[FieldDiff]
    request: list[TurnView]
    why: str = ""
    provider: str = ""
    model: str = ""


@dataclass(frozen=True)
class DriftLine:
    where: str
    severity: str
    """``breaking`` (a field gone, a type or status changed), ``changed`` or ``added``."""
    text: str


@dataclass
class Entry:
    """One test (or, in ``promptvcr report``, one cassette) and what its LLM calls said."""

    name: str
    status: str = ""
    """``passed``, ``failed``, ``skipped``; ``""`` for a cassette read outside a run."""
    cassettes: list[str] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    misses: list[Miss] = field(default_factory=list)
    drift: list[DriftLine] = field(default_factory=list)
    #: Requests replayed though their tool results changed: one line per result (tool, call id).
    tool_drift: list[DriftLine] = field(default_factory=list)
    #: Where a conversation breaks its prompt cache: one line per request that does.
    cache_breaks: list[DriftLine] = field(default_factory=list)

    @property
    def outcomes(self) -> list[str]:
        found = {e.outcome for e in self.exchanges}
        if self.misses:
            found.add("missed")
        if self.drift:
            found.add("drifted")
        return [o for o in OUTCOMES if o in found] + sorted(found - set(OUTCOMES))

    @property
    def providers(self) -> list[str]:
        return sorted({e.provider for e in self.exchanges} | {m.provider for m in self.misses}) or ["-"]

    @property
    def models(self) -> list[str]:
        found = {e.model or "-" for e in self.exchanges} | {m.model or "-" for m in self.misses}
        return sorted(found) or ["-"]

    def merge(self, other: Entry) -> None:
        """Add what ``other`` saw under the same name (cassettes used outside a test, per worker)."""
        self.cassettes.extend(path for path in other.cassettes if path not in self.cassettes)
        self.exchanges.extend(other.exchanges)
        self.misses.extend(other.misses)
        self.drift.extend(other.drift)
        self.tool_drift.extend(other.tool_drift)
        self.cache_breaks.extend(other.cache_breaks)

    def to_data(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Entry:
        def turns(items: list[dict[str, Any]]) -> list[TurnView]:
            return [TurnView(**t) for t in items]

        exchanges = [
            Exchange(**{**e, "request": turns(e["request"]), "answer": turns(e["answer"])})
            for e in data["exchanges"]
        ]
        misses = [
            Miss(
                **{
                    **m,
                    "request": turns(m["request"]),
                    "diffs": [
                        FieldDiff(
                            d["path"], [(a, b) for a, b in d["recorded"]], [(a, b) for a, b in d["sent"]]
                        )
                        for d in m["diffs"]
                    ],
                }
            )
            for m in data["misses"]
        ]
        return cls(
            name=data["name"],
            status=data["status"],
            cassettes=list(data["cassettes"]),
            exchanges=exchanges,
            misses=misses,
            drift=[DriftLine(**d) for d in data["drift"]],
            tool_drift=[DriftLine(**d) for d in data.get("tool_drift", ())],
            cache_breaks=[DriftLine(**d) for d in data.get("cache_breaks", ())],
        )


class Total(NamedTuple):
    requests: int
    tokens_in: int
    tokens_out: int
    price: float | None
    unpriced: int


@dataclass
class Report:
    title: str
    tests: list[Entry]
    priced: bool
    """Whether prices were looked up (genai-prices installed): without it the report shows tokens only."""
    of_run: bool = True
    """A run's report (``--promptvcr-html``); ``False`` for cassette files read as they are, whose
    recorded tokens were spent when they were recorded, not now."""

    def total(self, outcome: str) -> Total:
        """The exchanges that met ``outcome``: how many, their tokens, and the price of those
        whose model genai-prices knows (``unpriced`` counts the others that used tokens)."""
        chosen = [e for t in self.tests for e in t.exchanges if e.outcome == outcome]
        used = [e for e in chosen if e.tokens_in + e.tokens_out]
        prices = [e.price for e in used if e.price is not None]
        return Total(
            requests=len(chosen),
            tokens_in=sum(e.tokens_in for e in chosen),
            tokens_out=sum(e.tokens_out for e in chosen),
            price=sum(prices) if prices else None,
            unpriced=len(used) - len(prices),
        )

    @property
    def missed_count(self) -> int:
        return sum(len(t.misses) for t in self.tests)

    @property
    def drift_count(self) -> int:
        return sum(len(t.drift) for t in self.tests)

    @property
    def cache_break_count(self) -> int:
        return sum(len(t.cache_breaks) for t in self.tests)

    @property
    def tool_drift_count(self) -> int:
        return sum(len(t.tool_drift) for t in self.tests)

    @property
    def all_outcomes(self) -> list[str]:
        found = {o for t in self.tests for o in t.outcomes}
        return [o for o in OUTCOMES if o in found] + sorted(found - set(OUTCOMES))

    @property
    def all_providers(self) -> list[str]:
        return sorted({p for t in self.tests for p in t.providers})

    @property
    def all_models(self) -> list[str]:
        return sorted({m for t in self.tests for m in t.models})

    @property
    def exchange_count(self) -> int:
        return sum(len(t.exchanges) for t in self.tests)
