"""Measure CosineBank exact search against the memory-bandwidth floor, plus build and append costs.

    python benchmarks/bench_cosine_bank.py [--sizes 10000,100000,1000000] [--dim 512] [--repeats 21]
                                           [--json out/bank.json] [--skip-embedder]

Search: banks of random unit float32 rows written with the low-level ``CosineBank.from_vectors`` (no
embedder), opened with ``CosineBank.load`` (memory-mapped) and warmed. The floor is rows x dim x 4 B
divided by the read bandwidth measured in the same run: a streaming ``np.add.reduce(axis=0)`` over the
same bytes, timed three ways (the bank's memory map split across all cores with one thread per core,
an in-RAM copy split the same way, the in-RAM copy on one core); the fastest is used, i.e. the strictest
floor. Latency is the full ``bank.search`` call (normalise, GEMV/GEMM, min_score filter, top-k, Hit
objects with decoded metadata), k=10, default min_score, queries = noisy copies of bank rows. Floor
and search timings are interleaved round by round so background load affects both alike, searches run
in bursts of 5 (warm BLAS threads); medians over all rounds.

Build/append: the default LocalUSEEmbedder (model warmed first) on ~500 real short commands from the
bundled smart-home dataset; append of +10% rows vs a full rebuild of the grown bank. Also the
I/O-only append (append_vectors) at 100k rows, which shows the cost of copying the old matrix.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from tracerag.embedding.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.stores.bank_search import worker_count  # noqa: E402
from tracerag.stores.cosine_bank import CosineBank  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "tracerag" / "datasets" / "data" / "smarthome"


def median_ms(fn: Callable[[], object], repeats: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def random_unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    out = np.empty((n, dim), dtype=np.float32)
    for i in range(0, n, 65_536):
        block = rng.standard_normal((min(65_536, n - i), dim), dtype=np.float32)
        out[i : i + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def read_streams(mapped: np.ndarray, pool: ThreadPoolExecutor, workers: int) -> dict[str, Callable[[], object]]:
    """The three ways the floor streams ``mapped``'s bytes (see the module docstring), by name."""
    in_ram = np.array(mapped)
    sources = []
    for array in (mapped, in_ram):
        bounds = np.linspace(0, len(array), workers + 1).astype(int)
        sources.append([array[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)])
    return {
        "mmap, all cores": lambda: list(pool.map(lambda a: np.add.reduce(a, axis=0), sources[0])),
        "RAM, all cores": lambda: list(pool.map(lambda a: np.add.reduce(a, axis=0), sources[1])),
        "RAM, one core": lambda: np.add.reduce(in_ram, axis=0),
    }


def read_floor_ms(mapped: np.ndarray, repeats: int = 5) -> tuple[float, str]:
    """(ms, way): the fastest of the three streams over ``mapped`` (median of ``repeats``), the time no
    search that reads the whole matrix can beat."""
    workers = worker_count()
    with ThreadPoolExecutor(workers) as pool:
        streams = read_streams(mapped, pool, workers)
        med = {name: median_ms(fn, repeats, warmup=1) for name, fn in streams.items()}
    fastest = min(med, key=med.__getitem__)
    return med[fastest], fastest


