"""The values of this machine that a recording would carry, each with the placeholder it becomes.

Read when a cassette records or replays (never cached: a test may change ``HOME`` or the
working directory), from the environment first, so that a test, a CI job or a user can give
them (``HOME``, ``TMPDIR``, ``USER``, ``PROMPTVCR_HOSTNAME``, ``PROMPTVCR_PROJECT_ROOT``), then
from the operating system. The project root is the folder the tests or the application run
from: the pytest plugin sets pytest's rootdir (:func:`set_project_root`), else the working
directory is the project.
"""

from __future__ import annotations

import functools
import getpass
import ipaddress
import itertools
import os
import re
import socket
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["PLACEHOLDERS", "MachineValue", "check_extra", "machine_values", "set_project_root"]

#: The placeholders promptvcr writes by default, most specific first: a value both names would
#: take (the project is the working directory) takes the first.
PLACEHOLDERS = ("project", "cwd", "home", "tmp", "user", "host", "address")

Kind = Literal["path", "name", "token"]


@dataclass(frozen=True, slots=True)
class MachineValue:
    """One value of the machine: ``name`` is its placeholder's (``<home>``); ``kind`` how it is
    found in text: a ``path`` as a path prefix, a ``name`` (user, host) as a whole token when
    specific enough and else only as a part of a path, a ``token`` (an address, a value a user
    added) as a whole token."""

    name: str
    text: str
    kind: Kind

    @property
    def placeholder(self) -> str:
        return f"<{self.name}>"


_project_root: str | None = None


def set_project_root(path: str | os.PathLike[str] | None) -> str | None:
    """The folder a run's project lives in (the pytest plugin gives its rootdir); ``None``: the
    working directory, read each time. Returns the one it replaces."""
    global _project_root
    outer, _project_root = _project_root, None if path is None else os.fspath(path)
    return outer


_NAME = re.compile(r"[a-z][a-z0-9_-]{0,30}")


def machine_values(
    environ: Mapping[str, str] | None = None, *, extra: Mapping[str, str] | None = None
) -> tuple[MachineValue, ...]:
    """The values of this machine (see the module's text), then ``extra``: a name for each value
    a user adds (``{"email": "alice@example.com"}`` is written ``<email>``). ``ValueError`` for
    a name that is no placeholder name or one promptvcr's own. Read at each call (a few
    variables and the working directory), resolved once for the same readings."""
    env = os.environ if environ is None else environ
    given = (
        env.get("PROMPTVCR_PROJECT_ROOT") or _project_root,
        _cwd(),
        env.get("HOME") or env.get("USERPROFILE"),
        env.get("TMPDIR") or env.get("TEMP") or env.get("TMP"),
        env.get("USER") or env.get("LOGNAME") or env.get("USERNAME"),
        env.get("PROMPTVCR_HOSTNAME") or socket.gethostname(),
    )
    return _resolved(given, tuple(check_extra(extra or {}).items()))


@functools.lru_cache(maxsize=64)
def _resolved(given: tuple[str | None, ...], extra: tuple[tuple[str, str], ...]) -> tuple[MachineValue, ...]:
    project, cwd, home, tmp, user, host = given
    found: list[MachineValue] = []
    seen: set[str] = set()

    def add(name: str, text: str | None, kind: Kind) -> None:
        if text and text not in seen:
            seen.add(text)
            found.append(MachineValue(name, text, kind))

    for name, path in (
        ("project", project or cwd),
        ("cwd", cwd),
        ("home", home or _home()),
        ("tmp", tmp or tempfile.gettempdir()),
    ):
        for form in _path_forms(path):
            add(name, form, "path")
    add("user", user or _user(), "name")
    if host and host.lower() not in ("localhost", "localhost.localdomain"):
        add("host", host, "name")
        add("host", host.partition(".")[0], "name")
    for number, address in enumerate(_addresses(), start=1):
        add("address" if number == 1 else f"address:{number}", address, "token")
    for name, value in extra:
        add(name, value, "token")
    return tuple(found)


def check_extra(extra: Mapping[str, str]) -> Mapping[str, str]:
    """``extra`` when each name can be a placeholder's and each value is worth replacing;
    ``ValueError`` saying which is not."""
    for name, value in extra.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name) or name.partition(":")[0] in PLACEHOLDERS:
            raise ValueError(
                f"identity: {name!r} cannot name a value to replace: use a lower-case word "
                f"(letters, digits, - or _) that is none of promptvcr's own ({', '.join(PLACEHOLDERS)}), "
                f'e.g. identity={{"email": "..."}}.'
            )
        if not isinstance(value, str) or len(value) < 3:
            raise ValueError(f"identity: the value of {name!r} must be text of 3 characters or more.")
    return extra


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the working directory was removed
        return None


def _home() -> str | None:
    try:
        return str(Path.home())
    except (RuntimeError, KeyError):
        return None


def _user() -> str | None:
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):
        return None


def _path_forms(path: str | None) -> Iterator[str]:
    """A folder as written and, when a link leads to it, as resolved (macOS: ``/var`` and
    ``/private/var``); never the root or a folder of one letter, which every path starts with."""
    if not path:
        return
    given = path.rstrip("/\\") or path
    forms = [given]
    try:
        real = os.path.realpath(given)
    except (OSError, ValueError):
        real = given
    if real != given:
        forms.append(real)
    for form in forms:
        if os.path.isabs(form) and len(form.strip("/\\").replace(":", "")) >= 3:
            yield form


@functools.lru_cache(maxsize=1)
def _addresses() -> tuple[str, ...]:
    """The machine's own addresses, loopback and link-local left out, read from the kernel's
    tables (Linux) without asking a resolver: a lookup of the host name may go to the network.
    Read once a process: they outlive any test, and reading them costs more than the rest."""
    return tuple(_read_addresses())


def _read_addresses() -> Iterator[str]:
    texts: list[str] = []
    try:
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
    except OSError:
        lines = []
    for previous, line in itertools.pairwise(lines):
        if line.strip() == "/32 host LOCAL":
            texts.append(previous.strip().lstrip("|-+ "))
    try:
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            hexed = line.split()[0]
            texts.append(":".join(hexed[i : i + 4] for i in range(0, 32, 4)))
    except (OSError, IndexError):
        pass
    seen: set[str] = set()
    for text in texts:
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            continue
        if address.is_loopback or address.is_link_local or address.is_unspecified:
            continue
        if (shown := str(address)) not in seen:
            seen.add(shown)
            yield shown
