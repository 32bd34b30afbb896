"""BM25 of a batch of queries: the word index's one-product batch vs its per-query path vs bm25s.

    python benchmarks/bench_bm25_batch.py [--chunks 100000] [--batch 32] [--json out.json]

Needs bm25s 0.3.x beside this checkout's dependencies (a benchmark-only dependency, e.g. in a scratch
virtualenv: ``pip install numpy 'bm25s==0.3.*'``; the hybrid part also reads the bank, numpy only).

Two corpora: the bundled PubMedQA abstracts (1,000; its 500 questions, in batches) and synthetic chunks
(40 words each from a 3,000-word vocabulary with a Zipf-like draw; queries of 6-12 words). Every cell is
the median over the batches (PubMedQA, 5 rounds of its 15 batches) or over 41 repeats of one batch
(synthetic), all paths measured interleaved in this one process (in a fresh random order each round, the
collector frozen after setup), tokenisation included everywhere:

- batch: ``WordIndex.scores_batch`` + the batch top-10 (``_top_batch``): what ``search_lexical`` runs;
- per query: ``WordIndex.scores`` + ``_top`` for each query (today's code, one question at a time);
- before: the per-query path as it was before batching (postings added with fancy indexing, argpartition);
- bm25s: ``bm25s.tokenize`` + ``BM25.retrieve(k=10)`` (same k1 = 1.2, b = 0.75, no stemmer, no stopwords);
- search_lexical: ``HybridRetriever.search_lexical(batch, k=10)``, the user's call (hits decoded);
- hybrid: ``HybridRetriever.search(batch, k=10)`` against one bank batch search of the same vectors (k=50,
  the dense window: ``bank.search``, hits decoded, and ``bank.search_rows``, rows only, which is what the
  hybrid search runs), on a bank of hash-embedder vectors (dim 64, no model time).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

# BLAS on one thread: the bank's matrix products are small here, and idle OpenBLAS threads spin after a call,
# which on 2 cores slowed whichever path was measured next by up to 7x.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

K = 10


class HashEmbedder:
    """Deterministic unit vectors from a text's hash: search cost without a model."""

    id = "hash-64"
    dim = 64

    def embed(self, texts):
        out = np.stack([np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(self.dim).astype(np.float32)
                        for t in texts])
        return out / np.linalg.norm(out, axis=1, keepdims=True)


PUBMEDQA = Path(__file__).resolve().parents[1] / "tracerag" / "datasets" / "data" / "pubmedqa"


def pubmedqa() -> tuple[list[str], list[str]]:
    """The bundled files, read directly (tracerag.datasets imports dspy, which a scratch venv lacks)."""
    with open(PUBMEDQA / "abstracts.jsonl", encoding="utf-8") as f:
        texts = [" ".join(json.loads(line)["contexts"]) for line in f]
    with open(PUBMEDQA / "questions_dev.jsonl", encoding="utf-8") as f:
        questions = [json.loads(line)["question"] for line in f]
    return texts, questions


