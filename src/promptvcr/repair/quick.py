"""The quick path for the common broken output: one value, and nothing around it to decide.

Most broken output is a single JSON value with a slip in it (a trailing comma, Python
literals, single quotes, a missing quote). Extraction and selection have nothing to decide
there, so ``parse`` answers without building a ``Job``:

- commas before closing brackets are dropped at C speed;
- when the token pass reads the whole text, its value stands;
- when the text is one bracketed value with no fence, tag or markup around it, the token
  pass's rewrite goes to json_repair, exactly as the syntax step would send it.

The no-loss guarantee holds here as in the pipeline: when the value holds fewer letters and
digits than the text, json_repair reads the text as well and the value with more data wins.
Anything else returns ``NOTHING`` and the pipeline runs.
"""

from __future__ import annotations

import re
from typing import NoReturn

from .choose import choose
from .failure import RepairError
from .fastpath import DECODER, without_trailing_commas
from .job import NOTHING, Candidate, Job, JSONValue, TagPair
from .locate.extract import MEMBER_BEFORE, looks_like_json
from .locate.extract import THINKING as _THINKING
from .locate.fences import fenced_blocks
from .locate.spans import Span, json_spans, matching_end
from .locate.tags import DEFAULT_TAGS, any_opener
from .measure import richer, source_size, text_size, value_size
from .no_loss import continued, keep_upstream_data
from .tokens.bail import bare_word_bail, certain_bail
from .tokens.syntax import repair_syntax
from .tokens.token_pass import normalize, restore
from .upstream import source_for_upstream, upstream_value

_LONE_QUOTE = re.compile(r"""\s*["']\s*\Z""")
_OPENING = re.compile(r"\s*[{\[]")
_DEFAULT_OPENER = any_opener(DEFAULT_TAGS)
_BRACKET = re.compile(r"[{\[(]")
_THEN_MORE = re.compile(r"\s*+(?:,\s*+[^\s]|[^\s,/#;\ufeff\u200b\u200c\u200d\u2060])")


def _has_opener(text: str, tags: tuple[TagPair, ...]) -> bool:
    """Whether an opening tag of ``tags`` is in ``text`` (each default one has a ``[`` or ``<``)."""
    if tags is DEFAULT_TAGS:
        return ("[" in text or "<" in text) and _DEFAULT_OPENER.search(text) is not None
    return any_opener(tags).search(text) is not None


def _lone_value(text: str, tags: tuple[TagPair, ...]) -> bool:
    """Whether extraction would take ``text`` whole: one bracketed value, or no brackets at
    all (``1\n2``, ``0.0.1``), with no fence, tag or markup around it."""
    if "```" in text or "~~~" in text or "<" in text:
        return False
    if _has_opener(text, tags):
        return False
    opening = _OPENING.match(text)
    if opening is None:
        unbracketed = _BRACKET.search(text) is None and text == text.strip()
        return unbracketed and looks_like_json(text)
    return not text[matching_end(text, opening.end() - 1) :].strip()


def _stops_after_first(text: str, spans: list[Span]) -> bool:
    """Whether ``text`` opens with a valid container that the token pass must stop right
    after: another value follows (``{"a": 1}, {"b": 2}``, ``[]{}``, ``{"a": 1}, "b": 2}``),
    with spacing or a comma at most between them.

    Outside any container the pass joins two values only when the first is a lone scalar, and
    skips only comments, ``;`` and a trailing comma: the quick path can only give up on such a
    text (or leave it to the no-loss step), and its token pass and bail check would be wasted.
    """
    return (
        bool(spans)
        and spans[0].valid
        and not text[: spans[0].start].strip()
        and _THEN_MORE.match(text, spans[0].end) is not None
    )


