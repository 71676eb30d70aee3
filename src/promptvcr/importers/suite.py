"""Migrating a pytest-recording suite's Python: markers, ``vcr_config``, and what needs a person.

Source is edited by the positions the AST gives, so formatting and comments elsewhere stay
as they were. What cannot be translated is left as it is and reported with its file and
line; the suite still runs meanwhile (see :mod:`promptvcr.pytest_plugin.vcr_compat`).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

from .sourcefile import Lines

__all__ = ["SourceReport", "default_matching_conftest", "migrate_source"]

#: vcr_config keys with nothing to write: promptvcr removes credentials and stores only an
#: allowlist of headers, stores bodies decoded, and loopback is always reachable.
DROPPED = frozenset(
    {
        "filter_headers",
        "filter_query_parameters",
        "filter_post_data_parameters",
        "decode_compressed_response",
        "ignore_localhost",
        "serializer",
        "record_on_exception",
    }
)
RENAMED = {"cassette_library_dir": "cassette_dir", "ignore_hosts": "passthrough_hosts"}
KEPT = frozenset({"record_mode", "allowed_hosts"})
_IMPORT = "from promptvcr.pytest_plugin.vcr_compat import match_on_rules\n"
_IMPORT_HOOKS = "from promptvcr.pytest_plugin.record_hooks import vcr_style\n"
_HOOKS = frozenset({"before_record_request", "before_record_response"})
#: vcrpy's default ``match_on``: it never compares bodies. Written out where a ``vcr_config``
#: relied on it, and what an unmigrated suite matches by (:mod:`promptvcr.pytest_plugin.vcr_compat`).
DEFAULT_MATCH_ON = ("method", "scheme", "host", "port", "path", "query")
KEEP_VCR_MATCHING = f'"rules": match_on_rules({json.dumps(list(DEFAULT_MATCH_ON))})'


@dataclass
class SourceReport:
    path: Path
    changes: list[str] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)  # "file:line: what to fix"


def _span(lines: Lines, node: ast.AST) -> tuple[int, int]:
    start = lines.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
    end = lines.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    return start, end


def _is_vcr_mark(node: ast.AST, name: str = "vcr") -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == name
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "mark"
    )


def migrate_source(
    path: Path, *, supported: frozenset[str], text: str | None = None, newline: str = "\n"
) -> tuple[str, SourceReport]:
    """The migrated text of one Python file and what was done or is left to do.

    ``supported``: the ``use_cassette`` arguments a marker or ``promptvcr_config`` takes.
    ``text``: the file's text as :func:`.sourcefile.read_source` decoded it (read as UTF-8
    when not given); ``newline``: its line ending, used for the lines added.
    """
    text = path.read_text(encoding="utf-8") if text is None else text
    report = SourceReport(path)
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        report.todo.append(f"{path}:{error.lineno}: not parsed ({error.msg}); migrate it by hand")
        return text, report
    lines = Lines(text)  # the tokenizer's lines: a form feed or U+2028 is no line break
    edits: list[tuple[int, int, str]] = []
    where = f"{path}:"
    call_funcs = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if id(node) in call_funcs:
            continue  # seen with its call
        marker = node.func if isinstance(node, ast.Call) else node
        if _is_vcr_mark(marker) and isinstance(marker, ast.Attribute):
            call = node if isinstance(node, ast.Call) else None
            unsupported = [k.arg for k in (call.keywords if call else []) if k.arg not in supported | KEPT]
            if call is not None and (call.args or unsupported):
                extra = "extra cassettes" if call.args else ", ".join(map(str, unsupported))
                report.todo.append(f"{where}{marker.lineno}: @pytest.mark.vcr with {extra}: not migrated")
                continue
            start, end = _span(lines, marker)
            edits.append((end - len("vcr"), end, "promptvcr"))
            report.changes.append(f"{where}{marker.lineno}: pytest.mark.vcr -> pytest.mark.promptvcr")
        elif _is_vcr_mark(marker, "default_cassette") and isinstance(marker, ast.Attribute):
            report.todo.append(
                f"{where}{marker.lineno}: @pytest.mark.default_cassette: name the file in the promptvcr "
                f'marker instead, @pytest.mark.promptvcr("cassettes/<module>/<name>.yaml")'
            )
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name == "vcr_config":
                _config(node, lines, edits, report, supported)
            elif node.name == "vcr_cassette_dir":
                at = lines.offset(node.lineno, node.col_offset)
                at = text.index("vcr_cassette_dir", at)
                edits.append((at, at + len("vcr_cassette_dir"), "promptvcr_cassette_dir"))
                report.changes.append(f"{where}{node.lineno}: vcr_cassette_dir -> promptvcr_cassette_dir")
            elif node.name in ("default_cassette_name", "pytest_recording_configure"):
                report.todo.append(
                    f"{where}{node.lineno}: {node.name}: no promptvcr equivalent, see docs/migrating.md"
                )
            elif "vcr" in [a.arg for a in node.args.args] and node.name.startswith("test"):
                report.todo.append(f"{where}{node.lineno}: {node.name} asks for `vcr`: use `cassette`")
    added = {e[2] for e in edits if e[2] in (_IMPORT, _IMPORT_HOOKS) and e[2] not in text}
    edits = [e for e in edits if e[2] not in (_IMPORT, _IMPORT_HOOKS)]
    if added:
        imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
        last = imports[-1].end_lineno or 1 if imports else 0
        at = lines.offset(last, 0) + lines.line_length(last) if imports else 0
        edits.append((at, at, "".join(sorted(added))))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new.replace("\n", newline) + text[end:]
    report.changes.sort(key=_line_of)
    report.todo.sort(key=_line_of)
    return text, report


def _line_of(entry: str) -> int:
    """The line number of a ``path:line: what`` entry, to list a file's entries in order."""
    parts = entry.split(":")
    return next((int(part) for part in parts[1:] if part.isdigit()), 0)


