"""The tag protocol a search agent speaks, and a parser that survives how real models break it.

The model writes ``<think>…</think>``, then exactly one ``<call_tool name="pubmed_search" limit="5">
keywords</call_tool>`` and stops; the runtime answers with ``<tool_output>…</tool_output>``; the model
ends with ``<answer>…</answer>`` whose claims carry ``<cite id="ID">…</cite>``.

Known failure modes this module absorbs (each has a test): a call left unclosed (the model hit a
stop sequence or EOS), several calls in one reply (only the first runs), a ``<tool_output>`` the model
wrote itself (cut away with everything after it, and counted: anything after a fake output rests on
invented data), ``</call>`` as a close, double-, single- or un-quoted attributes, a ``>`` inside a
quoted value, ``ids=`` and multi-id cites, nested markup inside a cite, hyphenated ids, a missing
``</answer>``, tags mentioned in ``<think>`` prose (a closed think block is prose: nothing in it is
protocol), and markup inside a call (``</call_to``, ``<snippet``, an uppercase tag: removed from the
query and parameters, and counted). Tag names are read case-insensitively.

Every function reads its text in one left-to-right pass (time linear in the input: no pattern
here backtracks over a long token). Pure functions, no LM; they never raise on any input text.
"""

from __future__ import annotations

import gc
import html
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["STOP_SEQUENCES", "Citation", "ParsedReply", "ToolCall", "escape_tool_text", "extract_citations",
           "cast_parameter", "format_call", "format_tool_output", "parse_reply", "restore_stop"]

# Sent to the LM so it stops after its call (the close tag is re-appended when the LM strips it).
STOP_SEQUENCES = ("</call_tool>", "</call>", "<tool_output>")
# How an LM stopped, as restore_stop takes it: on a stop sequence ("stop", or the stop string itself),
# at the token limit ("length"), at its own end of text ("end"), or not known (None).
FINISH_STOP, FINISH_LENGTH, FINISH_END = "stop", "length", "end"

_NAMES = ("call_tool", "call", "answer", "think", "tool_output", "cite", "snippet")
_NAME_SET = frozenset(_NAMES)
# ``<`` or ``</`` and a name; every pattern below is a single greedy run or a literal, so a match
# attempt never backtracks over more than the run it just read.
_TAG_START = re.compile(r'<(/?)((?:[^\W\d]|_)[\w-]*)((?:[ \t]+[A-Za-z_][\w-]*="[^"<>\n]*")*\s*>)?')
_ATTR_STEP = re.compile(r"[^A-Za-z_<>]*")  # what lies between attributes (spaces, stray quotes, slashes)
_ATTR_NAME = re.compile(r"[A-Za-z_][\w-]*")
_SPACE = re.compile(r"\s*")
_FAST_PAIR = re.compile(r'([A-Za-z_][\w-]*)="([^"]*)"')
_UNQUOTED = re.compile(r"""[^\s"'<>]*""")
_UNCLOSED = re.compile(r"[^\s<>]*")
_MARKUP = re.compile(r"<(/?)((?:[^\W\d]|_)[\w-]*)(?:[^<>\n]*>)?")
_TAG = re.compile(r"<[^<>]*>")
_ID_SPLIT = re.compile(r"[\s,;]+")


@contextmanager
def _quiet_gc(text: str) -> Iterator[None]:
    """Pause the cyclic garbage collector while a large text is read: its tags are many small acyclic
    objects (freed by reference counting anyway), and collections triggered by their number would
    cost a third of the time. Restored afterwards; small texts are read as they are."""
    paused = len(text) > 65_536 and gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


@dataclass(frozen=True)
class ToolCall:
    name: str
    params: dict[str, Any]  # the attributes other than name, cast by the tool's schema when one is given
    query: str


