"""Milvus behind the :class:`~.vector_store.VectorStore` protocol: the scale-out backend.

One ``pymilvus.MilvusClient`` speaks to Milvus Lite (an embedded engine in one local ``.db`` file, for
development and tests) and to a Milvus server (by URI; token from ``TRACERAG_MILVUS_TOKEN``):
:mod:`.milvus_client`. One store = one collection (default name ``tracerag``) holding each row's id,
vector, hash and metadata, and recording the embedder and dim it was written with, which opening checks
(:mod:`.milvus_collection`).

Scores: the metric is COSINE, for which Milvus returns the cosine similarity itself as the "distance"
(higher is better, in [-1, 1]), the same number the numpy bank computes (within float32 rounding).

Index by size: FLAT (exact) below ``hnsw_threshold`` rows (:data:`HNSW_THRESHOLD`), then HNSW searched with
ef = max(k, ``?ef=`` of the URI, :data:`HNSW_MIN_EF`); how and when it is rebuilt: :mod:`.milvus_index`.

Words: :meth:`MilvusStore.word_index` keeps a BM25 index of the rows' metadata ``text`` next to the
collection (:mod:`.milvus_words`; the store's side: :mod:`.milvus_store_words`), written by every upsert
and delete once it exists, so a hybrid retriever never scans the store.

Writes: upserts go in batches of 1,000 rows; each batch first reads the stored hashes of its ids and
skips rows whose hash is unchanged, so re-ingesting the same data writes nothing; those lookups read at
Strong consistency. Every other read (search, get, scan, count) reads at the URI's level, Session by
default: this client sees its own writes at once, other clients' within Milvus' bounded staleness, and a
search does not wait for the newest timestamp as Strong does on every call (``?consistency=strong`` when
every client's acknowledged write must be seen). On Milvus Lite
each upsert/delete call that changed something ends with a flush (Lite searches unflushed rows slowly),
so prefer few large calls to many small ones there.

Opening checks for ids stored twice and a word index that lags the rows, cheaply unless a writer was
killed (:mod:`.milvus_store_checks`). Errors are one line naming the file or URI and what to do
(:mod:`.milvus_errors`); a failed upsert or delete says how far it got (:class:`_Write`).

:meth:`MilvusStore.close` releases a Milvus Lite file: when the last store of this process on that file
closes, the embedded engine pymilvus started for it is stopped and its lock freed, so this process or
another can open the file again (pymilvus itself keeps the engine until the process exits).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..errors import InvalidValue
from .milvus_client import _connect, _disconnect, _load, _OneLineErrors
from .milvus_collection import BATCH_ROWS, MAX_TOP_K, _check_sizes, _create_collection, _recorded
from .milvus_errors import StoreWriteFailed
from .milvus_expressions import _expressible, _string_literal, filter_expression, ids_expression
from .milvus_index import HNSW_BUILD, _hnsw_params, _wait_for_index, rebuild_index
from .milvus_store_checks import StoreChecks
from .milvus_store_words import StoreWordIndex
from .milvus_words_journal import WriteJournal
from .vector_store import (
    Filter,
    ScanBatch,
    StoreError,
    StoreHit,
    StoreInfo,
    StoreRow,
    StoreTarget,
    UpsertReport,
    check_filter,
    check_queries,
    check_recorded,
    check_rows,
    parse_store_uri,
    row_hash,
)

__all__ = ["MilvusStore"]

logger = logging.getLogger(__name__)

HNSW_THRESHOLD = 100_000
HNSW_MIN_EF = 128


class MilvusStore(StoreWordIndex, StoreChecks):
    """A :class:`~.vector_store.VectorStore` on one Milvus collection; see the module docstring. Its word index
    and its check on open are :class:`~.milvus_store_words.StoreWordIndex`'s and
    :class:`~.milvus_store_checks.StoreChecks`'."""

    def __init__(self, client: Any, target: StoreTarget, embedder_id: str, dim: int,
                 hnsw_threshold: int = HNSW_THRESHOLD, hnsw_build: dict[str, int] | None = None) -> None:
        self._client = client if isinstance(client, _OneLineErrors) else _OneLineErrors(client, target)
        self._target = target
        self._lite_key: str | None = None  # the Milvus Lite file this store holds open (see close())
        self._closed = False
        self._journal_found: Any = None  # the word index's write journal, once found (milvus_words_journal)
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
        it is built (see :mod:`.milvus_index`); the search breadth is the URI's ``?ef=``."""
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
                raise InvalidValue(f"k={k} exceeds Milvus' limit of {MAX_TOP_K} results per query")
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
            raise InvalidValue(f"batch_size must be positive, got {batch_size}")
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

    def _strong_count(self) -> int:
        rows = self._client.query(self._collection, filter="", output_fields=["count(*)"], consistency_level="Strong")
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

    # -- the index -------------------------------------------------------------------------------

    def _index_type(self) -> str:
        try:
            return str(self._client.describe_index(self._collection, "vector").get("index_type", "FLAT"))
        except Exception:  # no index description (should not happen for our collections)
            return "FLAT"

    def ensure_index(self, hnsw_threshold: int | None = None) -> str:
        """Rebuild FLAT as HNSW once the collection holds ``hnsw_threshold`` rows (default: the store's);
        returns the index in use. Upserts call it; call it yourself to build the index at a time of your
        choosing (see :mod:`.milvus_index` on searches during the rebuild)."""
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
