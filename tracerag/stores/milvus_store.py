"""Milvus behind the :class:`~.vector_store.VectorStore` protocol: the scale-out backend.

One ``pymilvus.MilvusClient`` speaks to Milvus Lite (an embedded engine in one local ``.db`` file, for
development and tests) and to a Milvus server (by URI; token from ``TRACERAG_MILVUS_TOKEN``). pymilvus is
imported lazily, so tracerag works without it until a ``milvus:`` URI is opened.

One store = one collection (default name ``tracerag``) with the fields:

    id        VARCHAR primary key (at most 1,024 UTF-8 bytes): the row's stable id
    vector    FLOAT_VECTOR(dim), stored L2-normalised
    hash      VARCHAR(64): sha256 of the vector bytes and canonical metadata JSON (idempotent re-ingest)
    metadata  JSON: the row's metadata object (at most 65,536 bytes of JSON)

Metadata is one JSON field rather than dynamic fields, so any metadata key (even ``id`` or ``vector``)
round-trips unchanged and filters address it as ``metadata["key"]``. The collection records
``tracerag.format``, ``tracerag.embedder`` and ``tracerag.dim`` twice, in its properties and as JSON in
its description (Milvus Lite 2.5 keeps no properties, Milvus Lite 3 no description); opening checks them
like the numpy manifest (a collection without them was not written by tracerag and is refused).

Scores: the metric is COSINE, for which Milvus returns the cosine similarity itself as the "distance"
(higher is better, in [-1, 1]), the same number the numpy bank computes (within float32 rounding).

Index by size: FLAT (exact) while the collection holds fewer than ``hnsw_threshold`` rows (100,000 by
default); an upsert that crosses it rebuilds the index as HNSW (``hnsw_m`` 16, ``hnsw_ef_construction``
200; all three are :meth:`MilvusStore.open` arguments) searched with ef = max(k, ``?ef=`` of the URI,
default 128). Clustered vectors (embeddings) are found exactly at ef 128 at 100k rows (recall@10 0.995 at
1M); uniformly random ones need ef 4096 at M=16 or ef 2048 at M=32 for recall@10 >= 0.98 at 100k rows,
M=32 and ef 8192 at 1M (BENCHMARKS.md). During the
rebuild (tens of seconds at 100k rows) the collection is released and searches from other clients fail,
so on a server build large stores before serving them; :meth:`MilvusStore.reindex` rebuilds with other
parameters. A bulk ingest through ``copy_store`` ends by reloading the collection
(:meth:`MilvusStore.refresh_index`), since a server serves segments sealed after the switch from an
interim index until then; other writers call it themselves after a bulk write (a reload makes the
collection unavailable for its duration, so upserts never do it unasked). An engine that refuses HNSW
gets AUTOINDEX, then FLAT, with a warning; :meth:`MilvusStore.describe` reports the index in use.

Words: :meth:`MilvusStore.word_index` keeps a BM25 index of the rows' metadata ``text`` next to the
collection (:mod:`.milvus_words`), written by every upsert and delete once it exists, so a hybrid
retriever never scans the store.

Writes: upserts go in batches of 1,000 rows; each batch first reads the stored hashes of its ids and
skips rows whose hash is unchanged, so re-ingesting the same data writes nothing; those lookups read at
Strong consistency. Every other read (search, get, scan, count) reads at the URI's level, Session by
default: this client sees its own writes at once, other clients' within Milvus' bounded staleness, and a
search does not wait for the newest timestamp as Strong does on every call (``?consistency=strong`` when
every client's acknowledged write must be seen). On Milvus Lite
each upsert/delete call that changed something ends with a flush (Lite searches unflushed rows slowly),
so prefer few large calls to many small ones there.

Checks on open (:meth:`MilvusStore.open`; cheap unless a writer was killed):

- a Milvus Lite file (a directory in Lite 3) is looked at before the engine opens it: a collection holding a
  write-ahead log the engine already applied to its files is the mark of a writer killed between the two
  steps of a flush, after which Lite serves those rows twice (same sequence number: its own dedup keeps
  both). An engine that fails to load a collection has its files checked (JSON, Parquet footers, index
  files' sizes): a damaged index file (derived data; Lite writes them in place, so a kill leaves them
  truncated) is deleted and the engine rebuilds it; a damaged file of the word index or its journal drops
  that collection, rebuilt from the rows; a damaged file of the rows themselves is one line naming it
  (:class:`StoreDamaged`: restore the store from a copy, or delete that file and ingest its rows again).
- duplicate ids, when a crash was seen (the mark above, or a write journal entry of a writer that is gone):
  every id is read once (id and hash), the count of distinct ids compared with the collection's own
  ``count(*)``, and each duplicated id rewritten as one copy (an upsert: newer than every copy). Which copy:
  identical copies are one; of differing copies the one whose stored hash matches its vector and
  metadata (a copy tracerag wrote whole); else the copy a lookup by id returns, since which write is newest
  cannot be told through pymilvus (Lite's duplicates share one sequence number). One warning names the
  store, the ids and the rule used. Searches and scans never return one id twice, repaired or not (a search
  that meets copies reads further). :meth:`MilvusStore.check` runs this scan on demand, mark or not.
- the word index (:mod:`.milvus_words`): rebuilt from the rows (one info line saying why) when a write
  journal entry shows a writer gone between the row upsert and the word-index update, when its row count
  differs from the store's, or when it is damaged or missing after an interrupted rewrite.

A repair that cannot be written (a full disk, a read-only user) is a warning, and the store opens for
reading as it is: searches drop repeated ids, and :meth:`MilvusStore.word_index` offers no stale index
(the hybrid retriever then indexes the rows in memory); the journal keeps the entry for the next open.

Errors are one line (:class:`StoreError` and its subclasses here), naming the file or URI and what to do,
never a pymilvus / gRPC / engine traceback (the engine's own error log lines for a failure tracerag
reports are dropped; ``logging.DEBUG`` on this module shows their first line): :class:`StoreLocked` (Milvus
Lite admits one process per store: the holder's pid and command line are read from ``/proc/locks``, else
from this user's ``/proc/*/fd``), :class:`StoreDamaged`, :class:`StoreDiskFull`, and
:class:`StoreWriteFailed` for an upsert or delete that failed, saying how far it got. A write that failed
while its rows were being sent **may still be applied**: Milvus Lite logs the rows before answering and
replays that log on the next open, and a server may apply a call whose answer was lost; undoing it would
need the old rows and space to write them, which a full disk does not give. So the message says the rows
may be applied, that upserts and deletes are idempotent (run it again), and the journal entry it leaves
makes the next open bring the word index in line with whatever rows landed. A write that failed before
sending any row (``applied == "none"``, e.g. its journal entry could not be written) changed nothing.

:meth:`MilvusStore.close` releases a Milvus Lite file: when the last store of this process on that file
closes, the embedded engine pymilvus started for it is stopped and its lock freed, so this process or
another can open the file again (pymilvus itself keeps the engine until the process exits).
"""

from __future__ import annotations

import errno
import importlib.util
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .vector_store import (
    TOKEN_ENV,
    Filter,
    ScanBatch,
    StoreError,
    StoreHit,
    StoreInfo,
    StoreRow,
    StoreTarget,
    UpsertReport,
    canonical_json,
    check_filter,
    check_queries,
    check_recorded,
    check_rows,
    parse_store_uri,
    row_hash,
)

__all__ = ["MilvusStore", "StoreDamaged", "StoreDiskFull", "StoreLocked", "StoreWriteFailed", "filter_expression",
           "ids_expression"]

logger = logging.getLogger(__name__)

FORMAT = "1"
_FORMAT_KEY, _EMBEDDER_KEY, _DIM_KEY = "tracerag.format", "tracerag.embedder", "tracerag.dim"
_DESCRIPTION_PREFIX = "tracerag vector store "
ID_MAX_BYTES = 1024
METADATA_MAX_BYTES = 65_536
BATCH_ROWS = 1_000
HNSW_THRESHOLD = 100_000
HNSW_BUILD = {"M": 16, "efConstruction": 200}
HNSW_MIN_EF = 128
INDEX_WAIT_S = 3600.0  # a 1M-row HNSW build took ~15 min on 2 cores
MAX_TOP_K = 16_384  # Milvus' limit on k per search
_FIELDS = ("id", "vector", "hash", "metadata")
_INSTALL_HINT = 'the Milvus backend needs pymilvus and milvus-lite: pip install -e ".[milvus]"'


