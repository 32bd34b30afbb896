"""The store protocol's costs on each backend, side by side: the numpy bank, Milvus Lite (a local file) and
a real Milvus server, at 10k and 100k rows.

    python tests/milvus_standalone.py -- nice python benchmarks/bench_milvus_backends.py --sizes 10000 100000

Without ``TRACERAG_MILVUS_STANDALONE`` (set by ``tests/milvus_standalone.py``) the server column is left
out. Per backend and size, on 512-d clustered synthetic unit vectors with ~200 B of metadata per row:
ingest = one ``upsert`` of every row (numpy: the bank's append; Milvus: batches of 1,000 with the hash
check; the HNSW switch is kept out of it and timed apart as "index build", which the store does itself
past ``hnsw_threshold`` = 100,000 rows); then medians of 200 single-query searches and 30 batches of 32
(k=10, the store's default ef 128), 200 ``get`` of 10 ids and 50 ``count`` calls. Reads at the default
Session consistency.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tracerag.retrievers.milvus_store import HNSW_THRESHOLD, MilvusStore  # noqa: E402
from tracerag.retrievers.stores import open_store  # noqa: E402

DIM = 512


def clustered(rows: int, rng: np.random.Generator) -> np.ndarray:
    centres = rng.standard_normal((2000, DIM)).astype(np.float32)
    v = centres[rng.integers(2000, size=rows)] + 0.35 * rng.standard_normal((rows, DIM), dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def median_ms(fn, n: int) -> float:
    times = []
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def open_backend(backend: str, rows: int, work: Path, server: str | None):
    if backend == "numpy":
        return open_store(str(work / f"bank-{rows}"), embedder_id="bench", dim=DIM, create=True)
    uri = f"milvus:{work / 'lite.db'}?collection=b{rows}" if backend == "Milvus Lite" else \
        f"{server}?collection=backends_{rows}"
    # the switch is timed apart: no switch during the ingest, then ensure_index at the real threshold
    return MilvusStore.open(uri, embedder_id="bench", dim=DIM, create=True, hnsw_threshold=rows + 1)


def measure(backend: str, rows: int, work: Path, server: str | None) -> dict:
    rng = np.random.default_rng(rows)
    vectors = clustered(rows + 200, rng)
    queries, vectors = vectors[rows:], vectors[:rows]
    ids = [f"doc{i:07d}#0" for i in range(rows)]
    meta = [{"doc_id": f"doc{i:07d}", "chunk": 0, "source": f"corpus-{i % 7}.jsonl",
             "text": f"chunk {i} " + "lorem ipsum " * 12} for i in range(rows)]
    store = open_backend(backend, rows, work, server)
    started = time.perf_counter()
    store.upsert(ids, vectors, meta)
    ingest = time.perf_counter() - started
    build = 0.0
    if isinstance(store, MilvusStore):
        started = time.perf_counter()
        index = store.ensure_index(HNSW_THRESHOLD)
        build = time.perf_counter() - started
    else:
        index = store.describe().index
    one = median_ms(lambda i: store.search(queries[i % 200], k=10), 200)
    batch = median_ms(lambda i: store.search(queries[(i * 32) % 168 : (i * 32) % 168 + 32], k=10), 30)
    get = median_ms(lambda i: store.get([ids[(i * 7919 + j * 104729) % rows] for j in range(10)]), 200)
    count = median_ms(lambda i: store.count(), 50)
    assert store.count() == rows
    store.close()
    return {"backend": backend, "rows": rows, "index": index, "ingest_s": ingest, "rows_per_s": rows / ingest,
            "build_s": build, "one_ms": one, "batch_ms": batch, "get_ms": get, "count_ms": count}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    server = os.environ.get("TRACERAG_MILVUS_STANDALONE")
    backends = ["numpy", "Milvus Lite"] + (["Milvus server"] if server else [])
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-backends-") as tmp:
        for rows in args.sizes:
            for backend in backends:
                results.append(measure(backend, rows, Path(tmp), server))
                r = results[-1]
                print(f"# {backend} {rows}: {r}", file=sys.stderr, flush=True)
    print(f"{DIM}-d clustered unit vectors, k=10; medians (ms) of 200 single searches, 30 batches of 32, "
          "200 gets of 10 ids, 50 counts\n")
    print("| rows | backend | index | ingest rows/s | index build s | search 1 query ms | search 32 queries ms "
          "| get 10 ids ms | count ms |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['rows']:,} | {r['backend']} | {r['index']} | {r['rows_per_s']:,.0f} | {r['build_s']:.1f} | "
              f"{r['one_ms']:.2f} | {r['batch_ms']:.1f} | {r['get_ms']:.2f} | {r['count_ms']:.2f} |")


if __name__ == "__main__":
    main()
