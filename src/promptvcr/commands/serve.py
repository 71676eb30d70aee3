"""``promptvcr serve CASSETTE``: the same cassettes for other processes and languages, by base URL.

See :mod:`promptvcr.server`. Logs (misses included) go to stderr; the one line on stdout
says where the server listens.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from pathlib import Path

HELP = "serve cassettes over HTTP to subprocesses and other languages (base URL: /UPSTREAM/...)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "cassette", help="a cassette file, or a folder of cassettes (a directory or ending in /)"
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one, printed)")
    parser.add_argument(
        "--record-mode",
        choices=["replay", "record", "rewrite", "passthrough"],
        default=None,
        help="default: $PROMPTVCR_RECORD_MODE, else replay",
    )
    parser.add_argument(
        "--upstream",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="reach URL at /NAME/...; built in: openai, anthropic, gemini, mistral, groq, cohere, ...",
    )
    parser.add_argument("--timing", default="none", help="none, recorded, or a speed factor")
    parser.add_argument("--allow-playback-repeats", action="store_true", help="replay answers again")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="KIND[:ARG][,NAME=VALUE]",
        help="inject a fault, e.g. http_error:429,nth=2 or cut_stream:2 (see promptvcr.faults)",
    )
    parser.add_argument("--report", type=Path, default=None, help="write what was served to this JSON file")


def run(args: argparse.Namespace) -> int:
    from ..server.fault_flags import parse_faults
    from ..server.running import run as serve_forever
    from ..server.shelf import Shelf
    from ..server.upstreams import parse_upstreams

    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    try:
        upstreams = parse_upstreams(args.upstream)
        faults = parse_faults(args.fault)
    except ValueError as error:
        print(f"promptvcr serve: {error}", file=sys.stderr)
        return 2
    timing: str | float = args.timing
    with contextlib.suppress(ValueError):
        timing = float(args.timing)
    options = {
        "record_mode": args.record_mode,
        "timing": timing,
        "allow_playback_repeats": args.allow_playback_repeats,
        "faults": faults,
    }
    shelf = Shelf(args.cassette, options)
    return serve_forever(shelf, upstreams, port=args.port, report=args.report)