def _whole_line(text: str, start: int, end: int) -> tuple[int, int, str]:
    """The removal of ``text[start:end]``, widened to its whole line when nothing else is on it."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    if not text[line_start:start].strip() and line_end != -1 and not text[end:line_end].strip():
        return line_start, line_end + 1, ""
    return start, end, ""


def _config(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    lines: Lines,
    edits: list[tuple[int, int, str]],
    report: SourceReport,
    supported: frozenset[str],
) -> None:
    returns = [n.value for n in ast.walk(node) if isinstance(n, ast.Return) and isinstance(n.value, ast.Dict)]
    where = f"{report.path}:"
    if len(returns) != 1:
        report.todo.append(
            f"{where}{node.lineno}: vcr_config does not return one dict literal: rename it by hand"
        )
        return
    mapping = returns[0]
    pending: list[tuple[int, int, str]] = []
    for key, value in zip(mapping.keys, mapping.values, strict=True):
        if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
            report.todo.append(f"{where}{mapping.lineno}: vcr_config has a key that is not a string")
            return
        name = key.value
        key_start, _ = _span(lines, key)
        _, value_end = _span(lines, value)
        if name in _HOOKS:
            value_start, _ = _span(lines, value)
            source = lines.text[value_start:value_end]
            if not source.startswith("vcr_style("):
                pending.append((value_start, value_end, f"vcr_style({source})"))
                pending.append((0, 0, _IMPORT_HOOKS))
                report.changes.append(f"{where}{key.lineno}: vcr_config {name}: kept, as vcr_style(...)")
        elif name in DROPPED or name not in supported | KEPT | {"match_on"} | set(RENAMED):
            end = value_end
            rest = lines.text[end:]
            end += len(rest) - len(rest.lstrip(" ,")) if rest.lstrip(" ").startswith(",") else 0
            pending.append(_whole_line(lines.text, key_start, end))
            if name in DROPPED:
                report.changes.append(
                    f"{where}{key.lineno}: vcr_config {name}: dropped (promptvcr does it already)"
                )
            else:
                report.todo.append(
                    f"{where}{key.lineno}: vcr_config {name}: no promptvcr equivalent, removed"
                )
        elif name == "match_on":
            value_start, _ = _span(lines, value)
            source = lines.text[value_start:value_end]
            pending.append((key_start, value_end, f'"rules": match_on_rules({source})'))
            pending.append((0, 0, _IMPORT))
            report.changes.append(f"{where}{key.lineno}: vcr_config match_on -> rules=match_on_rules(...)")
        elif name in RENAMED:
            _, key_end = _span(lines, key)
            pending.append((key_start, key_end, f'"{RENAMED[name]}"'))
    if not {"match_on", "rules"} & {k.value for k in mapping.keys if isinstance(k, ast.Constant)}:
        removed = {start for start, end, new in pending if not new and end > start}
        kept = [k for k in mapping.keys if k is not None and _span(lines, k)[0] not in removed]
        pending.extend(_keep_vcr_matching(mapping, lines, kept))
        report.changes.append(
            f"{where}{mapping.lineno}: vcr_config has no match_on: vcrpy's default, which never compared "
            f"bodies, is kept as rules=match_on_rules(...); remove that line to compare bodies (the "
            f"summary names the tests whose cassettes are stale)"
        )
    name_at = lines.text.index("vcr_config", _span(lines, node)[0])
    edits.extend(pending)
    edits.append((name_at, name_at + len("vcr_config"), "promptvcr_config"))
    report.changes.append(f"{where}{node.lineno}: vcr_config -> promptvcr_config")


def _keep_vcr_matching(mapping: ast.Dict, lines: Lines, kept: list[ast.expr]) -> list[tuple[int, int, str]]:
    """The edits that add vcrpy's default matching as the first entry of ``mapping``.

    Inserted just after the ``{``, so it never overlaps an entry that is being removed;
    ``kept``: the keys that stay, after which a comma is needed.
    """
    brace, _ = _span(lines, mapping)
    first = next((key for key in mapping.keys if key is not None), None)
    if first is not None and first.lineno != mapping.lineno:
        entry = f"\n{' ' * first.col_offset}{KEEP_VCR_MATCHING},"
    else:
        entry = KEEP_VCR_MATCHING + (", " if kept else "")
    return [(brace + 1, brace + 1, entry), (0, 0, _IMPORT)]


#: The fixture migrate adds where a suite had no ``vcr_config``: it matched by vcrpy's
#: default, so the migrated suite does too (and passes as it did).
DEFAULT_CONFIG_FIXTURE = (
    "\n\n\n@pytest.fixture\n"
    "def promptvcr_config():\n"
    "    # Written by `promptvcr migrate`: this suite had no vcr_config, so it matched requests by\n"
    "    # vcrpy's default, which never compares bodies. Remove this fixture to compare bodies.\n"
    f"    return {{{KEEP_VCR_MATCHING}}}\n"
)


def default_matching_conftest(text: str, newline: str = "\n") -> str:
    """A ``conftest.py``'s text (``""``: a new one) with :data:`DEFAULT_CONFIG_FIXTURE` added
    at its end, and the imports it needs after the file's own (its docstring stays first)."""
    needed = ("" if "import pytest\n" in text else "import pytest\n") + ("" if _IMPORT in text else _IMPORT)
    body = text.rstrip("\r\n")
    if not needed:
        return body + DEFAULT_CONFIG_FIXTURE.replace("\n", newline)
    try:
        tree = ast.parse(body)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    lines = body.split("\n") if body else []
    at = (imports[-1].end_lineno or 0) if imports else _after_docstring(tree)
    lines[at:at] = needed.rstrip("\n").split("\n")
    return "\n".join(lines).replace("\n", newline) + DEFAULT_CONFIG_FIXTURE.replace("\n", newline)


def _after_docstring(tree: ast.Module) -> int:
    """The line after a module's docstring and ``from __future__`` imports (0 if none)."""
    at = 0
    for node in tree.body:
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) or (
            isinstance(node, ast.ImportFrom) and node.module == "__future__"
        ):
            at = node.end_lineno or at
        else:
            break
    return at
