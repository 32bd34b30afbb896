"""CPU time per CommandRetrieval query at scale, this tree against another commit, alternated.

    python benchmarks/bench_query_cpu.py --baseline 475aa12 [--devices 5000] [--passes 5] [--runs 2]

Wall-clock latency on a shared machine measures the neighbours as much as the code; CPU time
(``time.process_time``) with BLAS held at one thread measures what a query costs. Per run: home_large
replicated to ``--devices`` devices (``synthetic_home.py``), its 308 utterances through CommandRetrieval
without an LM, once to warm, then ``--passes`` times; a query's cost is its fastest pass, and p50 / p95 are
over the utterances. The baseline is checked out into a temporary worktree and each run is a fresh process
(``PYTHONPATH`` selects the tree), baseline and this tree alternated ``--runs`` times. Run it at high priority
(``nice -n -15``) when the machine is busy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(devices: int, passes: int) -> dict:
    """p50 / p95 CPU ms per query of the tree this process imports."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from synthetic_home import BUNDLED, replicate_home

    from tracerag.commands.command_retrieval import CommandRetrieval
    from tracerag.embedding.embedders import LocalUSEEmbedder
    from tracerag.embedding.embedding_cache import CachedEmbedder
    from tracerag.home_commands.home import Home
    from tracerag.home_commands.home_index import CommandIndex

    assert Path(sys.modules["tracerag"].__file__).is_relative_to(Path.cwd()), \
        "PYTHONPATH must select the tree measured"

    queries = [json.loads(line)["query"] for line in
               (BUNDLED / "home_large" / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
    with tempfile.TemporaryDirectory() as tmp:
        embedder = CachedEmbedder(LocalUSEEmbedder(), Path(tmp) / "embeddings.sqlite")
        home = Home.load(replicate_home("home_large", Path(tmp) / "home", devices), log_warnings=False)
        program = CommandRetrieval(CommandIndex(home, embedder), ir_source="none")
        with threadpool_limits(1):
            for query in queries:
                program(query=query)
            costs = {query: float("inf") for query in queries}
            for _ in range(passes):
                for query in queries:
                    started = time.process_time()
                    program(query=query)
                    costs[query] = min(costs[query], time.process_time() - started)
    ms = [c * 1000 for c in costs.values()]
    return {"p50_ms": float(np.percentile(ms, 50)), "p95_ms": float(np.percentile(ms, 95))}


def _run(tree: Path, devices: int, passes: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, __file__, "--measure", "--devices", str(devices), "--passes", str(passes)],
                         env=env, cwd=tree, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=False, help="the commit to compare with")
    parser.add_argument("--devices", type=int, default=5000)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # one run, this process's tree
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.devices, args.passes)))
        return
    if not args.baseline:
        parser.error("--baseline is required")
    tree = Path(tempfile.mkdtemp(prefix="query-cpu-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), args.baseline], check=True,
                   capture_output=True)
    try:
        results: dict[str, list[dict]] = {"before": [], "after": []}
        for _ in range(args.runs):
            results["before"].append(_run(tree, args.devices, args.passes))
            results["after"].append(_run(ROOT, args.devices, args.passes))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)
    print(f"CPU ms per query at {args.devices:,} devices ({args.runs} alternated runs, fastest of {args.passes} "
          f"passes per utterance)")
    print("| run | before p50 / p95 | after p50 / p95 | after ÷ before p50 / p95 |")
    print("|---|---|---|---|")
    for i, (b, a) in enumerate(zip(results["before"], results["after"], strict=True), start=1):
        print(f"| {i} | {b['p50_ms']:.2f} / {b['p95_ms']:.2f} | {a['p50_ms']:.2f} / {a['p95_ms']:.2f} | "
              f"{a['p50_ms'] / b['p50_ms']:.2f} / {a['p95_ms'] / b['p95_ms']:.2f} |")


if __name__ == "__main__":
    main()
