"""Which writes the word index of a Milvus store does not reflect yet: its write journal,
``<collection>__journal``, created with the companion.

Every write call that changes rows of a store with a word index first records an entry (a random write id,
the writer's host and pid, when it began, the companion's layout), then writes the rows, then the words,
and removes the entry only once the words (and, on Lite, the flush and rewrite of the companion) are done.
An entry left behind by a writer that is gone (killed between the row upsert and the word-index update, or
failed there) therefore always outlives the lag it marks: the store's check on open
(:mod:`.milvus_store_checks`) finds it, rebuilds the companion from the rows and clears it. The rows
themselves carry no write id: recording the write *before* the rows change is what makes a crash at any
later point detectable, and a per-row stamp would add a schema field to every row for no case the entry
misses. A writer is gone when its pid no longer runs on this host, or (Milvus Lite, which admits one process
per store) whenever it is not a write in flight in this process; a writer on another host counts as gone
once its entry is older than :data:`STALE_WRITE_S`. Counts (companion rows against store rows) are still
compared, for writers that predate the journal.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..data_files.processes import process_alive
from .milvus_words import IDS_PER_FILTER, JOURNAL_SUFFIX, PAGE, Literal, _in

__all__ = ["PendingWrite", "WriteJournal"]

STALE_WRITE_S = 3600.0  # a journal entry of another host this old is taken for a writer that is gone
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
