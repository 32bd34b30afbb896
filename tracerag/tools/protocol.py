"""The tag protocol a search agent speaks, and a parser that survives how real models break it.

The model writes ``<think>…</think>``, then exactly one ``<call_tool name="pubmed_search" limit="5">
keywords</call_tool>`` and stops; the runtime answers with ``<tool_output>…</tool_output>``; the model
ends with ``<answer>…</answer>`` whose claims carry ``<cite id="ID">…</cite>``.

A call is text in an HTML-like notation, and reading is the exact inverse of writing:
``format_call`` escapes the tool name, every parameter and the query (``&``, ``<``, ``>``, quotes,
backticks, and the whitespace the reader would fold), and ``parse_reply`` decodes character
references (``&gt;``, ``&quot;``, ``&#xa;``) after removing the markup a model wrote. So
``parse_reply(format_call(call)).call == call`` for any strings, and the call the model sees in its
trajectory is the call that ran. Escaped text is text: ``&lt;b&gt;`` in a query is the three
characters ``<b>``, as it is in a tool output.

Known failure modes this module absorbs (each has a test): a call left unclosed (the model hit a
stop sequence or EOS), several calls in one reply (only the first runs), a call tag written twice, a
``<tool_output>`` the model wrote itself (cut away with everything after it, and counted: anything
after a fake output rests on invented data), ``</call>`` as a close, double-, single- or un-quoted
attributes, a ``>`` or a line break inside a quoted value, ``ids=`` and multi-id cites, nested markup
inside a cite, hyphenated ids, a missing ``</answer>``, and markup inside a call (``</call_to``,
``<snippet id="1">``, ``</a>``, an uppercase tag: removed from the query and parameters, the words
around it kept, and counted). Tag names are read case-insensitively.

Tags that are mentioned rather than used are prose: anything in a closed ``<think>`` block, in inline
code (```<answer>```) or in a fenced code block; an ``<answer>`` with no ``</answer>`` and no cite
before a call ("Before I write the <answer>, let me search."); a ``<tool_output>`` with no close and
no snippet before a call or an answer. A reply whose only call or answer sits in code is read with
its code as protocol (a model that fences its calls).

Every function reads its text in a few left-to-right passes (time linear in the input: no pattern
here backtracks over more than the run it just read). Pure functions, no LM; they never raise on any
input text.
"""

from __future__ import annotations

import gc
import html
import html.entities
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["STOP_SEQUENCES", "Citation", "ParsedReply", "ToolCall", "escape_tool_text", "extract_citations",
           "cast_parameter", "format_call", "format_tool_output", "keep_cited", "parse_reply", "restore_stop",
           "unescape"]

# Sent to the LM so it stops after its call (the close tag is re-appended when the LM strips it).
STOP_SEQUENCES = ("</call_tool>", "</call>", "<tool_output>")
# How an LM stopped, as restore_stop takes it: on a stop sequence ("stop", or the stop string itself),
# at the token limit ("length"), at its own end of text ("end"), or not known (None).
FINISH_STOP, FINISH_LENGTH, FINISH_END = "stop", "length", "end"

_NAMES = ("call_tool", "call", "answer", "think", "tool_output", "cite", "snippet")
# Opens that end a call's text: a new call, an answer, a thought or an output. Other tags in a call
# (snippets, cites, closes of other names, any HTML) are markup inside it, removed from its words.
_STRUCTURAL = frozenset(("call_tool", "call", "answer", "think", "tool_output"))
# Tags that sit inside text (a cite's claim, a snippet's abstract): backticks in quoted text pair up
# across them, so code never hides one (two cited sentences holding a backtick each stay two cites).
_INLINE = frozenset(("cite", "snippet"))
# ``<`` or ``</`` and a protocol name; every pattern below is a single greedy run, a bounded run or a
# literal, so a match attempt never backtracks over more than the run it just read.
_TAG_START = re.compile(r'<(/?)(call_tool|call|answer|think|tool_output|cite|snippet)(?![\w-])'
                        r'((?:[ \t]+[A-Za-z_][\w-]*="[^"<>\n]*")*\s*>)?', re.IGNORECASE)
