"""Approximate (HNSW) search beside the exact bank: hnswlib vs usearch vs faiss-cpu, then the bank's own path.

    python benchmarks/bench_ann.py libs [--rows 100000,1000000] [--kinds clustered,uniform] [--libs ...]
                                        [--ef 64,128,256] [--json out.json]
    python benchmarks/bench_ann.py bank [--rows 100000] [--kinds clustered,uniform] [--root DIR]

``libs`` compares the HNSW libraries on the same data: unit float32 rows of dim 512, either *uniform*
(random directions: every neighbour nearly as far as any other, the hard case for a graph index) or
*clustered* (1,000 random centres, rows at cosine ~0.7 to theirs: what sentence embeddings look like).
Queries (200) are drawn the same way and are not rows. For each library and ``ef``: recall@10 of the
ANN's 10 best after rescoring its ``max(4k, ef)`` candidates with the exact float32 vectors, against the
exact top-10 from one numpy GEMM; median time of one query alone and of a batch of 32 (one call), build
time (all CPUs), and the index's size on disk. HNSW settings are the same everywhere: M=16 (graph
degree), efConstruction=128, inner product.

``bank`` runs the path a user runs: ``CosineBank.search(..., exact=False)`` against ``exact=True`` on the
same bank (ratios in one run), the index built by ``CosineBank.build_ann``.

Run big sizes once, at low priority: ``nice -n 10 python benchmarks/bench_ann.py libs --rows 1000000``.
The libraries are benchmark-only dependencies (install what you want compared; a missing one is skipped).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# faiss' OpenMP threads spin while they wait by default, which on a busy 2-core machine measured 3-20x slower
# builds; the library sets the same default (tracerag.stores.bank_ann) before it imports faiss.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DIM = 512
QUERIES = 200
K = 10
M = 16
EF_CONSTRUCTION = 128
CLUSTERS = 1000


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def make_rows(kind: str, n: int, seed: int) -> np.ndarray:
    """``n`` unit rows: uniform directions, or points around fixed random centres (cosine ~0.7 to theirs)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, DIM), dtype=np.float32)
    centres = unit(np.random.default_rng(12345).standard_normal((CLUSTERS, DIM), dtype=np.float32))
    for start in range(0, n, 65536):
        stop = min(n, start + 65536)
        noise = unit(rng.standard_normal((stop - start, DIM), dtype=np.float32))
        if kind == "uniform":
            out[start:stop] = noise
        elif kind == "clustered":
            out[start:stop] = unit(centres[rng.integers(0, CLUSTERS, stop - start)] + noise)
        else:
            raise SystemExit(f"unknown kind {kind!r}: clustered or uniform")
    return out


