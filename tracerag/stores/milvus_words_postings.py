"""The word index of a Milvus store as postings, BM25 computed here: a ``<collection>__words`` companion.

Where the engine has no BM25 function (a Milvus 2.3/2.4 server): one row per (word, row) with its term
frequency and the row's length, one length row per stored row, one document-frequency row per word and one
row of totals; BM25 is computed here, so scores equal the in-memory index's. A query costs one read of the
totals, its words' frequencies and the postings of its rarer words; the postings of words found in more
than a quarter of the rows (``the``, ``of``) are read only for the rows that can still rank, and kept in
memory until the next write (see :meth:`PostingsWords.top`).
"""

from __future__ import annotations

import heapq
import logging
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidValue
from .bm25_grid import exact_sums, on_grid
from .milvus_words import (
    IDS_PER_FILTER,
    K1,
    PAGE,
    QUERIES_PER_READ,
    TEXT_KEY,
    TOKEN_MAX_BYTES,
    B,
    Literal,
    _in,
    row_tokens,
)
from .word_tokens import word_tokens

__all__ = ["PostingsWords"]

logger = logging.getLogger(__name__)

# "#" is never in a token, so these keys and terms cannot be a posting's. The totals row changed key when the
# per-word document frequencies were added: a companion without them holds no "#totals", counts 0 rows
# and is rebuilt when a retriever opens it.
_STATS_KEY = "#totals"  # its term is "#v" and a new random version at every write (see _cached_words)
_DF_TERM = "#df"
COMMON_SHARE = 0.25
CACHE_POSTINGS = 100_000  # common words' postings kept in memory per index, until the next write
EXPECTED_MAX = 256  # a hint of more rows than this (a batch of searches) is not read ahead
_SLACK = 1e-4  # float32 sums against float64 bounds: rows this close to the floor are read too


def _df_key(term: str) -> str:
    return "# " + term


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
            raise InvalidValue(f"common_share must be in (0, 1], got {share}")
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
    """BM25 per row id over these postings, as the in-memory :class:`~tracerag.documents.word_index.WordIndex`
    sums them (so scores match it bit for bit): weights on the grid of :mod:`.bm25_grid`, summed exactly in
    float64 up to its ``EXACT_ROWS`` rows, else word by word in the query's order in float32."""
    n, total = scored.n, scored.total
    avg = np.float32(total) / np.float32(max(n, 1)) if n and total else np.float32(1.0)
    exact = exact_sums(n)
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
        weights = on_grid((idf * tf * (K1 + 1) / (tf + norm)).astype(np.float32))
        parts.append((at, times * weights.astype(np.float64) if exact else times * weights))
    scores = np.zeros(len(slots), dtype=np.float64 if exact else np.float32)
    for at, weights in parts:
        scores[at] += weights  # a word lists each row once
    scores = scores.astype(np.float32)
    return {x: s for x, s in zip(slots, scores.tolist(), strict=True) if s > 0}
