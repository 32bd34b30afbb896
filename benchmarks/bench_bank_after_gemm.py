"""What a search's steps cost right after a GEMM streamed the matrix, against the same steps back to back.

    python benchmarks/bench_bank_after_gemm.py [--rows 10000] [--cpus 1,2] [--calls 501]

``bench_bank_scale.py`` alternates searches with numpy GEMMs over the same matrix. At 10k rows (dim
512) that matrix is 20 MB: each GEMM streams it through every cache level and evicts what the steps
after it need (interpreter and numpy code, the bank's indexes). This script times each step of a
search twice, in a fresh process per CPU count (pinned before numpy loads), on a bank of random unit
rows written to a temporary directory:

- hot: the step called ``--calls`` times back to back;
- after GEMM: each call preceded by an untimed ``queries @ matrix.T`` of the same shape.

Steps: the scoring (``cosine_scores``, the GEMM itself), ``top_rows`` on those scores, decoding the
hits' ids and metadata, the query checks and normalising, the whole ``search``; and, as the least any
numpy top-k can do after the GEMM, ``bench_bank_scale.numpy_top_k`` (one ``argpartition`` of the
scores plus a sort of each query's k: no checks, no exact ties, nothing decoded). Medians in
microseconds.

Pass PYTHONPATH=<checkout> to measure another version of the library with this script.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

if "PYTHONPATH" not in os.environ:  # otherwise measure the library found there
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BATCHES = (1, 128)
DIM = 512
K = 10


def worker(directory: str, cpus: int, calls: int) -> list[dict]:
    os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:cpus]))
    import numpy as np
    from bench_bank_scale import numpy_top_k

    from tracerag.embedding.embedders import l2_normalize
    from tracerag.stores.bank_search import cosine_scores, top_rows
    from tracerag.stores.cosine_bank import CosineBank

    bank = CosineBank.load(directory)
    snap = bank._snap  # noqa: SLF001 - the decoding step alone needs the bank's id and metadata columns
    matrix, count = bank.vectors, len(bank)
    rng = np.random.default_rng(1)
    out = []
    for q in BATCHES:
        queries = np.asarray(matrix[rng.integers(0, count, q)]) + 0.02 * rng.standard_normal((q, DIM), np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        scores = cosine_scores(matrix, queries)
        rows = [r for found, _ in top_rows(scores, K, None, None, snap.metadata) for r in found]

        def checks(x=queries):  # what CosineBank.search_rows does to the queries before scoring
            if not np.isfinite(x).all():
                raise ValueError
            return np.ascontiguousarray(l2_normalize(x))

        steps = {
            "scoring (the GEMM)": lambda x=queries: cosine_scores(matrix, x),
            "query checks + normalise": checks,
            "top_rows": lambda s=scores: top_rows(s, K, None, None, snap.metadata),
            "decode ids + metadata": lambda r=rows: (snap.ids.take(r), snap.lines.decode_rows(r)),
            "whole search": lambda x=queries[0] if q == 1 else queries: bank.search(x, k=K, min_score=None),
            "numpy argpartition top-k": lambda s=scores.values: numpy_top_k(s, K),
        }
        for name, step in steps.items():
            step()
            times: dict[str, list[float]] = {"hot": [], "after": []}
            for _ in range(max(21, calls // q)):
                start = time.perf_counter()
                step()
                times["hot"].append(time.perf_counter() - start)
                queries @ matrix.T
                start = time.perf_counter()
                step()
                times["after"].append(time.perf_counter() - start)
            hot, after = (statistics.median(times[k]) * 1e6 for k in ("hot", "after"))
            out.append({"cpus": cpus, "rows": count, "queries": q, "step": name, "hot_us": hot, "after_us": after})
    return out


def main() -> None:
    from bench_bank_in_a_row import rows_or_worker

    rows = rows_or_worker(__doc__, __file__, worker, calls=501)
    if rows is None:
        return
    print("| CPUs | rows | queries | step | hot µs | after a GEMM µs | after / hot |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['cpus']} | {r['rows']:,} | {r['queries']} | {r['step']} | {r['hot_us']:,.0f} "
              f"| {r['after_us']:,.0f} | {r['after_us'] / r['hot_us']:.1f}x |")


if __name__ == "__main__":
    main()
