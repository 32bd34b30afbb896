"""Vector stores through the protocol: the numpy bank against Milvus Lite, on synthetic unit vectors.

    python benchmarks/bench_stores.py [--sizes 10000 100000] [--million] [--dim 512] [--queries 200]
                                      [--out /tmp/bench_sections/stores.md]

Per size and backend: insert throughput (one ``upsert`` of every row: the bank's append, Milvus' batches
of 1,000 with the hash check), the time to build Milvus' HNSW index where the store would use one
(100k rows and up; FLAT below), single-query and batch-of-32 search latency (k=10, p50/p95 over the
queries), and Milvus' recall@10 against the bank's exact top 10 on the same queries. ``--million`` adds
1M rows (about 2 GB of vectors in each backend plus the HNSW build: expect tens of minutes and ~8 GB of
RAM). The vectors are clustered (2,000 random unit centres, noise of about the spread real sentence
embeddings have) so the neighbours mean something; pure uniform random vectors are the worst case for
HNSW recall and are not what embedders produce. Prints a markdown section; ``--out`` also writes it.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tracerag.stores.milvus_store import HNSW_THRESHOLD, MilvusStore
from tracerag.stores.stores import open_store
from tracerag.stores.vector_store import VectorStore

K = 10
BATCH = 32


def clustered_unit_vectors(n: int, dim: int, seed: int, centres: int = 2_000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centre = rng.standard_normal((centres, dim)).astype(np.float32)
    centre /= np.linalg.norm(centre, axis=1, keepdims=True)
    out = np.empty((n, dim), np.float32)
    for start in range(0, n, 50_000):
        m = min(50_000, n - start)
        rows = centre[rng.integers(0, centres, m)] + 0.06 * rng.standard_normal((m, dim)).astype(np.float32)
        out[start : start + m] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return out


def log(message: str) -> None:
    """A progress line on stderr (a 1M-row run takes tens of minutes)."""
    print(time.strftime("%H:%M:%S"), message, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def latencies(store: VectorStore, queries: np.ndarray) -> dict[str, float]:
    store.search(queries[:2], k=K)  # warm-up
    single = []
    for q in queries:
        t = time.perf_counter()
        store.search(q, k=K)
        single.append((time.perf_counter() - t) * 1e3)
    batch = []
    for start in range(0, len(queries) - BATCH + 1, BATCH):
        t = time.perf_counter()
        store.search(queries[start : start + BATCH], k=K)
        batch.append((time.perf_counter() - t) * 1e3)
    return {"p50": statistics.median(single), "p95": percentile(single, 95),
            "b50": statistics.median(batch), "b95": percentile(batch, 95)}


def top_ids(store: VectorStore, queries: np.ndarray) -> list[set[str]]:
    out = []
    for start in range(0, len(queries), BATCH):
        out += [{h.id for h in hits} for hits in store.search(queries[start : start + BATCH], k=K)]
    return out


def run_size(n: int, dim: int, n_queries: int, workdir: Path) -> list[dict]:
    drawn = clustered_unit_vectors(n + n_queries, dim, seed=1)  # queries: same clusters, not stored
    vectors, queries = drawn[:n], drawn[n:]
    ids = [f"doc-{i}" for i in range(n)]
    meta = [{"n": i % 100} for i in range(n)]
    rows = []

    numpy_store = open_store(workdir / f"bank-{n}", embedder_id="synthetic", dim=dim, create=True)
    log(f"{n:,} rows: numpy insert")
    t = time.perf_counter()
    numpy_store.upsert(ids, vectors, meta)
    insert = time.perf_counter() - t
    log(f"{n:,} rows: numpy inserted in {insert:.1f} s; searching")
    exact = top_ids(numpy_store, queries)
    rows.append({"backend": "numpy bank", "n": n, "index": "exact", "insert_rows_s": n / insert, "build_s": 0.0,
                 "recall": 1.0, **latencies(numpy_store, queries)})
    numpy_store.close()

    # Insert into a FLAT collection, then build the index the store would choose at this size, timed apart.
    milvus = MilvusStore.open(f"milvus:{workdir / f'lite-{n}.db'}", embedder_id="synthetic", dim=dim, create=True,
                              hnsw_threshold=10**12)
    log(f"{n:,} rows: Milvus Lite insert")
    t = time.perf_counter()
    milvus.upsert(ids, vectors, meta)
    insert = time.perf_counter() - t
    log(f"{n:,} rows: Milvus Lite inserted in {insert:.1f} s; building the index")
    t = time.perf_counter()
    index = milvus.ensure_index(HNSW_THRESHOLD)
    build = time.perf_counter() - t
    log(f"{n:,} rows: {index} built in {build:.1f} s; searching")
    found = top_ids(milvus, queries)
    recall = float(np.mean([len(a & b) / K for a, b in zip(found, exact, strict=True)]))
    rows.append({"backend": "Milvus Lite", "n": n, "index": index, "insert_rows_s": n / insert, "build_s": build,
                 "recall": recall, **latencies(milvus, queries)})
    t = time.perf_counter()
    report = milvus.upsert(ids[:10_000], vectors[:10_000], meta[:10_000])
    rows[-1]["reupsert_10k_s"] = time.perf_counter() - t
    assert report.written == 0, report
    milvus.close()
    for r in rows:
        print(r, flush=True)
    return rows


def table(rows: list[dict], dim: int, n_queries: int, command: str) -> str:
    lines = [
        "## Vector stores: numpy bank vs Milvus Lite",
        "",
        f"`{command}`",
        "",
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; "
        f"{dim}-d clustered synthetic unit vectors, {n_queries} held-out queries, k={K}; latencies through the "
        "store protocol (numpy: exact scan; Milvus Lite: the engine in a local file, reached over local gRPC).",
        "",
        "| rows | backend | index | insert rows/s | index build s | 1 query p50 / p95 ms "
        "| batch of 32 p50 / p95 ms | recall@10 vs exact |",
        "|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']:,} | {r['backend']} | {r['index']} | {r['insert_rows_s']:,.0f} | {r['build_s']:.1f} "
            f"| {r['p50']:.2f} / {r['p95']:.2f} | {r['b50']:.1f} / {r['b95']:.1f} | {r['recall']:.3f} |"
        )
    reup = [f"{r['n']:,} rows: {r['reupsert_10k_s']:.2f} s" for r in rows if "reupsert_10k_s" in r]
    lines += ["", "Re-upserting 10,000 unchanged rows into Milvus Lite (hash check, nothing written): "
              + "; ".join(reup) + "."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--million", action="store_true", help="also 1,000,000 rows (slow, ~8 GB RAM)")
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown section here")
    args = parser.parse_args()
    sizes = args.sizes + ([1_000_000] if args.million else [])
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-stores-") as tmp:
        for n in sizes:
            rows += run_size(n, args.dim, args.queries, Path(tmp))
    command = "python benchmarks/bench_stores.py" + (" --sizes " + " ".join(map(str, args.sizes))
                                                     if args.sizes != [10_000, 100_000] else "")
    command += " --million" if args.million else ""
    text = table(rows, args.dim, args.queries, command)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
