"""Deterministic citation metrics shared by the programs that cite ids (TraceablePlanner, SelfReflectiveRAG).

Two questions, kept apart because they fail differently:

- validity: of the ids a text cites, which share was really provided? A hallucinated id is a citation
  a reader cannot follow. Nothing cited scores 1.0 (nothing invalid was cited); an uncited text is
  what coverage penalises, so the two are read together.
- coverage: of the units (answer sentences, plan steps), which share carries at least one valid
  citation? No units at all scores 0.0: an empty answer supports nothing.

The citation grammar (one for the writer, the parser and the metrics; ``render_citation`` writes it,
``extract_cited_ids`` reads it, ``is_citable`` says whether an id survives the round trip):

- a citation is a group ``[...]`` (or ``(...)``) of at most 1,000 characters on one line, holding one
  id or several separated by ``,`` or ``;`` (a space is enough after a chunk id's ``#n``);
- a chunk id is ``<doc id>#<n>``, ``n`` ASCII digits; the doc id is any run of characters other than
  ``[ ] , ; #``, line breaks, tabs and control characters, neither starting nor ending with a space:
  Unicode letters and digits, ``_ - . : /``, spaces, parentheses, ``指南1``, ``my doc (v2)`` all fit.
  inside ``(...)`` an id holds no parenthesis;
- an item of a group that is not an id as a whole gives the ids among its space-separated words that
  are not chunk ids (``[see mat-00001]`` cites ``mat-00001``; ``[a\tb#0]`` cites nothing: a chunk id
  is read whole or not at all); a group with no id is not a citation.

A document id outside the grammar (one holding ``#``, ``,``, ``;``, a bracket or a line break) cannot
be cited: the writers leave it uncited rather than cite something that reads back as another id.

Pure functions over strings and id lists, no LM; compiled regexes, so 1,000 answers take milliseconds
(``benchmarks/bench_citation_metrics.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..memory.playbook import BULLET_ID_PATTERN, TEMPLATE_ID_PATTERN

__all__ = ["CHUNK_ID_PATTERN", "CITATION_ID_PATTERN", "CitationGroup", "DOC_ID_PATTERN", "citation_coverage",
           "citation_groups", "citation_validity", "extract_cited_ids", "is_citable", "keep_citations", "partition_ids",
           "render_citation", "split_sentences"]

MAX_GROUP_CHARS = 1_000  # the longest citation group read; an id longer than this cannot be cited
_DOC_CHAR = r"[^\[\],;#\s\x00-\x1f\x7f]"
DOC_ID_PATTERN = rf"{_DOC_CHAR}(?:(?:{_DOC_CHAR}| )*{_DOC_CHAR})?"
CHUNK_ID_PATTERN = rf"{DOC_ID_PATTERN}#[0-9]+"  # <doc_id>#<n>, the chunk ids of a corpus bank
# Any id the programs hand out: playbook bullets, templates, chunks.
CITATION_ID_PATTERN = rf"{BULLET_ID_PATTERN}|{TEMPLATE_ID_PATTERN}|{CHUNK_ID_PATTERN}"

# A citation group: [ids] (parentheses inside allowed) or (ids) (none inside).
_GROUP = re.compile(rf"\[([^\[\]\n]{{1,{MAX_GROUP_CHARS}}})\]|\(([^\[\]()\n]{{1,{MAX_GROUP_CHARS}}})\)")
_ITEM_SEPARATOR = re.compile(r"[,;]|(?<=[0-9])[ \t]+")
_CHUNK_END = re.compile(r"#[0-9]+$")
_BLANK_AFTER_CHUNK = re.compile(r"#[0-9]+[ \t]")
_COMMA_OR_SEMICOLON = re.compile(r"[,;]")


@lru_cache(maxsize=64)
def _id_regex(id_pattern: str) -> re.Pattern[str]:
    # an id is a whole token: "xmat-00001" and "mat-000012" are not mat-00001
    return re.compile(rf"(?<![\w#-])(?:{id_pattern})(?![\w#-])")


@lru_cache(maxsize=64)
def _whole_id(id_pattern: str) -> re.Pattern[str]:
    return re.compile(rf"(?:{id_pattern})")


def _items(content: str) -> list[str]:
    """A group's items: split at ``,`` ``;`` and at blanks that follow a chunk id's ``#n``."""
    if not _BLANK_AFTER_CHUNK.search(content):  # the common case: separators only
        return [item.strip() for item in _COMMA_OR_SEMICOLON.split(content) if item.strip()]
    items, start = [], 0
    for sep in _ITEM_SEPARATOR.finditer(content):
        piece = content[start:sep.start()]
        if sep.group() in ",;" or _CHUNK_END.search(piece):
            items.append(piece)
            start = sep.end()
    items.append(content[start:])
    return [item.strip() for item in items if item.strip()]


