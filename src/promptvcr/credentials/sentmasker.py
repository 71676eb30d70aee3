"""The masker of the run's sent credentials, compiled only for data that may hold one of them.

Recording masks every credential the run sent wherever it shows up (:mod:`.masking`). The run's
set grows with each new key or cookie (an import of a large vcrpy suite: a few hundred, one set
more with each file), compiling the pattern of every form of every value costs about 0.2 s, and
most interactions hold none of the values. So each value is first looked for by a substring
search, in C, for a stretch of it that every form the masker looks for keeps: its longest run of
characters that neither percent-encoding nor JSON escapes (``A-Z a-z 0-9 - . _ ~``). Where no
run is, the masker would have returned the data as it was; it is compiled, once per set, for
the first data where one is.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import quote

from .compressed import inflate
from .decode import event_groups, json_escaped
from .masking import Masker

__all__ = ["SentMasker", "escaped_forms", "sent_masker"]

#: The characters every written form of a value keeps as they are (see the module's docstring).
_KEPT = re.compile(r"[A-Za-z0-9._~-]+")


def escaped_forms(values: Iterable[str]) -> frozenset[str]:
    """Each value as JSON text writes it, raw and percent-encoded: one substring search each."""
    return frozenset(json_escaped(form) for value in values for form in (value, quote(value, safe="")))


class SentMasker:
    """:meth:`Masker.data` for one set of credentials sent, the masker compiled on first need."""

    __slots__ = ("_anchors", "_masker", "escaped", "sent")

    def __init__(self, sent: frozenset[str]) -> None:
        self.sent = sent
        #: :func:`escaped_forms` of the set, made once per set too.
        self.escaped = escaped_forms(sent)
        #: A value of no such character gives "", found in any text: that set is always compiled.
        self._anchors = tuple({max(_KEPT.findall(value), key=len, default="") for value in sent})
        self._masker: Masker | None = None

    def data(self, data: Any, dump: str | None) -> Any:
        """:meth:`Masker.data` of the set's masker: ``data`` itself when nothing is masked."""
        if not self.sent or not self._may_hold(data, dump):
            return data
        if self._masker is None:
            self._masker = Masker(self.sent)
        return self._masker.data(data, dump)

    def _may_hold(self, data: Any, dump: str | None) -> bool:
        """Whether a run of a value is in a text :meth:`Masker.data` searches: ``dump`` (the
        text it searches first), or else every string and key of ``data`` (its JSON text),
        each field of a stream joined across its events, and each ``base64`` body decoded,
        raw and each gzip layer inflated."""
        if dump is None:
            try:
                dump = json.dumps(data, ensure_ascii=False)
            except (TypeError, ValueError, RecursionError):  # a large body: the masker reads it
                return True
            joined = ["".join(holder[key] for holder, key, _ in group) for group in event_groups(data)]
            if any(anchor in text for text in joined for anchor in self._anchors):
                return True
            if any(anchor.encode() in content for content in _binaries(data) for anchor in self._anchors):
                return True
        return any(anchor in dump for anchor in self._anchors)


def _binaries(value: Any) -> Iterator[bytes]:
    """Each ``base64`` string of stored data decoded, and each gzip layer in it inflated: the
    bytes :meth:`Masker.data` masks in (one that is no base64 is masked as text, in the dump)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if key == "base64" and isinstance(child, str):
                    try:
                        content: bytes | None = base64.b64decode(child, validate=True)
                    except (binascii.Error, ValueError):
                        continue
                    while content is not None:
                        yield content
                        content = inflate(content)
                else:
                    stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)


class _Maskers(dict[frozenset[str], SentMasker]):
    """One :class:`SentMasker` per set of credentials sent (a run sends the same few keys)."""

    def __missing__(self, sent: frozenset[str]) -> SentMasker:
        masker = self[sent] = SentMasker(sent)
        return masker


_MASKERS = _Maskers()


def sent_masker(sent: frozenset[str]) -> SentMasker:
    """The :class:`SentMasker` of ``sent``, kept for the next use (the last 64 sets)."""
    if len(_MASKERS) > 64:
        _MASKERS.clear()
    return _MASKERS[sent]
