"""The HTML report of 2,000 interactions: the time to make it, and to open it in a browser.

Writes 200 cassettes of 10 chat interactions each (a 40-word question, a 60-word answer,
usage recorded), then measures, as medians over rounds:

* ``entries``  reading the cassettes, masking each interaction, its turns, tokens and price
  (what ``promptvcr report`` does before rendering; a run does it as each cassette exits);
* ``render``   Jinja2 rendering the page (the bar: under 2 s);
* ``open``     headless Chromium loading the page: the navigation's load event (the bar:
  under 2 s), when Playwright and a Chromium (``/usr/bin/chromium`` or on the PATH) are there.

Run: python benchmarks/bench_html_report.py [--rounds N] [--check]

``--check`` makes it a guard: it exits 1 when the median render or open time is over its bar
(the browser's bar is a promise to the reader of a large report; a timed test on a loaded
machine could not keep it, so it lives here, tests/htmlreport only check what the page shows).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from plugin_suites import chat

from promptvcr.files import fileformat
from promptvcr.htmlreport import collect, render
from promptvcr.htmlreport.model import Report
from promptvcr.htmlreport.pricing import Prices


def _cassettes(root: Path) -> None:
    root.mkdir(parents=True)
    for number in range(200):
        path = root / f"test_{number:03}.yaml"
        question, answer = f"question {number}.{{}}: " + "words " * 40, "answer " + "text " * 60
        data = [chat(question.format(i), answer, tokens=(120, 80)) for i in range(10)]
        path.write_text(fileformat.dumps(data, path), encoding="utf-8")


def _open_times(page_file: Path, rounds: int) -> list[float] | str:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return "Playwright is not installed"
    browser_path = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser_path is None:
        return "no Chromium on the PATH"
    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
        page = browser.new_page()
        for _ in range(rounds):
            page.goto("about:blank")
            page.goto(page_file.as_uri(), wait_until="load")
            loaded = page.evaluate("() => performance.getEntriesByType('navigation')[0].loadEventEnd")
            times.append(loaded / 1000)
        browser.close()
    return times


#: The bars ``--check`` holds the medians to, in seconds.
BARS = {"render_s": 2.0, "open_s": 2.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--check", action="store_true", help="exit 1 when a median is over its bar")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _cassettes(root / "c")
        entries_times, render_times = [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            prices = Prices()
            entries, _ = collect.entries_of_files([root / "c"], prices)
            middle = time.perf_counter()
            page = render.render(Report("2,000 interactions", entries, prices.available, of_run=False))
            end = time.perf_counter()
            entries_times.append(middle - start)
            render_times.append(end - middle)
        page_file = root / "report.html"
        page_file.write_text(page, encoding="utf-8")
        opened = _open_times(page_file, args.rounds)
        result = {
            "interactions": sum(len(e.exchanges) for e in entries),
            "page_mb": round(len(page.encode()) / 1e6, 2),
            "entries_s": round(statistics.median(entries_times), 3),
            "render_s": round(statistics.median(render_times), 3),
            "open_s": round(statistics.median(opened), 3) if isinstance(opened, list) else opened,
        }
    json.dump(result, sys.stdout, indent=1)
    print()
    over = [f"{name} {result[name]} s > {bar} s" for name, bar in BARS.items() if _over(result[name], bar)]
    if args.check and over:
        print("over the bar: " + "; ".join(over), file=sys.stderr)
        return 1
    return 0


def _over(measured: object, bar: float) -> bool:
    """Whether a measured median is over its bar (a reason it was not measured is not)."""
    return isinstance(measured, float) and measured > bar


if __name__ == "__main__":
    raise SystemExit(main())
