"""The docs site builds with no broken link or reference, and README.md stays a short way in (issue 46)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 150


def test_mkdocs_build_strict_passes(tmp_path: Path) -> None:
    """Strict: a broken link or anchor, a page missing from the nav, or an API name mkdocstrings
    cannot resolve fails the build."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="promptvcr.use_cassette"' in api and 'id="promptvcr.CassetteMiss"' in api


def _nav_pages(nav: list[object]) -> set[str]:
    pages: set[str] = set()
    for entry in nav:
        values = entry.values() if isinstance(entry, dict) else [entry]
        for value in values:
            pages |= _nav_pages(value) if isinstance(value, list) else {str(value)}
    return pages


def test_readme_is_short_and_links_every_page_of_the_site() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)[#)]", readme))
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    in_nav = _nav_pages(config["nav"])
    pages = {path.name for path in (ROOT / "docs").glob("*.md")}
    assert pages == in_nav
    assert pages - {"index.md"} <= linked, sorted(pages - {"index.md"} - linked)
