"""The command line's start-up after it reads the registry: ``tracerag --help``, ``tracerag evaluate --help`` and
``tracerag run --help`` wall time in fresh interpreters, medians of ``--runs``, next to ``python -c pass``, for
each source tree given (``--root``, repeatable), so a tree from before a change is measured in the same run:

    git worktree add /tmp/before 475aa12
    python benchmarks/bench_cli_startup.py --root /tmp/before --root . --runs 21
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = {"python -c pass": ["-c", "pass"], "tracerag --help": ["optimize.py", "--help"],
            "tracerag evaluate --help": ["optimize.py", "evaluate", "--help"],
            "tracerag run --help": ["optimize.py", "run", "--help"]}


def wall_ms(root: Path, argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(root), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    started = time.perf_counter()
    subprocess.run([sys.executable, *argv], cwd=root, env=env, check=True, capture_output=True)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", action="append", type=Path, help="source tree (repeatable; default .)")
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    roots = [r.resolve() for r in args.root or [Path(".")]]
    times = {(root, name): [] for root in roots for name in COMMANDS}
    for _ in range(args.runs):  # interleaved, so a busy spell of the machine falls on every tree alike
        for root in roots:
            for name, argv in COMMANDS.items():
                times[root, name].append(wall_ms(root, argv))
    print(f"| command | {' | '.join(f'{r.name or r} (ms, median of {args.runs})' for r in roots)} |")
    print("|---|" + "---:|" * len(roots))
    for name in COMMANDS:
        print(f"| {name} | " + " | ".join(f"{statistics.median(times[r, name]):.0f}" for r in roots) + " |")


if __name__ == "__main__":
    main()
