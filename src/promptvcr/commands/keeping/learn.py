"""``promptvcr learn FIRST SECOND``: propose rules for the fields that differ between two recordings.

Record the suite (or one test) twice, keeping the first recording aside, and give both: each
request of FIRST is paired with the same request of SECOND (same cassette path, same method
and URL path, the same turn among them), and the fields whose values differ are written as
proposed rules (for the exact field that changed, ``messages[1].content``), each with its
evidence and its effect (the recorded requests it makes equal), to a JSON file the user
reviews and commits (default ``promptvcr-rules.json``). Nothing applies until ``conftest.py``
loads the file with :func:`promptvcr.load_rules`: a learned rule is never applied silently.
An existing file is kept and added to; fields its rules already leave out are not proposed
again. A rule that would make two recorded requests with different prompts equal is refused,
and said.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from ...cassettes.models import Interaction, Request
from ...errors import CassetteError
from ...files import guarded
from ...matching.rules import default_rules
from ...matching.rules.learned import LEARNED_VERSION, load_rules
from ...matching.volatile import propose
from ...readouts.inventory import CASSETTE_SUFFIXES

__all__ = ["DEFAULT_OUTPUT", "add_arguments", "pairs_of", "run"]

DEFAULT_OUTPUT = Path("promptvcr-rules.json")
#: Groups of requests a proposal makes equal, printed (the file keeps every one).
_SHOWN = 5

_USE = """Nothing is applied until the suite loads the file; in conftest.py:

    import promptvcr, pytest

    @pytest.fixture
    def promptvcr_config():
        return {{"rules": promptvcr.load_rules("{path}")}}
"""


def _interactions(path: Path) -> list[Interaction]:
    interactions = guarded.read_interactions(path)
    if interactions is None:
        raise guarded.missing(path)
    return interactions


def _files(first: Path, second: Path) -> Iterator[tuple[str, Path, Path]]:
    if not first.is_dir() and not second.is_dir():  # two files (a FIFO is refused by the reader)
        yield str(second), first, second
        return
    for path in sorted(p for p in first.rglob("*") if p.is_file() and p.suffix in CASSETTE_SUFFIXES):
        relative = path.relative_to(first)
        other = second / relative
        if other.is_file():
            yield str(other), path, other


def pairs_of(first: Path, second: Path) -> Iterator[tuple[str, Interaction, Interaction]]:
    """Each request recorded in both, as ``(where, in first, in second)``: the n-th request to
    one method and URL path in a cassette of FIRST with the n-th in the same cassette of SECOND."""
    for shown, left, right in _files(first, second):
        turns: dict[tuple[str, str], list[tuple[int, Interaction]]] = {}
        for position, interaction in enumerate(_interactions(right)):
            request = interaction.request
            turns.setdefault((request.method, urlsplit(request.url).path), []).append((position, interaction))
        seen: dict[tuple[str, str], int] = {}
        for interaction in _interactions(left):
            request = interaction.request
            endpoint = (request.method, urlsplit(request.url).path)
            turn = seen[endpoint] = seen.get(endpoint, -1) + 1
            if turn < len(turns.get(endpoint, [])):
                position, other = turns[endpoint][turn]
                yield f"{shown} interactions[{position}] {endpoint[0]} {endpoint[1]}", interaction, other


def recorded_of(first: Path, second: Path) -> list[tuple[str, Request]]:
    """Every request of both recordings, each with where it is: what a rule's effect is
    measured on (see :func:`promptvcr.matching.volatile.propose`)."""
    recorded: list[tuple[str, Request]] = []
    for _, left, right in _files(first, second):
        for path in (left, right):
            recorded.extend(
                (f"{path} interactions[{n}]", i.request) for n, i in enumerate(_interactions(path))
            )
    return recorded


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("first", type=Path, help="the first recording: a cassette, or a folder of them")
    parser.add_argument("second", type=Path, help="the second recording of the same tests (same layout)")
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help=f"the rules file to write or add to (default: {DEFAULT_OUTPUT}); review it, then commit it",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the proposals, write nothing")


def run(args: argparse.Namespace) -> int:
    for given in (args.first, args.second):
        if not given.exists():
            print(f"promptvcr learn: {given} does not exist; give two recordings of the same tests.")
            return 1
    if args.first.is_dir() != args.second.is_dir():
        print("promptvcr learn: give two cassette files, or two folders of cassettes, not one of each.")
        return 1
    existing: list[dict[str, object]] = []
    rules = default_rules()
    if args.output.exists():
        try:
            rules = load_rules(args.output)
            existing = json.loads(args.output.read_text(encoding="utf-8"))["learned"]
        except ValueError as error:
            print(f"promptvcr learn: {error}")
            return 1
    try:
        learned = propose(pairs_of(args.first, args.second), rules, recorded_of(args.first, args.second))
    except (CassetteError, OSError) as error:
        print(f"promptvcr learn: {error}")
        return 1
    if not learned.compared:
        print(f"promptvcr learn: no request is recorded in both {args.first} and {args.second}.")
        return 1
    print(
        f"compared {learned.compared} request(s) recorded twice; {learned.same} already had the same key; "
        f"{len(learned.proposals)} volatile field(s) proposed:"
    )
    for proposal in learned.proposals:
        print(f"  {proposal.rule} {proposal.field} ({proposal.looks_like}), in {proposal.where}")
        print(f"    first:  {proposal.first}")
        print(f"    second: {proposal.second}")
        for line in proposal.makes_equal[:_SHOWN]:
            print(f"    makes equal: {line}")
        if len(proposal.makes_equal) > _SHOWN:
            print(f"    and {len(proposal.makes_equal) - _SHOWN} more (all in the file)")
    for line in learned.refused:
        print(f"  refused (leaving it out would make two questions one): {line}")
    for line in learned.unexplained:
        print(f"  not proposed (no rule explains it; check the test is deterministic): {line}")
    if args.dry_run or not learned.proposals:
        return 0
    entries = [*existing, *(proposal.to_data() for proposal in learned.proposals)]
    from ...files.storage import write_atomic

    write_atomic(args.output, json.dumps({"version": LEARNED_VERSION, "learned": entries}, indent=1) + "\n")
    print(f"wrote {args.output}: review it, then commit it.")
    print(_USE.format(path=args.output.as_posix()), end="")
    return 0
