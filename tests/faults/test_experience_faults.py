"""ExperienceRetrieval against a real OpenAI-compatible endpoint on 127.0.0.1 that fails in every way
endpoints do: the result equals the no-LM result (same queries, ranked ids, experience text and used
ids), the fallback stages are marked, the LM-call budget holds (a rewrite and a summary per round, a
check between rounds: at most 3 * rounds - 1), and a dead endpoint costs a few calls, not one per stage."""

import dspy
import pytest
from conftest import FakeEngine
from lm_server import StubLMServer

import tracerag
from tracerag.experience.experience_retrieval import ExperienceConfig, ExperienceRetrieval
from tracerag.lm.policy import policy
from tracerag.memory.experience_bank import build_experience_bank
from tracerag.stores.cosine_bank import CosineBank

QUESTIONS = ["How much did I pay for the groceries on this receipt, tax included?",
             "If it is 8am in Denver, what time is it in Seoul?",
             "Can my dog eat the leaves of this plant?"]
FAULTS = ["garbage", "empty", "null", "http500", "bad_json", "slow", "wrong_types"]
ROUNDS = 2
BUDGET = 3 * ROUNDS - 1  # rewrite + summary per round, a check between rounds


def outcome(pred):
    return {key: pred[key] for key in ("queries", "retrieved_task_ids", "task_ids", "experience", "used_task_ids",
                                       "rounds")}


@pytest.fixture
def bank(traces_dir, tmp_path, embedder):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    return CosineBank.load(tmp_path / "bank", embedder)


def program(bank, **config):
    return ExperienceRetrieval(bank, ExperienceConfig(enable=True, **config))


@pytest.fixture
def no_lm_results(bank):
    dspy.configure(lm=None)
    prog = program(bank, max_retrieval_rounds=ROUNDS)
    results = {q: prog(question=q) for q in QUESTIONS}
    assert all(p.lm_calls == 0 and p.hint is None and p.lm_fallbacks == [] and p.experience
               for p in results.values())
    return {q: outcome(p) for q, p in results.items()}


@pytest.mark.parametrize("fault", FAULTS)
def test_a_failing_endpoint_gives_the_no_lm_result_marked(bank, no_lm_results, fault):
    with StubLMServer(FakeEngine(sufficiency=[False]), fault, delay=1.5) as stub:
        tracerag.configure(lm=stub.lm(timeout=0.5, retries=0))
        prog = program(bank, max_retrieval_rounds=ROUNDS)
        preds = [prog(question=q) for q in QUESTIONS]
        for question, pred in zip(QUESTIONS, preds, strict=True):
            assert outcome(pred) == no_lm_results[question], question
            assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["rewrite", "summarize", "check"]
            assert pred.error is None and pred.section and len(pred.lm_errors) == 3
            assert pred.lm_calls <= BUDGET
        # every call made is counted, and the breaker stops calling a dead endpoint
        assert sum(p.lm_calls for p in preds) == len(stub.requests) == policy().breaker_failures


def test_a_summary_fault_gives_the_extractive_experience_of_the_same_candidates(bank):
    with StubLMServer(FakeEngine(), modes={"SummarizeExperience": "http500"}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = program(bank)(question=QUESTIONS[0])
        extractive = program(bank, enable_summary=False)(question=QUESTIONS[0])  # the same rewrite, no summary
    assert pred.queries[0][1:] == [f"how to solve: {QUESTIONS[0]}"]  # the rewrite was used
    assert outcome(pred) == outcome(extractive) and pred.experience.startswith("- For a similar task")
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["summarize"] and pred.error is None
    assert pred.lm_calls == 2 and [name for name, _ in stub.requests][:2] == ["RewriteQuery", "SummarizeExperience"]


def test_a_garbage_sufficiency_check_accepts_the_experience(bank):
    with StubLMServer(FakeEngine(sufficiency=[False]), modes={"CheckSufficiency": "garbage"}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = program(bank, max_retrieval_rounds=2)(question=QUESTIONS[0])
    assert pred.rounds == 1 and pred.experience.startswith("Use the tools of receipt-")  # the LM's summary
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["check"] and pred.lm_calls == 3
    assert stub.requests == [("RewriteQuery", "good"), ("SummarizeExperience", "good"), ("CheckSufficiency", "garbage")]


def test_a_rewrite_of_the_wrong_types_searches_the_raw_task(bank, no_lm_results):
    with StubLMServer(FakeEngine(sufficiency=[True]), modes={"RewriteQuery": "wrong_types"}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = program(bank, max_retrieval_rounds=ROUNDS)(question=QUESTIONS[0])
    no_lm = no_lm_results[QUESTIONS[0]]
    assert pred.queries == no_lm["queries"] and pred.task_ids == no_lm["task_ids"]  # the no-LM search
    assert pred.experience.startswith("Use the tools of") and pred.used_task_ids == pred.task_ids[0][:2]
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["rewrite"] and pred.lm_calls == 3
    assert [name for name, _ in stub.requests] == ["RewriteQuery", "SummarizeExperience", "CheckSufficiency"]


def test_a_good_endpoint_is_used_within_the_budget(bank):
    with StubLMServer(FakeEngine(sufficiency=[False])) as stub:
        tracerag.configure(lm=stub.lm())
        pred = program(bank, max_retrieval_rounds=ROUNDS)(question=QUESTIONS[0])
    assert pred.rounds == ROUNDS and pred.experience.startswith("Use the tools of receipt-")
    assert pred.queries[0] == [QUESTIONS[0], f"how to solve: {QUESTIONS[0]}"]
    assert pred.hint is None and pred.lm_fallbacks == [] and pred.error is None
    assert pred.lm_calls == BUDGET == len(stub.requests)  # never sufficient: the whole budget, no more
    assert [name for name, _ in stub.requests] == ["RewriteQuery", "SummarizeExperience", "CheckSufficiency",
                                                   "RewriteQuery", "SummarizeExperience"]


def test_fenced_json_is_read_or_falls_back_never_worse(bank, no_lm_results):
    with StubLMServer(FakeEngine(sufficiency=[True]), "fenced") as stub:
        tracerag.configure(lm=stub.lm())
        pred = program(bank, max_retrieval_rounds=ROUNDS)(question=QUESTIONS[0])
    assert pred.experience and pred.error is None and pred.lm_calls == len(stub.requests) <= BUDGET
    if "rewrite" in pred.lm_fallbacks:
        assert pred.queries == no_lm_results[QUESTIONS[0]]["queries"]
    if "summarize" in pred.lm_fallbacks:
        assert pred.experience.startswith("- For a similar task")


def test_the_predictors_own_lm_is_used(bank):
    with StubLMServer(FakeEngine(sufficiency=[True])) as stub:
        dspy.configure(lm=None)
        prog = program(bank)
        prog.set_lm(stub.lm())
        pred = prog(question=QUESTIONS[0])
        assert pred.lm_calls == 2 and pred.experience.startswith("Use the tools of") and pred.hint is None
        assert len(pred.queries[0]) == 2  # the raw task and the rewrite
        with dspy.context(lm=stub.lm()):
            assert program(bank)(question=QUESTIONS[0]).lm_calls == 2
        assert [name for name, _ in stub.requests] == ["RewriteQuery", "SummarizeExperience"] * 2
