"""Every metric an evaluation report carries is explained once: a line in the HTML page (``METRIC_NOTES``)
and the same line in docs/reports.md, which ``tracerag evaluate --help`` points to."""

from __future__ import annotations

import re
from pathlib import Path

import dspy
import pytest
from faults.test_agent_faults import Library
from faults.test_planner_faults import PLAYBOOK, TEMPLATES

from tracerag import CosineBank, build_experience_bank
from tracerag.agent.evaluation import evaluate_agent
from tracerag.agent.search_agent import SearchAgent
from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.commands.evaluation import evaluate_commands
from tracerag.datasets.smarthome import LabelledQuery, Target
from tracerag.experience.evaluation import evaluate_experience
from tracerag.experience.experience_retrieval import ExperienceRetrieval
from tracerag.planner.evaluation import evaluate_planner
from tracerag.planner.traceable_planner import TraceablePlanner
from tracerag.rag.evaluation import evaluate_rag
from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG
from tracerag.report_html import METRIC_NOTES

REPORTS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "reports.md"
QUESTION = "Do statins lower cholesterol in diabetes patients?"


def documented() -> dict[str, str]:
    """docs/reports.md's metric table: name (``recall@k`` read as ``recall``) -> meaning."""
    rows = re.findall(r"^\| `([a-z_0-9@]+)` \| (.+?) \|$", REPORTS_PAGE.read_text(encoding="utf-8"), re.M)
    return {name.split("@")[0]: meaning.replace("`", "") for name, meaning in rows}


def test_the_docs_table_and_the_page_explain_the_same_metrics_in_the_same_words():
    assert documented() == METRIC_NOTES


def test_every_metric_of_every_programs_report_is_explained(index, traces_dir, retriever, embedder, tmp_path):
    """Each program scored on two examples without an LM: every key of its metrics has a line."""
    build_experience_bank(traces_dir, tmp_path / "experience_bank", embedder)
    queries = [LabelledQuery("q0", "tiny", "打开客厅的灯", (Target("light-living-1", ("main-switch-on",)),))]
    pubmed = [dspy.Example(pmid="p0", question=QUESTION, final_decision="yes", gold_doc_ids=["100"])
              .with_inputs("question")]
    reports = [
        evaluate_commands(CommandRetrieval({"tiny": index}), {"tiny": queries}, dataset="t", progress=False),
        evaluate_experience(ExperienceRetrieval(CosineBank.load(tmp_path / "experience_bank", embedder)),
                            [dspy.Example(id="e0", question="Sum my receipt with tax.", images=[], caption=None,
                                          sub_task=None, family=None, relevant_task_ids=["receipt-0001"])
                             .with_inputs("question", "images", "caption", "sub_task")], dataset="t", progress=False),
        evaluate_rag(SelfReflectiveRAG(retriever, RAGConfig(k=4)), pubmed, dataset="t", k=4, progress=False),
        evaluate_planner(TraceablePlanner(), [dspy.Example(
            id="c0", domain="pcr", requirements="Set up a PCR.", bullets=PLAYBOOK, templates=TEMPLATES,
            gold_bullet_ids=["mat-00001"], gold_template_ids=[]).with_inputs("requirements", "bullets", "templates")],
            dataset="t", progress=False),
        evaluate_agent(SearchAgent(Library()), pubmed, dataset="t", progress=False),
    ]
    for report in reports:
        unexplained = [key for key in report["metrics"] if key.split("@")[0] not in METRIC_NOTES]
        assert not unexplained, f"{report['program']}: {unexplained} not in METRIC_NOTES nor docs/reports.md"


def test_evaluate_help_points_to_the_metrics_page(capsys):
    import optimize

    with pytest.raises(SystemExit):
        optimize.main(["evaluate", "--help"])
    assert "docs/reports.md" in " ".join(capsys.readouterr().out.split())
    assert REPORTS_PAGE.is_file()
