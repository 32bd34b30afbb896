"""What an utterance never asked before costs CommandRetrieval at scale, its embedding included.

    PYTHONPATH=<tree> python benchmarks/bench_new_utterances.py [--devices 1000,20000] [--json out.json]

``bench_home_scale.py`` asks the same 308 utterances round after round: whatever a tree remembers per text
(rooms said, parses, tokens) is warm after the first round, embedding aside. Here each home (home_large
replicated by ``synthetic_home.py``) is searched with an uncached embedder, warmed on the 308 bundled
utterances, and then asked the intents corpus's home_large utterances (527, none of them among the 308) once
each: wall-clock and CPU ms per query, p50 and p95. ``PYTHONPATH`` selects the tree measured; run trees in turn.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))

DATA = Path(__file__).resolve().parent / "data" / "intents_corpus" / "home_large" / "queries.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", default="1000,20000")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import tempfile

    import numpy as np
    from synthetic_home import BUNDLED, replicate_home

    import tracerag
    from tracerag.commands.command_retrieval import CommandRetrieval
    from tracerag.embedding.embedders import LocalUSEEmbedder
    from tracerag.home_commands.home import Home
    from tracerag.home_commands.home_index import CommandIndex

    def lines(path: Path) -> list[str]:
        return [json.loads(line)["query"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    warm = lines(BUNDLED / "home_large" / "queries.jsonl")
    new = [q for q in dict.fromkeys(lines(DATA)) if q not in set(warm)]
    print(f"tree: {Path(tracerag.__file__).parents[1]}; {len(new)} new utterances", file=sys.stderr)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for devices in (int(n) for n in args.devices.split(",")):
            home = Home.load(replicate_home("home_large", Path(tmp) / f"home_{devices}", devices), log_warnings=False)
            program = CommandRetrieval(CommandIndex(home, LocalUSEEmbedder()), ir_source="none")
            for query in warm:
                program(query=query)
            wall, cpu = [], []
            for query in new:
                started, started_cpu = time.perf_counter(), time.process_time()
                program(query=query)
                wall.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - started_cpu) * 1000)
            row = {"devices": devices, "queries": len(new),
                   "wall_p50_ms": float(np.percentile(wall, 50)), "wall_p95_ms": float(np.percentile(wall, 95)),
                   "cpu_p50_ms": float(np.percentile(cpu, 50)), "cpu_p95_ms": float(np.percentile(cpu, 95))}
            out.append(row)
            print(f"| {devices:,} | {row['wall_p50_ms']:.1f} / {row['wall_p95_ms']:.1f} "
                  f"| {row['cpu_p50_ms']:.1f} / {row['cpu_p95_ms']:.1f} |")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
