"""Blocks that are not run, checked for what can still be wrong: a command line naming a
subcommand, option or extra that does not exist, a file fragment that does not parse."""

from __future__ import annotations

import argparse
import configparser
import contextlib
import importlib
import io
import json
import re
from pathlib import Path

import pytest
import tomllib
import yaml
from doc_blocks import Block

from promptvcr.cli import COMMANDS

__all__ = ["check_console", "check_parsed", "extras"]

ROOT = Path(__file__).resolve().parents[2]
#: Programs a console block may run, besides those checked below. A new one is added here on purpose.
PROGRAMS = {
    "mv",
    "cp",
    "gh",
    "git",
    "mkdocs",
    "node",
    "npm",
    "npx",
    "go",
    "docker",
    "cd",
    "ls",
    "cat",
    "export",
    "uv",
    "source",
    ".",
}


def extras() -> set[str]:
    """The extras setup.cfg declares: what ``pip install 'promptvcr[...]'`` may name."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    return set(config["options.extras_require"])


def check_parsed(block: Block) -> None:
    """yaml, toml and json blocks must parse; a yaml block may be a fragment of a cassette
    (``...`` standing for what is left out)."""
    try:
        if block.language == "yaml":
            yaml.safe_load(block.code)
        elif block.language == "toml":
            tomllib.loads(block.code)
        elif block.language == "json":
            json.loads(block.code)
    except Exception as error:
        raise AssertionError(f"{block.where}: this {block.language} block does not parse: {error}") from None


def check_console(block: Block, pytester: pytest.Pytester) -> None:
    """Each ``$ `` command of a console block names a program, subcommand, option and extra
    that exist. ``promptvcr`` and ``pytest`` command lines are parsed by their own parsers."""
    for words in block.commands():
        program, args = words[0], words[1:]
        if program == "python" and args[:2] == ["-m", "pytest"]:
            program, args = "pytest", args[2:]
        elif program == "python" and args[:2] == ["-m", "promptvcr"]:
            program, args = "promptvcr", args[2:]
        shown = " ".join(words)
        if program == "promptvcr":
            _check_promptvcr(block, shown, args)
        elif program == "pytest":
            _check_pytest(block, shown, args, pytester)
        elif program == "nox":
            posargs = args[args.index("--") + 1 :] if "--" in args else []
            _check_pytest(block, shown, posargs, pytester)
        elif program in ("pip", "pip3") or (program == "python" and args[:2] == ["-m", "pip"]):
            _check_pip(block, shown, args)
        elif program == "python" or program in PROGRAMS:
            continue
        else:
            raise AssertionError(
                f"{block.where}: `{shown}` runs {program!r}, a program the docs tests do not know. "
                "If it is real, add it to PROGRAMS in tests/docs/doc_checks.py."
            )


def _check_promptvcr(block: Block, shown: str, args: list[str]) -> None:
    if args in (["--version"], ["--help"], []):
        return
    if args[0] not in COMMANDS:
        raise AssertionError(
            f"{block.where}: `{shown}`: promptvcr has no command {args[0]!r} ({', '.join(COMMANDS)})."
        )
    module = importlib.import_module(f"promptvcr.commands.{COMMANDS[args[0]][0]}")
    parser = argparse.ArgumentParser(prog=f"promptvcr {args[0]}", exit_on_error=False)
    module.add_arguments(parser)
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            parser.parse_args(args[1:])
    except (SystemExit, argparse.ArgumentError) as error:
        if "--help" in args or "-h" in args:
            return
        raise AssertionError(
            f"{block.where}: `{shown}` does not parse: {errors.getvalue() or error}"
        ) from None


def _check_pytest(block: Block, shown: str, args: list[str], pytester: pytest.Pytester) -> None:
    try:
        pytester.parseconfig(*args)
    except pytest.UsageError as error:
        raise AssertionError(f"{block.where}: `{shown}`: pytest refuses it: {error}") from None


def _check_pip(block: Block, shown: str, args: list[str]) -> None:
    known = extras()
    for arg in args:
        if re.match(r"promptvcr(\[[^\]]*\])?([<>=!~].*)?$", arg):
            raise AssertionError(
                f"{block.where}: `{shown}` installs promptvcr from an index, where it is not published "
                "(pip: No matching distribution): install it from a checkout ('./promptvcr[httpx2]') "
                "or a wheel, as docs/getting-started.md says."
            )
        for named in re.findall(r"promptvcr[^\[\s]*\[([^\]]+)\]|^\.\[([^\]]+)\]", arg):
            unknown = {extra.strip() for extra in ",".join(named).split(",")} - known - {""}
            if unknown:
                raise AssertionError(
                    f"{block.where}: `{shown}` names the extra(s) {sorted(unknown)}; "
                    f"setup.cfg declares {sorted(known)}."
                )
