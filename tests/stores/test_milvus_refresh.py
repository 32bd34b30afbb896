"""A bulk ingest leaves a Milvus store's HNSW index serving every row: ``copy_store`` (so ``store copy``,
``ingest --store``, ``build-bank --store``) ends with ``refresh_index()``, since a Milvus 2.3 server
serves segments sealed after the switch to HNSW from an interim index until reloaded.

The index parameters are the store's to choose and checked. The real server runs in the
``milvus_server`` step (``tests/milvus_standalone.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tracerag.stores.cosine_bank import CosineBank
from tracerag.stores.milvus_store import MilvusStore
from tracerag.stores.store_copy import copy_store

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from milvus_marks import STANDALONE, needs_milvus, on_the_server  # noqa: E402

pytestmark = needs_milvus
DIM = 128


def uniform(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def recall_at_10(store: MilvusStore, rows: np.ndarray, queries: np.ndarray) -> float:
    exact = np.argsort(-(queries @ rows.T), axis=1)[:, :10]
    found = sum(len({h.id for h in store.search(q, k=10)[0]} & {f"r{i}" for i in truth})
                for q, truth in zip(queries, exact, strict=True))
    return found / (10 * len(queries))


def test_hnsw_parameters_are_the_stores_and_checked(tmp_path):
    uri = f"milvus:{tmp_path / 's.db'}?collection=p"
    with pytest.raises(ValueError, match="hnsw_m must be a whole number from 2 to 2048, got 1"):
        MilvusStore.open(uri, embedder_id="e", dim=DIM, create=True, hnsw_m=1)
    with pytest.raises(ValueError, match="hnsw_ef_construction"):
        MilvusStore.open(uri, embedder_id="e", dim=DIM, create=True, hnsw_ef_construction="200")
    store = MilvusStore.open(uri, embedder_id="e", dim=DIM, create=True, hnsw_threshold=50, hnsw_m=8)
    rows = uniform(60, 0)
    store.upsert([f"r{i}" for i in range(60)], rows)
    assert store.describe().index == "HNSW" and store._hnsw_build == {"M": 8, "efConstruction": 200}
    assert store.refresh_index() is False  # Milvus Lite indexes each segment as it seals it
    assert store.reindex(m=24, ef_construction=100) == "HNSW" and store._hnsw_build["M"] == 24
    assert store.search(rows[3], k=1)[0][0].id == "r3"
    store.close()


@on_the_server
def test_a_copy_past_the_switch_leaves_every_row_on_the_index(tmp_path):
    rows, queries = uniform(20_000, 1), uniform(50, 2)
    CosineBank.from_vectors(tmp_path / "bank", rows, [f"r{i}" for i in range(len(rows))], [{}] * len(rows),
                            embedder_id="e")
    store = MilvusStore.open(f"{STANDALONE}?collection=refresh_copy&ef=1024", embedder_id="e", dim=DIM,
                             create=True, hnsw_threshold=2_000)
    assert copy_store(str(tmp_path / "bank"), store, batch_size=1000).ok  # 18,000 rows arrive after the switch
    info = store._client.describe_index("refresh_copy", "vector")
    assert store.describe().index == "HNSW" and int(info["indexed_rows"]) == len(rows)
    assert recall_at_10(store, rows, queries) >= 0.95
    store.close()


@on_the_server
def test_refresh_index_after_upserts_past_the_switch_serves_them_through_hnsw():
    first, rows, queries = uniform(2_000, 3), uniform(12_000, 4), uniform(50, 5)
    store = MilvusStore.open(f"{STANDALONE}?collection=refresh_upsert&ef=1024", embedder_id="e", dim=DIM,
                             create=True, hnsw_threshold=2_000)
    store.upsert([f"f{i}" for i in range(len(first))], first)
    assert store.describe().index == "HNSW"
    for start in range(0, len(rows), 3_000):  # writes after the switch, as a program makes them
        store.upsert([f"r{i}" for i in range(start, min(start + 3_000, len(rows)))], rows[start : start + 3_000])
    assert store.refresh_index() is True
    everything = np.concatenate([rows, first])
    ids = [f"r{i}" for i in range(len(rows))] + [f"f{i}" for i in range(len(first))]
    exact = np.argsort(-(queries @ everything.T), axis=1)[:, :10]
    found = sum(len({h.id for h in store.search(q, k=10)[0]} & {ids[i] for i in truth})
                for q, truth in zip(queries, exact, strict=True))
    assert found / (10 * len(queries)) >= 0.95
    store.close()


@pytest.mark.milvus_server
def test_bulk_ingest_refreshes_on_a_real_milvus_server():
    import milvus_standalone

    why = milvus_standalone.available()
    if why:
        pytest.skip(why)
    suite = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-m", "not milvus_server",
             __file__]
    assert milvus_standalone.run_inside(suite) == 0


def test_open_store_passes_the_index_options_to_milvus_only(tmp_path):
    from tracerag.stores.stores import open_store
    from tracerag.stores.vector_store import StoreError

    store = open_store(f"milvus:{tmp_path / 's.db'}", embedder_id="e", dim=DIM, create=True, hnsw_threshold=5,
                       hnsw_m=12)
    store.upsert([f"r{i}" for i in range(5)], uniform(5, 6))
    assert store.describe().index == "HNSW" and store._hnsw_build["M"] == 12
    store.close()
    with pytest.raises(StoreError, match="hnsw_m apply only to Milvus stores"):
        open_store(str(tmp_path / "bank"), embedder_id="e", dim=DIM, create=True, hnsw_m=12)


def test_store_copy_can_skip_the_reload():
    import argparse

    from tracerag.store_cli import add_store_commands

    parser = argparse.ArgumentParser()
    add_store_commands(parser.add_subparsers(dest="command"))
    assert parser.parse_args(["store", "copy", "--from", "a", "--to", "b"]).refresh is True
    assert parser.parse_args(["store", "copy", "--from", "a", "--to", "b", "--no-refresh"]).refresh is False
