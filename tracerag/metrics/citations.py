"""Deterministic citation metrics shared by the programs that cite ids (TraceablePlanner, SelfReflectiveRAG).

Two questions, kept apart because they fail differently:

- validity: of the ids a text cites, which share was really provided? A hallucinated id is a citation
  a reader cannot follow. Nothing cited scores 1.0 (nothing invalid was cited); an uncited text is
  what coverage penalises, so the two are read together.
- coverage: of the units (answer sentences, plan steps), which share carries at least one valid
  citation? No units at all scores 0.0: an empty answer supports nothing.

Pure functions over strings and id lists, no LM; compiled regexes, so 1,000 answers take milliseconds
(``benchmarks/bench_citation_metrics.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ..retrievers.playbook import BULLET_ID_PATTERN, TEMPLATE_ID_PATTERN

__all__ = ["CHUNK_ID_PATTERN", "CITATION_ID_PATTERN", "citation_coverage", "citation_validity", "extract_cited_ids",
           "partition_ids", "split_sentences"]

CHUNK_ID_PATTERN = r"[A-Za-z0-9][\w.:/-]*#\d+"  # <doc_id>#<n>, the chunk ids of a corpus bank
# Any id the programs hand out: playbook bullets, templates, chunks.
CITATION_ID_PATTERN = rf"{BULLET_ID_PATTERN}|{TEMPLATE_ID_PATTERN}|{CHUNK_ID_PATTERN}"

# A citation group: [id], (id), or several ids in one group: [mat-00001, tpl-0a1b2c3d].
_GROUP = re.compile(r"[\[(]([^\[\]()\n]{1,300})[\])]")


@lru_cache(maxsize=64)
def _id_regex(id_pattern: str) -> re.Pattern[str]:
    # an id is a whole token: "xmat-00001" and "mat-000012" are not mat-00001
    return re.compile(rf"(?<![\w#-])(?:{id_pattern})(?![\w#-])")


def extract_cited_ids(text: str, id_pattern: str = CITATION_ID_PATTERN, *, bracketed: bool = True) -> list[str]:
    """The ids ``text`` cites, in order of first appearance, without repeats.

    ``bracketed`` (the default) counts an id only inside ``[...]`` or ``(...)``, alone or in a list
    (``[mat-00001; proc-00002]``): that is what a citation looks like, and it keeps prose mentions out.
    ``bracketed=False`` finds ids anywhere (for ids distinctive enough, like ``tpl-1a2b3c4d``).
    """
    if not text:
        return []
    regex = _id_regex(id_pattern)
    if bracketed:
        found = [i for group in _GROUP.findall(text) for i in regex.findall(group)]
    else:
        found = regex.findall(text)
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

_CITE_TAIL = r"(?:[ \t]*\[[^\[\]\n]{1,300}\])*"
# A sentence ends after . ! ? (closing quotes/brackets allowed) plus any [citations] that follow it, when
# a space and a character that is not a lower-case letter come next ("e.g. the" stays whole); after a
# CJK terminator (and its citations); or at a line break (list items and plan lines are units).
_BOUNDARY = re.compile(
    rf"[.!?][\"'”’)]*{_CITE_TAIL}(?=[ \t]+(?![a-z]))|[。！？][”’」』）]*{_CITE_TAIL}|\n")
_ONLY_CITATIONS = re.compile(r"(?:\[[^\[\]\n]{1,300}\]\s*)+")
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
