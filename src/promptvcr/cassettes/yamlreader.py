"""Reading cassette YAML: libyaml's parser, with the Python objects built here.

``yaml.load`` with the C loader parses in C, then composes a node per value and resolves
each plain scalar through Python regexes, then constructs the objects in Python again:
for 1,000 interactions that was 0.7 s, of which the parse was 0.07. A cassette uses
plain YAML only (mappings, sequences, strings, numbers, booleans, nulls), so this module
builds the objects straight from the parser's events, asking PyYAML's own resolver and
constructor only for plain scalars that may be something other than a string.

Anything else (a tag, an anchor or alias, a merge key, a date, more than one document)
goes to ``yaml.load`` as before, so the result is always what the safe loader gives.
That path first checks the nesting depth: libyaml's composer recurses in C and crashes
the process (segmentation fault) somewhere past 20,000 levels. The event walk here keeps
its own stack and stops at :data:`MAX_YAML_DEPTH` too.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["MAX_YAML_DEPTH", "TooDeep", "load", "too_deep"]

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Deeper nesting than any recorded body needs (see the module docstring).
MAX_YAML_DEPTH = 1000


class TooDeep(ValueError):
    """The text nests deeper than :data:`MAX_YAML_DEPTH`."""


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


def _plain(value: str) -> Any:
    """A plain scalar as the safe loader reads it: most start with a letter no resolver
    claims and are strings without a regex being tried."""
    if value and value[0] not in _FIRST_CHARS:
        return value
    tag = _resolver.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
    if tag == "tag:yaml.org,2002:str":
        return value
    construct = _SCALARS.get(tag)
    if construct is None:  # timestamps, merge keys, "=": the full loader's business
        raise _NotPlain
    return construct(yaml.ScalarNode(tag, value))


def too_deep(text: str) -> bool:
    """Whether YAML ``text`` nests deeper than :data:`MAX_YAML_DEPTH`; check before ``yaml.load``.

    Only flow brackets, ``- `` and ``? `` nest without indentation (which would need a
    file of gigabytes), so a text with fewer of them than the limit skips the event scan.
    """
    openers = text.count("[") + text.count("{") + text.count("- ") + text.count("? ")
    if openers <= MAX_YAML_DEPTH:
        return False
    depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                return True
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return False


def _build(text: str) -> Any:
    """The document of ``text`` from parser events; ``_NotPlain`` for anything beyond plain YAML."""
    stack: list[tuple[Any, Any]] = []  # each open container, and the key awaiting its value
    document: Any = None
    documents = 0
    event: Any  # the event classes' fields are not in PyYAML's stubs
    for event in yaml.parse(text, Loader=_Loader):
        kind = type(event)
        if kind is yaml.ScalarEvent:
            if event.anchor is not None or (event.tag is not None and event.tag != "!"):
                raise _NotPlain
            value: Any = _plain(event.value) if event.implicit[0] else event.value
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if event.anchor is not None or event.tag is not None:
                raise _NotPlain
            if len(stack) >= MAX_YAML_DEPTH:
                raise TooDeep
            value = {} if kind is yaml.MappingStartEvent else []
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            stack.pop()  # it was placed in its parent when it started
            continue
        elif kind is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise _NotPlain  # the full loader says "expected a single document"
            continue
        elif kind is yaml.AliasEvent:
            raise _NotPlain
        else:  # stream start and end, document end
            continue
        if not stack:
            document = value
        else:
            parent, key = stack[-1]
            if type(parent) is list:
                parent.append(value)
            elif key is _NO_KEY:
                if type(value) is dict or type(value) is list:
                    raise _NotPlain  # a complex key: the full loader reports it
                stack[-1] = (parent, value)
                continue
            else:
                parent[key] = value
                stack[-1] = (parent, _NO_KEY)
        if type(value) is dict or type(value) is list:
            stack.append((value, _NO_KEY))
    return document


_NO_KEY: Any = object()


def load(text: str) -> Any:
    """What ``yaml.load(text, Loader=CSafeLoader)`` returns, faster for cassettes; raises
    PyYAML's errors for broken YAML and :class:`TooDeep` instead of crashing on deep nesting."""
    try:
        return _build(text)
    except (_NotPlain, yaml.YAMLError):
        pass  # the full loader gives the result, or the error with its usual message
    if too_deep(text):
        raise TooDeep
    return yaml.load(text, Loader=_Loader)