@dataclass(frozen=True)
class ParsedReply:
    call: ToolCall | None  # the one call to execute, or None
    answer: str | None  # inner text of <answer> with markup kept (to the end when </answer> is missing)
    hallucinated_outputs: int  # <tool_output> blocks the model wrote itself (removed)
    clean_text: str  # what goes into the trajectory
    ignored_calls: int = 0  # further calls in the same reply, not executed
    unterminated: bool = False  # the call has no close tag and runs to the end of the reply (cut off)
    markup_removed: int = 0  # protocol markup removed from the call's query and parameters


@dataclass(frozen=True)
class Citation:
    ids: list[str] = field(default_factory=list)
    text: str = ""


@dataclass(slots=True)
class _Tag:
    name: str  # a protocol tag name, lower case (for a fragment: what was written)
    close: bool  # ``</name``
    start: int
    end: int  # after ``>`` when complete, else after the name
    complete: bool  # read up to its ``>``
    fragment: bool  # a cut name: ``</call_to``, or ``<tool_out`` at the end of the text
    attrs: dict[str, str]
    prose: bool = False  # inside a closed <think> block: a mention, not protocol


def _is_fragment(name: str, close: bool, at_end: bool) -> bool:
    return (close or at_end) and any(full.startswith(name) for full in _NAMES)


def _read_value(text: str, p: int, limit: int) -> tuple[str, int]:
    """An attribute value at ``p``: quoted (any character but its quote, on one line, no protocol tag:
    ``year=">2020"``), or a bare run. A quote that never closes reads like a bare value."""
    if p < limit and text[p] in "\"'":
        close = text.find(text[p], p + 1, limit)
        if close != -1 and text.find("\n", p + 1, close) == -1:
            return text[p + 1 : close], close + 1
        run = _UNCLOSED.match(text, p + 1, limit)
        return run.group(), run.end()
    run = _UNQUOTED.match(text, p, limit)
    return run.group(), run.end()


def _read_attrs(text: str, p: int, limit: int) -> tuple[dict[str, str], int | None]:
    """The attributes of a tag whose name ends at ``p``, and the index after its ``>`` (None: the tag
    never closes before ``limit``, the next protocol tag, or a ``<`` outside quotes)."""
    attrs: dict[str, str] = {}
    while True:
        p = _ATTR_STEP.match(text, p, limit).end()
        if p >= limit or text[p] == "<":
            return attrs, None
        if text[p] == ">":
            return attrs, p + 1
        key = _ATTR_NAME.match(text, p, limit)
        p = _SPACE.match(text, key.end(), limit).end()
        if p < limit and text[p] == "=":
            value, p = _read_value(text, _SPACE.match(text, p + 1, limit).end(), limit)
            attrs[key.group()] = value
        else:
            attrs.setdefault(key.group(), "")


def _tags(text: str) -> list[_Tag]:
    """Every protocol tag in ``text``, in order, with closed think blocks marked as prose."""
    n = len(text)
    starts = []
    names, fragment = _NAME_SET, _is_fragment
    for m in _TAG_START.finditer(text):
        slash, name, bare = m.groups()
        name = name.casefold()
        if name in names:
            starts.append((m.start(), m.end(2), name, slash == "/", False, bare, m.end()))
        elif fragment(name, slash == "/", m.end(2) == n):
            starts.append((m.start(), m.end(2), name, slash == "/", True, None, m.end()))
    tags = []
    last = len(starts) - 1
    for i, (start, name_end, name, close, cut, simple, end) in enumerate(starts):
        if simple is not None:  # the common shape: <name>, </name>, <name a="v" b="w">
            attrs = dict(_FAST_PAIR.findall(simple)) if "=" in simple else {}
            tags.append(_Tag(name, close, start, end, True, False, attrs))
            continue
        limit = starts[i + 1][0] if i < last else n
        if cut or text.find(">", name_end, limit) == -1:  # a fragment, or a tag that never closes
            tags.append(_Tag(name, close, start, name_end, False, cut, {}))
            continue
        attrs, stop = _read_attrs(text, name_end, limit)
        tags.append(_Tag(name, close, start, name_end if stop is None else stop, stop is not None, False, attrs))
    if "think" not in text.casefold():  # no think block to mark
        return tags
    # a <think> with a </think> after it is prose up to that close; one without runs to the next tag
    next_close: list[int | None] = [None] * len(tags)
    following = None
    for i in range(len(tags) - 1, -1, -1):
        next_close[i] = following
        if tags[i].name == "think" and tags[i].close:
            following = i
    i = 0
    while i < len(tags):
        tag = tags[i]
        if tag.name == "think" and not tag.close and tag.complete and next_close[i] is not None:
            for k in range(i + 1, next_close[i]):
                tags[k].prose = True
            i = next_close[i]
        i += 1
    return tags


