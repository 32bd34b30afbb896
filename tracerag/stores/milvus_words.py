"""The BM25 word index of a Milvus store, kept next to its collection and written with every upsert and
delete, so a hybrid retriever on Milvus never reads every row to build its lexical channel.

It indexes each row's metadata ``text`` (:data:`TEXT_KEY`) with the hybrid retriever's own tokens
(:func:`~.word_tokens.word_tokens`: plurals folded, CJK characters and bigrams) and BM25 k1=1.2, b=0.75, the
in-memory :class:`~tracerag.documents.word_index.WordIndex`'s parameters. Two layouts, chosen when the index is created:

- ``<collection>__bm25`` where the engine has Milvus' BM25 function (Milvus Lite >= 3, a Milvus server
  >= 2.5): one row per stored row holding its tokens, each written as ``x`` + its UTF-8 hex so the
  engine's standard analyzer keeps exactly our tokens; the engine builds the sparse vectors and ranks.
  Scores equal the in-memory index's while the companion is one segment (as a build leaves it). Milvus
  Lite 3.2 takes IDF and average length per segment, so after each write call on Lite the companion is
  rewritten as one (:meth:`BM25Words.settle`: about 2 s at 4,000 rows); a server >= 2.5 uses
  collection-wide statistics (not measured here: the test server is 2.3).
- ``<collection>__words`` elsewhere (a Milvus 2.3/2.4 server has no BM25 function): postings, one row
  per (word, row) with its term frequency and the row's length, one length row per stored row, one
  document-frequency row per word and one row of totals; BM25 is computed here, so scores equal the
  in-memory index's. A query costs one read of the totals, its words' frequencies and the postings of
  its rarer words; the postings of words found in more than a quarter of the rows (``the``, ``of``) are
  read only for the rows that can still rank, and kept in memory until the next write (see
  :meth:`PostingsWords.top`).

A batch of questions is read together (``top_batch``: one search, or one read of the postings, per
:data:`QUERIES_PER_READ` questions); the hybrid retriever's search of several questions uses it.

A companion whose row count disagrees with the store (created by a build that was interrupted, or by a
client that predates it) is rebuilt from one scan when a retriever opens it. Writers from several
processes at once may leave the postings' totals (row count, total length, word frequencies) off by
their race, and a reader may pair a write's new postings with the totals before it for as long as the
write takes; the next rebuild corrects the former.

Which write the index reflects: the :class:`WriteJournal` (``<collection>__journal``, created with the
companion). Every write call that changes rows of a store with a word index first records an entry (a
random write id, the writer's host and pid, when it began, the companion's layout), then writes the rows,
then the words, and removes the entry only once the words (and, on Lite, the flush and rewrite of the
companion) are done. An entry left behind by a writer that is gone (killed between the row upsert and the
word-index update, or failed there) therefore always outlives the lag it marks: the store's check on
open (:meth:`~.milvus_store.MilvusStore.open`) finds it, rebuilds the companion from the rows and clears
it. The rows themselves carry no write id: recording the write *before* the rows change is what makes a
crash at any later point detectable, and a per-row stamp would add a schema field to every row for no
case the entry misses. A writer is gone when its pid no longer runs on this host, or (Milvus Lite, which
admits one process per store) whenever it is not a write in flight in this process; a writer on another
host counts as gone once its entry is older than :data:`STALE_WRITE_S`. Counts (companion rows against
store rows) are still compared, for writers that predate the journal.
"""

from __future__ import annotations

import heapq
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..data_files.processes import process_alive
from .word_tokens import word_tokens

__all__ = ["BM25_SUFFIX", "JOURNAL_SUFFIX", "POSTINGS_SUFFIX", "TEXT_KEY", "BM25Words", "PendingWrite", "PostingsWords",
           "WriteJournal", "open_words"]

logger = logging.getLogger(__name__)

TEXT_KEY = "text"
K1, B = 1.2, 0.75
BM25_SUFFIX, POSTINGS_SUFFIX = "__bm25", "__words"
JOURNAL_SUFFIX = "__journal"
REWRITE_SUFFIX = "_rewrite"  # BM25Words.settle() builds the new companion under this name, then swaps it in
STALE_WRITE_S = 3600.0  # a journal entry of another host this old is taken for a writer that is gone
WORDS_MAX_BYTES = 65_535  # a VARCHAR field's limit: tokens past it are left out of a row's words
TOKEN_MAX_BYTES = 100  # longer tokens (hex 201 characters) are left out: no analyzer keeps them whole
PAGE = 16_384  # Milvus' limit on rows per query
# "#" is never in a token, so these keys and terms cannot be a posting's. The totals row changed key when the
# per-word document frequencies were added: a companion without them holds no "#totals", counts 0 rows
# and is rebuilt when a retriever opens it.
_STATS_KEY = "#totals"  # its term is "#v" and a new random version at every write (see _cached_words)
_DF_TERM = "#df"
COMMON_SHARE = 0.25
CACHE_POSTINGS = 100_000  # common words' postings kept in memory per index, until the next write
EXPECTED_MAX = 256  # a hint of more rows than this (a batch of searches) is not read ahead
IDS_PER_FILTER = 1000  # ids (or keys) per "in [...]" filter
QUERIES_PER_READ = 64  # questions of a batch read together (one search; one read of their words' postings)
_SLACK = 1e-4  # float32 sums against float64 bounds: rows this close to the floor are read too

