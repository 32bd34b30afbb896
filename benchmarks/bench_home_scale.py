"""CommandRetrieval in homes of 20 to 20,000 devices: load, index build, query latency, memory.

    python benchmarks/bench_home_scale.py [--sizes 20,200,1000,5000,20000] [--rounds 5] [--json out.json]

Homes are the bundled home_large replicated by ``synthetic_home.py`` (new ids, rooms and labels per
copy). Per size: ``Home.load`` against ``json.loads`` of the same three files (devices.json,
rooms.json and each spec.jsonl line; medians of 5), the index build with a warm embedding cache
(median of 3; the documents are the same command texts at every size), the memory Python holds for
the loaded home and its index (tracemalloc, one extra build), and the latency of the 308 home_large
utterances through ``CommandRetrieval`` without an LM, twice: with the query embeddings warm in the
embedding cache (as in the latency table of bench_commands.py: the retriever's own cost), and with an
uncached embedder, so every query also pays its embedding (what a new utterance costs). Query rounds
go over every size in turn so background load hits all alike; latency ratios are to the 200-device
p50 of the same run, and the growth exponent is the slope of log(latency) against log(devices) from
1,000 to 20,000.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from synthetic_home import BUNDLED, replicate_home  # noqa: E402

from tracerag.commands.command_retrieval import CommandRetrieval  # noqa: E402
from tracerag.embedding.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.embedding.embedding_cache import CachedEmbedder  # noqa: E402
from tracerag.home_commands.home import Home  # noqa: E402
from tracerag.home_commands.home_index import CommandIndex  # noqa: E402


def _median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def json_baseline(home: Path) -> None:
    """What any reader of these files pays: parsing them."""
    json.loads((home / "devices.json").read_text(encoding="utf-8"))
    json.loads((home / "rooms.json").read_text(encoding="utf-8"))
    for line in (home / "spec.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            json.loads(line)


def held_mb(home_dir: Path, embedder) -> float:
    """MB Python still holds for the loaded home and its index (embeddings included)."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    index = CommandIndex(Home.load(home_dir, log_warnings=False), embedder)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del index
    return held / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20,200,1000,5000,20000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        embedder = CachedEmbedder(LocalUSEEmbedder(), Path(tmp) / "embeddings.sqlite")
        queries = [json.loads(line)["query"] for line in
                   (BUNDLED / "home_large" / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
        rows, programs, uncached = {}, {}, {}
        plain = LocalUSEEmbedder()
        for n in sizes:
            home_dir = replicate_home("home_large", Path(tmp) / f"home_{n}", n)
            load = _median_ms(lambda d=home_dir: Home.load(d, log_warnings=False), 5)
            parse = _median_ms(lambda d=home_dir: json_baseline(d), 5)
            home = Home.load(home_dir, log_warnings=False)
            CommandIndex(home, embedder)  # warms the embedding cache
            build = _median_ms(lambda h=home: CommandIndex(h, embedder), 3)
            index = CommandIndex(home, embedder)
            programs[n] = CommandRetrieval(index, ir_source="none")
            uncached[n] = CommandRetrieval(CommandIndex(home, plain), ir_source="none")
            for q in queries:  # warm the query embeddings and code paths
                programs[n](query=q)
            rows[n] = {"devices": n, "commands": len(index.table.rows), "load_ms": load, "json_ms": parse,
                       "load_ratio": load / parse, "build_ms": build, "held_mb": held_mb(home_dir, embedder),
                       "latencies": [], "cold": []}
            print(f"{n} devices ready", file=sys.stderr)
        for _ in range(args.rounds):
            for n in sizes:
                for q in queries:
                    for program, times in ((programs[n], rows[n]["latencies"]), (uncached[n], rows[n]["cold"])):
                        t = time.perf_counter()
                        program(query=q)
                        times.append((time.perf_counter() - t) * 1000)
    for row in rows.values():
        lat = row.pop("latencies")
        row["p50_ms"], row["p95_ms"] = float(np.percentile(lat, 50)), float(np.percentile(lat, 95))
        cold = row.pop("cold")
        row["cold_p50_ms"], row["cold_p95_ms"] = float(np.percentile(cold, 50)), float(np.percentile(cold, 95))
    base = rows.get(200, rows[sizes[0]])["p50_ms"]
    print("| devices | commands | load ms | json.loads ms | load ÷ json | index build ms | held MB "
          "| query p50 ms | query p95 ms | p50 ÷ 200-device p50 | p95 ÷ 200-device p50 "
          "| with embedding: p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows.values():
        print(f"| {row['devices']:,} | {row['commands']:,} | {row['load_ms']:.1f} | {row['json_ms']:.1f} "
              f"| {row['load_ratio']:.2f} | {row['build_ms']:.0f} | {row['held_mb']:.1f} | {row['p50_ms']:.1f} "
              f"| {row['p95_ms']:.1f} | {row['p50_ms'] / base:.2f} | {row['p95_ms'] / base:.2f} "
              f"| {row['cold_p50_ms']:.1f} | {row['cold_p95_ms']:.1f} |")
    if 1000 in rows and 20000 in rows:
        for stat in ("p50_ms", "p95_ms", "cold_p50_ms", "cold_p95_ms"):
            slope = math.log(rows[20000][stat] / rows[1000][stat]) / math.log(20)
            print(f"growth exponent of the query {stat[:-3]}, 1,000 -> 20,000 devices: {slope:.2f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(list(rows.values()), indent=2))


if __name__ == "__main__":
    main()