@dataclass(frozen=True)
class CitationGroup:
    """One bracketed group of a text: where it is, its items, and the ids among them."""

    start: int
    end: int
    items: tuple[str, ...]
    ids: tuple[str, ...]


def citation_groups(text: str, id_pattern: str = CITATION_ID_PATTERN) -> Iterator[CitationGroup]:
    """Every group of ``text`` holding at least one id of ``id_pattern``, in order (the grammar above)."""
    whole = _whole_id(id_pattern)
    for match in _GROUP.finditer(text or ""):
        items = _items(match.group(1) if match.group(1) is not None else match.group(2))
        ids = []
        for item in items:
            if whole.fullmatch(item):
                ids.append(item)
            else:
                ids.extend(word for word in item.split() if "#" not in word and whole.fullmatch(word))
        if ids:
            yield CitationGroup(match.start(), match.end(), tuple(items), tuple(ids))


def render_citation(ids: Sequence[str]) -> str:
    """The citation of ``ids``, as every writer writes it: ``[a#0, b#1]``."""
    return "[" + ", ".join(ids) + "]"


def is_citable(chunk_id: str, id_pattern: str = CHUNK_ID_PATTERN) -> bool:
    """Whether ``chunk_id`` fits the grammar: written with ``render_citation`` it reads back as itself."""
    return isinstance(chunk_id, str) and extract_cited_ids(render_citation([chunk_id]), id_pattern) == [chunk_id]


def keep_citations(text: str, allowed: Iterable[str], id_pattern: str = CHUNK_ID_PATTERN) -> tuple[str, list[str]]:
    """``text`` with every item of its citations that is not an ``allowed`` id removed, and the removed
    items (first seen first): ``"A [real#0, FORGED4]."`` -> ``("A [real#0].", ["FORGED4"])``. A citation
    left empty goes whole, with the blanks before it, so no invented id is ever shown as a citation."""
    allowed = set(allowed)
    parts: list[str] = []
    dropped: list[str] = []
    last = 0
    for group in citation_groups(text, id_pattern):
        kept = [item for item in group.items if item in allowed]
        if len(kept) == len(group.items):
            continue
        dropped.extend(item for item in group.items if item not in allowed)
        head = text[last:group.start]
        parts.append(head + render_citation(kept) if kept else head.rstrip(" \t"))
        last = group.end
    parts.append(text[last:])
    return "".join(parts), list(dict.fromkeys(dropped))


def extract_cited_ids(text: str, id_pattern: str = CITATION_ID_PATTERN, *, bracketed: bool = True) -> list[str]:
    """The ids ``text`` cites, in order of first appearance, without repeats.

    ``bracketed`` (the default) counts an id only inside ``[...]`` or ``(...)``, alone or in a list
    (``[mat-00001; proc-00002]``): that is what a citation looks like, and it keeps prose mentions out.
    ``bracketed=False`` finds ids anywhere (for ids distinctive enough, like ``tpl-1a2b3c4d``; not for
    chunk ids, whose doc ids may hold spaces).
    """
    if not text:
        return []
    if bracketed:
        found = [i for group in citation_groups(text, id_pattern) for i in group.ids]
    else:
        found = _id_regex(id_pattern).findall(text)
    return list(dict.fromkeys(found))