Literal = Callable[[str], str]  # a string as a Milvus string literal (milvus_store._string_literal)


def row_tokens(metadata: dict[str, Any]) -> list[str]:
    text = metadata.get(TEXT_KEY)
    return [t for t in word_tokens(text) if len(t.encode("utf-8")) <= TOKEN_MAX_BYTES] if isinstance(text, str) else []


def _df_key(term: str) -> str:
    return "# " + term


def _in(field: str, values: Iterable[str], literal: Literal) -> str:
    return f"{field} in [" + ", ".join(literal(v) for v in values) + "]"


class _SwapGate:
    """Reads run side by side; swapping the companion for its rewrite (drop, rename, load) waits for the reads
    in flight and holds new ones until it is done, so no search meets a collection that is gone or released."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._readers, self._swapping = 0, False

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: not self._swapping)
            self._readers += 1
        try:
            yield
        finally:
            with self._changed:
                self._readers -= 1
                self._changed.notify_all()

    @contextmanager
    def swapping(self) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: not self._swapping)
            self._swapping = True
            self._changed.wait_for(lambda: self._readers == 0)
        try:
            yield
        finally:
            with self._changed:
                self._swapping = False
                self._changed.notify_all()


class BM25Words:
    """The engine's own BM25 over a companion collection (see the module docstring)."""

    kind = "bm25"

    def __init__(self, client: Any, name: str, literal: Literal, level: Callable[[], str]) -> None:
        self._client, self.name, self._literal, self._level = client, name, literal, level
        self._written = False  # rows were upserted or deleted since the companion was last built whole
        self._gate = _SwapGate()

    @staticmethod
    def create(client: Any, name: str) -> None:
        from pymilvus import DataType, Function, FunctionType, MilvusClient

        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False,
                                            description=f"tracerag BM25 words of {TEXT_KEY!r}")
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=1024)
        schema.add_field("words", DataType.VARCHAR, max_length=WORDS_MAX_BYTES, enable_analyzer=True,
                         analyzer_params={"tokenizer": "standard"})
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["words"],
                                     output_field_names=["sparse"]))
        index = client.prepare_index_params()
        index.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                        # flat for a server; nested too, the only form Milvus Lite 3.2 reads (else k1=1.5)
                        params={"bm25_k1": K1, "bm25_b": B, "params": {"bm25_k1": K1, "bm25_b": B}})
        client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong")
        # a Milvus 2.3 server accepts this schema without its function and sparse index, then cannot load it
        state = client.get_load_state(name).get("state")
        if not client.describe_collection(name).get("functions") or getattr(state, "name", str(state)) != "Loaded":
            client.drop_collection(name)
            raise ValueError("the engine kept no BM25 function")

    @staticmethod
    def encode(tokens: Sequence[str]) -> str:
        """The tokens as ``x<hex>`` words (the standard analyzer keeps each whole), cut to fit a VARCHAR."""
        words, size = [], 0
        for t in tokens:
            word = "x" + t.encode("utf-8").hex()
            size += len(word) + 1
            if size > WORDS_MAX_BYTES:
                break
            words.append(word)
        return " ".join(words)

    def update(self, rows: Sequence[tuple[str, dict[str, Any]]], *, replace: bool = True) -> None:
        """Index these rows (id, metadata), replacing what the ids held."""
        if rows:
            self._client.upsert(self.name, [{"id": x, "words": self.encode(row_tokens(m))} for x, m in rows])
            self._written = self._written or replace

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self._client.delete(self.name, filter=_in("id", ids, self._literal))
            self._written = True

    def seal(self) -> None:
        self._client.flush(self.name)

    def settle(self) -> None:
        """After a write on Milvus Lite: rewrite the companion whole, so it ranks as a fresh build again.

        Lite 3.2 keeps BM25 statistics (row count, average length, document frequencies) per segment and
        counts replaced and deleted rows in them until a compaction it decides itself (there is no manual
        one): every write batch lands in a new segment, and measured on PubMedQA, 400 of 4,094 rows
        upserted 50 at a time after the build changed 135 of 206 retrieved lists. The rewrite reads every
        row's words back into a new collection flushed as one, then takes the old one's name; it costs a
        read and a write of the whole companion per write call (see BENCHMARKS.md)."""
        if not self._written:
            return
        rows: list[dict[str, Any]] = []
        last = None
        while True:
            page = self._client.query(self.name, filter="" if last is None else f"id > {self._literal(last)}",
                                      output_fields=["id", "words"], limit=PAGE, consistency_level="Strong",
                                      iterator="True", reduce_stop_for_best="True")  # pages in id order
            rows.extend({"id": r["id"], "words": r["words"]} for r in page)
            if len(page) < PAGE:
                break
            last = max((r["id"] for r in page), key=lambda x: x.encode("utf-8"))
        fresh = self.name + REWRITE_SUFFIX
        if self._client.has_collection(fresh):
            self._client.drop_collection(fresh)
        self.create(self._client, fresh)
        for start in range(0, len(rows), 5000):
            self._client.insert(fresh, rows[start : start + 5000])
        self._client.flush(fresh)
        with self._gate.swapping():  # searches of this process wait for the swap rather than fail
            self._client.drop_collection(self.name)
            self._client.rename_collection(fresh, self.name)
            self._client.load_collection(self.name)  # a renamed collection comes back released
        self._written = False

    def count(self) -> int:
        with self._gate.reading():
            rows = self._client.query(self.name, filter="", output_fields=["count(*)"], consistency_level="Strong")
        return int(rows[0]["count(*)"])

    def _search(self, queries: Sequence[str], limit: int, filter: str = "") -> list[list[tuple[str, float]]]:
        """Each query's best ``limit`` rows (among ``filter``'s) by BM25: one engine search per
        :data:`QUERIES_PER_READ` queries."""
        words = [self.encode(word_tokens(q)) for q in queries]
        asked = [i for i, w in enumerate(words) if w]
        out: list[list[tuple[str, float]]] = [[] for _ in queries]
        if limit <= 0:
            return out
        for start in range(0, len(asked), QUERIES_PER_READ):
            part = asked[start : start + QUERIES_PER_READ]
            with self._gate.reading():
                found = self._client.search(self.name, data=[words[i] for i in part], anns_field="sparse",
                                            limit=min(limit, PAGE), filter=filter, output_fields=[],
                                            consistency_level=self._level(),
                                            search_params={"metric_type": "BM25", "params": {}})
            for i, hits in zip(part, found, strict=True):
                # Milvus Lite reports BM25 as a negative distance, a server as the score itself
                out[i] = [(h["id"], abs(float(h["distance"]))) for h in hits if float(h["distance"]) != 0]
        return out

    def top(self, query: str, m: int) -> list[tuple[str, float]]:
        """The ``m`` best rows for ``query`` by BM25, best first (rows sharing no word are left out)."""
        return self._search([query], m)[0]

    def top_batch(self, queries: Sequence[str], m: int) -> list[list[tuple[str, float]]]:
        """:meth:`top` of each query: one engine search per :data:`QUERIES_PER_READ` queries."""
        return self._search(queries, m)

    def scores(self, query: str, ids: Sequence[str]) -> dict[str, float]:
        """BM25 of these rows for ``query`` (rows sharing no word are left out)."""
        return self.scores_batch([query], [ids])[0]

    def scores_batch(self, queries: Sequence[str], ids: Sequence[Sequence[str]]) -> list[dict[str, float]]:
        """:meth:`scores` of each query for its own rows: one search per query, filtered to its rows (one
        search over all the batch's rows scores each query on every one of them: 2.6x slower on Lite)."""
        out: list[dict[str, float]] = []
        for query, row_ids in zip(queries, ids, strict=True):
            held: dict[str, float] = {}
            for start in range(0, len(row_ids), PAGE):
                page = list(row_ids[start : start + PAGE])
                held.update(self._search([query], len(page), _in("id", page, self._literal))[0])
            out.append(held)
        return out


