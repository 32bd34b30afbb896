"""BM25 of a batch of queries: the word index's batch vs its per-query path vs bm25s, called as its users call it.

    python benchmarks/bench_bm25_batch.py [--chunks 100000] [--batch 32] [--json out.json]

Needs bm25s 0.3.x and numba beside this checkout's dependencies (benchmark-only dependencies, never the
library's: e.g. ``pip install --target /tmp/bm25s-extra 'bm25s[core]==0.3.*'``, then drop the numpy it pulled in
so the checkout's numpy is the one imported, and put the target on PYTHONPATH; without numba the numba column is
left out; the hybrid part also reads the bank, numpy only).

Two corpora: the bundled PubMedQA abstracts (1,000; its 500 questions, in batches) and synthetic chunks
(40 words each from a 3,000-word vocabulary with a Zipf-like draw; queries of 6-12 words). Every cell is
the median over the batches (PubMedQA, 5 rounds of its 15 batches) or over 41 repeats of one batch
(synthetic), all paths measured interleaved in this one process (in a fresh random order each round, the
collector frozen after setup), tokenisation included everywhere:

- batch: ``WordIndex.scores_batch`` + each query's top 10 rows (``top_rows``), no decoding;
- per query: ``WordIndex.scores`` + ``_top`` for each query (one question at a time);
- before: the per-query path as it was before batching (postings added with fancy indexing, argpartition);
- bm25s: ``bm25s.tokenize`` + ``BM25.retrieve(k=10)`` as its documentation calls it (numpy backend, the default
  ``n_threads=0``: the queries in turn, no pool) (same k1 = 1.2, b = 0.75, no stemmer, no stopwords);
- bm25s numba: the same on ``BM25(backend="numba")`` (its default ``n_threads=0``: serial jitted code; the
  first call's JIT compile is run before timing and reported apart, as ``numba compile s``);
- bm25s pool: ``retrieve(..., n_threads=1)``, which builds a one-thread pool per call (what this benchmark
  used to measure, kept to show the difference);
- search_lexical: ``HybridRetriever.search_lexical(batch, k=10)``, the user's call: chunks with ids and scores,
  each chunk's metadata decoded from the bank when first read;
- search_lexical + text: the same, then every hit's ``metadata["text"]`` read (all the JSON decoding);
- hybrid: ``HybridRetriever.search(batch, k=10)`` against one bank batch search of the same vectors (k=50,
  the dense window: ``bank.search``, hits decoded, and ``bank.search_rows``, rows only, which is what the
  hybrid search runs), on a bank of hash-embedder vectors (dim 64, no model time).

Before timing, each corpus also checks that bm25s (numba), given the word index's own tokens, ranks the same
top 10 per query as ``search_lexical`` (``same top 10``: queries agreeing / queries; ties ordered by row on
both sides, so a tie across the cut may differ).
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


def numba_backend() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def bm25s_index(texts, backend: str = "numpy", tokens=None):
    """A bm25s index as its documentation builds one (its tokenizer, no stopwords), or over given tokens."""
    import bm25s

    index = bm25s.BM25(k1=1.2, b=0.75, backend=backend)
    index.index(tokens if tokens is not None else bm25s.tokenize(texts, stopwords=None, show_progress=False),
                show_progress=False)
    return index


def same_top(texts: list[str], queries: list[str], retriever) -> tuple[int, int, int]:
    """(queries whose top 10 ids agree, whose top 10 agree up to the order of tied scores, queries) between
    bm25s (numba) and ``search_lexical`` given the same tokens. bm25s' lucene scores lack BM25's (k1 + 1)
    factor and are summed in another order: scores are compared after scaling, to a relative 1e-5, and ids
    of equal scores may come in either order (bm25s does not break ties by row)."""
    from tracerag.stores.word_tokens import word_tokens

    asked = [q for q in queries if word_tokens(q)]
    theirs = bm25s_index(texts, "numba" if numba_backend() else "numpy", [word_tokens(t) for t in texts])
    found, scores = theirs.retrieve([word_tokens(q) for q in asked], k=K, show_progress=False)
    ours = retriever.search_lexical(asked, k=K)
    ids = retriever.ids
    same = tied = 0
    for rows, values, hits in zip(found.tolist(), scores.tolist(), ours, strict=True):
        kept = [(ids[r], v * 2.2) for r, v in zip(rows, values, strict=True) if v > 0]
        same += [x for x, _ in kept] == [c.id for c in hits]
        close = len(kept) == len(hits) and all(abs(v - c.lexical) <= 1e-5 * c.lexical
                                               for (_, v), c in zip(kept, hits, strict=True))
        cut = hits[-1].lexical * (1 + 1e-5) if hits else 0.0  # above the 10th score: no tie can swap them out
        tied += close and {x for x, v in kept if v > cut} == {c.id for c in hits if c.lexical > cut}
    return same, tied, len(asked)


def measure(name: str, texts: list[str], batches: list[list[str]], repeats: int, root: Path) -> dict:
    import bm25s

    from tracerag.documents.hybrid import HybridRetriever, _top, _top_batch
    from tracerag.documents.word_index import WordIndex
    from tracerag.stores.cosine_bank import CosineBank

    t = time.perf_counter()
    index = WordIndex(texts)
    ours_build = time.perf_counter() - t
    t = time.perf_counter()
    other = bm25s_index(texts)
    theirs_build = time.perf_counter() - t
    embedder = HashEmbedder()
    bank = CosineBank.from_vectors(root / name, embedder.embed(texts), [f"c{i}" for i in range(len(texts))],
                                   [{"text": x, "doc_id": f"d{i // 4}"} for i, x in enumerate(texts)],
                                   embedder_id=embedder.id, embedder=embedder)
    retriever = HybridRetriever(bank)

    def tokenize(b):
        return bm25s.tokenize(b, stopwords=None, show_progress=False)

    paths = {
        "batch": lambda b: _top_batch(index.scores_batch(b), K),
        "per query": lambda b: [_top(index.scores(q), K) for q in b],
        "before": lambda b: [postings_top(index, q, K) for q in b],
        "bm25s": lambda b: other.retrieve(tokenize(b), k=K, show_progress=False),
        "bm25s pool": lambda b: other.retrieve(tokenize(b), k=K, show_progress=False, n_threads=1),
        "search_lexical": lambda b: retriever.search_lexical(b, k=K),
        "search_lexical + text": lambda b: [c.metadata["text"] for hits in retriever.search_lexical(b, k=K)
                                            for c in hits],
        "hybrid": lambda b: retriever.search(b, k=K),
        "bank batch (k=50)": lambda b: bank.search(embedder.embed(b), k=50, min_score=None),
        "dense window (k=50)": lambda b: bank.search_rows(embedder.embed(b), k=50, min_score=None),
    }
    compile_s = None
    numba_build = None
    if numba_backend():  # compiled on the first corpus' first call; later corpora reuse the compiled code
        t = time.perf_counter()
        jitted = bm25s_index(texts, "numba")
        numba_build = time.perf_counter() - t
        t = time.perf_counter()
        jitted.retrieve(tokenize(batches[0]), k=K, show_progress=False)  # the JIT compiles here
        first = time.perf_counter() - t
        t = time.perf_counter()
        jitted.retrieve(tokenize(batches[0]), k=K, show_progress=False)
        compile_s = first - (time.perf_counter() - t)
        compile_s = compile_s if compile_s > 0.5 else None  # compiled already, for an earlier corpus
        paths["bm25s numba"] = lambda b: jitted.retrieve(tokenize(b), k=K, show_progress=False)
    agree = same_top(texts, [q for b in batches for q in b], retriever)
    times: dict[str, list[float]] = {p: [] for p in paths}
    cpu: dict[str, list[float]] = {p: [] for p in paths}
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
                s, c = time.perf_counter(), time.process_time()
                paths[p](batch)
                times[p].append(time.perf_counter() - s)
                cpu[p].append(time.process_time() - c)
    gc.unfreeze()
    med = {p: statistics.median(v) * 1e3 for p, v in times.items()}
    med_cpu = {p: statistics.median(v) * 1e3 for p, v in cpu.items()}
    ours = ("batch", "per query", "before", "search_lexical", "search_lexical + text")
    over = {f"{p} / {b}": med[p] / med[b] for p in ours for b in ("bm25s", "bm25s numba", "bm25s pool") if b in med}
    over_cpu = {f"{p} / {b}": med_cpu[p] / med_cpu[b] for p in ours for b in ("bm25s", "bm25s numba") if b in med}
    return {"corpus": name, "docs": len(texts), "batch": len(batches[0]), "ms": med, "over": over,
            "cpu_ms": med_cpu, "over_cpu": over_cpu,
            "same_top": agree, "numba_compile_s": compile_s,
            "build_s": {"ours": ours_build, "bm25s": theirs_build, "bm25s numba": numba_build},
            "hybrid_over_bank_batch": med["hybrid"] / med["bank batch (k=50)"],
            "hybrid_over_dense_window": med["hybrid"] / med["dense window (k=50)"]}


def ratio(r: dict, key: str) -> str:
    """The ratio of wall-clock medians (CPU-time medians): CPU time leaves out the waits for a core."""
    wall, cpu = r["over"].get(key), r["over_cpu"].get(key)
    return "-" if wall is None else f"{wall:.2f} ({cpu:.2f})"


def ms(r: dict, path: str) -> str:
    wall, cpu = r["ms"].get(path), r["cpu_ms"].get(path)
    return "-" if wall is None else f"{wall:.2f} ({cpu:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    import bm25s

    numba = "numba " + __import__("numba").__version__ if numba_backend() else "no numba"
    print(f"bm25s {bm25s.__version__}, {numba}, numpy {np.__version__}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        texts, questions = pubmedqa()
        batches = [questions[i : i + args.batch] for i in range(0, len(questions) - args.batch + 1, args.batch)]
        results.append(measure("PubMedQA", texts, batches, 5, Path(tmp)))
        texts, asked = synthetic(args.chunks, args.batch)
        results.append(measure(f"synthetic {args.chunks:,}", texts, [asked], 41, Path(tmp)))
    print("\nms wall-clock (CPU), medians; ratios of the medians")
    print("\n| corpus | search_lexical ms | + text ms | batch ms | bm25s numba ms | bm25s ms | bm25s pool ms "
          "| search_lexical / numba | + text / numba | batch / numba | search_lexical / bm25s | batch / bm25s "
          "| same top 10 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['corpus']} | {ms(r, 'search_lexical')} | {ms(r, 'search_lexical + text')} | {ms(r, 'batch')} | "
              f"{ms(r, 'bm25s numba')} | {ms(r, 'bm25s')} | {ms(r, 'bm25s pool')} | "
              f"**{ratio(r, 'search_lexical / bm25s numba')}** | {ratio(r, 'search_lexical + text / bm25s numba')} | "
              f"{ratio(r, 'batch / bm25s numba')} | {ratio(r, 'search_lexical / bm25s')} | "
              f"{ratio(r, 'batch / bm25s')} | "
              f"{r['same_top'][0]}/{r['same_top'][2]} ({r['same_top'][1]} up to ties) |")
    print("\n| corpus | per query ms | per query / numba | before ms | before / numba | bm25s pool / bm25s |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['corpus']} | {ms(r, 'per query')} | {ratio(r, 'per query / bm25s numba')} | {ms(r, 'before')} | "
              f"{ratio(r, 'before / bm25s numba')} | {r['ms']['bm25s pool'] / r['ms']['bm25s']:.2f} |")
    print("\n| corpus | hybrid ms | bank batch ms (hybrid /) | dense window ms (hybrid /) | build s: ours / bm25s / "
          "bm25s numba | numba compile s |")
    print("|---|---|---|---|---|---|")
    for r in results:
        wall, build = r["ms"], r["build_s"]
        numba_build = "-" if build["bm25s numba"] is None else f"{build['bm25s numba']:.2f}"
        compile_s = "(done before)" if r["numba_compile_s"] is None else f"{r['numba_compile_s']:.2f}"
        print(f"| {r['corpus']} | {wall['hybrid']:.2f} | {wall['bank batch (k=50)']:.2f} "
              f"({r['hybrid_over_bank_batch']:.2f}) | {wall['dense window (k=50)']:.2f} "
              f"({r['hybrid_over_dense_window']:.2f}) | {build['ours']:.2f} / {build['bm25s']:.2f} / "
              f"{numba_build} | {compile_s} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
