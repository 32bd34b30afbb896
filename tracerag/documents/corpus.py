"""Ingest a JSONL corpus into a CosineBank of chunks (the RAG chunk store).

One document a line: ``id`` (or ``pmid``), its text in ``text`` or as a list ``contexts`` (PubMedQA
abstracts; list items are joined with a space), an optional ``title``, and any other fields, which are
kept in every chunk's metadata. Each chunk is one bank row, id ``<doc_id>#<n>``, metadata
``{"doc_id", "chunk", "text", "hash", "title"?, **other fields}``.

Reading is liberal where the meaning is clear and counted in a :class:`ReadReport`: a UTF-8 BOM, CRLF
line ends, an id given as a number, ``contexts`` given as one string, ``text`` given as a list of
strings, a number as a title, and a file that is one JSON array of documents instead of JSON Lines. A
document whose text cannot be stored (a lone surrogate such as JSON ``"\ud800"``, bytes that are not
UTF-8) is skipped with its ``file:line`` and reason; the rest is ingested. A line that cannot be
understood at all (not JSON, no id, no text) stops the ingest before anything is written, naming file,
line and field. Only regular files are read (a FIFO never blocks), up to :data:`MAX_CORPUS_BYTES`.

Why it is safe to re-run: the whole file is read, checked and chunked before anything is written, so a
broken line (named by file, line and field) leaves a stored bank untouched; and a chunk already stored
with the same hash is not embedded again, so re-ingesting an unchanged corpus costs reading and
chunking it. A document whose stored chunks differ from the new ones (its text, or the chunk size,
changed) is reported and skipped with a warning: updating rows in place is out of scope (the bank only
appends); rebuild the bank into a new directory to pick up edited documents.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any

from ..data_files.read_report import BOM, NumberTooLong, ReadReport, load_json, not_finite, open_regular, text_problem
from ..embedding.embedders import Embedder
from ..errors import DataFileError
from ..stores.bank_errors import BankExists
from ..stores.bank_input import Progress
from ..stores.cosine_bank import CosineBank
from .chunking import DEFAULT_OVERLAP, DEFAULT_SIZE, Chunk, chunk_text

__all__ = ["MAX_CORPUS_BYTES", "CorpusError", "Document", "IngestReport", "ItemSink", "ingest_documents",
           "iter_data_lines", "read_documents"]

logger = logging.getLogger(__name__)

MAX_CORPUS_BYTES = 4 * 1024**3  # one documents file (streamed); larger is a clear error, not hours of embedding

ID_FIELDS = ("id", "pmid")
DEFAULT_TEXT_FIELDS = ("text", "contexts")
CHUNK_KEYS = ("doc_id", "chunk", "text", "hash", "title")  # a document's own fields may not use these


class CorpusError(DataFileError):
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
    reading: ReadReport = field(default_factory=lambda: ReadReport("documents"))  # read / normalised / skipped

    @property
    def chunks_per_second(self) -> float:
        return self.added / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "reading"}
        out = {k: list(v) if isinstance(v, list) else v for k, v in out.items()}
        return {**out, "chunks_per_second": round(self.chunks_per_second, 1), "read": self.reading.to_dict(),
                "skipped_lines": list(self.reading.problems)}


# -- reading data files liberally --------------------------------------------------------------------


@dataclass
class ItemSink:
    """Where a reader sends an item it cannot use.

    ``bad`` is an item that cannot be understood (not JSON, a required field missing): it raises
    ``error`` when ``strict`` (or without a report), else it is skipped into the report. ``unstorable``
    is an item whose text cannot be kept (a lone surrogate, bytes that are not UTF-8): skipped into the
    report whenever there is one. A skipped item's line is ``file:line: field: what was expected``."""

    error: type[ValueError]
    report: ReadReport | None = None
    strict: bool = True

    def bad(self, where: str, reason: str, detail: str) -> None:
        if self.strict or self.report is None:
            raise self.error(f"{where}: {detail}")
        self.report.skip(where, reason, detail)

    def unstorable(self, where: str, reason: str, detail: str) -> None:
        if self.report is None:
            raise self.error(f"{where}: {detail}")
        self.report.skip(where, reason, detail)

    def normalise(self, kind: str) -> None:
        if self.report is not None:
            self.report.normalise(kind)


