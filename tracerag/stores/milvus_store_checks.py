"""The check a Milvus store runs on open: ids stored twice, found and rewritten as one copy, and a word
index that lags the rows, rebuilt.

Cheap unless a writer was killed (:meth:`~StoreChecks._check_on_open`):

- a Milvus Lite file is looked at before the engine opens it, and its files when the engine fails to load
  a collection (:mod:`.milvus_lite_files`): a damaged index file is deleted and rebuilt by the engine, a
  damaged file of the word index or its journal drops that collection, rebuilt from the rows, a damaged
  file of the rows themselves is one :class:`~.milvus_errors.StoreDamaged` line.
- duplicate ids, when a crash was seen (a writer killed mid-flush left its mark, or a write journal entry
  of a writer that is gone): every id is read once (id and hash), the count of distinct ids compared with
  the collection's own ``count(*)``, and each duplicated id rewritten as one copy (an upsert: newer than
  every copy). Which copy: identical copies are one; of differing copies the one whose stored hash matches
  its vector and metadata (a copy tracerag wrote whole); else the copy a lookup by id returns, since which
  write is newest cannot be told through pymilvus (Lite's duplicates share one sequence number). One
  warning names the store, the ids and the rule used. Searches and scans never return one id twice,
  repaired or not (a search that meets copies reads further). :meth:`~StoreChecks.check` runs this scan on
  demand, mark or not.
- the word index (:mod:`.milvus_store_words`): rebuilt from the rows (one info line saying why) when a
  write journal entry shows a writer gone between the row upsert and the word-index update, when its row
  count differs from the store's, or when it is damaged or missing after an interrupted rewrite.

A repair that cannot be written (a full disk, a read-only user) is a warning, and the store opens for
reading as it is: searches drop repeated ids, and the store offers no stale word index (the hybrid
retriever then indexes the rows in memory); the journal keeps the entry for the next open.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from .milvus_collection import MAX_TOP_K
from .milvus_errors import StoreDamaged
from .milvus_expressions import _string_literal, ids_expression
from .milvus_lite_files import _collection_of
from .milvus_words import BM25_SUFFIX, JOURNAL_SUFFIX, POSTINGS_SUFFIX
from .vector_store import StoreError, row_hash

logger = logging.getLogger(__name__)


class StoreChecks:
    """The check on open of :class:`~.milvus_store.MilvusStore`, which inherits it; the state it uses is set
    by ``MilvusStore.__init__``, the word index it rebuilds is :class:`~.milvus_store_words.StoreWordIndex`'s."""

    def _check_on_open(self, crashed: dict[str, str]) -> None:
        """Duplicate ids and a word index that lags the rows, found and repaired (see the module
        docstring). ``crashed``: collection name -> the mark on disk of a writer killed mid-flush (Milvus Lite)."""
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
