"""The experience commands end to end: build-bank, evaluate, run and compile."""

import json
import os
from pathlib import Path

import dspy
import pytest
from conftest import FakeEngine, make_trace, write_traces

import optimize
import tracerag
from tracerag.datasets.smarthome import split_of


@pytest.fixture(autouse=True)
def session_embedder(embedder, monkeypatch):
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)


@pytest.fixture
def use_fake_lm(monkeypatch):
    engines = []

    def make(*args, **kwargs):
        engines.append(FakeEngine(sufficiency=[True]))
        return dspy.LM("fake/model", engine=engines[-1], cache=False, num_retries=0)

    monkeypatch.setattr(tracerag.config, "make_lm", make)
    yield engines
    dspy.configure(lm=None)


@pytest.fixture
def dataset(traces_dir):
    """The small traces directory plus labelled new tasks in every split."""
    questions = {"receipt": "What was the total on my lunch receipt with tax?",
                 "timezone": "If it is 8am in Denver, what time is it in Seoul?",
                 "plant": "Can my dog eat the leaves of this plant?"}
    rows = [{"id": f"t{n}", "question": q, "family": fam,
             "relevant_task_ids": [f"{fam}-{i:04d}" for i in range(1, 5)]}
            for n, (fam, q) in enumerate(list(questions.items()) * 5)]
    assert {split_of(r["id"]) for r in rows} == {"train", "dev", "test"}
    (traces_dir / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return traces_dir


def test_build_bank_then_append_only_new(traces_dir, tmp_path, capsys):
    bank = str(tmp_path / "bank")
    (traces_dir / "tasks" / "broken").mkdir()
    (traces_dir / "tasks" / "broken" / "trace.json").write_text("{", encoding="utf-8")
    assert optimize.main(["build-bank", "--traces", str(traces_dir), "--bank", bank, "--max-skipped", "10%"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert (report["added"], report["incorrect_skipped"], report["corrupt_skipped"]) == (12, 1, 1)
    assert report["read"] == {"read": 14, "kept": 13, "normalised": {}, "skipped": {"not JSON": 1}}
    assert f"{traces_dir}: read 14 traces, kept 13; skipped: not JSON 1" in err
    assert "broken/trace.json: invalid JSON" in err

    assert optimize.main(["build-bank", "--traces", str(traces_dir), "--bank", bank]) == 2
    assert "--append" in capsys.readouterr().err

    write_traces(traces_dir, [make_trace("plant", 9)])
    assert optimize.main(["build-bank", "--traces", str(traces_dir), "--bank", bank, "--append",
                          "--max-skipped", "0.1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["added"], report["already_in_bank"], report["bank_size"]) == (1, 12, 13)


def test_evaluate_bundled_test_split_without_lm(tmp_path, capsys):
    """The issue's figure: hit@5 >= 0.90 on the bundled test split with no LM."""
    out = tmp_path / "report.json"
    assert optimize.main(["evaluate", "experience", "--dataset", "experience", "--split", "test",
                          "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["program"] == "ExperienceRetrieval" and report["k"] == 5 and report["n"] >= 60
    assert report["metrics"]["hit@5"] >= 0.90 and report["metrics"]["mrr"] > 0.8
    assert report["metrics"]["lm_calls_per_query"] == 0 and report["metrics"]["errors"] == 0
    assert {"recall@5", "hit@5", "mrr"} <= set(report["breakdown"]["family"]["receipt-total"])
    assert "hit@5" in capsys.readouterr().out


def test_evaluate_with_the_lm_judges_usefulness(dataset, tmp_path, use_fake_lm):
    out = tmp_path / "report.json"
    assert optimize.main(["evaluate", "experience", "--dataset", str(dataset), "--split", "all", "--lm", "fake/x",
                          "--max-rounds", "2", "--out", str(out)]) == 0
    metrics = json.loads(out.read_text(encoding="utf-8"))["metrics"]
    assert metrics["usefulness"] == 0.75 and metrics["hit@5"] == 1.0
    assert metrics["lm_calls_per_query"] == 3  # rewrite, summary, sufficiency (sufficient at once)
    assert "JudgeExperience" in use_fake_lm[0].calls


def test_evaluate_with_a_dead_lm_equals_the_no_lm_run_marked(dataset, tmp_path, monkeypatch):
    """An LM that fails every call scores exactly what no LM scores, with no error and every fallback counted."""
    base = ["evaluate", "experience", "--dataset", str(dataset), "--split", "all", "--max-rounds", "2"]
    assert optimize.main([*base, "--out", str(tmp_path / "no_lm.json")]) == 0
    monkeypatch.setattr(tracerag.config, "make_lm", lambda *a, **k: dspy.LM(
        "fake/dead", engine=FakeEngine(mode="error"), cache=False, num_retries=0))
    try:
        assert optimize.main([*base, "--lm", "fake/dead", "--out", str(tmp_path / "dead.json")]) == 1  # said, loudly
    finally:
        dspy.configure(lm=None)
    no_lm, dead = (json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8")) for name in ("no_lm", "dead"))
    for with_lm, without in zip(dead["per_query"], no_lm["per_query"], strict=True):
        for key in ("queries", "ranked", "used", "experience", "rounds"):
            assert with_lm[key] == without[key], key
        # the usefulness judge is an LM call of the evaluation: its fallback is counted too
        assert with_lm["error"] is None and with_lm["lm_fallbacks"] == ["rewrite", "summarize", "check", "judge"]
    m = dead["metrics"]
    assert m["hit@5"] == no_lm["metrics"]["hit@5"] and m["errors"] == 0 and m["lm_fallback_rate"] == 1.0
    assert m["lm_fallbacks"] == {stage: m["n"] for stage in ("check", "judge", "rewrite", "summarize")}
    assert m["lm_calls_per_query"] < 1  # the breaker stops calling a dead LM after a few failures
    assert no_lm["metrics"]["lm_fallback_rate"] == 0.0


def test_run_prints_the_section(traces_dir, tmp_path, capsys):
    bank = str(tmp_path / "bank")
    assert optimize.main(["build-bank", "--traces", str(traces_dir), "--bank", bank]) == 0
    capsys.readouterr()
    assert optimize.main(["run", "experience", "--bank", bank, "--query", "Total of this receipt with tax?"]) == 0
    out = capsys.readouterr().out
    assert '"receipt-' in out and "## Experience from Similar Tasks" in out
    # without --bank or --dataset: the bundled traces, as tracerag serve and tracerag.build("experience") use
    assert optimize.main(["run", "experience", "--query", "Total of this receipt with tax?"]) == 0
    assert '"task_ids": [' in capsys.readouterr().out


def test_compile_with_bootstrap_and_load(dataset, tmp_path, use_fake_lm, capsys):
    out = tmp_path / "exp.json"
    assert optimize.main(["compile", "experience", "--dataset", str(dataset), "--lm", "fake/x",
                          "--optimizer", "bootstrap", "--out", str(out)]) == 0
    state = json.loads(out.read_text(encoding="utf-8"))
    assert state["summarize"]["demos"] and state["rewrite"]["demos"]
    meta = json.loads(Path(f"{out}.meta.json").read_text(encoding="utf-8"))
    assert meta["program"] == "ExperienceRetrieval" and meta["store"].endswith("exp.json.bank")
    assert meta["scores"]["dev_experience_score_after"] >= meta["scores"]["dev_experience_score_before"]
    program = tracerag.load(out)
    assert program.config.enable and len(program.stored_ids()) == 12 and program.summarize.demos


def test_compile_with_gepa_reflects_and_saves(dataset, tmp_path, use_fake_lm):
    # two relevant ids that are not in the bank keep recall below 1, so GEPA has something to reflect on
    rows = [json.loads(line) for line in (dataset / "queries.jsonl").read_text().splitlines()]
    (dataset / "queries.jsonl").write_text("".join(json.dumps({**r, "relevant_task_ids": r["relevant_task_ids"] +
                                                               ["gone-1", "gone-2"]}) + "\n" for r in rows))
    out = tmp_path / "gepa.json"
    assert optimize.main(["compile", "experience", "--dataset", str(dataset), "--lm", "fake/x", "--optimizer", "gepa",
                          "--max-metric-calls", "40", "--out", str(out)]) == 0
    assert "other" in use_fake_lm[0].calls  # GEPA's reflection LM was asked for a new instruction
    assert tracerag.load(out).config.enable


def test_compile_with_mipro(dataset, tmp_path, use_fake_lm):
    pytest.importorskip("optuna")
    out = tmp_path / "mipro.json"
    assert optimize.main(["compile", "experience", "--dataset", str(dataset), "--lm", "fake/x", "--optimizer", "mipro",
                          "--out", str(out)]) == 0
    meta = json.loads(Path(f"{out}.meta.json").read_text(encoding="utf-8"))
    assert meta["scores"]["optimizer"] == "mipro"
    assert tracerag.load(out).rewrite.signature.instructions


def _variant_shapes(trace: dict, n: int) -> dict:
    """The trace as other agent frameworks write it: plain-string steps, OpenAI tool dicts, 1/"true"
    for true, a list of reasoning lines, one image path, a number for a caption-less id, extra fields."""
    shaped = {**trace, "steps": [s["thought"] for s in trace["steps"]],
              "tools": [{"type": "function", "function": {"name": t}} for t in trace["tools"]],
              "is_correct": [1, "true", "Yes", True][n % 4] if trace["is_correct"] else ["false", 0, "no"][n % 3],
              "reasoning": trace["reasoning"].split(". "), "images": "photo.jpg", "run": {"model": "x", "n": n}}
    if n % 3 == 0:
        shaped["tools"] = [{"name": t} for t in trace["tools"]]
    return shaped


def test_build_bank_reads_every_trace_in_variant_shapes(dataset, tmp_path, capsys):
    """A held-out set written in the shapes real agent logs use builds the same bank as the documented
    shape: every trace indexed, every normalisation counted, and the same hit@5."""
    variants = tmp_path / "variants"
    variants.mkdir()
    (variants / "queries.jsonl").write_bytes((dataset / "queries.jsonl").read_bytes())
    paths = sorted((dataset / "tasks").glob("*/trace.json"))
    for n, path in enumerate(paths):
        shaped = json.dumps(_variant_shapes(json.loads(path.read_text(encoding="utf-8")), n), indent=1)
        target = variants / "tasks" / path.parent.name / "trace.json"
        target.parent.mkdir(parents=True)
        target.write_bytes((b"\xef\xbb\xbf" if n % 2 else b"") + shaped.replace("\n", "\r\n").encode("utf-8"))

    assert optimize.main(["build-bank", "--traces", str(variants), "--bank", str(tmp_path / "bank")]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert (report["added"], report["incorrect_skipped"], report["corrupt_skipped"]) == (12, 1, 0)
    normalised = report["read"]["normalised"]
    assert normalised["steps as strings"] == normalised["tools as dicts"] == normalised["reasoning as a list"] == 13
    assert normalised["BOM stripped"] == 6 and normalised["images as one string"] == 13
    assert normalised["is_correct as text"] + normalised["is_correct as 1/0"] == 10
    assert f"{variants}: read 13 traces, kept 13; normalised: BOM stripped 6" in err

    scores = {}
    for name, directory in (("documented", dataset), ("variants", variants)):
        out_file = tmp_path / f"{name}.json"
        assert optimize.main(["evaluate", "experience", "--dataset", str(directory), "--split", "all",
                              "--out", str(out_file)]) == 0
        scores[name] = json.loads(out_file.read_text(encoding="utf-8"))["metrics"]
    assert scores["variants"]["hit@5"] == scores["documented"]["hit@5"] == 1.0
    assert scores["variants"]["mrr"] == scores["documented"]["mrr"]


def test_build_bank_fails_in_one_line_when_too_many_traces_are_unreadable(traces_dir, tmp_path, capsys):
    for name, content in (("fifo", None), ("nul", "null")):
        path = traces_dir / "tasks" / name / "trace.json"
        path.parent.mkdir()
        os.mkfifo(path) if content is None else path.write_text(content, encoding="utf-8")
    bank = tmp_path / "bank"
    assert optimize.main(["build-bank", "--traces", str(traces_dir), "--bank", str(bank)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and not bank.exists()
    assert err.count("\n") == 1 and err.startswith(f"error: {traces_dir}: 2 of 15 traces skipped (13%), over the "
                                                   "5% allowed (--max-skipped): ")
    assert "fifo/trace.json: is a FIFO, not a regular file" in err
    assert "nul/trace.json: expected a JSON object (one trace), got null" in err
    assert optimize.main(["build-bank", "--traces", str(traces_dir), "--bank", str(bank), "--max-skipped", "20%"]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == 12


def test_evaluate_fails_on_an_unreadable_query_line_unless_allowed(dataset, tmp_path, capsys):
    queries = dataset / "queries.jsonl"
    lines = queries.read_text(encoding="utf-8").splitlines()
    lines[2] = json.dumps({**json.loads(lines[2]), "question": None})
    first = json.loads(lines[0])
    lines[0] = json.dumps({**first, "images": "photo.jpg", "source": "forum"})  # liberal: one path, extra field
    queries.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode("utf-8") + b"\n")
    base = ["evaluate", "experience", "--dataset", str(dataset), "--split", "all"]
    assert optimize.main([*base, "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        f"error: {queries}: 1 of 15 queries skipped (7%), over the 0% allowed (--max-skipped): "
        f"{queries}:3: question: expected a non-empty string, the field is missing")
    assert optimize.main([*base, "--max-skipped", "0.1", "--out", str(tmp_path / "r.json")]) == 0
    err = capsys.readouterr().err
    assert (f"{queries}: read 15 queries, kept 14; normalised: BOM stripped 1, images as one string 1; "
            "skipped: missing field 1") in err
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["n"] == 14
