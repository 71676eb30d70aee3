"""CI runs what a new user types: the README's two commands, verbatim, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Lines of .ci/run that only set the stage: the shell's options and a fresh virtual environment.
STAGE = re.compile(r"^(set |cd |rm -rf \.venv$|python3 -m venv \.venv$|\. \.venv/bin/activate$)")


def readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## The two commands$(.*?)^## ", readme, re.M | re.S)
    assert section, "README.md has no '## The two commands' section"
    blocks = re.findall(r"```bash\n(.*?)```", section.group(1), re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def ci_commands() -> list[str]:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [
        line.strip() for line in lines if line.strip() and not line.startswith("#") and not STAGE.match(line)
    ]


def test_ci_runs_the_readme_commands_verbatim_and_nothing_else() -> None:
    assert len(readme_commands()) == 2
    assert ci_commands() == readme_commands()
