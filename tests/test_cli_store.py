"""--store on the command line: evaluate and run on a store named by URI (filled when empty), the planner's
templates searched in a store, and `tracerag store copy` between backends."""

import importlib.util
import json

import dspy
import pytest
from conftest import PlannerEngine

import optimize
import tracerag

HAVE_MILVUS = all(importlib.util.find_spec(m) is not None for m in ("pymilvus", "milvus_lite"))
milvus = pytest.mark.skipif(not HAVE_MILVUS, reason='needs pip install -e ".[milvus]"')


@pytest.fixture(autouse=True)
def session_embedder(embedder, monkeypatch):
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)


def _metrics(path):
    return json.loads(path.read_text(encoding="utf-8"))["metrics"]


def _evaluate_experience(tmp_path, name, *extra):
    out = tmp_path / f"{name}.json"
    assert optimize.main(["evaluate", "experience", "--dataset", "experience", "--split", "test", "--out", str(out),
                          *extra]) == 0
    return _metrics(out)


@pytest.mark.parametrize("backend", ["numpy", pytest.param("milvus", marks=milvus)])
def test_evaluate_experience_on_a_store_scores_what_the_default_bank_scores(backend, tmp_path, capsys):
    uri = str(tmp_path / "bank") if backend == "numpy" else f"milvus:{tmp_path / 'store.db'}"
    default = _evaluate_experience(tmp_path, "default")
    on_store = _evaluate_experience(tmp_path, "store", "--store", uri)  # empty: filled from the traces first
    for key in ("hit@5", "recall@5", "mrr"):
        assert on_store[key] == default[key], key
    again = _evaluate_experience(tmp_path, "again", "--store", uri)  # now full: used as it is
    assert again["hit@5"] == default["hit@5"]
    capsys.readouterr()
    assert optimize.main(["run", "experience", "--store", uri, "--query", "What did this receipt cost with tax?"]) == 0
    assert json.loads(capsys.readouterr().out.split("\n\n")[0])["task_ids"]


@milvus
def test_store_copy_between_backends(tmp_path, capsys):
    bank, lite = str(tmp_path / "bank"), f"milvus:{tmp_path / 'copy.db'}"
    _evaluate_experience(tmp_path, "fill", "--store", bank)
    assert optimize.main(["store", "copy", "--from", bank, "--to", lite]) == 0
    first = capsys.readouterr().out
    assert optimize.main(["store", "copy", "--from", bank, "--to", lite, "--json"]) == 0
    rerun = json.loads(capsys.readouterr().out)
    assert rerun["written"] == 0 and rerun["ok"], first  # resumable: nothing left to write
    assert optimize.main(["store", "copy", "--from", str(tmp_path / "missing"), "--to", lite]) == 2
    assert capsys.readouterr().err.startswith("error: ")


@milvus
def test_build_bank_and_ingest_into_a_milvus_store(traces_dir, tmp_path, capsys):
    lite = f"milvus:{tmp_path / 'traces.db'}"
    assert optimize.main(["build-bank", "--traces", str(traces_dir), "--store", lite]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["added"] == first["store"]["written"] == first["store"]["target_count"] > 0
    assert optimize.main(["build-bank", "--traces", str(traces_dir), "--store", lite]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["store"]["written"] == 0 and again["store"]["skipped"] == first["store"]["written"]

    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "text": f"Document {i} is about topic {i % 3}."}) + "\n"
                            for i in range(20)), encoding="utf-8")
    assert optimize.main(["ingest", "--docs", str(docs), "--store", f"milvus:{tmp_path / 'chunks.db'}"]) == 0
    assert json.loads(capsys.readouterr().out)["store"]["target_count"] == 20
    with pytest.raises(SystemExit):  # --bank or --store is required
        optimize.main(["ingest", "--docs", str(docs)])


