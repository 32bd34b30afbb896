"""Approximate (HNSW) search beside the exact bank: hnswlib vs usearch vs faiss-cpu, then the bank's own path.

    python benchmarks/bench_ann.py libs [--rows 100000,1000000] [--kinds clustered,uniform] [--libs ...]
                                        [--ef 64,128,256] [--json out.json]
    python benchmarks/bench_ann.py bank [--rows 100000] [--kinds clustered,uniform] [--root DIR]
    python benchmarks/bench_ann.py engines [--rows 1000000] [--dim 128] [--builds 3] [--libs hnswlib,usearch]
                                           [--ef 64,128,256,512] [--root DIR] [--json out.json]
                                           [--turns shared|apart|warm]

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

``engines`` puts the bank's approximate search beside the engine it drives, on one bank of clustered rows:
per build (``--builds``, default 3; every figure in the summary is the median over builds) a plain faiss
``IndexHNSWFlat`` built with the same parameters in one ``add`` call, and the bank's own index
(``CosineBank.build_ann``). Per ``ef``: recall@10 against the exact top 10, and the time of one query,
the engines taking turns query by query in one process (so load on the machine hits all alike): the
bank (``search``, and ``search_rows`` without decoding ids and metadata), raw faiss (its own top 10),
faiss with the bank's rescoring (of its best k + 2 candidates, those within 1e-4 of the 10th best faiss
score, rescored with the bank's rows), faiss rescoring the whole window of ``max(4k, ef)`` candidates,
and the other libraries (``--libs``, built once, skipped when not installed) rescoring their window.
``--turns shared`` (the default) has every way answer query i in one turn, ``--turns apart`` gives each way
a different query in a turn, so that no way finds the graph walk of its query cached by another way of the
same engine (see measure_engines), and ``--turns warm`` times every way's second answer to its query in a
row (the graph walk cached: what is left is computation).
Then, in fresh processes, the memory a reopened bank holds after 200 ANN searches (RSS: anonymous and
file-backed) against a plain faiss index with its own vectors beside the same memory-mapped rows.
``--phase build`` writes every index under ``--root`` and ``--phase measure`` reads them back (the
builds take the time; the search code measured is the one checked out when measuring).

Run big sizes once, at low priority: ``nice -n 10 python benchmarks/bench_ann.py libs --rows 1000000``.
The libraries are benchmark-only dependencies (install what you want compared; a missing one is skipped).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
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


def rss_parts() -> dict[str, float]:
    """VmRSS, RssAnon and RssFile of this process in MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {key: int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "RssAnon", "RssFile")}


def margin_rescored(rows: np.ndarray, queries: np.ndarray, scores: np.ndarray, candidates: np.ndarray,
                    k: int) -> list[np.ndarray]:
    """The bank's rescoring without its bookkeeping: per query, the candidates within 1e-4 of the engine's
    k-th best score, rescored with the exact rows, best first."""
    out = []
    for q, s, cand in zip(queries, scores, candidates, strict=True):
        pick = cand[(cand >= 0) & (s >= s[k - 1] - 1e-4)]
        exact = np.einsum("ij,ij->i", rows[pick], np.broadcast_to(q, (len(pick), len(q))))
        out.append(pick[np.lexsort((pick, -exact))[:k]])
    return out


def _rss_child(what: str, path: str, queries_path: str, ef: int, plain: str) -> None:
    """In a fresh process: open ``what`` ("bank" or "faiss", the plain index file with its own vectors beside
    the bank's memory-mapped rows), answer every query one at a time, print the RSS as JSON."""
    queries = np.load(queries_path)
    start = rss_parts()
    if what == "bank":
        from tracerag.stores.cosine_bank import CosineBank

        bank = CosineBank.load(path, exact=False)
        for q in queries:
            bank.search(q, K, min_score=None, ef=ef)
    else:
        import faiss

        rows = np.load(Path(path) / "embeddings.npy", mmap_mode="r")
        index = faiss.read_index(plain)
        faiss.omp_set_num_threads(1)
        params = faiss.SearchParametersHNSW(efSearch=max(ef, 4 * K))
        for q in queries:
            d, i = index.search(q[None], max(ef, 4 * K), params=params)
            margin_rescored(rows, q[None], d, i, K)
    end = rss_parts()
    print(json.dumps({"start": start, "end": end}))


