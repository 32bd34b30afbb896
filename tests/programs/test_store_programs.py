"""The programs on a numpy bank and on a Milvus Lite store filled from it give the same results, and
artifacts record a store reference that reopens either."""

from __future__ import annotations

import importlib.util
import json

import pytest

import tracerag
from tracerag.documents.hybrid import HybridRetriever
from tracerag.experience.experience_retrieval import ExperienceConfig, ExperienceRetrieval
from tracerag.memory.experience_bank import build_experience_bank
from tracerag.memory.playbook import TemplateIndex, index_templates
from tracerag.planner.traceable_planner import TraceablePlanner
from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG
from tracerag.stores.cosine_bank import CosineBank
from tracerag.stores.store_copy import copy_store
from tracerag.stores.stores import open_store

HAVE_MILVUS = all(importlib.util.find_spec(m) is not None for m in ("pymilvus", "milvus_lite"))
pytestmark = pytest.mark.skipif(not HAVE_MILVUS, reason='needs pip install -e ".[milvus]"')

TASKS = ["What did this receipt cost with tax in Paris?", "Find the cheapest flight to Berlin",
         "How far is the museum from the station?", "Summarise the chart of sales", "Which bus goes to the airport?"]
QUESTIONS = ["Do statins lower cholesterol in diabetes?", "Does aspirin raise bleeding risk at colonoscopy?",
             "Can phone counselling raise mammography use?", "vitamin D fractures", "inhaler adherence reminders"]


@pytest.fixture
def milvus_uri(tmp_path):
    return lambda name: f"milvus:{tmp_path / 'stores.db'}?collection={name}"


def same_hits(a, b):
    assert [c.id for c in a] == [c.id for c in b]
    assert [round(c.score, 4) for c in a] == [round(c.score, 4) for c in b]


def test_experience_retrieval_agrees_on_numpy_and_milvus(traces_dir, tmp_path, embedder, milvus_uri):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    assert copy_store(str(tmp_path / "bank"), milvus_uri("traces")).ok
    config = ExperienceConfig(enable=True, top_k=8, top_n=3)
    on_numpy = ExperienceRetrieval(CosineBank.load(tmp_path / "bank", embedder), config)
    on_milvus = ExperienceRetrieval(milvus_uri("traces"), config, embedder=embedder)
    assert on_milvus.store.describe().backend == "milvus-lite"
    for task in TASKS:
        a, b = on_numpy(question=task), on_milvus(question=task)
        assert a.task_ids == b.task_ids and a.experience == b.experience and not b.error
    assert on_milvus.stored_ids() == on_numpy.stored_ids()
    assert on_milvus.stored_metadata(["receipt-0001"]) == on_numpy.stored_metadata(["receipt-0001"])


def test_self_reflective_rag_agrees_on_numpy_and_milvus(retriever, embedder, milvus_uri):
    assert copy_store(retriever.store, milvus_uri("chunks")).ok
    on_milvus = HybridRetriever(open_store(milvus_uri("chunks")), embedder=embedder)
    assert on_milvus.index.kind == "bm25"  # the engine's own BM25 beside the collection, no scan of the rows
    for fusion in ("normalized", "rrf"):
        retriever.fusion = on_milvus.fusion = fusion
        for dedupe_by in (None, "doc_id"):
            for a, b in zip(retriever.search(QUESTIONS, k=5, dedupe_by=dedupe_by),
                            on_milvus.search(QUESTIONS, k=5, dedupe_by=dedupe_by), strict=True):
                same_hits(a, b)
                assert [c.lexical for c in a] == pytest.approx([c.lexical for c in b])
    for a, b in zip(retriever.search_lexical(QUESTIONS, k=4), on_milvus.search_lexical(QUESTIONS, k=4), strict=True):
        same_hits(a, b)
    for a, b in zip(retriever.search_dense(QUESTIONS, k=4, dedupe_by="doc_id"),
                    on_milvus.search_dense(QUESTIONS, k=4, dedupe_by="doc_id"), strict=True):
        same_hits(a, b)
    retriever.fusion = on_milvus.fusion = "normalized"
    rag_numpy = SelfReflectiveRAG(retriever, RAGConfig(k=5))
    rag_milvus = SelfReflectiveRAG(open_store(milvus_uri("chunks")), RAGConfig(k=5), embedder=embedder)
    for question in QUESTIONS:
        a, b = rag_numpy(question=question), rag_milvus(question=question)
        assert a.retrieved_ids == b.retrieved_ids and a.answer == b.answer


