"""CommandRetrieval against a real OpenAI-compatible endpoint on 127.0.0.1 that fails in every way
endpoints do: the result is never worse than without an LM, the fallback is marked, at most two LM
calls per utterance, and an endpoint that is down costs a few timeouts per run, not one per query."""

import asyncio
from types import SimpleNamespace

import dspy
import pytest
from conftest import FakeEngine
from lm_server import StubLMServer

import tracerag
from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.lm.breaker import BREAKER
from tracerag.lm.policy import policy

LIGHT_ON = {"action": "打开", "type_hint": "Light", "name_hint": "", "scope_include": ["客厅"],
            "scope_exclude": [], "quantifier": "one"}
QUERIES = ["打开客厅的灯", "把主卧空调调到26度", "所有窗帘都关上", "关掉冰箱插座"]
FAULTS = ["garbage", "empty", "null", "http500", "bad_json", "slow", "wrong_types"]


def outcome(pred):
    return ([(c.device_id, c.command_id) for c in pred.candidates],
            pred.bulk.model_dump() if pred.bulk else None)


@pytest.fixture
def no_lm_results(index):
    dspy.configure(lm=None)
    program = CommandRetrieval(index)
    return {q: outcome(program(query=q)) for q in QUERIES}


@pytest.mark.parametrize("fault", FAULTS)
def test_a_failing_endpoint_gives_the_no_lm_result_marked(index, no_lm_results, fault):
    with StubLMServer(FakeEngine(irs={"打开客厅的灯": LIGHT_ON}), fault, delay=1.5) as stub:
        tracerag.configure(lm=stub.lm(timeout=0.5, retries=0))
        program = CommandRetrieval(index)
        for query in QUERIES:
            pred = program(query=query)
            assert outcome(pred) == no_lm_results[query], query
            assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["parse"]
            assert pred.parse_source == "rules_fallback" and pred.lm_calls <= 1


def test_a_good_endpoint_is_used(index):
    with StubLMServer(FakeEngine(irs={"打开客厅的灯": LIGHT_ON})) as stub:
        tracerag.configure(lm=stub.lm())
        pred = CommandRetrieval(index)(query="打开客厅的灯")
    assert pred.parse_source == "lm" and pred.ir.type_hint == "Light" and pred.hint is None
    assert pred.lm_fallbacks == [] and stub.requests == [("ParseCommand", "good")]


