"""Reading one reply of a search agent in the tag protocol, with a parser that survives how real models break it.

The model writes ``<think>…</think>``, then exactly one ``<call_tool name="pubmed_search" limit="5">
keywords</call_tool>`` and stops; the runtime answers with ``<tool_output>…</tool_output>``
(:mod:`.protocol_writing`); the model ends with ``<answer>…</answer>`` whose claims carry
``<cite id="ID">…</cite>`` (:mod:`.cite_tags`). :func:`parse_reply` reads the one call to run, or the
answer, and the text that goes into the trajectory; a call reads back exactly as
:func:`~.protocol_writing.format_call` wrote it.

Known failure modes this module absorbs (each has a test): a call left unclosed (the model hit a
stop sequence or EOS), several calls in one reply (only the first runs), a call tag written twice, a
``<tool_output>`` the model wrote itself (cut away with everything after it, and counted: anything
after a fake output rests on invented data), ``</call>`` as a close, double-, single- or un-quoted
attributes, a ``>`` or a line break inside a quoted value, ``ids=`` and multi-id cites, nested markup
inside a cite, hyphenated ids, a missing ``</answer>``, and markup inside a call (``</call_to``,
``<snippet id="1">``, ``</a>``, an uppercase tag: removed from the query and parameters, the words
around it kept, and counted). Tag names are read case-insensitively.

Tags that are mentioned rather than used are prose: anything in a closed ``<think>`` block, in inline
code (```<answer>```) or in a fenced code block (:mod:`.protocol_tags`); an ``<answer>`` with no
``</answer>`` and no cite before a call ("Before I write the <answer>, let me search."); a ``<tool_output>``
with no close and no snippet before a call or an answer. A reply whose only call or answer sits in code is
read with its code as protocol (a model that fences its calls).

Every function reads its text in a few left-to-right passes (time linear in the input: no pattern
here backtracks over more than the run it just read). Pure functions, no LM; they never raise on any
input text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidValue
from .protocol_tags import Tag, attribute, ends_call, find_tags, is_tag, mark_prose, quiet_gc
from .protocol_writing import ToolCall, format_call, unescape

__all__ = ["FINISH_END", "FINISH_LENGTH", "FINISH_STOP", "STOP_SEQUENCES", "ParsedReply", "cast_parameter",
           "parse_reply", "restore_stop"]

# Sent to the LM so it stops after its call (the close tag is re-appended when the LM strips it).
STOP_SEQUENCES = ("</call_tool>", "</call>", "<tool_output>")
# How an LM stopped, as restore_stop takes it: on a stop sequence ("stop", or the stop string itself),
# at the token limit ("length"), at its own end of text ("end"), or not known (None).
FINISH_STOP, FINISH_LENGTH, FINISH_END = "stop", "length", "end"

# The protocol's tag names: markup in a call that names one (or a cut-off prefix of one) is removed from it.
_NAMES = ("call_tool", "call", "answer", "think", "tool_output", "cite", "snippet")
# A close cut short by a stop sequence or the token limit (``</call_to``, ``</ans``): a prefix of the
# name, not followed by more of a name or by ``>`` (``</c>`` and ``</a>`` are someone else's tags).
_CALL_CUT = re.compile(r"</(?:call_too|call_to|call_t|call_|cal|ca|c)(?![\w-]|\s*>)", re.IGNORECASE)
_ANSWER_CUT = re.compile(r"</(?:answe|answ|ans|an|a)(?![\w-]|\s*>)", re.IGNORECASE)
# Any tag-like markup, of the protocol or not: :func:`_strip_markup` decides what goes.
_MARKUP = re.compile(r"<(/?)((?:[^\W\d]|_)[\w-]*)([^<>\n]*>)?")


@dataclass(frozen=True)
class ParsedReply:
    call: ToolCall | None  # the one call to execute, or None
    answer: str | None  # inner text of <answer> with markup kept (to the end when </answer> is missing)
    hallucinated_outputs: int  # <tool_output> blocks the model wrote itself (removed)
    clean_text: str  # what goes into the trajectory
    ignored_calls: int = 0  # further calls in the same reply, not executed
    unterminated: bool = False  # the call has no close tag and runs to the end of the reply (cut off)
    markup_removed: int = 0  # markup removed from the call's query and parameters


def _dropped(tag: Tag) -> bool:
    """Call tags and stray output closes around the executed call or the answer (never in prose)."""
    return (not tag.prose and tag.complete
            and (is_tag(tag, "call_tool") or (tag.close and tag.name in ("call_tool", "call", "tool_output"))))


def _render(text: str, lo: int, hi: int, tags: list[Tag]) -> str:
    """``text[lo:hi]`` (``tags``: the tags in it) without the dropped tags, stripped. A tag mentioned
    outside thought (in code or a sentence) is written as text (``&lt;answer>``), so the trajectory
    reads the same way again and holds no protocol tag the model did not use."""
    parts, p = [], lo
    for tag in tags:
        if _dropped(tag):
            parts.append(text[p : tag.start])
            p = tag.end
        elif tag.prose and not tag.thought:
            parts.append(text[p : tag.start] + "&lt;")
            p = tag.start + 1
    parts.append(text[p:hi])
    return "".join(parts).strip()


def _is_protocol(name: str, close: str) -> bool:
    name = name.casefold()
    return any(name.startswith(full) or (full.startswith(name) and (close or len(name) >= 3)) for full in _NAMES)


def _strip_markup(value: str, *, any_tag: bool = False) -> tuple[str, int]:
    """``value`` without protocol markup (``</call_to``, ``<snippet id="1">``, ``<ANSWER>``) and, with
    ``any_tag``, without any complete tag (``</a>``, ``<b>``); and how many pieces were removed. Each
    piece becomes a space, so the words around it stay apart and no new tag forms from what is left."""
    removed = 0

    def cut(m: re.Match) -> str:
        nonlocal removed
        if not ((any_tag and m.group(3)) or _is_protocol(m.group(2), m.group(1))):
            return m.group()
        removed += 1
        return " "

    return (_MARKUP.sub(cut, value), removed) if "<" in value else (value, 0)


def cast_parameter(value: Any, kind: type) -> Any:
    """A call attribute (a string) as the schema's type; ValueError naming the type when it is not one."""
    if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
        return value
    text = str(value).strip()
    if kind is bool:
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        raise InvalidValue("a boolean (true or false)")
    if kind is int:
        try:
            number = float(text)
        except ValueError:
            raise InvalidValue("an integer") from None
        if not number.is_integer():
            raise InvalidValue("an integer")
        return int(number)
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise InvalidValue("a number") from None
    return text