def _is(tag: _Tag, name: str, *, close: bool = False, complete: bool = True) -> bool:
    return (not tag.prose and tag.name == name and tag.close == close and not tag.fragment
            and (tag.complete or not complete))


def _closes_call(tag: _Tag) -> bool:
    return tag.close and (tag.name in ("call_tool", "call") or (tag.fragment and "call_tool".startswith(tag.name)))


def _dropped(tag: _Tag) -> bool:
    """Call tags and stray output closes around the executed call or the answer (never in prose)."""
    return (not tag.prose and tag.complete
            and (_is(tag, "call_tool") or (tag.close and tag.name in ("call_tool", "call", "tool_output"))))


def _render(text: str, lo: int, hi: int, tags: list[_Tag]) -> str:
    """``text[lo:hi]`` (``tags``: the tags in it) without the dropped tags, stripped."""
    parts, p = [], lo
    for tag in tags:
        if _dropped(tag):
            parts.append(text[p : tag.start])
            p = tag.end
    parts.append(text[p:hi])
    return "".join(parts).strip()


def _is_markup(close: str, name: str) -> bool:
    name = name.casefold()
    return any(name.startswith(full) or (full.startswith(name) and (close or len(name) >= 3)) for full in _NAMES)


def _strip_markup(value: str) -> tuple[str, int]:
    """``value`` without protocol markup (``</call_to``, ``<snippet id="1">``, ``<ANSWER>``), and how much
    was removed. Each piece becomes a space, so no new tag can form from what is left."""
    removed = 0

    def cut(m: re.Match) -> str:
        nonlocal removed
        if not _is_markup(m.group(1), m.group(2)):
            return m.group()
        removed += 1
        return " "

    return _MARKUP.sub(cut, value), removed




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
        raise ValueError("a boolean (true or false)")
    if kind is int:
        try:
            number = float(text)
        except ValueError:
            raise ValueError("an integer") from None
        if not number.is_integer():
            raise ValueError("an integer")
        return int(number)
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError("a number") from None
    return text


def _cast(value: str, kind: type) -> Any:
    try:
        return cast_parameter(value, kind)
    except (ValueError, OverflowError):
        return value  # the parser never raises; the tool call reports the bad value to the model


def _named_call(tag: _Tag) -> str:
    """The tool a call tag names (markup removed), or "" when it is not a call that can run."""
    if not _is(tag, "call_tool"):
        return ""
    return " ".join(_strip_markup(_attr(tag.attrs, "name"))[0].split())


def _attr(attrs: dict[str, str], key: str) -> str:
    """An attribute by its name in any case (``NAME=`` from a model that shouts)."""
    if key in attrs:
        return attrs[key]
    return next((v for k, v in attrs.items() if k.casefold() == key), "")


