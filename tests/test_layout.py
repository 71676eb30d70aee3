"""The house rules of the package, checked: where each idea lives and which way imports point.

A newcomer should find every idea in one place (see docs/how-it-works.md): few modules at
the top, none over 400 lines, no folder of more than 20, no import cycle; the rooms in the
layers of docs/how-it-works.md, each importing only from the layers below it; ``cassettes/``,
``matching/``, ``files/`` and ``policies/`` free of HTTP clients, interceptors, pytest and the
command line; the values in ``cassettes/`` free of the files and credentials packages (they
read the values, never the reverse); ``repair`` on its own; and the public API exactly what
``promptvcr.__all__`` promises.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import import_graph
import pytest

import promptvcr
import promptvcr.cassette  # imported at collection: no pytester run (its module snapshot) drops it

PACKAGE = Path(promptvcr.__file__).parent
assert PACKAGE == import_graph.PACKAGE, (PACKAGE, import_graph.PACKAGE)  # the tree under test is read
ROOM_IMPORTS_FORBIDDEN = (
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "respx",
    "aiohttp",
    "requests",
    "urllib3",
    "botocore",
    "websockets",
    "pytest",
    "_pytest",
    "promptvcr.interceptors",
    "promptvcr.pytest_plugin",
    "promptvcr.commands",
    "promptvcr.cli",
    "promptvcr.cassette",
    "promptvcr.activation",
)

PUBLIC_API = [
    "DEFAULT_RULES",
    "Cassette",
    "CassetteError",
    "CassetteFormatError",
    "CassetteMiss",
    "CassetteSecretError",
    "CassetteWriteError",
    "Drift",
    "DriftWarning",
    "FuzzyMatchWarning",
    "IdentityOptions",
    "Interaction",
    "InterceptorUnavailableWarning",
    "JobEndpoint",
    "KeyParts",
    "MachineIdentityWarning",
    "Play",
    "RecordErrorWarning",
    "RecordInCIError",
    "RecordMode",
    "Request",
    "Response",
    "Rule",
    "StaleCassetteError",
    "StaleCassetteWarning",
    "add_job_endpoint",
    "default_rules",
    "drop_body_fields",
    "drop_query_params",
    "drop_seed",
    "edit_rules",
    "faults",
    "for_families",
    "import_vcr",
    "load_rules",
    "reply",
    "script",
    "serve",
    "set_default_rules",
    "use_cassette",
]


MODULES = import_graph.modules()
GRAPH = {name: import_graph.imports(name, path, MODULES) for name, path in MODULES.items()}


def test_the_public_api_is_what_all_promises() -> None:
    assert promptvcr.__all__ == PUBLIC_API
    for name in PUBLIC_API:
        assert getattr(promptvcr, name) is not None, name
    assert promptvcr.use_cassette is promptvcr.Cassette  # one signature, written once


def test_few_modules_at_the_top_and_none_too_long() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 8, top
    too_long = {name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > 400}
    assert not too_long


def test_the_map_in_the_docs_is_the_package_as_it_is() -> None:
    """docs/how-it-works.md's map is made from the modules' docstrings (tests/layout_map.py): a
    module added, moved or described anew changes it. Run ``python tests/layout_map.py --write``."""
    import layout_map

    assert layout_map.in_page() == layout_map.made(), "run: python tests/layout_map.py --write"


def test_cassette_py_keeps_room_for_the_decision_of_each_request() -> None:
    """``Cassette`` keeps the decision of each request; its options and policies live elsewhere
    (issue 40: at most 360 lines, so a new option has to find its own place; issue 60: 380, for
    ``handle`` as named steps, each saying what it decides; issues 56-58: 390, for the one line
    each of tool drift, the machine's identity and long jobs has in a request's decision, their
    work in ``policies.tooldrift``, ``identity/`` with ``matching.machine``, and ``longjobs/``)."""
    assert len((PACKAGE / "cassette.py").read_text().splitlines()) <= 390


def test_handle_reads_as_a_short_pipeline() -> None:
    """``Cassette.handle`` is the path of every request: at most 40 lines of named steps (key,
    find on the tape, the run's policies, answer, record or miss); a protocol's own step plugs
    into ``matching/protocols.py``, not into ``handle``."""
    tree = ast.parse((PACKAGE / "cassette.py").read_text())
    (handle,) = [
        node
        for cls in tree.body
        if isinstance(cls, ast.ClassDef) and cls.name == "Cassette"
        for node in cls.body
        if isinstance(node, ast.FunctionDef) and node.name == "handle"
    ]
    assert handle.end_lineno is not None
    assert handle.end_lineno - handle.lineno + 1 <= 40
    assert "jsonrpc" not in ast.unparse(handle)


def test_no_folder_holds_more_than_twenty_modules() -> None:
    """A folder is one job a newcomer can name; past 20 modules it holds several (issue 60: its
    ``__init__`` counts, it is a module a newcomer reads too)."""
    crowded = {
        str(folder.relative_to(PACKAGE.parent)): n
        for folder in [PACKAGE, *(p.parent for p in PACKAGE.rglob("__init__.py"))]
        if (n := len(list(folder.glob("*.py")))) > 20
    }
    assert crowded == {}


def test_the_conformance_runner_is_not_installed() -> None:
    assert not any(name.startswith("promptvcr.conformance") for name in MODULES)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("promptvcr.conformance")


def test_no_module_name_repeats_across_packages() -> None:
    leaves: dict[str, list[str]] = {}
    for name, path in MODULES.items():
        if path.name != "__init__.py":
            leaves.setdefault(name.rpartition(".")[2], []).append(name)
    assert {leaf: names for leaf, names in leaves.items() if len(names) > 1 and leaf != "__main__"} == {}


@pytest.mark.parametrize(
    "room", ["promptvcr.cassettes", "promptvcr.matching", "promptvcr.files", "promptvcr.policies"]
)
def test_cassettes_and_matching_import_no_client_interceptor_pytest_or_cli(room: str) -> None:
    offending = {
        name: sorted(
            t for t in targets if any(t == f or t.startswith(f + ".") for f in ROOM_IMPORTS_FORBIDDEN)
        )
        for name, targets in GRAPH.items()
        if name == room or name.startswith(room + ".")
    }
    assert {name: targets for name, targets in offending.items() if targets} == {}


def test_cassettes_do_not_reach_up_into_matching() -> None:
    assert {
        name: sorted(t for t in targets if t.startswith("promptvcr.matching"))
        for name, targets in GRAPH.items()
        if name.startswith("promptvcr.cassettes") and any(t.startswith("promptvcr.matching") for t in targets)
    } == {}


def _is_credential_module(name: str) -> bool:
    """What is a credential is decided in one package (issue 41)."""
    return name.startswith("promptvcr.credentials")


def test_the_values_import_neither_files_nor_credentials() -> None:
    """``cassettes/`` holds the values and how each body kind reads and writes itself; the files
    package and the credential rules use them (a websocket frame gets its credential rule from
    the file writer), never the reverse."""
    values = [n for n in MODULES if n.startswith("promptvcr.cassettes") and not _is_credential_module(n)]
    assert {
        name: found
        for name in values
        if (
            found := sorted(
                t for t in GRAPH[name] if t.startswith("promptvcr.files") or _is_credential_module(t)
            )
        )
    } == {}


def test_repair_imports_nothing_else_of_promptvcr() -> None:
    assert {
        name: sorted(t for t in targets if t.startswith("promptvcr") and not t.startswith("promptvcr.repair"))
        for name, targets in GRAPH.items()
        if name.startswith("promptvcr.repair")
        and any(t.startswith("promptvcr") and not t.startswith("promptvcr.repair") for t in targets)
    } == {}


def test_no_import_cycle_between_modules() -> None:
    """Imports of the package's own modules, each with its parent packages (which Python runs
    first), form no cycle. The top-level package is left out: it imports everything lazily."""

    def edges(name: str) -> set[str]:
        out = set()
        for target in GRAPH[name]:
            while target.startswith("promptvcr.") and target not in MODULES:
                target = target.rpartition(".")[0]  # an imported name, not a module
            while target.startswith("promptvcr."):
                if target != name and not name.startswith(target + "."):
                    out.add(target)
                target = target.rpartition(".")[0]
        return out

    graph = {name: edges(name) for name in MODULES if name != "promptvcr"}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def walk(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*trail[trail.index(nxt) :], nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                walk(nxt, [*trail, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name, [name])
    assert cycles == []


def test_every_room_is_placed_in_one_layer() -> None:
    """The layers' table in docs/how-it-works.md places every room once: a new room says where it
    stands before the direction can be checked."""
    placed = [room for rooms in import_graph.layers() for room in rooms]
    rooms = {import_graph.room_of(name) for name in MODULES} - {None}
    assert sorted(placed) == sorted(set(placed)), "a room placed twice"
    assert set(placed) == rooms, {
        "not placed": sorted(rooms - set(placed)),
        "gone": sorted(set(placed) - rooms),
    }


def test_the_rooms_form_no_cycle() -> None:
    """Two rooms importing each other, even through others and even lazily, are one room in two
    folders: a newcomer cannot read either alone."""
    assert import_graph.cycles() == []


def test_every_import_runs_down_the_layers() -> None:
    """A room imports only from lower layers (docs/how-it-works.md, "The layers"); lazy imports
    count, imports under ``TYPE_CHECKING`` do not. Run ``python tests/import_graph.py`` to see
    which import climbs."""
    assert import_graph.upward() == {}


def test_the_command_line_never_needs_pytest() -> None:
    """``promptvcr`` on a machine without pytest: nothing under the command line imports the
    pytest plugin or pytest itself, even lazily."""
    front = [n for n in MODULES if n.startswith(("promptvcr.commands", "promptvcr.cli"))]
    assert {
        name: found
        for name in front
        if (
            found := sorted(
                t
                for t in GRAPH[name]
                if t.split(".")[0] in {"pytest", "_pytest"} or t.startswith("promptvcr.pytest_plugin")
            )
        )
    } == {}


def test_nothing_inside_imports_the_package_root() -> None:
    """``promptvcr/__init__.py`` imports every room (lazily): a module that reads a name from it
    depends on the whole house, whatever layer it stands in. Import from the room that holds it."""
    assert import_graph.root_imports() == {}


def test_every_import_of_the_package_names_a_module_that_exists() -> None:
    """A relative import one level off (a module moved, a merge that kept the old depth) fails
    only when its function first runs, often in a subprocess; here it fails at once."""
    missing = {
        name: sorted(
            t
            for t in targets
            if t.startswith("promptvcr") and t not in MODULES and t.rpartition(".")[0] not in MODULES
        )
        for name, targets in GRAPH.items()
    }
    assert {name: found for name, found in missing.items() if found} == {}
