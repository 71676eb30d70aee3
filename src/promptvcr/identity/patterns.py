"""The machine's values found in text, with boundaries, and their placeholders; and back.

A path is found as a prefix (``/home/alice`` in ``/home/alice/x`` and ``"/home/alice"``, never
in ``/home/alicea`` or ``/x/home/alice``), a specific user or host name as a whole token
(``alice`` in ``alice@example.com``, not in ``malice``), a short or common one (``root``,
``ci``, ``runner``) only as a part of a path (``/opt/ci/x``): as a word it is too likely to be
someone else's. A value is also found as JSON text writes it (``\\/home\\/alice``,
``\\u00e9``) and percent-encoded (``%2Fhome%2Falice``, written ``%3Chome%3E`` so that the URL
stays one). One alternation, longest first, so the most specific value wins: the project
inside the home folder is ``<project>``, not ``<home>/src/app``.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from urllib.parse import quote

from .values import MachineValue

__all__ = ["COMMON_NAMES", "Identity", "Restorer", "restorer"]

#: User and host names every second machine has: replaced only as a part of a path.
COMMON_NAMES = frozenset(
    [
        "root",
        "admin",
        "administrator",
        "user",
        "users",
        "runner",
        "runneradmin",
        "ci",
        "build",
        "builder",
        "buildkite",
        "jenkins",
        "ubuntu",
        "debian",
        "fedora",
        "centos",
        "alpine",
        "vagrant",
        "docker",
        "node",
        "app",
        "test",
        "tester",
        "dev",
        "developer",
        "guest",
        "home",
        "default",
        "vscode",
        "codespace",
        "codespaces",
        "gitpod",
        "circleci",
        "travis",
        "worker",
        "nobody",
        "pi",
        "ec2-user",
        "www-data",
        "runner-1",
        "host",
        "server",
        "machine",
        "local",
    ]
)
#: A shorter name occurs by chance (``bob`` in a prompt about Bob): replaced only in paths.
MIN_NAME = 4

_W = {str: r"\w", bytes: r"\w\x80-\xff"}  # a word character; in UTF-8 bytes, any non-ASCII byte too


def is_specific(name: str) -> bool:
    """Whether a user or host name is specific enough to be replaced as a word of its own."""
    return len(name) >= MIN_NAME and name.lower() not in COMMON_NAMES and not name.isdigit()


def _forms(value: MachineValue) -> list[tuple[str, str]]:
    """(how the value may be written, what replaces it written that way)."""
    placeholder = value.placeholder
    forms = {value.text: placeholder}
    if "/" in value.text:
        forms.setdefault(value.text.replace("/", "\\/"), placeholder)
    if "\\" in value.text:  # a Windows path inside a JSON string
        forms.setdefault(value.text.replace("\\", "\\\\"), placeholder)
    if not value.text.isascii():
        forms.setdefault(json.dumps(value.text)[1:-1], placeholder)
    if (encoded := quote(value.text, safe="")) != value.text:
        forms.setdefault(encoded, quote(placeholder, safe=""))
    if value.kind == "path" and (quoted := quote(value.text)) != value.text:
        forms.setdefault(quoted, placeholder)
    return list(forms.items())


def _bounded(form: str, kind: str, word: str) -> str:
    """The regular expression of ``form`` with its boundaries (see the module's text). The
    boundary before it is looked at behind its first character, so that every branch starts
    with a literal: the engine then skips ahead to the characters a value can start with
    (a lookbehind first makes it try each position of the text, a hundred times slower)."""
    first, rest = re.escape(form[0]), re.escape(form[1:])
    after = rf"(?![{word}~-]|\.[{word}])"
    if kind == "path":
        before = rf"(?<![{word}.~-]{first})"
        if form.startswith("%"):  # percent-encoded: after an encoded slash too
            before = rf"(?:{before}|(?<=%2F{first})|(?<=%2f{first}))"
        return first + before + rest + after
    before = rf"(?<![{word}.-]{first})" if re.match(r"\w", form) else ""
    return first + before + rest + (rf"(?![{word}-]|\.[{word}])" if re.search(r"\w$", form) else "")


#: A character a path's boundary does not allow before it (bytes: read as latin-1, any non-ASCII byte).
_WORD_BEFORE = re.compile(r"[\w.~\x80-\xff-]")


def _in_paths(names: Sequence[str], word: str) -> str:
    """One branch for every short or common name, found only as a part of a path: it starts
    with the path's separator (a common name's letters start no search: ``r`` of ``root``)."""
    alternatives = "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
    after = rf"(?=[/\\]|(?![{word}~-]|\.[{word}]))"
    return rf"/(?:{alternatives}){after}|\\(?:{alternatives}){after}"  # each branch starts with a literal


class Identity:
    """The machine's ``values`` found in text and bytes and replaced by their placeholders.

    :attr:`used` counts the placeholders written since it was last cleared: the names an
    interaction's marker lists (only those are restored at replay) and what the recording
    reports."""

    def __init__(self, values: Sequence[MachineValue]) -> None:
        self.values = tuple(values)
        self.used: Counter[str] = Counter()
        compiled = _compiled(self.values)
        self._by_text, self.text_pattern, self.bytes_pattern = compiled[:3]
        #: Each form as JSON text writes it: one substring search each says "nothing here" in
        #: a stored interaction's JSON text (see :class:`promptvcr.credentials.masking.Masker`).
        self.needles, self.longest, self._in_paths = compiled[3:]

    def without(self, names: Iterable[str]) -> Identity:
        """The same values but those named ``names``."""
        left = set(names)
        return Identity([value for value in self.values if value.name not in left])

    def text_sub(self, match: re.Match[str]) -> str:
        found = match.group()
        return self._replaced(found, self._separated(found, match.string[match.start() - 1 : match.start()]))

    def bytes_sub(self, match: re.Match[bytes]) -> bytes:
        found, before = match.group().decode("utf-8"), match.string[max(match.start() - 1, 0) : match.start()]
        return self._replaced(found, self._separated(found, before.decode("latin-1"))).encode()

    def _separated(self, found: str, before: str) -> bool:
        """Whether the branch of the short and common names (:func:`_in_paths`) matched ``found``:
        its separator is part of the match. ``/root`` is also the home folder ``/root``: that
        branch comes first, so it is the other one only where the folder's boundary fails."""
        if found in self._by_text:
            return found[1:] in self._in_paths and bool(before) and _WORD_BEFORE.match(before) is not None
        return True

    def _replaced(self, found: str, separated: bool) -> str:
        separator = ""
        if separated:  # a short or common name, after its path's separator (kept)
            separator, found = found[0], found[1:]
        replacement, name = self._by_text[found]
        self.used[name] += 1
        return separator + replacement

    def text(self, value: str) -> str:
        """``value`` with each of the machine's values replaced."""
        if self.text_pattern is None or self.text_pattern.search(value) is None:  # the usual case
            return value
        return self.text_pattern.sub(self.text_sub, value)

    def content(self, value: bytes) -> bytes:
        """Bytes (a body) with each of the machine's values replaced."""
        if self.bytes_pattern is None or self.bytes_pattern.search(value) is None:  # the usual case
            return value
        return self.bytes_pattern.sub(self.bytes_sub, value)


