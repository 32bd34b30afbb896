"""pubmed_search latency over MCP (stdio) against the same search in-process. Prints a markdown table.

    python benchmarks/bench_mcp_server.py [--n 200] [--warmup 10] [--cache-dir DIR]

Both paths search the bundled PubMedQA abstracts with the default embedder (USE behind the on-disk
embedding cache, as `python -m tracerag.tools` runs by default), limit 5:

- in-process: ``PubMedSearch.search`` called directly (the baseline: no MCP at all), with BLAS held
  at one thread as the server holds it;
- stdio: ``MCPToolSource.local()`` spawns ``python -m tracerag.tools`` and calls ``pubmed_search``
  through one persistent session (JSON-RPC over pipes, argument validation, structured output).

Each path is warmed up first (model load, first queries), then timed per call over ``--n`` distinct
PubMedQA questions, the two paths' calls interleaved so that machine noise hits both alike. "New
query": disjoint question sets, so every query embedding is computed (not read from the cache);
"repeated query": the stdio set again on both paths, its embeddings now cached. By default the cache
directory is a fresh temporary one (the run starts by ingesting the 1,000 abstracts, ~30 s), so a
re-run measures the same thing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable


def clock(fn: Callable[[str], list[str]], query: str, into: list[float]) -> list[str]:
    started = time.perf_counter()
    ids = fn(query)
    into.append(1000 * (time.perf_counter() - started))
    return ids


def row(name: str, latencies: list[float]) -> str:
    p95 = statistics.quantiles(latencies, n=20)[-1]
    return (f"| {name} | {len(latencies)} | {statistics.median(latencies):.1f} | {p95:.1f} "
            f"| {statistics.fmean(latencies):.1f} |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200, help="timed calls per path and pass")
    p.add_argument("--warmup", type=int, default=10, help="untimed calls per path first")
    p.add_argument("--cache-dir", help="cache directory (default: a fresh temporary one)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TRACERAG_CACHE_DIR"] = args.cache_dir or tmp  # read by this process and by the server
        return run(args.n, args.warmup)


def run(n: int, warmup: int) -> int:
    from threadpoolctl import threadpool_limits

    from tracerag.datasets.pubmedqa import load_pubmedqa_questions
    from tracerag.tools.mcp_client import MCPToolSource
    from tracerag.tools.pubmed_corpus import PubMedSearch

    questions = load_pubmedqa_questions("pubmedqa")
    if len(questions) < 2 * (n + warmup):
        sys.exit(f"need {2 * (n + warmup)} questions, the bundled set has {len(questions)}")
    stdio_set, local_set = questions[:n], questions[n : 2 * n]
    warm = [q.question for q in questions[2 * n : 2 * n + 2 * warmup]]

    started = time.perf_counter()
    search = PubMedSearch.pubmedqa()  # ingests into the cache directory on first use
    open_s = time.perf_counter() - started

    def local(query: str) -> list[str]:
        return [s["id"] for s in search.search(query, limit=5)[1]]

    started = time.perf_counter()
    with MCPToolSource.local() as source:
        start_s = time.perf_counter() - started

        def remote(query: str) -> list[str]:
            result = source.call("pubmed_search", {"query": query, "limit": 5})
            if result.error:
                raise RuntimeError(result.error)
            return result.ids

        local_new, stdio_new, local_rep, stdio_rep = [], [], [], []
        stdio_ids, same = [], 0
        with threadpool_limits(limits=1, user_api="blas"):
            for query in warm[:warmup]:
                local(query)
            for query in warm[warmup:]:
                remote(query)
            for mine, theirs in zip(local_set, stdio_set, strict=True):
                clock(local, mine.question, local_new)
                stdio_ids.append(clock(remote, theirs.question, stdio_new))
            for q in stdio_set:
                same += clock(local, q.question, local_rep) == clock(remote, q.question, stdio_rep)

    recall = sum(q.pmid in ids for q, ids in zip(stdio_set, stdio_ids, strict=True)) / n
    print("| path | calls | p50 ms | p95 ms | mean ms |")
    print("|---|---:|---:|---:|---:|")
    print(row("in-process `PubMedSearch.search`, new query", local_new))
    print(row("MCP stdio `pubmed_search`, new query", stdio_new))
    print(row("in-process `PubMedSearch.search`, repeated query", local_rep))
    print(row("MCP stdio `pubmed_search`, repeated query", stdio_rep))
    print()
    for name, mcp, base in (("new query", stdio_new, local_new), ("repeated query", stdio_rep, local_rep)):
        print(f"- MCP overhead at p50, {name}: {statistics.median(mcp) - statistics.median(base):+.1f} ms "
              f"({statistics.median(mcp) / statistics.median(base):.2f}x the in-process search).")
    print(f"- Same top-5 ids on both paths: {same}/{n}; the question's own abstract in the stdio top 5: {recall:.3f}.")
    print(f"- Opening the corpus in-process {open_s:.1f} s (ingestion included when the cache is fresh); "
          f"starting the stdio server and its handshake {start_s:.1f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
