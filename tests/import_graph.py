"""The rooms of the package and which way their imports point, read from the code.

Every import counts, inside functions too (a lazy import runs just the same); only imports
under ``if TYPE_CHECKING:`` are left out (they never run). A *room* is a top-level package or
module of ``promptvcr``. ``python tests/import_graph.py`` prints the cycles between rooms and
each import that climbs from a lower layer to a higher one (the layers: docs/how-it-works.md,
"The layers"); ``tests/test_layout.py`` fails on either.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "promptvcr"
PAGE = ROOT / "docs" / "how-it-works.md"
#: The layers' block in the page: the first ```text fence after its heading.
LAYERS_BLOCK = re.compile(r"## The layers\n.*?```text\n(.*?)```", re.S)


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id.endswith("TYPE_CHECKING")) or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every module ``name`` imports at run time (inside functions too; not for type checking)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
            found.update(
                f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in known
            )
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def root_imports() -> dict[str, list[str]]:
    """Modules that import names from the package root (``from promptvcr import Cassette``, or
    ``from .. import X`` where X is no module): the root imports everything, lazily; a room
    reading it reads the whole house."""
    known = modules()
    found: dict[str, list[str]] = {}
    for name, path in known.items():
        if name == "promptvcr":
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1]) if node.level else None
                target = (f"{base}.{node.module}" if node.module else base) if base else node.module
                if target == "promptvcr":
                    names = [a.name for a in node.names if f"promptvcr.{a.name}" not in known]
                    if names:
                        found.setdefault(name, []).extend(names)
            elif isinstance(node, ast.Import) and any(a.name == "promptvcr" for a in node.names):
                found.setdefault(name, []).append("promptvcr")
    return found


def room_of(name: str) -> str | None:
    """``promptvcr.files.reading`` -> ``files``; the package itself and outside names -> None."""
    parts = name.split(".")
    return parts[1] if parts[0] == "promptvcr" and len(parts) > 1 else None


def room_edges() -> dict[tuple[str, str], list[str]]:
    """(from room, to room) -> the imports that make the edge, as ``module -> target``."""
    known = modules()
    edges: dict[tuple[str, str], list[str]] = {}
    for name, path in known.items():
        source = room_of(name)
        if source is None:
            continue
        for target in sorted(imports(name, path, known)):
            room = room_of(target)
            if room is not None and room != source:
                edges.setdefault((source, room), []).append(f"{name} -> {target}")
    return edges


def layers() -> list[list[str]]:
    """The layers from the ground up, read from docs/how-it-works.md: one line per layer,
    ``N  room room ...  what the layer is`` (a room as its folder ``files/`` or module ``cassette.py``)."""
    match = LAYERS_BLOCK.search(PAGE.read_text(encoding="utf-8"))
    assert match, f"{PAGE} has no ```text block under '## The layers'"
    found = []
    for line in match.group(1).splitlines():
        words = line.split()
        if words and words[0].isdigit():
            rooms = [w for w in words[1:] if w.endswith(("/", ".py"))]
            found.append((int(words[0]), [w.rstrip("/").removesuffix(".py") for w in rooms]))
    return [rooms for _, rooms in sorted(found)]


def layer_of() -> dict[str, int]:
    return {room: level for level, rooms in enumerate(layers()) for room in rooms}


def upward(edges: dict[tuple[str, str], list[str]] | None = None) -> dict[tuple[str, str], list[str]]:
    """The edges that climb: from a room to one in a higher layer, or to a room of its own layer
    (rooms side by side do not import each other). A room missing from the layers climbs."""
    edges = room_edges() if edges is None else edges
    level = layer_of()
    return {(a, b): how for (a, b), how in edges.items() if level.get(b, 99) >= level.get(a, -1)}


def cycles(edges: dict[tuple[str, str], list[str]] | None = None) -> list[list[str]]:
    """The strongly connected groups of more than one room (Tarjan's algorithm)."""
    edges = room_edges() if edges is None else edges
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def strong(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                strong(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            strong(node)
    return groups


def main() -> None:
    edges = room_edges()
    found = cycles(edges)
    print(f"{len(edges)} edges between rooms; {len(found)} cycle(s)")
    for group in found:
        print("  cycle: " + " <-> ".join(group))
    climbing = upward(edges) if "--no-layers" not in sys.argv else {}
    print(f"{sum(len(v) for v in climbing.values())} upward import(s) in {len(climbing)} edge(s)")
    for (a, b), how in sorted(climbing.items()):
        print(f"  {a} -> {b}")
        for line in how:
            print(f"      {line}")


if __name__ == "__main__":
    main()