class PostingsWords:
    """Postings in a companion collection, BM25 computed here (see the module docstring)."""

    kind = "postings"

    def __init__(self, client: Any, name: str, literal: Literal, level: Callable[[], str]) -> None:
        self._client, self.name, self._literal, self._level = client, name, literal, level
        self._recent: dict[str, _Scored] = {}  # what the last top_batch() read, so scores after it cost little
        self._common: set[str] = set()  # words found in more than common_share of the rows when last seen
        self._common_share = COMMON_SHARE
        self._expected: list[str] = []  # see expect()
        self._cache: tuple[str, dict[str, dict[str, tuple[int, int]]]] = ("", {})  # see _cached_words()

    @property
    def common_share(self) -> float:
        """Words in more than this share of the rows are read only for the rows that can rank (see
        :meth:`top`); 1.0 reads every posting of a query's words."""
        return self._common_share

    @common_share.setter
    def common_share(self, share: float) -> None:
        if not 0 < share <= 1:
            raise ValueError(f"common_share must be in (0, 1], got {share}")
        self._common_share, self._common = share, set()

    @staticmethod
    def create(client: Any, name: str) -> None:
        from pymilvus import DataType, MilvusClient

        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False,
                                            description=f"tracerag word postings of {TEXT_KEY!r}")
        schema.add_field("key", DataType.VARCHAR, is_primary=True, max_length=1024 + 2 * TOKEN_MAX_BYTES)
        schema.add_field("term", DataType.VARCHAR, max_length=2 * TOKEN_MAX_BYTES)
        schema.add_field("id", DataType.VARCHAR, max_length=1024)
        schema.add_field("tf", DataType.INT64)
        schema.add_field("dl", DataType.INT64)
        schema.add_field("v", DataType.FLOAT_VECTOR, dim=2)  # a Milvus 2.3 collection needs a vector field
        index = client.prepare_index_params()
        index.add_index(field_name="v", index_type="FLAT", metric_type="L2")
        client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong")
        for column in ("term", "id"):
            for kind in ("INVERTED", "Trie"):  # Milvus Lite / 2.4+ and 2.3's index for strings
                scalar = client.prepare_index_params()
                scalar.add_index(field_name=column, index_type=kind)
                try:
                    client.release_collection(name)
                    client.create_index(name, scalar)
                    break
                except Exception as e:  # this engine lacks that index type: try the next, else none
                    logger.info("%s: no %s index on %s (%s)", name, kind, column, " ".join(str(e).split())[:200])
        client.load_collection(name)

    # -- reading rows ------------------------------------------------------------------------------

    def _query(self, filter: str, fields: list[str], level: str | None = None, *,
               postings: bool = False) -> list[dict[str, Any]]:
        """Every row matching ``filter``, paged by key (a query returns at most :data:`PAGE` rows). Rows that
        are all ``postings`` are read without their key, which is their word and id."""
        out: list[dict[str, Any]] = []
        last = None
        while True:
            where = filter if last is None else f"({filter}) and key > {self._literal(last)}"
            rows = self._client.query(self.name, filter=where, output_fields=fields if postings else ["key", *fields],
                                      limit=PAGE, consistency_level=level or self._level())
            out.extend(rows)
            if len(rows) < PAGE:
                return out
            keys = (f"{r['term']} {r['id']}" for r in rows) if postings else (r["key"] for r in rows)
            last = max(keys, key=lambda k: k.encode("utf-8"))

    def _postings(self, terms: Sequence[str], ids: Sequence[str] | None = None) -> list[Posting]:
        """The postings of these words (only of these row ids, when given)."""
        if not terms or ids is not None and not ids:
            return []
        words = _in("term", terms, self._literal)
        filters = [words] if ids is None else [
            f"{words} and {_in('id', ids[start : start + IDS_PER_FILTER], self._literal)}"
            for start in range(0, len(ids), IDS_PER_FILTER)]
        return [(r["term"], r["id"], int(r["tf"]), int(r["dl"]))
                for where in filters for r in self._query(where, ["term", "id", "tf", "dl"], postings=True)]

    def _totals(self, terms: Iterable[str], level: str | None = None) -> tuple[int, int, dict[str, int]]:
        """(rows indexed, their total length, document frequency of each of ``terms`` that occurs): one query."""
        terms = list(terms)
        keys = [_STATS_KEY, *(_df_key(t) for t in terms)]
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(keys), IDS_PER_FILTER):
            where = _in("key", keys[start : start + IDS_PER_FILTER], self._literal)
            for r in self._client.query(self.name, filter=where, output_fields=["key", "tf", "dl"],
                                        consistency_level=level or self._level()):
                found[r["key"]] = r
        stats = found.get(_STATS_KEY)
        n, total = (int(stats["tf"]), int(stats["dl"])) if stats else (0, 0)
        return n, total, {t: int(found[_df_key(t)]["tf"]) for t in terms if _df_key(t) in found}

    # -- writing -------------------------------------------------------------------------------------

    def update(self, rows: Sequence[tuple[str, dict[str, Any]]], *, replace: bool = True) -> None:
        """Index these rows (id, metadata); ``replace=False`` skips dropping what the ids held (a fresh build)."""
        if not rows:
            return
        self._recent, self._cache = {}, ("", {})
        ids = [x for x, _ in rows]
        removed, length, df_change = self._drop(ids) if replace else (0, 0, Counter())
        new_rows, total = [], 0
        for x, metadata in rows:
            tokens = row_tokens(metadata)
            counts = Counter(tokens)
            total += len(tokens)
            new_rows.append(self._posting("", x, 0, len(tokens)))  # the length row: this id is indexed
            new_rows.extend(self._posting(t, x, tf, len(tokens)) for t, tf in counts.items())
            df_change.update(counts.keys())
        for start in range(0, len(new_rows), 5000):
            self._client.upsert(self.name, new_rows[start : start + 5000])
        self._add_totals(len(rows) - removed, total - length, df_change)

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self._recent, self._cache = {}, ("", {})
            removed, length, df_change = self._drop(list(ids))
            self._add_totals(-removed, -length, df_change)

    def _drop(self, ids: list[str]) -> tuple[int, int, Counter[str]]:
        """Delete these ids' postings; (how many of them were indexed, their total length, -1 per word they held)."""
        found: list[dict[str, Any]] = []
        for start in range(0, len(ids), IDS_PER_FILTER):
            found.extend(self._query(_in("id", ids[start : start + IDS_PER_FILTER], self._literal), ["term", "dl"],
                                     "Strong"))
        if found:
            for start in range(0, len(ids), IDS_PER_FILTER):
                self._client.delete(self.name, filter=_in("id", ids[start : start + IDS_PER_FILTER], self._literal))
        lengths = [int(r["dl"]) for r in found if r["term"] == ""]
        held = Counter(r["term"] for r in found if r["term"])
        return len(lengths), sum(lengths), Counter({t: -k for t, k in held.items()})

    def _add_totals(self, rows: int, length: int, df_change: Counter[str]) -> None:
        """Add to the row count, the total length and each word's document frequency (a read, then a write)."""
        terms = [t for t, change in df_change.items() if change]
        n, total, df = self._totals(terms, "Strong")
        write = [self._posting("#v" + uuid.uuid4().hex, "", n + rows, total + length, key=_STATS_KEY)]
        gone = []
        for t in terms:
            count = df.get(t, 0) + df_change[t]
            if count > 0:
                write.append(self._posting(_DF_TERM, "", count, 0, key=_df_key(t)))
            elif t in df:
                gone.append(_df_key(t))
        for start in range(0, len(write), 5000):
            self._client.upsert(self.name, write[start : start + 5000])
        for start in range(0, len(gone), IDS_PER_FILTER):
            self._client.delete(self.name, filter=_in("key", gone[start : start + IDS_PER_FILTER], self._literal))

    @staticmethod
    def _posting(term: str, id: str, tf: int, dl: int, key: str | None = None) -> dict[str, Any]:
        return {"key": key if key is not None else f"{term} {id}", "term": term, "id": id, "tf": tf, "dl": dl,
                "v": [1.0, 0.0]}

    def seal(self) -> None:
        self._client.flush(self.name)

    def count(self) -> int:
        return self._totals([], "Strong")[0]

    # -- scoring -------------------------------------------------------------------------------------

    def top(self, query: str, m: int) -> list[tuple[str, float]]:
        """The ``m`` best rows for ``query`` by BM25, best first, ties by id (the scan order).

        Exact without reading every posting of common words. One query reads the totals, the query words'
        document frequencies and the postings of the words not known to be common (found in more than
        :attr:`common_share` of the rows when last seen). A common word adds at most ``idf * (k1 + 1)`` per
        occurrence to a row, so only rows whose score from the other words plus that bound reaches the
        ``m``-th best such score can rank, and only their common-word postings are looked up (together with
        those of the rows :meth:`expect` named): in memory, where the common words' postings are kept until
        the next write (:meth:`_cached_words`), else with a second query. When rows holding none of the
        other words could rank (fewer than ``m`` rows hold one, or the bound is that large), every posting
        of the common words is read."""
        return self.top_batch([query], m)[0]

    def top_batch(self, queries: Sequence[str], m: int) -> list[list[tuple[str, float]]]:
        """:meth:`top` of each query; per :data:`QUERIES_PER_READ` queries, one read for their totals,
        frequencies and rarer words' postings, and at most one for the common words' postings they need."""
        if m <= 0:
            return [[] for _ in queries]
        expected, self._expected = self._expected, []
        self._recent = {}
        out = []
        for start in range(0, len(queries), QUERIES_PER_READ):
            records = self._read(queries[start : start + QUERIES_PER_READ])
            self._recent.update((scored.query, scored) for scored in records)
            candidates = [self._candidates(scored, m) for scored in records]
            self._score([(scored, None if rows is None else rows | set(expected))
                         for scored, rows in zip(records, candidates, strict=True)])
            for scored, rows in zip(records, candidates, strict=True):
                exact = scored.exact if rows is None else {x: scored.exact[x] for x in rows}
                ranked = sorted(((x, v) for x, v in exact.items() if v > 0), key=lambda kv: (-kv[1], kv[0].encode()))
                out.append(ranked[:m])
        return out

    def _candidates(self, scored: _Scored, m: int) -> set[str] | None:
        """The rows that can still be among the ``m`` best once the common words count (see :meth:`top`), to be
        scored exactly; None when every row holding one of the query's words must be (or, for a query without
        common words, already is: its postings were read in full)."""
        first = _bm25(scored, scored.postings)
        if not scored.common:
            scored.exact.update(first)
            scored.complete = True
            return None
        best = heapq.nlargest(m, first.values())
        floor = best[-1] if len(best) == m else 0.0
        bound = sum(scored.counts[t] * _idf(scored.n, scored.df[t]) * (K1 + 1) for t in scored.common)
        if bound < floor - _SLACK:
            return {x for x, s in first.items() if s + bound >= floor - _SLACK}
        return None

    def expect(self, ids: Sequence[str]) -> None:
        """Rows whose scores are likely asked next (the store's last dense search hits): the next :meth:`top`
        reads their common-word postings in the same query as its own candidates'. Only a hint."""
        self._expected = list(ids) if len(ids) <= EXPECTED_MAX else []

    def scores(self, query: str, ids: Sequence[str]) -> dict[str, float]:
        """BM25 of these rows for ``query`` (rows sharing no word are left out): what the last :meth:`top` of
        the same query scored, and one read of the others' common-word postings."""
        return self.scores_batch([query], [ids])[0]

    def scores_batch(self, queries: Sequence[str], ids: Sequence[Sequence[str]]) -> list[dict[str, float]]:
        """:meth:`scores` of each query for its own rows; queries the last :meth:`top_batch` did not read are
        read together, and the common-word postings the rows need come from one query at most."""
        unread = list(dict.fromkeys(q for q, row_ids in zip(queries, ids, strict=True)
                                    if row_ids and q not in self._recent))
        for start in range(0, len(unread), QUERIES_PER_READ):
            self._recent.update((r.query, r) for r in self._read(unread[start : start + QUERIES_PER_READ]))
        records = [self._recent.get(q) if row_ids else None for q, row_ids in zip(queries, ids, strict=True)]
        self._score([(scored, {x for x in row_ids if x not in scored.exact})
                     for scored, row_ids in zip(records, ids, strict=True) if scored and not scored.complete])
        return [{x: scored.exact[x] for x in row_ids if scored.exact.get(x, 0.0) > 0} if scored else {}
                for scored, row_ids in zip(records, ids, strict=True)]

    def _score(self, work: list[tuple[_Scored, set[str] | None]]) -> None:
        """Add each record's exact BM25 of its rows (None: of every row holding one of its words, which makes
        it complete). The postings of the words read in full are at hand; the common words' come from memory
        (:meth:`_cached_words`), else from one query for all the records together."""
        work = [(scored, rows) for scored, rows in work if scored.df and not scored.complete and rows != set()]
        common = [(scored, rows) for scored, rows in work if scored.common]
        held = None
        if len(common) > 1 and any(self._cached_words(scored) is None for scored, _ in common):
            whole = any(rows is None for _, rows in common)
            held = {}
            for t, x, tf, dl in self._postings(sorted({t for scored, _ in common for t in scored.common}),
                                               None if whole else sorted(set().union(*(r for _, r in common)))):
                held.setdefault(t, {})[x] = (tf, dl)
        for scored, rows in work:
            picked = sorted(rows) if rows is not None else None
            found = [p for p in scored.postings if rows is None or p[1] in rows]
            if scored.common:
                found += self._common_postings(scored, picked, held)
            if rows is None:
                scored.complete = True
            else:
                scored.exact.update(dict.fromkeys(rows, 0.0))
            scored.exact.update(_bm25(scored, found))

    def _common_postings(self, scored: _Scored, rows: list[str] | None,
                         held: dict[str, dict[str, tuple[int, int]]] | None = None) -> list[Posting]:
        """The postings of ``scored``'s common words (of these rows only, when given): from memory when they
        fit there (see :meth:`_cached_words`), else from ``held`` (what :meth:`_score` read for a batch of
        records, in the memory's layout), else one query."""
        words = self._cached_words(scored)
        if words is None and held is None:
            return self._postings(scored.common, rows)
        words = held if words is None else words
        if rows is None:
            return [(t, x, *p) for t in scored.common for x, p in words.get(t, {}).items()]
        return [(t, x, *words[t][x]) for t in scored.common for x in rows if x in words.get(t, {})]

    def _cached_words(self, scored: _Scored) -> dict[str, dict[str, tuple[int, int]]] | None:
        """Every posting of ``scored``'s common words by word and row id, kept in memory while the index's
        version (new at every write, read with the totals) stays the same; None when they would take more
        than :data:`CACHE_POSTINGS` (a large collection: each question then reads its rows' postings).
        Common words are few and recur in most questions, so after the first questions no query reads them."""
        version, cache = self._cache
        if version != scored.version:
            cache = {}
        missing = [t for t in scored.common if t not in cache]
        if missing:
            if sum(map(len, cache.values())) + sum(scored.df[t] for t in missing) > CACHE_POSTINGS:
                cache = {t: cache[t] for t in scored.common if t in cache}  # full: keep this query's words only
                if sum(map(len, cache.values())) + sum(scored.df[t] for t in missing) > CACHE_POSTINGS:
                    return None
            cache = {**cache, **{t: {} for t in missing}}
            for t, x, tf, dl in self._postings(missing):
                cache[t][x] = (tf, dl)
        self._cache = (scored.version, cache)
        return cache

    def _read(self, queries: Sequence[str]) -> list[_Scored]:
        """A fresh record per query, all from one query: the totals, the words' document frequencies and the
        postings of the words not known to be common (see :meth:`top`)."""
        counts = [Counter(word_tokens(q)) for q in queries]
        words = list(dict.fromkeys(t for c in counts for t in c))
        read = {t for t in words if t not in self._common}
        where = _in("key", [_STATS_KEY, *(_df_key(t) for t in words)], self._literal)
        rows = self._query(f"{where} or {_in('term', read, self._literal)}" if read else where,
                           ["term", "id", "tf", "dl"]) if words else []
        n = total = 0
        version = ""
        df: dict[str, int] = {}
        postings: dict[str, list[Posting]] = {}
        for r in rows:
            term = r["term"]
            if r["key"] == _STATS_KEY:
                n, total, version = int(r["tf"]), int(r["dl"]), term
            elif term == _DF_TERM:
                df[r["key"][len(_df_key("")):]] = int(r["tf"])
            else:
                postings.setdefault(term, []).append((term, r["id"], int(r["tf"]), int(r["dl"])))
        for t, count in df.items():  # what is common now decides what the next query reads in full
            if count > self.common_share * n:
                self._common.add(t)
            else:
                self._common.discard(t)
        records = []
        for query, c in zip(queries, counts, strict=True):
            held = {t: df[t] for t in c if df.get(t)}
            records.append(_Scored(query, c, n, total, version, held,
                                   [p for t in c if t in read for p in postings.get(t, ())],
                                   [t for t in held if t not in read]))
        return records