def _first_call(text: str, tags: list[_Tag], before: int, schemas: Mapping[str, Mapping[str, type]] | None):
    """(call, index of its tag, end of its text, unterminated, markup removed) of the first call that
    names a tool among ``tags[:before]``, or None."""
    for i in range(before):
        tag = tags[i]
        name = _named_call(tag)
        if not name:
            continue
        follow = tags[i + 1] if i + 1 < len(tags) else None  # the next tag of any kind ends the body
        if follow is not None and _closes_call(follow):
            query, end = text[tag.end : follow.start], follow.end
        else:  # unclosed: up to the next tag or the end of the line
            stop = follow.start if follow is not None else len(text)
            body = text[tag.end : stop].strip()
            query = body.split("\n", 1)[0] if body else ""
            line_end = text.find("\n", tag.end, stop)
            end = stop if line_end == -1 else line_end
        query, removed = _strip_markup(query)
        schema = (schemas or {}).get(name, {})
        params = {}
        for key, value in tag.attrs.items():
            if key.casefold() == "name":
                continue
            value, cut = _strip_markup(value)
            if cut:
                value, removed = " ".join(value.split()), removed + cut
            params[key] = _cast(value, schema[key]) if key in schema else value
        return ToolCall(name, params, " ".join(query.split())), i, end, follow is None, removed
    return None


def restore_stop(text: str, finish: str | None = None) -> str:
    """Re-append the close tag an LM API strips when it halts on the ``</call_tool>`` stop sequence.

    ``finish`` is how the LM stopped. ``"stop"`` (or the stop string itself): on a stop sequence, so a
    named call still open at the very end (no tag after it, outside thought) is completed whatever its
    length: ``metformin\\nAND aging`` stays one query. ``"length"``: the token limit cut the reply, and
    nothing is completed (a cut call must not run as if whole; ``parse_reply`` marks it
    ``unterminated``). ``"end"`` or not known (None): only a one-line call is completed, since a call
    that runs on over several lines may never have been closed by the model (the parser takes its
    first line). Anything else is returned as it is.
    """
    text = text if isinstance(text, str) else ""
    if finish == FINISH_LENGTH:
        return text
    with _quiet_gc(text):
        tags = _tags(text)
    if not tags or not _named_call(tags[-1]):
        return text
    stopped = finish == FINISH_STOP or finish in STOP_SEQUENCES
    if not stopped and "\n" in text[tags[-1].end :].strip():
        return text
    return text.rstrip() + "</call_tool>"


def format_call(call: ToolCall) -> str:
    attrs = "".join(f' {k}="{html.escape(str(v), quote=True)}"' for k, v in call.params.items())
    return f'<call_tool name="{call.name}"{attrs}>{call.query}</call_tool>'


def parse_reply(text: str, schemas: Mapping[str, Mapping[str, type]] | None = None) -> ParsedReply:
    """Read one model reply: the first tool call (if it comes before any answer), or the answer.

    ``schemas`` maps a tool name to {parameter: type} for casting attributes (``limit="5"`` → 5).
    Only tags outside closed ``<think>`` blocks count; an unclosed ``<think>`` runs to the next tag.
    """
    text = text if isinstance(text, str) else ""
    with _quiet_gc(text):
        return _parse_reply(text, schemas)


def _parse_reply(text: str, schemas: Mapping[str, Mapping[str, type]] | None) -> ParsedReply:
    tags = _tags(text)
    hallucinated, cut = 0, None
    for i, tag in enumerate(tags):
        if not tag.prose and tag.name == "tool_output" and not tag.close and not tag.fragment:
            hallucinated += 1
            cut = i if cut is None else cut
    if cut is not None:  # the model invented a tool's answer: drop it and all that follows
        text, tags = text[: tags[cut].start], tags[:cut]

    answer_at = next((i for i, t in enumerate(tags) if _is(t, "answer")), len(tags))
    found = _first_call(text, tags, answer_at, schemas)
    if found:
        call, at, end, unterminated, removed = found
        later = sum(1 for t in tags[at + 1 :] if t.start >= end and _named_call(t))
        prefix = _render(text, 0, tags[at].start, tags[:at])
        clean = (prefix + "\n" if prefix else "") + format_call(call)
        return ParsedReply(call, None, hallucinated, clean, later, unterminated, removed)

    if answer_at == len(tags):
        return ParsedReply(None, None, hallucinated, _render(text, 0, len(text), tags), 0)
    opened = tags[answer_at]
    close = next((i for i in range(answer_at + 1, len(tags)) if not tags[i].prose and tags[i].close and (
        tags[i].name == "answer" or (tags[i].fragment and "answer".startswith(tags[i].name)))), len(tags))
    answer = _render(text, opened.end, tags[close].start if close < len(tags) else len(text),
                     tags[answer_at + 1 : close])
    prefix = _render(text, 0, opened.start, tags[:answer_at])
    clean = (prefix + "\n" if prefix else "") + f"<answer>{answer}</answer>"
    ignored = sum(1 for t in tags if _named_call(t))
    return ParsedReply(None, answer, hallucinated, clean, ignored)