# A close cut short by a stop sequence or the token limit (``</call_to``, ``</ans``): a prefix of the
# name, not followed by more of a name or by ``>`` (``</c>`` and ``</a>`` are someone else's tags).
_CALL_CUT = re.compile(r"</(?:call_too|call_to|call_t|call_|cal|ca|c)(?![\w-]|\s*>)", re.IGNORECASE)
_ANSWER_CUT = re.compile(r"</(?:answe|answ|ans|an|a)(?![\w-]|\s*>)", re.IGNORECASE)
_ATTR_STEP = re.compile(r"[^A-Za-z_<>]*")  # what lies between attributes (spaces, stray quotes, slashes)
_ATTR_NAME = re.compile(r"[A-Za-z_][\w-]*")
_SPACE = re.compile(r"\s*")
_FAST_PAIR = re.compile(r'([A-Za-z_][\w-]*)="([^"]*)"')
_UNQUOTED = re.compile(r"""[^\s"'<>]*""")
_UNCLOSED = re.compile(r"[^\s<>]*")
_MARKUP = re.compile(r"<(/?)((?:[^\W\d]|_)[\w-]*)([^<>\n]*>)?")
_TAG = re.compile(r"<[^<>]*>")
_ID_SPLIT = re.compile(r"[\s,;]+")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)$", re.MULTILINE)
_TICKS = re.compile(r"`+")
_REFERENCE = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_SPACES = re.compile(r"\s+")
_ATTR_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;",
                               "`": "&#x60;"})


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
    markup_removed: int = 0  # markup removed from the call's query and parameters


@dataclass(frozen=True)
class Citation:
    ids: list[str] = field(default_factory=list)
    text: str = ""


@dataclass(slots=True)
class _Tag:
    name: str  # a protocol tag name, lower case
    close: bool  # ``</name``
    start: int
    end: int  # after ``>`` when complete, else after the name
    complete: bool  # read up to its ``>``
    attrs: dict[str, str]
    prose: bool = False  # not protocol: inside a closed <think>, in code, or mentioned in a sentence
    code: bool = False  # inside inline code or a fenced code block
    thought: bool = False  # inside a closed <think> (kept as written in the trajectory)


# -- escaping: what format_call writes and the reader decodes ------------------------------------------

def _reference(m: re.Match) -> str:
    ref = m.group(1)
    if ref[0] != "#":
        return html.entities.html5.get(ref + ";", m.group())
    number = int(ref[2:], 16) if ref[1] in "xX" else int(ref[1:])
    return chr(number) if 0 < number <= 0x10FFFF and not 0xD800 <= number <= 0xDFFF else m.group()


def unescape(text: str) -> str:
    """``text`` with its character references decoded: named ones with their ``;`` (``&gt;``,
    ``&quot;``) and numeric ones (``&#62;``, ``&#x3e;``) as the character they number. Unlike
    ``html.unescape`` nothing else changes (``AT&T`` and ``&copy`` stay), so it undoes
    :func:`format_call` exactly."""
    return _REFERENCE.sub(_reference, text) if "&" in text else text


def _escape_attr(value: str) -> str:
    return value.translate(_ATTR_ESCAPES)


def _references(run: str) -> str:
    return "".join(f"&#x{ord(c):x};" for c in run)


def _escape_words(text: str) -> str:
    """Text the reader folds (a query, a tool name) escaped so that folding leaves it as it is: markup
    characters as references, and every whitespace run but a single inner space as references."""
    text = _escape_attr(text)
    n = len(text)

    def keep(m: re.Match) -> str:
        run = m.group()
        if m.start() == 0 or m.end() == n or run[0] != " ":
            return _references(run)
        return " " + _references(run[1:])

    return _SPACES.sub(keep, text)


_ATTR_KEY = re.compile(r"[A-Za-z_][\w-]*")


def format_call(call: ToolCall) -> str:
    """The call as the model writes it; ``parse_reply`` reads back exactly ``call`` (parameters as
    strings unless the tool's schema types them). ValueError for a parameter name no attribute can
    hold (``name`` is the tool's own)."""
    attrs = []
    for key, value in call.params.items():
        if not isinstance(key, str) or not _ATTR_KEY.fullmatch(key) or key.casefold() == "name":
            raise ValueError(f"tool call {call.name!r}: parameter name {key!r} cannot be written as an attribute")
        attrs.append(f' {key}="{_escape_attr(str(value))}"')
    return f'<call_tool name="{_escape_words(call.name)}"{"".join(attrs)}>{_escape_words(call.query)}</call_tool>'


# -- scanning ------------------------------------------------------------------------------------------