def _cast(value: str, kind: type) -> Any:
    try:
        return cast_parameter(value, kind)
    except (ValueError, OverflowError):
        return value  # the parser never raises; the tool call reports the bad value to the model


def _raw_name(tag: Tag) -> str:
    """The tool a call tag names, as written (markup removed, spaces folded); "" when it is not a call
    that can run."""
    if not is_tag(tag, "call_tool"):
        return ""
    return " ".join(_strip_markup(attribute(tag.attrs, "name"))[0].split())


def _mentions(tags: list[Tag]) -> None:
    """Mark as prose the ``<tool_output>`` and ``<answer>`` tags that are mentioned, not used.

    Before the first call: a ``<tool_output>`` followed by a call or an answer (or an ``</answer>``)
    with no ``</tool_output>`` and no snippet in between ("the <tool_output> above shows"). Anywhere:
    an ``<answer>`` followed by a call with no ``</answer>`` and no cite in between ("Before I write
    the <answer>, let me search."). One backward pass, so time stays linear."""
    decider: str | None = None  # what comes next after a tag, scanning right to left
    next_for_answer: list[str | None] = [None] * len(tags)
    for i in range(len(tags) - 1, -1, -1):
        next_for_answer[i] = decider
        tag = tags[i]
        if tag.prose:
            continue
        if _raw_name(tag):
            decider = "call"
        elif tag.name in ("answer", "cite") and (tag.close or tag.name == "cite"):
            decider = "answer"
    for i, tag in enumerate(tags):
        if is_tag(tag, "answer") and next_for_answer[i] == "call":
            tag.prose = True
    pending: list[Tag] = []
    for tag in tags:
        if tag.prose:
            continue
        if is_tag(tag, "tool_output"):
            pending.append(tag)
        elif pending and (tag.name == "snippet" or (tag.close and tag.name == "tool_output")):
            pending = []  # a real (fake) output
        elif pending and (_raw_name(tag) or is_tag(tag, "answer") or is_tag(tag, "answer", close=True)):
            for mention in pending:
                mention.prose = True
            pending = []
        if _raw_name(tag):
            break


