"""A chunk bank searched like PubMed: one hit per document, with the document's full text and metadata.

The search agent's ``pubmed_search`` tool answers from here when it runs offline: the bundled
PubMedQA abstracts (ingested once into the cache directory by :func:`open_pubmedqa_bank`) or any bank
of chunks made by ``tracerag ingest``. Retrieval is the library's hybrid (dense + BM25) retriever over
chunks; a document is ranked by its best chunk and returned once.

What a snippet holds: ``id`` is the document id (the PMID), ``text`` the whole document (the
abstract, not just the matching chunk: the agent cites documents), ``year``, and ``keywords`` (the MeSH
terms). PubMedQA ships no titles (every ``title`` is null), so a snippet has a ``title`` only when the
corpus gives one; a title made up from the first sentence would repeat the abstract and pass off
background as topic.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import (
    Any,
    NotRequired,  # pydantic needs these on Python < 3.12
)

import numpy as np
from typing_extensions import TypedDict

from ..documents.corpus import Document, read_documents
from ..documents.hybrid import HybridRetriever
from ..embedding.embedders import Embedder
from ..errors import InvalidValue
from ..stores.cosine_bank import CosineBank
from ..stores.word_tokens import word_tokens

__all__ = ["COMMON_WORD_SHARE", "MAX_LIMIT", "PubMedSearch", "Snippet", "check_search_arguments", "open_pubmedqa_bank",
           "pubmedqa_bank_dir"]

MAX_LIMIT = 50  # results per call: more would flood the agent's context without helping it
# A query word found in more than this share of the chunks is too common to make a document "match" (for
# ``total``); on PubMedQA questions the median total is then 357 of 1000 abstracts, against 991 counting every word.
COMMON_WORD_SHARE = 0.1


class Snippet(TypedDict):
    """One search result, the shape every search tool returns (``format_tool_output`` renders it)."""

    id: str
    text: str
    title: NotRequired[str]
    authors: NotRequired[str]
    year: NotRequired[int]
    journal: NotRequired[str]
    keywords: NotRequired[list[str]]


def pubmedqa_bank_dir(embedder: Embedder) -> Path:
    """Where the bundled abstracts are ingested for ``embedder``: one bank per embedder id."""
    from ..config import Settings

    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in embedder.id)
    return Settings.resolve().cache_dir / "banks" / f"pubmedqa-{safe}"


def open_pubmedqa_bank(embedder: Embedder | None = None) -> CosineBank:
    """The bundled PubMedQA abstracts as a chunk bank, ingested on first use (default: the configured embedder).

    Ingesting again is cheap: chunks already stored with the same hash are not embedded again.
    """
    from ..config import get_embedder
    from ..datasets.pubmedqa import pubmedqa_abstracts_path
    from ..documents.corpus import ingest_documents

    embedder = embedder or get_embedder()
    bank_dir = pubmedqa_bank_dir(embedder)
    ingest_documents(pubmedqa_abstracts_path(), bank_dir, embedder, progress=sys.stderr.isatty())
    return CosineBank.load(bank_dir, embedder)


def check_search_arguments(query: Any, limit: Any, offset: Any) -> None:
    """ValueError with what to change, for a query/limit/offset no search tool accepts."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidValue("query must be a non-empty string")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidValue(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidValue(f"offset must be an integer >= 0, got {offset!r}")


def _merge_overlapping(pieces: list[str]) -> str:
    """Consecutive chunks repeat a few whole sentences; join them without the repeat."""
    merged = pieces[0] if pieces else ""
    for piece in pieces[1:]:
        overlap = next((n for n in range(min(len(merged), len(piece)), 0, -1) if merged.endswith(piece[:n])), 0)
        merged = merged + (" " if not overlap else "") + piece[overlap:]
    return merged


