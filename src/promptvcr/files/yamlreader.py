"""Reading cassette YAML: libyaml's parser, with the Python objects built here.

``yaml.load`` with the C loader parses in C, then composes a node per value and resolves
each plain scalar through Python regexes, then constructs the objects in Python again:
for 1,000 interactions that was 0.7 s, of which the parse was 0.07. A cassette uses
plain YAML only (mappings, sequences, strings, numbers, booleans, nulls), so this module
builds the objects straight from the parser's events, asking PyYAML's own resolver and
constructor only for plain scalars that may be something other than a string.

Anchors and aliases are built here too, each alias the same object as its anchor (as the
safe loader does), within a budget: an alias repeats its anchor's text wherever the value
is used (hashed, redacted, written), so a few hundred bytes of nested aliases stand for
gigabytes (a "billion laughs"). Aliases may repeat :data:`MAX_ALIAS_EXPANSION` characters
in all, and none may refer to the node that contains it; beyond that :class:`Refused`.

Anything else (a tag, a merge key, a date, more than one document) goes to ``yaml.load``
as before, so the result is always what the safe loader gives. That path first walks the
events for the same limits, and for the nesting depth: libyaml's composer recurses in C and
crashes the process (segmentation fault) somewhere past 20,000 levels. The event walk here
keeps its own stack and stops at :data:`MAX_YAML_DEPTH` too.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator
from typing import Any

import yaml

from . import yamllines

__all__ = ["MAX_ALIAS_EXPANSION", "MAX_YAML_DEPTH", "Refused", "TooDeep", "load", "resolve_plain"]

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Deeper nesting than any recorded body needs (see the module docstring).
MAX_YAML_DEPTH = 1000


#: Characters that aliases may repeat in all: far more than a hand-edited cassette shares
#: between interactions, far less than what makes reading it slow.
MAX_ALIAS_EXPANSION = 1_000_000
#: Characters of a plain scalar read as a number: longer ones (a base-60 ``1:2:3:...`` takes
#: quadratic time to convert) are refused; no recorded number is that long.
MAX_NUMBER_LENGTH = 1000


class TooDeep(ValueError):
    """The text nests deeper than :data:`MAX_YAML_DEPTH`."""


class Refused(yaml.YAMLError):
    """The text would expand beyond what reading a cassette may cost (aliases, numbers); the
    message says what."""


def _expanding(total: int) -> Refused:
    return Refused(
        f"its aliases (*name) repeat more than {MAX_ALIAS_EXPANSION:,} characters of the text "
        f"({total:,} so far), an alias bomb; write the values out instead of using anchors and aliases"
    )


def _recursive(name: str) -> Refused:
    return Refused(
        f"the alias *{name} refers to the node that contains it, a structure without end; "
        f"write the values out instead"
    )


class _NotPlain(Exception):
    """The text uses YAML beyond the plain subset; ``yaml.load`` reads it."""


_FIRST_CHARS = frozenset(yaml.resolver.Resolver.yaml_implicit_resolvers)
_resolver = yaml.resolver.Resolver()
_constructor = yaml.constructor.SafeConstructor()
_SCALARS = {
    "tag:yaml.org,2002:null": _constructor.construct_yaml_null,
    "tag:yaml.org,2002:bool": _constructor.construct_yaml_bool,
    "tag:yaml.org,2002:int": _constructor.construct_yaml_int,
    "tag:yaml.org,2002:float": _constructor.construct_yaml_float,
}


#: A float written as JSON writes most (``-0.0123``, ``1.5e-07``), which the safe loader reads
#: as ``float`` does: taken without PyYAML's resolver and constructor. A recorded answer may hold
#: thousands, each different (log-probabilities, embeddings): the resolver's regex search and the
#: constructor cost 3 times as much (callgrind). YAML 1.1 wants a sign in the exponent: ``1e5`` is text.
_DECIMAL = re.compile(r"[-+]?[0-9]+\.[0-9]+(?:[eE][-+][0-9]+)?")


def _plain(value: str) -> Any:
    """A plain scalar as the safe loader reads it: most start with a letter no resolver
    claims and are strings without a regex being tried."""
    if value and value[0] not in _FIRST_CHARS:
        return value
    if len(value) <= MAX_NUMBER_LENGTH and _DECIMAL.fullmatch(value) is not None:
        return float(value)
    tag = _resolver.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
    if tag == "tag:yaml.org,2002:str":
        return value
    construct = _SCALARS.get(tag)
    if construct is None:  # timestamps, merge keys, "=": the full loader's business
        raise _NotPlain
    if len(value) > MAX_NUMBER_LENGTH and tag != "tag:yaml.org,2002:bool":
        raise Refused(
            f"a number {len(value):,} characters long ({value[:20]}...) is no recorded value; quote it "
            f"if it is text"
        )
    return construct(yaml.ScalarNode(tag, value))


#: What libyaml (PyYAML >= 6.0.4's wheels) says of a text nested deeper than it reads, which
#: is :data:`MAX_YAML_DEPTH` too: its scanner stops there, before any event says so.
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"


def _check(text: str) -> None:
    """Walk the events of ``text`` for the limits (depth, aliases, long numbers) before
    ``yaml.load`` builds it; :class:`TooDeep` or :class:`Refused`. Broken YAML passes: the
    full loader reports it."""
    depth = expansion = 0
    sizes: dict[str, int] = {}  # each anchor's expanded size in characters
    open_anchors: list[tuple[int, str, int, int]] = []  # depth, name, start, expansion then
    event: Any
    try:
        for event in yaml.parse(text, Loader=_Loader):
            kind = type(event)
            if kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                if event.anchor is not None:
                    open_anchors.append((depth, event.anchor, event.start_mark.index, expansion))
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise TooDeep
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                depth -= 1
                if open_anchors and open_anchors[-1][0] == depth:
                    _, name, start, before = open_anchors.pop()
                    sizes[name] = event.end_mark.index - start + expansion - before
            elif kind is yaml.ScalarEvent:
                if event.anchor is not None:
                    sizes[event.anchor] = event.end_mark.index - event.start_mark.index
                if event.implicit[0] and len(event.value) > MAX_NUMBER_LENGTH:
                    with contextlib.suppress(_NotPlain):
                        _plain(event.value)  # refuses a long number
            elif kind is yaml.AliasEvent:
                if any(name == event.anchor for _, name, _, _ in open_anchors):
                    raise _recursive(event.anchor)
                expansion += sizes.get(event.anchor, 0)
                if expansion > MAX_ALIAS_EXPANSION:
                    raise _expanding(expansion)
    except yaml.MarkedYAMLError as error:
        if error.problem == _LIBYAML_TOO_DEEP:
            raise TooDeep from None
        return


#: Plain scalars this short are resolved once per text (longer ones are rarely repeated).
_KNOWN_LENGTH = 40


def _events(text: str) -> Iterator[Any]:
    """The parser's events for ``text``, with no Python code between each of them (what
    ``yaml.parse`` gives, less a generator's step per event; ``get_event`` is ``None`` at the end)."""
    return iter(_Loader(text).get_event, None)


