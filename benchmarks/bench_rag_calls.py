"""LM calls per question of SelfReflectiveRAG on the bundled PubMedQA test split, counted by the
evaluator's DSPy callback, against the budget (program.lm_call_budget()) and against grading each
chunk in its own call (k calls per round).

    python benchmarks/bench_rag_calls.py

No LM is reachable on the build machines, so this drives the program with the test suite's fake LM
(tests/conftest.py: it grades a chunk relevant when it shares a 5+ letter word with the question,
answers citing the first two chunks, and verifies every answer as grounded). The call counts are
what the program's control flow costs; answer quality needs a real LM.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

import dspy

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from conftest import FakeEngine  # noqa: E402

from tracerag.datasets.pubmedqa import load_pubmedqa_questions, pubmedqa_abstracts_path  # noqa: E402
from tracerag.documents.corpus import ingest_documents  # noqa: E402
from tracerag.documents.hybrid import HybridRetriever  # noqa: E402
from tracerag.embedding.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.rag.evaluation import evaluate_rag  # noqa: E402
from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG  # noqa: E402
from tracerag.stores.cosine_bank import CosineBank  # noqa: E402


def main() -> None:
    examples = [q.to_example() for q in load_pubmedqa_questions("pubmedqa", "test")]
    with tempfile.TemporaryDirectory() as tmp:
        embedder = LocalUSEEmbedder()
        ingest_documents(pubmedqa_abstracts_path(), Path(tmp) / "bank", embedder)
        retriever = HybridRetriever(CosineBank.load(Path(tmp) / "bank", embedder))
        print("| k | rounds (max) | n | calls mean | calls median | calls max | budget | one call per chunk, "
              "mean | rounds used, mean |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for k in (10, 20):
            dspy.configure(lm=dspy.LM("fake/model", engine=FakeEngine(), cache=False, num_retries=0),
                           adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
            program = SelfReflectiveRAG(retriever, RAGConfig(k=k, max_rounds=2))
            rows = evaluate_rag(program, examples, dataset="pubmedqa", k=k, progress=False)["per_query"]
            calls = [r["lm_calls_observed"] for r in rows]
            # the per-chunk design: k grading calls per round, plus the same refine/answer/verify calls
            naive = [k * r["rounds"] + (r["rounds"] - 1) + (2 if r["kept"] else 0) for r in rows]
            print(f"| {k} | 2 | {len(rows)} | {statistics.fmean(calls):.2f} | {statistics.median(calls):.0f} | "
                  f"{max(calls)} | {program.lm_call_budget()} | {statistics.fmean(naive):.2f} | "
                  f"{statistics.fmean(r['rounds'] for r in rows):.2f} |")
    dspy.configure(lm=None)


if __name__ == "__main__":
    main()
