"""``promptvcr explain PATH``: each interaction's key input, as the matcher sees it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from os import PathLike
from pathlib import Path

from ...errors import CassetteError
from ...files import guarded
from ...matching.diagnose import explain_interactions
from ...matching.parts import Rule
from ...matching.rules import default_rules


def explain(path: str | PathLike[str], rules: Sequence[Rule] | None = None, *, full: bool = False) -> str:
    """The key input of every interaction in a cassette, one block per interaction, after
    ``rules`` (the current default rules when omitted)."""
    path = Path(path)
    interactions = guarded.read_interactions(path)
    if interactions is None:
        raise guarded.missing(path)
    if not interactions:
        return f"{path} holds no interactions."
    return explain_interactions(interactions, default_rules() if rules is None else rules, full=full)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, help="cassette file")
    parser.add_argument("--full", action="store_true", help="show long strings whole")


def run(args: argparse.Namespace) -> int:
    try:
        print(explain(args.path, full=args.full))
    except CassetteError as error:
        print(error)
        return 1
    return 0