def _read_value(text: str, p: int, limit: int) -> tuple[str, int]:
    """An attribute value at ``p``: quoted (any character but its quote, line breaks included, no
    protocol tag: ``year=">2020"``), or a bare run. A quote that never closes reads like a bare value."""
    if p < limit and text[p] in "\"'":
        close = text.find(text[p], p + 1, limit)
        if close != -1:
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


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds code, in order: fenced blocks (a line of three or more backticks or
    tildes up to a closing fence; one never closed is not a block) and inline code (a run of
    backticks up to the next run of the same length on the same line)."""
    if "`" not in text and "~~~" not in text:
        return []
    blocks: list[tuple[int, int]] = []
    opened = None
    for fence in _FENCE.finditer(text):
        run, rest = fence.groups()
        if opened is None:
            if not (run[0] == "`" and "`" in rest):  # a backtick fence's info string holds no backtick
                opened = fence
        elif run[0] == opened.group(1)[0] and len(run) >= len(opened.group(1)) and not rest.strip():
            blocks.append((opened.start(), fence.end()))
            opened = None
    spans: list[tuple[int, int]] = []
    block_at, open_start, open_len, last = 0, -1, 0, 0
    for ticks in _TICKS.finditer(text):
        start = ticks.start()
        while block_at < len(blocks) and blocks[block_at][1] <= start:
            spans.append(blocks[block_at])
            block_at += 1
            open_start, last = -1, blocks[block_at - 1][1]
        if block_at < len(blocks) and blocks[block_at][0] <= start:
            continue  # inside a fenced block
        if open_start != -1 and text.find("\n", last, start) != -1:
            open_start = -1  # inline code ends with its line
        last = ticks.end()
        if open_start == -1:
            open_start, open_len = start, len(ticks.group())
        elif len(ticks.group()) == open_len:
            spans.append((open_start, ticks.end()))
            open_start = -1
    spans.extend(blocks[block_at:])
    return spans


def _tags(text: str, *, code: bool = True) -> list[_Tag]:
    """Every protocol tag in ``text``, in order, with tags in closed think blocks (and, when ``code``,
    structural tags in inline code or fenced blocks) marked as prose."""
    n = len(text)
    starts = [(m.start(), m.end(2), m.group(2).casefold(), m.group(1) == "/", m.group(3), m.end())
              for m in _TAG_START.finditer(text)]
    tags = []
    last = len(starts) - 1
    for i, (start, name_end, name, close, simple, end) in enumerate(starts):
        if simple is not None:  # the common shape: <name>, </name>, <name a="v" b="w">
            attrs = dict(_FAST_PAIR.findall(simple)) if "=" in simple else {}
            tags.append(_Tag(name, close, start, end, True, attrs))
            continue
        limit = starts[i + 1][0] if i < last else n
        if text.find(">", name_end, limit) == -1:  # a tag that never closes
            tags.append(_Tag(name, close, start, name_end, False, {}))
            continue
        attrs, stop = _read_attrs(text, name_end, limit)
        tags.append(_Tag(name, close, start, name_end if stop is None else stop, stop is not None, attrs))
    return _mark(text, tags, code=code)


def _mark(text: str, tags: list[_Tag], *, code: bool, again: bool = False) -> list[_Tag]:
    """Mark the tags that are prose (in place): in code when ``code``, then in closed think blocks;
    ``again``: clear an earlier reading's marks first."""
    for tag in tags if again else ():
        tag.prose = tag.code = tag.thought = False
    if code and tags:
        spans, at = _code_spans(text), 0
        for tag in tags if spans else ():
            while at < len(spans) and spans[at][1] <= tag.start:
                at += 1
            if at < len(spans) and spans[at][0] <= tag.start and tag.name not in _INLINE:
                tag.prose = tag.code = True
    if not any(tag.name == "think" for tag in tags):  # no think block to mark
        return tags
    # a <think> with a </think> after it is prose up to that close; one without runs to the next tag
    next_close: list[int | None] = [None] * len(tags)
    following = None
    for i in range(len(tags) - 1, -1, -1):
        next_close[i] = following
        if tags[i].name == "think" and tags[i].close and not tags[i].code:
            following = i
    i = 0
    while i < len(tags):
        tag = tags[i]
        if tag.name == "think" and not tag.close and tag.complete and not tag.code and next_close[i] is not None:
            for k in range(i + 1, next_close[i]):
                tags[k].prose = tags[k].thought = True
            i = next_close[i]
        i += 1
    return tags


def _is(tag: _Tag, name: str, *, close: bool = False) -> bool:
    return not tag.prose and tag.name == name and tag.close == close and tag.complete


def _ends_call(tag: _Tag) -> bool:
    """A tag that ends the text of a call before it: its close, or the open of a new element."""
    return not tag.prose and (tag.name in ("call_tool", "call") if tag.close else tag.name in _STRUCTURAL)


def _dropped(tag: _Tag) -> bool:
    """Call tags and stray output closes around the executed call or the answer (never in prose)."""
    return (not tag.prose and tag.complete
            and (_is(tag, "call_tool") or (tag.close and tag.name in ("call_tool", "call", "tool_output"))))


def _render(text: str, lo: int, hi: int, tags: list[_Tag]) -> str:
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


def _attr(attrs: dict[str, str], key: str) -> str:
    """An attribute by its name in any case (``NAME=`` from a model that shouts)."""
    if key in attrs:
        return attrs[key]
    return next((v for k, v in attrs.items() if k.casefold() == key), "")