def _lines(f: IO[bytes], path: Path, sink: ItemSink) -> Iterator[tuple[str, bytes]]:
    """("file:line", raw line) for each line; a BOM on the first is stripped and counted."""
    for lineno, raw in enumerate(f, start=1):
        if lineno == 1 and raw.startswith(BOM):
            raw = raw[len(BOM):]
            sink.normalise("BOM stripped")
        yield f"{path}:{lineno}", raw


def iter_data_lines(path: str | Path, sink: ItemSink, max_bytes: int = MAX_CORPUS_BYTES) -> Iterator[tuple[str, dict]]:
    """Yield ("file:line", object) for each JSON object line of a JSONL file, streaming.

    Every non-blank line counts as read. A line that is not UTF-8 is ``unstorable``; one that is not JSON
    or not an object is ``bad`` (see :class:`ItemSink`). CRLF line ends are accepted and counted; a file
    that is one JSON array of objects (on one line or pretty-printed) is read as its items. Lines end at
    "\\n" only: JSON strings may hold U+2028/U+2029 raw."""
    path = Path(path)
    report = sink.report
    with open_regular(path, sink.error, max_bytes) as f:
        head = f.read(64).lstrip(BOM).lstrip()
        f.seek(0)
        if head.startswith(b"[") and f.seek(0, os.SEEK_END) <= 256 * 1024 * 1024:
            f.seek(0)
            items = _json_array(f.read())
            if items is not None:
                sink.normalise("a JSON array, not JSON Lines")
                for i, item in enumerate(items, start=1):
                    where = f"{path}: item {i} of the JSON array"
                    if report is not None:
                        report.read += 1
                    if isinstance(item, dict):
                        yield where, item
                    else:
                        sink.bad(where, "not an object", f"expected a JSON object, got {_kind(item)}")
                return
        f.seek(0)
        for where, raw in _lines(f, path, sink):
            if not raw.strip():
                continue
            if report is not None:
                report.read += 1
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                sink.unstorable(where, "not UTF-8", f"not UTF-8 (byte {e.start + 1})")
                continue
            if line.endswith("\r\n"):
                sink.normalise("CRLF line ends")
            try:
                row = load_json(line)
            except json.JSONDecodeError as e:
                sink.bad(where, "not JSON", f"invalid JSON ({e.msg} at column {e.colno})")
                continue
            except NumberTooLong as e:
                sink.bad(where, "number too long", str(e))
                continue
            if not isinstance(row, dict):
                sink.bad(where, "not an object", f"expected a JSON object, got {_kind(row)}")
                continue
            yield where, row


def _json_array(data: bytes) -> list | None:
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, list) else None


def _kind(value: Any) -> str:
    return "null" if value is None else {bool: "a boolean", int: "a number", float: "a number", str: "a string",
                                         list: "a list"}.get(type(value), type(value).__name__)


def _document_id(row: dict, where: str, sink: ItemSink) -> str:
    name = next((k for k in ID_FIELDS if k in row), None)
    if name is None:
        raise CorpusError(f"{where}: field 'id' (or 'pmid') is missing")
    value = row[name]
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
        sink.normalise("id as a number")
    if not isinstance(value, str) or not value.strip():
        raise CorpusError(f"{where}: field {name!r} must be a non-empty string or an integer")
    return value


def _document_text(row: dict, where: str, text_fields: Sequence[str], sink: ItemSink) -> tuple[str, str]:
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
        if name != "contexts":
            sink.normalise(f"{name} as a list of strings")
        return name, " ".join(value)
    if not isinstance(value, str):
        raise CorpusError(f"{where}: field {name!r} must be a string or a list of strings")
    if name == "contexts":
        sink.normalise("contexts as one string")
    return name, value