_Compiled = tuple[
    dict[str, tuple[str, str]],
    "re.Pattern[str] | None",
    "re.Pattern[bytes] | None",
    tuple[str, ...],
    int,
    frozenset[str],
]


@functools.lru_cache(maxsize=32)
def _compiled(values: tuple[MachineValue, ...]) -> _Compiled:
    """What an :class:`Identity` of ``values`` searches with, built once a process per set of
    values (a cassette entered a thousand times reads the same machine)."""
    forms: dict[str, tuple[str, str, MachineValue]] = {}
    for value in values:
        for form, replacement in _forms(value):
            forms.setdefault(form, (replacement, value.name, value))
    by_text = {form: (replacement, name) for form, (replacement, name, _) in forms.items()}
    ordered = sorted(forms, key=len, reverse=True)
    if not ordered:
        return by_text, None, None, (), 1, frozenset()
    in_paths = [f for f in ordered if forms[f][2].kind == "name" and not is_specific(forms[f][2].text)]
    whole = [f for f in ordered if f not in in_paths]
    text, binary = (
        "|".join(
            [_bounded(f, forms[f][2].kind, word) for f in whole]
            + ([_in_paths(in_paths, word)] if in_paths else [])
        )
        for word in (_W[str], _W[bytes])
    )
    return (
        by_text,
        re.compile(text),
        re.compile(binary.encode()),
        tuple(sorted({json.dumps(form, ensure_ascii=False)[1:-1] for form in ordered})),
        max(len(form.encode()) for form in ordered) + 1,  # a short name's match holds its separator
        frozenset(in_paths),
    )


class Restorer:
    """The placeholders an interaction's marker lists, replaced by this machine's values."""

    def __init__(self, values: dict[str, str]) -> None:
        self._values = values
        forms: dict[str, str] = {}
        for name, value in values.items():
            forms[f"<{name}>"] = value
            forms[quote(f"<{name}>", safe="")] = quote(value, safe="")
        self._forms = forms
        self._text = re.compile("|".join(map(re.escape, sorted(forms, key=len, reverse=True))))
        self._bytes = re.compile(self._text.pattern.encode())
        json_safe = {form: json.dumps(value, ensure_ascii=False)[1:-1] for form, value in forms.items()}
        self._json = json_safe

    def text(self, value: str) -> str:
        return self._text.sub(lambda match: self._forms[match.group()], value)

    def content(self, value: bytes, *, json_text: bool) -> bytes:
        """Bytes with the placeholders restored; ``json_text``: the body is JSON (or events of it),
        so a value is written escaped as a JSON string holds it."""
        table = self._json if json_text else self._forms
        return self._bytes.sub(lambda match: table[match.group().decode()].encode(), value)

    def content_pieces(self, pieces: Iterable[bytes | memoryview], *, json_text: bool) -> Iterator[bytes]:
        """:meth:`content` of a body read in pieces (a large body on disk), without joining it:
        the end of each piece that may start a placeholder waits for the next one, so that a
        placeholder cut by the slicing is restored as in the whole body."""
        held_back = max(map(len, self._forms)) - 1
        carry = b""
        for piece in pieces:
            data = carry + bytes(piece)
            cut = max(len(data) - held_back, 0)
            for match in self._bytes.finditer(data, max(cut - held_back, 0)):
                if match.start() < cut < match.end():
                    cut = match.start()  # a placeholder across the cut: kept whole for the next
                    break
            yield self.content(data[:cut], json_text=json_text)
            carry = data[cut:]
        if carry:
            yield self.content(carry, json_text=json_text)


def restorer(values: Sequence[MachineValue], names: Iterable[str]) -> Restorer | None:
    """What restores the placeholders ``names`` (an interaction's marker) to this machine's
    ``values``; ``None`` when there is nothing to restore. A name this machine has no value for
    (no second address) stays a placeholder."""
    wanted = set(names)
    chosen: dict[str, str] = {}
    for value in values:
        if value.name in wanted and value.name not in chosen:
            chosen[value.name] = value.text
    return Restorer(chosen) if chosen else None
