"""The ``promptvcr`` command line: one subcommand per module in :mod:`promptvcr.commands`.

Each command module defines ``add_arguments(parser)`` and ``run(args) -> int`` (its one-line help
is in :data:`COMMANDS`, read without importing it). Modules are imported only when their command runs, so
``promptvcr --help`` stays fast and a command's dependencies load only for it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["COMMANDS", "main"]

#: Subcommand name -> module under promptvcr.commands (grouped by job: viewing, keeping,
#: migrating, bridges), and its one-line help.
COMMANDS: dict[str, tuple[str, str]] = {
    "explain": ("viewing.explain", "print each interaction's key input, to see why requests match or not"),
    "import-vcr": ("migrating.import_vcr", "convert vcrpy cassettes into promptvcr cassettes"),
    "migrate": (
        "migrating.migrate",
        "move a pytest-recording suite to promptvcr in place: cassettes, markers, vcr_config",
    ),
    "ls": ("viewing.ls", "list cassettes: interactions, providers, models, streamed, size, age, tokens"),
    "show": ("viewing.show", "print a cassette's conversation as a person reads it"),
    "stats": ("viewing.stats", "tokens and requests per provider and model across cassettes"),
    "cache": ("viewing.cache", "where each conversation's prompt cache breaks, with the cached-token counts"),
    "report": (
        "viewing.html_report",
        "write an HTML page of the conversations cassettes hold: turns, tools, tokens and price",
    ),
    "drift": (
        "keeping.drift_summary",
        "summarise a verify run's drift report by severity, or list the tests to re-record",
    ),
    "learn": (
        "keeping.learn",
        "propose rules for the request fields that differ between two recordings of a suite",
    ),
    "prune": ("keeping.prune", "remove the cassettes and interactions the last test run did not use"),
    "scan": ("keeping.scan", "look for API keys, tokens and private keys in cassettes; exit 1 on findings"),
    "serve": ("bridges.serve", "serve cassettes over HTTP to subprocesses and other languages, by base URL"),
    "mcp": (
        "bridges.mcp_wrap",
        "run an MCP server over stdio through a cassette, for MCP clients in any language",
    ),
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("promptvcr")
    except PackageNotFoundError:
        return "(not installed)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="promptvcr", description="Record and replay LLM HTTP traffic in tests."
    )
    parser.add_argument("--version", action="version", version=f"promptvcr {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, description=help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if not args_list or args_list[0] not in COMMANDS:
        parser.parse_args(args_list)  # prints usage or help and exits
        return 2
    name = args_list[0]
    module = importlib.import_module(f"promptvcr.commands.{COMMANDS[name][0]}")
    command_parser = argparse.ArgumentParser(prog=f"promptvcr {name}", description=COMMANDS[name][1])
    module.add_arguments(command_parser)
    args = command_parser.parse_args(args_list[1:])
    code: int = module.run(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