def extract_citations(answer_text: str) -> list[Citation]:
    """Every ``<cite id="…">`` / ``<cite ids="a, b">`` in an answer, with its text (inner markup removed).

    A cite runs to its ``</cite>``, the next cite, or the end; cites inside a closed think are prose."""
    text = answer_text if isinstance(answer_text, str) else ""
    with _quiet_gc(text):
        return _citations(text)


def _citations(text: str) -> list[Citation]:
    tags = _tags(text)
    citations = []
    ends = [len(text)] * len(tags)  # where a cite opened at tag i stops: the next cite tag of any kind
    for i in range(len(tags) - 2, -1, -1):
        after = tags[i + 1]
        ends[i] = after.start if not after.prose and after.name == "cite" and not after.fragment else ends[i + 1]
    for i, tag in enumerate(tags):
        if not _is(tag, "cite"):
            continue
        stop = ends[i]
        raw = _attr(tag.attrs, "id") or _attr(tag.attrs, "ids")
        ids = [i for i in _ID_SPLIT.split(raw.strip()) if i]
        inner = text[tag.end : stop]
        inner = _TAG.sub("", inner) if "<" in inner else inner
        inner = html.unescape(inner) if "&" in inner else inner
        citations.append(Citation(list(dict.fromkeys(ids)), " ".join(inner.split())))
    return citations


def escape_tool_text(text: str) -> str:
    """Tool output is data, never instructions: escape markup so it cannot close the output block,
    open an answer or inject a call."""
    return html.escape(text or "", quote=False)


def format_tool_output(snippets: list[dict[str, Any]] | None = None, error: str | None = None,
                       total: int | None = None) -> str:
    """The runtime's ``<tool_output>``: one ``<snippet id>`` per result (fields escaped), or an error.

    A snippet is a dict with ``id`` and ``text`` and, when known, ``title``, ``authors``, ``year`` and
    ``journal``; ``total`` (how many results the tool found) adds a "Found N results" line.
    """
    if error is not None:
        return f"<tool_output>Error: {escape_tool_text(error)}</tool_output>"
    snippets = snippets or []
    blocks = [] if total is None else [f"Found {total} results. Showing top {len(snippets)}:"]
    for s in snippets:
        meta = " | ".join(f"{k.title()}: {escape_tool_text(str(s[k]))}" for k in ("year", "journal") if s.get(k))
        lines = [f"Title: {escape_tool_text(str(s['title']))}" if s.get("title") else ""]
        authors = escape_tool_text(str(s.get("authors") or ""))
        lines.append(f"Authors: {authors}" + (f" | {meta}" if meta else "") if authors else meta)
        lines.append(f"Abstract: {escape_tool_text(str(s.get('text') or ''))}")
        snippet_id = escape_tool_text(str(s.get("id", ""))).replace('"', "&quot;")
        blocks.append(f'<snippet id="{snippet_id}">' + "\n".join(x for x in lines if x) + "</snippet>")
    return "<tool_output>\n" + "\n".join(blocks) + "\n</tool_output>"
