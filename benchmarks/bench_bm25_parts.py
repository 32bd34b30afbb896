"""Where a PubMedQA batch's ``search_lexical`` spends its CPU, with the caches warm and flushed.

    python benchmarks/bench_bm25_parts.py [--rounds 5]

The bundled PubMedQA abstracts (1,000) and 480 of their questions in batches of 32, on a numpy bank, as
``bench_bm25_batch.py`` measures them; here each part of the call is timed on its own, in turn, over every
batch and round (CPU time medians, and the 10th percentile: the machine is shared):

- tokens: ``WordIndex._tokens`` (the questions' words to (question, term) arrays; not on older trees);
- sums: ``WordIndex._sums`` of those tokens (the exact float64 sums, dense rows and postings; idem);
- scores_batch: ``WordIndex.scores_batch`` (tokens, sums and the float32 scores);
- top: ``best_rows`` of the scores, k=10 (``top_rows`` on older trees);
- chunks: ``HybridRetriever._lexical_chunks`` (the 320 hits as ``ScoredChunk``);
- search_lexical: the whole call;
- + ids, scores: the whole call, then every hit's ``id`` and ``score`` read (what a caller ranking reads).

"warm" times each part right after the others; "flushed" first sums a 128 MB array before each part, so the
index, numpy's and Python's working data come from memory, as they do in ``bench_bm25_batch.py`` where other
libraries' searches run between two calls of this one. Numpy only: runs without bm25s.

``--dense`` also times the two ways the exact sums add the common words' dense rows, on PubMedQA's batches and
on 10,000 synthetic chunks (blocks of 13 questions: what fits ``_BLOCK_VALUES``), for a batch and for lone
questions: one vector add per token, or a matrix product of the (question x term) counts (the costs
``word_index._product_pays`` weighs).

``--vocabulary`` also times the batch's words' term numbers from the word cache (a dictionary lookup per
word) against a numpy hash table of the same words (branch trees only: it needs ``batch_words``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as in bench_bm25_batch.py

import numpy as np  # noqa: E402

if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_bm25_batch import PUBMEDQA, HashEmbedder  # noqa: E402  (the same corpus and vectors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dense", action="store_true", help="also time vector adds against the matrix product")
    parser.add_argument("--vocabulary", action="store_true",
                        help="also time the word cache's dictionary lookups against a numpy hash table")
    args = parser.parse_args()
    from tracerag.documents.hybrid import HybridRetriever
    from tracerag.documents.top_rows import top_rows
    from tracerag.stores.cosine_bank import CosineBank

    try:
        from tracerag.documents.top_rows import best_rows
    except ImportError:  # a tree before it: lists of rows, and the chunks read their scores from the matrix
        best_rows = None
    with open(PUBMEDQA / "abstracts.jsonl", encoding="utf-8") as f:
        texts = [" ".join(json.loads(line)["contexts"]) for line in f]
    with open(PUBMEDQA / "questions_dev.jsonl", encoding="utf-8") as f:
        questions = [json.loads(line)["question"] for line in f]
    batches = [questions[i : i + 32] for i in range(0, len(questions) - 31, 32)]
    embedder = HashEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        bank = CosineBank.from_vectors(Path(tmp) / "bank", embedder.embed(texts), [f"c{i}" for i in range(len(texts))],
                                       [{"text": x} for x in texts], embedder_id=embedder.id, embedder=embedder)
        retriever = HybridRetriever(bank)
        index = retriever.index
        scores = [index.scores_batch(b) for b in batches]
        if best_rows is not None:  # the top rows and their scores as two matrices, which the chunks take
            top, tops = best_rows, [best_rows(s, 10) for s in scores]
            chunks = lambda i: retriever._lexical_chunks(*tops[i])  # noqa: E731
        else:
            top, tops = top_rows, [top_rows(s, 10) for s in scores]
            chunks = lambda i: retriever._lexical_chunks(scores[i], tops[i])  # noqa: E731
        parts = {}
        if hasattr(index, "_tokens"):  # a tree before exact sums has neither part
            tokens = [index._tokens(b) for b in batches]
            parts["tokens"] = lambda i: index._tokens(batches[i])
            parts["sums"] = lambda i: index._sums(*tokens[i], len(batches[i]))
        parts |= {
            "scores_batch": lambda i: index.scores_batch(batches[i]),
            "top": lambda i: top(scores[i], 10),
            "chunks": chunks,
            "search_lexical": lambda i: retriever.search_lexical(batches[i], k=10),
            "+ ids, scores": lambda i: [(c.id, c.score) for hits in retriever.search_lexical(batches[i], k=10)
                                        for c in hits],
        }
        memory = np.ones(16 << 20)  # 128 MB: more than the last-level cache
        for part in parts.values():
            part(0)
        gc.collect()
        gc.freeze()
        print(f"numpy {np.__version__}; CPU us per batch of 32, median / 10th percentile")
        print("\n| caches | " + " | ".join(parts) + " |")
        print("|---|" + "---|" * len(parts))
        for caches in ("warm", "flushed", "warm", "flushed"):
            cpu: dict[str, list[int]] = {p: [] for p in parts}
            for _ in range(args.rounds):
                for i in range(len(batches)):
                    for name, part in parts.items():
                        if caches == "flushed":
                            memory.sum()
                        start = time.process_time_ns()
                        part(i)
                        cpu[name].append(time.process_time_ns() - start)
            cells = [f"{statistics.median(v) / 1e3:.0f} / {sorted(v)[len(v) // 10] / 1e3:.0f}" for v in cpu.values()]
            print(f"| {caches} | " + " | ".join(cells) + " |")
        gc.unfreeze()
        if args.dense:
            dense_choice(index, batches)
        if args.vocabulary:
            vocabulary_choice(index, batches, memory, args.rounds)


def dense_choice(index, batches: list[list[str]]) -> None:
    """CPU us to add a block's dense rows by vector adds and by the matrix product, medians."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_bm25_batch import synthetic

    from tracerag.documents.word_index import WordIndex

    def adds(words, out, query, slot):
        for i, row in zip(query.tolist(), slot.tolist(), strict=True):
            np.add(out[i], words._dense[row], out=out[i])

    def product(words, out, query, slot):
        used, column = np.unique(slot, return_inverse=True)
        counts = np.zeros((len(out), len(used)))
        np.add.at(counts, (query, column), 1.0)
        np.matmul(counts, words._dense[used].astype(np.float64), out=out)

    texts, asked = synthetic(10_000, 26)
    cases = [("PubMedQA", index, batches), ("synthetic 10,000", WordIndex(texts), [asked[:13], asked[13:]])]
    print("\n| corpus | block | dense tokens / terms (first block) | vector adds us | matrix product us |")
    print("|---|---|---|---|---|")
    for name, words, blocks in cases:
        for label, block_list in (("batch", blocks), ("one question", [[q] for b in blocks for q in b[:4]])):
            prepared = []
            for block in block_list:
                query, term = words._tokens(block)
                query, term = query[term >= 0], term[term >= 0]  # a word not in the index, or between queries
                slot = words._dense_slot[term]
                prepared.append((len(block), query[slot >= 0], slot[slot >= 0]))
            cpu = {}
            for way in (adds, product):
                times = []
                for _ in range(7):
                    for size, query, slot in prepared:
                        out = np.zeros((size, words.count))
                        start = time.process_time_ns()
                        way(words, out, query, slot)
                        times.append(time.process_time_ns() - start)
                cpu[way.__name__] = statistics.median(times) / 1e3
            _, query, slot = prepared[0]
            print(f"| {name} | {label} | {len(query)} / {len(np.unique(slot))} | {cpu['adds']:.1f} | "
                  f"{cpu['product']:.1f} |")


