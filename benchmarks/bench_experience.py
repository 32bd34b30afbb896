"""ExperienceRetrieval on the bundled `experience` dataset: retrieval quality without an LM, bank build
throughput, and append cost against a full rebuild. Prints markdown tables for BENCHMARKS.md.

    python benchmarks/bench_experience.py [--repeats 3]

Embedding runs without the on-disk cache (a fresh in-process embedder), so build and append times
include real embedding work. Search-kernel figures (10k/100k/1M rows) are bench_cosine_bank.py's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from tracerag.datasets.experience import load_experience_queries
from tracerag.datasets.smarthome import resolve_dataset
from tracerag.embedding.embedders import LocalUSEEmbedder
from tracerag.experience.evaluation import evaluate_experience
from tracerag.experience.experience_retrieval import ExperienceConfig, ExperienceRetrieval
from tracerag.memory.experience_bank import build_experience_bank
from tracerag.stores.cosine_bank import CosineBank


class BareQuestion(ExperienceRetrieval):
    """Baseline: the question alone as the query (no caption, no task type), retrieval order."""

    def forward(self, question, images=None, caption=None, sub_task=None):
        return super().forward(question, images)


def quality(bank: CosineBank, dataset: Path) -> list[str]:
    variants = [
        ("baseline: bare question, no rerank", BareQuestion, {"enable_rerank": False}),
        ("default: task text + local rerank", ExperienceRetrieval, {}),
        ("task text, rerank off", ExperienceRetrieval, {"enable_rerank": False}),
    ]
    rows = ["| split | n | variant | hit@5 | recall@5 | MRR | p50 ms |", "|---|---:|---|---:|---:|---:|---:|"]
    for split in ("train", "dev", "test"):
        examples = [q.to_example(dataset) for q in load_experience_queries(dataset, split)]
        for name, cls, overrides in variants:
            program = cls(bank, ExperienceConfig(enable=True, **overrides))
            m = evaluate_experience(program, examples, dataset="experience", k=5, progress=False)["metrics"]
            rows.append(f"| {split} | {m['n']} | {name} | {m['hit@5']:.3f} | {m['recall@5']:.3f} | {m['mrr']:.3f} "
                        f"| {m['latency_ms_p50']:.1f} |")
    return rows


def copy_traces(source: Path, target: Path, extra: int) -> None:
    """The bundled traces plus `extra` new correct ones (reworded copies under new task ids)."""
    shutil.copytree(source / "tasks", target / "tasks")
    originals = sorted((source / "tasks").glob("*/trace.json"))
    for n in range(extra):
        trace = json.loads(originals[n % len(originals)].read_text(encoding="utf-8"))
        trace.update(task_id=f"new-{n:05d}", question=f"(variant {n}) {trace['question']}", is_correct=True)
        path = target / "tasks" / trace["task_id"] / "trace.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(trace), encoding="utf-8")


def build_and_append(dataset: Path, repeats: int) -> list[str]:
    embedder = LocalUSEEmbedder()
    embedder.embed(["warm up"])  # model load is not build time
    rows = ["| operation | traces embedded | median s | traces/s |", "|---|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        times = []
        for r in range(repeats):
            report = build_experience_bank(dataset, tmp / f"cold{r}", embedder)
            times.append(report.seconds)
        cold = statistics.median(times)
        rows.append(f"| build 400 correct of 439 traces | {report.added} | {cold:.2f} | {report.added / cold:.0f} |")
        for extra in (10, 40, 160):
            traces = tmp / f"traces{extra}"
            copy_traces(dataset, traces, extra)
            appends, rebuilds = [], []
            for r in range(repeats):
                bank = tmp / f"bank{extra}-{r}"
                shutil.copytree(tmp / "cold0", bank)
                appends.append(build_experience_bank(traces, bank, embedder, append=True).seconds)
                rebuilds.append(build_experience_bank(traces, bank, embedder, rebuild=True).seconds)
            a, b = statistics.median(appends), statistics.median(rebuilds)
            rows.append(f"| append {extra} new to 400 | {extra} | {a:.3f} | {extra / a:.0f} |")
            total = 400 + extra
            rows.append(f"| rebuild all {total} (same input) | {total} | {b:.3f} | {total / b:.0f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    dataset = resolve_dataset("experience")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        embedder = LocalUSEEmbedder()
        build_experience_bank(dataset, Path(tmp) / "bank", embedder)
        bank = CosineBank.load(Path(tmp) / "bank", embedder)
        print("### Retrieval quality, no LM (k=5)\n")
        print("\n".join(quality(bank, dataset)))
    print(f"\n### Bank build and append (default embedder, no cache, median of {args.repeats})\n")
    print("\n".join(build_and_append(dataset, args.repeats)))
    print(f"\n(total {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