Posting = tuple[str, str, int, int]  # (word, row id, term frequency, row length)


@dataclass
class _Scored:
    """One query's statistics, the postings its first read returned (every word's but ``common``'s), and the
    exact BM25 of the rows scored so far (``complete``: every row holding a query word was read, so a row
    missing from ``exact`` scores 0)."""

    query: str
    counts: Counter[str]
    n: int
    total: int
    version: str  # the index's, from its totals row
    df: dict[str, int]
    postings: list[Posting]
    common: list[str]  # the words whose postings were not read in full
    exact: dict[str, float] = field(default_factory=dict)
    complete: bool = False


def _idf(n: int, df: int) -> float:
    return float(np.log1p((n - df + 0.5) / (df + 0.5)))


def _bm25(scored: _Scored, postings: list[Posting]) -> dict[str, float]:
    """BM25 per row id over these postings, summed word by word in the query's order in float32, as the
    in-memory :class:`~tracerag.documents.word_index.WordIndex` does (so scores match it bit for bit)."""
    n, total = scored.n, scored.total
    avg = np.float32(total) / np.float32(max(n, 1)) if n and total else np.float32(1.0)
    by_term: dict[str, list[Posting]] = {}
    for p in postings:
        by_term.setdefault(p[0], []).append(p)
    slots: dict[str, int] = {}
    parts = []
    for token, times in scored.counts.items():
        rows = by_term.get(token)
        if not rows:
            continue
        at = np.fromiter((slots.setdefault(p[1], len(slots)) for p in rows), dtype=np.int64, count=len(rows))
        tf = np.fromiter((p[2] for p in rows), dtype=np.int64, count=len(rows))
        norm = K1 * (1 - B + B * np.fromiter((p[3] for p in rows), dtype=np.float32, count=len(rows)) / avg)
        idf = np.log1p((n - scored.df[token] + 0.5) / (scored.df[token] + 0.5))
        parts.append((at, times * (idf * tf * (K1 + 1) / (tf + norm)).astype(np.float32)))
    scores = np.zeros(len(slots), dtype=np.float32)
    for at, weights in parts:
        scores[at] += weights  # a word lists each row once
    return {x: s for x, s in zip(slots, scores.tolist(), strict=True) if s > 0}


