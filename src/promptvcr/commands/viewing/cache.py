"""``promptvcr cache CASSETTES...``: where each conversation's prompt cache breaks, and what it cost.

Per conversation in each cassette, per request: the bytes its prompt shares with the
request before, the first place it differs inside what should have been cached (with what
changed there: a timestamp, a uuid, tools or keys in another order), and the cached-token
counts the provider answered, priced when genai-prices knows the model
(``pip install promptvcr[report]``). The reading itself is :mod:`promptvcr.readouts.cachebreaks`.
Exit status 1 when any request breaks its cache: a CI step can run it on the cassettes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...errors import CassetteError
from ...files import guarded
from ...readouts.cachebreaks import conversations, report_lines
from ...readouts.inventory import cassette_files


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cassettes", nargs="+", type=Path, help="cassette files, or folders to search")


def run(args: argparse.Namespace) -> int:
    from ...htmlreport.pricing import Prices  # genai-prices, when installed

    prices = Prices()
    breaks = problems = 0
    for path in cassette_files(args.cassettes):
        try:
            interactions = guarded.read_interactions(path)
            if interactions is None:
                raise guarded.missing(path)
        except CassetteError as error:
            print(error)
            problems += 1
            continue
        found = conversations(interactions)
        breaks += sum(len(conversation.breaks) for conversation in found)
        print("\n".join(report_lines(str(path), found, prices.cached if prices.available else None)))
    print(f"{breaks} cache break(s).")
    return 1 if breaks or problems else 0
