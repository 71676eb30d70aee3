"""A loaded cassette's interactions, held in compact form and built one by one on first use.

CPython's cyclic garbage collector walks every container object that is alive. A loaded
interaction built whole is four of them (the interaction, its request, its response and the
list of chunks), and the tape's index added two more; so a test replaying one request from
a 10,000-interaction cassette paid about 7% more than from a one-interaction cassette, in
the collections its own allocations set off (with ``gc.freeze()`` after loading, the
difference was gone: issue 48). The collector's settings belong to the user's process, so
instead the interactions stay in the compact form the file was read into (tuples of
strings, bytes and numbers: :mod:`.compactform`), which the collector
does not track once it has seen them, and an interaction is built when it is first asked
for: by the tape for the one a request replays, or by whoever iterates them all (a miss's
diagnostics, ``Cassette.interactions``). A built one replaces its tuple, so the same
object is given each time.

The matching layer reads what a key needs (method, URL, content-type, body) from
:meth:`LoadedInteractions.request_fields` without building anything, and the keys a cache
entry brought, or that the tape offers to keep, pass through :meth:`~LoadedInteractions.keys`
and :meth:`~LoadedInteractions.offer_keys` (see :mod:`.parsecache`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import overload

from ..cassettes.models import Interaction, Request
from . import compactform
from .compactform import Compact

__all__ = ["LoadedInteractions"]

#: What a request's key is made of: method, URL, content-type header as sent, body.
RequestFields = tuple[str, str, str, bytes]


class LoadedInteractions(Sequence[Interaction]):
    """A cassette's interactions: compact tuples until asked for, then :class:`Interaction`.

    ``usages`` (when given) are the tokens each response reports, set on it as it is built
    (see :mod:`.smallcache`). ``keys(token)`` gives each request's key as computed before
    under the code and rules that ``token`` names (``None`` when unknown); ``offer_keys``
    keeps them for the next read. The token is opaque here: the matching layer makes it.
    """

    __slots__ = ("_cassette", "_items", "_keys", "_remember", "_usages", "_where")

    def __init__(
        self,
        items: Iterable[Compact | Interaction],
        where: str,
        keys: tuple[bytes, Sequence[str]] | None = None,
        remember: Callable[[bytes, list[str]], None] | None = None,
        usages: Sequence[tuple[int, int]] | None = None,
        cassette: Path | None = None,
    ) -> None:
        self._items: list[Compact | Interaction] = list(items)
        self._cassette = cassette  # the file: a body file's reference is relative to its folder
        self._where = where
        self._keys = keys
        self._remember = remember
        self._usages = usages

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, position: int) -> Interaction: ...

    @overload
    def __getitem__(self, position: slice) -> list[Interaction]: ...

    def __getitem__(self, position: int | slice) -> Interaction | list[Interaction]:
        if isinstance(position, slice):
            return [self._built(i) for i in range(*position.indices(len(self._items)))]
        item = self._items[position]
        if type(item) is tuple:
            return self._built(position)
        return item  # type: ignore[return-value]

    def _built(self, position: int) -> Interaction:
        items = self._items
        item = items[position]
        if type(item) is not tuple:
            return item  # type: ignore[return-value]
        built = compactform.interaction(item, self._where, self._cassette)
        if self._usages is not None:
            built.response.usage = self._usages[position if position >= 0 else position + len(items)]
        items[position] = built
        return built

    def __iter__(self) -> Iterator[Interaction]:
        for position in range(len(self._items)):
            yield self._built(position)

    def append(self, interaction: Interaction) -> None:
        """Add one recorded interaction (the tape's, in record mode)."""
        self._items.append(interaction)  # built already: ``usages`` stays the loaded ones'

    def requests(self, start: int = 0, end: int | None = None) -> Iterator[Request]:
        """The requests from ``start`` to ``end``: a built interaction's own, else one made for
        the moment from the item's fields, to compute its key."""
        for item in self._items[start:end]:
            if type(item) is tuple:
                yield Request(item[0], item[1], compactform.headers_of(item[2]), item[3])
            else:
                yield item.request  # type: ignore[union-attr]

    def identity_marked(self) -> bool:
        """Whether an interaction holds placeholders of its recording machine (see
        :mod:`promptvcr.identity`), read from the items without building them."""
        return any(item[10] if type(item) is tuple else item.identity for item in self._items)  # type: ignore[union-attr]

    def request_fields(self, start: int = 0, end: int | None = None) -> Iterator[RequestFields]:
        """What each request's key is made of, from ``start`` to ``end``, built or not."""
        for item in self._items[start:end]:
            if type(item) is tuple:
                yield item[0], item[1], compactform.header(item[2], "content-type"), item[3]
            else:
                request = item.request  # type: ignore[union-attr]
                yield request.method, request.url, request.headers.get("content-type", ""), request.content

    def keys(self, token: bytes) -> Sequence[str] | None:
        if self._keys is not None and self._keys[0] == token and len(self._keys[1]) == len(self):
            return self._keys[1]
        return None

    def offer_keys(self, token: bytes, keys: list[str]) -> None:
        if self.keys(token) is not None or len(keys) != len(self):
            return
        self._keys = (token, keys)
        remember, self._remember = self._remember, None
        if remember is not None:
            remember(token, keys)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LoadedInteractions, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LoadedInteractions({list(self)!r})"

    def __reduce__(self) -> tuple[type[list[Interaction]], tuple[list[Interaction]]]:
        # Copied or pickled as the plain list it stands for.
        return list, (list(self),)
