"""The BM25 word index of a Milvus store, kept next to its collection and written with every upsert and
delete, so a hybrid retriever on Milvus never reads every row to build its lexical channel.

It indexes each row's metadata ``text`` (:data:`TEXT_KEY`) with the hybrid retriever's own tokens
(:func:`~.hybrid.word_tokens`: plurals folded, CJK characters and bigrams) and BM25 k1=1.2, b=0.75, the
in-memory :class:`~.hybrid.WordIndex`'s parameters. Two layouts, chosen when the index is created:

- ``<collection>__bm25`` where the engine has Milvus' BM25 function (Milvus Lite >= 3, a Milvus server
  >= 2.5): one row per stored row holding its tokens, each written as ``x`` + its UTF-8 hex so the
  engine's standard analyzer keeps exactly our tokens; the engine builds the sparse vectors and ranks.
  Scores equal the in-memory index's while the companion is one segment (as a build leaves it); Milvus
  Lite 3.2 takes IDF and average length per segment, so rows upserted since drift a little until its
  compaction merges them (a server >= 2.5 uses collection-wide statistics).
- ``<collection>__words`` elsewhere (a Milvus 2.3/2.4 server has no BM25 function): postings, one row
  per (word, row) with its term frequency and the row's length, one length row per stored row and one
  row of totals; BM25 is computed here from the postings of the query's words, so scores equal the
  in-memory index's. A query reads every posting of its words: words found in most rows cost most.

A companion whose row count disagrees with the store (created by a build that was interrupted, or by a
client that predates it) is rebuilt from one scan when a retriever opens it. Writers from several
processes at once may leave the postings' totals (row count, total length) off by their race; the
next rebuild corrects them.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from .hybrid import word_tokens

__all__ = ["BM25_SUFFIX", "POSTINGS_SUFFIX", "TEXT_KEY", "BM25Words", "PostingsWords", "open_words"]

logger = logging.getLogger(__name__)

TEXT_KEY = "text"
K1, B = 1.2, 0.75
BM25_SUFFIX, POSTINGS_SUFFIX = "__bm25", "__words"
WORDS_MAX_BYTES = 65_535  # a VARCHAR field's limit: tokens past it are left out of a row's words
TOKEN_MAX_BYTES = 100  # longer tokens (hex 201 characters) are left out: no analyzer keeps them whole
PAGE = 16_384  # Milvus' limit on rows per query
_STATS_KEY = "#stats"  # "#" is never a token, so no posting can have this key

Literal = Callable[[str], str]  # a string as a Milvus string literal (milvus_store._string_literal)


def row_tokens(metadata: dict[str, Any]) -> list[str]:
    text = metadata.get(TEXT_KEY)
    return [t for t in word_tokens(text) if len(t.encode("utf-8")) <= TOKEN_MAX_BYTES] if isinstance(text, str) else []


def _in(field: str, values: Iterable[str], literal: Literal) -> str:
    return f"{field} in [" + ", ".join(literal(v) for v in values) + "]"


class BM25Words:
    """The engine's own BM25 over a companion collection (see the module docstring)."""

    kind = "bm25"

    def __init__(self, client: Any, name: str, literal: Literal, level: Callable[[], str]) -> None:
        self._client, self.name, self._literal, self._level = client, name, literal, level

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

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self._client.delete(self.name, filter=_in("id", ids, self._literal))

    def seal(self) -> None:
        self._client.flush(self.name)

    def count(self) -> int:
        rows = self._client.query(self.name, filter="", output_fields=["count(*)"], consistency_level="Strong")
        return int(rows[0]["count(*)"])

    def _search(self, query: str, limit: int, filter: str = "") -> list[tuple[str, float]]:
        words = self.encode(word_tokens(query))
        if not words or limit <= 0:
            return []
        hits = self._client.search(self.name, data=[words], anns_field="sparse", limit=min(limit, PAGE),
                                   filter=filter, output_fields=[], consistency_level=self._level(),
                                   search_params={"metric_type": "BM25", "params": {}})[0]
        # Milvus Lite reports BM25 as a negative distance, a server as the score itself
        return [(h["id"], abs(float(h["distance"]))) for h in hits if float(h["distance"]) != 0]

    def top(self, query: str, m: int) -> list[tuple[str, float]]:
        """The ``m`` best rows for ``query`` by BM25, best first (rows sharing no word are left out)."""
        return self._search(query, m)

    def scores(self, query: str, ids: Sequence[str]) -> dict[str, float]:
        """BM25 of these rows for ``query`` (rows sharing no word are left out)."""
        out: dict[str, float] = {}
        for start in range(0, len(ids), PAGE):
            batch = list(ids[start : start + PAGE])
            out.update(self._search(query, len(batch), _in("id", batch, self._literal)))
        return out


