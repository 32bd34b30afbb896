"""The BM25 word index of a Milvus store, kept next to its collection and written with every upsert and
delete, so a hybrid retriever on Milvus never reads every row to build its lexical channel; and what its
layouts share.

It indexes each row's metadata ``text`` (:data:`TEXT_KEY`) with the hybrid retriever's own tokens
(:func:`~.word_tokens.word_tokens`: plurals folded, CJK characters and bigrams) and BM25 k1=1.2, b=0.75, the
in-memory :class:`~tracerag.documents.word_index.WordIndex`'s parameters. Two layouts, chosen when the index is
created (:func:`~.milvus_store_words.open_words`):

- ``<collection>__bm25`` where the engine has Milvus' BM25 function (Milvus Lite >= 3, a Milvus server
  >= 2.5): the engine ranks our tokens (:mod:`.milvus_words_bm25`).
- ``<collection>__words`` elsewhere (a Milvus 2.3/2.4 server has no BM25 function): postings, BM25 computed
  here (:mod:`.milvus_words_postings`).

A batch of questions is read together (``top_batch``: one search, or one read of the postings, per
:data:`QUERIES_PER_READ` questions); the hybrid retriever's search of several questions uses it.

A companion whose row count disagrees with the store (created by a build that was interrupted, or by a
client that predates it) is rebuilt from one scan when a retriever opens it. Writers from several
processes at once may leave the postings' totals (row count, total length, word frequencies) off by
their race, and a reader may pair a write's new postings with the totals before it for as long as the
write takes; the next rebuild corrects the former.

Which write the index reflects is kept in its write journal (``<collection>__journal``:
:mod:`.milvus_words_journal`), so the store's check on open finds a writer killed or failed between the
row upsert and the word-index update.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .word_tokens import word_tokens

__all__ = ["BM25_SUFFIX", "JOURNAL_SUFFIX", "POSTINGS_SUFFIX", "TEXT_KEY"]

TEXT_KEY = "text"
K1, B = 1.2, 0.75
BM25_SUFFIX, POSTINGS_SUFFIX = "__bm25", "__words"
JOURNAL_SUFFIX = "__journal"
REWRITE_SUFFIX = "_rewrite"  # BM25Words.settle() builds the new companion under this name, then swaps it in
TOKEN_MAX_BYTES = 100  # longer tokens (hex 201 characters) are left out: no analyzer keeps them whole
PAGE = 16_384  # Milvus' limit on rows per query
IDS_PER_FILTER = 1000  # ids (or keys) per "in [...]" filter
QUERIES_PER_READ = 64  # questions of a batch read together (one search; one read of their words' postings)

Literal = Callable[[str], str]  # a string as a Milvus string literal (milvus_expressions._string_literal)


def row_tokens(metadata: dict[str, Any]) -> list[str]:
    text = metadata.get(TEXT_KEY)
    return [t for t in word_tokens(text) if len(t.encode("utf-8")) <= TOKEN_MAX_BYTES] if isinstance(text, str) else []


def _in(field: str, values: Iterable[str], literal: Literal) -> str:
    return f"{field} in [" + ", ".join(literal(v) for v in values) + "]"
