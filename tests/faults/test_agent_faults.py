"""SearchAgent against a real OpenAI-compatible endpoint on 127.0.0.1 that fails in every way endpoints
do: a run the LM leaves without an answer answers as the no-LM run does (the same search, answer and
citations when the LM fails at its first step; the evidence so far after a good step), marked
``hint="lm_failed"``, never more LM calls than ``max_steps``. The tools are in-process (fast)."""

from __future__ import annotations

import re

import dspy
import pytest
from conftest import AgentEngine, ToolResult
from lm_server import StubLMServer

from tracerag.agent.search_agent import EVIDENCE_LEAD, AgentConfig, SearchAgent
from tracerag.lm.breaker import BREAKER

FAULTS = ["garbage", "empty", "null", "http500", "bad_json", "slow", "wrong_types"]
QUESTIONS = ["Does aspirin prevent stroke in older adults?",
             "Is telephone counselling effective for mammography screening among women?"]
ABSTRACTS = {
    "101": "Aspirin lowered the risk of stroke in older adults over five years of follow-up.",
    "102": "Telephone counselling increased mammography screening among women aged 50 to 69.",
    "103": "Low-dose aspirin caused more gastrointestinal bleeding in older adults than placebo.",
    "104": "Mailed reminders and counselling both raised screening rates in a primary care trial.",
    "105": "Statins reduced cardiovascular events in adults with diabetes.",
}


class Library:
    """A small search tool whose results depend on the query and the limit: a fallback that searched
    differently from the no-LM run would return other ids."""

    def __init__(self):
        self.calls = []

    def schemas(self):
        return {"pubmed_search": {"limit": int, "offset": int}}

    def call(self, call):
        self.calls.append(call)
        words = set(re.findall(r"\w{4,}", call.query.lower()))
        ranked = sorted(ABSTRACTS, key=lambda i: (-len(words & set(re.findall(r"\w{4,}", ABSTRACTS[i].lower()))), i))
        return ToolResult(call.name, [{"id": i, "title": f"Trial {i}", "text": ABSTRACTS[i]}
                                  for i in ranked[: call.params.get("limit", 5)]])


def outcome(pred):
    return pred.answer, pred.ids_cited, pred.returned_ids


def use(lm):
    dspy.configure(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))


@pytest.fixture
def no_lm_results():
    use(None)
    program = SearchAgent(Library())
    preds = {q: program(question=q) for q in QUESTIONS}
    assert all(p.hint == "no_lm" and p.lm_fallbacks == [] and p.lm_calls == 0 and p.ids_cited for p in preds.values())
    return {q: outcome(p) for q, p in preds.items()}


@pytest.mark.parametrize("fault", FAULTS)
def test_a_failing_endpoint_gives_the_no_lm_answer_marked(no_lm_results, fault):
    config = AgentConfig(max_steps=4)
    with StubLMServer(AgentEngine(), fault, delay=1.0) as stub:
        use(stub.lm(timeout=0.5, retries=0))
        calls = 0
        for question in QUESTIONS:
            tools = Library()
            pred = SearchAgent(tools, config)(question=question)
            calls += pred.lm_calls
            assert outcome(pred) == no_lm_results[question], (fault, question)
            assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["step"] and len(pred.lm_errors) == 1
            assert pred.stop_reason == ("no_action" if fault in ("garbage", "wrong_types") else "lm_error")
            assert pred.lm_calls <= config.max_steps and pred.lm_calls == pred.trajectory.steps
            assert [c.query for c in tools.calls] == [question]  # the no-LM path's one search
        assert len(stub.requests) == calls > 0  # lm_calls counts the calls made


class FailsAfterFirstStep(AgentEngine):
    """A good first step (a search), then every request gets ``fault``."""

    def __init__(self, fault: str, **kwargs):
        super().__init__(**kwargs)
        self.fault, self.stub = fault, None

    def answer(self, system, user, stop=()):
        name, text = super().answer(system, user, stop)
        if name == "AgentStep" and self.calls.count("AgentStep") == 2:
            self.stub.mode = self.fault  # read by the server after this answer: the second step fails
        return name, text