def measure(bank: CosineBank, noisy: np.ndarray, pool: ThreadPoolExecutor, workers: int, repeats: int) -> dict:
    """Rounds of bursts: stream the mmap, stream an in-RAM copy (all cores, then one core), single
    queries, 4-query batches. Interleaving makes background load hit floor and searches alike; bursts
    measure the warm case for both (a cache-resident bank stays in cache). Medians over all rounds."""
    mapped = bank.vectors
    streams = read_streams(mapped, pool, workers)
    times: dict[str, list[float]] = {name: [] for name in [*streams, "single", "batch4"]}
    burst = 5
    queries = iter(noisy)
    for round_ in range(repeats + 1):  # round 0 is warm-up
        sample = {name: [timed(fn) for _ in range(3)] for name, fn in streams.items()}
        sample["single"] = [timed(lambda: bank.search(next(queries), k=10)) for _ in range(burst)]
        sample["batch4"] = [timed(lambda: bank.search(np.stack([next(queries) for _ in range(4)]), k=10))
                            for _ in range(burst)]
        if round_:
            for name, values in sample.items():
                times[name].extend(values)
    med = {name: statistics.median(values) for name, values in times.items()}
    fastest = min(streams, key=lambda name: med[name])
    bandwidth = mapped.nbytes / med[fastest] / 1e9
    return {"bandwidth_gbps": bandwidth, "bandwidth_source": fastest,
            "bandwidth_all_gbps": {name: mapped.nbytes / med[name] / 1e9 for name in streams},
            "floor_ms": mapped.nbytes / bandwidth / 1e6, "single_ms": med["single"] * 1e3,
            "batch4_ms": med["batch4"] * 1e3}


def search_rows(sizes: list[int], dim: int, repeats: int, root: Path) -> list[dict]:
    rng = np.random.default_rng(0)
    workers = worker_count()
    pool = ThreadPoolExecutor(workers)
    rows = []
    for n in sizes:
        vectors = random_unit(rng, n, dim)
        meta = [{"doc_id": f"d{i // 4}"} for i in range(n)]
        start = time.perf_counter()
        CosineBank.from_vectors(root / f"bank{n}", vectors, [f"r{i}" for i in range(n)], meta, embedder_id="random")
        write_s = time.perf_counter() - start
        del vectors
        bank = CosineBank.load(root / f"bank{n}")
        picks = np.sort(rng.integers(0, n, size=(repeats + 1) * 25 + 1))
        noise = 0.02 * rng.standard_normal((len(picks), dim), dtype=np.float32)  # cosine to the row ~0.9
        noisy = np.asarray(bank.vectors[picks]) + noise
        hits = bank.search(noisy[0], k=10)[0]
        assert hits and hits[0].row == picks[0], "a noisy copy of a row should find that row first"
        m = measure(bank, noisy, pool, workers, repeats)
        rows.append({"rows": n, "dim": dim, "mb": bank.vectors.nbytes / 2**20, **m,
                     "single_over_floor": m["single_ms"] / m["floor_ms"],
                     "batch_over_single": m["batch4_ms"] / m["single_ms"], "write_rows_per_s": n / write_s})
        print(f"  {n:>9,} rows: floor {m['floor_ms']:.2f} ms ({m['bandwidth_source']}), single "
              f"{m['single_ms']:.2f} ms, batch-4 {m['batch4_ms']:.2f} ms; bandwidths "
              + ", ".join(f"{k} {v:.1f} GB/s" for k, v in m["bandwidth_all_gbps"].items()), file=sys.stderr)
        del bank
    pool.shutdown()
    return rows


