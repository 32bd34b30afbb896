"""BM25 of a batch as one sparse product: bitwise the scores, and so the rankings, of the per-query path."""

import hashlib
import json
import random
from collections import Counter

import numpy as np
import pytest

from tracerag.datasets.pubmedqa import pubmedqa_abstracts_path, pubmedqa_questions_path
from tracerag.documents.hybrid import HybridRetriever, _top, _top_batch
from tracerag.documents.word_index import WordIndex
from tracerag.stores.cosine_bank import CosineBank
from tracerag.stores.word_tokens import word_tokens


def pubmedqa():
    with open(pubmedqa_abstracts_path(), encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    with open(pubmedqa_questions_path(), encoding="utf-8") as f:
        questions = [json.loads(line)["question"] for line in f]
    return [d["pmid"] for d in docs], [" ".join(d["contexts"]) for d in docs], questions


@pytest.fixture(scope="module")
def corpus():
    return pubmedqa()


@pytest.fixture(scope="module")
def words(corpus):
    return WordIndex(corpus[1])


def postings_scores(index, query):
    """BM25 as the word index computed it before batching: each term's postings added with fancy indexing, in
    float32, in the query's word order (what an index above ``EXACT_ROWS`` texts still does)."""
    out = np.zeros(index.count, dtype=np.float32)
    for token, times in Counter(word_tokens(query)).items():
        term = index.vocab.get(token)
        if term is not None:
            lo, hi = index.indptr[term], index.indptr[term + 1]
            out[index.rows[lo:hi]] += times * index.weights[lo:hi]
    return out


def exact_scores(index, query, reverse=False):
    """BM25 as float64 sums of the postings' weights, term by term in the given order, rounded to float32."""
    out = np.zeros(index.count)
    counts = list(Counter(word_tokens(query)).items())
    for token, times in reversed(counts) if reverse else counts:
        term = index.vocab.get(token)
        if term is not None:
            lo, hi = index.indptr[term], index.indptr[term + 1]
            out[index.rows[lo:hi]] += times * index.weights[lo:hi].astype(np.float64)
    return out.astype(np.float32)


def test_batch_scores_are_bitwise_the_per_query_scores_on_pubmedqa(words, corpus):
    questions = corpus[2][:200] + ["", "zzz-no-such-word", "the the the of", "数据 统计", "PCD PCD plant"]
    batch = words.scores_batch(questions)
    assert batch.dtype == np.float32 and batch.shape == (len(questions), len(words))
    assert words.exact and len(words._dense)  # common words ("the", "of", ...) take the dense-row path
    assert np.array_equal(batch, np.stack([words.scores(q) for q in questions]))
    for order in (False, True):  # exact sums: the order of the additions does not matter
        assert np.array_equal(batch, np.stack([exact_scores(words, q, order) for q in questions]))
    old = np.stack([postings_scores(words, q) for q in questions])  # float32 sums: the last bit may differ
    assert np.allclose(batch, old, rtol=1e-6, atol=0) and not np.array_equal(batch, old)


def test_a_batch_splits_its_words_once_as_each_query_alone(words, corpus):
    from tracerag.stores.word_tokens import BREAK, batch_words, unfolded_words

    rng = random.Random(5)
    chars = [chr(c) for c in range(1, 128)] + list("éßΣσς Ｃﬁ\u0301")
    texts = ["".join(rng.choice(chars) for _ in range(rng.randint(0, 30))) for _ in range(400)]
    def as_text(found):
        return [w.decode() if type(w) is bytes else w for w in found]

    for batch in (texts[:200], [t for t in texts if t.isascii()], ["Ｃells of the Café", "ΟΔΟΣ", "x"]):
        expected = []
        for i, text in enumerate(batch):
            expected += [BREAK, *as_text(unfolded_words(text))] if i else as_text(unfolded_words(text))
        found = batch_words(batch)
        assert found is not None and as_text(found) == expected
    assert batch_words(["cells", "数据"]) is None and batch_words(["a\x00b", "c"]) is None and batch_words([]) is None
    questions = [q for q in corpus[2][:200] if not q.isascii()] + corpus[2][:40] + ["", "x\x00y of the"]
    for batch in (questions[:-1], questions):  # non-ASCII words split as one text; a NUL: query by query
        assert np.array_equal(words.scores_batch(batch), np.stack([words.scores(q) for q in batch]))


def test_weights_sit_on_the_grid_and_only_the_smallest_move():
    from tracerag.stores.bm25_grid import GRID, on_grid

    weights = np.asarray([3.7, 1.0, 2.0**-7, 0.0123, 2.0**-7 * 0.999, 1e-6, 3e-10, 0.0], dtype=np.float32)
    grid = on_grid(weights)
    assert grid.dtype == np.float32 and np.all(np.round(grid.astype(np.float64) / GRID) == grid / GRID)
    assert np.array_equal(grid[:4], weights[:4])  # from 2**-7 up float32 steps are the grid or coarser
    assert np.all(np.abs(grid.astype(np.float64) - weights) <= GRID / 2)


def test_a_large_index_sums_in_float32_in_the_query_word_order(monkeypatch):
    from tracerag.documents import word_index

    monkeypatch.setattr(word_index, "exact_sums", lambda count: False)  # as above EXACT_ROWS texts
    rng = random.Random(4)
    vocab = [f"w{i}" for i in range(300)] + ["the", "of", "and"] * 30
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    index = WordIndex(texts)
    queries = [" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 12))) for _ in range(50)] + [""]
    assert not index.exact and len(index._dense)
    batch = index.scores_batch(queries)
    assert np.array_equal(batch, np.stack([postings_scores(index, q) for q in queries]))
    assert np.array_equal(batch, np.stack([index.scores(q) for q in queries]))


def test_batch_top_rows_are_a_full_sort_by_score_then_row(words, corpus):
    batch = words.scores_batch(corpus[2][:64])
    for m in (1, 10, 50, len(words) + 5):
        for top, row in zip(_top_batch(batch, m), batch, strict=True):
            full = np.lexsort((np.arange(len(row)), -row))[:m]
            assert np.array_equal(top, full) and np.array_equal(_top(row, m), full)
    tied = np.asarray([1.0, 2.0, 2.0, 2.0, 0.0, 2.0], dtype=np.float32)
    assert _top(tied, 2).tolist() == [1, 2]  # equal scores at the cut: the lowest rows


@pytest.mark.parametrize("product", [False, None, True])  # dense rows: vector adds, as costs say, matrix product
def test_repeated_words_and_synthetic_chunks_agree(product, monkeypatch):
    from tracerag.documents import word_index

    if product is not None:
        monkeypatch.setattr(word_index, "_product_pays", lambda *sizes: product)
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(300)] + ["the", "of", "and"] * 30
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    index = WordIndex(texts)
    queries = [" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 12))) for _ in range(100)]  # 3 blocks
    assert index.exact and len(index._dense)
    batch = index.scores_batch(queries)
    assert np.array_equal(batch, np.stack([exact_scores(index, q) for q in queries]))
    assert np.array_equal(batch, np.stack([index.scores(q) for q in queries]))
    assert np.array_equal(batch[::-1], index.scores_batch(queries[::-1]))
    assert index.scores_batch([]).shape == (0, 3000)
    assert np.array_equal(WordIndex([]).scores_batch(["the", ""]), np.zeros((2, 0), dtype=np.float32))


class HashEmbedder:
    """Deterministic unit vectors from a text's hash: enough for the dense channel to be a real channel."""

    id = "test-hash-16"
    dim = 16

    def embed(self, texts):
        out = np.stack([np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).standard_normal(16)
                        for t in texts]).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def retriever(corpus, tmp_path_factory):
    ids, texts, _ = corpus
    meta = [{"doc_id": x[:2], "text": t} for x, t in zip(ids, texts, strict=True)]
    bank = CosineBank.create(tmp_path_factory.mktemp("bm25") / "bank", HashEmbedder(), ids, texts, meta)
    return HybridRetriever(bank)


def test_lexical_search_of_a_batch_ranks_as_the_per_query_scores(retriever, words, corpus):
    questions = corpus[2][:40]
    found = retriever.search_lexical(questions, k=10)
    for question, chunks in zip(questions, found, strict=True):
        scores = words.scores(question)
        expected = [corpus[0][r] for r in _top(scores, 10) if scores[r] > 0]
        assert [c.id for c in chunks] == expected
        assert [c.lexical for c in chunks] == [float(scores[corpus[0].index(c.id)]) for c in chunks]


@pytest.mark.parametrize("dedupe_by", [None, "doc_id"])
def test_hybrid_answers_a_batch_as_it_answers_each_question_alone(retriever, corpus, dedupe_by):
    questions = corpus[2][40:56]
    batch = retriever.search(questions, k=5, dedupe_by=dedupe_by)
    alone = [retriever.search([q], k=5, dedupe_by=dedupe_by)[0] for q in questions]
    assert batch == alone
    lexical = retriever.search_lexical(questions, k=5, dedupe_by=dedupe_by)
    assert lexical == [retriever.search_lexical([q], k=5, dedupe_by=dedupe_by)[0] for q in questions]


def test_a_large_batch_is_scored_in_groups(retriever, corpus, monkeypatch):
    from tracerag.documents import hybrid

    questions = corpus[2][:12]
    whole = retriever.search(questions, k=3)
    monkeypatch.setattr(hybrid, "_BATCH_SCORES", 5 * len(corpus[0]))  # five questions per group
    assert [len(g) for g in retriever._query_groups(12)] == [5, 5, 2]
    assert retriever.search(questions, k=3) == whole


def test_lexical_hits_decode_their_metadata_when_first_read(retriever, corpus, monkeypatch):
    import dataclasses
    import pickle

    from tracerag.stores.bank_columns import MetadataLines

    decoded = []
    decode = MetadataLines.decode
    monkeypatch.setattr(MetadataLines, "decode", lambda self, row: decoded.append(row) or decode(self, row))
    found = retriever.search_lexical(corpus[2][:8], k=10)
    hits = [c for chunks in found for c in chunks]
    assert len(hits) == 80 and decoded == []  # ids and scores only: no chunk text parsed
    bank = retriever._rows.bank
    first = hits[0]
    assert first.metadata == bank.metadata(bank.row_of(first.id)) and len(decoded) == 2
    assert first.metadata is first.metadata and len(decoded) == 2  # decoded once, then kept
    eager = [dataclasses.replace(c, metadata=bank.metadata(bank.row_of(c.id))) for c in hits]
    assert hits == eager and [hash(c) for c in hits] == [hash(c) for c in eager]
    assert pickle.loads(pickle.dumps(hits)) == eager
    assert dataclasses.asdict(hits[1])["metadata"]["text"] == corpus[1][corpus[0].index(hits[1].id)]
    assert hits[2].doc_id == hits[2].id[:2]


def test_chunks_made_for_a_batch_are_the_chunks_the_constructor_makes():
    from tracerag.documents.hybrid import ScoredChunk, _make_chunks

    made, other = _make_chunks(iter(["c1", "c2"]), [2.5, 1.0], [None, 0.5], [2.5, 1.0], [{"text": "t"}, {}])
    assert made == ScoredChunk("c1", 2.5, None, 2.5, {"text": "t"}) and made.metadata == {"text": "t"}
    assert other == ScoredChunk("c2", 1.0, 0.5, 1.0, {}) and _make_chunks([], [], [], [], []) == []
    assert repr(made) == repr(ScoredChunk("c1", 2.5, None, 2.5, {"text": "t"}))
    with pytest.raises(AttributeError):
        made.score = 1.0  # still frozen
    rows = _make_chunks(["c3"], [1.0], [None], [1.0], [7], [lambda row: {"row": row}])  # a row, read when asked
    assert rows[0].metadata == {"row": 7} and rows[0] == ScoredChunk("c3", 1.0, None, 1.0, {"row": 7})


def test_cached_term_numbers_are_those_of_the_tokenizer(corpus, monkeypatch):
    from tracerag.documents import word_index
    from tracerag.stores.word_tokens import fold_plural, unfolded_words

    rng = random.Random(9)
    ascii_chars = [chr(c) for c in range(128)]
    texts = ["".join(rng.choice(ascii_chars) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    for text in texts:  # ASCII: one byte table instead of NFKC and the regular expression
        assert [fold_plural(w.decode()) for w in unfolded_words(text)] == word_tokens(text), text
    assert unfolded_words("Ｃells of the Café") == ["cells", "of", "the", "café"]  # NFKC, then str words
    assert unfolded_words("数据 cells") is None  # CJK: word_tokens itself
    monkeypatch.setattr(word_index, "_WORD_CACHE", 50)  # a full cache is emptied, then filled again
    words = WordIndex(corpus[1][:300])
    asked = corpus[2][:100] + ["Cells  CELLS cell's", "数据 统计 cells", "Ｃells café", ""] + texts[:50]
    for query in asked + asked:
        assert words._term_ids(query) == [words.vocab.get(t, -1) for t in word_tokens(query)], query
        assert len(words._word_terms) <= 51 + len(query)