@milvus
def test_ids_with_quotes_ingest_and_copy_like_any_other(tmp_path, capsys):
    """A document id such as "o'brien-2021" once ended ingest into Milvus in a traceback."""
    docs = tmp_path / "docs.jsonl"
    ids = ["o'brien-2021", 'say "hi"', "back\\slash", "plain"]
    docs.write_text("".join(json.dumps({"id": x, "text": f"Document {x} is about topic {i}."}) + "\n"
                            for i, x in enumerate(ids)), encoding="utf-8")
    lite, bank = f"milvus:{tmp_path / 'chunks.db'}", str(tmp_path / "bank")
    assert optimize.main(["ingest", "--docs", str(docs), "--store", lite]) == 0
    assert json.loads(capsys.readouterr().out)["store"]["target_count"] == 4
    assert optimize.main(["store", "copy", "--from", lite, "--to", bank, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == 4
    assert optimize.main(["store", "copy", "--from", bank, "--to", lite, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == 0  # the same rows: nothing to write


def _evaluate_planner(tmp_path, name, *extra):
    out = tmp_path / f"{name}.json"
    assert optimize.main(["evaluate", "planner", "--dataset", "planner", "--split", "test", "--lm", "fake/x",
                          "--out", str(out), *extra]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture
def planner_lm(monkeypatch):
    monkeypatch.setattr(tracerag.config, "make_lm", lambda *a, **k: dspy.LM(
        "fake/model", engine=PlannerEngine(invent=False), cache=False, num_retries=0))
    yield
    dspy.configure(lm=None)


def test_evaluate_planner_searches_its_templates_in_a_store(tmp_path, planner_lm):
    from tracerag.datasets.planner import load_templates
    from tracerag.datasets.smarthome import resolve_dataset
    from tracerag.stores.stores import open_store

    handed = _evaluate_planner(tmp_path, "handed")  # no --store: each case's templates are handed over
    uris = [str(tmp_path / "templates")] + ([f"milvus:{tmp_path / 'templates.db'}"] if HAVE_MILVUS else [])
    retrieved = {}
    for uri in uris:
        report = _evaluate_planner(tmp_path, "store", "--store", uri)  # empty: filled from templates.jsonl first
        assert report["metrics"]["errors"] == 0 and report["metrics"]["n"] == handed["metrics"]["n"]
        retrieved[uri] = [row["metadata"]["retrieved_template_ids"] for row in report["per_query"]]
        again = _evaluate_planner(tmp_path, "again", "--store", uri)  # now full: used as it is
        assert [row["metadata"]["retrieved_template_ids"] for row in again["per_query"]] == retrieved[uri]
    all_templates = load_templates(resolve_dataset("planner") / "templates.jsonl")
    store = open_store(uris[0])
    try:
        assert store.count() == len(all_templates)
    finally:
        store.close()
    first = retrieved[uris[0]]
    assert all(len(ids) == 5 and set(ids) <= set(all_templates) for ids in first)  # max_templates from the store
    assert first != [row["metadata"]["retrieved_template_ids"] for row in handed["per_query"]]
    assert all(ids == first for ids in retrieved.values())  # numpy and Milvus Lite find the same templates


def test_compile_planner_on_a_store_records_it_in_the_artifact(tmp_path, planner_lm):
    bank = tmp_path / "templates"
    artifact = tmp_path / "planner.json"
    assert optimize.main(["compile", "planner", "--dataset", "planner", "--lm", "fake/x", "--optimizer", "bootstrap",
                          "--max-train", "4", "--store", str(bank), "--out", str(artifact)]) == 0
    meta = json.loads((tmp_path / "planner.json.meta.json").read_text(encoding="utf-8"))
    assert meta["program"] == "TraceablePlanner" and meta["store"] and meta["templates"]["k"] == 5
    loaded = tracerag.load(artifact)  # reopens the recorded store: templates are searched, not handed over
    assert loaded.retrieve_templates("Set up a PCR for 12 samples.")