def _rss_of(what: str, path: Path, queries_path: Path, ef: int, plain: Path) -> dict:
    import subprocess

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                        os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, __file__, "rss-child", "--child-what", what, "--root", str(path),
                          "--queries", str(queries_path), "--ef", str(ef), "--plain", str(plain)],
                         capture_output=True, text=True,
                         check=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def bench_engines(args) -> list[dict]:
    """Build (``--phase build``: every index written under ``--root``), then measure (``--phase measure``:
    each build's indexes read back, so the search code measured is the one checked out at that time)."""
    root = Path(args.root or tempfile.mkdtemp(prefix="bench-ann-"))
    root.mkdir(parents=True, exist_ok=True)
    n = int(args.rows.split(",")[0])
    where = root / f"clustered-{n}-{DIM}"
    if args.phase in ("build", "all"):
        build_engines(args, root, where, n)
    if args.phase in ("measure", "all"):
        return measure_engines(args, root, where, n)
    return []


def build_engines(args, root: Path, where: Path, n: int) -> None:
    import faiss

    from tracerag.stores.cosine_bank import CosineBank

    if not (where / "manifest.json").exists():
        CosineBank.from_vectors(where, make_rows("clustered", n, seed=1), [f"r{i}" for i in range(n)],
                                embedder_id="bench", overwrite=True)
    bank = CosineBank.load(where)
    matrix = bank.vectors
    log = root / "builds.json"
    builds = json.loads(log.read_text()) if log.exists() else {}
    print(f"clustered {n:,} rows x {DIM}: {args.builds} builds of each index, M={M}, efConstruction={EF_CONSTRUCTION}",
          flush=True)
    for build in range(1, args.builds + 1):
        if f"bank-{build}" not in builds:  # the two engines take turns, so load on the machine hits both alike
            t = time.perf_counter()
            bank.build_ann()
            builds[f"bank-{build}"] = time.perf_counter() - t
            (root / f"bank-{build}").mkdir(exist_ok=True)
            for name in ("ann.faiss", "ann.json"):
                shutil.copyfile(bank.directory / name, root / f"bank-{build}" / name)
            log.write_text(json.dumps(builds))
            print(f"bank build {build}: {builds[f'bank-{build}']:.1f} s", flush=True)
        if f"faiss-{build}" not in builds:
            t = time.perf_counter()
            plain = faiss.IndexHNSWFlat(DIM, M, faiss.METRIC_INNER_PRODUCT)
            plain.hnsw.efConstruction = EF_CONSTRUCTION
            faiss.omp_set_num_threads(os.cpu_count())
            plain.add(np.ascontiguousarray(matrix))
            builds[f"faiss-{build}"] = time.perf_counter() - t
            faiss.write_index(plain, str(root / f"faiss-{build}.faiss"))
            del plain
            log.write_text(json.dumps(builds))
            print(f"faiss build {build}: {builds[f'faiss-{build}']:.1f} s", flush=True)
    for name in [x for x in args.libs.split(",") if x and x != "faiss"]:
        lib = LIBS[name]
        if lib.name in builds:
            continue
        try:
            t = time.perf_counter()
            index = lib.build(np.asarray(matrix))
        except ImportError as e:
            print(f"{lib.name}: skipped ({e})", flush=True)
            continue
        builds[lib.name] = time.perf_counter() - t
        lib.save(index, str(root / f"{name}.index"))
        del index
        log.write_text(json.dumps(builds))
        print(f"{lib.name} build: {builds[lib.name]:.1f} s", flush=True)


def _load_other(name: str, path: Path, n: int):
    if name == "hnswlib":
        import hnswlib

        index = hnswlib.Index(space="ip", dim=DIM)
        index.load_index(str(path), max_elements=n)
        return index
    from usearch.index import Index

    return Index.restore(str(path))


