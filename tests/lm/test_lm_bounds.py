"""Every LM call make_lm builds is bounded in time and memory whatever the endpoint does: a real
OpenAI-compatible server on 127.0.0.1 that sends an endless body, drips a byte a second, declares a
10 GB body, or answers with a gzip bomb ends the call at its deadline or its byte cap, the process does
not grow, and the stage (or the whole program) takes its no-LM path. Normal and gzip-encoded answers,
callbacks, history and the response cache work as before, for every model prefix the native engine
serves.

What ended a call is read from its failure line (the deadline it names, or the cap), not from a clock, so the
tests do not depend on a quiet machine; the one clock bound left, ``HANG_S``, catches a call that never ends.
benchmarks/bench_lm_bounds.py measures how close to its deadline each call ends.
"""

from __future__ import annotations

import asyncio
import copy
import pickle
import resource
import time
import tracemalloc

import dspy
import pytest
from conftest import FakeEngine
from json_service import gzip_bomb
from lm_server import HOSTILE, StubLMServer

import tracerag
from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.lm.bounded_lm import BoundedLM, make_lm
from tracerag.lm.transport import AsyncBoundedTransport, BoundedEngines, BoundedTransport

BOMB = 100 * 2**20  # expands to 100 MB; about 100 KB on the wire
HANG_S = 30.0  # a hang guard, not a speed figure: unbounded, a call against these endpoints never ends
# what ends a call against each hostile endpoint, as its failure line says it
ENDED_BY = {"drip": "no reply within 1 s", "huge_length": "no reply within 1 s", "endless": "larger than",
            "gzip_bomb": "larger than"}
ADAPTER = dspy.ChatAdapter(use_json_adapter_fallback=False)


def stub(mode: str = "good", **kwargs) -> StubLMServer:
    return StubLMServer(FakeEngine(), mode, bomb_size=BOMB, **kwargs)


def ask(lm, asynchronous: bool = False):
    """One guarded stage call with ``lm``: (its output or None, the Stages record)."""
    from tracerag.programs.guarded_step import Stages

    stages = Stages()
    predictor = dspy.Predict("question -> answer")
    with dspy.context(lm=lm, adapter=ADAPTER):
        if asynchronous:
            out = asyncio.run(stages.acall("answer", predictor, question="hi"))
        else:
            out = stages.call("answer", predictor, question="hi")
    return out, stages


def peak_rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


@pytest.fixture(scope="module", autouse=True)
def built_bomb():
    gzip_bomb(BOMB)  # compressed once, before anything is timed


def litellm_lm(url: str, **kwargs):
    """An openai/ LM that DSPy sends through LiteLLM (extra headers are a client setting its native
    engine does not carry)."""
    return make_lm("openai/stub-model", url, "test-key", cache=False, extra_headers={"X-Client": "tests"}, **kwargs)


@pytest.fixture(scope="module")
def litellm_warm():
    """One LiteLLM call before anything is measured: its first call imports and builds a lot."""
    with stub() as server:
        out, _ = ask(litellm_lm(server.url, timeout=10, retries=0))
    assert out is not None


def routes(lm) -> bool:
    from dspy.clients.backend_selection import select_backend

    return select_backend(lm).native


@pytest.mark.parametrize("asynchronous", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["sync", "async"])
@pytest.mark.parametrize("mode", HOSTILE)
@pytest.mark.parametrize("engine", ["native", "litellm"])
def test_a_hostile_endpoint_ends_the_call_within_its_bounds(engine, mode, asynchronous, request):
    with stub(mode) as server:
        if engine == "native":
            lm = server.lm(timeout=1, retries=0)
        else:
            request.getfixturevalue("litellm_warm")
            lm = litellm_lm(server.url, timeout=1, retries=0)
        assert routes(lm) == (engine == "native")
        rss_before = peak_rss_kib()
        tracemalloc.start()
        try:
            start = time.monotonic()
            out, stages = ask(lm, asynchronous)
            elapsed = time.monotonic() - start
            _, python_peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        rss_growth = peak_rss_kib() - rss_before
    assert out is None and stages.fallbacks == ["answer"]  # the stage's no-LM result
    # (the OpenAI SDK under LiteLLM reports a reply over the cap as "Connection error")
    ended_by = "Connection error" if engine == "litellm" and ENDED_BY[mode] == "larger than" else ENDED_BY[mode]
    assert ended_by in stages.errors[0], stages.errors
    assert elapsed < HANG_S, elapsed
    assert python_peak < 48 * 2**20, python_peak  # the 8 MB cap and bounded inflation steps
    assert rss_growth < 100 * 1024, rss_growth


def test_a_call_with_a_retry_makes_at_most_two_attempts_each_cut_at_its_deadline():
    with stub("drip") as server:
        lm = server.lm(timeout=1, retries=1)
        assert lm.worst_case() == 3.0  # 1 s per attempt, 2 attempts, one wait of min(timeout, 10 s)
        start = time.monotonic()
        out, stages = ask(lm)
        elapsed = time.monotonic() - start
    assert out is None and 1 <= len(server.requests) <= 2  # a second attempt only while the call has time left
    assert "no reply within 1 s" in stages.errors[0] and elapsed < HANG_S, elapsed


def test_a_reply_over_the_cap_is_not_retried():
    with stub("endless") as server:
        out, stages = ask(server.lm(timeout=2, retries=2))
    assert out is None and "LMCollectionLimitError" in stages.errors[0]
    assert len(server.requests) == 1  # the same server would send it again


