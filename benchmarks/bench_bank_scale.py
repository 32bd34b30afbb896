"""CosineBank at scale: batched search against one numpy GEMM, hybrid batches, bank open, bulk write.

    python benchmarks/bench_bank_scale.py [--sizes 10000,100000,1000000] [--cpus 1,2] [--skip-1m]
                                          [--json out/bank_scale.json] [--root DIR]

Banks of random unit float32 rows (dim 512) written with ``CosineBank.from_vectors`` and opened with
``CosineBank.load`` (memory-mapped, warm). Each CPU count runs in its own process, pinned with
``os.sched_setaffinity`` before numpy loads (so OpenBLAS starts that many threads).

- Search: ``bank.search(queries, k=10, min_score=None)`` for batches of 1/8/32/128 queries, divided by
  one numpy GEMM ``queries @ matrix.T`` on the same memory-mapped matrix (goal <= 1.2x); "rows only" is
  ``bank.search_rows`` (scoring and top-k, no ids or metadata decoded) divided by the same GEMM; "numpy +
  top-k" is that GEMM followed by :func:`numpy_top_k` (the least an exact top-k in numpy does), divided
  by the GEMM alone; "bank / floor" divides by the larger of the matrix read time
  (``bench_cosine_bank.read_floor_ms``) and the GEMM's FLOPs at the best FLOP rate seen with that many
  CPUs (an in-cache numpy GEMM, or any of the measured numpy GEMMs if faster). Medians of about 0.3 s
  of calls per cell (at least 11; 5 at 1M rows); bank and numpy calls interleaved.
- Hybrid: ``HybridRetriever.search`` of 32 queries at once vs the same 32 one by one vs one bank batch
  search of their vectors (k=50, the dense window), at 100k chunks (synthetic texts, a hashing
  embedder), all CPUs.
- Open: ``CosineBank.load`` time and RSS growth in a fresh process (median of 5 processes), for the
  largest size, with ``{"doc_id"}`` metadata and with ~600-character chunk texts in metadata.
- Write: ``CosineBank.from_vectors`` divided by ``np.save`` of the same array (plus one ``json.dumps``
  write of the metadata list, when there is metadata).

Pass PYTHONPATH=<checkout> to measure another version of the library with this script.
"""

from __future__ import annotations

import argparse
import json
import os
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
WORDS = ("cell protein gene tumor patient dose trial risk blood heart liver brain drug therapy study "
         "receptor kinase insulin glucose lipid vessel muscle bone skin lung kidney virus vaccine immune "
         "signal pathway enzyme mutation marker serum plasma infant adult elderly chronic acute").split()


def _median_s(fn, repeats: int) -> float:
    from bench_cosine_bank import median_ms

    return median_ms(fn, repeats, warmup=1) / 1e3


def _random_unit(n: int, seed: int = 0):
    import numpy as np
    from bench_cosine_bank import random_unit

    return random_unit(np.random.default_rng(seed), n, DIM)


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# -- work done in pinned subprocesses ------------------------------------------------------------


def numpy_top_k(scores, k: int):
    """Each row's ``k`` best columns, best first: one ``argpartition`` and a sort of ``k`` per row, the least
    an exact top-k in numpy does after the GEMM (no checks, ties in any order, nothing decoded)."""
    import numpy as np

    n = scores.shape[1]
    best = np.argpartition(scores, n - k, axis=1)[:, n - k:]
    return np.take_along_axis(best, np.argsort(-np.take_along_axis(scores, best, axis=1), axis=1), axis=1)


