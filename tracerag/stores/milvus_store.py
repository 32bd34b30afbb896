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
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
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

__all__ = ["MilvusStore", "filter_expression", "ids_expression"]

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
        self._client = _OneLineErrors(client, target)
        self._target = target
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
        client = _connect(target, create)
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
            if _load_state(client, name) != "Loaded":  # a fresh client (or process) finds collections released
                client.load_collection(name)
            return cls(client, target, recorded_embedder, recorded_dim, hnsw_threshold, hnsw_build)
        except BaseException:
            client.close()
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
        results = self._client.search(
            self._collection,
            data=q.tolist(),
            limit=k,
            filter=filter_expression(wanted),
            output_fields=["metadata"],
            search_params=params,
            consistency_level=self._level(),
        )
        floor = -np.inf if min_score is None else float(min_score)
        found = [
            [StoreHit(h["id"], float(h["distance"]), h["entity"].get("metadata") or {})
             for h in hits if float(h["distance"]) >= floor]
            for hits in results
        ]
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
            rows.sort(key=lambda r: r["id"].encode("utf-8"))  # the server's order: UTF-8 bytes
            vectors = (np.asarray([r["vector"] for r in rows], dtype=np.float32).reshape(len(rows), self._dim)
                       if with_vectors else None)
            yield ScanBatch([r["id"] for r in rows], [r.get("metadata") or {} for r in rows], vectors)
            if len(rows) < limit:
                return
            last = rows[-1]["id"]

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
            for start in range(0, len(ids), BATCH_ROWS):
                batch = range(start, min(start + BATCH_ROWS, len(ids)))
                stored = {r["id"]: r["hash"] for r in self._client.query(
                    self._collection, filter=ids_expression([ids[i] for i in batch]), output_fields=["hash"],
                    consistency_level="Strong")}
                rows = []
                for i in batch:
                    digest = row_hash(vectors[i], meta[i])
                    if stored.get(ids[i]) != digest:
                        rows.append({"id": ids[i], "vector": vectors[i].tolist(), "hash": digest, "metadata": meta[i]})
                if rows:
                    self._client.upsert(self._collection, rows)
                    if words is not None:
                        words.update([(r["id"], r["metadata"]) for r in rows])
                    written += len(rows)
            if written:
                self._seal()
                self.ensure_index()
        skipped = len(ids) - written
        logger.info("%s: upserted %d rows, %d skipped as unchanged", self._target, written, skipped)
        return UpsertReport(written, skipped)

    def delete(self, ids: Sequence[str]) -> int:
        ids = sorted({x for x in ids if isinstance(x, str) and x and _expressible(x)})
        deleted = 0
        with self._write_lock:
            words = self._words()
            for start in range(0, len(ids), BATCH_ROWS):
                present = [r["id"] for r in self._client.query(
                    self._collection, filter=ids_expression(ids[start : start + BATCH_ROWS]), output_fields=["id"],
                    consistency_level="Strong")]
                if present:
                    self._client.delete(self._collection, filter=ids_expression(present))
                    if words is not None:
                        words.delete(present)
                    deleted += len(present)
                    self._deleted_since_read = self._words_deleted = True
            if deleted:
                self._seal()
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
        created and filled from one scan the first time it is asked for (or when its row count disagrees
        with the store's), then written with every upsert and delete. None for another ``text_key`` (the
        hybrid retriever then builds its index in memory). ``layout`` ("bm25" / "postings") forces one."""
        from .milvus_words import TEXT_KEY, open_words

        if text_key != TEXT_KEY:
            return None
        with self._write_lock:
            words, created = open_words(self._client, self._collection, _string_literal, self._words_level,
                                        create=True, layout=layout)
            rows = self._strong_count()
            if created or words.count() != rows:
                if not created:
                    logger.warning("%s: word index holds %d rows, the store %d: rebuilding it", self._target,
                                   words.count(), rows)
                    self._client.drop_collection(words.name)
                    words, _ = open_words(self._client, self._collection, _string_literal, self._words_level,
                                          create=True, layout=words.kind)
                for batch in self.scan(BATCH_ROWS):
                    words.update(list(zip(batch.ids, batch.metadata, strict=True)), replace=False)
                words.seal()
                logger.info("%s: word index (%s) built over %d rows", self._target, words.kind, rows)
            self._word_index = words
            return words

    def _words(self) -> Any:
        """The word index when one exists (another client may have made it since this store opened)."""
        from .milvus_words import open_words

        if self._word_index is None:
            self._word_index = open_words(self._client, self._collection, _string_literal, self._words_level)[0]
        return self._word_index

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
        self._client.close()

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


class _OneLineErrors:
    """The client, whose server failures (connection lost, collection dropped, a server error) are one
    :class:`StoreError` line naming the store, never a pymilvus / gRPC stack trace. Argument mistakes (a
    TypeError of ours) pass unchanged."""

    def __init__(self, client: Any, target: StoreTarget) -> None:
        self._client, self._target = client, target

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return attr(*args, **kwargs)
            except StoreError:
                raise
            except Exception as e:
                if not _server_failure(e):
                    raise
                raise StoreError(f"{self._target}: {name} failed: {_one_line(e)}") from None

        return call


def _server_failure(e: BaseException) -> bool:
    module = type(e).__module__ or ""
    return module.startswith(("pymilvus", "grpc", "milvus_lite")) or isinstance(e, ConnectionError | TimeoutError)


def _connect(target: StoreTarget, create: bool) -> Any:
    pymilvus = _pymilvus(lite=target.backend == "milvus-lite")
    if target.backend == "milvus-lite":
        path = Path(target.location)
        if not path.exists():
            if not create:
                raise StoreError(f"{target}: no Milvus Lite file {path}; open it with create=True to make one")
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return pymilvus.MilvusClient(str(path))
        except Exception as e:
            raise StoreError(f"{target}: cannot open Milvus Lite file: {_one_line(e)}") from None
    try:
        return pymilvus.MilvusClient(uri=target.location, token=os.environ.get(TOKEN_ENV, ""))
    except Exception as e:
        hint = f"; the server refused the credentials: check {TOKEN_ENV}" if _refused_credentials(e) else ""
        raise StoreError(f"{target}: cannot connect to Milvus: {_one_line(e)}{hint}") from None


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