def _body_end(text: str, tags: list[Tag], i: int) -> tuple[int, int, int | None, bool]:
    """Where the text of the call at ``tags[i]`` stops: (index of the tag that ends it or len(tags),
    end of its words, end of the call, closed)."""
    call = tags[i]
    k = i + 1
    while k < len(tags) and not ends_call(tags[k]):
        k += 1
    stop = tags[k].start if k < len(tags) else len(text)
    cut = _CALL_CUT.search(text, call.end, stop)
    if cut is not None:
        return k, cut.start(), cut.end(), True
    if k < len(tags) and tags[k].close:
        return k, stop, tags[k].end, True
    return k, stop, None, False


def _read_call(text: str, tags: list[Tag], i: int, schemas: Mapping[str, Mapping[str, type]] | None):
    """(call, end of its text, unterminated, markup removed, index of the tag that ends its words)."""
    tag = tags[i]
    k, stop, end, closed = _body_end(text, tags, i)
    if closed:
        words = text[tag.end : stop]
    else:  # unclosed: up to the next tag or the end of the line
        body = text[tag.end : stop].strip()
        words = body.split("\n", 1)[0] if body else ""
        line_end = text.find("\n", tag.end, stop)
        end = stop if line_end == -1 else line_end
    words, removed = _strip_markup(words, any_tag=True)
    name = _raw_name(tag)
    schema = (schemas or {}).get(unescape(name), {})
    params = {}
    for key, value in tag.attrs.items():
        if key.casefold() == "name":
            continue
        value, cut = _strip_markup(value)
        if cut:
            value, removed = " ".join(value.split()), removed + cut
        value = unescape(value)
        params[key] = _cast(value, schema[key]) if key in schema else value
    call = ToolCall(unescape(name), params, unescape(" ".join(words.split())))
    return call, end, not closed and k == len(tags), removed, k


def _first_call(text: str, tags: list[Tag], before: int, schemas: Mapping[str, Mapping[str, type]] | None):
    """(call, index of its tag, end of its text, unterminated, markup removed) of the first call that
    names a tool among ``tags[:before]``, or None. A call tag written twice runs once: a call whose
    words are empty because another call opens right after it gives way to that call."""
    for i in range(before):
        if not _raw_name(tags[i]):
            continue
        call, end, unterminated, removed, k = _read_call(text, tags, i, schemas)
        if not call.query and k < before and _raw_name(tags[k]):
            continue
        return call, i, end, unterminated, removed
    return None