def _build(text: str) -> Any:
    """The document of ``text`` from parser events; ``_NotPlain`` for anything beyond plain YAML."""
    # The innermost open container (``None`` at the document's level), whether it is a list,
    # and (a mapping's) key awaiting its value; ``stack`` holds the same for those around it.
    top: Any = None
    top_list = False
    pending: Any = _NO_KEY
    stack: list[tuple[Any, bool, Any]] = []
    depth = 0
    document: Any = None
    documents = expansion = 0
    anchors: dict[str, tuple[Any, int]] = {}  # each anchor's value and expanded size (characters)
    open_anchors: list[tuple[int, str, int, int]] = []  # depth, name, start, expansion then
    # Plain scalars repeat (keys, small numbers): each short one is resolved once.
    known: dict[str, Any] = {}
    scalar_event, alias_event = yaml.ScalarEvent, yaml.AliasEvent
    mapping_start, sequence_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
    mapping_end, sequence_end = yaml.MappingEndEvent, yaml.SequenceEndEvent
    event: Any  # the event classes' fields are not in PyYAML's stubs
    for event in _events(text):
        kind = type(event)
        if kind is scalar_event:
            if event.tag is not None and event.tag != "!":
                raise _NotPlain
            value: Any = event.value
            if event.implicit[0] and (not value or value[0] in _FIRST_CHARS):
                raw = value
                value = known.get(raw, _NO_KEY)
                if value is _NO_KEY:
                    value = _plain(raw)
                    if len(raw) <= _KNOWN_LENGTH:
                        known[raw] = value
            if event.anchor is not None:
                _new_anchor(event.anchor, anchors, open_anchors)
                anchors[event.anchor] = (value, event.end_mark.index - event.start_mark.index)
            if top_list:
                top.append(value)
            elif top is None:
                document = value
            elif pending is _NO_KEY:
                pending = value
            else:
                top[pending] = value
                pending = _NO_KEY
            continue
        if kind is mapping_start or kind is sequence_start:
            if event.tag is not None:
                raise _NotPlain
            if depth >= MAX_YAML_DEPTH:
                raise TooDeep
            value = {} if kind is mapping_start else []
            if event.anchor is not None:
                _new_anchor(event.anchor, anchors, open_anchors)
                open_anchors.append((depth, event.anchor, event.start_mark.index, expansion))
        elif kind is mapping_end or kind is sequence_end:
            container = top  # it was placed in its parent when it started
            top, top_list, pending = stack.pop()
            depth -= 1
            if open_anchors and open_anchors[-1][0] == depth:
                _, name, start, before = open_anchors.pop()
                anchors[name] = (container, event.end_mark.index - start + expansion - before)
            continue
        elif kind is alias_event:
            if event.anchor not in anchors:
                if any(name == event.anchor for _, name, _, _ in open_anchors):
                    raise _recursive(event.anchor)
                raise _NotPlain  # undefined: the full loader reports it
            value, size = anchors[event.anchor]
            expansion += size
            if expansion > MAX_ALIAS_EXPANSION:
                raise _expanding(expansion)
        elif kind is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise _NotPlain  # the full loader says "expected a single document"
            continue
        else:  # stream start and end, document end
            continue
        # A container, or an alias's value, placed in the innermost container.
        nested = type(value) is dict or type(value) is list
        if top_list:
            top.append(value)
        elif top is None:
            document = value
        elif pending is _NO_KEY:
            if nested:
                raise _NotPlain  # a complex key: the full loader reports it
            pending = value
            continue
        else:
            top[pending] = value
            pending = _NO_KEY
        if nested and kind is not alias_event:
            stack.append((top, top_list, pending))
            top, top_list, pending = value, type(value) is list, _NO_KEY
            depth += 1
    return document