def measure_engines(args, root: Path, where: Path, n: int) -> list[dict]:
    import faiss

    from tracerag.stores.bank_ann import AnnIndex
    from tracerag.stores.cosine_bank import CosineBank

    efs = [int(x) for x in args.ef.split(",")]
    builds = json.loads((root / "builds.json").read_text())
    bank = CosineBank.load(where, exact=False)
    matrix = bank.vectors
    queries = make_rows("clustered", QUERIES, seed=2)
    np.save(root / "queries.npy", queries)
    truth = exact_top(np.asarray(matrix), queries, K)
    done = sorted(int(key.split("-")[1]) for key in builds
                  if key.startswith("bank-") and f"faiss-{key.split('-')[1]}" in builds)
    print(f"clustered {n:,} rows x {DIM}, {QUERIES} queries, M={M}, efConstruction={EF_CONSTRUCTION}, builds {done}",
          flush=True)
    others = {}
    for name in [x for x in args.libs.split(",") if x and x != "faiss"]:
        if LIBS[name].name in builds:
            others[LIBS[name].name] = (LIBS[name], _load_other(name, root / f"{name}.index", n))
    results = []
    for build in done:
        # This build's graph in the bank (as a reopened bank reads it: AnnIndex.read over the bank's rows).
        ann = AnnIndex.read(root / f"bank-{build}", matrix)
        bank._ann = (bank._snap, ann)
        plain = faiss.read_index(str(root / f"faiss-{build}.faiss"))
        faiss.omp_set_num_threads(1)

        def faiss_search(q, n_cand, ef, index=plain):
            return index.search(q, n_cand, params=faiss.SearchParametersHNSW(efSearch=max(ef, n_cand)))

        for ef in efs:
            window = max(4 * K, ef)
            ways = {
                "bank": lambda q, ef=ef: [[h.row for h in hits]
                                          for hits in bank.search(q, K, None, exact=False, ef=ef)],
                "bank rows": lambda q, ef=ef: [r for r, _ in bank.search_rows(q, K, None, exact=False, ef=ef)],
                "faiss raw": lambda q, ef=ef: list(faiss_search(q, K, ef)[1]),
                "faiss + bank rescoring": lambda q, ef=ef: margin_rescored(matrix, q, *faiss_search(q, K + 2, ef), K),
                "faiss + window rescoring": lambda q, ef=ef, w=window: rescored(
                    matrix, q, faiss_search(q, w, ef)[1], K),
            }
            if build == done[0]:
                for name, (lib, index) in others.items():
                    ways[f"{name} + window rescoring"] = lambda q, ef=ef, w=window, lib=lib, index=index: rescored(
                        matrix, q, lib.search(index, q, w, ef, 1), K)
            if args.ways:  # only these (the bank's and faiss' rescoring are always kept: the summary compares them)
                keep = {"bank", "bank rows", "faiss + bank rescoring", *args.ways.split(",")}
                ways = {name: fn for name, fn in ways.items() if name in keep}
            found = {name: [list(x) for i in range(QUERIES) for x in fn(queries[i : i + 1])]
                     for name, fn in ways.items()}
            times: dict[str, list[float]] = {name: [] for name in ways}
            names = list(ways)
            shuffle = np.random.default_rng(ef)
            # "apart": in one turn the ways answer different queries (way w takes query i + w * QUERIES / ways),
            # so none finds in the caches what another just read for the same query; "shared": every way
            # answers query i in turn, and a way whose engine already ran it finds its graph walk cached (the
            # bank's two ways run first of their engine half the time, faiss' three a third of the time);
            # "warm": as shared, each way answering its query once untimed right before the timed answer.
            spread = QUERIES // len(names) if args.turns == "apart" else 0
            for _ in range(args.passes):
                for i in range(QUERIES):
                    # A fresh order per turn: what ran just before (another index in the caches) varies alike.
                    for name in shuffle.permutation(names):
                        at = (i + names.index(name) * spread) % QUERIES
                        q = queries[at : at + 1]
                        fn = ways[name]
                        if args.turns == "warm":
                            fn(q)
                        s = time.perf_counter()
                        fn(q)
                        times[name].append(time.perf_counter() - s)
            for name in ways:
                r = recall([np.asarray(f) for f in found[name]], truth)
                ms = statistics.median(times[name]) * 1e3
                kind = name.split(" ")[0]
                build_s = builds.get(f"{kind}-{build}", builds.get(kind, float("nan")))
                results.append({"build": build, "rows": n, "dim": DIM, "ef": ef, "engine": name, "recall": r,
                                "one_ms": ms, "build_s": build_s})
                print(f"  build {build} ef {ef:>3} | {name:<28} | recall {r:.4f} | {ms:.3f} ms", flush=True)
        del plain, ann
        bank._ann = None
        gc.collect()
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1))
    summary(results, efs)
    print("build s: " + ", ".join(f"{k} {v:.0f}" for k, v in builds.items()), flush=True)
    memory = {what: _rss_of(what, where, root / "queries.npy", 256, root / f"faiss-{done[0]}.faiss")
              for what in ("bank", "faiss")}
    for what, m in memory.items():
        grown = {key: m["end"][key] - m["start"][key] for key in m["end"]}
        print(f"memory after {QUERIES} one-query searches at ef 256, {what}: " +
              ", ".join(f"{key} {m['end'][key]:.0f} MiB (+{grown[key]:.0f})" for key in m["end"]), flush=True)
    index_mb = {"bank ann.faiss": (root / f"bank-{done[0]}" / "ann.faiss").stat().st_size / 2**20,
                "plain faiss file": (root / f"faiss-{done[0]}.faiss").stat().st_size / 2**20}
    print("on disk: " + ", ".join(f"{k} {v:.0f} MiB" for k, v in index_mb.items()), flush=True)
    results.append({"memory": memory, "disk_mb": index_mb, "builds_s": builds})
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return results


