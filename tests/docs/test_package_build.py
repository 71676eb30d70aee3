"""The package builds as a wheel and an sdist that twine accepts, and the wheel works on its own:
installed into a fresh virtual environment, its examples pass (issue 46).

The build runs without isolation, from the build tools the ``test`` extra installs, so that it
needs no network. The fresh environment borrows the SDKs and pytest from this one (a ``.pth``
file naming this interpreter's site-packages folders, whose own ``.pth`` files, an editable
install of promptvcr among them, are then not read): promptvcr itself comes from the wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*command: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{' '.join(map(str, command))} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    major = int(version("setuptools").split(".")[0])
    assert major >= 69, (
        "the build needs setuptools>=69 and wheel here: pip install -e '.[test]' installs them"
    )
    out = tmp_path_factory.mktemp("dist")
    # The source is copied: a build in the checkout would leave build/ and *.egg-info behind.
    source = out / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", ".nox", "site", "build", "dist", "*.egg-info", "__pycache__"
        ),
    )
    _run(
        sys.executable,
        "-m",
        "build",
        "--no-isolation",
        "--sdist",
        "--wheel",
        "--outdir",
        out / "dist",
        source,
    )
    return out / "dist"


def test_the_wheel_and_the_sdist_pass_twine_check_and_hold_the_package(dist: Path) -> None:
    wheel, sdist = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    assert len(wheel) == len(sdist) == 1
    assert "PASSED" in _run(sys.executable, "-m", "twine", "check", "--strict", wheel[0], sdist[0])
    names = zipfile.ZipFile(wheel[0]).namelist()
    assert "promptvcr/py.typed" in names and "promptvcr/cassettes/cassette.schema.json" in names
    assert any(name.endswith("entry_points.txt") for name in names)
    with tarfile.open(sdist[0]) as archive:
        members = archive.getnames()
    assert any(name.endswith("/README.md") for name in members)


def test_the_wheel_installed_in_a_fresh_environment_passes_the_examples(dist: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / ("Scripts" if os.name == "nt" else "bin") / "python"
    wheel = next(dist.glob("*.whl"))
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    # --force-reinstall: pip --python may take this environment's promptvcr for the target's.
    pip = (sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index")
    _run(*pip, "--force-reinstall", "-q", wheel, env=env)
    # Then, after the wheel (pip would take this environment's promptvcr for the one asked):
    # the dependencies, from this interpreter's site-packages folders.
    purelib = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    borrowed = [entry for entry in sys.path if entry.endswith("site-packages") and Path(entry).is_dir()]
    (purelib / "borrowed-dependencies.pth").write_text("\n".join(borrowed) + "\n", encoding="utf-8")

    where = _run(python, "-c", "import promptvcr.cassette as m; print(m.__file__)", cwd=tmp_path, env=env)
    assert Path(where.strip()).is_relative_to(env_dir), where
    assert "promptvcr 0.1.0" in _run(env_dir / "bin" / "promptvcr", "--version", cwd=tmp_path, env=env)

    project = tmp_path / "project"
    shutil.copytree(ROOT / "examples", project / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    # What docs/pytest.md asks of a project with async tests.
    (project / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n", encoding="utf-8"
    )
    out = _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "examples", cwd=project, env=env)
    assert "2 passed" in out and "requests: 3 replayed, 0 recorded, 0 missed" in out, out