def search_worker(root: Path, sizes: list[int], cpus: int) -> dict:
    os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:cpus]))
    import numpy as np
    from bench_cosine_bank import read_floor_ms

    from tracerag.stores.cosine_bank import CosineBank

    rng = np.random.default_rng(1)
    a = rng.standard_normal((128, DIM), dtype=np.float32)
    b = rng.standard_normal((DIM, 4096), dtype=np.float32)
    flops_per_s = 2 * 128 * DIM * 4096 / min(_median_s(lambda: a @ b, 9) for _ in range(3))
    rows = []
    for n in sizes:
        bank = CosineBank.load(root / f"bank{n}")
        matrix = bank.vectors
        read_ms, read_way = read_floor_ms(matrix)
        for q in BATCHES:
            queries = np.asarray(matrix[rng.integers(0, n, q)]) + 0.02 * rng.standard_normal((q, DIM), np.float32)
            queries /= np.linalg.norm(queries, axis=1, keepdims=True)
            one = queries[0] if q == 1 else queries
            calls = {"bank": lambda b=bank, x=one: b.search(x, k=10, min_score=None),
                     "rows": lambda b=bank, x=one: b.search_rows(x, k=10, min_score=None),
                     "numpy": lambda x=queries, m=matrix: x @ m.T,
                     "numpy_top": lambda x=queries, m=matrix: numpy_top_k(x @ m.T, 10)}
            times: dict[str, list[float]] = {name: [] for name in calls}
            for fn in calls.values():
                fn()
            start = time.perf_counter()
            calls["numpy"]()
            # Sub-millisecond medians need many calls on a noisy machine: about 0.3 s of GEMMs per cell.
            repeats = 5 if n >= 1_000_000 else max(11, min(301, round(0.3 / (time.perf_counter() - start))))
            for _ in range(repeats):
                for name, fn in calls.items():
                    start = time.perf_counter()
                    fn()
                    times[name].append(time.perf_counter() - start)
            bank_ms, rows_ms, numpy_ms, top_ms = (statistics.median(times[k]) * 1e3
                                                  for k in ("bank", "rows", "numpy", "numpy_top"))
            rows.append({"cpus": cpus, "rows": n, "queries": q, "repeats": repeats, "bank_ms": bank_ms,
                         "numpy_ms": numpy_ms, "rows_only_ms": rows_ms, "rows_only_over_numpy": rows_ms / numpy_ms,
                         "numpy_top_ms": top_ms, "numpy_top_over_numpy": top_ms / numpy_ms,
                         "read_ms": read_ms, "read_way": read_way, "gflops": flops_per_s / 1e9,
                         "over_numpy": bank_ms / numpy_ms})
            print(f"  {cpus} CPU {n:>9,} rows x {q:>3}: bank {bank_ms:8.1f} ms, numpy {numpy_ms:8.1f} ms "
                  f"({bank_ms / numpy_ms:.2f}x; rows only {rows_ms / numpy_ms:.2f}x; numpy + top-k "
                  f"{top_ms / numpy_ms:.2f}x), read floor {read_ms:7.1f} ms",
                  file=sys.stderr)
        del bank, matrix
    return {"search": rows}


def open_worker(directory: Path) -> dict:
    from tracerag.stores.cosine_bank import CosineBank

    before = _rss_mb()
    start = time.perf_counter()
    bank = CosineBank.load(directory)
    ms = (time.perf_counter() - start) * 1e3
    after = _rss_mb()
    assert len(bank) > 0
    return {"open_ms": ms, "rss_mb": after - before}


def _run_worker(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True,
                         env=os.environ.copy())
    sys.stderr.write(out.stderr)
    return json.loads(out.stdout)


# -- measured in the parent ----------------------------------------------------------------------


class HashEmbedder:
    """Deterministic unit vectors from the text's hash: search cost without a model."""

    id = "hash-512"
    dim = DIM

    def embed(self, texts):
        import numpy as np

        out = np.stack([np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(DIM).astype(np.float32)
                        for t in texts])
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def chunk_text(rng, words: int = 80) -> str:
    return " ".join(rng.choice(WORDS, words))


