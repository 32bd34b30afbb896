"""Deterministic citation metrics on 1,000 synthetic cited answers: the figure to reach is under a second.

    python benchmarks/bench_citation_metrics.py [--answers 1000] [--repeats 7]

Each answer has 3-8 sentences citing 0-3 ids (chunk ids ``<pmid>#<n>`` and playbook/template ids mixed,
some never provided, citations before or after the full stop). One pass = for every answer:
``split_sentences`` -> ``citation_coverage`` over the sentences -> ``extract_cited_ids`` ->
``citation_validity``. Prints the median of ``--repeats`` passes as a markdown table, beside a baseline
measured in the same run: one bare ``re.findall`` of bracket groups over the same answers (the least
work any citation metric must do), so the ratio says what the metrics add on top.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time

from tracerag.metrics.citations import citation_coverage, citation_validity, extract_cited_ids, split_sentences

WORDS = ("the cohort showed lower risk of recurrence after treatment with a median follow up of months and "
         "patients who received the intervention reported fewer adverse events than controls").split()


def synthetic_answers(n: int, seed: int = 7) -> list[tuple[str, set[str]]]:
    """(answer, provided ids) pairs; ~10% of citations name an id that was not provided."""
    rng = random.Random(seed)
    answers = []
    for _ in range(n):
        provided = [f"{rng.randrange(10**7, 10**8)}#{rng.randrange(6)}" for _ in range(6)]
        provided += [f"proc-{rng.randrange(1, 99999):05d}", f"tpl-{rng.randrange(16**8):08x}"]
        sentences = []
        for _ in range(rng.randint(3, 8)):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 22)))
            cites = [rng.choice(provided) if rng.random() > 0.1 else f"{rng.randrange(10**7, 10**8)}#9"
                     for _ in range(rng.choice((0, 1, 1, 2, 3)))]
            group = f" [{', '.join(cites)}]" if cites else ""
            sentence = words[0].upper() + words[1:]
            sentences.append(f"{sentence}{group}." if rng.random() < 0.8 else f"{sentence}.{group}")
        answers.append((" ".join(sentences), set(provided)))
    return answers


def metrics_pass(answers: list[tuple[str, set[str]]]) -> float:
    total = 0.0
    for answer, provided in answers:
        total += citation_coverage(split_sentences(answer), provided)
        total += citation_validity(extract_cited_ids(answer), provided)
    return total


_GROUPS = re.compile(r"\[[^\]]*\]")


def baseline_pass(answers: list[tuple[str, set[str]]]) -> int:
    return sum(len(_GROUPS.findall(answer)) for answer, _ in answers)


def timed(fn, answers, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(answers)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    answers = synthetic_answers(args.answers)
    metrics_pass(answers[:50])  # warm the regex caches
    sentences = sum(len(split_sentences(a)) for a, _ in answers)
    baseline = timed(baseline_pass, answers, args.repeats)
    metrics = timed(metrics_pass, answers, args.repeats)
    print(f"{args.answers} answers, {sentences} sentences, median of {args.repeats} passes\n")
    print("| pass | median ms | µs / answer | vs baseline |")
    print("|---|---:|---:|---:|")
    print(f"| baseline: one `re.findall` of bracket groups | {baseline * 1e3:.1f} | "
          f"{baseline / args.answers * 1e6:.1f} | 1.0x |")
    print(f"| split + coverage + extract + validity | {metrics * 1e3:.1f} | {metrics / args.answers * 1e6:.1f} | "
          f"{metrics / baseline:.1f}x |")
    verdict = "under" if metrics < 1.0 else "OVER"
    print(f"\n{args.answers} answers in {metrics:.3f} s: {verdict} the 1 s budget")


if __name__ == "__main__":
    main()
