"""Finding the search agent's protocol tags in a text, and telling the tags used from the tags mentioned.

Every reader of the tag protocol (:mod:`.reply_parsing`, :mod:`.cite_tags`) starts here: :func:`find_tags`
lists each ``<call_tool>``, ``<call>``, ``<answer>``, ``<think>``, ``<tool_output>``, ``<cite>`` and
``<snippet>`` open or close (names read case-insensitively) with its attributes, read as real models write
them (double-, single- or un-quoted, a ``>`` or a line break inside a quoted value, a tag cut short). It
marks as prose the tags that are mentioned rather than used: anything in a closed ``<think>`` block, and
structural tags in inline code (```<answer>```) or in a fenced code block.

Every function reads its text in a few left-to-right passes (time linear in the input: no pattern here
backtracks over more than the run it just read), and never raises on any input text.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["Tag", "attribute", "ends_call", "find_tags", "is_tag", "mark_prose", "quiet_gc"]

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
_ATTR_STEP = re.compile(r"[^A-Za-z_<>]*")  # what lies between attributes (spaces, stray quotes, slashes)
_ATTR_NAME = re.compile(r"[A-Za-z_][\w-]*")
_SPACE = re.compile(r"\s*")
_FAST_PAIR = re.compile(r'([A-Za-z_][\w-]*)="([^"]*)"')
_UNQUOTED = re.compile(r"""[^\s"'<>]*""")
_UNCLOSED = re.compile(r"[^\s<>]*")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)$", re.MULTILINE)
_TICKS = re.compile(r"`+")


@contextmanager
def quiet_gc(text: str) -> Iterator[None]:
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


@dataclass(slots=True)
class Tag:
    """One protocol tag as :func:`find_tags` read it."""

    name: str  # a protocol tag name, lower case
    close: bool  # ``</name``
    start: int
    end: int  # after ``>`` when complete, else after the name
    complete: bool  # read up to its ``>``
    attrs: dict[str, str]
    prose: bool = False  # not protocol: inside a closed <think>, in code, or mentioned in a sentence
    code: bool = False  # inside inline code or a fenced code block
    thought: bool = False  # inside a closed <think> (kept as written in the trajectory)


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


def find_tags(text: str, *, code: bool = True) -> list[Tag]:
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
            tags.append(Tag(name, close, start, end, True, attrs))
            continue
        limit = starts[i + 1][0] if i < last else n
        if text.find(">", name_end, limit) == -1:  # a tag that never closes
            tags.append(Tag(name, close, start, name_end, False, {}))
            continue
        attrs, stop = _read_attrs(text, name_end, limit)
        tags.append(Tag(name, close, start, name_end if stop is None else stop, stop is not None, attrs))
    return mark_prose(text, tags, code=code)


def mark_prose(text: str, tags: list[Tag], *, code: bool, again: bool = False) -> list[Tag]:
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


def is_tag(tag: Tag, name: str, *, close: bool = False) -> bool:
    """A used (not prose), complete ``<name>`` (``</name>`` when ``close``)."""
    return not tag.prose and tag.name == name and tag.close == close and tag.complete


def ends_call(tag: Tag) -> bool:
    """A tag that ends the text of a call before it: its close, or the open of a new element."""
    return not tag.prose and (tag.name in ("call_tool", "call") if tag.close else tag.name in _STRUCTURAL)


def attribute(attrs: dict[str, str], key: str) -> str:
    """An attribute by its name in any case (``NAME=`` from a model that shouts)."""
    if key in attrs:
        return attrs[key]
    return next((v for k, v in attrs.items() if k.casefold() == key), "")