class StoreLocked(StoreError):
    """Another process holds the Milvus Lite store (the engine admits one); ``holder`` says which, if found."""

    def __init__(self, message: str, *, path: str = "", holder: str = "") -> None:
        super().__init__(message)
        self.path, self.holder = path, holder


class StoreDamaged(StoreError):
    """A file of the Milvus Lite store cannot be read; ``file`` is it, ``kind`` what it holds ("rows", "index",
    "words", "manifest", "schema", "store")."""

    def __init__(self, message: str, *, path: str = "", file: str = "", kind: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.path, self.file, self.kind, self.detail = path, file, kind, detail


class StoreDiskFull(StoreError):
    """The disk holding the store (or the server's) is full."""

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class StoreWriteFailed(StoreError):
    """An upsert or delete failed. ``applied``: "none" (no row was sent), "maybe" (the failed call's rows may
    still land, e.g. when Milvus Lite replays its log on the next open) or "rows" (the rows changed, what
    follows them, e.g. the word index, did not); ``cause`` is the engine's error as one line."""

    def __init__(self, message: str, *, applied: str, cause: StoreError | None = None) -> None:
        super().__init__(message)
        self.applied, self.cause = applied, cause


def _pymilvus(lite: bool) -> Any:
    try:
        import pymilvus
    except ImportError:
        raise StoreError(_INSTALL_HINT) from None
    if lite and importlib.util.find_spec("milvus_lite") is None:
        raise StoreError(_INSTALL_HINT + " (milvus-lite is missing)")
    return pymilvus


class MilvusStore:
    """A :class:`~.vector_store.VectorStore` on one Milvus collection; see the module docstring."""

    def __init__(self, client: Any, target: StoreTarget, embedder_id: str, dim: int,
                 hnsw_threshold: int = HNSW_THRESHOLD, hnsw_build: dict[str, int] | None = None) -> None:
        self._client = client if isinstance(client, _OneLineErrors) else _OneLineErrors(client, target)
        self._target = target
        self._lite_key: str | None = None  # the Milvus Lite file this store holds open (see close())
        self._closed = False
        self._journal_found: Any = None  # the word index's write journal, once found (milvus_words)
        self._duplicates = False  # the check on open found duplicate ids it could not repair
        self._words_stale: str | None = None  # why the word index lags, when the check could not rebuild it
        self._writes_in_flight = False  # the journal held entries of writers still running, when last read
        self._collection = target.collection or "tracerag"
        self._read_level = target.consistency.capitalize()  # "Session": this client's writes are seen at once
        self._deleted_since_read = False  # pymilvus' session timestamp misses deletes: next read is Strong
        self._words_deleted = False  # the same for the word index's next read
        self._word_index: Any = None  # the companion word index, once found (milvus_words)
        self._embedder_id = embedder_id
        self._dim = dim
        self._hnsw_threshold = hnsw_threshold
        self._hnsw_build = dict(HNSW_BUILD if hnsw_build is None else hnsw_build)
        self._index = self._index_type()
        self._write_lock = threading.Lock()

    # -- opening ---------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        target: StoreTarget | str,
        *,
        embedder_id: str | None = None,
        dim: int | None = None,
        create: bool = False,
        hnsw_threshold: int = HNSW_THRESHOLD,
        hnsw_m: int = HNSW_BUILD["M"],
        hnsw_ef_construction: int = HNSW_BUILD["efConstruction"],
    ) -> MilvusStore:
        """Connect and open (``create=True``: create if missing) the collection, checking embedder and dim.

        ``hnsw_threshold``, ``hnsw_m`` and ``hnsw_ef_construction``: when the index switches to HNSW and how
        it is built (see the module docstring); the search breadth is the URI's ``?ef=``."""
        hnsw_build = _hnsw_params(hnsw_threshold, hnsw_m, hnsw_ef_construction)
        if isinstance(target, str):
            target = parse_store_uri(target)
        if target.backend not in ("milvus", "milvus-lite"):
            raise StoreError(f"{target}: not a milvus URI")
        client, crashed, lite_key = _connect(target, create)
        store = None
        try:
            name = target.collection or "tracerag"
            if not client.has_collection(name):
                if not create:
                    raise StoreError(f"{target}: no collection {name!r}; open it with create=True to make one")
                if not embedder_id or not dim:
                    raise StoreError(f"{target}: creating a store needs embedder_id and dim")
                _create_collection(client, name, embedder_id, dim)
            recorded_embedder, recorded_dim = _recorded(client, name, target)
            check_recorded(str(target), recorded_embedder, recorded_dim, embedder_id, dim)
            _load(client, name, target)
            store = cls(client, target, recorded_embedder, recorded_dim, hnsw_threshold, hnsw_build)
            store._lite_key, lite_key = lite_key, None  # the store releases the file from now on
            store._check_on_open(crashed)
            return store
        except BaseException:
            if store is not None:
                store.close()
            else:
                _disconnect(client, lite_key)
            raise

    # -- reading ---------------------------------------------------------------------------------

    def search(
        self, query_vectors: np.ndarray, k: int = 10, min_score: float | None = None, filter: Filter | None = None
    ) -> list[list[StoreHit]]:
        q = check_queries(query_vectors, self._dim)
        wanted = check_filter(filter)
        if k <= 0 or len(q) == 0:
            return [[] for _ in range(len(q))]
        if k > MAX_TOP_K:
            count = self.count()
            if count > MAX_TOP_K:
                raise ValueError(f"k={k} exceeds Milvus' limit of {MAX_TOP_K} results per query")
            k = max(count, 1)
        params: dict[str, Any] = {"metric_type": "COSINE", "params": {}}
        if self._index == "HNSW":
            params["params"]["ef"] = max(k, self._target.ef or HNSW_MIN_EF)
        asked, floor = k, -np.inf if min_score is None else float(min_score)
        if self._duplicates:  # ids stored twice that the check on open could not repair: read enough to drop them
            k = min(2 * k, MAX_TOP_K)
        while True:
            results = self._client.search(
                self._collection,
                data=q.tolist(),
                limit=k,
                filter=filter_expression(wanted),
                output_fields=["metadata"],
                search_params=params,
                consistency_level=self._level(),
            )
            found, short = [], False
            for hits in results:
                kept: dict[str, StoreHit] = {}  # an id the engine holds twice (a crash) is served once, at its best
                copies = 0
                for h in hits:
                    if float(h["distance"]) < floor:
                        continue
                    if h["id"] in kept:
                        copies += 1
                    else:
                        kept[h["id"]] = StoreHit(h["id"], float(h["distance"]), h["entity"].get("metadata") or {})
                found.append(list(kept.values())[:asked])
                # copies took places that other rows may fill, when the engine had more to give
                short = short or (copies > 0 and len(kept) < asked and len(hits) == k
                                  and float(hits[-1]["distance"]) >= floor)
            if not short or k >= MAX_TOP_K:
                break
            if not self._duplicates:
                logger.warning("%s: the engine holds some ids more than once (a writer killed mid-flush?): searches "
                               "read past the copies; MilvusStore.check() repairs them", self._target)
                self._duplicates = True
            k = min(2 * k, MAX_TOP_K)
        if (words := self._word_index) is not None and hasattr(words, "expect"):
            words.expect([h.id for hits in found for h in hits])  # a hybrid retriever asks their BM25 next
        return found

    def get(self, ids: Sequence[str]) -> list[StoreRow]:
        ids = [x for x in ids if isinstance(x, str) and x and _expressible(x)]  # no other id can be stored
        found: dict[str, StoreRow] = {}
        for start in range(0, len(ids), BATCH_ROWS):
            batch = ids[start : start + BATCH_ROWS]
            for r in self._client.query(self._collection, filter=ids_expression(batch),
                                        output_fields=["vector", "metadata"], consistency_level=self._level()):
                found[r["id"]] = StoreRow(r["id"], np.asarray(r["vector"], dtype=np.float32), r.get("metadata") or {})
        return [found[x] for x in ids if x in found]

    def scan(self, batch_size: int = 1000, *, with_vectors: bool = False) -> Iterator[ScanBatch]:
        """Every row in primary-key order, ``batch_size`` rows per round trip: each page is the rows after the
        last id read, written as a string literal. (pymilvus' query iterator writes that id into its
        expression unescaped, so a stored id holding a quote broke every scan and `store copy`.)"""
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        fields = ["metadata", "vector"] if with_vectors else ["metadata"]
        limit, last = min(batch_size, MAX_TOP_K), None
        if self._level() in ("Strong", "Session"):
            # iterator-mode pages carry no consistency level (pymilvus sends none with them): one Strong read
            # first brings the server up to every write acknowledged before the scan
            self._client.query(self._collection, filter="", output_fields=["count(*)"], consistency_level="Strong")
        while True:
            rows = self._client.query(self._collection, filter="" if last is None else f"id > {_string_literal(last)}",
                                      limit=limit, output_fields=fields, iterator="True", reduce_stop_for_best="True")
            if not rows:
                return
            full = len(rows) == limit
            rows.sort(key=lambda r: r["id"].encode("utf-8"))  # the server's order: UTF-8 bytes
            last = rows[-1]["id"]
            rows = [r for i, r in enumerate(rows) if i == 0 or r["id"] != rows[i - 1]["id"]]  # ids held twice: once
            vectors = (np.asarray([r["vector"] for r in rows], dtype=np.float32).reshape(len(rows), self._dim)
                       if with_vectors else None)
            yield ScanBatch([r["id"] for r in rows], [r.get("metadata") or {} for r in rows], vectors)
            if not full:
                return

    def count(self) -> int:
        rows = self._client.query(self._collection, filter="", output_fields=["count(*)"],
                                  consistency_level=self._level())
        return int(rows[0]["count(*)"])

    def describe(self) -> StoreInfo:
        return StoreInfo(self._target.backend, self._target.uri, self._embedder_id, self._dim,
                         self._collection, self._index)

    # -- writing ---------------------------------------------------------------------------------

    def upsert(
        self, ids: Sequence[str], vectors: np.ndarray, metadata: Sequence[dict[str, Any]] | None = None
    ) -> UpsertReport:
        ids, vectors, meta = check_rows(ids, vectors, metadata, self._dim)
        for x, m in zip(ids, meta, strict=True):
            _check_sizes(x, m)
        written = 0
        with self._write_lock:
            words = self._words()
            write = _Write(self, "upsert", len(ids), words)
            try:
                for start in range(0, len(ids), BATCH_ROWS):
                    batch = range(start, min(start + BATCH_ROWS, len(ids)))
                    stored = {r["id"]: r["hash"] for r in self._client.query(
                        self._collection, filter=ids_expression([ids[i] for i in batch]), output_fields=["hash"],
                        consistency_level="Strong")}
                    rows = []
                    for i in batch:
                        digest = row_hash(vectors[i], meta[i])
                        if stored.get(ids[i]) != digest:
                            rows.append({"id": ids[i], "vector": vectors[i].tolist(), "hash": digest,
                                         "metadata": meta[i]})
                    if rows:
                        write.rows_changing()  # the journal entry goes first: a crash from here on is found
                        self._client.upsert(self._collection, rows)
                        written = write.done = written + len(rows)
                        if words is not None:
                            write.stage = "updating the word index"
                            words.update([(r["id"], r["metadata"]) for r in rows])
                if written:
                    write.stage = "flushing"
                    self._seal()
                    write.stage = "indexing"
                    self.ensure_index()
            except BaseException as e:
                raise write.failed(e) from None
            write.finish()
        skipped = len(ids) - written
        logger.info("%s: upserted %d rows, %d skipped as unchanged", self._target, written, skipped)
        return UpsertReport(written, skipped)

    def delete(self, ids: Sequence[str]) -> int:
        ids = sorted({x for x in ids if isinstance(x, str) and x and _expressible(x)})
        deleted = 0
        with self._write_lock:
            words = self._words()
            write = _Write(self, "delete", len(ids), words)
            try:
                for start in range(0, len(ids), BATCH_ROWS):
                    present = [r["id"] for r in self._client.query(
                        self._collection, filter=ids_expression(ids[start : start + BATCH_ROWS]),
                        output_fields=["id"], consistency_level="Strong")]
                    if present:
                        write.rows_changing()
                        self._client.delete(self._collection, filter=ids_expression(present))
                        deleted = write.done = deleted + len(present)
                        self._deleted_since_read = self._words_deleted = True
                        if words is not None:
                            write.stage = "updating the word index"
                            words.delete(present)
                if deleted:
                    write.stage = "flushing"
                    self._seal()
            except BaseException as e:
                raise write.failed(e) from None
            write.finish()
        return deleted

    def _level(self) -> str:
        """The consistency of the next read: the URI's, but Strong once after a delete, which pymilvus does
        not count in the session's timestamp (a real server then still showed the deleted rows)."""
        if self._deleted_since_read:
            self._deleted_since_read = False
            return "Strong"
        return self._read_level

    def _seal(self, always: bool = False) -> None:
        """Milvus Lite: flush after a write. Lite scans unflushed (growing) rows slowly (measured: 120 ms
        per query over 3,000 unflushed 512-d rows, 8 ms once flushed). A server seals segments itself and
        advises against frequent flushes, so it is flushed only before an index build or reload (``always``)."""
        if always or self._target.backend == "milvus-lite":
            self._client.flush(self._collection)
            if self._target.backend == "milvus-lite" and (words := self._words()) is not None:
                words.seal()
                if hasattr(words, "settle"):
                    words.settle()

    # -- the word index --------------------------------------------------------------------------

    def word_index(self, text_key: str = "text", *, layout: str | None = None) -> Any:
        """The BM25 index of the rows' metadata ``text`` kept next to the collection (:mod:`.milvus_words`),
        created and filled from one scan the first time it is asked for, rebuilt when it lags the rows (see
        the module docstring, "Checks on open"), then written with every upsert and delete. None for another
        ``text_key`` (the hybrid retriever then builds its index in memory), and None while it lags and cannot
        be rebuilt (a full disk). ``layout`` ("bm25" / "postings") forces one."""
        from .milvus_words import TEXT_KEY, open_words

        if text_key != TEXT_KEY:
            return None
        with self._write_lock:
            try:
                words, created = open_words(self._client, self._collection, _string_literal, self._words_level,
                                            create=True, layout=layout)
                if created:
                    rows = self._fill_words(words)
                    logger.info("%s: word index (%s) built over %d rows", self._target, words.kind, rows)
                    self._words_stale = None
                    self._clear_journal(self._unfinished())  # a fresh build reflects every write
                else:
                    unfinished = self._unfinished()
                    why = self._words_stale or self._words_lag(words, unfinished)
                    if why:
                        words = self._rebuild_words(words.kind, why)
                        self._clear_journal(unfinished)
            except StoreError as e:
                if self._words_stale is None:
                    raise
                logger.warning("%s: the word index lags the rows (%s) and cannot be rebuilt now (%s): none is "
                               "offered, the hybrid retriever indexes the rows in memory", self._target,
                               self._words_stale, e)
                return None
            self._word_index = words
            return words

    def _words(self) -> Any:
        """The word index when one exists (another client may have made it since this store opened)."""
        from .milvus_words import open_words

        if self._word_index is None:
            self._word_index = open_words(self._client, self._collection, _string_literal, self._words_level)[0]
        return self._word_index

    def _journal(self, create: bool = False) -> Any:
        """The word index's write journal (:class:`~.milvus_words.WriteJournal`); None when there is none and
        ``create`` is False (a store that never had a word index needs none)."""
        from .milvus_words import WriteJournal

        if self._journal_found is None:
            self._journal_found = WriteJournal.open(self._client, self._collection, _string_literal, create=create)
        return self._journal_found

    def _unfinished(self) -> list[Any]:
        """The journal's entries whose writers are gone (Milvus Lite admits one process: all but this one's);
        notes whether other writes are in flight (see :meth:`_words_lag`)."""
        journal = self._journal()
        if journal is None:
            self._writes_in_flight = False
            return []
        pending = journal.pending()
        gone = [p for p in pending if p.gone(self._target.backend == "milvus-lite")]
        self._writes_in_flight = len(gone) < len(pending)
        return sorted(gone, key=lambda p: p.started)

    def _clear_journal(self, entries: Sequence[Any]) -> None:
        if entries:
            self._journal().clear([p.key for p in entries])

    def _words_lag(self, words: Any, unfinished: Sequence[Any]) -> str | None:
        """Why the word index does not reflect the rows, or None: a write journal entry of a writer that is
        gone, else a row count that differs from the store's (writers predating the journal; not compared while
        a write is in flight, which differs for as long as it runs)."""
        if unfinished:
            more = f" (and {len(unfinished) - 1} more)" if len(unfinished) > 1 else ""
            return (f"{unfinished[0].describe()}{more} never finished: its writer was killed or failed between "
                    "the row upsert and the word-index update")
        if self._writes_in_flight:
            return None
        held, rows = words.count(), self._strong_count()
        return f"it held {held} rows, the store {rows}" if held != rows else None

    def _rebuild_words(self, layout: str, why: str) -> Any:
        """Drop the word index of ``layout`` (and a rewrite left half done) and build it again from the rows."""
        from .milvus_words import BM25_SUFFIX, POSTINGS_SUFFIX, REWRITE_SUFFIX, open_words

        names = ([self._collection + BM25_SUFFIX, self._collection + BM25_SUFFIX + REWRITE_SUFFIX] if layout == "bm25"
                 else [self._collection + POSTINGS_SUFFIX])
        for name in names:
            if self._client.has_collection(name):
                self._client.drop_collection(name)
        self._word_index = None
        words, _ = open_words(self._client, self._collection, _string_literal, self._words_level, create=True,
                              layout=layout)
        if words is None:  # the layout is not this engine's: the one it takes
            words, _ = open_words(self._client, self._collection, _string_literal, self._words_level, create=True)
        rows = self._fill_words(words)
        logger.info("%s: word index (%s) rebuilt over %d rows: %s", self._target, words.kind, rows, why)
        self._word_index, self._words_stale = words, None
        return words

    def _fill_words(self, words: Any) -> int:
        rows = 0
        for batch in self.scan(BATCH_ROWS):
            words.update(list(zip(batch.ids, batch.metadata, strict=True)), replace=False)
            rows += len(batch)
        words.seal()
        return rows

    # -- the check on open -----------------------------------------------------------------------

    def _check_on_open(self, crashed: dict[str, str]) -> None:
        """Duplicate ids and a word index that lags the rows, found and repaired (module docstring, "Checks on
        open"). ``crashed``: collection name -> the mark on disk of a writer killed mid-flush (Milvus Lite)."""
        lost_journal = self._open_derived(self._journal)
        unfinished = self._unfinished()
        gone = self._words_lag(None, unfinished) if unfinished else None
        repaired = 0
        if crashed.get(self._collection) or gone:
            try:
                repaired = self._repair_duplicates(crashed.get(self._collection) or gone or "")
            except StoreError as e:
                self._duplicates = True
                logger.warning("%s: checking for ids stored twice failed (%s); searches and scans skip repeated ids",
                               self._target, e)
        damaged = self._open_derived(self._words)
        words = self._word_index
        layout = (words.kind if words is not None
                  else (damaged and damaged["kind"]) or next((p.words for p in unfinished if p.words), None))
        if not layout:
            return
        reason = next((r for r in (damaged and damaged["why"], lost_journal and lost_journal["why"], gone,
                                   *(m for name, m in crashed.items() if name != self._collection),
                                   repaired and f"{repaired} ids stored more than once were rewritten") if r), None)
        try:
            reason = reason or self._words_lag(words, ())
            if reason:
                self._rebuild_words(layout, reason)
            self._clear_journal(unfinished)
        except StoreError as e:
            self._words_stale = reason or "it could not be checked"
            logger.warning("%s: the word index lags the rows (%s) and could not be rebuilt (%s); the store is open "
                           "as it is and the next open tries again", self._target, self._words_stale, e)

    def check(self) -> int:
        """The check on open in full, whatever the marks say: every id read once and those stored more than
        once rewritten as one copy (as on open), then the word index compared with the rows and rebuilt when it
        lags. For a crash that left no mark the check on open can read (a client other than tracerag opened the
        store since and flushed what Milvus Lite replayed, or an engine version that leaves other marks).
        Returns how many ids were stored more than once."""
        with self._write_lock:
            repaired = self._repair_duplicates("found by check()")
            words = self._words()
            if words is not None:
                unfinished = self._unfinished()
                why = (f"{repaired} ids stored more than once were rewritten" if repaired else None) or self._words_lag(
                    words, unfinished)
                if why:
                    self._rebuild_words(words.kind, why)
                self._clear_journal(unfinished)
        return repaired

    def _open_derived(self, step: Callable[[], Any]) -> dict[str, str] | None:
        """Run ``step`` (finding the word index or its journal); a damaged file in one of those collections
        (derived from the rows) drops that collection. Returns {"kind": its word index layout or "",
        "why": ...} when it dropped one, else None."""
        from .milvus_words import BM25_SUFFIX, JOURNAL_SUFFIX, POSTINGS_SUFFIX

        dropped = None
        for _ in range(4):
            try:
                step()
                return dropped
            except StoreDamaged as e:
                name = _collection_of(e.file)
                suffix = name[len(self._collection):] if name and name.startswith(self._collection + "__") else ""
                if not suffix:
                    raise
                self._client.drop_collection(name)
                self._word_index = self._journal_found = None
                kind = "bm25" if suffix.startswith(BM25_SUFFIX) else "postings" if suffix == POSTINGS_SUFFIX else ""
                what = "its write journal" if suffix == JOURNAL_SUFFIX else "it"
                logger.warning("%s: dropped %s: %s cannot be read (%s); it is rebuilt from the rows", self._target,
                               name, e.file, e.detail)
                dropped = {"kind": kind or (dropped or {}).get("kind", ""),
                           "why": f"{what} was damaged ({e.file} could not be read)"}
        step()
        return dropped

    def _repair_duplicates(self, why: str) -> int:
        """Find ids stored more than once (one read of every id and hash), rewrite each as one copy (see the
        module docstring for which), and warn naming the store; returns how many ids were rewritten."""
        held = self._id_counts()
        total = self._strong_count()
        copies = {x: n for x, n in held.items() if n > 1}
        extra = sum(n - 1 for n in copies.values())
        if sum(held.values()) != total:  # the collection's own count against a read of every row
            logger.warning("%s: count(*) says %d rows but a read of every id found %d (%d distinct): the engine "
                           "serves rows its count misses, or the reverse", self._target, total, sum(held.values()),
                           len(held))
        if not copies:
            return 0
        ids = sorted(copies)
        rules = {"identical": 0, "intact": 0, "lookup": 0}
        for start in range(0, len(ids), 100):
            part = ids[start : start + 100]
            held: dict[str, list[dict[str, Any]]] = {}
            # "id in [...]" finds one copy per id; equality finds each
            where = " or ".join(f"id == {_string_literal(x)}" for x in part)
            for r in self._client.query(self._collection, filter=where, consistency_level="Strong",
                                        output_fields=["id", "vector", "hash", "metadata"]):
                held.setdefault(r["id"], []).append(r)
            looked_up = {r["id"]: r["hash"] for r in self._client.query(
                self._collection, filter=ids_expression(part), output_fields=["hash"], consistency_level="Strong")}
            rows = []
            for x, found in held.items():
                kept, rule = _one_copy(found, looked_up.get(x))
                rules[rule] += 1
                vector = np.asarray(kept["vector"], dtype=np.float32)
                metadata = kept.get("metadata") or {}
                rows.append({"id": x, "vector": vector.tolist(), "hash": row_hash(vector, metadata),
                             "metadata": metadata})
            if rows:
                self._client.upsert(self._collection, rows)  # newer than every copy: the engine keeps this one
        self._seal()
        left = self._strong_count() - (total - extra)
        shown = ", ".join(repr(x) for x in ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        how = "; ".join(f"{n} {_RULES[rule]}" for rule, n in rules.items() if n)
        logger.warning("%s: %d ids were stored more than once (%d extra rows; %s): %s; kept one copy of each: %s%s",
                       self._target, len(ids), extra, why, shown, how,
                       f"; {left} extra rows remain, searches and scans skip them" if left > 0 else "")
        self._duplicates = left > 0
        return len(ids)

    def _id_counts(self) -> dict[str, int]:
        """Each stored id -> how many copies the engine holds, from one read of every id (pages in id order;
        the copies of a page's last id may straddle two pages, so they are counted on their own)."""
        counts: dict[str, int] = {}
        last, straddling = None, []
        while True:
            rows = self._client.query(self._collection,
                                      filter="" if last is None else f"id > {_string_literal(last)}",
                                      limit=MAX_TOP_K, output_fields=["id"], iterator="True",
                                      reduce_stop_for_best="True", consistency_level="Strong")
            for r in rows:
                counts[r["id"]] = counts.get(r["id"], 0) + 1
            if len(rows) < MAX_TOP_K:
                break
            last = max((r["id"] for r in rows), key=lambda x: x.encode("utf-8"))
            straddling.append(last)
        for x in straddling:
            counts[x] = len(self._client.query(self._collection, filter=f"id == {_string_literal(x)}",
                                               output_fields=["id"], consistency_level="Strong"))
        return counts

    def _words_level(self) -> str:
        if self._words_deleted:
            self._words_deleted = False
            return "Strong"
        return self._read_level

    def _strong_count(self) -> int:
        rows = self._client.query(self._collection, filter="", output_fields=["count(*)"], consistency_level="Strong")
        return int(rows[0]["count(*)"])

    # -- the index -------------------------------------------------------------------------------

    def _index_type(self) -> str:
        try:
            return str(self._client.describe_index(self._collection, "vector").get("index_type", "FLAT"))
        except Exception:  # no index description (should not happen for our collections)
            return "FLAT"

    def ensure_index(self, hnsw_threshold: int | None = None) -> str:
        """Rebuild FLAT as HNSW once the collection holds ``hnsw_threshold`` rows (default: the store's);
        returns the index in use. Upserts call it; call it yourself to build the index at a time of your
        choosing (see the module docstring on searches during the rebuild)."""
        threshold = self._hnsw_threshold if hnsw_threshold is None else hnsw_threshold
        if self._index == "FLAT" and self.count() >= threshold:
            self._seal(always=True)  # rows still growing would be sealed later onto the interim index
            self._index = rebuild_index(self._client, self._collection, str(self._target), self._hnsw_build)
        return self._index

    def reindex(self, m: int | None = None, ef_construction: int | None = None) -> str:
        """Rebuild the vector index now as HNSW with these parameters (default: the store's), whatever the
        row count; returns the index in use. The collection is unavailable while it builds."""
        self._hnsw_build = _hnsw_params(self._hnsw_threshold, m or self._hnsw_build["M"],
                                        ef_construction or self._hnsw_build["efConstruction"])
        with self._write_lock:
            self._seal(always=True)
            self._index = rebuild_index(self._client, self._collection, str(self._target), self._hnsw_build)
        return self._index

    def refresh_index(self) -> bool:
        """Seal every row, wait for the index to cover it, then load the collection again, so every segment
        is searched through the index and its ``ef``; returns whether it reloaded. Only a server's HNSW needs
        it (FLAT is exact; Milvus Lite indexes each segment as it seals it): Milvus 2.3.5 kept serving
        segments sealed after the switch to HNSW from its interim index (recall 0.28 on uniform vectors at any
        ef; 0.995 at ef 2048 once reloaded). ``copy_store`` (so ``tracerag store copy``, ``ingest --store``,
        ``build-bank --store``) calls it; after other bulk writes call it yourself. The collection is
        unavailable while it loads: on a large serving collection, ingest into a new one and switch an alias."""
        if self._index == "FLAT" or self._target.backend == "milvus-lite":  # Lite indexes each segment it seals
            return False
        self._seal(always=True)
        _wait_for_index(self._client, self._collection, str(self._target))
        self._client.release_collection(self._collection)
        self._client.load_collection(self._collection)
        return True

    def close(self) -> None:
        """Close the client; the last store of this process on a Milvus Lite file also stops the engine that
        serves it, freeing the file's lock for this process or another. Closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        key, self._lite_key = self._lite_key, None
        _disconnect(self._client, key)

    def __enter__(self) -> MilvusStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __deepcopy__(self, memo: dict) -> MilvusStore:
        return self

    def __repr__(self) -> str:
        return f"MilvusStore({self._target.uri!r}, embedder={self._embedder_id!r}, dim={self._dim})"


# ---------------------------------------------------------------------------------------------
# Connecting and the collection's schema.


class _Write:
    """One upsert or delete call: its write journal entry (begun before the first row changes, ended once the
    word index has them too) and, when it fails, the one-line error saying how far it got."""

    def __init__(self, store: MilvusStore, op: str, total: int, words: Any) -> None:
        self.store, self.op, self.total, self.words = store, op, total, words
        self.key: str | None = None
        self.stage = "reading the stored rows"  # what it was doing; "sending rows" once rows may change
        self.done = 0  # rows changed by calls that returned

    def rows_changing(self) -> None:
        if self.key is None and self.words is not None:
            self.stage = "recording the write in the word index's journal"
            self.key = self.store._journal(create=True).begin(self.words.kind)
        self.stage = "sending rows"

    def finish(self) -> None:
        if self.key is None:
            return
        try:
            self.store._journal().end(self.key)
        except StoreError as e:  # the write is done; the entry left behind costs the next open a rebuild
            logger.warning("%s: %s done, but its journal entry could not be removed (%s): the next open rebuilds "
                           "the word index", self.store._target, self.op, e)

    def failed(self, e: BaseException) -> BaseException:
        from .milvus_words import WriteJournal

        if self.key is not None:
            WriteJournal.abandon(self.key)  # the entry stays: the next open rebuilds the word index
        if not isinstance(e, StoreError):
            return e  # not the engine's (an interrupt, a bug): as it is
        where, reason, op = self.store._target, getattr(e, "reason", str(e)), self.op
        words = " and rebuilds the word index from them" if self.key is not None else ""
        if self.stage == "sending rows":
            what = "rows" if op == "upsert" else "deletes"
            return StoreWriteFailed(
                f"{where}: {op} failed after {self.done} of {self.total} rows ({reason}): the {what} of the failed "
                f"call may still be applied (Milvus Lite replays its log when the store is next opened); {op}s are "
                f"idempotent, so run it again{'; the next open checks the rows' + words if words else ''}",
                applied="maybe", cause=e)
        if self.done == 0 and self.key is None:
            return StoreWriteFailed(f"{where}: {op} failed before changing any row, while {self.stage} ({reason})",
                                    applied="none", cause=e)
        return StoreWriteFailed(
            f"{where}: {op} changed {self.done} rows, then failed while {self.stage} ({reason}); the rows stay "
            f"changed{'; the next open checks them' + words if words else ''}", applied="rows", cause=e)


_RULES = {"identical": "identical copies", "intact": "whose hash matches its content (the copy written whole)",
          "lookup": "the copy a lookup by id returns (which write is newest cannot be told)"}


def _one_copy(copies: list[dict[str, Any]], looked_up: str | None) -> tuple[dict[str, Any], str]:
    """The copy of a duplicated id to keep, and the rule that chose it (see the module docstring)."""
    if len({c["hash"] for c in copies}) == 1:
        return copies[0], "identical"
    intact = [c for c in copies
              if c["hash"] == row_hash(np.asarray(c["vector"], dtype=np.float32), c.get("metadata") or {})]
    if len({c["hash"] for c in intact}) == 1:
        return intact[0], "intact"
    return next((c for c in copies if c["hash"] == looked_up), copies[0]), "lookup"


class _OneLineErrors:
    """The client, whose server failures (connection lost, collection dropped, a server error, a full disk, a
    damaged file) are one :class:`StoreError` line naming the store (see :func:`_translate`), never a pymilvus /
    gRPC stack trace. Argument mistakes (a TypeError of ours) pass unchanged."""

    def __init__(self, client: Any, target: StoreTarget) -> None:
        self._client, self._target = client, target

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                with _engine_call():
                    return attr(*args, **kwargs)
            except StoreError:
                raise
            except Exception as e:
                if not _server_failure(e):
                    raise
                collection = args[0] if args and isinstance(args[0], str) else None
                raise _translate(self._target, name, e, collection) from None

        return call


def _server_failure(e: BaseException) -> bool:
    module = type(e).__module__ or ""
    return (module.startswith(("pymilvus", "grpc", "milvus_lite")) or isinstance(e, ConnectionError | TimeoutError)
            or _disk_full(e, ""))


def _engine_message(e: BaseException) -> str:
    """The engine's own words, one line (pymilvus' ``message``, not its ``<MilvusException: (code=...`` repr)."""
    message = getattr(e, "message", None)
    return _one_line(message if isinstance(message, str) and message else e)


def _disk_full(e: BaseException | None, text: str) -> bool:
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        text += " " + str(e)
        e = e.__cause__ or e.__context__
    return any(w in text for w in ("No space left on device", "[Errno 28]", "Disk quota exceeded"))


_DAMAGE_WORDS = re.compile(r"parquet|magic bytes|\bEOF\b|corrupt|failed to load|not valid JSON|truncat|array header|"
                           r"ArrowInvalid|Invalid IPC|unexpected end|read_index|Expected to read|JSONDecode", re.I)


def _translate(target: StoreTarget, op: str, e: BaseException, collection: str | None = None) -> StoreError:
    """An engine failure as one line: a full disk, a damaged Milvus Lite file (found by :func:`_lite_damage`,
    looking first at ``collection``'s files), else the engine's message. ``reason`` on the error is that
    message without the store's name."""
    reason = _engine_message(e)
    if _disk_full(e, reason):
        place = (f"the disk holding {target.location}" if target.backend == "milvus-lite"
                 else "the Milvus server reports its disk full")
        error: StoreError = StoreDiskFull(f"{target}: {op} failed: disk full ({place}): free space, then retry",
                                          path=target.location)
        reason = "disk full"
    elif target.backend == "milvus-lite" and _DAMAGE_WORDS.search(reason) and (
            found := _lite_damage(Path(target.location), collection)) is not None:
        error = _damaged(target, *found)
        reason = error.detail
    else:
        error = StoreError(f"{target}: {op} failed: {reason}")
    logger.debug("%s: %s failed in the engine: %s", target, op, reason)
    error.reason = reason  # type: ignore[attr-defined]
    return error


def _connect(target: StoreTarget, create: bool) -> tuple[_OneLineErrors, dict[str, str], str | None]:
    """(the client, marks of a writer killed mid-flush by collection (Milvus Lite), the Lite file's key when
    this store holds it open: pass it to :func:`_disconnect`)."""
    pymilvus = _pymilvus(lite=target.backend == "milvus-lite")
    if target.backend == "milvus-lite":
        return _connect_lite(pymilvus, target, create)
    try:
        with _engine_call():
            client = pymilvus.MilvusClient(uri=target.location, token=os.environ.get(TOKEN_ENV, ""))
    except Exception as e:
        hint = f"; the server refused the credentials: check {TOKEN_ENV}" if _refused_credentials(e) else ""
        raise StoreError(f"{target}: cannot connect to Milvus: {_engine_message(e)}{hint}") from None
    return _OneLineErrors(client, target), {}, None


def _disconnect(client: Any, lite_key: str | None) -> None:
    try:
        client.close()
    except StoreError as e:
        logger.debug("closing the client: %s", e)
    finally:
        if lite_key is not None:
            _release_lite(lite_key)


def _load(client: Any, name: str, target: StoreTarget) -> None:
    """Load the collection (a fresh client, or process, finds collections released). On Milvus Lite a damaged
    index file (derived from the rows, written in place: a kill leaves it truncated) is deleted, and the
    engine builds it again from the rows."""
    for _ in range(8):
        if _load_state(client, name) == "Loaded":
            return
        try:
            client.load_collection(name)
            return
        except StoreDamaged as e:
            if e.kind != "index":
                raise
            os.remove(e.file)
            logger.warning("%s: deleted the damaged index file %s (%s; a writer killed while saving it?): the engine "
                           "builds it again from the rows", target, e.file, e.detail)
    client.load_collection(name)


# ---------------------------------------------------------------------------------------------
# Milvus Lite: one process per file, the engine in this process, its files checked when it fails.

_LITE_LOCK = threading.Lock()
_LITE_USERS: dict[str, int] = {}  # Lite file -> stores of this process holding it open
_LITE_OWNED: set[str] = set()  # Lite files whose engine a store of this process started (so may stop)


def _lite_servers() -> dict[str, Any] | None:
    """pymilvus' embedded engines by file (milvus_lite's server manager), None when not reachable."""
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:
        return None
    servers = getattr(server_manager_instance, "_servers", None)
    return servers if isinstance(servers, dict) else None


def _connect_lite(pymilvus: Any, target: StoreTarget, create: bool) -> tuple[_OneLineErrors, dict[str, str], str]:
    path = Path(target.location)
    if not path.exists():
        if not create:
            raise StoreError(f"{target}: no Milvus Lite file {path}; open it with create=True to make one")
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.is_dir():
        raise StoreDamaged(f"{path}: not a Milvus Lite store (a file, where Milvus Lite 3 keeps a directory: written "
                           f"by Milvus Lite 2, or damaged): restore it from a copy, or delete {path} to start a new "
                           "store", path=str(path), file=str(path), kind="store", detail="not a directory")
    key = os.path.abspath(path)
    with _LITE_LOCK:
        servers = _lite_servers()
        running = servers is not None and key in servers
        crashed = {} if running else _lite_crash_marks(path, target.collection or "tracerag")
        caught: list[BaseException] = []
        try:
            with _engine_call(caught):
                client = pymilvus.MilvusClient(str(path))
        except Exception as e:
            if not running and servers is not None and key in servers:  # the engine started, the client did not
                _LITE_OWNED.add(key)
                _LITE_USERS[key] = 1
                _release_lite(key, locked=True)
            raise _lite_open_error(target, path, caught[-1] if caught else e) from None
        if not running and servers is not None and key in servers:
            _LITE_OWNED.add(key)
        _LITE_USERS[key] = _LITE_USERS.get(key, 0) + 1
    return _OneLineErrors(client, target), crashed, key


def _release_lite(key: str, *, locked: bool = False) -> None:
    """One store of this process closed the file: the last one stops the engine it started, freeing the lock.
    ``locked``: the caller holds ``_LITE_LOCK``."""
    if not locked:
        with _LITE_LOCK:
            _release_lite(key, locked=True)
        return
    users = _LITE_USERS.get(key, 0) - 1
    if users > 0:
        _LITE_USERS[key] = users
        return
    _LITE_USERS.pop(key, None)
    if key not in _LITE_OWNED:
        return
    _LITE_OWNED.discard(key)
    try:
        from milvus_lite.server_manager import server_manager_instance

        with _engine_call():
            server_manager_instance.release_server(key)
    except Exception as e:  # the engine stops at process exit anyway
        logger.warning("%s: stopping the Milvus Lite engine failed (%s); the file stays locked until this "
                       "process exits", key, _one_line(e))


def _lite_open_error(target: StoreTarget, path: Path, e: BaseException) -> StoreError:
    """Why the embedded engine did not start (pymilvus says only "Open local milvus failed"), as one line."""
    holder = _lock_holder(path)
    if holder is not None:
        if f"pid {os.getpid()}: this process" in holder:  # e.g. a milvus_lite.MilvusLite of its own on the file
            return StoreLocked(f"{target}: locked by this process ({holder}) outside tracerag's stores: close that "
                               "engine, then retry", path=str(path), holder=holder)
        return StoreLocked(f"{target}: locked by another process ({holder}): Milvus Lite lets one process open a "
                           "store at a time; close the store there (or stop that process) and retry, or serve the "
                           "file with a Milvus server", path=str(path), holder=holder)
    if _disk_full(e, ""):
        return StoreDiskFull(f"{target}: cannot open {path}: disk full: free space on that disk, then retry",
                             path=str(path))
    if isinstance(e, PermissionError):
        return StoreError(f"{target}: cannot open {path}: permission denied ({_one_line(e)})")
    if isinstance(e, NotADirectoryError | FileExistsError):
        return StoreDamaged(f"{path}: not a Milvus Lite store (a file where a directory belongs): restore it from a "
                            f"copy, or delete it to start a new store", path=str(path), file=str(path), kind="store",
                            detail=_one_line(e))
    found = _lite_damage(path)
    if found is not None:
        return _damaged(target, *found)
    return StoreError(f"{target}: cannot open the Milvus Lite file {path}: {_engine_message(e)}")


def _lock_holder(path: Path) -> str | None:
    """None when no process holds the Lite file's lock (Milvus Lite ``flock``s ``<file>/LOCK``), else who does:
    "pid N: command line" from ``/proc/locks``, else from this user's ``/proc/*/fd``, else "pid unknown"."""
    lock = path / "LOCK"
    try:
        import fcntl

        fd = os.open(lock, os.O_RDWR)
    except (ImportError, OSError):
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pass
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
    finally:
        os.close(fd)
    pids = _flock_pids(lock) or _open_by(lock)
    if not pids:
        return "pid unknown"
    return "; ".join(_process(pid) for pid in pids[:3])


def _flock_pids(lock: Path) -> list[int]:
    """The pids ``/proc/locks`` names for flocks on this file (matched by device and inode)."""
    try:
        st = os.stat(lock)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return []
    pids = []
    for line in lines:
        f = line.split()  # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:2236662 0 EOF"; a waiter's has "->" after "1:"
        if len(f) < 6 or f[1] != "FLOCK":
            continue
        try:
            major, minor, inode = f[5].split(":")
            if (int(inode), int(major, 16), int(minor, 16)) == (st.st_ino, os.major(st.st_dev), os.minor(st.st_dev)):
                pids.append(int(f[4]))
        except ValueError:
            continue
    return sorted({p for p in pids if p > 0})


def _open_by(lock: Path) -> list[int]:
    """This user's processes with the file open (``/proc/*/fd``; no lsof)."""
    target, pids = str(lock.resolve()), []
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            if os.stat(f"/proc/{entry}").st_uid != os.getuid():
                continue
            if any(os.readlink(f"/proc/{entry}/fd/{fd}") == target for fd in os.listdir(f"/proc/{entry}/fd")):
                pids.append(int(entry))
        except OSError:
            continue
    return pids


def _process(pid: int) -> str:
    if pid == os.getpid():
        return f"pid {pid}: this process"
    try:
        command = " ".join(Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0"))
        command = " ".join(command.split())  # one line, whatever the arguments hold
    except OSError:
        command = ""
    return f"pid {pid}: {command[:80]}" if command else f"pid {pid}"


_WAL_FILE = re.compile(r"wal_(?:data|delta)_(\d+)\.arrow$")


def _lite_crash_marks(path: Path, collection: str) -> dict[str, str]:
    """Collection -> the mark a writer killed mid-flush leaves, read before the engine opens the file: a
    write-ahead log the engine had already applied to its files (numbered below the manifest's active log).
    Milvus Lite replays it and, as those rows keep their sequence numbers, serves them twice."""
    from .milvus_words import BM25_SUFFIX, POSTINGS_SUFFIX

    marks = {}
    for name in (collection, collection + BM25_SUFFIX, collection + POSTINGS_SUFFIX):
        wal = path / "collections" / name / "wal"
        try:
            logs = sorted(int(m.group(1)) for f in os.listdir(wal) if (m := _WAL_FILE.match(f)))
        except OSError:
            continue
        if not logs:
            continue
        try:
            active = int(json.loads((wal.parent / "manifest.json").read_text())["active_wal_number"])
        except (OSError, ValueError, KeyError, TypeError):
            active = None
        if active is None or logs[0] < active:
            marks[name] = (f"a writer was killed while flushing {name}: its log {wal} holds writes the engine "
                           "had already applied, which it replays and then holds twice")
    return marks


_DERIVED = ("__bm25", "__words", "__journal")  # collections derived from the rows (milvus_words)


def _collection_of(file: str) -> str | None:
    """The Milvus Lite collection a file of the store belongs to (the directory under ``collections``)."""
    parts = Path(file).parts
    return parts[parts.index("collections") + 1] if "collections" in parts[:-1] else None


def _damaged(target: StoreTarget, file: Path, detail: str) -> StoreDamaged:
    """The one line for a file of a Lite store that cannot be read, with what to do for what it holds."""
    path, name = Path(target.location), _collection_of(str(file)) or ""
    head = f"{path}: damaged (a writer was killed mid-write?): {file} cannot be read ({detail[:160]})"
    if any(suffix in name for suffix in _DERIVED):
        kind, todo = "words", "opening the store drops and rebuilds the word index"
    elif file.suffix in (".idx", ".sidx"):
        kind, todo = "index", f"delete {file} and the engine rebuilds it from the rows (opening the store does this)"
    elif file.name.startswith("manifest.json"):
        kind, todo = "manifest", f"restore {path} from a copy"
    elif file.name == "schema.json":
        kind, todo = "schema", f"restore {path} from a copy"
    else:
        kind, todo = "rows", (f"restore {path} from a copy, or delete {file} to open the store without the rows "
                              "it holds (then ingest them again)")
    return StoreDamaged(f"{head}: {todo}", path=str(path), file=str(file), kind=kind, detail=detail)


def _lite_damage(path: Path, first: str | None = None) -> tuple[Path, str] | None:
    """The first file of a Milvus Lite store the engine cannot read, with why: each collection's schema and
    manifest (JSON; the engine falls back to the previous manifest), the Parquet files the manifest names
    (their footers) and the index files (NumPy headers against the file size, Arrow footers, FAISS reads when
    faiss is installed). Collection ``first`` is looked at first. Only run after the engine failed, so its cost
    (one footer read per file) is paid then."""
    collections = sorted(path.glob("collections/*")) + sorted(path.glob("databases/*/collections/*"))
    collections.sort(key=lambda col: col.name != first)
    for col in collections:
        for check in (_schema_damage, _manifest_damage, _parquet_damage, _index_damage):
            found = check(col)
            if found is not None:
                return found
    return None


def _schema_damage(col: Path) -> tuple[Path, str] | None:
    try:
        json.loads((col / "schema.json").read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        return col / "schema.json", _one_line(e)
    return None


def _manifest(col: Path) -> dict[str, Any] | None:
    for name in ("manifest.json", "manifest.json.prev"):
        try:
            found = json.loads((col / name).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(found, dict):
            return found
    return None


def _manifest_damage(col: Path) -> tuple[Path, str] | None:
    if not (col / "manifest.json").exists() or _manifest(col) is not None:
        return None
    return col / "manifest.json", "neither it nor manifest.json.prev is readable JSON"


def _parquet_damage(col: Path) -> tuple[Path, str] | None:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return None
    manifest = _manifest(col) or {}
    for part, files in (manifest.get("partitions") or {}).items():
        for rel in [*(files.get("data_files") or []), *(files.get("delta_files") or [])]:
            file = col / "partitions" / part / rel
            if not file.exists():
                continue
            try:
                pq.ParquetFile(file).metadata  # noqa: B018 - reading the footer is the check
            except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds for a bad file
                return file, _one_line(e)
    return None


def _index_damage(col: Path) -> tuple[Path, str] | None:
    for file in sorted(col.glob("partitions/*/indexes/*")):
        why = _index_file_damage(file)
        if why:
            return file, why
    return None


def _index_file_damage(file: Path) -> str | None:
    try:
        if file.suffix == ".sidx":
            import pyarrow as pa

            with pa.memory_map(str(file), "r") as source:
                pa.ipc.open_file(source).read_all()
            return None
        if file.suffix != ".idx":
            return None
        with open(file, "rb") as f:
            head = f.read(6)
            if head != b"\x93NUMPY":  # a FAISS index (HNSW, IVF...)
                if importlib.util.find_spec("faiss") is None:
                    return None
                import faiss

                faiss.read_index(str(file))
                return None
            f.seek(0)
            version = np.lib.format.read_magic(f)
            shape, _, dtype = (np.lib.format.read_array_header_1_0(f) if version == (1, 0)
                               else np.lib.format.read_array_header_2_0(f))
            if dtype.hasobject:
                return None
            want = f.tell() + int(np.prod(shape)) * dtype.itemsize
        size = file.stat().st_size
        return None if size == want else f"{size} bytes, its header promises {want}"
    except Exception as e:  # noqa: BLE001 - any failure to read it is the finding
        return _one_line(e) or type(e).__name__


# ---------------------------------------------------------------------------------------------
# The engine's own error logs, for failures tracerag reports as one line.


class _EngineNoise(logging.Filter):
    """Drops the ERROR records (with tracebacks) pymilvus and Milvus Lite log for a failure while a tracerag
    call is waiting for it: that call raises it as one line. pymilvus logs in the calling thread (so only that
    thread's calls count); the embedded engine in its server threads (any tracerag call in flight counts, so an
    error another user of the engine meets in that moment is not logged either)."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()
        self.in_flight = 0
        self.lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return True
        mine = getattr(self.local, "depth", 0) > 0
        if not (mine or (self.in_flight > 0 and record.name.startswith(("milvus_lite", "grpc._server")))):
            return True
        caught = getattr(self.local, "caught", None) if mine else None
        if caught is not None and record.exc_info and record.exc_info[1] is not None:
            caught.append(record.exc_info[1])
        logger.debug("engine log (%s): %s", record.name, record.getMessage().split("\n", 1)[0][:300])
        return False


_NOISE = _EngineNoise()
# grpc._server: the embedded engine's gRPC server, which logs each call of a method Lite lacks (pymilvus asks for
# AllocTimestamp after creating an index, then goes on without it)
for _name in ("pymilvus.decorators", "milvus_lite.server_manager", "milvus_lite.adapter.grpc.servicer", "grpc._server"):
    logging.getLogger(_name).addFilter(_NOISE)


@contextmanager
def _engine_call(caught: list[BaseException] | None = None) -> Iterator[None]:
    """A call into the engine whose failure tracerag reports (see :class:`_EngineNoise`); ``caught`` collects
    the exceptions the engine logged meanwhile (pymilvus reports "Open local milvus failed" and logs why)."""
    local = _NOISE.local
    outer = getattr(local, "caught", None)
    local.depth = getattr(local, "depth", 0) + 1
    if caught is not None:
        local.caught = caught
    with _NOISE.lock:
        _NOISE.in_flight += 1
    try:
        yield
    finally:
        with _NOISE.lock:
            _NOISE.in_flight -= 1
        local.depth -= 1
        local.caught = outer


_AUTH_WORDS = ("unauthenticated", "permission_denied", "auth check fail", "authenticat")


def _refused_credentials(e: BaseException) -> bool:
    """Whether a connect failure (or what caused it: pymilvus wraps the gRPC error) is the server refusing the
    token rather than an unreachable server."""
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if any(word in str(e).lower() for word in _AUTH_WORDS):
            return True
        e = e.__cause__ or e.__context__
    return False


def _create_collection(client: Any, name: str, embedder_id: str, dim: int) -> None:
    from pymilvus import DataType, MilvusClient

    record = {_FORMAT_KEY: FORMAT, _EMBEDDER_KEY: embedder_id, _DIM_KEY: str(dim)}
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False,
                                        description=_DESCRIPTION_PREFIX + json.dumps(record, ensure_ascii=False))
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX_BYTES)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("hash", DataType.VARCHAR, max_length=64)
    schema.add_field("metadata", DataType.JSON)
    index = client.prepare_index_params()
    index.add_index(field_name="vector", index_type="FLAT", metric_type="COSINE")
    try:
        client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong",
                                 properties=record)
    except Exception:
        if not client.has_collection(name):  # not a race with another creator: a real failure
            raise


def _recorded(client: Any, name: str, target: StoreTarget) -> tuple[str, int]:
    """(embedder id, dim) from the collection's properties; refuse collections tracerag did not write."""
    info = client.describe_collection(name)
    props = info.get("properties") or {}
    if _FORMAT_KEY not in props:
        props = _from_description(info.get("description") or "")
    fields = {f["name"]: f for f in info.get("fields", [])}
    if props.get(_FORMAT_KEY) is None or not set(_FIELDS) <= set(fields):
        raise StoreError(f"{target}: collection {name!r} was not written by tracerag "
                         f"(no {_FORMAT_KEY} property or fields {', '.join(_FIELDS)})")
    if props[_FORMAT_KEY] != FORMAT:
        raise StoreError(f"{target}: collection {name!r} has tracerag format {props[_FORMAT_KEY]!r}; "
                         f"this version reads format {FORMAT!r}")
    dim = int(props.get(_DIM_KEY, 0))
    field_dim = int(fields["vector"].get("params", {}).get("dim", 0))
    if dim != field_dim:
        raise StoreError(f"{target}: collection {name!r} records dim {dim} but its vector field has dim {field_dim}")
    return str(props.get(_EMBEDDER_KEY, "")), dim


def _from_description(description: str) -> dict[str, str]:
    """The record as written into the description (engines that keep no collection properties, e.g. Milvus
    Lite 2.5; Milvus Lite 3 keeps properties but drops the description)."""
    if not description.startswith(_DESCRIPTION_PREFIX):
        return {}
    try:
        record = json.loads(description[len(_DESCRIPTION_PREFIX):])
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in record.items()} if isinstance(record, dict) else {}


def _load_state(client: Any, name: str) -> str:
    state = client.get_load_state(name).get("state")
    return getattr(state, "name", str(state))


def rebuild_index(client: Any, name: str, where: str, build: dict[str, int] | None = None) -> str:
    """Replace the vector index with HNSW (or the best the engine accepts); returns the index type in use."""
    client.release_collection(name)
    client.drop_index(name, "vector")
    chosen = create_best_index(client, name, where, build)
    _wait_for_index(client, name, where)
    client.load_collection(name)
    logger.info("%s: vector index is now %s", where, chosen)
    return chosen


def _wait_for_index(client: Any, name: str, where: str, wait_s: float = INDEX_WAIT_S) -> None:
    """Wait until the index holds every sealed row before loading: a server that loads the collection while
    the build runs serves those segments from its interim index, and went on doing so after the build
    finished (Milvus 2.3.5: HNSW's ef then changed nothing; recall 0.26 on uniform vectors, 0.81 at ef 512
    once reloaded)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        info = client.describe_index(name, "vector")
        if int(info.get("pending_index_rows", 0) or 0) == 0 and str(info.get("state", "Finished")) in ("Finished", ""):
            return
        time.sleep(1)
    logger.warning("%s: index build still running after %.0f s; loading with the rows indexed so far", where, wait_s)


def create_best_index(client: Any, name: str, where: str, build: dict[str, int] | None = None) -> str:
    """Create HNSW on the vector field, else AUTOINDEX, else FLAT; returns the index type in place.

    A long build can outlive its connection (a 1M-row HNSW build takes ~15 min) and pymilvus re-sends
    the call, which the server then refuses as "index already exists": the index it names is the one
    in place, read back rather than taken for a failure."""
    for index_type, params in (("HNSW", dict(build or HNSW_BUILD)), ("AUTOINDEX", {}), ("FLAT", {})):
        index = client.prepare_index_params()
        index.add_index(field_name="vector", index_type=index_type, metric_type="COSINE", params=params)
        try:
            client.create_index(name, index)
        except Exception as e:
            if "already exists" in str(e):
                return str(client.describe_index(name, "vector").get("index_type", index_type))
            logger.warning("%s: index %s not supported here (%s); trying the next", where, index_type, _one_line(e))
            continue
        return index_type
    return "FLAT"


def _hnsw_params(threshold: int, m: int, ef_construction: int) -> dict[str, int]:
    """HNSW build parameters, checked (Milvus accepts M 2-2048 and efConstruction 1-2**31)."""
    for name, value, low, high in (("hnsw_threshold", threshold, 0, 2**62), ("hnsw_m", m, 2, 2048),
                                   ("hnsw_ef_construction", ef_construction, 1, 2**31 - 1)):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{name} must be a whole number from {low} to {high}, got {value!r}")
    return {"M": m, "efConstruction": ef_construction}


def _check_sizes(id: str, metadata: dict[str, Any]) -> None:
    if not _expressible(id):
        raise ValueError(f"id {id[:40]!r} holds a control character other than \\n, \\r, \\t: Milvus could store "
                         "it but no expression could find or delete it again")
    if len(id.encode("utf-8")) > ID_MAX_BYTES:
        raise ValueError(f"id {id[:40]!r}... is longer than {ID_MAX_BYTES} UTF-8 bytes (the Milvus id field)")
    size = len(canonical_json(metadata).encode("utf-8"))
    if size > METADATA_MAX_BYTES:
        raise ValueError(f"metadata of id {id!r} is {size} bytes of JSON; a Milvus JSON field holds at most "
                         f"{METADATA_MAX_BYTES}")


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text[:300]


# ---------------------------------------------------------------------------------------------
# The filter language as a Milvus boolean expression.

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile('[\\\\"\\x00-\\x1f\\x7f]')


def _string_literal(value: str) -> str:
    """A double-quoted Milvus string literal holding exactly ``value``.

    Only the escapes both Milvus Lite and the server parse are used (backslash, quote, \\n, \\r, \\t);
    other control characters have no escape both accept and are refused. Everything else, non-ASCII
    included, is written as is, so no value can end the literal early and inject an expression.
    """
    if not _NEEDS_ESCAPE.search(value):  # the common case, a plain value
        return '"' + value + '"'
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            raise ValueError(f"filter value {value!r} holds control character {ch!r}, which Milvus cannot match")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _expressible(value: str) -> bool:
    """Whether a string literal can hold the value (see :func:`_string_literal`)."""
    return not any((ord(ch) < 0x20 or ord(ch) == 0x7F) and ch not in _ESCAPES for ch in value)


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string_literal(value)
    if isinstance(value, int):
        return str(value)
    return repr(float(value))  # finite (check_filter), e.g. "0.5", "1e-05"


def ids_expression(ids: Sequence[str]) -> str:
    """``id in [...]`` with each id a string literal that holds exactly it.

    Never pymilvus' ``ids=``: it quotes each id with ``'`` unescaped, so an id such as
    ``x'] or id not in ['`` became an expression matching every row (a delete emptied the collection).
    """
    return "id in [" + ", ".join(_string_literal(x) for x in ids) + "]"


def filter_expression(wanted: dict[str, tuple[Any, ...]] | None) -> str:
    """The checked filter (see :func:`~.vector_store.check_filter`) as a Milvus expression; "" = no filter.

    Keys are identifiers (checked), written as ``metadata["key"]``. A list becomes an OR of equalities
    rather than ``in [...]``, which Milvus Lite does not accept on JSON keys.
    """
    if not wanted:
        return ""
    clauses = []
    for key, values in wanted.items():
        field = f"metadata[{json.dumps(key)}]"
        terms = [f"{field} == {_literal(v)}" for v in values]
        clauses.append(terms[0] if len(terms) == 1 else "(" + " or ".join(terms) + ")")
    return " and ".join(clauses)
