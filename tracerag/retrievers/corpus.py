"""Ingest a JSONL corpus into a CosineBank of chunks (the RAG chunk store).

One document a line: ``id`` (or ``pmid``), its text in ``text`` or as a list ``contexts`` (PubMedQA
abstracts; list items are joined with a space), an optional ``title``, and any other fields, which are
kept in every chunk's metadata. Each chunk is one bank row, id ``<doc_id>#<n>``, metadata
``{"doc_id", "chunk", "text", "hash", "title"?, **other fields}``.

Why it is safe to re-run: the whole file is read, checked and chunked before anything is written, so a
broken line (named by file, line and field) leaves a stored bank untouched; and a chunk already stored
with the same hash is not embedded again, so re-ingesting an unchanged corpus costs reading and
chunking it. A document whose stored chunks differ from the new ones (its text, or the chunk size,
changed) is reported and skipped with a warning: updating rows in place is out of scope (the bank only
appends); rebuild the bank into a new directory to pick up edited documents.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .chunking import DEFAULT_OVERLAP, DEFAULT_SIZE, Chunk, chunk_text
from .cosine_bank import CosineBank, Progress
from .embedders import Embedder
from .jsonl import iter_json_lines

__all__ = ["CorpusError", "Document", "IngestReport", "ingest_documents", "read_documents"]

logger = logging.getLogger(__name__)

ID_FIELDS = ("id", "pmid")
DEFAULT_TEXT_FIELDS = ("text", "contexts")
CHUNK_KEYS = ("doc_id", "chunk", "text", "hash", "title")  # a document's own fields may not use these


class CorpusError(ValueError):
    """A corpus file that cannot be ingested; the message names file, line and field."""


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    title: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, hash=False)  # other fields, kept as chunk metadata


@dataclass
class IngestReport:
    """What one ingestion did. Counts of chunks unless named otherwise."""

    bank: str
    documents: int = 0  # documents read
    chunks: int = 0  # chunks the documents make
    added: int = 0  # chunks embedded and stored
    unchanged: int = 0  # chunks already stored with the same hash (not embedded again)
    changed_skipped: list[str] = field(default_factory=list)  # doc ids whose stored chunks differ; skipped
    empty_skipped: list[str] = field(default_factory=list)  # doc ids with no text; nothing to store
    bank_size: int = 0
    seconds: float = 0.0

    @property
    def chunks_per_second(self) -> float:
        return self.added / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "chunks_per_second": round(self.chunks_per_second, 1)}


def _document_id(row: dict, where: str) -> str:
    name = next((k for k in ID_FIELDS if k in row), None)
    if name is None:
        raise CorpusError(f"{where}: field 'id' (or 'pmid') is missing")
    value = row[name]
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise CorpusError(f"{where}: field {name!r} must be a non-empty string or an integer")
    return value


def _document_text(row: dict, where: str, text_fields: Sequence[str]) -> tuple[str, str]:
    """(the field used, its text); a list of strings is joined with a space."""
    name = next((k for k in text_fields if row.get(k) is not None), None)
    if name is None:
        wanted = " or ".join(repr(k) for k in text_fields)
        raise CorpusError(f"{where}: field {wanted} is missing")
    value = row[name]
    if isinstance(value, list):
        bad = next((i for i, v in enumerate(value) if not isinstance(v, str)), None)
        if bad is not None:
            raise CorpusError(f"{where}: field {name!r}[{bad}] must be a string")
        return name, " ".join(value)
    if not isinstance(value, str):
        raise CorpusError(f"{where}: field {name!r} must be a string or a list of strings")
    return name, value


def read_documents(path: str | Path, text_fields: Sequence[str] = DEFAULT_TEXT_FIELDS) -> list[Document]:
    """Parse and check a whole documents JSONL file; the first bad line raises CorpusError naming it."""
    path = Path(path)
    docs: list[Document] = []
    seen: dict[str, str] = {}
    for where, row in iter_json_lines(path, CorpusError):
        doc_id = _document_id(row, where)
        if doc_id in seen:
            raise CorpusError(f"{where}: field 'id' {doc_id!r} appears twice (first at {seen[doc_id]})")
        seen[doc_id] = where
        _, text = _document_text(row, where, text_fields)
        title = row.get("title")
        if title is not None and not isinstance(title, str):
            raise CorpusError(f"{where}: field 'title' must be a string or null")
        extra = {k: v for k, v in row.items() if k not in (*ID_FIELDS, *text_fields, "title")}
        clash = next((k for k in extra if k in CHUNK_KEYS), None)
        if clash is not None:
            raise CorpusError(f"{where}: field {clash!r} is reserved for chunk metadata; rename it")
        docs.append(Document(doc_id, text, title or None, extra))
    return docs


def _chunk_metadata(doc: Document, chunk: Chunk) -> dict[str, Any]:
    meta: dict[str, Any] = {**doc.extra, "doc_id": doc.id, "chunk": chunk.index, "text": chunk.text,
                            "hash": chunk.hash}
    if doc.title:
        meta["title"] = doc.title
    return meta


def _stored_chunk_counts(bank: CosineBank) -> Counter[str]:
    """doc_id -> number of its chunks in the bank, read from the ids (no metadata decoding)."""
    return Counter(chunk_id.rsplit("#", 1)[0] for chunk_id in bank.ids)


def _is_stored_unchanged(bank: CosineBank, chunks: list[Chunk], stored_count: int) -> bool:
    if stored_count != len(chunks):
        return False
    return all(c.id in bank and bank.metadata(bank.row_of(c.id)).get("hash") == c.hash for c in chunks)


def ingest_documents(
    docs_path: str | Path,
    bank_dir: str | Path,
    embedder: Embedder,
    *,
    size: int = DEFAULT_SIZE,
    overlap: int = DEFAULT_OVERLAP,
    text_fields: Sequence[str] = DEFAULT_TEXT_FIELDS,
    batch_size: int = 256,
    progress: Progress = None,
) -> IngestReport:
    """Chunk every document of ``docs_path`` and store the chunks not yet in the bank at ``bank_dir``.

    Creates the bank when there is none; otherwise appends (atomically: a crash leaves the previous
    version). ``text_fields``: the fields tried in order for a document's text. Chunks of a document
    already stored with the same hashes are not embedded again; a document stored with different chunks
    is skipped with a warning (see the module docstring).
    """
    started = time.perf_counter()
    bank_dir = Path(bank_dir)
    docs = read_documents(docs_path, text_fields)
    if not docs:
        raise CorpusError(f"{docs_path}: no documents")
    chunked = [(doc, chunk_text(doc.id, doc.text, size=size, overlap=overlap)) for doc in docs]
    report = IngestReport(bank=str(bank_dir), documents=len(docs), chunks=sum(len(c) for _, c in chunked))

    bank = CosineBank.load(bank_dir, embedder) if (bank_dir / "manifest.json").exists() else None
    stored = _stored_chunk_counts(bank) if bank is not None else Counter()
    new_chunks: list[tuple[Document, Chunk]] = []
    for doc, chunks in chunked:
        if not chunks:
            report.empty_skipped.append(doc.id)
        elif not stored[doc.id]:
            new_chunks.extend((doc, c) for c in chunks)
        elif _is_stored_unchanged(bank, chunks, stored[doc.id]):
            report.unchanged += len(chunks)
        else:
            report.changed_skipped.append(doc.id)
    if report.empty_skipped:
        logger.warning("%s: %d documents have no text and were skipped: %s", docs_path,
                       len(report.empty_skipped), ", ".join(report.empty_skipped[:10]))
    if report.changed_skipped:
        logger.warning("%s: %d documents differ from the stored version and were skipped (the bank is "
                       "append-only; rebuild it to update them): %s", docs_path, len(report.changed_skipped),
                       ", ".join(report.changed_skipped[:10]))

    ids = [c.id for _, c in new_chunks]
    texts = [c.text for _, c in new_chunks]
    metadata = [_chunk_metadata(d, c) for d, c in new_chunks]
    if bank is None:
        if not new_chunks:
            raise CorpusError(f"{docs_path}: no document has any text to ingest")
        bank = CosineBank.create(bank_dir, embedder, ids, texts, metadata, batch_size=batch_size, progress=progress)
        report.added = len(ids)
    elif new_chunks:
        report.added = bank.append(ids, texts, metadata, batch_size=batch_size, progress=progress)
    report.bank_size = len(bank)
    report.seconds = time.perf_counter() - started
    logger.info("ingested %s into %s: %d documents, %d chunks, +%d added, %d unchanged, %d changed (skipped) "
                "in %.1fs", docs_path, bank_dir, report.documents, report.chunks, report.added, report.unchanged,
                len(report.changed_skipped), report.seconds)
    return report
