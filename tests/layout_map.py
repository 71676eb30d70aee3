"""The map of docs/how-it-works.md, made from the package: one line per module, the first paragraph
of its docstring. ``python tests/layout_map.py --write`` rewrites the map in the page;
``tests/test_layout.py`` fails when the page's map is not what this makes (a module added,
moved or described anew without the map following)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "promptvcr"
PAGE = ROOT / "docs" / "how-it-works.md"
#: The map's block in the page: the first ```text fence after its heading.
BLOCK = re.compile(r"(## The map\n.*?```text\n)(.*?)(```)", re.S)


def _first_line(path: Path) -> str:
    docstring = (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").strip()
    line = " ".join(docstring.split("\n\n")[0].split())  # its first paragraph, on one line
    # reStructuredText to the page's Markdown: ``code`` -> `code`, :mod:`name` -> name
    return re.sub(r":\w+:`~?\.?([^`]+)`", r"\1", line.replace("``", "`"))


def _lines(folder: Path, depth: int) -> list[str]:
    name = f"{folder.name}/"
    lines = [f"{'    ' * depth}{name:<23}{_first_line(folder / '__init__.py')}".rstrip()]
    for module in sorted(p for p in folder.glob("*.py") if p.name != "__init__.py"):
        lines.append(f"{'    ' * (depth + 1)}{module.name:<23}{_first_line(module)}".rstrip())
    for sub in sorted(p.parent for p in folder.glob("*/__init__.py")):
        lines.extend(_lines(sub, depth + 1))
    return lines


def made() -> str:
    """The map as the package describes itself today."""
    return "\n".join(_lines(PACKAGE, 0)) + "\n"


def in_page() -> str:
    match = BLOCK.search(PAGE.read_text(encoding="utf-8"))
    assert match, f"{PAGE} has no ```text block under '## The map'"
    return match.group(2)


def write() -> None:
    text = PAGE.read_text(encoding="utf-8")
    PAGE.write_text(BLOCK.sub(lambda m: m.group(1) + made() + m.group(3), text, count=1), encoding="utf-8")


if __name__ == "__main__":
    if "--write" in sys.argv:
        write()
    else:
        sys.stdout.write(made())
