"""Tell, at C speed, that the token pass would stop without rewriting anything.

The token pass (``token_pass.normalize``) reads a text until the first thing it cannot read
with certainty, then hands the text to json_repair. When it stopped before rewriting
anything but spacing, json_repair reads the original text and the pass's work is thrown
away. On short broken output json_repair is fast, so that wasted pass is most of what we
add to its time.

``certain_bail`` recognises the common shapes of that case with regular expressions only:
the text opens with a run of plain JSON tokens that the pass would copy unchanged (strings
with JSON escapes and no trailing whitespace, numbers, ``true``/``false``/``null``,
punctuation with no comma or colon to add or drop), and the run ends where the pass must
stop: letters right after a string (``"v"alue"``), a bare word no rule of the pass reads
(``{"a": value, …}``, ``1notanumber``), or a ``/`` that starts no comment (``1/3``). It
answers ``True`` only when the pass would give json_repair the text unchanged, so skipping
the pass changes no result; ``False`` means "run the pass", never "the pass succeeds".
"""

from __future__ import annotations

import re

from ..remembered import last_answer
from .bare_tokens import LITERAL, LITERALS, NUMBER, PARTIAL_LITERAL, call_name_end, lax_number

_STRING = r'"[^"\\\x00-\x1f]*+(?:\\["\\bfnrt][^"\\\x00-\x1f]*+)*+(?<![\s"\\])(?<!\\[fnrt])"|""'
# A string whose value ends in whitespace would hide behind a placeholder: not plain.
# A number or literal that runs on into more of a word ('1.1.1', '10-20', '2024-01-15',
# '1notanumber', 'truee') is not plain: the tokens stop before it, at the word the pass stops at.
_EXACT_NUMBER = r"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?(?![\w.+-])"
_EXACT_LITERAL = r"(?:true|false|null)(?![\w$.+-])"
_PLAIN = re.compile(r"(?:[\s{}\[\]:,]++|" + _EXACT_NUMBER + "|" + _EXACT_LITERAL + "|" + _STRING + ")*+")
_TOKEN_START = re.compile(r"[^\s{}\[\]:,]*\Z")
_STRINGS = re.compile(_STRING)
# Plain tokens hold only whole numbers and literals (see _PLAIN), each set apart from the next
# by punctuation, spacing or a string: a run of their characters is one of them.
_NUMBERS_AND_LITERALS = re.compile(r"[-+.0-9a-zE]+")
_OPENS_CONTAINER = re.compile(r"\s*[{\[]")
# '1\n2', 'null 3': a top-level number or literal, then spacing and another token. The pass
# reads the first as itself (or stops at it) and stops at the second: outside any container it
# joins two values only when a comma sits between them ('1,2' is an array), and it skips
# comments, ';' and the invisible spaces it treats as spacing, so none of those may follow.
_TOP_SCALAR_THEN_MORE = re.compile(
    r"\s*(?:" + _EXACT_NUMBER + "|" + _EXACT_LITERAL + r")\s++[^,\uff0c/#;\ufeff\u200b\u200c\u200d\u2060]"
)
# A prefix of plain tokens only (no '1e', 'nul', '.5' left over), and none of them one the
# pass would still rewrite: a comma to insert (two values side by side, or a
# key and its value with no colon), a comma to drop, a number or literal used as a key, a
# Python set (``{"a", "b"}``).
# Both are checked on the skeleton without its spacing (shorter, and no backtracking over it).
_SKELETON_CHARS = "S0{}[]:,"
_REWRITTEN = re.compile(r"[S0\]}][S0\[{]|,[\]},]|[\[{],|0:|\{S[,}]")
_BARE_KEY = re.compile(r"(?:(?:[^\W\d]|\$)[\w$.-]*|\d+)\s*[:\uff1a]")
# The rules of read_bare that are one regex each, in one search: an ellipsis, a bare key, a
# number, a literal, a literal cut off at the end.
_READ_BARE = re.compile(
    "|".join(
        f"(?:{pattern})"
        for pattern in (
            r"\.\.\.",
            _BARE_KEY.pattern,
            NUMBER.pattern,
            f"(?i:{LITERAL.pattern})",
            PARTIAL_LITERAL.pattern,
        )
    )
)
_WORD_START = re.compile(r"[\w$.+*!?@%&=<>|~^`\\-]")
_NO_COMMENT = re.compile(r"/(?![/*])")
_SPACE = re.compile(r"\s*")
_BRACKETS = re.compile(r"[{}\[\]]")
_OPENER_OF = {"}": "{", "]": "["}
_NOT_BRACKET = re.compile(r"[^{}\[\]]+")
_PAIR = re.compile(r"\{\}|\[\]")
_STOPS_AFTER_STRING = re.compile(r"[^\W\d]|[_$.+*!?@%&=<>|~^`;]")
# Any string the pass reads to its closing quote; a raw newline could make it a multi-line
# value, which the pass reads differently.
_LOOSE_STRING = re.compile(r'"(?:[^"\\\n]|\\[^\n])*"')
_UNCLOSED_STRING = re.compile(r'"(?:[^"\\]|\\.)*\Z', re.S)
_MEMBER_INSIDE = re.compile(r"""[,}]\s*["'`]?\w+["'`]?\s*:""")  # as the pass's
_MISSING_VALUE = re.compile(r":\s*[,}\]:]")


