"""TraceablePlanner against a real OpenAI-compatible endpoint on 127.0.0.1 that fails in every way
endpoints do: the result is the no-LM result (no plan, no used ids), marked ``hint="lm_failed"`` with
the stage in ``lm_fallbacks`` and a one-line error; one LM call per request at most, and a dead
endpoint costs a few calls, not one per request."""

import dspy
import pytest
from conftest import PlannerEngine
from lm_server import StubLMServer

import tracerag
from tracerag.lm.policy import policy
from tracerag.memory.playbook import Template, parse_playbook
from tracerag.planner.traceable_planner import TraceablePlanner

PLAYBOOK = parse_playbook("""[mat-00001] helpful=3 harmful=0 :: Thaw enzymes and master mixes on ice.
[proc-00001] helpful=1 harmful=0 :: Include a no-template control in every run.
[qc-00001] helpful=2 harmful=0 :: Check the product on an agarose gel.
""")
TEMPLATES = [Template(None, "Routine Taq PCR", "Mix 12.5 µL master mix with primers.", 0.81),
             Template("template-002", "High-fidelity PCR", "Use a proofreading polymerase.", 0.64)]
REQUESTS = ["Set up a 25 µL PCR for 12 samples.", "Run a colony PCR on 8 clones.", "Check a PCR product on a gel."]
FAULTS = ["garbage", "empty", "null", "http500", "bad_json", "slow", "wrong_types"]


def outcome(pred):
    return (pred.plan, pred.bullets_used, pred.templates_used, pred.hallucinated_ids, pred.retrieved_bullet_ids,
            pred.retrieved_template_ids)


def plan(planner, requirements=REQUESTS[0]):
    return planner(requirements=requirements, bullets=PLAYBOOK, templates=TEMPLATES)


@pytest.fixture
def no_lm_results():
    dspy.configure(lm=None)
    results = {r: plan(TraceablePlanner(), r) for r in REQUESTS}
    assert all(p.plan is None and p.hint == "no_lm" and p.error == "no LM configured" and p.lm_fallbacks == []
               for p in results.values())
    return {r: outcome(p) for r, p in results.items()}


@pytest.mark.parametrize("fault", FAULTS)
def test_a_failing_endpoint_gives_the_no_lm_result_marked(no_lm_results, fault):
    with StubLMServer(PlannerEngine(), fault, delay=1.5) as stub:
        tracerag.configure(lm=stub.lm(timeout=0.5, retries=0))
        planner = TraceablePlanner()
        preds = [plan(planner, r) for r in REQUESTS * 2]
        for requirements, pred in zip(REQUESTS * 2, preds, strict=True):
            assert outcome(pred) == no_lm_results[requirements]
            assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["generate"] and pred.lm_calls <= 1
            assert pred.error.startswith("generate: ") and "\n" not in pred.error
            assert pred.metadata["error"] == pred.error and pred.metadata["model"] == "openai/stub-model"
        # one call per request until the breaker opens; then none
        assert sum(p.lm_calls for p in preds) == len(stub.requests) == policy().breaker_failures
        assert preds[-1].error == "generate: the LM is skipped after repeated failures"


def test_a_good_endpoint_is_used_and_metered():
    with StubLMServer(PlannerEngine()) as stub:
        tracerag.configure(lm=stub.lm())
        pred = plan(TraceablePlanner())
    assert pred.plan is not None and pred.bullets_used == ["mat-00001", "proc-00001"]
    assert pred.hint is None and pred.lm_fallbacks == [] and pred.error is None
    assert pred.lm_calls == 1 and stub.requests == [("GeneratePlan", "good")]
    meta = pred.metadata
    assert meta["model"] == "openai/stub-model" and meta["lm_calls"] == 1 and meta["usage"]["total_tokens"] > 0


def test_the_predictors_own_lm_is_used():
    with StubLMServer(PlannerEngine()) as stub:
        dspy.configure(lm=None)
        planner = TraceablePlanner()
        planner.set_lm(stub.lm())
        pred = plan(planner)
        assert pred.plan is not None and pred.hint is None and pred.lm_calls == 1
        assert pred.metadata["model"] == "openai/stub-model"
        with dspy.context(lm=stub.lm()):
            assert plan(TraceablePlanner()).plan is not None
        assert [name for name, _ in stub.requests] == ["GeneratePlan"] * 2