def summary(results: list[dict], efs: list[int]) -> None:
    """The median over builds of each engine's recall and one-query time, and the bank's ratio to faiss."""
    engines = list(dict.fromkeys(r["engine"] for r in results if "engine" in r))
    print("\n| ef | " + " | ".join(engines) + " | bank / faiss+bank rescoring | bank rows / faiss+bank rescoring |")
    print("|---|" + "---|" * (len(engines) + 2))
    for ef in efs:
        cells, ms = [], {}
        for name in engines:
            mine = [r for r in results if r.get("engine") == name and r["ef"] == ef]
            rec = statistics.median(r["recall"] for r in mine)
            ms[name] = statistics.median(r["one_ms"] for r in mine)
            cells.append(f"{rec:.4f}, {ms[name]:.3f} ms")
        base = ms["faiss + bank rescoring"]
        ratios = []
        for name in ("bank", "bank rows"):  # per build, then the median
            per = [a["one_ms"] / b["one_ms"] for a in results for b in results
                   if a.get("engine") == name and b.get("engine") == "faiss + bank rescoring"
                   and a["ef"] == b["ef"] == ef and a["build"] == b["build"]]
            ratios.append(f"{statistics.median(per):.2f} ({ms[name] / base:.2f})")
        print(f"| {ef} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |", flush=True)
    builds = {}
    for r in results:
        if "engine" in r:
            builds.setdefault(r["engine"].split(" ")[0], set()).add((r["build"], r["build_s"]))
    print("build s (each build): " + "; ".join(f"{k} {', '.join(f'{s:.0f}' for _, s in sorted(v))}"
                                           for k, v in builds.items()), flush=True)


def main() -> None:
    global DIM
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["libs", "bank", "engines", "rss-child"])
    parser.add_argument("--rows", default="100000")
    parser.add_argument("--kinds", default="clustered,uniform")
    parser.add_argument("--libs", default="hnswlib,usearch,usearch-i8,faiss")
    parser.add_argument("--ef", default="64,128,256")
    parser.add_argument("--root", default=None, help="bank mode: where the banks are written (kept for reruns)")
    parser.add_argument("--json", default=None)
    parser.add_argument("--dim", type=int, default=DIM)
    parser.add_argument("--builds", type=int, default=3, help="engines mode: builds of each index (medians)")
    parser.add_argument("--passes", type=int, default=3, help="engines mode: timed passes over the queries")
    parser.add_argument("--ways", default="", help="engines mode: the other ways timed, comma-separated names "
                        "(default: all; e.g. 'faiss raw' to time as many ways of faiss' graph as of the bank's)")
    parser.add_argument("--turns", choices=["shared", "apart", "warm"], default="shared",
                        help="engines mode: in one turn every way answers the same query, each a different one, "
                             "or the same one twice (the second timed)")
    parser.add_argument("--child-what", default="bank", help=argparse.SUPPRESS)  # rss-child
    parser.add_argument("--queries", default=None, help=argparse.SUPPRESS)  # rss-child
    parser.add_argument("--plain", default=None, help=argparse.SUPPRESS)  # rss-child
    parser.add_argument("--phase", choices=["build", "measure", "all"], default="all",
                        help="engines mode: build the indexes, measure them, or both")
    args = parser.parse_args()
    DIM = args.dim
    if args.what == "rss-child":
        _rss_child(args.child_what, args.root, args.queries, int(args.ef), args.plain)
        return
    results = {"libs": bench_libs, "bank": bench_bank, "engines": bench_engines}[args.what](args)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