def test_hybrid_on_milvus_finds_rows_added_later_by_their_words(retriever, embedder, milvus_uri):
    """The word index beside the collection is written with every upsert: a row added after the retriever
    was made is found by its words at once, with no refresh and no rescan."""
    copy_store(retriever.store, milvus_uri("chunks"))
    store = open_store(milvus_uri("chunks"))
    on_milvus = HybridRetriever(store, embedder=embedder)
    text = "Metformin treats type 2 diabetes."
    store.upsert(["900#0"], embedder.embed([text]), [{"doc_id": "900", "text": text}])
    hit = on_milvus.search(["metformin"], k=1)[0][0]
    assert hit.id == "900#0" and hit.lexical > 0
    assert on_milvus.search_lexical(["metformin"], k=1)[0][0].id == "900#0"


def test_template_index_agrees_on_numpy_and_milvus(tmp_path, embedder, milvus_uri):
    templates = [{"id": f"template-{i:03d}", "title": t, "text": f"{t}: step one, step two."}
                 for i, t in enumerate(["Bake bread", "Plan a trip", "Fix a bike", "Write a report"])]
    numpy_store = open_store(tmp_path / "tpl", embedder_id=embedder.id, dim=embedder.dim, create=True)
    milvus_store = open_store(milvus_uri("tpl"), embedder_id=embedder.id, dim=embedder.dim, create=True)
    for store in (numpy_store, milvus_store):
        assert index_templates(store, embedder, templates) == 4
        assert index_templates(store, embedder, templates) == 0  # unchanged: skipped
    a = TemplateIndex(numpy_store, embedder, k=2)("travel itinerary")
    b = TemplateIndex(milvus_store, embedder, k=2)("travel itinerary")
    assert [t.id for t in a] == [t.id for t in b] and a[0].title == "Plan a trip"
    planner = TraceablePlanner({"max_templates": 2}, retrieve_templates=milvus_store, embedder=embedder)
    pred = planner(requirements="travel itinerary")
    assert pred.retrieved_template_ids == [t.id for t in a]


def test_artifacts_record_a_portable_store_and_load_can_override_it(traces_dir, tmp_path, embedder, milvus_uri):
    build_experience_bank(traces_dir, tmp_path / "art" / "exp.bank", embedder)
    program = ExperienceRetrieval(CosineBank.load(tmp_path / "art" / "exp.bank", embedder), {"enable": True})
    tracerag.save(program, tmp_path / "art" / "exp.json")
    meta = json.loads((tmp_path / "art" / "exp.json.meta.json").read_text())
    assert meta["store"] == "exp.bank" and "bank" not in meta  # relative to the artifact: it can move with it
    moved = tmp_path / "moved"
    (tmp_path / "art").rename(moved)
    loaded = tracerag.load(moved / "exp.json", embedder=embedder)
    assert loaded.store.describe().uri == str(moved / "exp.bank")
    copy_store(str(moved / "exp.bank"), milvus_uri("traces"))
    on_milvus = tracerag.load(moved / "exp.json", embedder=embedder, store=milvus_uri("traces"))
    assert on_milvus.store.describe().backend == "milvus-lite"
    assert on_milvus(question=TASKS[0]).task_ids == loaded(question=TASKS[0]).task_ids
    tracerag.save(on_milvus, moved / "exp-milvus.json")
    meta = json.loads((moved / "exp-milvus.json.meta.json").read_text())
    assert meta["store"] == milvus_uri("traces") and "bank" not in meta  # outside the artifact's directory: absolute


def test_a_rag_artifact_on_milvus_reloads_with_its_store(retriever, tmp_path, embedder):
    uri = f"milvus:{tmp_path / 'art' / 'chunks.db'}"
    copy_store(retriever.store, uri)
    program = SelfReflectiveRAG(uri, RAGConfig(k=5), embedder=embedder)
    tracerag.save(program, tmp_path / "art" / "rag.json")
    meta = json.loads((tmp_path / "art" / "rag.json.meta.json").read_text())
    assert meta["store"] == "milvus:chunks.db" and str(tmp_path) not in json.dumps(meta)
    program.retriever.store.close()
    loaded = tracerag.load(tmp_path / "art" / "rag.json", embedder=embedder)
    assert loaded.retriever.describe().backend == "milvus-lite"
    assert loaded(question=QUESTIONS[0]).retrieved_ids == SelfReflectiveRAG(retriever, RAGConfig(k=5))(
        question=QUESTIONS[0]).retrieved_ids
