"""The store protocol's costs on each backend, side by side: the numpy bank, Milvus Lite (a local file) and
a real Milvus server, at 10k and 100k rows.

    python tests/milvus_standalone.py -- nice python benchmarks/bench_milvus_backends.py --sizes 10000 100000

Without ``TRACERAG_MILVUS_STANDALONE`` (set by ``tests/milvus_standalone.py``) the server column is left
out. Per backend and size, on 512-d clustered synthetic unit vectors with ~200 B of metadata per row:
ingest = one ``upsert`` of every row (numpy: the bank's append; Milvus: batches of 1,000 with the hash
check; the HNSW switch is kept out of it and timed apart as "index build", which the store does itself
past ``hnsw_threshold`` = 100,000 rows); then medians of 200 single-query searches and 30 batches of 32
(k=10, the store's default ef 128), 200 ``get`` of 10 ids and 50 ``count`` calls. Reads at the default
Session consistency.

``--rag`` measures the hybrid retriever instead: SelfReflectiveRAG with no LM on the bundled PubMedQA test
split (``evaluate_rag``, k=10, two rounds), on the numpy bank and on Milvus stores filled from it by
``copy_store``, each reading its store's word index: Milvus Lite with its BM25 function and with word
postings, and the server with postings. A store with postings runs three ways per round, one after the
other: "in memory" (the retriever builds its word index from a scan, as before stores kept one), "every
posting" (``common_share`` 1.0: every posting of a question's words is read, as the postings were at
first) and the default (words in more than 25 % of the rows read only for the rows that can rank).
Reported: recall@10, MRR, retrieved lists that differ from the numpy bank's, and per-question p50 / p95
ms over ``--rounds`` rounds (per question, its median over the rounds). Lite with postings takes ~1 s a
question (its queries scan every posting): ``--lite bm25 postings`` to include it.

``--batch`` times the hybrid retriever itself on the same stores: the PubMedQA test questions in
batches of 32, one ``search`` call per batch against the same 32 questions one call each (medians over
the batches and ``--rounds``), and checks every list against the numpy bank's. Stores with postings run
twice: as they are (4,094 chunks: the common words' postings fit in memory) and with no room for them, as
on a large collection, where a question's common-word postings are read for its rows.

``--drift`` measures whether incremental writes move a Lite word index away from a fresh build: the
bank's rows go into Lite except the last ``--drift-rows``, the word index is built, then those rows are
upserted ``--drift-batch`` at a time (each call timed); the retrieved lists are then compared with the
numpy bank's. The BM25 index runs twice: as the store keeps it (rewritten as one segment after each
write call) and with that rewrite switched off.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tracerag.stores import milvus_words_postings  # noqa: E402
from tracerag.stores.milvus_store import HNSW_THRESHOLD, MilvusStore  # noqa: E402
from tracerag.stores.milvus_words_postings import COMMON_SHARE  # noqa: E402
from tracerag.stores.stores import open_store  # noqa: E402

DIM = 512


def clustered(rows: int, rng: np.random.Generator) -> np.ndarray:
    centres = rng.standard_normal((2000, DIM)).astype(np.float32)
    v = centres[rng.integers(2000, size=rows)] + 0.35 * rng.standard_normal((rows, DIM), dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def median_ms(fn, n: int) -> float:
    times = []
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def open_backend(backend: str, rows: int, work: Path, server: str | None):
    if backend == "numpy":
        return open_store(str(work / f"bank-{rows}"), embedder_id="bench", dim=DIM, create=True)
    uri = f"milvus:{work / 'lite.db'}?collection=b{rows}" if backend == "Milvus Lite" else \
        f"{server}?collection=backends_{rows}"
    # the switch is timed apart: no switch during the ingest, then ensure_index at the real threshold
    return MilvusStore.open(uri, embedder_id="bench", dim=DIM, create=True, hnsw_threshold=rows + 1)


def measure(backend: str, rows: int, work: Path, server: str | None) -> dict:
    rng = np.random.default_rng(rows)
    vectors = clustered(rows + 200, rng)
    queries, vectors = vectors[rows:], vectors[:rows]
    ids = [f"doc{i:07d}#0" for i in range(rows)]
    meta = [{"doc_id": f"doc{i:07d}", "chunk": 0, "source": f"corpus-{i % 7}.jsonl",
             "text": f"chunk {i} " + "lorem ipsum " * 12} for i in range(rows)]
    store = open_backend(backend, rows, work, server)
    started = time.perf_counter()
    store.upsert(ids, vectors, meta)
    ingest = time.perf_counter() - started
    build = 0.0
    if isinstance(store, MilvusStore):
        started = time.perf_counter()
        index = store.ensure_index(HNSW_THRESHOLD)
        build = time.perf_counter() - started
    else:
        index = store.describe().index
    one = median_ms(lambda i: store.search(queries[i % 200], k=10), 200)
    batch = median_ms(lambda i: store.search(queries[(i * 32) % 168 : (i * 32) % 168 + 32], k=10), 30)
    get = median_ms(lambda i: store.get([ids[(i * 7919 + j * 104729) % rows] for j in range(10)]), 200)
    count = median_ms(lambda i: store.count(), 50)
    assert store.count() == rows
    store.close()
    return {"backend": backend, "rows": rows, "index": index, "ingest_s": ingest, "rows_per_s": rows / ingest,
            "build_s": build, "one_ms": one, "batch_ms": batch, "get_ms": get, "count_ms": count}


def test_questions(bank) -> list:
    from tracerag.datasets.pubmedqa import load_pubmedqa_questions

    pmids = {x.rsplit("#", 1)[0] for b in open_store(str(bank.directory)).scan(4096) for x in b.ids}
    return [q.to_example() for q in load_pubmedqa_questions("pubmedqa", "test", pmids=pmids)]


def rag_eval(store, embedder, examples: list, mode: str = "") -> dict:
    """evaluate_rag on these PubMedQA questions through ``store``'s hybrid retriever (no LM). ``mode``:
    "every posting" sets the postings' ``common_share`` to 1.0; "in memory" builds the retriever's word
    index from a scan, as before stores kept one."""
    from tracerag.documents.hybrid import HybridRetriever
    from tracerag.rag.evaluation import evaluate_rag
    from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG

    if mode == "in memory":
        store.word_index = lambda *args, **kwargs: None
        retriever = HybridRetriever(store, embedder=embedder)
        del store.word_index
    else:
        retriever = HybridRetriever(store, embedder=embedder)
        if getattr(retriever.index, "kind", None) == "postings":
            retriever.index.common_share = 1.0 if mode == "every posting" else COMMON_SHARE
    report = evaluate_rag(SelfReflectiveRAG(retriever, RAGConfig(k=10, max_rounds=2)), examples, dataset="pubmedqa",
                          k=10, num_threads=1, progress=False)
    return {"metrics": report["metrics"], "ms": [r["ms"] for r in report["per_query"]],
            "lists": [r["retrieved"] for r in report["per_query"]]}


def rag_stores(server: str | None, work: Path, lite: list[str]) -> tuple[Any, list, dict[str, tuple[Any, str | None]]]:
    """(embedder, PubMedQA test examples, {label: (store, word index layout)}): the numpy bank and Milvus
    stores filled from it, each with its word index built."""
    from tracerag.config import get_embedder
    from tracerag.stores.store_copy import copy_store
    from tracerag.tools.pubmed_corpus import open_pubmedqa_bank

    embedder = get_embedder()
    bank = open_pubmedqa_bank(embedder)
    examples = test_questions(bank)
    stores: dict[str, tuple[Any, str | None]] = {"numpy bank": (open_store(str(bank.directory)), None)}
    lites = {"Milvus Lite, BM25 function": "bm25", "Milvus Lite, postings": "postings"}
    for name, layout in lites.items():
        if layout not in lite:
            continue
        uri = f"milvus:{work / (layout + '.db')}?collection=rag"
        assert copy_store(str(bank.directory), uri).ok
        store = open_store(uri, embedder_id=embedder.id, dim=embedder.dim)
        store.word_index(layout=layout)
        stores[name] = (store, layout)
    if server:
        uri = f"{server}?collection=rag_bench_{os.getpid()}"
        assert copy_store(str(bank.directory), uri).ok
        store = open_store(uri, embedder_id=embedder.id, dim=embedder.dim)
        store.word_index()
        stores["Milvus server, postings"] = (store, store.word_index().kind)
    return embedder, examples, stores


def rag_main(rounds: int, server: str | None, work: Path, lite: list[str]) -> None:
    embedder, examples, stores = rag_stores(server, work, lite)
    runs: dict[str, list[dict]] = {}
    for r in range(rounds):
        for name, (store, layout) in stores.items():
            for mode in ["in memory", "every posting", ""] if layout == "postings" else [""]:
                label = name + (f", {mode}" if mode else "")
                runs.setdefault(label, []).append(rag_eval(store, embedder, examples, mode))
                m = runs[label][-1]["metrics"]
                print(f"# round {r + 1} {label}: recall@10 {m['recall@10']:.4f} MRR {m['mrr']:.4f} "
                      f"p50 {statistics.median(runs[label][-1]['ms']):.1f} ms", file=sys.stderr, flush=True)
    base = runs["numpy bank"][0]["lists"]
    print(f"SelfReflectiveRAG, no LM, PubMedQA test ({len(base)} questions), hybrid k=10; per-question ms: "
          f"each question's median over {rounds} rounds, then p50 / p95\n")
    print("| store, word index | recall@10 | MRR | lists that differ from the numpy bank's | p50 ms | p95 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, results in runs.items():
        per_question = sorted(statistics.median(ms) for ms in zip(*(x["ms"] for x in results), strict=True))
        m = results[0]["metrics"]
        differ = max(sum(a != b for a, b in zip(x["lists"], base, strict=True)) for x in results)
        print(f"| {label} | {m['recall@10']:.4f} | {m['mrr']:.4f} | {differ} of {len(base)} | "
              f"{statistics.median(per_question):.1f} | {per_question[int(0.95 * (len(per_question) - 1))]:.1f} |")
    for store, _ in stores.values():
        store.close()


COMMON_ROOM = milvus_words_postings.CACHE_POSTINGS


def batch_main(rounds: int, server: str | None, work: Path, lite: list[str], size: int = 32) -> None:
    """The hybrid retriever's search of a batch of questions against the same questions one call each, per
    store: medians over the batches and rounds, and whether every list equals the numpy bank's."""
    from tracerag.documents.hybrid import HybridRetriever

    embedder, examples, stores = rag_stores(server, work, lite)
    questions = [e.question for e in examples]
    batches = [questions[i : i + size] for i in range(0, len(questions) - size + 1, size)]
    embedder.embed(questions)  # the embedding cache is warm for both ways
    rows, base = [], None
    ways = [(label, store, room) for label, (store, layout) in stores.items()
            for room in ([COMMON_ROOM, 0] if layout == "postings" else [COMMON_ROOM])]
    for label, store, room in ways:
        milvus_words_postings.CACHE_POSTINGS = room  # 0: the common words' postings never fit, as on a large collection
        label += "" if room else ", common words not kept in memory"
        retriever = HybridRetriever(store, embedder=embedder)
        together, apart, lists = [], [], []
        for _ in range(rounds):
            for batch in batches:
                started = time.perf_counter()
                found = retriever.search(batch, k=10)
                together.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                alone = [retriever.search([q], k=10)[0] for q in batch]
                apart.append((time.perf_counter() - started) * 1000)
                lists += [[c.id for c in hits] for hits in found + alone]
        base = base or lists
        rows.append((label, statistics.median(together), statistics.median(apart), lists == base))
        print(f"# {label}: {rows[-1]}", file=sys.stderr, flush=True)
    print(f"HybridRetriever.search, k=10, PubMedQA test questions in {len(batches)} batches of {size}, {rounds} "
          "rounds: medians per batch\n")
    print(f"| store, word index | batch of {size} ms | {size} calls of one ms | batch / one by one | "
          "lists equal the numpy bank's |")
    print("|---|---:|---:|---:|---|")
    for label, together, apart, same in rows:
        print(f"| {label} | {together:.1f} | {apart:.1f} | {together / apart:.2f} | {'yes' if same else 'no'} |")
    milvus_words_postings.CACHE_POSTINGS = COMMON_ROOM
    for store, _ in stores.values():
        store.close()


