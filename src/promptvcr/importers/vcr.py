"""``import_vcr``: vcrpy cassettes in, promptvcr cassettes out, and a report per file.

A file is converted as a whole or reported: an interaction that cannot be converted is
left out and named with its reason, and a file that cannot be read at all is listed with
what is wrong with it, so nothing is dropped silently. The output goes through the same
redaction as a recording (header allowlist, credential query parameters and body fields),
so a secret left in a vcrpy cassette never reaches a promptvcr one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from ..cassettes.models import Interaction
from ..credentials.headers import ALL_HEADERS, AllHeadersBut
from ..credentials.names import is_secret_header, is_secret_param
from ..errors import CassetteWriteError
from ..files import fileformat, redaction, storage
from .targets import collisions, holds_more
from .vcr_convert import ConversionError, to_interaction
from .vcr_read import VcrReadError, read_vcr_file

__all__ = ["CASSETTE_SUFFIXES", "FileReport", "ImportReport", "convert_vcr_file", "import_vcr"]

#: File names taken from a folder given as a source (a file named explicitly is always read).
CASSETTE_SUFFIXES = (".yaml", ".yml", ".json", ".yaml.gz", ".yml.gz", ".json.gz", ".gz")


@dataclass(slots=True)
class FileReport:
    """What happened to one source file."""

    source: Path
    output: Path | None = None
    layout: str = ""
    interactions: list[Interaction] = field(default_factory=list)
    total: int = 0
    skipped: list[str] = field(default_factory=list)
    removed_secrets: list[str] = field(default_factory=list)
    #: Each credential removed or masked in what was written: "where: what" (the interaction
    #: and field, never a value), so that nothing the source held changes without a word.
    masked: list[str] = field(default_factory=list)
    #: What was kept as recorded that a reader may not expect (a gzip label over a plain body).
    notes: list[str] = field(default_factory=list)
    #: Each converted interaction's position in the source file (``interactions[N]``).
    indices: list[int] = field(default_factory=list)
    #: How many interactions were written (``None`` until the file is written).
    written: int | None = None
    error: str | None = None
    #: Already a promptvcr cassette: not converted, written (if elsewhere) byte for byte.
    kept: bool = False

    @property
    def written_count(self) -> int:
        """Interactions written (or, before writing, converted)."""
        return len(self.interactions) if self.written is None else self.written

    @property
    def ok(self) -> bool:
        return self.error is None and not self.skipped

    def describe(self) -> str:
        if self.error is not None:
            return f"FAILED {self.source}: {self.error}"
        if self.kept:
            where = (
                "left as it is" if self.output in (None, self.source) else f"copied as it is to {self.output}"
            )
            return f"kept {self.source}: already a promptvcr cassette ({self.total} interactions), {where}"
        head = f"{'ok' if self.ok else 'PARTIAL'} {self.source} -> {self.output} ({self.layout}, "
        head += f"{self.written_count}/{self.total} interactions)"
        lines = [head]
        lines.extend(f"    not converted: {reason}" for reason in self.skipped)
        lines.extend(f"    note: {note}" for note in self.notes)
        if self.masked:
            lines.append(f"    {len(self.masked)} credential(s) removed or masked (each as <redacted:...>):")
            lines.extend(f"      {line}" for line in self.masked)
        return "\n".join(lines)


@dataclass(slots=True)
class ImportReport:
    files: list[FileReport] = field(default_factory=list)

    @property
    def failed(self) -> list[FileReport]:
        return [f for f in self.files if f.error is not None]

    @property
    def partial(self) -> list[FileReport]:
        return [f for f in self.files if f.error is None and f.skipped]

    @property
    def kept(self) -> list[FileReport]:
        return [f for f in self.files if f.kept]

    @property
    def masked_count(self) -> int:
        return sum(len(f.masked) for f in self.files if f.output is not None)

    @property
    def interaction_count(self) -> int:
        return sum(f.written_count for f in self.files if f.error is None)  # written ones only

    def summary(self) -> str:
        converted = [f for f in self.files if not f.kept]
        total = sum(f.total for f in converted)
        kept = f", {len(self.kept)} already promptvcr (left as they are)" if self.kept else ""
        return (
            f"{len(self.files)} files: {len(converted) - len(self.failed) - len(self.partial)} converted, "
            f"{len(self.partial)} partly, {len(self.failed)} failed{kept}; "
            f"{self.interaction_count}/{total} interactions imported; "
            f"{self.masked_count} credential(s) removed or masked in "
            f"{sum(1 for f in self.files if f.masked and f.output is not None)} file(s)."
        )


def _secrets_in(interaction: Interaction) -> list[str]:
    """Credentials the source held that redaction leaves out, each by name, so the report can
    say so: every other header the source held is kept."""
    found = [f"{name} header" for name in interaction.request.headers if is_secret_header(name)]
    found += [f"{name} response header" for name in interaction.response.headers if is_secret_header(name)]
    query = urlsplit(interaction.request.url).query
    found += [f"{k}= query parameter" for k, _ in parse_qsl(query) if is_secret_param(k)]
    return found


def header_choice(names: Iterable[str]) -> frozenset[str]:
    """The headers an import keeps: every one (:data:`ALL_HEADERS`, the default: an import
    loses nothing the source held but credentials), or exactly the names given."""
    return names if isinstance(names, AllHeadersBut) else frozenset(h.lower() for h in names)


def convert_vcr_file(source: Path) -> FileReport:
    """Read and convert one vcrpy cassette in memory (nothing is written)."""
    report = FileReport(source)
    try:
        raw = read_vcr_file(source)
    except VcrReadError as error:
        report.error = str(error)
        return report
    report.layout, report.total = raw.layout, len(raw.pairs)
    if raw.extra:
        report.error = (
            f"it also holds {', '.join(raw.extra)}, which promptvcr does not convert; left as it is, "
            f"as a conversion of its interactions alone would drop them."
        )
        return report
    if raw.layout == "promptvcr":
        report.kept = True
        return report
    for index, (request, response) in enumerate(raw.pairs):
        try:
            interaction = to_interaction(request, response, index, report.notes)
        except ConversionError as error:
            report.skipped.append(str(error))
            continue
        report.interactions.append(interaction)
        report.indices.append(index)
        report.removed_secrets.extend(_secrets_in(interaction))
    return report


def _output_name(source: Path) -> str:
    name = source.name.removesuffix(".gz")
    stem, dot, suffix = name.rpartition(".")
    if dot and suffix.lower() == "json":
        return name
    return f"{stem}.yaml" if dot and suffix.lower() in ("yaml", "yml") else f"{name}.yaml"


def _sources(paths: Iterable[Path]) -> Iterator[tuple[Path, Path]]:
    """Each source file with the path, relative to the output folder, that it is written to."""
    for path in paths:
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                if file.is_file() and file.name.lower().endswith(CASSETTE_SUFFIXES):
                    relative = file.relative_to(path)
                    yield file, relative.with_name(_output_name(file))
        else:
            yield path, Path(_output_name(path))


def _import_one(
    source: Path, target: Path, request_headers: frozenset[str], response_headers: frozenset[str]
) -> FileReport:
    """Convert, check and write one file (in a worker process for large imports)."""
    file_report = convert_vcr_file(source)
    if file_report.error is not None:
        return file_report
    if file_report.kept:
        return _keep(file_report, target)
    if file_report.skipped and _same_file(source, target):
        # In place, a partial conversion would destroy what it could not convert.
        file_report.error = (
            f"{len(file_report.skipped)} of {file_report.total} interactions cannot be converted, so the "
            f"file was left as it is: " + "; ".join(file_report.skipped)
        )
        return file_report
    # The one redaction model of the record path: by name, by value, by shape.
    redacted = redaction.redact(
        file_report.interactions,
        request_headers=request_headers,
        response_headers=response_headers,
        environ=os.environ,
        label="interactions",
        indices=file_report.indices,  # the source's own positions, skipped ones counted
    )
    findings = [f for _, _, found in redacted.refused for f in found]
    if findings and not redacted.data:
        # A secret-shaped value in a request (a key in a prompt, a URL path) cannot be masked
        # without changing what replay matches on: such an interaction is left out.
        shown = "; ".join(f"{f.field}: {f.kind} {f.preview}" for f in findings[:5])
        file_report.error = (
            f"{len(findings)} value(s) shaped like a secret, so nothing was written: {shown}. "
            f"Replace them with obviously fake values (e.g. sk-test-...) in the source and import again."
        )
        return file_report
    for label, request, found in redacted.refused:
        shown = "; ".join(f"{f.field}: {f.kind} {f.preview}" for f in found[:5])
        file_report.skipped.append(f"{label} {request} left out: its request holds a secret ({shown})")
    if redacted.refused and _same_file(source, target):
        file_report.error = "left as it is, as converting in place would drop: " + "; ".join(
            file_report.skipped
        )
        return file_report
    data = redacted.data
    file_report.masked = [
        f"{finding.field}: {finding.kind} {finding.preview}".rstrip()
        for finding in (*redacted.removed, *redacted.masked)
    ]
    if not _same_file(source, target) and (reason := holds_more(target, data)) is not None:
        file_report.error = reason
        return file_report
    try:
        # Atomic per file; no fsync per file: a fresh output folder, rerun if the machine dies.
        storage.write_atomic(target, fileformat.dump_pieces(data, target), durable=False)
    except CassetteWriteError as error:
        file_report.error = str(error)
        return file_report
    file_report.output = target
    file_report.written = len(data)
    return file_report


def _same_file(source: Path, target: Path) -> bool:
    try:
        return target.exists() and source.samefile(target)
    except OSError:
        return False


def _keep(file_report: FileReport, target: Path) -> FileReport:
    """A promptvcr cassette: never rewritten; copied byte for byte when the output is elsewhere."""
    source = file_report.source
    if not _same_file(source, target):
        data = source.read_text(encoding="utf-8")
        if not target.exists() or target.read_text(encoding="utf-8") != data:
            if (reason := holds_more(target, fileformat.load_document(data, source))) is not None:
                file_report.error = reason
                return file_report
            try:
                storage.write_atomic(target, data, durable=False)
            except CassetteWriteError as error:
                file_report.error = str(error)
                return file_report
    file_report.output = target
    return file_report


def import_vcr(
    sources: Iterable[str | PathLike[str]],
    out: str | PathLike[str],
    *,
    request_headers: Iterable[str] = ALL_HEADERS,
    response_headers: Iterable[str] = ALL_HEADERS,
) -> ImportReport:
    """Convert vcrpy cassettes (files or folders, searched recursively) into ``out``.

    A folder's structure is kept under ``out``. Returns a report per file, in source
    order; a file that cannot be read is reported, not raised, so one bad cassette does not
    stop the rest. Every output name is planned first: sources that would share one are all
    reported and none is written, and a file in ``out`` holding interactions the import would
    not write is left as it is (see :mod:`.targets`). Every header the source held is kept
    but credentials, which the report names; ``request_headers``/``response_headers`` keep
    only the names they list.
    """
    out_dir = Path(out)
    request_allowed = header_choice(request_headers)
    response_allowed = header_choice(response_headers)
    planned = [(source, out_dir / relative) for source, relative in _sources(Path(p) for p in sources)]
    shared = collisions(planned)
    results = [
        FileReport(source, error=shared[source])
        if source in shared
        else _import_one(source, target, request_allowed, response_allowed)
        for source, target in planned
    ]
    return ImportReport(results)
