"""The bad-input campaign as a table: per format, variants tried, accepted after normalisation,
skipped with a reason, rejected with one clear line, tracebacks and hangs (goal 0 of both).

    python benchmarks/bench_bad_inputs.py [--timeout 10]

The variants are the test suite's (tests/bad_inputs/<format>.py), each run through the reader a
user's command calls, in a fresh temporary directory, in a thread with a time limit.
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
from tracerag.retrievers.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.retrievers.embedding_cache import CachedEmbedder  # noqa: E402

COLUMNS = ("accepted", "skipped", "rejected", "traceback", "hang")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds before a variant counts as a hang")
    args = parser.parse_args()
    from bad_inputs.harness import outcome

    modules = [importlib.import_module(f"bad_inputs.{m.name}")
               for m in pkgutil.iter_modules([str(TESTS / "bad_inputs")]) if m.name not in ("harness", "test_campaign")]
    rows, unexpected = [], []
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
                if result.kind != variant.expect:
                    unexpected.append(f"{module.FORMAT}:{variant.name}: expected {variant.expect}, got {result.kind} "
                                      f"({result.detail[:120]})")
            rows.append((module.FORMAT, len(module.VARIANTS), *(counts[c] for c in COLUMNS),
                         f"{time.perf_counter() - started:.1f}"))
    print("| format | variants | accepted (normalised) | skipped with a reason | rejected with one line "
          "| tracebacks | hangs | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    total = [sum(r[i] for r in rows) for i in range(1, 7)]
    print("| all | " + " | ".join(str(c) for c in total) + " | |")
    for line in unexpected:
        print(f"unexpected: {line}", file=sys.stderr)


if __name__ == "__main__":
    main()