Words = BM25Words | PostingsWords


def open_words(client: Any, collection: str, literal: Literal, level: Callable[[], str], *,
               create: bool = False, layout: str | None = None) -> tuple[Words | None, bool]:
    """(the companion index of ``collection`` or None, whether it was created now and is empty).

    ``create`` makes one when there is none: BM25 where the engine takes the function, else postings;
    ``layout`` ("bm25" or "postings") forces one."""
    for cls, suffix in ((BM25Words, BM25_SUFFIX), (PostingsWords, POSTINGS_SUFFIX)):
        if client.has_collection(collection + suffix) and layout in (None, cls.kind):
            state = client.get_load_state(collection + suffix).get("state")
            if getattr(state, "name", str(state)) != "Loaded":  # a fresh client finds collections released
                client.load_collection(collection + suffix)
            return cls(client, collection + suffix, literal, level), False
    if not create:
        return None, False
    for cls, suffix in ((BM25Words, BM25_SUFFIX), (PostingsWords, POSTINGS_SUFFIX)):
        if layout not in (None, cls.kind):
            continue
        try:
            cls.create(client, collection + suffix)
        except Exception as e:
            if cls is PostingsWords and client.has_collection(collection + suffix):  # another client made it first
                return cls(client, collection + suffix, literal, level), False
            if cls is PostingsWords:
                raise
            if client.has_collection(collection + suffix):  # what the engine kept of it cannot load
                client.drop_collection(collection + suffix)
            logger.info("%s: no BM25 function here (%s); keeping word postings instead", collection,
                        " ".join(str(e).split())[:200])
            continue
        return cls(client, collection + suffix, literal, level), True
    return None, False