def corpus(n: int) -> list[str]:
    texts: list[str] = []
    for path in sorted(DATA.glob("*/queries.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.append(json.loads(line)["query"])
    unique = list(dict.fromkeys(texts))
    if len(unique) < n:
        raise SystemExit(f"only {len(unique)} distinct queries under {DATA}, need {n}")
    return unique[:n]


def embedder_costs(root: Path, n: int, repeats: int) -> dict:
    texts = corpus(n + n // 10)
    base, extra = texts[:n], texts[n:]
    ids = [f"t{i}" for i in range(len(texts))]
    embedder = LocalUSEEmbedder()
    start = time.perf_counter()
    embedder.embed(["warm up"])
    model_load_s = time.perf_counter() - start

    def build() -> None:
        CosineBank.create(root / "use", embedder, ids[:n], base, overwrite=True)

    build_ms = median_ms(build, repeats, warmup=1)
    append_times, rebuild_times = [], []
    for _ in range(repeats):
        bank = CosineBank.create(root / "use", embedder, ids[:n], base, overwrite=True)
        start = time.perf_counter()
        added = bank.append(ids[n:], extra)
        append_times.append(time.perf_counter() - start)
        assert added == len(extra)
        start = time.perf_counter()
        CosineBank.create(root / "use", embedder, ids, texts, overwrite=True)
        rebuild_times.append(time.perf_counter() - start)
    append_ms, rebuild_ms = statistics.median(append_times) * 1e3, statistics.median(rebuild_times) * 1e3
    return {"texts": n, "model_load_s": model_load_s, "build_ms": build_ms, "texts_per_s": n / (build_ms / 1e3),
            "append_rows": len(extra), "append_ms": append_ms, "rebuild_rows": len(texts), "rebuild_ms": rebuild_ms}


def io_append_costs(root: Path, n: int, dim: int, repeats: int) -> dict:
    rng = np.random.default_rng(1)
    old, new = random_unit(rng, n, dim), random_unit(rng, n // 10, dim)
    ids = [f"r{i}" for i in range(n + n // 10)]
    both = np.concatenate([old, new])
    append_times, rebuild_times = [], []
    for _ in range(repeats):
        bank = CosineBank.from_vectors(root / "io", old, ids[:n], embedder_id="random", overwrite=True)
        start = time.perf_counter()
        bank.append_vectors(ids[n:], new)
        append_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        CosineBank.from_vectors(root / "io", both, ids, embedder_id="random", overwrite=True)
        rebuild_times.append(time.perf_counter() - start)
    return {"rows": n, "append_rows": n // 10, "append_ms": statistics.median(append_times) * 1e3,
            "rebuild_ms": statistics.median(rebuild_times) * 1e3}


def report(search: list[dict], use: dict | None, io: dict) -> str:
    lines = [
        "| rows | MB | read bandwidth GB/s | floor ms | single-query p50 ms | single / floor "
        "| 4-query batch p50 ms | batch / single |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in search:
        lines.append(f"| {r['rows']:,} | {r['mb']:,.0f} | {r['bandwidth_gbps']:.1f} | {r['floor_ms']:.2f} "
                     f"| {r['single_ms']:.2f} | {r['single_over_floor']:.2f}x | {r['batch4_ms']:.2f} "
                     f"| {r['batch_over_single']:.2f}x |")
    lines.append("")
    if use is not None:
        lines.append(f"Build with LocalUSEEmbedder: {use['texts']} texts in {use['build_ms']:.0f} ms = "
                     f"**{use['texts_per_s']:.0f} texts/s** (model load {use['model_load_s']:.1f} s, excluded).")
        lines.append(f"Append +{use['append_rows']} texts to {use['texts']}: {use['append_ms']:.0f} ms vs full "
                     f"rebuild of {use['rebuild_rows']}: {use['rebuild_ms']:.0f} ms "
                     f"({use['append_ms'] / use['rebuild_ms']:.2f}x).")
    lines.append(f"I/O-only append (append_vectors) +{io['append_rows']:,} rows to {io['rows']:,}: "
                 f"{io['append_ms']:.0f} ms vs from_vectors rebuild {io['rebuild_ms']:.0f} ms "
                 f"({io['append_ms'] / io['rebuild_ms']:.2f}x).")
    lines.append("Bulk write speed (from_vectors): " + ", ".join(
        f"{r['rows']:,} rows at {r['write_rows_per_s'] / 1e3:,.0f}k rows/s" for r in search) + ".")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--texts", type=int, default=500)
    parser.add_argument("--skip-embedder", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-bank-") as tmp:
        root = Path(tmp)
        search = search_rows(sizes, args.dim, args.repeats, root)
        use = None if args.skip_embedder else embedder_costs(root, args.texts, repeats=3)
        io = io_append_costs(root, 100_000, args.dim, repeats=3)
    print(report(search, use, io))
    print(f"Load average before/after: {load_before[0]:.2f} / {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs.")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"search": search, "embedder": use, "io_append": io}, indent=2))


if __name__ == "__main__":
    main()
