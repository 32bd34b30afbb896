"""The planner commands end to end on the bundled planner dataset: evaluate, compile and load."""

import json
from pathlib import Path

import dspy
import pytest
from conftest import PlannerEngine

import optimize
import tracerag


@pytest.fixture
def use_planner_lm(monkeypatch):
    engines = []

    def make(*args, **kwargs):
        engines.append(PlannerEngine(invent=False))
        return dspy.LM("fake/model", engine=engines[-1], cache=False, num_retries=0)

    monkeypatch.setattr(tracerag.config, "make_lm", make)
    yield engines
    dspy.configure(lm=None)


def test_evaluate_without_lm_reports_no_plans(tmp_path):
    out = tmp_path / "r.json"
    assert optimize.main(["evaluate", "planner", "--dataset", "planner", "--split", "test", "--out", str(out)]) == 0
    metrics = json.loads(out.read_text(encoding="utf-8"))["metrics"]
    assert metrics["n"] >= 20 and metrics["errors"] == metrics["n"] and metrics["score"] == 0.0


def test_evaluate_with_a_dead_lm_reports_no_plans_marked(tmp_path, monkeypatch):
    monkeypatch.setattr(tracerag.config, "make_lm", lambda *a, **k: dspy.LM(
        "fake/dead", engine=PlannerEngine(plan_mode="error"), cache=False, num_retries=0))
    out = tmp_path / "r.json"
    try:
        assert optimize.main(["evaluate", "planner", "--dataset", "planner", "--split", "test", "--lm", "fake/dead",
                              "--allow-no-lm", "--out", str(out)]) == 0
    finally:
        dspy.configure(lm=None)
    metrics = json.loads(out.read_text(encoding="utf-8"))["metrics"]
    assert metrics["errors"] == metrics["n"] and metrics["score"] == 0.0  # what no LM scores
    assert metrics["lm_fallback_rate"] == 1.0 and metrics["lm_fallbacks"] == {"generate": metrics["n"]}
    assert metrics["lm_calls_per_query"] < 1  # the breaker stops calling a dead LM after a few failures


def test_evaluate_and_compile_with_the_fake_lm(tmp_path, use_planner_lm):
    out = tmp_path / "r.json"
    assert optimize.main(["evaluate", "planner", "--dataset", "planner", "--split", "dev", "--lm", "fake/x",
                          "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    m = report["metrics"]
    assert m["errors"] == 0 and m["lm_calls_per_query"] == 1 and m["citation_validity"] == 1.0
    assert 0 < m["used_recall"] < 1 and m["hallucinated_per_plan"] == 0
    row = report["per_query"][0]
    assert row["metadata"]["retrieved_bullet_ids"] and row["metadata"]["usage"]["total_tokens"] > 0

    artifact = tmp_path / "planner.json"
    assert optimize.main(["compile", "planner", "--dataset", "planner", "--lm", "fake/x", "--optimizer", "gepa",
                          "--max-metric-calls", "30", "--out", str(artifact)]) == 0
    meta = json.loads(Path(f"{artifact}.meta.json").read_text(encoding="utf-8"))
    assert meta["program"] == "TraceablePlanner" and "dev_planner_score_after" in meta["scores"]
    assert "other" in use_planner_lm[-1].calls  # GEPA's reflection ran
    assert tracerag.load(artifact).generate.signature.instructions


def test_evaluate_refuses_a_playbook_outside_the_dataset_and_skipped_cases(tmp_path, capsys):
    import shutil

    from tracerag.datasets.smarthome import BUNDLED_ROOT

    dataset = tmp_path / "planner"
    shutil.copytree(BUNDLED_ROOT / "planner", dataset)
    cases = dataset / "cases.jsonl"
    lines = cases.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    args = ["evaluate", "planner", "--dataset", str(dataset), "--split", "all", "--out", str(tmp_path / "r.json")]

    cases.write_text("\n".join([json.dumps({**row, "playbook": "/etc/hostname"}), *lines[1:]]) + "\n", encoding="utf-8")
    assert optimize.main(args) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (f"error: {cases}:1: field 'playbook': '/etc/hostname' is not a file inside "
                                            f"the dataset directory {dataset}; give a path relative to it")

    cases.write_text("\n".join([json.dumps({**row, "bullet_ids": 5}), *lines[1:]]) + "\n", encoding="utf-8")
    assert optimize.main(args) == 2
    err = capsys.readouterr().err
    assert f"{cases}: read 70 cases, kept 69; skipped: bad bullet_ids 1" in err
    assert err.strip().splitlines()[-1].startswith(f"error: {cases}: 1 of 70 cases skipped")
    assert optimize.main([*args, "--max-skipped", "5%"]) == 0
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["metrics"]["n"] == 69