@pytest.mark.parametrize(("fault", "stop_reason", "calls"), [("http500", "lm_error", 2), ("garbage", "no_action", 3),
                                                              ("slow", "lm_error", 2)])
def test_a_fault_after_a_good_step_answers_from_the_evidence_so_far(fault, stop_reason, calls):
    engine = FailsAfterFirstStep(fault)
    with StubLMServer(engine, delay=1.0) as stub:
        engine.stub = stub
        use(stub.lm(timeout=0.5, retries=0))
        tools = Library()
        pred = SearchAgent(tools)(question=QUESTIONS[0])
    assert len(tools.calls) == 1 and tools.calls[0].query == "Does aspirin prevent stroke older"  # the model's own
    first = [s["id"] for s in pred.trajectory.tool_calls[0].result]
    assert pred.stop_reason == stop_reason and pred.lm_calls == calls and pred.hint == "lm_failed"
    assert pred.lm_fallbacks == ["step"] and pred.answer.startswith(EVIDENCE_LEAD)
    assert pred.ids_cited == first and pred.returned_ids == first
    assert pred.trajectory.interleaved_text.endswith(f"<answer>{pred.answer}</answer>")


def test_a_users_own_lm_without_a_timeout_is_bounded_and_keeps_the_stop_sequences(no_lm_results, lm_timeout):
    """The policy's timeout reaches the protocol step with its stop sequences: a user's ``dspy.LM`` that sets
    no timeout falls back within it, and over a good endpoint the stops still cut each reply."""
    lm_timeout(0.3)
    with StubLMServer(AgentEngine(), "slow", delay=3.0) as stub:
        use(stub.user_lm())
        pred = SearchAgent(Library())(question=QUESTIONS[0])  # unbounded, it would get the answer after 3 s
    assert outcome(pred) == no_lm_results[QUESTIONS[0]] and pred.stop_reason == "lm_error"
    assert "no reply within 0.3 s" in pred.lm_errors[0]
    lm_timeout(30)  # a generous bound: a busy machine must not make a prompt endpoint look slow
    with StubLMServer(AgentEngine()) as stub:
        use(stub.user_lm())
        pred = SearchAgent(Library())(question=QUESTIONS[0])
    assert pred.stop_reason == "answered" and pred.ids_cited == ["101"] and pred.lm_calls == 2


def test_a_good_endpoint_answers_through_the_protocol():
    with StubLMServer(AgentEngine()) as stub:
        use(stub.lm())
        pred = SearchAgent(Library())(question=QUESTIONS[0])
    assert pred.stop_reason == "answered" and pred.answer.startswith("Yes.") and pred.ids_cited == ["101"]
    assert pred.hint is None and pred.lm_fallbacks == [] and pred.lm_calls == 2
    assert stub.requests == [("AgentStep", "good")] * 2


def test_the_policys_own_lm_is_used():
    with StubLMServer(AgentEngine()) as stub:
        use(None)
        program = SearchAgent(Library())
        program.set_lm(stub.lm())
        pred = program(question=QUESTIONS[0])
        assert pred.stop_reason == "answered" and pred.lm_calls == 2 and pred.hint is None
        with dspy.context(lm=stub.lm()):
            assert SearchAgent(Library())(question=QUESTIONS[0]).stop_reason == "answered"
        assert len(stub.requests) == 4


def test_a_dead_endpoint_opens_the_breaker_and_runs_stay_no_lm_answers(no_lm_results):
    with StubLMServer(AgentEngine(), "http500") as stub:
        use(stub.lm(retries=0))
        program = SearchAgent(Library())
        preds = [program(question=q) for q in QUESTIONS * 4]
        assert len(stub.requests) == 5 and BREAKER.is_open(stub.lm())  # then no more calls
    assert all(outcome(p) == no_lm_results[p.trajectory.question] and p.hint == "lm_failed" for p in preds)
    assert [p.lm_calls for p in preds] == [1] * 5 + [0] * 3