def test_the_cap_is_a_setting():
    with stub() as server:
        small = make_lm("openai/stub-model", server.url, "k", timeout=2, retries=0, cache=False, max_bytes=100)
        out, stages = ask(small)
        assert out is None and "larger than 100 bytes" in stages.errors[0]
        out, _ = ask(server.lm(timeout=2))
        assert out is not None


@pytest.mark.parametrize("mode", ["drip", "gzip_bomb"])
def test_a_program_takes_its_no_lm_path(index, mode):
    dspy.configure(lm=None)
    expected = CommandRetrieval(index)(query="打开客厅的灯")
    with stub(mode) as server:
        tracerag.configure(lm=server.lm(timeout=1, retries=0))
        start = time.monotonic()
        pred = CommandRetrieval(index)(query="打开客厅的灯")
        elapsed = time.monotonic() - start
    assert [(c.device_id, c.command_id) for c in pred.candidates] == \
        [(c.device_id, c.command_id) for c in expected.candidates]
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["parse"] and pred.parse_source == "rules_fallback"
    assert ENDED_BY[mode] in pred.lm_errors[0] and elapsed < HANG_S, elapsed


class CountCalls(dspy.utils.BaseCallback):
    def __init__(self):
        self.starts = 0

    def on_lm_start(self, call_id, instance, inputs):
        self.starts += 1


@pytest.mark.parametrize("model", ["openai/stub-model", "hosted_vllm/stub-model", "ollama_chat/stub-model"])
@pytest.mark.parametrize("mode", ["good", "gzip"])
def test_normal_answers_go_through_the_bounded_transport(model, mode):
    counter = CountCalls()
    with stub(mode) as server:
        lm = make_lm(model, server.url, "test-key", timeout=2, retries=0, cache=False, callbacks=[counter])
        out, stages = ask(lm)
        aout, _ = ask(lm, asynchronous=True)
    assert out is not None and out.answer and aout.answer == out.answer and stages.fallbacks == []
    assert counter.starts == 2 and len(lm.history) == 2  # callbacks and history see one call each
    transports = {type(engine.config.transport) for engine in lm._engine_store.values()}
    assert transports == {BoundedTransport, AsyncBoundedTransport}


@pytest.mark.parametrize("mode", ["good", "gzip"])
def test_normal_answers_through_litellm_still_work(mode, litellm_warm):
    counter = CountCalls()
    with stub(mode) as server:
        lm = litellm_lm(server.url, timeout=5, retries=0, callbacks=[counter])
        out, stages = ask(lm)
        aout, _ = ask(lm, asynchronous=True)
    assert out is not None and out.answer and aout.answer == out.answer and stages.fallbacks == []
    assert counter.starts == 2 and len(lm.history) == 2


def test_litellm_requests_outside_a_bounded_call_pass_through(litellm_warm):
    import litellm

    with stub("gzip") as server:  # the session decodes gzip as httpx does when no bound is in force
        reply = litellm.client_session.post(server.url + "/chat/completions", json={"messages": []})
    assert reply.status_code == 200 and reply.json()["choices"]


def test_the_response_cache_still_answers_without_a_request():
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)
    try:
        with stub() as server:
            lm = make_lm("openai/stub-model", server.url, "test-key", timeout=2, retries=0, cache=True)
            first, _ = ask(lm)
            second, _ = ask(lm)
        assert first.answer == second.answer and len(server.requests) == 1
    finally:
        dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)


def test_copies_keep_the_bound():
    lm = make_lm("openai/stub-model", "http://127.0.0.1:9/v1", "k", timeout=1, retries=0, max_bytes=1234)
    for other in (lm.copy(temperature=0.5), copy.deepcopy(lm), pickle.loads(pickle.dumps(lm))):
        assert isinstance(other, BoundedLM) and isinstance(other._engine_store, BoundedEngines)
        assert other._engine_store.max_bytes == 1234
    with stub("drip") as server:
        clone = copy.deepcopy(make_lm("openai/stub-model", server.url, "k", timeout=1, retries=0, cache=False))
        start = time.monotonic()
        out, stages = ask(clone)
        assert out is None and "no reply within 1 s" in stages.errors[0] and time.monotonic() - start < HANG_S


def test_the_optimizers_copies_of_the_prompt_lm_are_bounded():
    from tracerag.lm.optimizer_calls import OptimizerCalls, bounded_lm

    with stub("drip") as server:
        prompt = server.lm(timeout=1, retries=0)
        assert bounded_lm(prompt) is prompt  # it sets its own timeout
        own = OptimizerCalls(prompt).lm  # what MIPROv2 proposes and GEPA reflects with, and their copies
        for lm in (own, own.copy(temperature=1.0)):
            start = time.monotonic()
            with pytest.raises(Exception, match="no complete reply .* within the 1 s deadline"):
                lm("hi")
            assert time.monotonic() - start < HANG_S


def test_closing_the_lm_closes_its_transports():
    with stub() as server:
        lm = server.lm(timeout=2)
        ask(lm)
        (transport,) = lm._engine_store.transports()
        lm.close()
    assert transport._client.is_closed


@pytest.mark.slow
def test_the_documented_example_timeout_3_retries_1_ends_within_9_s():
    with stub("huge_length") as server:
        lm = server.lm(timeout=3, retries=1)
        start = time.monotonic()
        out, _ = ask(lm)
        elapsed = time.monotonic() - start
    assert lm.worst_case() == 9.0
    assert out is None and len(server.requests) == 2 and elapsed < 9.0 + 2.0, elapsed
