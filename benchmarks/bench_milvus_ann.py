"""HNSW recall@10 against exact search on a real Milvus server, for the index the store switches to by
itself, by search ``ef`` and build ``M``, on clustered and on uniformly random vectors (the hard case for
any graph index).

    python tests/milvus_standalone.py -- nice python benchmarks/bench_milvus_ann.py --rows 100000

Per data set the rows go in the way ``tracerag store copy`` writes them (``copy_store`` from a numpy bank,
1,000 rows per upsert) into a store whose ``hnsw_threshold`` is half the rows, so the store switches
FLAT -> HNSW mid-copy and the second half lands after the switch; the copy ends with the store's
``refresh_index()``. Exact neighbours come from numpy on the same unit vectors. Per M and ef: recall@10
over 200 queries (clustered: drawn near the same centres; uniform: fresh random vectors) and the median
search time; other M are built with ``store.reindex(m=...)``.
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

import tracerag.stores.milvus_index as milvus_index  # noqa: E402
import tracerag.stores.milvus_store as milvus_store  # noqa: E402
from tracerag.stores.cosine_bank import CosineBank  # noqa: E402
from tracerag.stores.store_copy import copy_store  # noqa: E402

DIM = 384
QUERIES = 200
EFS = (64, 128, 256, 512, 1024, 2048, 4096)


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def data_set(name: str, rows: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(rows, queries) of one data set; both sets draw from the one generator in this order."""
    centres = rng.standard_normal((200, DIM)).astype(np.float32)
    pick = rng.integers(200, size=rows + QUERIES)
    if name == "clustered":
        v = _unit(centres[pick] + 0.35 * rng.standard_normal((rows + QUERIES, DIM), dtype=np.float32))
    else:
        rng.standard_normal((rows + QUERIES, DIM), dtype=np.float32)  # the clustered set's noise
        v = _unit(rng.standard_normal((rows + QUERIES, DIM), dtype=np.float32))
    return v[:rows], v[rows:]


def exact_top10(rows: np.ndarray, queries: np.ndarray) -> np.ndarray:
    return np.argsort(-(queries @ rows.T), axis=1)[:, :10]


def sweep(store, queries: np.ndarray, exact: np.ndarray, efs: tuple[int, ...]) -> list[tuple[int, float, float]]:
    """(ef, recall@10, search p50 ms) per ef, one query per call."""
    out = []
    for ef in efs:
        milvus_store.HNSW_MIN_EF = ef  # the default ef of a URI without ?ef=
        found, times = 0, []
        for q, truth in zip(queries, exact, strict=True):
            t = time.perf_counter()
            hits = store.search(q, k=10)[0]
            times.append((time.perf_counter() - t) * 1000)
            found += len({h.id for h in hits} & {f"r{i}" for i in truth})
        out.append((ef, found / (10 * len(queries)), statistics.median(times)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--ms", type=int, nargs="+", default=[16, 32])
    parser.add_argument("--efs", type=int, nargs="+", default=list(EFS))
    parser.add_argument("--sets", nargs="+", default=["clustered", "uniform"], choices=["clustered", "uniform"])
    args = parser.parse_args()
    base = os.environ.get("TRACERAG_MILVUS_STANDALONE")
    if not base:
        sys.exit("run me through: python tests/milvus_standalone.py -- python benchmarks/bench_milvus_ann.py")
    threshold = args.rows // 2
    print(f"Milvus standalone, {args.rows} rows x {DIM}, {QUERIES} queries, k=10; hnsw_threshold {threshold} "
          f"(the switch happens mid-copy), efConstruction {milvus_index.HNSW_BUILD['efConstruction']}\n")
    print("| vectors | M | ef | recall@10 vs exact | search p50 ms |")
    print("|---|---:|---:|---:|---:|")
    notes = []
    for name in args.sets:
        rows, queries = data_set(name, args.rows, np.random.default_rng(0))
        exact = exact_top10(rows, queries)
        with tempfile.TemporaryDirectory(prefix="ann-bank-") as tmp:
            bank = Path(tmp) / "bank"
            CosineBank.from_vectors(bank, rows, [f"r{i}" for i in range(len(rows))], [{}] * len(rows),
                                    embedder_id="bench")
            store = milvus_store.MilvusStore.open(f"{base}?collection=ann_{name}_{args.rows}", embedder_id="bench",
                                                  dim=DIM, create=True, hnsw_threshold=threshold,
                                                  hnsw_m=args.ms[0])
            started = time.perf_counter()
            report = copy_store(str(bank), store, batch_size=1000, sample=64)
            copied = time.perf_counter() - started
        info = store._client.describe_index(f"ann_{name}_{args.rows}", "vector")
        notes.append(f"{name}: copy of {report.written} rows incl. the switch and the final refresh "
                     f"{copied:.0f} s, index {store.describe().index} M={args.ms[0]}, "
                     f"{info.get('indexed_rows')} rows indexed, verified {report.ok}")
        for m in args.ms:
            if m != args.ms[0]:
                started = time.perf_counter()
                store.reindex(m=m)
                notes.append(f"{name}: reindex as HNSW M={m} {time.perf_counter() - started:.0f} s")
            for ef, recall, p50 in sweep(store, queries, exact, tuple(args.efs)):
                print(f"| {name} | {m} | {ef} | {recall:.3f} | {p50:.1f} |", flush=True)
        store.close()
    print()
    for note in notes:
        print(f"- {note}")


if __name__ == "__main__":
    main()