def _whole_text_value(text: str, tags: tuple[TagPair, ...], stream_stable: bool) -> JSONValue:
    """The pipeline's value when extraction would take the whole text as one broken value
    (``{"a": 1}, "b": 2}``, ``["k": "v"}]``, ``"6 feet (72") tall"``), else ``NOTHING``.

    The syntax, selection and no-loss steps run on the candidate extraction would make, with
    the token pass, bail check and json_repair answers already known for this text object.
    """
    if "```" in text or "~~~" in text or _has_opener(text, tags) or _THINKING.search(text):
        return NOTHING
    spans = json_spans(text)
    if spans == [(0, len(text), False)]:
        candidate = Candidate(text, 0, len(text), "text", True)
    elif not spans and looks_like_json(text):  # '"a (b) c") d"', '[e],': the text is the candidate
        candidate = Candidate(text.strip(), 0, len(text), "text")
    else:
        return NOTHING
    job = Job(text=text, tags=tags, candidates=(candidate,), stream_stable=stream_stable)
    try:
        return keep_upstream_data(choose(repair_syntax(job))).value
    except RepairError:
        raise
    except Exception:  # a bug in a step: the pipeline runs and reports it, naming the step
        return NOTHING


def _richer(value: JSONValue, text: str, dropped: str) -> JSONValue:
    """``value``, or json_repair's value of ``text`` when that holds data ``value`` lost.

    Letters and digits the pass left out on purpose (``dropped``: comments, call names) are
    not missing: when they explain the difference, json_repair need not be asked.
    """
    if value_size(value) >= source_size(text) - (text_size(dropped) if dropped else 0):
        return value
    theirs = upstream_value(text)
    if theirs is not NOTHING and richer(value, theirs, dropped):
        return theirs
    return value


def _no_value(text: str, stopped_at: int = -1) -> NoReturn:
    """What the syntax step would conclude about the same text."""
    reason = "the text around the JSON could not be repaired into a value"
    raise RepairError("syntax", reason, text, normalize(text).stopped_at if stopped_at < 0 else stopped_at)


def _no_candidate(text: str, tags: tuple[TagPair, ...]) -> bool:
    """Whether extraction would find nothing in ``text``: no bracket, fence, tag or draft to
    look into, and nothing that looks like a bare value."""
    if "{" in text or "[" in text or "```" in text or "~~~" in text:
        return False
    return not (_has_opener(text, tags) or _THINKING.search(text) or looks_like_json(text))


def _bare_word_value(text: str, tags: tuple[TagPair, ...], at: int, stream_stable: bool) -> JSONValue:
    """What the steps below conclude when the token pass stops at the bare word at ``at``
    having read nothing (``bail.bare_word_bail``): json_repair reads the text itself."""
    if not _lone_value(text, tags):
        if _no_candidate(text, tags):  # 'abc', 'foo bar': the pipeline would fail to extract
            raise RepairError("extract", "no JSON value found in the text", text)
        return _whole_text_value(text, tags, stream_stable)
    value = upstream_value(text)
    if value is NOTHING:
        _no_value(text, at)
    return value


def _no_loss_value(
    text: str, tags: tuple[TagPair, ...], candidate: Candidate, value: JSONValue, settled: bool = False
) -> JSONValue:
    """``value``, or json_repair's when the no-loss step would take it, ``candidate`` being the
    one extraction would find and ``value`` its value: that step, run on the job the pipeline
    would have built by then. Only for a text that opens with prose (or a fence), or is
    ``settled``: nothing later in the quick path could answer it."""
    if not settled and bare_word_bail(text) < 0:
        return NOTHING  # the token pass may read the text: the quick path's later steps decide
    job = Job(text=text, tags=tags, candidates=(candidate,), parsed=((candidate, value),), value=value)
    try:
        return keep_upstream_data(job).value
    except Exception:  # a bug in the step: the pipeline runs and reports it, naming the step
        return NOTHING