def hybrid_figures(root: Path, n: int) -> dict:
    import numpy as np

    from tracerag.documents.hybrid import HybridRetriever
    from tracerag.stores.cosine_bank import CosineBank

    rng = np.random.default_rng(2)
    texts = [chunk_text(rng, 40) for _ in range(n)]
    meta = [{"text": t, "doc_id": f"d{i // 4}"} for i, t in enumerate(texts)]
    CosineBank.from_vectors(root / "hybrid", _random_unit(n, 3), [f"c{i}" for i in range(n)], meta,
                            embedder_id=HashEmbedder.id)
    bank = CosineBank.load(root / "hybrid", HashEmbedder())
    retriever = HybridRetriever(bank)
    queries = [chunk_text(rng, 6) for _ in range(32)]
    vectors = HashEmbedder().embed(queries)
    batch = _median_s(lambda: retriever.search(queries, k=10), 5)
    single = _median_s(lambda: [retriever.search([q], k=10) for q in queries], 3)
    bank_batch = _median_s(lambda: bank.search(vectors, k=50, min_score=None), 5)
    assert retriever.search(queries, k=10) == [retriever.search([q], k=10)[0] for q in queries]
    return {"chunks": n, "batch32_ms": batch * 1e3, "single32_ms": single * 1e3, "bank_batch32_ms": bank_batch * 1e3,
            "batch_over_single": batch / single, "batch_over_bank_batch": batch / bank_batch}


def write_banks(root: Path, sizes: list[int]) -> list[dict]:
    """Write the search banks ({"doc_id"} metadata) and, for the largest, a bank with chunk texts; time
    from_vectors against np.save (+ one json.dumps write of the metadata) of the same data."""
    import numpy as np

    from tracerag.stores.cosine_bank import CosineBank

    out = []
    for n in sizes:
        vectors = _random_unit(n)
        ids = [f"r{i}" for i in range(n)]
        variants = [("doc_id", [{"doc_id": f"d{i // 4}"} for i in range(n)], f"bank{n}")]
        if n == max(sizes):
            rng = np.random.default_rng(4)
            pieces = [chunk_text(rng, 90)[:600] for _ in range(997)]  # ~600 characters each, reused
            variants.append(("text", [{"doc_id": f"d{i // 4}", "text": pieces[i % 997]} for i in range(n)],
                             f"text{n}"))
        for kind, meta, name in variants:
            start = time.perf_counter()
            CosineBank.from_vectors(root / name, vectors, ids, meta, embedder_id="random")
            bank_s = time.perf_counter() - start
            start = time.perf_counter()
            with open(root / "plain.npy", "wb") as f:
                np.save(f, vectors)
                f.flush()
                os.fsync(f.fileno())
            save_s = time.perf_counter() - start
            start = time.perf_counter()
            with open(root / "plain.json", "w", encoding="utf-8") as f:
                f.write(json.dumps(meta, ensure_ascii=False))
                f.flush()
                os.fsync(f.fileno())
            json_s = time.perf_counter() - start
            out.append({"rows": n, "metadata": kind, "from_vectors_s": bank_s, "np_save_s": save_s,
                        "json_s": json_s, "over_np_save": bank_s / save_s,
                        "over_np_save_and_json": bank_s / (save_s + json_s)})
            print(f"  write {n:,} rows ({kind}): from_vectors {bank_s:.2f} s, np.save {save_s:.2f} s, "
                  f"json {json_s:.2f} s", file=sys.stderr)
        del vectors
    return out


def add_floors(search: list[dict]) -> None:
    """floor = max(matrix read time, FLOPs at the best FLOP rate seen with that many CPUs: the in-cache
    GEMM's or any measured numpy GEMM's, whichever is faster)."""
    for cpus in {r["cpus"] for r in search}:
        rows = [r for r in search if r["cpus"] == cpus]
        best = max([r["gflops"] * 1e9 for r in rows]
                   + [2 * r["queries"] * r["rows"] * DIM / (r["numpy_ms"] / 1e3) for r in rows])
        for r in rows:
            r["floor_ms"] = max(r["read_ms"], 2 * r["queries"] * r["rows"] * DIM / best * 1e3)
            r["over_floor"] = r["bank_ms"] / r["floor_ms"]


