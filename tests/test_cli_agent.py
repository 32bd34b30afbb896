"""The agent commands end to end: the fake chat LM drives the real local MCP tool server (a child
process over stdio, on the bundled PubMedQA abstracts), and successful runs grow an experience bank."""

import json
from pathlib import Path

import dspy
import pytest
from conftest import AgentEngine

import optimize
import tracerag
from tracerag.datasets.pubmedqa import load_pubmedqa_questions
from tracerag.memory.traces import load_traces

QUESTION = "Does telephone counselling increase mammography screening among women?"


@pytest.fixture(scope="module")
def tool_cache(tmp_path_factory):
    """One cache for the module: the tool server ingests the bundled abstracts once."""
    return tmp_path_factory.mktemp("tool-cache")


@pytest.fixture(autouse=True)
def offline_tools(tool_cache, monkeypatch, embedder, tmp_path):
    monkeypatch.setenv("TRACERAG_CACHE_DIR", str(tool_cache))
    monkeypatch.setenv("TRACERAG_EMBEDDER", "lexical")  # the server's embedder (fast to ingest)
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)  # build-bank's
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def engines(cli_lm):
    return cli_lm(AgentEngine)


def test_run_agent_prints_a_cited_trajectory_from_the_local_mcp_server(engines, capsys):
    assert optimize.main(["run", "agent", "--question", QUESTION, "--lm", "fake/model",
                          "--jsonl", "runs.jsonl", "--traces", "runs"]) == 0
    out = capsys.readouterr().out
    summary = json.loads(next(line for line in out.splitlines() if line.startswith('{"stop_reason"')))
    assert summary["stop_reason"] == "answered" and summary["tool_calls"] == 1
    assert summary["ids_cited"] == ["10808977"] and summary["invalid_citations"] == []  # the question's own abstract
    assert '<snippet id="10808977">' in out and out.count("<tool_output>") == 1
    line = json.loads(Path("runs.jsonl").read_text(encoding="utf-8"))
    assert line["tool_calls"][0]["tool"] == "pubmed_search" and line["tool_calls"][0]["parameters"] == {"limit": 3}
    assert [t.task_id for t in load_traces("runs").traces] == [f"agent-{line['id']}"]
    assert engines[0].stops[0] == ("</call_tool>", "</call>", "<tool_output>")


def test_evaluate_agent_reports_and_exports_the_correct_runs_into_a_bank(engines, capsys):
    assert optimize.main(["evaluate", "agent", "--dataset", "pubmedqa", "--split", "dev", "--limit", "4",
                          "--lm", "fake/model", "--out", "report.json", "--jsonl", "runs.jsonl",
                          "--traces", "runs"]) == 0
    report = json.loads(Path("report.json").read_text(encoding="utf-8"))
    metrics = report["metrics"]
    questions = load_pubmedqa_questions("pubmedqa", "dev")[:4]
    assert report["n"] == 4 and metrics["tool_calls"] == 1.0 and metrics["hallucinated_outputs"] == 0.0
    assert metrics["citation_validity"] == 1.0 and metrics["answered_rate"] == 1.0
    assert metrics["accuracy"] == pytest.approx(sum(q.final_decision == "yes" for q in questions) / 4)
    assert metrics["gold_found"] >= 0.75  # the local search finds the question's own abstract
    assert len(Path("runs.jsonl").read_text(encoding="utf-8").splitlines()) == 4
    correct = {f"agent-{q.pmid}" for q in questions if q.final_decision == "yes"}
    assert {t.task_id for t in load_traces("runs").traces} == correct  # wrong decisions stay out of the bank
    assert optimize.main(["build-bank", "--traces", "runs", "--bank", "bank"]) == 0
    assert len(json.loads(Path("bank/task_ids.json").read_text(encoding="utf-8"))) == len(correct)


@pytest.mark.slow  # several seconds: the whole agent through the command line
def test_compile_agent_and_load_it_with_the_apps_tools(engines, capsys):
    from tracerag.tools.mcp_client import Toolbox

    assert optimize.main(["compile", "agent", "--dataset", "pubmedqa", "--lm", "fake/model", "--max-train", "6",
                          "--optimizer", "bootstrap", "--out", "agent.json"]) == 0
    meta = json.loads(Path("agent.json.meta.json").read_text(encoding="utf-8"))
    assert meta["program"] == "SearchAgent" and "dev_agent_score_after" in meta["scores"]
    with Toolbox.open(embedder="lexical") as tools:
        program = tracerag.load("agent.json", tools=tools)
        assert program.policy.demos
        dspy.configure(lm=dspy.LM("fake/model", engine=AgentEngine(), cache=False, num_retries=0))
        assert program(question=QUESTION).trajectory.ids_cited == ["10808977"]


def test_a_tool_server_that_does_not_start_is_a_clear_error(capsys):
    assert optimize.main(["run", "agent", "--question", QUESTION, "--tool", "false"]) == 2
    assert "error:" in capsys.readouterr().err


def _summary(out: str) -> dict:
    return json.loads(next(line for line in out.splitlines() if line.startswith('{"stop_reason"')))


@pytest.mark.slow  # several seconds: the whole agent through the command line
def test_a_failing_lm_answers_as_the_run_without_an_lm(cli_lm, monkeypatch, capsys):
    monkeypatch.delenv("TRACERAG_LM", raising=False)
    assert optimize.main(["run", "agent", "--question", QUESTION]) == 0
    out = capsys.readouterr().out
    no_lm, printed = _summary(out), out.split('{"stop_reason"')[0]
    cli_lm(AgentEngine, agent="error")
    assert optimize.main(["run", "agent", "--question", QUESTION, "--lm", "fake/model"]) == 1  # said, after it
    printed_now = capsys.readouterr()
    out = printed_now.out
    assert "error: the LM (fake/model) never answered" in printed_now.err
    failed = _summary(out)
    assert no_lm["stop_reason"] == "no_lm" and failed["stop_reason"] == "lm_error" and failed["steps"] == 1
    assert failed["ids_cited"] == no_lm["ids_cited"] and "10808977" in failed["ids_cited"]
    assert out.split('{"stop_reason"')[0] == printed and "<answer>" in printed  # the same search, answer, cites
