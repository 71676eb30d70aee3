"""``promptvcr scan [PATHS]``: look for credentials in cassettes before they are committed.

Exits 1 when anything secret-shaped is found, so it fits a pre-commit hook or a CI step;
it prints where and what kind, never the value.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...credentials.keyshapes import Finding
from ...credentials.scanner import cassette_files, scan_file
from ...errors import CassetteFormatError
from ...files import guarded


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="*", type=Path, default=[Path(".")], help="cassette files or folders (default: .)"
    )


def scan_paths(paths: list[Path]) -> list[Finding]:
    """Findings in every cassette file under ``paths``, each file opened by the commands'
    guarded reader (a FIFO, an alias bomb or nesting too deep is a ``CassetteFormatError``)."""
    findings: list[Finding] = []
    for path in cassette_files(paths):
        text, data = guarded.read_for_scan(path)
        findings.extend(scan_file(path, text, data))
    return findings


def run(args: argparse.Namespace) -> int:
    missing = [path for path in args.paths if not path.exists()]
    if missing:
        print(f"promptvcr scan: {', '.join(map(str, missing))}: no such file or folder.")
        return 2
    try:
        findings = scan_paths(args.paths)
    except OSError as error:
        print(f"promptvcr scan: cannot read {error.filename}: {error.strerror}.")
        return 2
    except CassetteFormatError as error:
        print(f"promptvcr scan: {error}")
        return 2
    for finding in findings:
        print(finding)
    if findings:
        files = len({finding.path for finding in findings})
        print(
            f"{len(findings)} secret-shaped value(s) in {files} file(s). Remove them (record again with fake "
            f"keys, PROMPTVCR_RECORD_MODE=rewrite) and rotate any real key that was committed."
        )
        return 1
    print(f"no secret-shaped values in {', '.join(map(str, args.paths))}.")
    return 0
