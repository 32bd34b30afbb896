"""The RAG commands end to end: ingest, evaluate (no LM and fake LM), run, compile and load."""

import json
from pathlib import Path

import pytest
from conftest import FakeEngine

import optimize
import tracerag
from tracerag.datasets.smarthome import split_of

DOCS = {
    "11": "Statins lower LDL cholesterol in adults with diabetes. Cardiovascular events fell by a quarter.",
    "22": "Aspirin before colonoscopy does not raise bleeding risk. Bleeding rates were similar.",
    "33": "Telephone counselling increased mammography screening among women. Tailored letters helped less.",
    "44": "Vitamin D supplements did not prevent fractures in older adults. Falls were also unchanged.",
}
QUESTIONS = [("11", "Do statins lower cholesterol in diabetes?", "yes"),
             ("22", "Does aspirin raise bleeding risk at colonoscopy?", "no"),
             ("33", "Does telephone counselling increase mammography screening?", "yes"),
             ("44", "Do vitamin D supplements prevent fractures?", "no")]


@pytest.fixture(autouse=True)
def session_embedder(embedder, monkeypatch, tmp_path):
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)
    monkeypatch.setenv("TRACERAG_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def corpus(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in DOCS.items()), encoding="utf-8")
    # every question in every split (ids are hashed), so train, dev and test are all non-empty
    rows = [{"pmid": f"{pmid}", "question": q, "final_decision": d, "long_answer": ""} for pmid, q, d in QUESTIONS]
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows * 1), encoding="utf-8")
    return docs, questions


@pytest.fixture
def use_fake_lm(cli_lm):
    return cli_lm(FakeEngine)