def synthetic(n: int, queries: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(7)
    vocab = np.asarray([f"term{i}" for i in range(3000)])
    p = 1.0 / np.arange(1, 3001)
    p /= p.sum()
    texts = [" ".join(rng.choice(vocab, 40, p=p)) for _ in range(n)]
    asked = [" ".join(rng.choice(vocab, int(rng.integers(6, 13)), p=p)) for _ in range(queries)]
    return texts, asked


def postings_top(index, query: str, k: int):
    """The per-query path as it was before batching: each word's postings added with fancy indexing, then
    an argpartition of the negated scores (the baseline the batch is compared with in the same run)."""
    from collections import Counter

    from tracerag.stores.word_tokens import word_tokens

    out = np.zeros(index.count, dtype=np.float32)
    for token, times in Counter(word_tokens(query)).items():
        term = index.vocab.get(token)
        if term is not None:
            lo, hi = index.indptr[term], index.indptr[term + 1]
            out[index.rows[lo:hi]] += times * index.weights[lo:hi]
    part = np.argpartition(-out, k - 1)[:k]
    return part[np.lexsort((part, -out[part]))]


def measure(name: str, texts: list[str], batches: list[list[str]], repeats: int, root: Path) -> dict:
    import bm25s

    from tracerag.documents.hybrid import HybridRetriever, _top, _top_batch
    from tracerag.documents.word_index import WordIndex
    from tracerag.stores.cosine_bank import CosineBank

    t = time.perf_counter()
    index = WordIndex(texts)
    ours_build = time.perf_counter() - t
    t = time.perf_counter()
    other = bm25s.BM25(k1=1.2, b=0.75)
    other.index(bm25s.tokenize(texts, stopwords=None, show_progress=False), show_progress=False)
    theirs_build = time.perf_counter() - t
    embedder = HashEmbedder()
    bank = CosineBank.from_vectors(root / name, embedder.embed(texts), [f"c{i}" for i in range(len(texts))],
                                   [{"text": x, "doc_id": f"d{i // 4}"} for i, x in enumerate(texts)],
                                   embedder_id=embedder.id, embedder=embedder)
    retriever = HybridRetriever(bank)

    paths = {
        "batch": lambda b: _top_batch(index.scores_batch(b), K),
        "per query": lambda b: [_top(index.scores(q), K) for q in b],
        "before": lambda b: [postings_top(index, q, K) for q in b],
        "bm25s": lambda b: other.retrieve(bm25s.tokenize(b, stopwords=None, show_progress=False), k=K,
                                          show_progress=False, n_threads=1),
        "search_lexical": lambda b: retriever.search_lexical(b, k=K),
        "hybrid": lambda b: retriever.search(b, k=K),
        "bank batch (k=50)": lambda b: bank.search(embedder.embed(b), k=50, min_score=None),
        "dense window (k=50)": lambda b: bank.search_rows(embedder.embed(b), k=50, min_score=None),
    }
    times: dict[str, list[float]] = {p: [] for p in paths}
    for fn in paths.values():  # warm up
        fn(batches[0])
    gc.collect()
    gc.freeze()  # the corpus' millions of objects out of the collector's sight: no full collection mid-call
    order = list(paths)
    shuffle = random.Random(0).shuffle
    for _ in range(repeats):
        for batch in batches:
            shuffle(order)  # no path always runs right after the same other one
            for p in order:
                s = time.perf_counter()
                paths[p](batch)
                times[p].append(time.perf_counter() - s)
    gc.unfreeze()
    med = {p: statistics.median(v) * 1e3 for p, v in times.items()}
    return {"corpus": name, "docs": len(texts), "batch": len(batches[0]), "ms": med,
            "build_s": {"ours": ours_build, "bm25s": theirs_build},
            "batch_over_bm25s": med["batch"] / med["bm25s"], "per_query_over_bm25s": med["per query"] / med["bm25s"],
            "before_over_bm25s": med["before"] / med["bm25s"],
            "search_lexical_over_bm25s": med["search_lexical"] / med["bm25s"],
            "hybrid_over_bank_batch": med["hybrid"] / med["bank batch (k=50)"],
            "hybrid_over_dense_window": med["hybrid"] / med["dense window (k=50)"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    import bm25s

    print(f"bm25s {bm25s.__version__}, numpy {np.__version__}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        texts, questions = pubmedqa()
        batches = [questions[i : i + args.batch] for i in range(0, len(questions) - args.batch + 1, args.batch)]
        results.append(measure("PubMedQA", texts, batches, 5, Path(tmp)))
        texts, asked = synthetic(args.chunks, args.batch)
        results.append(measure(f"synthetic {args.chunks:,}", texts, [asked], 41, Path(tmp)))
    print("\n| corpus | docs | batch ms | per query ms | before ms | bm25s ms | batch / bm25s | per query / bm25s "
          "| before / bm25s "
          "| search_lexical ms (/ bm25s) | hybrid ms | bank batch ms (hybrid /) | dense window ms (hybrid /) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        ms = r["ms"]
        print(f"| {r['corpus']} | {r['docs']:,} | {ms['batch']:.2f} | {ms['per query']:.2f} | {ms['before']:.2f} | "
              f"{ms['bm25s']:.2f} | {r['batch_over_bm25s']:.2f} | {r['per_query_over_bm25s']:.2f} | "
              f"{r['before_over_bm25s']:.2f} | {ms['search_lexical']:.2f} "
              f"({r['search_lexical_over_bm25s']:.2f}) | {ms['hybrid']:.2f} | {ms['bank batch (k=50)']:.2f} "
              f"({r['hybrid_over_bank_batch']:.2f}) | {ms['dense window (k=50)']:.2f} "
              f"({r['hybrid_over_dense_window']:.2f}) |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