class PostingsWords:
    """Postings in a companion collection, BM25 computed here (see the module docstring)."""

    kind = "postings"

    def __init__(self, client: Any, name: str, literal: Literal, level: Callable[[], str]) -> None:
        self._client, self.name, self._literal, self._level = client, name, literal, level
        self._last: tuple[str, dict[str, float]] | None = None  # (query, every row's BM25) from the last top()

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
        for field in ("term", "id"):
            for kind in ("INVERTED", "Trie"):  # Milvus Lite / 2.4+ and 2.3's index for strings
                scalar = client.prepare_index_params()
                scalar.add_index(field_name=field, index_type=kind)
                try:
                    client.release_collection(name)
                    client.create_index(name, scalar)
                    break
                except Exception as e:  # this engine lacks that index type: try the next, else none
                    logger.info("%s: no %s index on %s (%s)", name, kind, field, " ".join(str(e).split())[:200])
        client.load_collection(name)

    def _query(self, filter: str, fields: list[str], level: str | None = None) -> list[dict[str, Any]]:
        """Every row matching ``filter``, paged by key (a query returns at most :data:`PAGE` rows)."""
        out: list[dict[str, Any]] = []
        last = None
        while True:
            where = filter if last is None else f"({filter}) and key > {self._literal(last)}"
            rows = self._client.query(self.name, filter=where, output_fields=["key", *fields], limit=PAGE,
                                      consistency_level=level or self._level())
            out.extend(rows)
            if len(rows) < PAGE:
                return out
            last = max((r["key"] for r in rows), key=lambda k: k.encode("utf-8"))

    def _stats(self, level: str | None = None) -> tuple[int, int]:
        rows = self._client.query(self.name, filter=f"key == {self._literal(_STATS_KEY)}",
                                  output_fields=["tf", "dl"], consistency_level=level or self._level())
        return (int(rows[0]["tf"]), int(rows[0]["dl"])) if rows else (0, 0)

    def update(self, rows: Sequence[tuple[str, dict[str, Any]]], *, replace: bool = True) -> None:
        """Index these rows (id, metadata); ``replace=False`` skips dropping what the ids held (a fresh build)."""
        if not rows:
            return
        self._last = None
        ids = [x for x, _ in rows]
        old = self._drop(ids) if replace else (0, 0)
        new_rows, total = [], 0
        for x, metadata in rows:
            tokens = row_tokens(metadata)
            total += len(tokens)
            new_rows.append(self._posting("", x, 0, len(tokens)))  # the length row: this id is indexed
            new_rows.extend(self._posting(t, x, tf, len(tokens)) for t, tf in Counter(tokens).items())
        for start in range(0, len(new_rows), 5000):
            self._client.upsert(self.name, new_rows[start : start + 5000])
        self._add_stats(len(rows) - old[0], total - old[1])

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self._last = None
            removed, length = self._drop(list(ids))
            self._add_stats(-removed, -length)

    def _drop(self, ids: list[str]) -> tuple[int, int]:
        """Delete these ids' postings; (how many of them were indexed, their total length)."""
        found = self._query(f'term == "" and {_in("id", ids, self._literal)}', ["dl"], "Strong")
        if found:
            self._client.delete(self.name, filter=_in("id", ids, self._literal))
        return len(found), sum(int(r["dl"]) for r in found)

    def _add_stats(self, rows: int, length: int) -> None:
        n, total = self._stats("Strong")
        self._client.upsert(self.name, [self._posting("#stats", "", n + rows, total + length, key=_STATS_KEY)])

    @staticmethod
    def _posting(term: str, id: str, tf: int, dl: int, key: str | None = None) -> dict[str, Any]:
        return {"key": key if key is not None else f"{term} {id}", "term": term, "id": id, "tf": tf, "dl": dl,
                "v": [1.0, 0.0]}

    def seal(self) -> None:
        self._client.flush(self.name)

    def count(self) -> int:
        return self._stats("Strong")[0]

    def _weights(self, query: str, postings: list[dict[str, Any]], df: dict[str, int]) -> dict[str, float]:
        """BM25 per row id, summed word by word in the query's order, in float32 as WordIndex does."""
        n, total = self._stats()
        avg = np.float32(total) / np.float32(max(n, 1)) if n and total else np.float32(1.0)
        by_term: dict[str, list[dict[str, Any]]] = {}
        for p in postings:
            by_term.setdefault(p["term"], []).append(p)
        scores: dict[str, np.float32] = {}
        for token, times in Counter(word_tokens(query)).items():
            rows = by_term.get(token)
            if not rows:
                continue
            idf = np.log1p((n - df[token] + 0.5) / (df[token] + 0.5))
            tf = np.asarray([r["tf"] for r in rows], dtype=np.int64)
            norm = K1 * (1 - B + B * np.asarray([r["dl"] for r in rows], dtype=np.float32) / avg)
            weights = (idf * tf * (K1 + 1) / (tf + norm)).astype(np.float32)
            for r, w in zip(rows, times * weights, strict=True):
                scores[r["id"]] = scores.get(r["id"], np.float32(0)) + w
        return {x: float(s) for x, s in scores.items() if s > 0}

    def top(self, query: str, m: int) -> list[tuple[str, float]]:
        """The ``m`` best rows for ``query`` by BM25, best first, ties by id (the scan order)."""
        terms = sorted(set(word_tokens(query)))
        if not terms:
            return []
        postings = self._query(_in("term", terms, self._literal), ["term", "id", "tf", "dl"])
        scores = self._weights(query, postings, Counter(p["term"] for p in postings))
        self._last = (query, scores)  # every row holding a query word: scores() answers from it
        return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0].encode("utf-8")))[:max(m, 0)]

    def scores(self, query: str, ids: Sequence[str]) -> dict[str, float]:
        """BM25 of these rows for ``query`` (rows sharing no word are left out), from the last :meth:`top` of
        the same query when there was one (it scored every row holding a query word), else from a new one."""
        terms = sorted(set(word_tokens(query)))
        if not terms or not ids:
            return {}
        if self._last is None or self._last[0] != query:
            self.top(query, 0)
        scores = self._last[1]
        return {x: scores[x] for x in ids if x in scores}


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