def drift_main(rows: int, batch: int, work: Path, layouts: list[str]) -> None:
    from tracerag.config import get_embedder
    from tracerag.tools.pubmed_corpus import open_pubmedqa_bank

    embedder = get_embedder()
    bank = open_pubmedqa_bank(embedder)
    examples = test_questions(bank)
    source = open_store(str(bank.directory))
    base = rag_eval(source, embedder, examples)
    held = list(source.scan(1000, with_vectors=True))
    ids = [x for b in held for x in b.ids]
    late = set(ids[-rows:])
    print(f"PubMedQA test ({len(examples)} questions), hybrid k=10: a Milvus Lite word index built over "
          f"{len(ids) - rows} rows, then {rows} rows upserted {batch} at a time\n")
    print("| word index | lists that differ from the numpy bank's | recall@10 | MRR | upsert call p50 s |")
    print("|---|---:|---:|---:|---:|")
    variants = [(layout, True) for layout in layouts] + ([("bm25", False)] if "bm25" in layouts else [])
    for layout, settle in variants:
        uri = f"milvus:{work / f'drift-{layout}-{settle}.db'}?collection=rag"
        store = open_store(uri, embedder_id=embedder.id, dim=embedder.dim, create=True)
        pending = []
        for b in held:
            keep = [i for i, x in enumerate(b.ids) if x not in late]
            store.upsert([b.ids[i] for i in keep], b.vectors[keep], [b.metadata[i] for i in keep])
            pending += [(b.ids[i], b.vectors[i], b.metadata[i]) for i in range(len(b.ids)) if b.ids[i] in late]
        words = store.word_index(layout=layout)
        if not settle:
            words.settle = lambda: None  # as before: the writes stay in segments of their own
        times = []
        for start in range(0, len(pending), batch):
            part = pending[start : start + batch]
            started = time.perf_counter()
            store.upsert([x for x, _, _ in part], np.stack([v for _, v, _ in part]), [m for _, _, m in part])
            times.append(time.perf_counter() - started)
        result = rag_eval(store, embedder, examples)
        differ = sum(a != b for a, b in zip(result["lists"], base["lists"], strict=True))
        m = result["metrics"]
        label = layout + ("" if settle or layout != "bm25" else ", not rewritten after writes")
        print(f"| {label} | {differ} of {len(base['lists'])} | {m['recall@10']:.4f} | {m['mrr']:.4f} | "
              f"{statistics.median(times):.2f} |")
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rag", action="store_true", help="the hybrid retriever per store and word index")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--lite", nargs="*", default=["bm25"], choices=["bm25", "postings"],
                        help="Lite word indexes in --rag and --drift (postings on Lite take ~1 s a question)")
    parser.add_argument("--batch", action="store_true", help="the hybrid retriever: a batch against one by one")
    parser.add_argument("--drift", action="store_true", help="Lite word indexes after incremental upserts")
    parser.add_argument("--drift-rows", type=int, default=400)
    parser.add_argument("--drift-batch", type=int, default=50)
    args = parser.parse_args()
    server = os.environ.get("TRACERAG_MILVUS_STANDALONE")
    if args.rag or args.drift or args.batch:
        with tempfile.TemporaryDirectory(prefix="bench-rag-") as tmp:
            if args.rag:
                rag_main(args.rounds, server, Path(tmp), args.lite)
            if args.batch:
                batch_main(args.rounds, server, Path(tmp), args.lite)
            if args.drift:
                drift_main(args.drift_rows, args.drift_batch, Path(tmp), args.lite)
        return
    backends = ["numpy", "Milvus Lite"] + (["Milvus server"] if server else [])
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-backends-") as tmp:
        for rows in args.sizes:
            for backend in backends:
                results.append(measure(backend, rows, Path(tmp), server))
                r = results[-1]
                print(f"# {backend} {rows}: {r}", file=sys.stderr, flush=True)
    print(f"{DIM}-d clustered unit vectors, k=10; medians (ms) of 200 single searches, 30 batches of 32, "
          "200 gets of 10 ids, 50 counts\n")
    print("| rows | backend | index | ingest rows/s | index build s | search 1 query ms | search 32 queries ms "
          "| get 10 ids ms | count ms |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['rows']:,} | {r['backend']} | {r['index']} | {r['rows_per_s']:,.0f} | {r['build_s']:.1f} | "
              f"{r['one_ms']:.2f} | {r['batch_ms']:.1f} | {r['get_ms']:.2f} | {r['count_ms']:.2f} |")


if __name__ == "__main__":
    main()
