"""Concurrent SelfReflectiveRAG questions through ``await program.acall(...)`` against sequential sync calls,
on the bundled PubMedQA test split, with an LM endpoint that answers every call after 200 ms.

    python benchmarks/bench_async.py [--n 1,4,16] [--repeats 3] [--latency 0.2]

The endpoint is the tests' OpenAI-compatible stub server on 127.0.0.1 (tests/lm_server.py, mode
"slow" with a 0.2 s delay) answering from the tests' fake engine, reached through DSPy over HTTP
exactly like a user's server. For each N: the first N test questions one after the other with
``program(question=...)``, then all N at once with ``asyncio.gather(program.acall(...))``; the median
wall time of ``--repeats`` runs of each. "LM floor" is the longest chain of sequential LM calls among
the N questions times the latency: no schedule can answer them faster. The async predictions are
checked equal to the sync ones (timings aside).

Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import dspy  # noqa: E402
from conftest import FakeEngine  # noqa: E402
from lm_server import StubLMServer  # noqa: E402

from tracerag.datasets.pubmedqa import load_pubmedqa_questions, pubmedqa_abstracts_path  # noqa: E402
from tracerag.programs.guarded_step import reset_lm_guard  # noqa: E402
from tracerag.programs.self_reflective_rag import SelfReflectiveRAG  # noqa: E402
from tracerag.retrievers.corpus import ingest_documents  # noqa: E402
from tracerag.retrievers.cosine_bank import CosineBank  # noqa: E402
from tracerag.retrievers.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.retrievers.hybrid import HybridRetriever  # noqa: E402

TIMING = ("seconds",)


def _comparable(pred: dspy.Prediction) -> dict:
    return {k: v for k, v in pred.items() if k not in TIMING}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", default="1,4,16", help="concurrent questions per row, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the endpoint takes per LM call")
    args = parser.parse_args()
    sizes = [int(n) for n in args.n.split(",")]
    questions = [q.question for q in load_pubmedqa_questions("pubmedqa", "test")][: max(sizes)]
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)  # every call reaches the endpoint
    with tempfile.TemporaryDirectory() as tmp, StubLMServer(FakeEngine(), mode="slow", delay=args.latency) as stub:
        embedder = LocalUSEEmbedder()
        ingest_documents(pubmedqa_abstracts_path(), Path(tmp) / "bank", embedder)
        retriever = HybridRetriever(CosineBank.load(Path(tmp) / "bank", embedder))
        dspy.configure(lm=stub.lm(timeout=30), adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
        reset_lm_guard()
        program = SelfReflectiveRAG(retriever)
        program(question=questions[0])  # warm: the embedder, the BM25 index, the HTTP client

        print("| N concurrent | LM calls (total) | LM floor | sequential sync | async concurrent | speed-up | "
              "async / floor | identical |")
        print("|---:|---:|---:|---:|---:|---:|---:|:---:|")
        for n in sizes:
            batch = questions[:n]
            sync_times, async_times = [], []
            for _ in range(args.repeats):
                started = time.perf_counter()
                sync_preds = [program(question=q) for q in batch]
                sync_times.append(time.perf_counter() - started)

                async def together(batch=batch):
                    return await asyncio.gather(*(program.acall(question=q) for q in batch))

                started = time.perf_counter()
                async_preds = asyncio.run(together())
                async_times.append(time.perf_counter() - started)
            identical = all(_comparable(a) == _comparable(s) for a, s in zip(async_preds, sync_preds, strict=True))
            calls = sum(p.lm_calls for p in sync_preds)
            floor = max(p.lm_calls for p in sync_preds) * args.latency
            seq, conc = statistics.median(sync_times), statistics.median(async_times)
            print(f"| {n} | {calls} | {floor:.2f} s | {seq:.2f} s | {conc:.2f} s | {seq / conc:.1f}x | "
                  f"{conc / floor:.2f} | {'yes' if identical else 'NO'} |")
    dspy.configure(lm=None)


if __name__ == "__main__":
    main()