def restore_stop(text: str, finish: str | None = None) -> str:
    """Re-append the close tag an LM API strips when it halts on the ``</call_tool>`` stop sequence.

    ``finish`` is how the LM stopped. ``"stop"`` (or the stop string itself): on a stop sequence, so a
    named call still open at the very end (no close and no new element after it, outside thought) is
    completed whatever its length: ``metformin\\nAND aging`` stays one query. ``"length"``: the token
    limit cut the reply, and nothing is completed (a cut call must not run as if whole;
    ``parse_reply`` marks it ``unterminated``). ``"end"`` or not known (None): only a one-line call is
    completed, since a call that runs on over several lines may never have been closed by the model
    (the parser takes its first line). Anything else is returned as it is.
    """
    text = text if isinstance(text, str) else ""
    if finish == FINISH_LENGTH:
        return text
    with quiet_gc(text):
        tags = find_tags(text)
        last = len(tags) - 1
        while last >= 0 and not tags[last].prose and not ends_call(tags[last]):
            last -= 1  # markup inside the call (a snippet, a cite, a stray close)
        if last < 0 or not _raw_name(tags[last]) or _CALL_CUT.search(text, tags[last].end):
            return text
    stopped = finish == FINISH_STOP or finish in STOP_SEQUENCES
    if not stopped and "\n" in text[tags[last].end :].strip():
        return text
    return text.rstrip() + "</call_tool>"


def parse_reply(text: str, schemas: Mapping[str, Mapping[str, type]] | None = None) -> ParsedReply:
    """Read one model reply: the first tool call (if it comes before any answer), or the answer.

    ``schemas`` maps a tool name to {parameter: type} for casting attributes (``limit="5"`` → 5).
    Only tags outside closed ``<think>`` blocks and outside code count; a reply with neither a call nor
    an answer outside code is read again with its code as protocol. An unclosed ``<think>`` runs to
    the next tag.
    """
    text = text if isinstance(text, str) else ""
    with quiet_gc(text):
        tags = find_tags(text)
        parsed = _parse_reply(text, tags, schemas)
        if parsed.call is None and parsed.answer is None and any(tag.code for tag in tags):
            fenced = _parse_reply(text, mark_prose(text, tags, code=False, again=True), schemas)
            if fenced.call is not None or fenced.answer is not None:
                return fenced
        return parsed


def _parse_reply(text: str, tags: list[Tag], schemas: Mapping[str, Mapping[str, type]] | None) -> ParsedReply:
    _mentions(tags)
    hallucinated, cut = 0, None
    for i, tag in enumerate(tags):
        if not tag.prose and not tag.close and tag.name == "tool_output":
            hallucinated += 1
            cut = i if cut is None else cut
    if cut is not None:  # the model invented a tool's answer: drop it and all that follows
        text, tags = text[: tags[cut].start], tags[:cut]

    answer_at = next((i for i, t in enumerate(tags) if is_tag(t, "answer")), len(tags))
    found = _first_call(text, tags, answer_at, schemas)
    if found:
        call, at, end, unterminated, removed = found
        later = sum(1 for t in tags[at + 1 :] if t.start >= end and _raw_name(t))
        prefix = _render(text, 0, tags[at].start, tags[:at])
        clean = (prefix + "\n" if prefix else "") + format_call(call)
        return ParsedReply(call, None, hallucinated, clean, later, unterminated, removed)

    if answer_at == len(tags):
        return ParsedReply(None, None, hallucinated, _render(text, 0, len(text), tags), 0)
    opened = tags[answer_at]
    close = next((i for i in range(answer_at + 1, len(tags)) if is_tag(tags[i], "answer", close=True)), len(tags))
    stop = tags[close].start if close < len(tags) else len(text)
    cut_close = _ANSWER_CUT.search(text, opened.end, stop)
    if cut_close is not None:
        stop = cut_close.start()
        close = next((i for i in range(answer_at + 1, close) if tags[i].start >= stop), close)
    answer = _render(text, opened.end, stop, tags[answer_at + 1 : close])
    prefix = _render(text, 0, opened.start, tags[:answer_at])
    clean = (prefix + "\n" if prefix else "") + f"<answer>{answer}</answer>"
    ignored = sum(1 for t in tags if _raw_name(t))
    return ParsedReply(None, answer, hallucinated, clean, ignored)

