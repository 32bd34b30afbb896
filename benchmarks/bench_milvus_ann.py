"""HNSW recall@10 against exact search on a real Milvus server, by search ``ef``, on clustered and on
uniformly random vectors (the hard case for any graph index).

    python tests/milvus_standalone.py -- python benchmarks/bench_milvus_ann.py [--rows 20000]

The store switches to HNSW past ``hnsw_threshold`` rows (100,000 by default); here the threshold is 1, so
the index is HNSW at any size. Exact neighbours come from numpy on the same unit vectors. Per data set
and ef: recall@10 over 200 queries (clustered: drawn near the same centres; uniform: fresh random
vectors) and the median search time, first as the store left the collection after the ingest, then
after releasing and loading it again (Milvus 2.3.5 keeps serving segments sealed after the index switch
from its interim index until the collection is loaded again).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tracerag.retrievers.milvus_store as milvus_store  # noqa: E402

DIM = 384
QUERIES = 200
EFS = (64, 128, 256, 512, 1024, 2048)


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def data_sets(rows: int, rng: np.random.Generator) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    centres = rng.standard_normal((200, DIM))
    pick = rng.integers(200, size=rows + QUERIES)
    clustered = _unit(centres[pick] + 0.35 * rng.standard_normal((rows + QUERIES, DIM)))
    uniform = _unit(rng.standard_normal((rows + QUERIES, DIM)))
    return {name: (v[:rows], v[rows:]) for name, v in (("clustered", clustered), ("uniform", uniform))}


def _indexed(store, collection: str, rows: int, wait_s: float = 600) -> int:
    """Seal the rows and wait until the index holds them all (rows still in growing segments are searched
    exactly, which would flatter the index): how many rows it holds."""
    client = store._client
    client.flush(collection)
    deadline = time.monotonic() + wait_s
    while True:
        info = client.describe_index(collection, "vector")
        done = int(info.get("indexed_rows", 0))
        if done >= rows or time.monotonic() > deadline:
            client.load_collection(collection)
            return done
        time.sleep(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()
    base = os.environ.get("TRACERAG_MILVUS_STANDALONE")
    if not base:
        sys.exit("run me through: python tests/milvus_standalone.py -- python benchmarks/bench_milvus_ann.py")
    print(f"Milvus standalone, HNSW {milvus_store.HNSW_BUILD}, {args.rows} rows x {DIM}, {QUERIES} queries\n")
    print("| vectors | collection | ef | recall@10 vs exact | search p50 ms | rows in the HNSW index |")
    print("|---|---|---|---|---|---|")
    for name, (rows, queries) in data_sets(args.rows, np.random.default_rng(0)).items():
        store = milvus_store.MilvusStore.open(f"{base}?collection=ann_{name}", embedder_id="bench", dim=DIM,
                                              create=True, hnsw_threshold=1)
        if store.count() < len(rows):
            store.upsert([f"r{i}" for i in range(len(rows))], rows)
        indexed = _indexed(store, f"ann_{name}", len(rows))
        exact = np.argsort(-(queries @ rows.T), axis=1)[:, :10]
        for state in ("as ingested", "reloaded"):
            if state == "reloaded":  # what the server serves once it loads the finished index
                store.refresh_index()
            for ef in EFS:
                milvus_store.HNSW_MIN_EF = ef
                found, times = 0, []
                for q, truth in zip(queries, exact, strict=True):
                    t = time.perf_counter()
                    hits = store.search(q, k=10)[0]
                    times.append((time.perf_counter() - t) * 1000)
                    found += len({h.id for h in hits} & {f"r{i}" for i in truth})
                print(f"| {name} | {state} | {ef} | {found / (10 * len(queries)):.3f} | "
                      f"{statistics.median(times):.1f} | {indexed} |")
        store.close()


if __name__ == "__main__":
    main()
