"""Hybrid retrieval: each channel covers the other's blind spot, and every result explains its score."""

import copy

import numpy as np
import pytest

from tracerag.documents.hybrid import HybridRetriever
from tracerag.documents.word_index import WordIndex
from tracerag.stores.cosine_bank import CosineBank
from tracerag.stores.word_tokens import word_tokens

CHUNKS = {
    "snp#0": "In a small cohort, carriers of rs121913529 had shorter progression-free survival.",
    "kras#0": "Patients with the KRAS variant rs121913530 had poor responses to first-line therapy.",
    "kras#1": "Patients with the KRAS variant rs121913528 had poor responses to first-line therapy.",
    "kras#2": "Patients with the KRAS variant rs112445441 had poor responses to first-line therapy.",
    "egfr#0": "Lung tumours with EGFR mutations responded well to tyrosine kinase inhibitors.",
    "brca#0": "Women with BRCA1 mutations have a high lifetime risk of breast cancer.",
    "dogs#0": "Training young dogs not to bite shoes: redirect them to toys and praise calm play.",
    "dogs#1": "Young dogs need vaccinations at eight, twelve and sixteen weeks.",
    "cats#0": "How can I stop my cat from scratching the sofa? Give it a scratching post.",
    "smoke#0": "Stop smoking: how nicotine replacement can help you quit for good.",
    "tea#0": "Green tea contains catechins, which are antioxidants.",
    "home#0": "打开客厅的灯可以让房间更明亮。",
    "home#1": "空调温度设置为二十六度最节能。",
}


@pytest.fixture(scope="module")
def bank(tmp_path_factory, embedder):
    metadata = [{"doc_id": i.split("#")[0], "chunk": int(i.split("#")[1]), "text": t} for i, t in CHUNKS.items()]
    return CosineBank.create(tmp_path_factory.mktemp("hybrid") / "bank", embedder, list(CHUNKS),
                             list(CHUNKS.values()), metadata)


@pytest.fixture(scope="module")
def retriever(bank):
    return HybridRetriever(bank)


def ids(results):
    return [c.id for c in results]


def test_hybrid_finds_an_exact_rare_term_that_dense_misses(retriever):
    query = ["KRAS rs121913529 outcomes"]
    assert "snp#0" not in ids(retriever.search_dense(query, k=3)[0])  # near-identical variant ids crowd it out
    assert ids(retriever.search_lexical(query, k=1)[0]) == ["snp#0"]
    best = retriever.search(query, k=3)[0][0]
    assert best.id == "snp#0" and best.lexical > 0 and best.dense is not None


def test_hybrid_finds_a_paraphrase_that_lexical_misses(retriever):
    query = ["How can I stop my puppy from chewing footwear?"]
    assert "dogs#0" not in ids(retriever.search_lexical(query, k=3)[0])  # not one word in common
    found = {c.id: c for c in retriever.search(query, k=3)[0]}
    assert "dogs#0" in found
    assert found["dogs#0"].lexical == 0 and found["dogs#0"].dense > 0.3


def test_every_result_carries_both_channel_scores_and_its_metadata(retriever):
    results = retriever.search(["Which mutations raise breast cancer risk?", "客厅的灯"], k=4)
    assert [len(r) for r in results] == [4, 4]
    assert results[0][0].id == "brca#0" and results[1][0].id == "home#0"
    for chunk in results[0] + results[1]:
        assert isinstance(chunk.dense, float) and isinstance(chunk.lexical, float)
        assert chunk.metadata["text"] == CHUNKS[chunk.id] and chunk.doc_id == chunk.id.split("#")[0]
    scores = [c.score for c in results[0]]
    assert scores == sorted(scores, reverse=True)
    dense = retriever.search_dense(["Which mutations raise breast cancer risk?"], k=2)[0]
    assert dense[0].lexical is None and dense[0].score == dense[0].dense
    lexical = retriever.search_lexical(["breast cancer"], k=2)[0]
    assert lexical[0].dense is None and lexical[0].score == lexical[0].lexical and lexical[0].id == "brca#0"


def test_rrf_fusion_and_dedupe_by_document(bank):
    rrf = HybridRetriever(bank, fusion="rrf")
    results = rrf.search(["patients with a KRAS variant and poor responses"], k=3, dedupe_by="doc_id")[0]
    assert len({c.doc_id for c in results}) == len(results) == 3  # one chunk per document
    assert results[0].doc_id == "kras" and 0 < results[0].score <= (rrf.dense_weight + rrf.lexical_weight) / 61
    with pytest.raises(ValueError, match="fusion"):
        HybridRetriever(bank, fusion="max")


def test_deepcopy_shares_the_retriever_and_empty_input_is_fine(retriever):
    assert copy.deepcopy(retriever) is retriever
    assert retriever.search([]) == [] and retriever.search_dense([]) == [] and retriever.search_lexical([]) == []
    assert retriever.search_lexical(["zzzz unknown words"], k=3) == [[]]


def test_refresh_indexes_rows_appended_after_construction(tmp_path, embedder):
    bank = CosineBank.create(tmp_path / "bank", embedder, ["a#0"], ["Aspirin thins the blood."],
                             [{"doc_id": "a", "text": "Aspirin thins the blood."}])
    retriever = HybridRetriever(bank)
    bank.append(["b#0"], ["Metformin treats type 2 diabetes."], [{"doc_id": "b", "text": "Metformin treats type 2 "
                                                                 "diabetes."}])
    assert retriever.search(["metformin"], k=1)[0][0].lexical == 0  # not indexed yet, still searchable
    assert retriever.refresh().search_lexical(["metformin"], k=1)[0][0].id == "b#0"


def test_word_index_is_bm25_over_words_and_cjk_bigrams():
    assert word_tokens("COVID-19 vaccines, 打开灯") == ["covid", "19", "vaccine", "打", "开", "灯", "打开", "开灯"]
    index = WordIndex(["the rare term zeta", "the common the the", "nothing here", ""])
    scores = index.scores("the zeta")
    assert scores[0] > scores[1] > 0 and scores[2] == scores[3] == 0  # the rare word outweighs three commons
    assert np.array_equal(WordIndex([]).scores("x"), np.zeros(0, dtype=np.float32))
