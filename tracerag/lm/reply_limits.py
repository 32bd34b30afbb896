"""What an LM stage's reply may hold: caps on its text and citations, and ids only from those it was given.

Why: the transport caps a reply at 8 MB, but a reply well under that can still be unusable — a
"2-5 sentence" summary of 200,000 characters, an answer with 5,000 citations, a JSON object where
prose was asked for, ids of tasks or snippets that were never shown. A stage's check calls these
helpers; each raises ``ReplyRejected`` (one line: what, how much, the cap), so the guarded step takes
the stage's fallback and records it, exactly as for a reply that does not parse.

The caps are generous for what each field is asked to hold, so a good reply never meets them.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from typing import Any

from ..errors import TraceragError

__all__ = ["MAX_ANSWER_CHARS", "MAX_CITATIONS", "MAX_IDS", "MAX_PLAN_CHARS", "MAX_QUERY_CHARS", "MAX_REPLY_CHARS",
           "MAX_SHORT_CHARS", "MAX_SUMMARY_CHARS", "TYPE_NAMES", "ReplyRejected", "given_ids", "prose"]

MAX_QUERY_CHARS = 500  # one search query (a rewrite, a refinement): a few keywords or a sentence
MAX_SHORT_CHARS = 1_000  # a caption, a gap, a grading reason, an unsupported claim
MAX_SUMMARY_CHARS = 4_000  # an experience summary, asked for 2-5 sentences
MAX_ANSWER_CHARS = 8_000  # a cited answer (SelfReflectiveRAG, SearchAgent)
MAX_REPLY_CHARS = 16_000  # one SearchAgent step: reasoning plus one call or the answer
MAX_PLAN_CHARS = 32_000  # a whole plan as JSON (TraceablePlanner)
MAX_CITATIONS = 30  # distinct ids one answer cites (its context holds at most 10 chunks; an agent's, its snippets)
MAX_IDS = 50  # ids in one reported list (task_ids, bullets_used, …)
# what a model writes when it echoes the schema instead of filling it ("list[str]" even parses as ['str'])
TYPE_NAMES = frozenset({"str", "string", "text", "list", "list[str]", "dict", "object", "array", "bool", "boolean",
                        "int", "float", "number", "any", "...", "…"})
NOTHING = frozenset({"none", "null", "n/a", "-"})  # what a model writes for an empty field: read as ""


class ReplyRejected(TraceragError, ValueError):
    """An LM reply the program cannot use: the stage falls back."""


def prose(value: Any, name: str, limit: int) -> str:
    """``value`` stripped, when it is text of at most ``limit`` characters that is neither a JSON object or
    list (structure where prose was asked for is a wrong type) nor a type name (``TYPE_NAMES``: the schema
    echoed back, not an answer); "" for a word that means nothing (``NOTHING``: "None", "n/a")."""
    if not isinstance(value, str):
        raise ReplyRejected(f"{name} is a {type(value).__name__}, not text")
    text = value.strip()
    if len(text) > limit:
        raise ReplyRejected(f"{name} is {len(text):,} characters; the cap is {limit:,}")
    if text.lower() in NOTHING:
        return ""
    if text.lower() in TYPE_NAMES:
        raise ReplyRejected(f"{name} is the type name {text!r}, not a value")
    if text[:1] in "[{":
        try:
            structure = json.loads(text)
        except ValueError:
            structure = None
        if isinstance(structure, dict | list):
            raise ReplyRejected(f"{name} is a JSON {type(structure).__name__}, not text")
    return text


def given_ids(reported: Iterable[str], given: Collection[str], name: str, limit: int = MAX_IDS) -> list[str]:
    """The reported ids that were given, first appearance first. More than ``limit`` distinct ids, or ids
    that are all unknown (the reply draws on things it was never shown), reject the reply; a few unknown
    ids among given ones are dropped."""
    distinct = list(dict.fromkeys(reported))
    if len(distinct) > limit:
        raise ReplyRejected(f"{name} lists {len(distinct):,} ids; the cap is {limit:,}")
    known = [i for i in distinct if i in given]
    if distinct and not known:
        raise ReplyRejected(f"{name} lists only ids it was not given: {', '.join(map(str, distinct[:3]))}")
    return known