def partition_ids(cited_ids: Iterable[str], provided_ids: Iterable[str]) -> tuple[list[str], list[str]]:
    """(valid, invalid): the distinct cited ids that were provided, and those that were not, in cited order."""
    provided = set(provided_ids)
    valid, invalid = [], []
    for cited in dict.fromkeys(cited_ids):
        (valid if cited in provided else invalid).append(cited)
    return valid, invalid


def citation_validity(cited_ids: Iterable[str], provided_ids: Iterable[str]) -> float:
    """Share of the distinct cited ids that were provided; 1.0 when nothing is cited."""
    valid, invalid = partition_ids(cited_ids, provided_ids)
    total = len(valid) + len(invalid)
    return len(valid) / total if total else 1.0


def citation_coverage(units: Sequence[str] | Sequence[Sequence[str]], provided_ids: Iterable[str],
                      id_pattern: str = CITATION_ID_PATTERN) -> float:
    """Share of units carrying at least one valid citation; 0.0 when there are no units.

    A unit is a text (a sentence, a step; its ids are extracted with ``id_pattern``) or the list of
    ids it cites (e.g. a plan step's ``cites`` joined with the ids in its text).
    """
    if not units:
        return 0.0
    provided = provided_ids if isinstance(provided_ids, set | frozenset) else set(provided_ids)
    covered = 0
    for unit in units:
        ids = extract_cited_ids(unit, id_pattern) if isinstance(unit, str) else unit
        covered += any(i in provided for i in ids)
    return covered / len(units)


# -- sentences ---------------------------------------------------------------------------------------

_CITE_TAIL = rf"(?:[ \t]*\[[^\[\]\n]{{1,{MAX_GROUP_CHARS}}}\])*"
# A sentence ends after . ! ? (closing quotes/brackets allowed) plus any [citations] that follow it, when
# a space and a character that is not a lower-case letter come next ("e.g. the" stays whole); after a
# CJK terminator (and its citations); or at a line break (list items and plan lines are units).
_BOUNDARY = re.compile(
    rf"[.!?][\"'”’)]*{_CITE_TAIL}(?=[ \t]+(?![a-z]))|[。！？][”’」』）]*{_CITE_TAIL}|\n")
_ONLY_CITATIONS = re.compile(rf"(?:\[[^\[\]\n]{{1,{MAX_GROUP_CHARS}}}\]\s*)+")
_LETTER = re.compile(r"[^\W\d_]")


def split_sentences(answer: str) -> list[str]:
    """An answer's sentences (or lines), each keeping the citations written right after its full stop.

    ``"A holds [x#0]. B holds. [y#1] C."`` -> ``["A holds [x#0].", "B holds. [y#1]", "C."]``. A piece made
    only of citations joins the sentence before it; a piece without letters (a list number "1.") joins
    the one after it.
    """
    pieces, start = [], 0
    for match in _BOUNDARY.finditer(answer):
        pieces.append(answer[start:match.end()].strip())
        start = match.end()
    pieces.append(answer[start:].strip())
    sentences: list[str] = []
    prefix = ""
    for piece in pieces:
        if not piece:
            continue
        if sentences and not prefix and _ONLY_CITATIONS.fullmatch(piece):
            sentences[-1] = f"{sentences[-1]} {piece}"
        elif not _LETTER.search(piece):
            prefix = f"{prefix} {piece}".strip()
        else:
            sentences.append(f"{prefix} {piece}".strip() if prefix else piece)
            prefix = ""
    if prefix:
        sentences.append(prefix)
    return sentences