def test_ingest_twice_embeds_once(corpus, tmp_path, capsys):
    docs, _ = corpus
    assert optimize.main(["ingest", "--docs", str(docs), "--bank", str(tmp_path / "bank")]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["documents"] == 4 and first["added"] == first["chunks"] >= 4
    assert optimize.main(["ingest", "--docs", str(docs), "--bank", str(tmp_path / "bank")]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["added"] == 0 and again["unchanged"] == first["chunks"]


def test_ingest_bad_line_names_file_line_field(tmp_path, capsys):
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "1", "text": "fine"}\n{"text": "no id"}\n', encoding="utf-8")
    assert optimize.main(["ingest", "--docs", str(docs), "--bank", str(tmp_path / "bank")]) == 2
    assert f"{docs}:2" in capsys.readouterr().err and not (tmp_path / "bank").exists()


def test_evaluate_with_the_fake_lm_stays_in_the_call_budget(corpus, tmp_path, use_fake_lm):
    docs, questions = corpus
    bank = str(tmp_path / "bank")
    assert optimize.main(["ingest", "--docs", str(docs), "--bank", bank]) == 0
    out = tmp_path / "report.json"
    assert optimize.main(["evaluate", "rag", "--dataset", str(questions), "--bank", bank, "--split", "all",
                          "--lm", "fake/x", "--k", "4", "--alce", "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    m = report["metrics"]
    assert report["program"] == "SelfReflectiveRAG" and m["recall@4"] == 1.0 and m["n"] == 4
    assert m["lm_calls_max"] <= m["lm_call_budget"] == 2 * 1 * 2 + 1 + 3  # 2 * ceil(4 / 10) * rounds + 1 + 3
    assert all(r["lm_calls"] == r["lm_calls_observed"] for r in report["per_query"])
    assert m["citation_validity"] == 1.0 and m["grounded_rate"] == 1.0 and m["citation_coverage"] == 1.0
    assert m["citation_recall"] == 1.0 and m["citation_precision"] == 1.0  # the fake judge says grounded
    assert m["accuracy"] == 0.5  # the fake always says yes


def test_evaluate_with_a_dead_endpoint_reports_what_no_lm_does(corpus, tmp_path, cli_lm):
    docs, questions = corpus
    bank = str(tmp_path / "bank")
    assert optimize.main(["ingest", "--docs", str(docs), "--bank", bank]) == 0
    reports = {}
    for name, lm in (("no_lm", []), ("dead", ["--lm", "fake/x", "--allow-no-lm"])):
        out = tmp_path / f"{name}.json"
        assert optimize.main(["evaluate", "rag", "--dataset", str(questions), "--bank", bank, "--split", "all",
                              "--k", "4", "--alce", "--out", str(out), *lm]) == 0  # --allow-no-lm: no error
        reports[name] = json.loads(out.read_text(encoding="utf-8"))
        if name == "no_lm":
            cli_lm(FakeEngine, mode="error")
    quality = ("recall@4", "mrr", "accuracy", "kept_gold", "grounded_rate", "citation_validity", "citation_coverage",
               "citation_recall", "citation_precision")
    no_lm, dead = (reports[name]["metrics"] for name in ("no_lm", "dead"))
    assert {q: dead[q] for q in quality} == {q: no_lm[q] for q in quality}
    assert no_lm["citation_validity"] == no_lm["citation_coverage"] == 1.0 and no_lm["accuracy"] is None
    assert dead["lm_fallback_rate"] == 1.0 and no_lm["lm_fallback_rate"] == 0
    assert dead["lm_fallbacks"] == {"grade": 4, "judge": 4}  # the --alce judge falls back too, counted
    for row, no_lm_row in zip(reports["dead"]["per_query"], reports["no_lm"]["per_query"], strict=True):
        assert (row["answer"], row["cited"], row["hint"]) == (no_lm_row["answer"], no_lm_row["cited"], "lm_failed")
        assert row["lm_calls"] <= dead["lm_call_budget"]


def test_run_and_compile_then_load(corpus, tmp_path, use_fake_lm, capsys):
    docs, questions = corpus
    bank = str(tmp_path / "bank")
    assert optimize.main(["ingest", "--docs", str(docs), "--bank", bank]) == 0
    capsys.readouterr()
    assert optimize.main(["run", "rag", "--bank", bank, "--query", QUESTIONS[0][1], "--lm", "fake/x"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["cited_ids"] and answer["cited_ids"][0].startswith("11#") and answer["invalid_cited_ids"] == []

    rows = [{"pmid": f"{pmid}-{n}", "question": q, "final_decision": d} for n in range(6) for pmid, q, d in QUESTIONS]
    assert {split_of(r["pmid"]) for r in rows} == {"train", "dev", "test"}
    many = tmp_path / "many.jsonl"
    many.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "rag.json"
    assert optimize.main(["compile", "rag", "--dataset", str(many), "--bank", bank, "--lm", "fake/x",
                          "--optimizer", "bootstrap", "--out", str(out)]) == 0
    meta = json.loads(Path(f"{out}.meta.json").read_text(encoding="utf-8"))
    assert meta["program"] == "SelfReflectiveRAG" and meta["metric"] == "rag_score"
    program = tracerag.load(out)
    assert program.retriever.store.bank.directory.resolve() == Path(bank).resolve() and program.answer.demos


@pytest.mark.slow
def test_evaluate_bundled_pubmedqa_test_split_without_lm(tmp_path):
    """The issue's figure: recall@10 of the question's own abstract >= 0.98 on the test split, no LM."""
    out = tmp_path / "report.json"
    assert optimize.main(["evaluate", "rag", "--dataset", "pubmedqa", "--split", "test", "--out", str(out)]) == 0
    metrics = json.loads(out.read_text(encoding="utf-8"))["metrics"]
    assert metrics["n"] >= 150 and metrics["recall@10"] >= 0.98 and metrics["lm_calls_max"] == 0


def test_ingest_prints_what_reading_did_and_skips_unstorable_documents(corpus, tmp_path, capsys):
    docs, _ = corpus
    with open(docs, "a", encoding="utf-8") as f:
        f.write('{"id": 55, "text": "lone \\ud800 surrogate"}\n')
    assert optimize.main(["ingest", "--docs", str(docs), "--bank", str(tmp_path / "bank")]) == 0
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert report["documents"] == 4 and report["read"]["skipped"] == {"text that cannot be stored": 1}
    assert (f"{docs}: read 5 documents, kept 4; normalised: id as a number 1; skipped: text that cannot be "
            f"stored 1") in out.err
    assert f"  skipped: {docs}:5: field 'text' holds a character UTF-8 cannot store" in out.err


def test_evaluate_fails_in_one_line_when_questions_were_skipped(corpus, tmp_path, capsys):
    docs, questions = corpus
    bank = str(tmp_path / "bank")
    assert optimize.main(["ingest", "--docs", str(docs), "--bank", bank]) == 0
    with open(questions, "a", encoding="utf-8") as f:
        f.write('{"pmid": "99", "final_decision": "yes"}\n')
    capsys.readouterr()
    args = ["evaluate", "rag", "--dataset", str(questions), "--bank", bank, "--split", "all",
            "--out", str(tmp_path / "r.json")]
    assert optimize.main(args) == 2
    err = capsys.readouterr().err
    assert f"{questions}: read 5 questions, kept 4; skipped: no question 1" in err
    error = [line for line in err.splitlines() if line.startswith("error:")]
    assert error == [f"error: {questions}: 1 of 5 questions skipped (20%), over the 0% allowed (--max-skipped): "
                     f"{questions}:5: field 'question' is missing or not a string"]
    assert optimize.main([*args, "--max-skipped", "0.25"]) == 0
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["metrics"]["n"] == 4
