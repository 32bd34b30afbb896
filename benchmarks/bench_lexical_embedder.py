"""The lexical channel's embedding time on 2,000 short mixed-language texts, beside the least work it must do.

    python benchmarks/bench_lexical_embedder.py [--texts 2000] [--repeats 7]

The texts are the test's (tests/embedding/test_embedders.py, ``test_lexical_speed``, a slow-step check):
"卧室 {i} 号灯 bedroom lamp {i}". ``LexicalEmbedder().embed`` (4,096 dimensions) against a baseline measured in
the same run: the same texts' features only (``_features``: CJK unigrams and bigrams, words and boundary-marked
3-grams), without hashing them or building the matrix. Medians of ``--repeats`` runs; the ratio says what
hashing, counting and normalising add.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from tracerag.embedding.embedders import LexicalEmbedder, _features


def median_seconds(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    texts = [f"卧室 {i} 号灯 bedroom lamp {i}" for i in range(args.texts)]
    lexical = LexicalEmbedder()
    lexical.embed(texts[:10])  # imports and first-call set-up: not measured
    features = median_seconds(lambda: [_features(t) for t in texts], args.repeats)
    embedded = median_seconds(lambda: lexical.embed(texts), args.repeats)
    print("| what | median (s) | texts/s | ÷ features only |")
    print("|---|---:|---:|---:|")
    print(f"| features only (baseline) | {features:.3f} | {args.texts / features:,.0f} | 1.00 |")
    print(f"| LexicalEmbedder.embed | {embedded:.3f} | {args.texts / embedded:,.0f} | {embedded / features:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
