"""``tracerag serve`` against an endpoint that stalls one stage: each request is one run with its own LM
fault budget (the budget's seconds, no share of its time), so a request's failing calls end when its
budget does and its other stages keep answering; the next request gets a budget of its own. The breaker
(per process) still counts the failures across requests."""

from __future__ import annotations

import asyncio
import time

import dspy
import pytest
from conftest import FakeEngine
from lm_server import StubLMServer

from tracerag.lm.breaker import BREAKER
from tracerag.lm.policy import policy, set_policy
from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG
from tracerag.rag.service import RAGRequest
from tracerag.serving.programs import ENDPOINTS, ServedProgram

STALL = 15.0  # seconds the endpoint holds a verification; every bound below is under one stall


@pytest.fixture
def small_budget():
    before = policy()
    set_policy(timeout=5.0, fault_budget=2.0)  # well above what a busy machine adds to the answering calls
    yield
    set_policy(**before.__dict__)


@pytest.mark.slow  # about 6 s: six requests, each a RAG call and (five of them) a cut verification
@pytest.mark.parametrize("calls", ["thread", "async"])
def test_a_served_request_spends_its_own_fault_budget_and_keeps_the_answering_stages(retriever, small_budget,
                                                                                     calls):
    served = ServedProgram(ENDPOINTS["rag"], SelfReflectiveRAG(retriever, RAGConfig(k=4)))
    request = RAGRequest(question="Do statins lower cholesterol in diabetes patients?")
    with StubLMServer(FakeEngine(), modes={"VerifyGroundedness": "slow"}, delay=STALL) as stub:
        dspy.configure(lm=stub.lm(timeout=5.0, retries=2))
        answers, took = [], []
        for _ in range(6):
            started = time.perf_counter()
            answers.append(served.respond(request) if calls == "thread" else asyncio.run(served.arespond(request)))
            took.append(time.perf_counter() - started)
        verifications = sum(name == "VerifyGroundedness" for name, _ in stub.requests)
    # verify is cut at its half of 2 s (the grading answered first): no request waits a 5 s attempt, and
    # a request is not refused for an earlier one's fault; after five failures in a row the breaker skips
    # verify alone (the sixth request makes no verification call), and the other stages go on
    assert max(took) < 4.5 and verifications == 5
    for answer in answers:
        assert answer["lm_fallbacks"] == ["verify"] and answer["lm_calls"] >= 2 and answer["verdict"]
    assert BREAKER.is_open(dspy.settings.lm, "verify") and not BREAKER.is_open(dspy.settings.lm)
