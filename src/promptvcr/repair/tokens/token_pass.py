"""Fix, token by token, what json_repair does not: a single forward pass before it runs.

json_repair is good at guessing where a broken string ends, but it has no notion of
triple-quoted strings, it strips whitespace at the end of multi-line strings, turns a
half-written ``fals`` into the string ``"fals"``, keeps a key whose value never started, and
reads ``{$ref: 1}`` as ``{"ref": 1}``. This pass handles those while the structure is
unambiguous and stops ("bails") at the first thing it cannot read with certainty, handing
the rest to json_repair verbatim: what it rewrote is never a guess, and what it could not
read is repaired exactly as json_repair alone would.

A string ending in whitespace is swapped for a placeholder so that json_repair cannot trim
it; ``restore`` puts the real strings back into the parsed value. Most inputs need no
json_repair at all afterwards: the rewritten text is valid JSON.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import NamedTuple

from .bare_tokens import NUMBER, loose_value
from .placeholders import MARK_CLOSE, MARK_OPEN
from .placeholders import restore as restore  # re-exported: callers take both from here
from .string_tokens import KEY_END, PLAIN_STRING, TOP_END, cut_off_value, read_string, value_end
from .strings import decode_body, without_layout_newline

_INVISIBLE = "\ufeff\u200b\u200c\u200d\u2060"
_SPACE_OR_NOTHING = re.compile(rf"[\s{_INVISIBLE}]*")
_LINE_COMMENT = re.compile(r"(?://|#)[^\n]*")
_BLOCK_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.S)
_BARE_KEY = re.compile(r"((?:[^\W\d]|\$)[\w$.-]*|\d+)\s*(?=[:\uff1a])")
_STRUCTURE = re.compile(r"""["{}\[\]]""")
_MEMBER_INSIDE = re.compile(r"""[,}]\s*["'`]?\w+["'`]?\s*:""")

# Container kinds on the stack: the closer the model should write, and the one we emit.
# "(" is a Python tuple and "{," a Python set; both become JSON arrays.
_CLOSERS = {"{": ("}", "}"), "[": ("]", "]"), "(": (")", "]"), "{,": ("}", "]")}

# What may follow a string's closing quote in each kind of container (see string_tokens).
_VALUE_END = {kind: value_end(closer, kind == "{") for kind, (closer, _) in _CLOSERS.items()}

_COLONS = frozenset(":\uff1a")
_COMMAS = frozenset(",\uff0c")

# What the pass expects next; begin_value has work to do from _AFTER_KEY on.
_ITEM = 0  # a value (in an array or at top level) or a key (in an object)
_VALUE = 1  # a value, after ':'
_AFTER_KEY = 2  # ':'
_AFTER_VALUE = 3  # ',' or a closing bracket


class Normalized(NamedTuple):
    """The rewritten text, the strings behind its placeholders, and where the pass stopped."""

    text: str
    strings: dict[str, str]
    stopped_at: int  # offset in the input; len(input) when the whole input was read
    dropped: str = ""  # syntax the pass left out on purpose: comments, call names, literals


class _Bail(Exception):
    """Raised inside the pass when the structure stops being certain."""