def vocabulary_choice(index, batches: list[list[str]], memory: np.ndarray, rounds: int) -> None:
    """CPU us per batch (median, warm / flushed) of its words' term numbers from the word cache (a dictionary
    lookup per word, then one array) against a numpy open-addressing table over the same words: each word
    as 24 bytes (three uint64, exact: the words hold no NUL), hashed, probed by gathers until every word
    finds its own key. ASCII batches only, whose words come as bytes (branch trees: ``batch_words``)."""
    from tracerag.stores.word_tokens import batch_words

    lists = [batch_words(b) for b in batches]
    lists = [w for w in lists if w and type(w[0]) is bytes and max(map(len, w)) <= 24]
    for words in lists:
        index._word_ids(words)  # every word cached: both ways look up known words only
    cached = [w for w in index._word_terms if type(w) is bytes and len(w) <= 24]
    size = 1 << (4 * len(cached)).bit_length()  # load at most 1/4
    shift = np.uint64(64 - size.bit_length() + 1)
    factors = np.asarray([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9], dtype=np.uint64)

    def keys_of(words):
        return np.array(words, dtype="S24").view(np.uint64).reshape(-1, 3)

    def slots_of(keys):
        return ((keys * factors).sum(axis=1, dtype=np.uint64) >> shift).astype(np.int64)

    table_keys, table_terms = np.zeros((size, 3), dtype=np.uint64), np.full(size, -3, dtype=np.int64)
    for key, slot, word in zip(keys_of(cached), slots_of(keys_of(cached)).tolist(), cached, strict=True):
        while table_terms[slot] != -3:
            slot = (slot + 1) % size
        table_keys[slot], table_terms[slot] = key, index._word_terms[word]

    def table(words):
        keys = keys_of(words)
        slots = slots_of(keys)
        while True:
            own = (table_keys[slots] == keys).all(axis=1)
            if own.all():
                return table_terms[slots]
            slots[~own] = (slots[~own] + 1) % size  # another word's key: the next slot

    ways = {"dictionary": lambda w: np.array(index._word_ids(w), dtype=np.int64), "numpy table": table}
    for words in lists:
        assert np.array_equal(ways["dictionary"](words), table(words))
    cpu: dict[tuple[str, str], list[int]] = {}
    for caches in ("warm", "flushed"):
        for _ in range(rounds):
            for words in lists:
                for name, way in ways.items():
                    if caches == "flushed":
                        memory.sum()
                    start = time.process_time_ns()
                    way(words)
                    cpu.setdefault((name, caches), []).append(time.process_time_ns() - start)
    print(f"\n{len(lists)} ASCII batches, {statistics.mean(map(len, lists)):.0f} words each, a table of {size:,}")
    print("\n| way | warm us | flushed us |\n|---|---|---|")
    for name in ways:
        print(f"| {name} | {statistics.median(cpu[name, 'warm']) / 1e3:.1f} | "
              f"{statistics.median(cpu[name, 'flushed']) / 1e3:.1f} |")


if __name__ == "__main__":
    main()
