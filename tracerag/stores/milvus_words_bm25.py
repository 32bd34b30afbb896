"""The word index of a Milvus store on the engine's own BM25: a ``<collection>__bm25`` companion.

Where the engine has Milvus' BM25 function (Milvus Lite >= 3, a Milvus server >= 2.5): one row per stored
row holding its tokens, each written as ``x`` + its UTF-8 hex so the engine's standard analyzer keeps
exactly our tokens; the engine builds the sparse vectors and ranks. Scores equal the in-memory index's
while the companion is one segment (as a build leaves it). Milvus Lite 3.2 takes IDF and average length
per segment, so after each write call on Lite the companion is rewritten as one (:meth:`BM25Words.settle`:
about 2 s at 4,000 rows); a server >= 2.5 uses collection-wide statistics (not measured here: the test
server is 2.3).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..errors import InvalidValue
from .milvus_words import K1, PAGE, QUERIES_PER_READ, REWRITE_SUFFIX, TEXT_KEY, B, Literal, _in, row_tokens
from .word_tokens import word_tokens

__all__ = ["BM25Words"]

WORDS_MAX_BYTES = 65_535  # a VARCHAR field's limit: tokens past it are left out of a row's words


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
            raise InvalidValue("the engine kept no BM25 function")

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