# ---------------------------------------------------------------------------------------------
# The write journal: which writes the word index does not reflect yet (see the module docstring).

_LIVE_WRITES: set[str] = set()  # journal keys of this process's writes in flight
_LIVE_LOCK = threading.Lock()
_JOURNAL_PREFIX = "write/"


@dataclass(frozen=True)
class PendingWrite:
    """A journal entry: a write begun on the rows and not (yet) reflected in the word index."""

    key: str
    host: str
    pid: int
    started: float
    words: str  # the layout of the word index the writer was keeping ("bm25" / "postings"; "" unknown)

    def describe(self) -> str:
        when = (time.strftime("at %Y-%m-%d %H:%M:%S", time.localtime(self.started)) if self.started
                else "at a time unknown")
        return f"a write begun {when} by pid {self.pid} on {self.host or 'a host unknown'}"

    def gone(self, exclusive: bool) -> bool:
        """Whether its writer can no longer finish it. ``exclusive``: the engine admits one process per store
        (Milvus Lite), so any writer but this process's writes in flight is gone."""
        with _LIVE_LOCK:
            if self.key in _LIVE_WRITES:
                return False
        if exclusive:
            return True
        if self.host != socket.gethostname():  # no way to ask that host: by age
            return time.time() - self.started > STALE_WRITE_S
        if self.pid == os.getpid():
            return True  # not in flight here: this process failed it
        return not process_alive(self.pid)


