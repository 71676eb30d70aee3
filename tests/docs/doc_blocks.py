"""The fenced code blocks of a Markdown page, and what the docs' convention says to do with each.

The convention is written for authors at the top of ``docs/contributing.md``; this module is
its one implementation. A block is read from its fence's info string: the language, then
``key="value"`` attributes (mkdocs-material's ``title=``), as in ``python title="test_app.py"``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

__all__ = ["KINDS", "Block", "BlockError", "blocks_of"]

#: Language -> what the docs tests do with a block of it.
KINDS = {
    "python": "run: in both passes (record, then replay), in order, one namespace per page",
    "console": "checked: each `$ ` command's program, subcommand and options must exist",
    "bash": "README.md's two commands only (CI runs them); elsewhere write `console`",
    "text": "output or a diagram: shown, not run",
    "yaml": "parsed: must be valid YAML (a file when it has a title)",
    "toml": "parsed: must be valid TOML (a file when it has a title)",
    "json": "parsed: must be valid JSON (a file when it has a title)",
    "ini": "a file when it has a title (pytest.ini, tox.ini, setup.cfg)",
    "javascript": "shown, not run (tests/js runs the npm package's suites)",
    "typescript": "shown, not run (tests/js runs the npm package's suites)",
    "go": "shown, not run: no Go toolchain in the test suite",
}
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")
_ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')


class BlockError(Exception):
    """A block the convention does not allow: the message names the page, line and fix."""


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    """The 1-based line of the block's first line of code in ``page``."""
    language: str
    attributes: dict[str, str]
    code: str

    @property
    def title(self) -> str:
        """A file name: the block is that file of the example project."""
        return self.attributes.get("title", "")

    @property
    def where(self) -> str:
        return f"{self.page.name}:{self.line}"

    def commands(self) -> list[list[str]]:
        """A console block's commands, split as the shell would: the lines after ``$ ``,
        with their ``# comments`` and ``VAR=value`` prefixes removed."""
        commands = []
        for text in self.code.splitlines():
            if not text.startswith("$ "):
                continue
            words = shlex.split(text[2:], comments=True)
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
                words.pop(0)
            if words:
                commands.append(words)
        return commands


def blocks_of(page: Path) -> list[Block]:
    """Every fenced block of ``page``, in order. Raises :class:`BlockError` for one without
    a language, or in a language the convention does not know, or left unclosed."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        index += 1
        if opening is None:
            continue
        indent, fence = opening["indent"], opening["fence"]
        info = opening["info"].strip()
        start = index
        while index < len(lines) and not re.fullmatch(
            rf"{re.escape(indent)}{fence[0]}{{{len(fence)},}}\s*", lines[index]
        ):
            index += 1
        if index == len(lines):
            raise BlockError(f"{page.name}:{start}: a code block opened with {fence} is never closed.")
        body = [
            text[len(indent) :] if text.startswith(indent) else text.lstrip() for text in lines[start:index]
        ]
        index += 1
        language = info.split(maxsplit=1)[0].lstrip("{.").rstrip("}") if info else ""
        if language not in KINDS:
            known = "\n".join(f"  {name}: {what}" for name, what in KINDS.items())
            raise BlockError(
                f"{page.name}:{start}: a code block in language {language or '(none)'!r}, which the docs "
                f"convention (docs/contributing.md) does not know. Give every block one of:\n{known}"
            )
        found.append(Block(page, start + 1, language, dict(_ATTRIBUTE.findall(info)), "\n".join(body) + "\n"))
    return found