def fenced_value(text: str, tags: tuple[TagPair, ...]) -> JSONValue:
    """The value of the one fenced block in ``text`` when it holds one valid JSON container
    and prose at most around it (``Here it is:\n```json\n{...}\n```\n``), else ``NOTHING``.

    This is what extraction, selection and the no-loss step conclude about such a text.
    """
    if _has_opener(text, tags) or _THINKING.search(text):
        return NOTHING  # tagged blocks or drafts: extraction decides
    blocks = fenced_blocks(text)
    if len(blocks) != 1 or not _OPENING.match(blocks[0].text):
        return NOTHING
    block = blocks[0]
    content = block.text.strip()
    try:
        value = DECODER.decode(content)
    except ValueError:
        return NOTHING
    start = block.start + block.text.index(content[0])
    candidate = Candidate(content, start, start + len(content), "fence")
    if value_size(value) < source_size(content) or continued(text, (candidate,)):
        return _no_loss_value(text, tags, candidate, value)  # json_repair may hold more
    return value


def prose_value(
    text: str, tags: tuple[TagPair, ...], spans: list[Span] | None = None, settled: bool = False
) -> JSONValue:
    """The value of the one valid JSON container inside prose (``Sure! {...} Hope it helps``),
    when nothing else in the text could be a candidate, else ``NOTHING``.

    This is what extraction, selection and the no-loss step conclude about such a text.
    ``spans``: ``json_spans(text)``, when the caller has them; ``settled``: nothing later in
    the quick path could answer the text (``_stops_after_first``).
    """
    if spans is None:
        spans = json_spans(text)
    if len(spans) != 1 or not spans[0].valid or MEMBER_BEFORE.search(text, 0, spans[0].start):
        return NOTHING
    if _has_opener(text, tags) or _THINKING.search(text):
        return NOTHING
    start, end, _ = spans[0]
    body = text[start:end]
    value = DECODER.decode(body)
    candidate = Candidate(body, start, end, "text")
    if value_size(value) < source_size(body) or continued(text, (candidate,)):
        return _no_loss_value(text, tags, candidate, value, settled)  # json_repair may hold more
    return value


def quick_value(
    text: str, tags: tuple[TagPair, ...], valid_first: bool = False, stream_stable: bool = False
) -> JSONValue:
    """The value of ``text`` when nothing around it needs deciding, else ``NOTHING``.

    ``valid_first``: ``json.loads`` read a whole value at the start of ``text`` and then found
    more (``{"a": 1}}``, ``{"a": 1} Hope this helps``). ``stream_stable``: ``parse``'s option.
    """
    value = without_trailing_commas(text)
    if value is not NOTHING:
        return value
    if "```" in text or "~~~" in text:
        value = fenced_value(text, tags)
    elif valid_first or (_OPENING.match(text) is None and ("{" in text or "[" in text)):
        spans = json_spans(text)
        stops = valid_first and _stops_after_first(text, spans)
        value = prose_value(text, tags, spans, stops)
        if value is NOTHING and stops:
            return NOTHING  # the token pass stops after the first value: the pipeline decides
    if value is not NOTHING:
        return value
    if certain_bail(text):  # the pass would hand json_repair this very text: skip it
        if not _lone_value(text, tags):
            return _whole_text_value(text, tags, stream_stable)
        value = upstream_value(text)
        if value is NOTHING:
            _no_value(text)
        return value
    at = bare_word_bail(text)
    if at >= 0:  # the pass would stop at once: its result is known without running it
        return _bare_word_value(text, tags, at, stream_stable)
    normalized = normalize(text, stream_stable)
    if not normalized.text.strip():
        return NOTHING
    if normalized.stopped_at == len(text):
        try:
            value = restore(DECODER.decode(normalized.text), normalized.strings)
        except ValueError:  # read whole, still broken: json_repair reads it in the syntax step
            return _whole_text_value(text, tags, stream_stable)
        if value == "" and _LONE_QUOTE.match(text):
            return _whole_text_value(text, tags, stream_stable)  # a lone quote is no value
        return _richer(value, text, normalized.dropped)
    if not _lone_value(text, tags):
        return _whole_text_value(text, tags, stream_stable)
    source = source_for_upstream(text, normalized)
    value = upstream_value(source)
    if value is NOTHING:
        _no_value(text)
    value = restore(value, normalized.strings)
    return value if source is text else _richer(value, text, normalized.dropped)
