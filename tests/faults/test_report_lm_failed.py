"""Every evaluation report says, row by row, whether the LM failed for that example (``lm_failed``),
apart from any program hint (the commands report's ``hint`` is the bulk plan's). Each program is scored
against a real endpoint on 127.0.0.1 that answers 500 (every row failed) and one that answers well
(no row failed)."""

import dspy
from conftest import AgentEngine, FakeEngine, PlannerEngine
from faults.test_agent_faults import Library
from faults.test_planner_faults import PLAYBOOK, TEMPLATES
from lm_server import StubLMServer

import tracerag
from tracerag.agent.evaluation import evaluate_agent
from tracerag.agent.search_agent import SearchAgent
from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.commands.evaluation import evaluate_commands
from tracerag.datasets.smarthome import LabelledQuery, Target
from tracerag.experience.evaluation import evaluate_experience
from tracerag.experience.experience_retrieval import ExperienceConfig, ExperienceRetrieval
from tracerag.memory.experience_bank import build_experience_bank
from tracerag.planner.evaluation import evaluate_planner
from tracerag.planner.traceable_planner import TraceablePlanner
from tracerag.rag.evaluation import evaluate_rag
from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG
from tracerag.stores.cosine_bank import CosineBank

QUESTIONS = ["Do statins lower cholesterol in diabetes patients?", "Does aspirin raise bleeding risk?"]


def rows(engine, mode, evaluate):
    with StubLMServer(engine, mode) as stub:
        tracerag.configure(lm=stub.lm(retries=0))
        return evaluate()["per_query"]


def assert_marked(evaluate, engine):
    failed = rows(engine, "http500", evaluate)
    assert failed and all(r["lm_failed"] is True and r["lm_fallbacks"] for r in failed)
    tracerag.lm.failures.reset_lm_guard()  # the dead endpoint opened the breaker
    good = rows(engine, "good", evaluate)
    assert good and all(r["lm_failed"] is False and r["lm_fallbacks"] == [] for r in good)


def test_commands(index):
    home = "tiny"
    queries = [LabelledQuery(f"q{n}", home, q, (Target("light-living-1", ("main-switch-on",)),))
               for n, q in enumerate(["打开客厅的灯", "所有窗帘都关上"])]
    program = CommandRetrieval({home: index})
    failed = rows(FakeEngine(), "http500", lambda: evaluate_commands(program, {home: queries}, dataset="t",
                                                                     progress=False))
    assert all(r["lm_failed"] and r["lm_fallbacks"] == ["parse"] for r in failed)
    assert {r["hint"] for r in failed} != {"lm_failed"}  # the bulk plan's hint, not the LM's


def test_experience(traces_dir, tmp_path, embedder):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    program = ExperienceRetrieval(CosineBank.load(tmp_path / "bank", embedder), ExperienceConfig(enable=True))
    examples = [dspy.Example(id=f"e{n}", question=q, images=[], caption=None, sub_task=None, family=None,
                             relevant_task_ids=["receipt-0001"]
                             ).with_inputs("question", "images", "caption", "sub_task")
                for n, q in enumerate(["Sum my receipt with tax.", "Convert noon in Oslo to Tokyo time."])]
    assert_marked(lambda: evaluate_experience(program, examples, dataset="t", progress=False), FakeEngine())


def test_rag(retriever):
    program = SelfReflectiveRAG(retriever, RAGConfig(k=4))
    examples = [dspy.Example(pmid=f"p{n}", question=q, final_decision="yes", gold_doc_ids=["100"])
                .with_inputs("question") for n, q in enumerate(QUESTIONS)]
    assert_marked(lambda: evaluate_rag(program, examples, dataset="t", k=4, progress=False), FakeEngine())


def test_planner():
    examples = [dspy.Example(id=f"c{n}", domain="pcr", requirements=r, bullets=PLAYBOOK, templates=TEMPLATES,
                             gold_bullet_ids=["mat-00001"], gold_template_ids=[]).with_inputs(
                                 "requirements", "bullets", "templates")
                for n, r in enumerate(["Set up a PCR.", "Run a gel."])]
    assert_marked(lambda: evaluate_planner(TraceablePlanner(), examples, dataset="t", progress=False),
                  PlannerEngine(invent=False))


def test_agent():
    examples = [dspy.Example(pmid=f"a{n}", question=q, final_decision="yes", gold_doc_ids=["101"])
                .with_inputs("question") for n, q in enumerate(QUESTIONS)]
    assert_marked(lambda: evaluate_agent(SearchAgent(Library()), examples, dataset="t", progress=False),
                  AgentEngine())
