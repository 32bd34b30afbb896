"""Chunk-bank ingestion and hybrid retrieval on the bundled PubMedQA data. Prints markdown tables.

    python benchmarks/bench_rag_retrieval.py [--split test] [--fusion-split dev]

1. Ingest the 1,000 bundled abstracts with the default embedder (USE, no embedding cache, model
   loaded beforehand), then re-ingest the unchanged file (nothing should be embedded).
2. For each question of ``--split`` (pmid hash split), retrieve chunks, keep the best chunk per
   doc_id, and count a hit when the question's own pmid is among the top 10 (recall@10), with MRR@10
   and recall@1; dense only, BM25 only and hybrid, all measured in this run, one query per call
   (median latency per query includes embedding the question).
3. The fusion comparison behind the default (on ``--fusion-split``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tracerag.datasets.pubmedqa import PubMedQAQuestion, load_pubmedqa_questions, pubmedqa_abstracts_path
from tracerag.documents.corpus import ingest_documents
from tracerag.documents.hybrid import HybridRetriever, ScoredChunk
from tracerag.embedding.embedders import LocalUSEEmbedder
from tracerag.stores.cosine_bank import CosineBank

K = 10


def ingest(bank_dir: Path, embedder: LocalUSEEmbedder) -> list[str]:
    docs = pubmedqa_abstracts_path()
    first = ingest_documents(docs, bank_dir, embedder)
    again = ingest_documents(docs, bank_dir, embedder)
    return [
        "| operation | documents | chunks embedded | seconds | chunks/s |",
        "|---|---:|---:|---:|---:|",
        f"| ingest (size 500, overlap 100) | {first.documents} | {first.added} | {first.seconds:.1f} "
        f"| {first.chunks_per_second:.0f} |",
        f"| re-ingest, unchanged | {again.documents} | {again.added} | {again.seconds:.2f} | - |",
    ]


def rank_of(pmid: str, chunks: list[ScoredChunk]) -> int | None:
    doc_ids = [c.doc_id for c in chunks]
    return doc_ids.index(pmid) + 1 if pmid in doc_ids else None


def evaluate(search, questions: list[PubMedQAQuestion]) -> dict[str, float]:
    ranks, latencies = [], []
    for q in questions:
        started = time.perf_counter()
        results = search([q.question], k=K, dedupe_by="doc_id")[0]
        latencies.append(time.perf_counter() - started)
        ranks.append(rank_of(q.pmid, results))
    n = len(questions)
    return {"n": n, "recall@10": sum(r is not None for r in ranks) / n, "recall@1": sum(r == 1 for r in ranks) / n,
            "mrr": sum(1 / r for r in ranks if r) / n, "p50_ms": 1000 * statistics.median(latencies)}


def modes_table(bank: CosineBank, split: str) -> list[str]:
    questions = load_pubmedqa_questions(split=split)
    retriever = HybridRetriever(bank)
    retriever.search_dense(["warm up"])
    rows = [f"| mode ({split} split) | n | recall@10 | recall@1 | MRR@10 | p50 ms/query |",
            "|---|---:|---:|---:|---:|---:|"]
    for name, search in [("dense (USE cosine)", retriever.search_dense), ("lexical (BM25)", retriever.search_lexical),
                         (f"hybrid ({retriever.fusion}, {retriever.dense_weight:g}:{retriever.lexical_weight:g})",
                          retriever.search)]:
        m = evaluate(search, questions)
        rows.append(f"| {name} | {m['n']} | {m['recall@10']:.3f} | {m['recall@1']:.3f} | {m['mrr']:.3f} "
                    f"| {m['p50_ms']:.1f} |")
    return rows


def fusion_table(bank: CosineBank, split: str) -> list[str]:
    questions = load_pubmedqa_questions(split=split)
    rows = [f"| fusion ({split} split) | dense:lexical | recall@10 | recall@1 | MRR@10 |", "|---|---|---:|---:|---:|"]
    for fusion in ("rrf", "normalized"):
        for lexical_weight in (0.5, 1.0, 2.0, 3.0):
            retriever = HybridRetriever(bank, fusion=fusion, lexical_weight=lexical_weight)
            m = evaluate(retriever.search, questions)
            rows.append(f"| {fusion} | 1:{lexical_weight:g} | {m['recall@10']:.3f} | {m['recall@1']:.3f} "
                        f"| {m['mrr']:.3f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test")
    parser.add_argument("--fusion-split", default="dev")
    args = parser.parse_args()
    embedder = LocalUSEEmbedder()
    embedder.embed(["warm up"])  # model load is not ingest time
    with tempfile.TemporaryDirectory() as tmp:
        bank_dir = Path(tmp) / "bank"
        print("\n".join(ingest(bank_dir, embedder)), end="\n\n")
        bank = CosineBank.load(bank_dir, embedder)
        started = time.perf_counter()
        HybridRetriever(bank)
        print(f"word index over {len(bank)} chunks built in {time.perf_counter() - started:.2f} s", end="\n\n")
        print("\n".join(modes_table(bank, args.split)), end="\n\n")
        print("\n".join(fusion_table(bank, args.fusion_split)))


if __name__ == "__main__":
    main()
