"""``promptvcr explain PATH``: each interaction's key input, as the matcher sees it."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..cassettes import fileformat, storage
from ..cassettes.normalize import DEFAULT_RULES, key_parts, request_key
from ..errors import CassetteError

HELP = "print each interaction's key input, to see why requests match or not"


def explain(path: Path) -> str:
    """The key input of every interaction in a cassette, one block per interaction."""
    text = storage.read_text(path)
    if text is None:
        raise CassetteError(f"Cassette {path} does not exist.", path=path)
    blocks = []
    for position, interaction in enumerate(fileformat.loads(text, path)):
        parts = key_parts(interaction.request)
        for rule in DEFAULT_RULES:
            parts = rule(parts)
        key = request_key(interaction.request, DEFAULT_RULES)
        blocks.append(f"interactions[{position}] key {key}\n  {parts.canonical()}")
    return "\n".join(blocks)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, help="cassette file")


def run(args: argparse.Namespace) -> int:
    try:
        print(explain(args.path))
    except CassetteError as error:
        print(error)
        return 1
    return 0
