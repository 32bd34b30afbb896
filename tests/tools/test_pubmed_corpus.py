"""PubMedSearch: whole documents per hit, paging, argument errors, and banks without a documents file."""

from __future__ import annotations

import json

import pytest

from tracerag.data_files.jsonl import iter_json_lines
from tracerag.datasets.pubmedqa import load_pubmedqa_questions, pubmedqa_abstracts_path
from tracerag.documents.chunking import normalize_whitespace
from tracerag.documents.corpus import ingest_documents
from tracerag.documents.hybrid import HybridRetriever
from tracerag.embedding.embedders import LexicalEmbedder
from tracerag.stores.cosine_bank import CosineBank
from tracerag.tools.pubmed_corpus import (
    PubMedSearch,
    _merge_overlapping,
    open_pubmedqa_bank,
    pubmedqa_bank_dir,
)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """One cache directory for the tools tests: the bundled corpus is ingested into it once per session."""
    path = tmp_path_factory.getbasetemp() / "tools-cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRACERAG_CACHE_DIR", str(path))
        yield path


@pytest.fixture(scope="module")
def search(cache_dir) -> PubMedSearch:
    return PubMedSearch.pubmedqa(LexicalEmbedder())  # lexical: ingesting 1000 abstracts takes ~1 s


@pytest.fixture(scope="module")
def questions():
    return load_pubmedqa_questions("pubmedqa", "dev")[:20]


def test_bank_lives_in_the_cache_per_embedder_and_reingesting_adds_nothing(search, cache_dir):
    embedder = LexicalEmbedder()
    assert pubmedqa_bank_dir(embedder) == cache_dir / "banks" / "pubmedqa-lexical-char-ngram-v1-d4096"
    again = open_pubmedqa_bank(embedder)
    assert again.directory == search.retriever.store.bank.directory
    assert len(again) == len(search.retriever.store.bank)
    assert search.document_count == 1000


def test_questions_find_their_own_abstract(search, questions):
    found = [q.pmid in [s["id"] for s in search.search(q.question, limit=5)[1]] for q in questions]
    assert sum(found) >= 18, found


def test_a_hit_is_the_whole_abstract_with_year_and_mesh_keywords(search, questions):
    rows = {row["pmid"]: row for _, row in iter_json_lines(pubmedqa_abstracts_path(), ValueError)}
    q = questions[0]
    total, snippets = search.search(q.question, limit=3)
    hit = next(s for s in snippets if s["id"] == q.pmid)
    row = rows[q.pmid]
    assert hit["text"] == " ".join(row["contexts"])
    assert hit["year"] == int(row["year"])  # the corpus stores "2015"
    assert hit["keywords"] == row["meshes"]
    assert "title" not in hit  # PubMedQA has no titles; none is invented
    assert len({s["id"] for s in snippets}) == len(snippets) == 3  # one result per document
    assert 3 <= total <= 1000


def test_pages_continue_one_another_and_total_is_stable(search):
    query = "statin therapy and cardiovascular risk"
    total, first = search.search(query, limit=4)
    total2, page1 = search.search(query, limit=2)
    total3, page2 = search.search(query, limit=2, offset=2)
    assert [s["id"] for s in page1 + page2] == [s["id"] for s in first]
    assert total == total2 == total3
    assert search.search(query, limit=5, offset=total + 2000)[1] == []


def test_total_ignores_words_found_everywhere(search):
    common, _ = search.search("the patients of the study", limit=1)
    rare, _ = search.search("Aponogeton madagascariensis", limit=1)
    assert rare == 1  # only the lace plant abstract names it
    assert common < rare + 10  # "the", "patients", "study" are in most abstracts: no match by them


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"limit": 0}, "limit must be an integer from 1 to 50, got 0"),
    ({"limit": 51}, "limit must be an integer from 1 to 50, got 51"),
    ({"limit": True}, "limit must be an integer"),
    ({"limit": "5"}, "limit must be an integer"),
    ({"offset": -1}, "offset must be an integer >= 0, got -1"),
    ({"query": "   "}, "query must be a non-empty string"),
])
def test_bad_arguments_say_what_to_change(search, kwargs, message):
    args = {"query": "cancer pain", **kwargs}
    with pytest.raises(ValueError, match=message):
        search.search(**args)


def test_a_bank_without_documents_answers_with_its_chunks_joined(tmp_path):
    sentences = [f"Sentence number {i} talks about topic {'alpha' if i % 2 else 'beta'} in detail." for i in range(12)]
    docs = [{"id": "d1", "title": "A long one", "text": " ".join(sentences), "year": "2019 Mar", "journal": "J Test"},
            {"id": "d2", "text": "Short document about gamma rays.", "keywords": ["Physics"]}]
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    embedder = LexicalEmbedder()
    ingest_documents(path, tmp_path / "bank", embedder, size=200, overlap=80)
    bank = CosineBank.load(tmp_path / "bank", embedder)
    assert sum(1 for i in bank.ids if i.startswith("d1#")) >= 4  # really chunked, with overlaps
    search = PubMedSearch(HybridRetriever(bank))
    total, snippets = search.search("topic alpha detail", limit=2)
    d1 = next(s for s in snippets if s["id"] == "d1")
    assert d1["text"] == normalize_whitespace(" ".join(sentences))
    assert (d1["title"], d1["year"], d1["journal"]) == ("A long one", 2019, "J Test")
    gamma = search.search("gamma rays", limit=1)[1][0]
    assert gamma == {"id": "d2", "text": "Short document about gamma rays.", "keywords": ["Physics"]}


def test_merging_overlapping_chunks():
    assert _merge_overlapping(["A b. C d.", "C d. E f.", "E f. G."]) == "A b. C d. E f. G."
    assert _merge_overlapping(["One.", "Two."]) == "One. Two."
    assert _merge_overlapping([]) == ""
