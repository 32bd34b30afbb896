"""How a Milvus store keeps its word index (:mod:`.milvus_words`) in line with its rows, and which layout
it opens or creates (:func:`open_words`).

:meth:`~StoreWordIndex.word_index` creates the BM25 index of the rows' metadata ``text`` and fills it from
one scan the first time it is asked for; every upsert and delete writes it from then on, recorded first in
its write journal. When it lags the rows (a write journal entry of a writer that is gone, a row count that
differs from the store's) it is dropped and rebuilt from the rows, with one info line saying why; while it
lags and cannot be rebuilt (a full disk) none is offered, and the hybrid retriever indexes the rows in
memory.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from .milvus_collection import BATCH_ROWS
from .milvus_expressions import _string_literal
from .milvus_words import BM25_SUFFIX, POSTINGS_SUFFIX, REWRITE_SUFFIX, TEXT_KEY, Literal
from .milvus_words_bm25 import BM25Words
from .milvus_words_journal import WriteJournal
from .milvus_words_postings import PostingsWords
from .vector_store import StoreError

logger = logging.getLogger(__name__)

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


class StoreWordIndex:
    """The word-index methods of :class:`~.milvus_store.MilvusStore`, which inherits them; the state they use
    is set by ``MilvusStore.__init__``."""

    def word_index(self, text_key: str = "text", *, layout: str | None = None) -> Any:
        """The BM25 index of the rows' metadata ``text`` kept next to the collection (:mod:`.milvus_words`),
        created and filled from one scan the first time it is asked for, rebuilt when it lags the rows (see
        :mod:`.milvus_store_checks`), then written with every upsert and delete. None for another
        ``text_key`` (the hybrid retriever then builds its index in memory), and None while it lags and cannot
        be rebuilt (a full disk). ``layout`` ("bm25" / "postings") forces one."""
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
        if self._word_index is None:
            self._word_index = open_words(self._client, self._collection, _string_literal, self._words_level)[0]
        return self._word_index

    def _journal(self, create: bool = False) -> Any:
        """The word index's write journal (:class:`~.milvus_words_journal.WriteJournal`); None when there is none and
        ``create`` is False (a store that never had a word index needs none)."""
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

    def _words_level(self) -> str:
        if self._words_deleted:
            self._words_deleted = False
            return "Strong"
        return self._read_level