class WriteJournal:
    """The writes in flight on a store with a word index, one row each in ``<collection>__journal``."""

    def __init__(self, client: Any, name: str, literal: Literal) -> None:
        self._client, self.name, self._literal = client, name, literal

    @staticmethod
    def create(client: Any, name: str) -> None:
        from pymilvus import DataType, MilvusClient

        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False,
                                            description="tracerag writes not yet reflected in the word index")
        schema.add_field("key", DataType.VARCHAR, is_primary=True, max_length=128)
        schema.add_field("value", DataType.VARCHAR, max_length=4096)
        schema.add_field("v", DataType.FLOAT_VECTOR, dim=2)  # a Milvus 2.3 collection needs a vector field
        index = client.prepare_index_params()
        index.add_index(field_name="v", index_type="FLAT", metric_type="L2")
        client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong")

    @classmethod
    def open(cls, client: Any, collection: str, literal: Literal, *, create: bool = False) -> WriteJournal | None:
        """The journal of ``collection``; None when it has none and ``create`` is False."""
        name = collection + JOURNAL_SUFFIX
        if not client.has_collection(name):
            if not create:
                return None
            try:
                cls.create(client, name)
            except Exception:
                if not client.has_collection(name):  # not a race with another creator
                    raise
        state = client.get_load_state(name).get("state")
        if getattr(state, "name", str(state)) != "Loaded":
            client.load_collection(name)
        return cls(client, name, literal)

    def begin(self, words: str) -> str:
        """Record a write about to change rows (kept while it runs in this process); returns its key."""
        key = _JOURNAL_PREFIX + uuid.uuid4().hex
        value = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "started": time.time(), "words": words})
        with _LIVE_LOCK:
            _LIVE_WRITES.add(key)
        try:
            self._client.upsert(self.name, [{"key": key, "value": value, "v": [1.0, 0.0]}])
        except BaseException:
            self.abandon(key)
            raise
        return key

    def end(self, key: str) -> None:
        """The write finished, words included: forget it."""
        try:
            self._client.delete(self.name, filter=_in("key", [key], self._literal))
        finally:
            self.abandon(key)

    @staticmethod
    def abandon(key: str) -> None:
        """The write failed in this process: its entry stays for the next check to find."""
        with _LIVE_LOCK:
            _LIVE_WRITES.discard(key)

    def pending(self) -> list[PendingWrite]:
        rows = self._client.query(self.name, filter=f"key like {self._literal(_JOURNAL_PREFIX + '%')}",
                                  output_fields=["key", "value"], limit=PAGE, consistency_level="Strong")
        out = []
        for r in rows:
            try:
                v = json.loads(r["value"])
                out.append(PendingWrite(r["key"], str(v.get("host", "")), int(v.get("pid", 0)),
                                        float(v.get("started", 0.0)), str(v.get("words", ""))))
            except (ValueError, TypeError, AttributeError):
                out.append(PendingWrite(r["key"], "", 0, 0.0, ""))
        return list({p.key: p for p in out}.values())  # a row the engine replayed twice counts once

    def clear(self, keys: Sequence[str]) -> None:
        for start in range(0, len(keys), IDS_PER_FILTER):
            self._client.delete(self.name, filter=_in("key", keys[start : start + IDS_PER_FILTER], self._literal))
