"""The bad-input campaign as a table: per format, variants tried, accepted after normalisation,
skipped with a reason, rejected with one clear line, tracebacks, hangs, silent wrong results and leaks
(goal 0 of the last four); then the attacks format per attack.

    python benchmarks/bench_bad_inputs.py [--timeout 10]

The variants are the test suite's (tests/bad_inputs/<format>.py), each run through the reader a
user's command calls, in a fresh temporary directory, in a thread with a time limit. A silent wrong
result is an input accepted with a result a metric or user would trust but that is wrong (a forged
cited id, a row with its neighbour's metadata); a leak is content from outside the allowed root or
dataset in an output or an error, or markup the runtime did not write in an answer or a trajectory.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))

import tracerag.config  # noqa: E402
from tracerag.embedding.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.embedding.embedding_cache import CachedEmbedder  # noqa: E402

COLUMNS = ("accepted", "skipped", "rejected", "traceback", "hang", "wrong result", "leak")
ATTACK_COLUMNS = ("rejected", "accepted", "traceback", "hang", "wrong result", "leak", "unexpected")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds before a variant counts as a hang")
    args = parser.parse_args()
    from bad_inputs.harness import outcome

    modules = [importlib.import_module(f"bad_inputs.{m.name}")
               for m in pkgutil.iter_modules([str(TESTS / "bad_inputs")]) if m.name not in ("harness", "test_campaign")]
    rows, unexpected = [], []
    attacks: dict[str, Counter] = {}  # attack (the variant name's prefix) -> outcomes, for the attacks format
    with tempfile.TemporaryDirectory(prefix="bench-bad-inputs-") as tmp:
        embedder = CachedEmbedder(LocalUSEEmbedder(), Path(tmp) / "cache.sqlite")
        tracerag.config.make_embedder = lambda *a, **k: embedder  # the readers embed with the default model
        for module in sorted(modules, key=lambda m: m.FORMAT):
            counts: Counter = Counter()
            started = time.perf_counter()
            for n, variant in enumerate(module.VARIANTS):
                work = Path(tmp) / f"{module.FORMAT}-{n}"
                work.mkdir()
                result = outcome(variant, work, args.timeout)
                counts[result.kind] += 1
                if module.FORMAT == "attacks":  # refused or accepted where the other was right counts apart
                    kind = "unexpected" if result.kind in ("accepted", "skipped", "rejected") and \
                        result.kind != variant.expect else result.kind
                    attacks.setdefault(variant.name.split(":")[0], Counter())[kind] += 1
                if result.kind != variant.expect:
                    unexpected.append(f"{module.FORMAT}:{variant.name}: expected {variant.expect}, got {result.kind} "
                                      f"({result.detail[:120]})")
            rows.append((module.FORMAT, len(module.VARIANTS), *(counts[c] for c in COLUMNS),
                         f"{time.perf_counter() - started:.1f}"))
    print("| format | variants | accepted (normalised) | skipped with a reason | rejected with one line "
          "| tracebacks | hangs | silent wrong results | leaks | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    total = [sum(r[i] for r in rows) for i in range(1, len(COLUMNS) + 2)]
    print("| all | " + " | ".join(str(c) for c in total) + " | |")
    if attacks:
        print()
        print("| attack | tried | refused cleanly | accepted correctly | tracebacks | hangs | silent wrong results "
              "| leaks | other than expected |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, counts in attacks.items():
            print(f"| {name} | {sum(counts.values())} | " + " | ".join(str(counts[c]) for c in ATTACK_COLUMNS) + " |")
    for line in unexpected:
        print(f"unexpected: {line}", file=sys.stderr)


if __name__ == "__main__":
    main()
