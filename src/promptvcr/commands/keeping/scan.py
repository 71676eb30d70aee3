"""``promptvcr scan [PATHS]``: look for credentials in cassettes before they are committed.

Exits 1 when anything secret-shaped is found, so it fits a pre-commit hook or a CI step;
it prints where and what kind, never the value. It also lists this machine's own values (home
folder, project, user, host: :mod:`promptvcr.identity`) that a cassette holds; ``--fix-identity``
plans writing them as placeholders and ``--fix-identity --apply`` does it (:mod:`.identityfix`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...credentials.keyshapes import Finding
from ...credentials.scanner import cassette_files, scan_file
from ...errors import CassetteFormatError
from ...files import guarded
from ...identity import Identity, machine_values
from . import identityfix
from .identityfix import FilePlan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="*", type=Path, default=[Path(".")], help="cassette files or folders (default: .)"
    )
    parser.add_argument(
        "--fix-identity",
        action="store_true",
        help="plan writing this machine's values (home, project, user, host) as placeholders",
    )
    parser.add_argument("--apply", action="store_true", help="with --fix-identity: rewrite the files")


def scan_paths(
    paths: list[Path], plans: list[FilePlan] | None = None, *, rewrite: bool = False
) -> list[Finding]:
    """Findings in every cassette file under ``paths``, each file opened by the commands'
    guarded reader (a FIFO, an alias bomb or nesting too deep is a ``CassetteFormatError``);
    ``plans`` given: each file holding this machine's values adds its plan there."""
    findings: list[Finding] = []
    identity = Identity(machine_values()) if plans is not None else None
    for path in cassette_files(paths):
        text, data = guarded.read_for_scan(path)
        findings.extend(scan_file(path, text, guarded.with_body_files(data, path)))  # body files too
        plan = (
            None if identity is None else identityfix.plan_file(path, text, data, identity, rewrite=rewrite)
        )
        if plan is not None and plans is not None:
            plans.append(plan)
    return findings


def run(args: argparse.Namespace) -> int:
    missing = [path for path in args.paths if not path.exists()]
    if missing:
        print(f"promptvcr scan: {', '.join(map(str, missing))}: no such file or folder.")
        return 2
    if args.apply and not args.fix_identity:
        print("promptvcr scan: --apply rewrites what --fix-identity plans; give both.")
        return 2
    plans: list[FilePlan] = []
    try:
        findings = scan_paths(args.paths, plans, rewrite=args.fix_identity)
    except OSError as error:
        print(f"promptvcr scan: cannot read {error.filename}: {error.strerror}.")
        return 2
    except CassetteFormatError as error:
        print(f"promptvcr scan: {error}")
        return 2
    for finding in findings:
        print(finding)
    _identity(plans, fix=args.fix_identity, apply=args.apply)
    if findings:
        files = len({finding.path for finding in findings})
        print(
            f"{len(findings)} secret-shaped value(s) in {files} file(s). Remove them (record again with fake "
            f"keys, PROMPTVCR_RECORD_MODE=rewrite) and rotate any real key that was committed."
        )
        return 1
    print(f"no secret-shaped values in {', '.join(map(str, args.paths))}.")
    return 0


def _identity(plans: list[FilePlan], *, fix: bool, apply: bool) -> None:
    """Say which files hold this machine's values; with ``fix``, the plan; with ``apply``, do it."""
    if not plans:
        return
    for plan in plans:
        print("\n".join(plan.lines()))
    refused = [plan for plan in plans if fix and plan.text is None]
    for plan in refused:
        print(plan.refusal)
    ready = [plan for plan in plans if plan.text is not None]
    if not fix:
        print(
            f"this machine's identity (its paths, user or host names) in {len(plans)} file(s): not a secret, "
            "but it tells who recorded them and breaks replay elsewhere. Plan writing them as "
            "placeholders with: promptvcr scan --fix-identity PATHS"
        )
    elif not apply:
        print(
            f"{len(ready)} file(s) would be rewritten, only the values above. Do it with: "
            "--fix-identity --apply"
        )
    else:
        for plan in ready:
            identityfix.apply(plan)
        print(
            f"rewrote {len(ready)} file(s): this machine's values are placeholders, replayed as any machine's"
        )
