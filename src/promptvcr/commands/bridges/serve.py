"""``promptvcr serve [CASSETTE]``: the same cassettes for other processes and languages, by base URL.

See :mod:`promptvcr.server`. Logs (misses included) go to stderr; the one line on stdout
says where the server listens. The flags are ``use_cassette``'s options that make sense out
of process; the admin start (``POST /_promptvcr/start``) may set them per cassette.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...server.shelf import Shelf


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "cassette",
        nargs="?",
        default=None,
        help="a cassette file, or a folder of cassettes (a directory or ending in /); "
        "none: only the cassettes tests start (POST /_promptvcr/start) or name (x-promptvcr-cassette)",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one, printed)")
    parser.add_argument(
        "--record-mode",
        choices=["replay", "record", "rewrite", "passthrough", "verify", "once"],
        default=None,
        help="default: $PROMPTVCR_RECORD_MODE, else replay",
    )
    parser.add_argument(
        "--upstream",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="reach URL at /NAME/...; built in: openai, anthropic, gemini, mistral, groq, cohere, ...; "
        "a cassette recorded through serve remembers the URL of each name",
    )
    parser.add_argument("--timing", default="none", help="none, recorded, or a speed factor")
    parser.add_argument("--allow-playback-repeats", action="store_true", help="replay answers again")
    parser.add_argument(
        "--on-record-error",
        choices=["skip", "keep"],
        default="skip",
        help="keep: write a 429, 5xx or timeout received while recording (default skip)",
    )
    parser.add_argument("--max-age", default=None, help="an age (30d, 12h): older recordings are stale")
    parser.add_argument(
        "--on-stale", choices=["warn", "fail", "rewrite"], default=None, help="what a stale cassette does"
    )
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="KIND[:ARG][,NAME=VALUE]",
        help="inject a fault, e.g. http_error:429,nth=2 or cut_stream:2 (see promptvcr.faults)",
    )
    parser.add_argument(
        "--fault-silence",
        type=float,
        default=10.0,
        help="seconds an injected timeout stays silent, then hangs up",
    )
    parser.add_argument(
        "--max-concurrent", type=int, default=256, help="requests served at once; more get a 503"
    )
    parser.add_argument("--header-timeout", type=float, default=15.0, help="seconds for a request's headers")
    parser.add_argument("--body-timeout", type=float, default=60.0, help="seconds for a request's body")
    parser.add_argument(
        "--grace", type=float, default=5.0, help="seconds the requests under way get to finish when stopping"
    )
    parser.add_argument("--report", type=Path, default=None, help="write what was served to this JSON file")
    parser.add_argument(
        "--usage-record",
        type=Path,
        default=None,
        metavar="FILE",
        help="when stopping, write the usage record of this run (which interactions of which cassettes "
        "were played) for `promptvcr prune --record FILE`; give it on runs of the whole suite",
    )
    parser.add_argument(
        "--fail-on-drift",
        action="store_true",
        help="exit 1 when a live answer's structure differs from its recording (--record-mode verify) "
        "or a request was replayed with tool drift, naming each cassette and answer "
        "(as pytest's --fail-on-drift)",
    )
    parser.add_argument(
        "--on-tool-drift",
        choices=["miss", "replay"],
        default=None,
        help="a request that differs from its recording only in tool results: miss (default), or replay "
        "the recorded answer and report the tool drift (tool, call id)",
    )


def run(args: argparse.Namespace) -> int:
    from ...policies.modes import SERVE_WORDING
    from ...server.app import Limits
    from ...server.fault_flags import parse_faults
    from ...server.running import run as serve_forever
    from ...server.shelf import Shelf
    from ...server.upstreams import parse_upstreams

    os.environ[SERVE_WORDING] = "1"  # messages raised here name this command's flags
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    timing: str | float = args.timing
    with contextlib.suppress(ValueError):
        timing = float(args.timing)
    try:
        upstreams = parse_upstreams(args.upstream)
        options = {
            "record_mode": args.record_mode,
            "timing": timing,
            "allow_playback_repeats": args.allow_playback_repeats,
            "faults": parse_faults(args.fault),
            "on_record_error": args.on_record_error,
            "max_age": args.max_age,
            "on_stale": args.on_stale,
            "on_tool_drift": args.on_tool_drift,
        }
        _check(options)
        limits = Limits(args.max_concurrent, args.header_timeout, args.body_timeout, args.fault_silence)
    except ValueError as error:
        print(f"promptvcr serve: {error}", file=sys.stderr)
        return 2
    shelf = Shelf(args.cassette, options)
    # Until the run ends, its record says so: a server killed mid-run leaves no old record that
    # prune would take for this run's.
    if args.usage_record is not None and not _write_usage(shelf, args.usage_record, _UNFINISHED):
        return 2
    with tempfile.TemporaryDirectory(prefix="promptvcr-serve-") as scratch:
        # --fail-on-drift reads the drift from the report the server writes as it stops.
        report = args.report or (Path(scratch) / "report.json" if args.fail_on_drift else None)
        code = serve_forever(shelf, upstreams, port=args.port, report=report, limits=limits, grace=args.grace)
        if args.usage_record is not None and not _write_usage(shelf, args.usage_record, _failed(code)):
            code = 1
        if not args.fail_on_drift or report is None:
            return code
        drifted = _drifted(report)
    for line in drifted:
        print(f"promptvcr serve: {line}", file=sys.stderr, flush=True)
    return 1 if drifted else code


_UNFINISHED = ["the run did not end (promptvcr serve is still running, or was killed)"]


def _failed(code: int) -> list[str]:
    if not code:
        return []
    return [
        f"promptvcr serve exited {code}: a request missed, a cassette was not written, "
        "or a response was cut short"
    ]


def _write_usage(shelf: Shelf, path: Path, incomplete: list[str]) -> bool:
    """Write the run's usage record (``--usage-record``): what every cassette the server left
    played (the admin start, the header, the folder's and the command line's alike), and why
    the run cannot vouch for the suite; whether it was written."""
    try:
        shelf.used.write_record(path, incomplete)
    except OSError as error:
        print(
            f"promptvcr serve: cannot write the usage record {path}: {error.strerror or error}; "
            "give --usage-record a file in a folder you can write",
            file=sys.stderr,
            flush=True,
        )
        return False
    return True


def _drifted(report: Path) -> list[str]:
    """One line per live answer that drifted, from the stop's report (see ``--fail-on-drift``),
    each answer named as pytest's ``--fail-on-drift`` names it (:attr:`Drift.where`)."""
    from ...policies.verifying import Drift

    unreadable = [f"--fail-on-drift: the report {report} could not be read, so drift cannot be ruled out"]
    try:
        entries = json.loads(report.read_text(encoding="utf-8"))["cassettes"]
        found = [(entry["path"], Drift.from_data(d)) for entry in entries for d in entry.get("drift", [])]
        tools = [
            (entry["path"], d["request"], d["changes"])
            for entry in entries
            for d in entry.get("tool_drift", [])
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return unreadable
    return [
        f"drift (--fail-on-drift) in {path}: {drift.where}: {'; '.join(drift.differences)}"
        for path, drift in found
    ] + [
        f"tool drift (--fail-on-drift) in {path}: {where}: {'; '.join(changes)}"
        for path, where, changes in tools
    ]


def _check(options: dict[str, object]) -> None:
    """A bad value stops the start with its flag's name, before any cassette is opened."""
    from ...cassette import Cassette

    Cassette("check.yaml", **options)  # type: ignore[arg-type]