def _year(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value[:4].isdigit():
        return int(value[:4])
    return None


class PubMedSearch:
    """Hybrid search over a chunk bank returning whole documents, paged by ``limit`` and ``offset``.

    ``documents`` (the corpus file read by ``documents.corpus.read_documents``, by id) gives the full
    text and metadata (``title``, ``year``, ``meshes``…) of each hit; without it (a bank from ``tracerag
    ingest``) the text is the document's stored chunks joined, and metadata comes from the chunk metadata.
    """

    def __init__(self, retriever: HybridRetriever, documents: Mapping[str, Document] | None = None) -> None:
        self.retriever = retriever
        self.documents = documents
        metadata = retriever.row_metadata(range(len(retriever.ids)))
        doc_ids = [str(meta.get("doc_id") or chunk_id.rsplit("#", 1)[0])
                   for meta, chunk_id in zip(metadata, retriever.ids, strict=True)]
        names, self._doc_of_row = np.unique(np.asarray(doc_ids, dtype=object), return_inverse=True)
        self._chunk_rows: dict[str, list[int]] = {}
        for row, doc_id in enumerate(doc_ids):
            self._chunk_rows.setdefault(doc_id, []).append(row)
        self.document_count = len(names)
        self._stored_text = lru_cache(maxsize=4096)(self._stored_text_uncached)

    @classmethod
    def pubmedqa(cls, embedder: Embedder | None = None) -> PubMedSearch:
        """The bundled PubMedQA abstracts (ingested on first use), answered with their full abstracts."""
        from ..datasets.pubmedqa import pubmedqa_abstracts_path

        documents = {doc.id: doc for doc in read_documents(pubmedqa_abstracts_path())}
        return cls(HybridRetriever(open_pubmedqa_bank(embedder)), documents)

    def search(self, query: str, limit: int = 5, offset: int = 0) -> tuple[int, list[Snippet]]:
        """(total, snippets): the documents ranked ``offset`` … ``offset + limit - 1`` for ``query``.

        ``total`` counts the documents sharing a distinctive word with the query (what a keyword engine
        would report as matches; "the", "patients" or "does" match nearly every abstract, so words in more
        than ``COMMON_WORD_SHARE`` of the chunks do not count), and is never less than ``offset`` plus the
        results returned: the dense channel also ranks paraphrases that share no word.
        """
        check_search_arguments(query, limit, offset)
        query = " ".join(query.split())
        hits = self.retriever.search([query], k=offset + limit, dedupe_by="doc_id")[0][offset:]
        snippets = [self._snippet(hit.doc_id or hit.id.rsplit("#", 1)[0], hit.metadata) for hit in hits]
        return max(self._matching_documents(query), offset + len(snippets)), snippets

    def _matching_documents(self, query: str) -> int:
        """Documents holding a distinctive query word: one in at most COMMON_WORD_SHARE of the chunks."""
        index = self.retriever.index
        rows: list[np.ndarray] = []
        for token in set(word_tokens(query)):
            term = index.vocab.get(token)
            if term is None:
                continue
            lo, hi = int(index.indptr[term]), int(index.indptr[term + 1])
            if hi - lo <= COMMON_WORD_SHARE * index.count:
                rows.append(index.rows[lo:hi])
        if not rows:
            return 0
        hit_rows = np.concatenate(rows)
        return int(np.unique(self._doc_of_row[hit_rows[hit_rows < len(self._doc_of_row)]]).size)

    def _snippet(self, doc_id: str, chunk_meta: Mapping[str, Any]) -> Snippet:
        doc = self.documents.get(doc_id) if self.documents is not None else None
        source = {**doc.extra, "title": doc.title} if doc is not None else chunk_meta
        snippet: Snippet = {"id": doc_id, "text": (doc.text if doc is not None else "") or self._stored_text(doc_id)}
        if isinstance(source.get("title"), str) and source["title"].strip():
            snippet["title"] = source["title"].strip()
        for key in ("authors", "journal"):
            if isinstance(source.get(key), str) and source[key].strip():
                snippet[key] = source[key].strip()
        year = _year(source.get("year"))
        if year is not None:
            snippet["year"] = year
        keywords = source.get("meshes") or source.get("keywords")
        if isinstance(keywords, list) and keywords:
            snippet["keywords"] = [str(k) for k in keywords]
        return snippet

    def _stored_text_uncached(self, doc_id: str) -> str:
        rows = self._chunk_rows.get(doc_id, [])
        chunks = sorted(zip(self.retriever.row_metadata(rows), rows, strict=True),
                        key=lambda pair: int(pair[0].get("chunk") or 0))
        return _merge_overlapping([str(meta.get("text") or "") for meta, _ in chunks])

    def __repr__(self) -> str:
        return f"PubMedSearch({self.retriever!r}, documents={self.document_count})"