def _bare_word_stops(text: str, at: int) -> bool:
    """Whether no rule of the pass reads the bare word at ``at`` (as key or value)."""
    return not (_READ_BARE.match(text, at) or lax_number(text, at) or call_name_end(text, at) > 0)


def _skeleton(prefix: str) -> str:
    """``prefix`` (plain tokens only) with each string as ``S`` and each number or literal as ``0``."""
    return _NUMBERS_AND_LITERALS.sub("0", _STRINGS.sub("S", prefix))


def _unchanged(skeleton: str) -> bool:
    """Whether the pass would copy the tokens of ``skeleton`` unchanged."""
    compact = "".join(skeleton.split())
    return not compact.strip(_SKELETON_CHARS) and _REWRITTEN.search(compact) is None


def _string_stops(text: str, at: int, last: str) -> bool:
    """Whether the pass stops at the string opening at ``at`` that is not plain."""
    closed = _LOOSE_STRING.match(text, at)
    if closed is not None:  # '"lorem "ipsum" sic"': letters after the quote that closes it
        after = _SPACE.match(text, closed.end()).end()  # type: ignore[union-attr]
        return after < len(text) and _STOPS_AFTER_STRING.match(text, after) is not None
    # Cut off inside a value that holds what looks like the next member: json_repair's call.
    unclosed = _UNCLOSED_STRING.match(text, at)
    return unclosed is not None and last in ":[" and _MEMBER_INSIDE.search(text, at) is not None


def _stray_closer(prefix: str) -> bool:
    """Whether plain tokens reach a closing bracket that closes nothing open (``[2, }``)."""
    skeleton = _skeleton(prefix)
    brackets = _NOT_BRACKET.sub("", skeleton)
    while True:  # drop matched pairs, innermost first, at C speed
        fewer = _PAIR.sub("", brackets)
        if fewer == brackets:
            break
        brackets = fewer
    if "}" not in brackets and "]" not in brackets:
        return False  # every closer closes what is open (output cut off, most likely)
    stack: list[str] = []
    for bracket in _BRACKETS.finditer(skeleton):
        char = bracket.group()
        if char in "{[":
            stack.append(char)
        elif stack and stack[-1] == _OPENER_OF[char]:
            stack.pop()
        else:  # the pass stops here: it closes only what is open
            return _unchanged(skeleton[: bracket.start()])
    return False