def test_a_fault_at_one_stage_only_falls_back_at_that_stage(index):
    irs = {"所有灯都调一下": {"action": "调节", "type_hint": "Light", "quantifier": "all"}}
    index.params = index.params.model_copy(update={"min_top1_ratio": 0.99, "min_margin": 0.99})  # ambiguous
    with StubLMServer(FakeEngine(irs=irs), modes={"ArbitrateCapability": "http500"}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = CommandRetrieval(index, arbitration=True)(query="所有灯都调一下")
    assert pred.parse_source == "lm" and pred.ir.type_hint == "Light"
    assert pred.lm_fallbacks == ["arbitrate"] and pred.hint == "lm_failed"
    assert pred.bulk.hint == "need_clarification"  # the user is asked, nothing runs
    assert [name for name, _ in stub.requests] == ["ParseCommand", "ArbitrateCapability"]


def test_fenced_json_is_read_or_falls_back_never_worse(index, no_lm_results):
    with StubLMServer(FakeEngine(irs={"打开客厅的灯": LIGHT_ON}), "fenced") as stub:
        tracerag.configure(lm=stub.lm())
        pred = CommandRetrieval(index)(query="打开客厅的灯")
    if pred.parse_source == "lm":
        assert pred.ir.type_hint == "Light"
    else:
        assert outcome(pred) == no_lm_results["打开客厅的灯"] and pred.hint == "lm_failed"


def test_the_breaker_stops_calling_a_dead_endpoint_and_probes_it_again(index, monkeypatch):
    from tracerag.lm import breaker as breaking

    clock = [1000.0]  # the breaker's clock, moved by the test (the others keep theirs)
    monkeypatch.setattr(breaking, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    with StubLMServer(FakeEngine(), "http500") as stub:
        tracerag.configure(lm=stub.lm(retries=0))
        program = CommandRetrieval(index)
        preds = [program(query=q) for q in QUERIES * 5]
        assert len(stub.requests) == 5  # then the breaker is open: no more calls
        assert all(p.hint == "lm_failed" for p in preds) and BREAKER.is_open(stub.lm())
        clock[0] += policy().probe_seconds  # a probe interval later
        stub.mode = "good"
        program(query="打开客厅的灯")  # the probe succeeds and closes the breaker
        assert len(stub.requests) == 6 and not BREAKER.is_open(stub.lm())
        assert program(query="打开客厅的灯").parse_source == "lm"


def test_a_slow_endpoint_is_bounded_by_the_timeout(index):
    """The endpoint answers after 3 s: each attempt is cut at its 0.3 s deadline (an unbounded one would get
    the answer), at most two attempts (benchmarks/bench_lm_bounds.py measures how long that takes)."""
    with StubLMServer(FakeEngine(), "slow", delay=3.0) as stub:
        tracerag.configure(lm=stub.lm(timeout=0.3, retries=1))
        pred = CommandRetrieval(index)(query="打开客厅的灯")
    assert pred.hint == "lm_failed" and pred.parse_source == "rules_fallback"
    assert "no reply within 0.3 s" in pred.lm_errors[0] and 1 <= len(stub.requests) <= 2


def test_a_users_own_lm_without_a_timeout_gets_the_policys(index, no_lm_results, lm_timeout):
    """``dspy.LM(model)`` as users build it sets no timeout: a stalled endpoint would hold each call for
    the client's default (600 s a read; LiteLLM 6,000 s). Each stage passes it the policy's, sync and async."""
    lm_timeout(0.3)
    with StubLMServer(FakeEngine(irs={"打开客厅的灯": LIGHT_ON}), "slow", delay=3.0) as stub:
        dspy.configure(lm=stub.user_lm())
        program = CommandRetrieval(index)
        for run in (lambda: program(query="打开客厅的灯"), lambda: asyncio.run(program.acall(query="打开客厅的灯"))):
            pred = run()  # unbounded, it would get the answer after 3 s
            assert pred.hint == "lm_failed" and outcome(pred) == no_lm_results["打开客厅的灯"]
            assert "no reply within 0.3 s" in pred.lm_errors[0]


def test_a_users_own_lm_keeps_its_own_timeout(index, lm_timeout):
    lm_timeout(0.3)
    with StubLMServer(FakeEngine(irs={"打开客厅的灯": LIGHT_ON}), "slow", delay=1.0) as stub:
        dspy.configure(lm=stub.user_lm(timeout=10))
        pred = CommandRetrieval(index)(query="打开客厅的灯")
    assert pred.parse_source == "lm" and pred.hint is None and pred.ir.type_hint == "Light"


def test_the_predictors_own_lm_is_used(index):
    with StubLMServer(FakeEngine(irs={"打开客厅的灯": LIGHT_ON})) as stub:
        dspy.configure(lm=None)
        program = CommandRetrieval(index)
        program.set_lm(stub.lm())
        pred = program(query="打开客厅的灯")
        assert pred.parse_source == "lm" and pred.ir.type_hint == "Light"
        with dspy.context(lm=stub.lm()):
            assert CommandRetrieval(index)(query="打开客厅的灯").parse_source == "lm"


def test_configure_changes_only_what_it_is_given(embedder):
    lm, adapter = dspy.LM("openai/mine", api_base="http://127.0.0.1:9/v1", cache=False), dspy.JSONAdapter()
    dspy.configure(lm=lm, adapter=adapter)
    tracerag.configure(embedder=embedder)
    assert dspy.settings.lm is lm and dspy.settings.adapter is adapter
    tracerag.configure(timeout=5)
    assert dspy.settings.lm is lm and tracerag.get_embedder() is embedder


@pytest.mark.parametrize("utterance", ["", "   ", "?!。", "asdfgh", "嗯嗯", "hello", "今天天气怎么样"])
def test_an_utterance_that_asks_for_nothing_gets_no_candidates(index, utterance):
    pred = CommandRetrieval(index)(query=utterance)
    assert pred.candidates == [] and pred.bulk is None and pred.hint == "no_intent"
