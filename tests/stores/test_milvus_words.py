"""The hybrid retriever on Milvus reads the store's own word index (kept next to the collection, written
with every upsert and delete), never a scan of every row per retriever, and ranks as on the numpy bank.

Both layouts run on Milvus Lite: its own BM25 function (what Lite 3 and Milvus >= 2.5 offer) and the
postings a Milvus 2.3 server gets. The real server (2.3.5: postings) runs the same tests in the
``milvus_server`` step, plus the PubMedQA parity evaluation (slow on Lite, in the ``slow`` step).
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from tracerag.documents.hybrid import HybridRetriever
from tracerag.documents.word_index import WordIndex
from tracerag.stores import milvus_words_postings
from tracerag.stores.cosine_bank import CosineBank
from tracerag.stores.store_copy import copy_store
from tracerag.stores.stores import open_store

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from milvus_marks import STANDALONE, needs_milvus, on_the_server  # noqa: E402

pytestmark = needs_milvus
ENGINES = ["lite-bm25", "lite-postings", pytest.param("standalone", marks=on_the_server)]

CHUNKS = {
    "snp#0": "In a small cohort, carriers of rs121913529 had shorter progression-free survival.",
    "kras#0": "Patients with the KRAS variant rs121913530 had poor responses to first-line therapy.",
    "kras#1": "Patients with the KRAS variant rs121913528 had poor responses to first-line therapy.",
    "egfr#0": "Lung tumours with EGFR mutations responded well to tyrosine kinase inhibitors.",
    "brca#0": "Women with BRCA1 mutations have a high lifetime risk of breast cancer.",
    "dogs#0": "Training young dogs not to bite shoes: redirect them to toys and praise calm play.",
    "dogs#1": "Young dogs need vaccinations at eight, twelve and sixteen weeks.",
    "cats#0": "How can I stop my cat from scratching the sofa? Give it a scratching post.",
    "tea#0": "Green tea contains catechins, which are antioxidants.",
    "o'brien#0": 'Quotes "in" ids: o\'brien studied tea and dogs.',
    "home#0": "打开客厅的灯可以让房间更明亮。",
    "empty#0": "",
}
QUERIES = ["KRAS rs121913529 outcomes", "Which mutations raise breast cancer risk?", "dogs and tea",
           "How can I stop my puppy from chewing footwear?", "客厅的灯", "zzzz unknown words"]
_COUNTER = iter(range(10**6))


@pytest.fixture(scope="module")
def bank(tmp_path_factory, embedder):
    metadata = [{"doc_id": i.split("#")[0], "text": t} for i, t in CHUNKS.items()]
    return CosineBank.create(tmp_path_factory.mktemp("words") / "bank", embedder, list(CHUNKS),
                             list(CHUNKS.values()), metadata)


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param


@pytest.fixture
def milvus(engine, bank, tmp_path):
    return _filled(engine, bank, tmp_path)


def _filled(engine, bank, tmp_path):
    """(store URI, word index layout) of a store of ``engine`` filled from ``bank`` by copy_store."""
    if engine == "standalone":
        uri = f"{STANDALONE}?collection=words{next(_COUNTER)}_{os.getpid()}"
    else:
        uri = f"milvus:{tmp_path / 'words.db'}?collection=chunks"
    assert copy_store(str(bank.directory), uri).ok
    return uri, {"lite-bm25": "bm25", "lite-postings": "postings", "standalone": None}[engine]


def _open(uri, embedder, layout):
    store = open_store(uri, embedder_id=embedder.id, dim=embedder.dim)
    store.word_index(layout=layout)
    return store


def _ranked(results):
    return [[(c.id, round(c.lexical or 0.0, 3)) for c in r] for r in results]


def test_ranks_as_the_numpy_bank_and_reads_no_row_to_start(milvus, bank, embedder, monkeypatch):
    uri, layout = milvus
    store = _open(uri, embedder, layout)
    kind = store.word_index().kind
    assert layout in (None, kind) and (kind == "bm25") == (layout == "bm25")

    def no_scan(*args, **kwargs):
        raise AssertionError("a retriever on Milvus scanned the store")

    monkeypatch.setattr(store, "scan", no_scan)
    retriever = HybridRetriever(store, embedder=embedder)
    assert not isinstance(retriever.index, WordIndex)
    numpy_side = HybridRetriever(bank)
    for k in (3, 8):
        assert _ranked(retriever.search(QUERIES, k=k)) == _ranked(numpy_side.search(QUERIES, k=k))
        assert _ranked(retriever.search_lexical(QUERIES, k=k)) == _ranked(numpy_side.search_lexical(QUERIES, k=k))
    deduped = retriever.search(["KRAS variant poor responses"], k=3, dedupe_by="doc_id")[0]
    assert [c.doc_id for c in deduped] == [c.doc_id for c in numpy_side.search(["KRAS variant poor responses"], k=3,
                                                                                dedupe_by="doc_id")[0]]
    store.close()


def test_upserts_and_deletes_reach_the_word_index_without_refresh(milvus, embedder):
    uri, layout = milvus
    store = _open(uri, embedder, layout)
    retriever = HybridRetriever(store, embedder=embedder)
    text = "Metformin treats type 2 diabetes."
    store.upsert(["met#0"], embedder.embed([text]), [{"doc_id": "met", "text": text}])
    assert [c.id for c in retriever.search_lexical(["metformin"], k=2)[0]] == ["met#0"]
    assert retriever.search(["metformin"], k=1)[0][0].lexical > 0
    # a new text for the same id replaces its words
    insulin = "Insulin lowers glucose."
    store.upsert(["met#0"], embedder.embed([insulin]), [{"doc_id": "met", "text": insulin}])
    assert retriever.search_lexical(["metformin"], k=2) == [[]]
    assert [c.id for c in retriever.search_lexical(["insulin"], k=2)[0]] == ["met#0"]
    assert store.delete(["met#0", "tea#0"]) == 2
    assert retriever.search_lexical(["insulin"], k=2) == [[]]
    assert "tea#0" not in [c.id for c in retriever.search(["green tea catechins"], k=5)[0]]
    # another client opening the store later finds the index as written
    other = _open(uri, embedder, layout)
    assert other.word_index().count() == other.count() == len(CHUNKS) - 1
    other.close()
    store.close()


def test_an_index_that_disagrees_with_the_store_is_rebuilt_once(milvus, embedder):
    uri, layout = milvus
    store = _open(uri, embedder, layout)
    words = store.word_index()
    words.delete(["dogs#0"])  # e.g. a build interrupted, or rows written by a client before this version
    words.seal()
    assert store.word_index().count() == store.count()
    retriever = HybridRetriever(store, embedder=embedder)
    assert "dogs#0" in [c.id for c in retriever.search_lexical(["shoes"], k=3)[0]]
    store.close()


# ---------------------------------------------------------------------------------------------
# A batch of questions on a store larger than the fusion window: each question's words point to rows outside
# every question's dense window, and the word index is read for the batch, not per question.

GREEK = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda sigma".split()
BIG = {f"d{i:03d}": " ".join(random.Random(i).sample(GREEK, 6)) + f" code{i}" for i in range(300)}
BATCH = ["code5 code17 code299", "code250 code251 code99 code3", "code77", "alpha beta code140", "nothing here",
         "code77"]


@pytest.fixture(scope="module")
def big_bank(tmp_path_factory, embedder):
    return CosineBank.create(tmp_path_factory.mktemp("big") / "bank", embedder, list(BIG), list(BIG.values()),
                             [{"text": t} for t in BIG.values()])


def test_a_batch_ranks_as_the_numpy_bank_and_reads_the_word_index_once(engine, big_bank, embedder, tmp_path,
                                                                         monkeypatch):
    uri, layout = _filled(engine, big_bank, tmp_path)
    store = _open(uri, embedder, layout)
    words = store.word_index()
    retriever = HybridRetriever(store, embedder=embedder)
    numpy_side = HybridRetriever(big_bank)
    expected = _ranked(numpy_side.search(BATCH, k=5))
    assert all(any(c.startswith("d") for c, _ in r) for r in expected)
    reads = []
    for name in ("search", "query"):
        call = getattr(words._client, name)

        def counted(collection, *args, _call=call, **kwargs):
            reads.extend([kwargs.get("filter", "")] if collection == words.name else [])
            return _call(collection, *args, **kwargs)

        monkeypatch.setattr(words._client, name, counted)
    assert _ranked(retriever.search(BATCH, k=5)) == expected
    best_rows = [f for f in reads if not f.startswith("id in [")]  # the rest: one question's dense candidates
    assert len(best_rows) <= 2, best_rows  # the batch's best rows (postings: and the common words', kept)
    assert [_ranked(retriever.search([q], k=5))[0] for q in BATCH] == expected
    by_score = [sorted(r, key=lambda hit: (-hit[1], hit[0])) for r in _ranked(retriever.search_lexical(BATCH, k=5))]
    assert by_score == [sorted(r, key=lambda hit: (-hit[1], hit[0]))  # equal scores: any order
                        for r in _ranked(numpy_side.search_lexical(BATCH, k=5))]
    store.close()


# ---------------------------------------------------------------------------------------------
# Postings: common words are read only for the rows that can rank, yet every score is exact.


def _texts(rng: random.Random, n: int, start: int = 0) -> dict[str, str]:
    """Texts where "the" is in every row and "of" in most (common words), "w0".."w29" in a few each."""
    rare = [f"w{i}" for i in range(30)]
    return {f"r{start + i:03d}": " ".join(["the"] * rng.randint(1, 3) + ["of"] * rng.randint(0, 2)
                                         + rng.sample(rare, rng.randint(1, 5))) for i in range(n)}


def _write_after_the_build(store, put, texts: dict[str, str], rng: random.Random) -> None:
    """Three batches of new rows, new texts for r000..r007 and three deletes, kept in ``texts`` as well."""
    for start in (40, 50, 60):
        more = _texts(rng, 10, start)
        put(more)
        texts.update(more)
    replaced = _texts(rng, 8)
    put(replaced)
    texts.update(replaced)
    assert store.delete(["r010", "r011", "r055"]) == 3
    for x in ("r010", "r011", "r055"):
        del texts[x]


@pytest.mark.slow
@pytest.mark.parametrize("where", ["lite", pytest.param("standalone", marks=on_the_server)])
def test_postings_score_as_a_fresh_index_after_incremental_writes(where, tmp_path, monkeypatch):
    rng = random.Random(5)
    uri = (f"{STANDALONE}?collection=postings{os.getpid()}" if where == "standalone"
           else f"milvus:{tmp_path / 'postings.db'}?collection=chunks")
    store = open_store(uri, embedder_id="words-test", dim=4, create=True)

    def put(rows: dict[str, str]) -> None:
        vectors = np.asarray([[rng.random() + 0.1 for _ in range(4)] for _ in rows], dtype=np.float32)
        store.upsert(list(rows), vectors / np.linalg.norm(vectors, axis=1, keepdims=True),
                     [{"text": t} for t in rows.values()])

    texts = _texts(rng, 40)
    put(texts)
    words = store.word_index(layout="postings")
    _write_after_the_build(store, put, texts, rng)

    ids, fresh = list(texts), WordIndex(list(texts.values()))
    # common words kept in memory; then room for none of them (a query each); then for "the" alone
    for room in (milvus_words_postings.CACHE_POSTINGS, 0, 70):
        monkeypatch.setattr(milvus_words_postings, "CACHE_POSTINGS", room)
        for query in ["the w1 w2", "of the w3", "w4 w4 w5 the of", "the", "the of", "w29 zzz", "zzz"]:
            expected = {ids[i]: float(s) for i, s in enumerate(fresh.scores(query)) if s > 0}
            ranked = sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))
            for m in (1, 5, 20, 100):
                assert words.top(query, m) == ranked[:m], (room, query, m)
                assert words.scores(query, ids) == expected, (room, query, m)
            part = ids[::7]  # asked without a top() first
            assert words.scores(query + " ", part) == {x: s for x, s in expected.items() if x in part}
    monkeypatch.undo()

    read: list[int] = []
    query_rows = words._client.query

    def counting(name, **kwargs):
        rows = query_rows(name, **kwargs)
        read.append(len(rows))
        return rows

    monkeypatch.setattr(words._client, "query", counting)
    best = sorted(((ids[i], float(s)) for i, s in enumerate(fresh.scores("the of w7")) if s > 0),
                  key=lambda kv: (-kv[1], kv[0]))[:3]

    def rows_read() -> int:
        read.clear()
        assert words.top("the of w7", 3) == best
        return sum(read)

    words.common_share = 1.0
    every_posting = rows_read()
    words.common_share = 0.25
    rows_read()  # learns that "the" and "of" are common
    assert rows_read() < every_posting / 3  # they are read for the few rows holding "w7", not for all 65

    # another client's write reaches the common words a reader keeps in memory (a new version of the index)
    reader = open_store(uri + "&consistency=strong", embedder_id="words-test", dim=4)
    reader_words = reader.word_index()
    for _ in range(2):
        assert reader_words.top("the of w7", 3) == best
    texts["r001"] = "the the the of of w7 w7 w7"
    store.upsert(["r001"], np.asarray([[0.5, 0.5, 0.5, 0.5]], dtype=np.float32), [{"text": texts["r001"]}])
    ids, fresh = list(texts), WordIndex(list(texts.values()))
    expected = {ids[i]: float(s) for i, s in enumerate(fresh.scores("the of w7")) if s > 0}
    assert reader_words.top("the of w7", 3) == sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    assert reader_words.scores("the of w7", ids) == expected
    reader.close()
    store.close()


@pytest.mark.parametrize("room", [milvus_words_postings.CACHE_POSTINGS, 0])
def test_postings_score_a_batch_exactly_reading_common_words_once_for_it(room, tmp_path, monkeypatch):
    """With room in memory for the common words' postings, or none (a large collection), a batch of questions
    costs a fixed number of reads however many questions it holds, and scores as a fresh index."""
    rng = random.Random(9)
    store = open_store(f"milvus:{tmp_path / 'batch.db'}?collection=chunks", embedder_id="words-test", dim=4,
                       create=True)
    texts = _texts(rng, 60)
    vectors = np.asarray([[rng.random() + 0.1 for _ in range(4)] for _ in texts], dtype=np.float32)
    store.upsert(list(texts), vectors, [{"text": t} for t in texts.values()])
    words = store.word_index(layout="postings")
    ids, fresh = list(texts), WordIndex(list(texts.values()))
    questions = [f"the of w{i} w{i + 1}" for i in range(0, 24, 2)] + ["the", "zzz", "the w3"]
    expected = [{ids[i]: float(s) for i, s in enumerate(fresh.scores(q)) if s > 0} for q in questions]
    monkeypatch.setattr(milvus_words_postings, "CACHE_POSTINGS", room)
    reads = []
    query = words._client.query
    monkeypatch.setattr(words._client, "query", lambda name, **kwargs: reads.append(name) or query(name, **kwargs))
    for m in (3, 100):
        reads.clear()
        found = words.top_batch(questions, m)
        assert found == [sorted(e.items(), key=lambda kv: (-kv[1], kv[0]))[:m] for e in expected]
        some = [ids[i::5] for i in range(len(questions))]
        assert words.scores_batch(questions, some) == [{x: v for x, v in e.items() if x in part}
                                                       for e, part in zip(expected, some, strict=True)]
        assert len(reads) <= 4, reads  # one by one: two or more a question with no room
    store.close()


@pytest.mark.slow
def test_lite_bm25_ranks_as_a_fresh_build_after_incremental_writes(tmp_path):
    rng = random.Random(9)
    store = open_store(f"milvus:{tmp_path / 'bm25.db'}?collection=chunks", embedder_id="words-test", dim=4,
                       create=True)

    def put(rows: dict[str, str]) -> None:
        store.upsert(list(rows), np.full((len(rows), 4), 0.5, dtype=np.float32), [{"text": t} for t in rows.values()])

    texts = _texts(rng, 40)
    put(texts)
    words = store.word_index(layout="bm25")
    _write_after_the_build(store, put, texts, rng)  # on Milvus Lite each write call lands in its own segment

    ids, fresh = list(texts), WordIndex(list(texts.values()))
    for query in ["the w1 w2", "of the w3", "w4 w4 w5 the of", "the", "w29 zzz"]:
        expected = {ids[i]: round(float(s), 4) for i, s in enumerate(fresh.scores(query)) if s > 0}
        assert {x: round(s, 4) for x, s in words.top(query, 100)} == expected, query
        assert {x: round(s, 4) for x, s in words.scores(query, ids).items()} == expected, query
    store.close()


@pytest.mark.slow
def test_searches_during_the_lite_rewrite_wait_for_it_rather_than_fail(tmp_path):
    """On Milvus Lite each write rewrites the BM25 companion (drop, rename, load): a search of another thread
    in that moment met a collection gone or released; it now waits for the swap."""
    import threading

    store = open_store(f"milvus:{tmp_path / 'race.db'}?collection=chunks", embedder_id="words-test", dim=4,
                       create=True)
    texts = _texts(random.Random(3), 200)
    store.upsert(list(texts), np.full((len(texts), 4), 0.5, dtype=np.float32), [{"text": t} for t in texts.values()])
    words = store.word_index(layout="bm25")
    failures, searches, writing = [], [0], threading.Event()

    def search_while_writing() -> None:
        while writing.is_set():
            try:
                words.top("the w1 w2", 5)
                searches[0] += 1
            except Exception as error:  # noqa: BLE001 - any failure is what this test looks for
                failures.append(repr(error))

    writing.set()
    searcher = threading.Thread(target=search_while_writing)
    searcher.start()
    try:
        for i, x in enumerate(list(texts)[:6]):
            store.upsert([x], np.full((1, 4), 0.5, dtype=np.float32), [{"text": f"rewritten {i} w1"}])
    finally:
        writing.clear()
        searcher.join()
    assert searches[0] > 0 and not failures, failures[:2]
    assert dict(words.top("rewritten", 10)).keys() == set(list(texts)[:6])
    store.close()


# ---------------------------------------------------------------------------------------------
# The parity evaluation: PubMedQA held-out (test split) recall@10 and MRR, no LM.


def _pubmedqa_metrics(store, embedder) -> dict:
    from tracerag.datasets.pubmedqa import load_pubmedqa_questions
    from tracerag.rag.evaluation import evaluate_rag
    from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG

    retriever = HybridRetriever(store, embedder=embedder)
    program = SelfReflectiveRAG(retriever, RAGConfig(k=10, max_rounds=2))
    pmids = {x.rsplit("#", 1)[0] for x in retriever.ids}
    examples = [q.to_example() for q in load_pubmedqa_questions("pubmedqa", "test", pmids=pmids)]
    return evaluate_rag(program, examples, dataset="pubmedqa", k=10, num_threads=1, progress=False)["metrics"]


@pytest.mark.slow
@pytest.mark.parametrize("where", ["lite", pytest.param("standalone", marks=on_the_server)])
def test_pubmedqa_heldout_recall_at_10_equals_the_numpy_bank(where, embedder, tmp_path):
    from tracerag.tools.pubmed_corpus import open_pubmedqa_bank

    bank = open_pubmedqa_bank(embedder)
    uri = (f"{STANDALONE}?collection=pubmedqa_{os.getpid()}" if where == "standalone"
           else f"milvus:{tmp_path / 'rag.db'}?collection=rag")
    assert copy_store(str(bank.directory), uri).ok
    base = _pubmedqa_metrics(open_store(str(bank.directory)), embedder)
    store = open_store(uri, embedder_id=embedder.id, dim=embedder.dim)
    other = _pubmedqa_metrics(store, embedder)
    store.close()
    assert base["n"] == other["n"] >= 150 and base["recall@10"] >= 0.98
    assert abs(base["recall@10"] - other["recall@10"]) <= 0.002 and abs(base["mrr"] - other["mrr"]) <= 0.002


@pytest.mark.milvus_server
def test_the_word_index_and_parity_hold_on_a_real_milvus_server():
    import milvus_standalone

    why = milvus_standalone.available()
    if why:
        pytest.skip(why)
    suite = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-m", "not milvus_server",
             __file__, "-k", "standalone"]
    assert milvus_standalone.run_inside(suite) == 0


def test_another_text_key_is_indexed_in_memory_as_before(tmp_path, embedder):
    texts = {"a#0": "Aspirin thins the blood.", "b#0": "Metformin treats type 2 diabetes."}
    store = open_store(f"milvus:{tmp_path / 'body.db'}", embedder_id=embedder.id, dim=embedder.dim, create=True)
    store.upsert(list(texts), embedder.embed(list(texts.values())), [{"body": t} for t in texts.values()])
    assert store.word_index("body") is None
    retriever = HybridRetriever(store, embedder=embedder, text_key="body")
    assert isinstance(retriever.index, WordIndex) and len(retriever.index) == 2
    assert [c.id for c in retriever.search_lexical(["metformin"], k=1)[0]] == ["b#0"]
    store.close()