def read_documents(path: str | Path, text_fields: Sequence[str] = DEFAULT_TEXT_FIELDS,
                   report: ReadReport | None = None, max_bytes: int = MAX_CORPUS_BYTES) -> list[Document]:
    """Parse and check a whole documents JSONL file.

    A line that cannot be understood raises CorpusError naming file, line and field. A document whose
    text cannot be stored is skipped and counted in ``report`` (without a report, it raises too)."""
    path = Path(path)
    sink = ItemSink(CorpusError, report, strict=True)
    docs: list[Document] = []
    seen: dict[str, str] = {}
    for where, row in iter_data_lines(path, sink, max_bytes):
        doc_id = _document_id(row, where, sink)
        if doc_id in seen:
            raise CorpusError(f"{where}: field 'id' {doc_id!r} appears twice (first at {seen[doc_id]})")
        _, text = _document_text(row, where, text_fields, sink)
        title = row.get("title")
        if not_finite(title):
            raise CorpusError(f"{where}: field 'title' must be a string or null, got {not_finite(title)}")
        if isinstance(title, int | float) and not isinstance(title, bool):
            title = str(title)
            sink.normalise("title as a number")
        if title is not None and not isinstance(title, str):
            raise CorpusError(f"{where}: field 'title' must be a string or null")
        extra = {k: v for k, v in row.items() if k not in (*ID_FIELDS, *text_fields, "title")}
        clash = next((k for k in extra if k in CHUNK_KEYS), None)
        if clash is not None:
            raise CorpusError(f"{where}: field {clash!r} is reserved for chunk metadata; rename it")
        problem = text_problem(row) or text_problem(list(row))
        if problem is not None:
            name = next((k for k, v in row.items() if text_problem(v) or text_problem(k)), "?")
            sink.unstorable(where, "text that cannot be stored", f"field {name!r} {problem}; document skipped")
            continue
        seen[doc_id] = where
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


def _plan(bank: CosineBank | None, chunked: list, report: IngestReport, docs_path) -> list[tuple[Document, Chunk]]:
    """The chunks the bank does not hold yet; documents without text or changed since are counted and skipped."""
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
    return new_chunks


def _rows(new_chunks: list[tuple[Document, Chunk]]) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    """The ids, texts and metadata of chunks to store."""
    return ([c.id for _, c in new_chunks], [c.text for _, c in new_chunks],
            [_chunk_metadata(d, c) for d, c in new_chunks])


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
    is skipped with a warning (see the module docstring). ``report.reading`` counts the documents read,
    normalised and skipped (a document whose text cannot be stored is skipped, the rest ingested).
    """
    started = time.perf_counter()
    bank_dir = Path(bank_dir)
    reading = ReadReport("documents")
    docs = read_documents(docs_path, text_fields, reading)
    if reading.skipped:
        logger.warning("%s: %s", docs_path, reading.summary())
    if not docs:
        if reading.read:
            reading.check(1.0, str(docs_path))  # raises: none of the documents read is usable
        raise CorpusError(f"{docs_path}: no documents")
    chunked = [(doc, chunk_text(doc.id, doc.text, size=size, overlap=overlap)) for doc in docs]
    report = IngestReport(bank=str(bank_dir), documents=len(docs), chunks=sum(len(c) for _, c in chunked),
                          reading=reading)

    bank = CosineBank.load(bank_dir, embedder) if (bank_dir / "manifest.json").exists() else None
    new_chunks = _plan(bank, chunked, report, docs_path)
    if bank is None:
        if not new_chunks:
            raise CorpusError(f"{docs_path}: no document has any text to ingest")
        try:
            bank = CosineBank.create(bank_dir, embedder, *_rows(new_chunks), batch_size=batch_size,
                                     progress=progress)
            report.added = len(new_chunks)
        except BankExists:  # another ingest created it first: what it does not hold yet is appended
            bank = CosineBank.load(bank_dir, embedder)
            report = IngestReport(bank=report.bank, documents=report.documents, chunks=report.chunks,
                                  reading=reading)
            new_chunks = _plan(bank, chunked, report, docs_path)
    if new_chunks and not report.added:
        report.added = bank.append(*_rows(new_chunks), batch_size=batch_size, progress=progress)
    report.bank_size = len(bank)
    report.seconds = time.perf_counter() - started
    logger.info("ingested %s into %s: %d documents, %d chunks, +%d added, %d unchanged, %d changed (skipped) "
                "in %.1fs", docs_path, bank_dir, report.documents, report.chunks, report.added, report.unchanged,
                len(report.changed_skipped), report.seconds)
    return report
