"""The vector index of a Milvus store's collection: which one (by size), and how it is (re)built.

Index by size: FLAT (exact) while the collection holds fewer than ``hnsw_threshold`` rows (100,000 by
default); an upsert that crosses it rebuilds the index as HNSW (``hnsw_m`` 16, ``hnsw_ef_construction``
200; all three are :meth:`~.milvus_store.MilvusStore.open` arguments) searched with ef = max(k, ``?ef=`` of
the URI, default 128). Clustered vectors (embeddings) are found exactly at ef 128 at 100k rows (recall@10
0.995 at 1M); uniformly random ones need ef 4096 at M=16 or ef 2048 at M=32 for recall@10 >= 0.98 at 100k
rows, M=32 and ef 8192 at 1M (BENCHMARKS.md). During the rebuild (tens of seconds at 100k rows) the
collection is released and searches from other clients fail, so on a server build large stores before
serving them; :meth:`~.milvus_store.MilvusStore.reindex` rebuilds with other parameters. A bulk ingest
through ``copy_store`` ends by reloading the collection (:meth:`~.milvus_store.MilvusStore.refresh_index`),
since a server serves segments sealed after the switch from an interim index until then; other writers
call it themselves after a bulk write (a reload makes the collection unavailable for its duration, so
upserts never do it unasked). An engine that refuses HNSW gets AUTOINDEX, then FLAT, with a warning;
:meth:`~.milvus_store.MilvusStore.describe` reports the index in use.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ..errors import InvalidValue
from .milvus_errors import _one_line

logger = logging.getLogger(__name__)

HNSW_BUILD = {"M": 16, "efConstruction": 200}
INDEX_WAIT_S = 3600.0  # a 1M-row HNSW build took ~15 min on 2 cores


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
            raise InvalidValue(f"{name} must be a whole number from {low} to {high}, got {value!r}")
    return {"M": m, "efConstruction": ef_construction}
