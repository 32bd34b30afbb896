"""What a read costs on a real Milvus server at each consistency level, and whether a client sees its own
writes at once.

    python tests/milvus_standalone.py -- python benchmarks/bench_milvus_consistency.py [--rows 5000]

The server is the PyPI Milvus standalone, run by ``tests/milvus_standalone.py`` in a loopback-only
network namespace (it reads the URI from ``TRACERAG_MILVUS_STANDALONE``). Per level: the median and p95
of 200 single-query searches (k=10), 200 ``get`` of one id and 50 ``count``, on a collection of
``--rows`` 384-d rows; and, right after an upsert of one new row, whether the next search finds it.
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

from tracerag.stores.stores import open_store  # noqa: E402
from tracerag.stores.vector_store import CONSISTENCY_LEVELS  # noqa: E402

DIM = 384


def _ms(fn, n: int) -> tuple[float, float]:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5000)
    args = parser.parse_args()
    base = os.environ.get("TRACERAG_MILVUS_STANDALONE")
    if not base:
        sys.exit("run me through: python tests/milvus_standalone.py -- python benchmarks/bench_milvus_consistency.py")
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((args.rows, DIM)).astype(np.float32)
    ids = [f"r{i}" for i in range(args.rows)]
    writer = open_store(f"{base}?collection=consistency", embedder_id="bench", dim=DIM, create=True)
    writer.upsert(ids, vectors, [{"i": i} for i in range(args.rows)])
    print(f"Milvus standalone, {args.rows} rows x {DIM}; median / p95 ms per call\n")
    print("| consistency | search ms | get ms | count ms | own write seen by the next search |")
    print("|---|---|---|---|---|")
    for level in CONSISTENCY_LEVELS:
        store = open_store(f"{base}?collection=consistency&consistency={level}", embedder_id="bench", dim=DIM)
        query = vectors[rng.integers(args.rows)]
        search = _ms(lambda q=query, s=store: s.search(q, k=10), 200)
        get = _ms(lambda s=store: s.get([ids[7]]), 200)
        count = _ms(lambda s=store: s.count(), 50)
        seen = 0
        for trial in range(10):
            fresh = rng.standard_normal(DIM).astype(np.float32)
            new_id = f"{level}-{trial}"
            store.upsert([new_id], fresh[None, :])
            seen += store.search(fresh, k=1)[0][0].id == new_id
        print(f"| {level} | {search[0]:.1f} / {search[1]:.1f} | {get[0]:.1f} / {get[1]:.1f} | "
              f"{count[0]:.1f} / {count[1]:.1f} | {seen} of 10 |")
        store.close()
    writer.close()


if __name__ == "__main__":
    main()
