"""The ``<cite>`` tags of a search agent's answer: reading the cited ids and claims, and keeping only known ids.

An answer's claims carry ``<cite id="ID">…</cite>`` (or ``ids="a, b"``); the agent's metrics read them
(:func:`extract_citations`) and the agent drops the ids no tool returned (:func:`keep_cited`). Tags are found
by :mod:`.protocol_tags`, so a cite inside a closed think block is prose, not a citation.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from .protocol_tags import attribute, find_tags, is_tag, quiet_gc
from .protocol_writing import escape_attr

__all__ = ["Citation", "extract_citations", "keep_cited"]

_TAG = re.compile(r"<[^<>]*>")
_ID_SPLIT = re.compile(r"[\s,;]+")


@dataclass(frozen=True)
class Citation:
    ids: list[str] = field(default_factory=list)
    text: str = ""


def extract_citations(answer_text: str) -> list[Citation]:
    """Every ``<cite id="…">`` / ``<cite ids="a, b">`` in an answer, with its text (inner markup removed).

    A cite runs to its ``</cite>``, the next cite, or the end; cites inside a closed think are prose."""
    text = answer_text if isinstance(answer_text, str) else ""
    with quiet_gc(text):
        return _citations(text)


def _citations(text: str) -> list[Citation]:
    tags = find_tags(text)
    citations = []
    ends = [len(text)] * len(tags)  # where a cite opened at tag i stops: the next cite tag of any kind
    for i in range(len(tags) - 2, -1, -1):
        after = tags[i + 1]
        ends[i] = after.start if not after.prose and after.name == "cite" else ends[i + 1]
    for i, tag in enumerate(tags):
        if not is_tag(tag, "cite"):
            continue
        stop = ends[i]
        raw = attribute(tag.attrs, "id") or attribute(tag.attrs, "ids")
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
    with quiet_gc(text):
        tags = [t for t in find_tags(text) if t.name == "cite" and not t.prose and t.complete]
    cuts: list[tuple[int, int, str]] = []  # (start, end, replacement)
    dropped: list[str] = []
    unwrapped = False  # the last cite opened lost its tag: its close goes too
    for tag in tags:
        if tag.close:
            if unwrapped:
                cuts.append((tag.start, tag.end, ""))
            unwrapped = False
            continue
        raw = attribute(tag.attrs, "id") or attribute(tag.attrs, "ids")
        ids = list(dict.fromkeys(i for i in _ID_SPLIT.split(raw.strip()) if i))
        kept = [i for i in ids if i in known]
        unwrapped = not kept
        if kept != ids:
            dropped.extend(i for i in ids if i not in known and i not in dropped)
            cuts.append((tag.start, tag.end, f'<cite id="{escape_attr(",".join(kept))}">' if kept else ""))
    if not cuts:
        return text, []
    pieces, at = [], 0
    for start, end, replacement in cuts:
        pieces += [text[at:start], replacement]
        at = end
    return "".join([*pieces, text[at:]]), dropped