def report(data: dict) -> str:
    add_floors(data["search"])
    lines = ["| CPUs | rows | queries | bank ms | numpy GEMM ms | bank / numpy | rows only / numpy "
             "| numpy + top-k / numpy | floor ms | bank / floor |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["search"]:
        rows_only, top = (f"{r[key]:.2f}x" if key in r else "–" for key in ("rows_only_over_numpy",
                                                                            "numpy_top_over_numpy"))
        lines.append(f"| {r['cpus']} | {r['rows']:,} | {r['queries']} | {r['bank_ms']:.1f} | {r['numpy_ms']:.1f} "
                     f"| {r['over_numpy']:.2f}x | {rows_only} | {top} | {r['floor_ms']:.1f} | {r['over_floor']:.2f}x |")
    h = data.get("hybrid")
    if h:
        lines += ["", "| hybrid, chunks | batch of 32 ms | 32 single searches ms | one bank batch (k=50) ms "
                  "| batch / singles | batch / bank batch |", "|---|---|---|---|---|---|",
                  f"| {h['chunks']:,} | {h['batch32_ms']:.0f} | {h['single32_ms']:.0f} | {h['bank_batch32_ms']:.0f} "
                  f"| {h['batch_over_single']:.2f}x | {h['batch_over_bank_batch']:.2f}x |"]
    lines += ["", "| open, rows | metadata | open ms | RSS growth MB |", "|---|---|---|---|"]
    for o in data["open"]:
        lines.append(f"| {o['rows']:,} | {o['metadata']} | {o['open_ms']:.1f} | {o['rss_mb']:.1f} |")
    lines += ["", "| write, rows | metadata | from_vectors s | np.save s | from_vectors / np.save "
              "| from_vectors / (np.save + one JSON write) |", "|---|---|---|---|---|---|"]
    for w in data["write"]:
        lines.append(f"| {w['rows']:,} | {w['metadata']} | {w['from_vectors_s']:.2f} | {w['np_save_s']:.2f} "
                     f"| {w['over_np_save']:.2f}x | {w['over_np_save_and_json']:.2f}x |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--skip-1m", action="store_true", help="drop sizes of 1M rows and more (quick run)")
    parser.add_argument("--cpus", default="1,2")
    parser.add_argument("--hybrid-chunks", type=int, default=100_000)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--root", type=Path, help="where the banks are written (default: a temp dir)")
    parser.add_argument("--report-from", type=Path, help="print the tables of an earlier --json output")
    parser.add_argument("--search-worker", nargs=3, metavar=("ROOT", "SIZES", "CPUS"), help=argparse.SUPPRESS)
    parser.add_argument("--open-worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.search_worker:
        root, sizes, cpus = args.search_worker
        print(json.dumps(search_worker(Path(root), [int(s) for s in sizes.split(",")], int(cpus))))
        return
    if args.open_worker:
        print(json.dumps(open_worker(args.open_worker)))
        return
    if args.report_from:
        print(report(json.loads(args.report_from.read_text())))
        return
    sizes = [int(s) for s in args.sizes.split(",") if not (args.skip_1m and int(s) >= 1_000_000)]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-scale-", dir=args.root) as tmp:
        root = Path(tmp)
        data: dict = {"write": write_banks(root, sizes), "search": [], "open": []}
        for cpus in [int(c) for c in args.cpus.split(",")]:
            worker = ["--search-worker", str(root), ",".join(map(str, sizes)), str(cpus)]
            data["search"] += _run_worker(worker)["search"]
        largest = max(sizes)
        for kind, name in (("doc_id", f"bank{largest}"), ("text", f"text{largest}")):
            runs = [_run_worker(["--open-worker", str(root / name)]) for _ in range(5)]
            data["open"].append({"rows": largest, "metadata": kind,
                                 "open_ms": statistics.median(r["open_ms"] for r in runs),
                                 "rss_mb": statistics.median(r["rss_mb"] for r in runs)})
        if args.hybrid_chunks:
            data["hybrid"] = hybrid_figures(root, args.hybrid_chunks)
    print(report(data))
    print(f"\nLoad average before/after: {load_before[0]:.2f} / {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs.")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2))


if __name__ == "__main__":
    main()