def exact_top(rows: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    scores = queries @ rows.T
    best = np.argpartition(-scores, k, axis=1)[:, :k]
    return np.take_along_axis(best, np.argsort(-np.take_along_axis(scores, best, 1), axis=1), 1)


def rescored(rows: np.ndarray, queries: np.ndarray, candidates: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` best of each query's candidates by exact cosine (candidates < 0 are padding)."""
    out = []
    for q, cand in zip(queries, candidates, strict=True):
        cand = cand[cand >= 0]
        s = rows[cand] @ q
        out.append(cand[np.argsort(-s, kind="stable")[:k]])
    return out


def recall(found: list[np.ndarray], truth: np.ndarray) -> float:
    return float(np.mean([len(set(f.tolist()) & set(t.tolist())) / len(t) for f, t in zip(found, truth, strict=True)]))


def median_ms(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# -- the three libraries behind one shape: build(rows) -> index; search(index, queries, n, ef) -> (q, n) ids --


class Hnswlib:
    name = "hnswlib"

    def build(self, rows: np.ndarray):
        import hnswlib

        index = hnswlib.Index(space="ip", dim=DIM)
        index.init_index(max_elements=len(rows), M=M, ef_construction=EF_CONSTRUCTION, random_seed=1)
        index.add_items(rows, np.arange(len(rows)), num_threads=os.cpu_count())
        return index

    def search(self, index, queries, n, ef, threads):
        index.set_ef(max(ef, n))
        labels, _ = index.knn_query(queries, k=n, num_threads=threads)
        return labels.astype(np.int64)

    def save(self, index, path):
        index.save_index(path)


class Usearch:
    def __init__(self, dtype: str) -> None:
        self.dtype = dtype
        self.name = f"usearch {dtype}"

    def build(self, rows: np.ndarray):
        from usearch.index import Index

        index = Index(ndim=DIM, metric="ip", dtype=self.dtype, connectivity=M, expansion_add=EF_CONSTRUCTION)
        index.add(np.arange(len(rows)), rows, threads=os.cpu_count())
        return index

    def search(self, index, queries, n, ef, threads):
        index.expansion_search = max(ef, n)
        found = index.search(queries, n, threads=threads)
        return np.asarray(found.keys, dtype=np.int64).reshape(len(queries), -1)

    def save(self, index, path):
        index.save(path)


class Faiss:
    name = "faiss HNSWFlat"

    def build(self, rows: np.ndarray):
        import faiss

        faiss.omp_set_num_threads(os.cpu_count())
        index = faiss.IndexHNSWFlat(DIM, M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        index.add(rows)
        return index

    def search(self, index, queries, n, ef, threads):
        import faiss

        faiss.omp_set_num_threads(threads)
        index.hnsw.efSearch = max(ef, n)
        _, labels = index.search(queries, n)
        return labels.astype(np.int64)

    def save(self, index, path):
        import faiss

        faiss.write_index(index, path)


LIBS = {"hnswlib": Hnswlib(), "usearch": Usearch("f32"), "usearch-i8": Usearch("i8"), "faiss": Faiss()}


def bench_libs(args) -> list[dict]:
    results = []
    efs = [int(x) for x in args.ef.split(",")]
    for n in [int(x) for x in args.rows.split(",")]:
        for kind in args.kinds.split(","):
            rows = make_rows(kind, n, seed=1)
            queries = make_rows(kind, QUERIES, seed=2)
            t = time.perf_counter()
            truth = exact_top(rows, queries, K)
            exact_ms = median_ms(lambda q=queries, r=rows: q[:1] @ r.T, 5)
            exact32_ms = median_ms(lambda q=queries, r=rows: q[:32] @ r.T, 5)
            print(f"\n{kind} {n:,} rows (ground truth in {time.perf_counter() - t:.1f} s; exact numpy scan: "
                  f"1 query {exact_ms:.2f} ms, 32 queries {exact32_ms:.2f} ms)", flush=True)
            print("| library | ef | recall@10 | 1 query p50 ms | 32 queries p50 ms | build s | index MB | RSS +MB |")
            print("|---|---|---|---|---|---|---|---|", flush=True)
            for lib_name in args.libs.split(","):
                lib = LIBS[lib_name]
                try:
                    gc.collect()
                    before = rss_mb()
                    t = time.perf_counter()
                    index = lib.build(rows)
                    build_s = time.perf_counter() - t
                    grown = rss_mb() - before
                except ImportError as e:
                    print(f"| {lib.name} | skipped: {e} |", flush=True)
                    continue
                with tempfile.TemporaryDirectory() as tmp:
                    lib.save(index, f"{tmp}/index")
                    size_mb = os.path.getsize(f"{tmp}/index") / 2**20
                for ef in efs:
                    n_cand = max(4 * K, ef)
                    cand = lib.search(index, queries, n_cand, ef, threads=os.cpu_count())
                    r = recall(rescored(rows, queries, cand, K), truth)
                    raw = recall([c[:K] for c in lib.search(index, queries, K, ef, os.cpu_count())], truth)
                    singles = []
                    for i in range(0, QUERIES, 2):
                        q = queries[i : i + 1]
                        s = time.perf_counter()
                        c = lib.search(index, q, n_cand, ef, threads=1)
                        rescored(rows, q, c, K)
                        singles.append(time.perf_counter() - s)
                    one_ms = statistics.median(singles) * 1e3
                    batch_ms = median_ms(lambda r=rows, q=queries[:32], lib=lib, index=index, n=n_cand, ef=ef: rescored(
                        r, q, lib.search(index, q, n, ef, os.cpu_count()), K), 7)
                    row = {"kind": kind, "rows": n, "library": lib.name, "ef": ef, "recall": r, "recall_raw": raw,
                           "one_ms": one_ms, "batch32_ms": batch_ms, "build_s": build_s, "index_mb": size_mb,
                           "rss_mb": grown, "exact_one_ms": exact_ms, "exact32_ms": exact32_ms}
                    results.append(row)
                    print(f"| {lib.name} | {ef} | {r:.3f} (raw {raw:.3f}) | {one_ms:.2f} | {batch_ms:.2f} | "
                          f"{build_s:.1f} | {size_mb:.0f} | {grown:.0f} |", flush=True)
                del index
                gc.collect()
            del rows
            gc.collect()
    return results


def bench_bank(args) -> list[dict]:
    from tracerag.stores.cosine_bank import CosineBank

    results = []
    root = Path(args.root or tempfile.mkdtemp(prefix="bench-ann-"))
    efs = [int(x) for x in args.ef.split(",")]
    print("| kind | rows | ef | recall@10 | exact 1 query ms | ANN 1 query ms | ratio | exact 32 ms | ANN 32 ms "
          "| ratio | build s | index MB | RSS +MB (index read) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for n in [int(x) for x in args.rows.split(",")]:
        for kind in args.kinds.split(","):
            where = root / f"{kind}-{n}"
            rows = make_rows(kind, n, seed=1)
            queries = make_rows(kind, QUERIES, seed=2)
            if not (where / "manifest.json").exists():
                CosineBank.from_vectors(where, rows, [f"r{i}" for i in range(n)], embedder_id="bench", overwrite=True)
            bank = CosineBank.load(where)
            built = where.parent / f"{where.name}.build_s"  # a rerun on the same --root reuses bank and index
            if not bank.has_ann:
                t = time.perf_counter()
                bank.build_ann()
                built.write_text(str(time.perf_counter() - t))
            build_s = float(built.read_text()) if built.exists() else float("nan")
            del rows
            gc.collect()
            truth = [[h.row for h in hits] for hits in bank.search(queries, K, min_score=None, exact=True)]
            before = rss_mb()
            bank.search(queries[:1], K, min_score=None, exact=False)  # reads the index
            grown = rss_mb() - before
            index_mb = (where / "ann.faiss").stat().st_size / 2**20
            for ef in efs:
                found = [[h.row for h in hits] for hits in bank.search(queries, K, min_score=None, exact=False, ef=ef)]
                r = float(np.mean([len(set(f) & set(t)) / K for f, t in zip(found, truth, strict=True)]))
                singles = {"exact": [], "ann": []}
                for i in range(0, QUERIES, 2):
                    for name, exact in (("exact", True), ("ann", False)):
                        s = time.perf_counter()
                        bank.search(queries[i], K, min_score=None, exact=exact, ef=ef)
                        singles[name].append(time.perf_counter() - s)
                one = {name: statistics.median(v) * 1e3 for name, v in singles.items()}
                batch = {name: median_ms(lambda e=exact, b=bank, q=queries[:32], ef=ef: b.search(
                    q, K, min_score=None, exact=e, ef=ef), 7) for name, exact in (("exact", True), ("ann", False))}
                results.append({"kind": kind, "rows": n, "ef": ef, "recall": r, "one": one, "batch32": batch,
                                "build_s": build_s, "index_mb": index_mb, "rss_mb": grown})
                print(f"| {kind} | {n:,} | {ef} | {r:.3f} | {one['exact']:.2f} | {one['ann']:.2f} | "
                      f"{one['ann'] / one['exact']:.3f} | {batch['exact']:.1f} | {batch['ann']:.1f} | "
                      f"{batch['ann'] / batch['exact']:.3f} | {build_s:.1f} | {index_mb:.0f} | {grown:.0f} |",
                      flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["libs", "bank"])
    parser.add_argument("--rows", default="100000")
    parser.add_argument("--kinds", default="clustered,uniform")
    parser.add_argument("--libs", default="hnswlib,usearch,usearch-i8,faiss")
    parser.add_argument("--ef", default="64,128,256")
    parser.add_argument("--root", default=None, help="bank mode: where the banks are written (kept for reruns)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    results = bench_libs(args) if args.what == "libs" else bench_bank(args)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