class _Pass:
    """State of one normalisation pass; a class only to share a dozen locals between helpers."""

    def __init__(self, text: str, stream_stable: bool) -> None:
        self.text = text
        self.stream_stable = stream_stable  # json_repair's mode; see string_tokens.cut_off_value
        self.out: list[str] = []
        self.strings: dict[str, str] = {}
        self.dropped: list[str] = []
        self.use_placeholders = MARK_OPEN not in text
        self.stack: list[str] = []  # container kinds, see _CLOSERS
        self.opened_at: list[int] = []  # index in out of each open container's bracket
        self.commas: list[int] = []  # commas seen in each open container
        self.expect = _ITEM
        self.member_start = 0  # index in out where the current object member began
        self.last_comma = -1  # index in out of a comma that a closer would make trailing
        self.top_level_values = 0

    # -- output helpers ------------------------------------------------------------------

    def emit_string(self, value: str) -> None:
        """Emit a string literal; one that ends in whitespace hides behind a placeholder.

        json_repair trims such strings when it has to repair anything; everything else is
        emitted as itself because json_repair's heuristics read string contents (duplicate
        keys, for one) and should see the real thing.
        """
        if self.use_placeholders and value[-1:].isspace():
            key = f"{MARK_OPEN}{len(self.strings)}{MARK_CLOSE}"
            self.strings[key] = value
            self.out.append(f'"{key}"')
        else:
            self.out.append(encode_basestring(value))
        self.last_comma = -1

    def in_object(self) -> bool:
        return bool(self.stack) and self.stack[-1] == "{"

    def begin_value(self) -> None:
        """Insert the comma a model forgot between two items, or the colon after a key."""
        if self.expect == _AFTER_KEY:
            self.out.append(":")
            self.expect = _VALUE
            return
        if self.expect == _AFTER_VALUE:
            if not self.stack:
                raise _Bail
            self.separate()

    def separate(self) -> None:
        if self.commas:
            self.commas[-1] += 1
        if self.in_object():
            self.member_start = len(self.out)
        self.last_comma = len(self.out)
        self.out.append(",")
        self.expect = _ITEM

    def finish_value(self) -> None:
        self.expect = _AFTER_VALUE
        self.last_comma = -1
        if not self.stack:
            self.top_level_values += 1

    # -- the pass ------------------------------------------------------------------------

    def run(self) -> int:
        text = self.text
        length = len(text)
        handlers = _HANDLERS
        read_bare = _Pass.read_bare
        index = 0
        try:
            while index < length:
                index = handlers.get(text[index], read_bare)(self, text, index)
        except _Bail:
            self.out.append(text[index:])
            return index
        self.finish()
        return length

    def space(self, text: str, index: int) -> int:
        return _SPACE_OR_NOTHING.match(text, index).end()  # type: ignore[union-attr]

    def comment(self, text: str, index: int) -> int:
        if text[index] == "#" and self.expect == _VALUE:
            return self.read_bare(text, index)
        comment = _BLOCK_COMMENT.match(text, index) or _LINE_COMMENT.match(text, index)
        if comment is None:
            raise _Bail
        if not _STRUCTURE.search(comment.group()):  # '# note }, "b": 2': not only a comment
            self.dropped.append(comment.group())
        return comment.end()

    def comma(self, text: str, index: int) -> int:
        if self.expect == _AFTER_VALUE and not self.stack and self.top_level_values == 1:
            if not text[index + 1 :].strip():
                return len(text)  # '4,': a trailing comma after the only value
            if self.top_level_scalar():
                self.wrap_items()  # '1,2,3': an array that lost its brackets
        if self.expect == _AFTER_VALUE and self.stack:
            self.separate()
        elif self.expect != _ITEM or not self.stack:
            raise _Bail
        return index + 1  # a doubled comma is dropped

    def colon(self, text: str, index: int) -> int:
        if self.expect == _AFTER_KEY:
            self.out.append(":")
            self.expect = _VALUE
            return index + 1
        if self.expect == _AFTER_VALUE and not self.stack and self.lone_top_level_string():
            self.wrap_members()
            return index + 1
        raise _Bail

    def open(self, text: str, index: int) -> int:
        char = text[index]
        if self.expect >= _AFTER_KEY:
            self.begin_value()
        if char == "(" and self.in_object() and self.expect == _ITEM:
            raise _Bail
        self.stack.append(char)
        self.commas.append(0)
        self.opened_at.append(len(self.out))
        self.out.append("[" if char == "(" else char)
        self.expect = _ITEM
        self.last_comma = -1
        if char == "{":
            self.member_start = len(self.out)
        return index + 1

    def close(self, text: str, index: int) -> int:
        char = text[index]
        if not self.stack or _CLOSERS[self.stack[-1]][0] != char or self.expect in (_VALUE, _AFTER_KEY):
            raise _Bail
        if self.expect == _ITEM and self.last_comma >= 0:
            self.out[self.last_comma] = ""
        kind = self.stack.pop()
        opened = self.opened_at.pop()
        if kind == "(" and not self.commas.pop() and self.expect == _AFTER_VALUE:
            self.out[opened] = ""  # '(1)' is 1: a tuple needs a comma
        else:
            self.out.append(_CLOSERS[kind][1])
        self.finish_value()
        return index + 1

    def lone_top_level_string(self) -> bool:
        pieces = [piece for piece in self.out if piece.strip()]
        return self.top_level_values == 1 and len(pieces) == 1 and pieces[0].startswith('"')

    def wrap_members(self) -> None:
        """``"a": 1, "b": 2`` with no braces: the model meant an object."""
        first = next(i for i, piece in enumerate(self.out) if piece.strip())
        self.out.insert(first, "{")
        self.stack.append("{")
        self.commas.append(0)
        self.opened_at.append(first)
        self.member_start = first + 1
        self.top_level_values = 0
        self.out.append(":")
        self.expect = _VALUE

    def top_level_scalar(self) -> bool:
        pieces = [piece for piece in self.out if piece.strip()]
        return len(pieces) == 1 and pieces[0][:1] not in ("[", "{")

    def wrap_items(self) -> None:
        first = next(i for i, piece in enumerate(self.out) if piece.strip())
        self.out.insert(first, "[")
        self.stack.append("[")
        self.commas.append(0)
        self.opened_at.append(first)
        self.top_level_values = 0

    def semicolon(self, text: str, index: int) -> int:
        if self.stack or self.expect != _AFTER_VALUE:
            raise _Bail
        return index + 1  # 'callback(2);'

    def object_is_empty(self) -> bool:
        return not "".join(self.out[self.opened_at[-1] + 1 :]).strip()

    def read_string(self, text: str, index: int) -> int:
        if self.expect >= _AFTER_KEY:
            self.begin_value()
        stack = self.stack
        is_key = self.expect == _ITEM and bool(stack) and stack[-1] == "{"
        ends = KEY_END if is_key else _VALUE_END[stack[-1]] if stack else TOP_END
        plain = PLAIN_STRING[text[index]].match(text, index)
        if plain is not None:  # most strings: no escape, no raw control character, one quote kind
            end = plain.end()
            follower = ends.match(text, end)
            after = follower.group()[-1:] if follower is not None else ""
            if follower is not None and not (is_key and after in (",", "}")):
                self.emit_string(plain.group(1))  # what the general path below would read
                if is_key:
                    self.expect = _AFTER_KEY
                    if after in _COLONS:  # the ':' that follows, as colon() reads it
                        self.out.append(":")
                        self.expect = _VALUE
                        return self.space(text, follower.end())
                    return end
                self.finish_value()
                if stack and after in _COMMAS:  # the ',' that follows, as comma() reads it
                    self.separate()
                    return self.space(text, follower.end())
                return end
        read = read_string(text, index, ends)
        if read is None:
            raise _Bail
        body, end, closed = read
        if closed:  # a prefix still arriving keeps its newline: trimming would rewrite what was read
            if body[-1:] == "\n" and not self.stream_stable:
                body = without_layout_newline(body)
            value = decode_body(body)
        else:
            if is_key:
                del self.out[self.member_start :]  # cut off inside a key: drop the member
                return end
            if self.stack and _MEMBER_INSIDE.search(body):
                raise _Bail  # '{"a": "first, b: 1}': where it ends is json_repair's call
            if self.stack and not self.in_object() and not body.strip() and end >= len(text):
                return end  # '["a", "': cut off before the item's first character, no item at all
            wanted = "".join(_CLOSERS[kind][0] for kind in reversed(self.stack))
            value, partial_escape = cut_off_value(body, wanted, self.stream_stable)
            if partial_escape:
                self.dropped.append(partial_escape)
        if is_key:
            follower = KEY_END.match(text, end)
            if follower and follower.group()[-1:] in (",", "}"):
                if not self.object_is_empty():
                    raise _Bail
                self.stack[-1] = "{,"  # {'a', 'b'}: a Python set
                self.out[self.opened_at[-1]] = "["
                is_key = False
            else:
                value = value.rstrip("\r\n")
        self.emit_string(value)
        if is_key:
            self.expect = _AFTER_KEY
        else:
            self.finish_value()
        return end

    def read_bare(self, text: str, index: int) -> int:
        if text[index].isspace():  # spacing that _HANDLERS does not list
            return self.space(text, index)
        stack = self.stack
        if self.expect == _ITEM and stack and text.startswith("...", index):
            return index + 3  # '[1, 2, ...]': an ellipsis stands for items left out
        if self.expect == _ITEM and stack and stack[-1] == "{":
            key = _BARE_KEY.match(text, index)
            if key is None:
                raise _Bail
            self.emit_string(key.group(1))
            self.expect = _AFTER_KEY
            return key.end()
        if self.expect >= _AFTER_KEY:
            self.begin_value()
        number = NUMBER.match(text, index)
        if number:
            self.out.append(number.group())
            self.expect = _AFTER_VALUE  # finish_value, inlined: numbers are the commonest bare token
            self.last_comma = -1
            if not stack:
                self.top_level_values += 1
            return number.end()
        loose = loose_value(text, index)
        if loose is None:
            raise _Bail
        value, end, dropped = loose
        sign_then_end = value == "0" and text[index] == "-" and not text[end:].strip()
        if sign_then_end and self.stack and not self.in_object():
            return len(text)  # '[1, -': cut off before the item's first digit, no item at all
        if dropped:
            self.dropped.append(dropped)
        if value:  # else a call name: 'ObjectId("1")', the parentheses hold the value
            self.out.append(value)
            self.finish_value()
        return end

    def finish(self) -> None:
        """End of text: drop a member whose value never started, then close what is open."""
        out, stack = self.out, self.stack
        if stack and stack[-1] == "{" and self.expect in (_VALUE, _AFTER_KEY):
            del out[self.member_start :]
            self.expect = _ITEM
        if self.expect == _ITEM and 0 <= self.last_comma < len(out):
            out[self.last_comma] = ""
        for kind in reversed(stack):
            out.append(_CLOSERS[kind][1])