_NO_KEY: Any = object()


def _new_anchor(name: str, anchors: dict[str, Any], open_anchors: list[tuple[int, str, int, int]]) -> None:
    """A name anchored twice in a document: the full loader reports it (``found duplicate anchor``)."""
    if name in anchors or any(open_name == name for _, open_name, _, _ in open_anchors):
        raise _NotPlain


def resolve_plain(raw: str) -> Any:
    """:func:`_plain` for :mod:`.yamllines`, which leaves the text to the full loader
    (:class:`~.yamllines.Unread`) for a scalar the safe loader constructs otherwise.

    A short scalar's value is remembered for the process: a suite reads a small cassette per
    test, and the same numbers, nulls and booleans (``status: 200``, token counts) in each,
    each a regex search of PyYAML's resolver. The values are immutable (numbers, booleans,
    ``None``, text), so sharing them changes nothing."""
    return _resolved_short(raw) if len(raw) <= _SHORT else _resolved(raw)


def _resolved(raw: str) -> Any:
    try:
        return _plain(raw)
    except _NotPlain:
        raise yamllines.Unread from None


_SHORT = 40
_resolved_short = functools.lru_cache(maxsize=8192)(_resolved)


def load(text: str) -> Any:
    """What ``yaml.load(text, Loader=CSafeLoader)`` returns, faster for cassettes; raises
    PyYAML's errors for broken YAML, :class:`TooDeep` instead of crashing on deep nesting and
    :class:`Refused` for a text that would cost more to read than a cassette may (alias bombs).

    The layout promptvcr writes is read line by line (:mod:`.yamllines`); any other text
    from the parser's events, and what those cannot hold by the full loader."""
    try:
        document = yamllines.load(text, resolve_plain)
        if document is not yamllines.UNREAD:
            return document
        return _build(text)
    except Refused:
        raise
    except (_NotPlain, yaml.YAMLError):
        pass  # the full loader gives the result, or the error with its usual message
    _check(text)
    return yaml.load(text, Loader=_Loader)