_LEADING_SPACE = re.compile(r"\s*")
_NUMBER_START = frozenset("0123456789+-.")
_WHOLE_NUMBER = re.compile(_EXACT_NUMBER)
# Characters at which the pass reads something other than a bare word (token_pass._HANDLERS).
_NOT_BARE = frozenset("{[(}]),\uff0c:\uff1a\"'\u201c\u2018/#;\ufeff\u200b\u200c\u200d\u2060")


def bare_word_bail(text: str) -> int:
    """Where the token pass stops when ``text`` opens with a bare word no rule of the pass reads
    (``abc``, ``foo [``, ``ES2020``), else ``-1``.

    The pass then rewrites nothing: it stops at that word, before any output, so its result is
    known without running it.
    """
    if text[:1] in _NOT_BARE:  # '{', '[', '"': most texts, at once
        return -1
    at = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]
    if at >= len(text) or text[at] in _NOT_BARE:
        return -1
    if text[at] in _NUMBER_START:  # '2e3.4', '0.0.1': no number as the pass reads them
        if _WHOLE_NUMBER.match(text, at):
            return -1  # '1,2,3': a whole number, most likely read (never wrong to run the pass)
        # lax_number reads every NUMBER and more; a sign may start '-Infinity'
        number = lax_number(text, at) or (text[at] == "-" and LITERAL.match(text, at))
        return -1 if number else at
    if LITERAL.match(text, at) or call_name_end(text, at) > 0:
        return -1  # nor literals and call names (ObjectId(...))
    partial = PARTIAL_LITERAL.match(text, at)  # 'tru', 'n': read when it can mean one literal only
    if partial is not None:
        word = partial.group(1).lower()
        if len({LITERALS[full] for full in LITERALS if full.startswith(word)}) == 1:
            return -1
    return at


def certain_bail(text: str) -> bool:
    """Whether the token pass would stop having rewritten nothing but spacing (see above).

    The answer for the last text asked about is kept: the quick path asks first, and the
    syntax step asks again about the same text object when the quick path had to give up.
    """
    if _OPENS_CONTAINER.match(text) is None:
        return _TOP_SCALAR_THEN_MORE.match(text) is not None
    return _certain_bail(text)


@last_answer
def _certain_bail(text: str) -> bool:
    end = _PLAIN.match(text).end()  # type: ignore[union-attr]
    prefix = text[:end]
    if _MISSING_VALUE.search(prefix):  # '{"a": , "b": 1}': the pass stops at the ','
        skeleton = _skeleton(prefix)
        missing = _MISSING_VALUE.search(skeleton)
        if missing is not None and _unchanged(skeleton[: missing.start() + 1]):
            return True
    if end >= len(text):
        return _stray_closer(prefix)
    tokens_end = len(prefix.rstrip())
    last = prefix[tokens_end - 1]  # the last character of the last plain token
    char = text[end]
    tail = ""  # what the pass reads before it stops, beyond the plain tokens
    if _NO_COMMENT.match(text, end):
        stops = True  # '{"key": 1/3}': '/' starts no comment, and the pass stops there
    elif last == '"':
        # Letters after a closing quote: no key, value or top-level string may end there.
        stops = _STOPS_AFTER_STRING.match(char) is not None
    elif char == '"':
        stops, tail = _string_stops(text, end, last), "S"
    elif last in ":[{,":  # a value, an item or a key: the checks below cover all three
        stops = _WORD_START.match(char) is not None and _bare_word_stops(text, end)
    elif tokens_end == end and last in "0123456789el" and _WORD_START.match(char):
        start = _TOKEN_START.search(prefix).start()  # type: ignore[union-attr]
        stops = _bare_word_stops(text, start)  # '1notanumber': the pass reads the whole word
    else:
        return False
    # Last, as the costliest check: nothing before the stop that the pass would rewrite.
    return stops and _unchanged(_skeleton(prefix) + tail)
