"""A run's LM fault budget: calls that bring no reply may cost a run 40 s plus 10 % of its time, each call
is cut at what is left, and once it is spent every stage takes its no-LM path at once, counted, after one
warning line; a stage that fails while the others answer spends half of it, then falls back alone. A reply
that comes back but does not parse costs nothing from it. The fault-cost bounds at
the default settings, end to end, are in test_fault_cost_at_defaults.py (slow)."""

from __future__ import annotations

import logging
import math

import dspy
import pytest
from conftest import FakeEngine
from lm_server import StubLMServer, after_a_tool_call, half_of_inputs

import tracerag
from tracerag.config import Settings
from tracerag.evaluation import run_examples
from tracerag.experience.evaluation import evaluate_experience
from tracerag.lm.fault_budget import FaultBudget, current_budget, lm_fault_budget
from tracerag.lm.policy import LMPolicy, policy, set_policy
from tracerag.programs.guarded_step import Stages

BUDGET_SPENT = "the run's LM fault budget is spent"


class Clock:
    """A clock the test moves: an LM call 'takes' as long as its engine says."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ClockedEngine:
    """FakeEngine answers ("error": a dead server; "garbage": a reply that does not parse), each call
    taking ``seconds`` on ``clock``."""

    def __init__(self, clock: Clock, seconds: float, mode: str) -> None:
        self.clock, self.seconds, self.inner, self.calls = clock, seconds, FakeEngine(mode=mode), 0

    def complete(self, request):
        self.calls += 1
        self.clock.now += self.seconds
        return self.inner.complete(request)


def clocked_lm(clock: Clock, seconds: float, mode: str) -> tuple[dspy.LM, ClockedEngine]:
    engine = ClockedEngine(clock, seconds, mode)
    return dspy.LM("fake/model", engine=engine, cache=False, num_retries=0), engine


def ask(stages: Stages):
    return stages.call("answer", dspy.Predict("question -> answer"), question="Is it on?")


def test_the_budget_is_its_seconds_plus_a_share_of_the_run_and_stays_spent():
    clock = Clock()
    budget = FaultBudget(45, clock=clock)
    assert budget.remaining() == 45 and budget.admits()
    clock.now += 100  # 100 s of run: 10 s more may fail
    budget.charge(50)
    assert budget.remaining() == pytest.approx(5) and budget.admits() and not budget.spent
    budget.charge(5)
    assert budget.spent and budget.remaining() == 0 and not budget.admits()
    clock.now += 10_000  # spent is spent: a long run after it does not earn it back
    assert not budget.admits()
    unlimited = FaultBudget(math.inf, clock=clock)
    unlimited.charge(1e9)
    assert unlimited.admits() and unlimited.remaining() == math.inf
    with pytest.raises(ValueError, match="seconds >= 0"):
        FaultBudget(-1)


def test_failed_calls_spend_the_budget_then_every_stage_falls_back_without_a_call(caplog):
    clock = Clock()
    lm, engine = clocked_lm(clock, 20.0, "error")
    stages = Stages()
    with dspy.context(lm=lm), lm_fault_budget(FaultBudget(45, clock=clock)) as budget, \
            caplog.at_level(logging.WARNING, logger="tracerag.lm"):
        results = [ask(stages) for _ in range(6)]
    # 20 s a failure: after two, 45 + 4 - 40 = 9 s are left; the third spends it (45 + 6 - 60 < 0)
    assert results == [None] * 6 and engine.calls == stages.calls == 3 and budget.spent
    assert stages.fallbacks == ["answer"] * 6 and stages.errors[3:] == [f"answer: {BUDGET_SPENT}"] * 3
    assert policy().breaker_failures > 3  # the budget stopped the calls, not the breaker
    notices = [r.getMessage() for r in caplog.records if "fault budget" in r.getMessage()]
    assert len(notices) == 1 and "failed for 60.0 s in this run (3 calls)" in notices[0]
    assert "TRACERAG_LM_FAULT_BUDGET" in notices[0] and "no-LM path" in notices[0]


def test_a_reply_that_does_not_parse_costs_nothing_from_the_budget():
    clock = Clock()
    lm, engine = clocked_lm(clock, 20.0, "garbage")
    stages = Stages()
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False)), \
            lm_fault_budget(FaultBudget(45, clock=clock)) as budget:
        results = [ask(stages) for _ in range(4)]  # 80 s of replies the model got wrong
    assert results == [None] * 4 and engine.calls == 4
    assert budget.charged == 0 and budget.admits()


def test_outside_a_run_there_is_no_budget():
    assert current_budget() is None
    with lm_fault_budget() as budget:
        assert current_budget() is budget and budget.seconds == policy().fault_budget == LMPolicy.fault_budget
        with lm_fault_budget(1) as inner:  # a run inside a run spends the outer one's
            assert inner is budget
    assert current_budget() is None


def test_an_evaluations_threads_share_one_budget():
    seen = []

    def score(item):
        seen.append(current_budget())
        return {"item": item}

    assert run_examples(score, list(range(6)), num_threads=3, desc="t", unit="x", progress=False) == \
        [{"item": n} for n in range(6)]
    assert len(seen) == 6 and seen[0] is not None and all(b is seen[0] for b in seen)


@pytest.mark.parametrize("built", ["make_lm", "dspy.LM"])
def test_a_call_is_cut_at_what_the_budget_has_left(built):
    """A stalled endpoint: the call of a bounded LM (30 s a try, 2 retries: 93 s), or of a user's own
    ``dspy.LM`` with a 30 s timeout of its own, ends when the 0.15 s the budget has left are gone, and the
    next stage makes no request."""
    with StubLMServer(FakeEngine(), "slow", delay=30.0) as stub:
        lm = stub.lm(timeout=30.0, retries=2) if built == "make_lm" else stub.user_lm(timeout=30.0)
        stages = Stages()
        with dspy.context(lm=lm), lm_fault_budget(FaultBudget(0.15, share=0.0)) as budget:
            first = ask(stages)
            second = ask(stages)
    assert first is second is None and len(stub.requests) == 1 and budget.spent  # unbounded it waits 93 s
    assert stages.errors[1] == f"answer: {BUDGET_SPENT}"
    # the first call's line says the budget cut it, not that the endpoint kept no 30 s timeout
    assert "cut after 0." in stages.errors[0] and "run's LM fault budget had left" in stages.errors[0]
    assert "no reply within" not in stages.errors[0]


def test_the_budget_is_configured_kept_and_read_from_the_environment(monkeypatch):
    before, given = policy(), set(tracerag.config._state["given"])
    try:
        monkeypatch.setenv("TRACERAG_LM_FAULT_BUDGET", "12.5")
        assert tracerag.configure().lm_fault_budget == 12.5 == policy().fault_budget
        monkeypatch.delenv("TRACERAG_LM_FAULT_BUDGET")
        assert tracerag.configure(fault_budget=math.inf).lm_fault_budget == math.inf
        assert tracerag.configure(timeout=5).lm_fault_budget == math.inf  # kept by a call that does not give it
        monkeypatch.setenv("TRACERAG_LM_FAULT_BUDGET", "soon")
        with pytest.raises(ValueError, match="TRACERAG_LM_FAULT_BUDGET 'soon' is not a number"):
            Settings.resolve()
    finally:  # as a new process: the policy as it was, no setting "given"
        set_policy(**before.__dict__)
        tracerag.config._state["given"] = given


class _Program:
    """Stands in for ExperienceRetrieval: every task gets the same experience, no LM call."""

    class config:  # noqa: N801 - the attribute evaluate_experience reads
        @staticmethod
        def model_dump():
            return {}

    def __call__(self, question):
        return dspy.Prediction(task_ids=[["t1"]], used_task_ids=["t1"], experience="Use the receipt tool.",
                               rounds=1, lm_calls=0, error=None, queries=[[question]], lm_fallbacks=[])


def test_the_experience_judge_is_counted_and_its_failures_are_fallbacks():
    examples = [dspy.Example(id=f"q{n}", question=f"task {n}", family="f", images=[], caption=None,
                             relevant_task_ids=["t1"], reference_strategy="Read the total.").with_inputs("question")
                for n in range(2)]
    with StubLMServer(FakeEngine(), modes={"JudgeExperience": "http500"}) as stub:
        with dspy.context(lm=stub.lm()):
            report = evaluate_experience(_Program(), examples, dataset="d", judge=True, progress=False)
    rows = report["per_query"]
    assert [r["lm_calls_judge"] for r in rows] == [1, 1] == [r["lm_calls_observed"] for r in rows]
    assert all(r["lm_fallbacks"] == ["judge"] and r["lm_failed"] and r["usefulness"] is None for r in rows)
    assert report["metrics"]["lm_calls_judge"] == 2 == len(stub.requests)
    assert report["metrics"]["lm_fallbacks"] == {"judge": 2} and report["metrics"]["lm_fallback_rate"] == 1.0
    # the run's fault budget is in the report: the two failed judge calls, not enough to spend it
    spent = report["metrics"]["lm_fault_budget"]
    assert spent["failed_calls"] == 2 and not spent["spent"] and spent["stages_shut"] == [] and spent["seconds"] == 40


def test_the_stub_fails_part_of_a_stages_calls_only():
    assert half_of_inputs("ParseCommand", "turn on the lamp") != half_of_inputs("ParseCommand", "turn on the fan")
    assert after_a_tool_call("AgentStep", "[[ ## trajectory ## ]]\n<tool_output>x</tool_output>")
    assert not after_a_tool_call("AgentStep", "[[ ## trajectory ## ]]\n")


def test_a_stage_failing_alone_spends_its_share_then_falls_back_while_the_others_keep_the_lm(caplog):
    """One endpoint (two LM objects with the same model: the breaker's and the budget's key) answers the
    ``answer`` stage in 1 s and fails the ``verify`` stage after 15 s: verify may spend half the budget,
    then it alone falls back for the rest of the run; the answers keep coming from the LM."""
    clock = Clock()
    good, good_engine = clocked_lm(clock, 1.0, "good")
    bad, bad_engine = clocked_lm(clock, 15.0, "error")
    answer, verify = dspy.Predict("question -> answer"), dspy.Predict("question -> verdict")
    answer.lm, verify.lm = good, bad
    stages = Stages()
    with lm_fault_budget(FaultBudget(40, clock=clock)) as budget, \
            caplog.at_level(logging.WARNING, logger="tracerag.lm"):
        for _ in range(5):
            assert stages.call("answer", answer, question="Is it on?") is not None
            stages.call("verify", verify, question="Is it on?")
    # 40 s + 10 % of the run: verify's share is half, about 21 s; its second failure (30 s) spends it
    assert bad_engine.calls == 2 and good_engine.calls == 5 and stages.calls == 7
    assert [key[1] for key in budget.shut] == ["verify"] and not budget.spent and budget.admits()
    assert stages.fallbacks == ["verify"] * 5
    assert stages.errors[2:] == ["verify: this stage's share of the run's LM fault budget is spent"] * 3
    notices = [r.getMessage() for r in caplog.records if "share of the LM fault budget" in r.getMessage()]
    assert len(notices) == 1 and notices[0].startswith("LM stage verify failed for 30.0 s in this run (2 calls)")
    assert "the others keep the LM" in notices[0]
    assert budget.report()["stages_shut"] == ["verify"]


def test_a_stage_that_fails_before_any_other_answered_is_the_endpoint_failing():
    """No stage has answered yet: the failing one may take the whole budget, not a share (an outage
    at the start of a run is not one stage's fault)."""
    clock = Clock()
    budget = FaultBudget(40, share=0.0, clock=clock)
    assert budget.remaining("lm", "verify") == 40
    budget.charge(25, "lm", "verify")
    assert budget.admits("lm", "verify") and budget.remaining("lm", "verify") == 15
    budget.answered("lm", "answer")  # now the endpoint answers another stage: verify is over its half
    assert not budget.admits("lm", "verify") and budget.remaining("lm", "verify") == 0
    assert budget.admits("lm", "answer") and budget.remaining("lm", "answer") == 15 and not budget.spent
    budget.answered("other-lm", "verify")  # another endpoint's stages are counted apart
    assert budget.admits("other-lm", "verify")
