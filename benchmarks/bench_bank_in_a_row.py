"""CosineBank searches back to back in a fresh process, as a service runs them: time and page faults.

    python benchmarks/bench_bank_in_a_row.py [--rows 10000] [--cpus 1,2] [--calls 21]

``bench_bank_scale.py`` interleaves each search with a numpy GEMM of the same shape; the GEMM's
output array leaves the allocator's heap warm for the next search. A service searches back to back
instead, and then every search that allocates its (queries x rows) scores afresh takes a page fault
per 4 KiB it writes. Each CPU count runs in its own fresh process, pinned before numpy loads; a bank of
random unit rows (dim 512) is written to a temporary directory. Per batch size: median ms of
``bank.search(queries, k=10, min_score=None)`` called ``--calls`` times in a row, the minor page faults
per call, and the same for ``queries @ matrix.T``.

Pass PYTHONPATH=<checkout> to measure another version of the library with this script.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if "PYTHONPATH" not in os.environ:  # otherwise measure the library found there
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BATCHES = (1, 8, 32, 128)
DIM = 512


def in_a_row(fn, calls: int) -> tuple[float, float]:
    """(median ms, minor page faults per call) of ``calls`` calls of ``fn`` back to back (after one warm-up)."""
    fn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls
    return statistics.median(times) * 1e3, faults


def worker(directory: str, cpus: int, calls: int) -> list[dict]:
    os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:cpus]))
    import numpy as np

    from tracerag.stores.cosine_bank import CosineBank

    bank = CosineBank.load(directory)
    matrix = bank.vectors
    rng = np.random.default_rng(1)
    out = []
    for q in BATCHES:
        queries = np.asarray(matrix[rng.integers(0, len(bank), q)]) + 0.02 * rng.standard_normal((q, DIM), np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        one = queries[0] if q == 1 else queries
        bank_ms, bank_faults = in_a_row(lambda x=one: bank.search(x, k=10, min_score=None), calls)
        numpy_ms, numpy_faults = in_a_row(lambda x=queries: x @ matrix.T, calls)
        out.append({"cpus": cpus, "rows": len(bank), "queries": q, "bank_ms": bank_ms, "bank_faults": bank_faults,
                    "numpy_ms": numpy_ms, "numpy_faults": numpy_faults, "over_numpy": bank_ms / numpy_ms})
    return out


def rows_or_worker(doc: str, script: str, worker, calls: int) -> list[dict] | None:
    """The command line these bank scripts share (``--rows``, ``--cpus``, ``--calls``). In a worker process:
    run ``worker(directory, cpus, calls)``, print its JSON and return None. Otherwise: write a bank of
    random unit rows to a temporary directory, run ``script`` as a fresh worker process per CPU count,
    and return all their rows."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--cpus", default="1,2")
    parser.add_argument("--calls", type=int, default=calls)
    parser.add_argument("--worker", nargs=3, metavar=("DIR", "CPUS", "CALLS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        directory, cpus, calls = args.worker
        print(json.dumps(worker(directory, int(cpus), int(calls))))
        return None
    import numpy as np
    from bench_cosine_bank import random_unit

    from tracerag.stores.cosine_bank import CosineBank

    with tempfile.TemporaryDirectory(prefix="bench-bank-") as tmp:
        vectors = random_unit(np.random.default_rng(0), args.rows, DIM)
        CosineBank.from_vectors(Path(tmp) / "bank", vectors, [f"r{i}" for i in range(args.rows)],
                                [{"doc_id": f"d{i // 4}"} for i in range(args.rows)], embedder_id="random")
        out = []
        for n in [int(c) for c in args.cpus.split(",")]:
            cmd = [sys.executable, script, "--worker", str(Path(tmp) / "bank"), str(n), str(args.calls)]
            out += json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return out


def main() -> None:
    rows = rows_or_worker(__doc__, __file__, worker, calls=21)
    if rows is None:
        return
    print("| CPUs | rows | queries | bank ms | faults / search | numpy GEMM ms | faults / GEMM | bank / numpy |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['cpus']} | {r['rows']:,} | {r['queries']} | {r['bank_ms']:.1f} | {r['bank_faults']:.0f} "
              f"| {r['numpy_ms']:.1f} | {r['numpy_faults']:.0f} | {r['over_numpy']:.2f}x |")


if __name__ == "__main__":
    main()