def _raw_name(tag: _Tag) -> str:
    """The tool a call tag names, as written (markup removed, spaces folded); "" when it is not a call
    that can run."""
    if not _is(tag, "call_tool"):
        return ""
    return " ".join(_strip_markup(_attr(tag.attrs, "name"))[0].split())


def _mentions(tags: list[_Tag]) -> None:
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
        if _is(tag, "answer") and next_for_answer[i] == "call":
            tag.prose = True
    pending: list[_Tag] = []
    for tag in tags:
        if tag.prose:
            continue
        if _is(tag, "tool_output"):
            pending.append(tag)
        elif pending and (tag.name == "snippet" or (tag.close and tag.name == "tool_output")):
            pending = []  # a real (fake) output
        elif pending and (_raw_name(tag) or _is(tag, "answer") or _is(tag, "answer", close=True)):
            for mention in pending:
                mention.prose = True
            pending = []
        if _raw_name(tag):
            break


def _body_end(text: str, tags: list[_Tag], i: int) -> tuple[int, int, int | None, bool]:
    """Where the text of the call at ``tags[i]`` stops: (index of the tag that ends it or len(tags),
    end of its words, end of the call, closed)."""
    call = tags[i]
    k = i + 1
    while k < len(tags) and not _ends_call(tags[k]):
        k += 1
    stop = tags[k].start if k < len(tags) else len(text)
    cut = _CALL_CUT.search(text, call.end, stop)
    if cut is not None:
        return k, cut.start(), cut.end(), True
    if k < len(tags) and tags[k].close:
        return k, stop, tags[k].end, True
    return k, stop, None, False


def _read_call(text: str, tags: list[_Tag], i: int, schemas: Mapping[str, Mapping[str, type]] | None):
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


def _first_call(text: str, tags: list[_Tag], before: int, schemas: Mapping[str, Mapping[str, type]] | None):
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
    with _quiet_gc(text):
        tags = _tags(text)
        last = len(tags) - 1
        while last >= 0 and not tags[last].prose and not _ends_call(tags[last]):
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
    with _quiet_gc(text):
        tags = _tags(text)
        parsed = _parse_reply(text, tags, schemas)
        if parsed.call is None and parsed.answer is None and any(tag.code for tag in tags):
            fenced = _parse_reply(text, _mark(text, tags, code=False, again=True), schemas)
            if fenced.call is not None or fenced.answer is not None:
                return fenced
        return parsed


def _parse_reply(text: str, tags: list[_Tag], schemas: Mapping[str, Mapping[str, type]] | None) -> ParsedReply:
    _mentions(tags)
    hallucinated, cut = 0, None
    for i, tag in enumerate(tags):
        if not tag.prose and not tag.close and tag.name == "tool_output":
            hallucinated += 1
            cut = i if cut is None else cut
    if cut is not None:  # the model invented a tool's answer: drop it and all that follows
        text, tags = text[: tags[cut].start], tags[:cut]

    answer_at = next((i for i, t in enumerate(tags) if _is(t, "answer")), len(tags))
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
    close = next((i for i in range(answer_at + 1, len(tags)) if _is(tags[i], "answer", close=True)), len(tags))
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
        ends[i] = after.start if not after.prose and after.name == "cite" else ends[i + 1]
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


def keep_cited(answer_text: str, known: set[str]) -> tuple[str, list[str]]:
    """The answer with only ``known`` ids in its cite tags, and the ids dropped (first seen first): a cite left
    with none loses its tags and keeps its words. What the answer shows, what it is scored on and what the
    fine-tuning export holds then name only what a tool returned."""
    text = answer_text if isinstance(answer_text, str) else ""
    with _quiet_gc(text):
        tags = [t for t in _tags(text) if t.name == "cite" and not t.prose and t.complete]
    cuts: list[tuple[int, int, str]] = []  # (start, end, replacement)
    dropped: list[str] = []
    unwrapped = False  # the last cite opened lost its tag: its close goes too
    for tag in tags:
        if tag.close:
            if unwrapped:
                cuts.append((tag.start, tag.end, ""))
            unwrapped = False
            continue
        raw = _attr(tag.attrs, "id") or _attr(tag.attrs, "ids")
        ids = list(dict.fromkeys(i for i in _ID_SPLIT.split(raw.strip()) if i))
        kept = [i for i in ids if i in known]
        unwrapped = not kept
        if kept != ids:
            dropped.extend(i for i in ids if i not in known and i not in dropped)
            cuts.append((tag.start, tag.end, f'<cite id="{_escape_attr(",".join(kept))}">' if kept else ""))
    if not cuts:
        return text, []
    pieces, at = [], 0
    for start, end, replacement in cuts:
        pieces += [text[at:start], replacement]
        at = end
    return "".join([*pieces, text[at:]]), dropped


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