_Handler = Callable[[_Pass, str, int], int]
_HANDLERS: dict[str, _Handler] = {
    **dict.fromkeys("{[(", _Pass.open),
    **dict.fromkeys("}])", _Pass.close),
    **dict.fromkeys(",\uff0c", _Pass.comma),
    **dict.fromkeys(":\uff1a", _Pass.colon),
    **dict.fromkeys("\"'\u201c\u2018", _Pass.read_string),
    **dict.fromkeys("/#", _Pass.comment),
    ";": _Pass.semicolon,
    **dict.fromkeys(" \t\n\r" + _INVISIBLE, _Pass.space),
}
"""What to do at each character that starts a token; anything else is a bare word."""


_last: tuple[str, bool, Normalized] = ("", False, Normalized("", {}, 0))


def normalize(text: str, stream_stable: bool = False) -> Normalized:
    """Rewrite ``text`` into JSON as far as its structure is certain; see the module docstring.

    ``stream_stable`` is json_repair's mode of that name: ``text`` is a prefix of output still
    arriving. The last result is remembered: the quick path and the syntax step often read one
    text.
    """
    global _last
    last_text, last_stable, last = _last
    if text is last_text and stream_stable is last_stable:
        return last
    state = _Pass(text, stream_stable)
    stopped_at = state.run()
    result = Normalized("".join(state.out), state.strings, stopped_at, " ".join(state.dropped))
    _last = (text, stream_stable, result)
    return result
