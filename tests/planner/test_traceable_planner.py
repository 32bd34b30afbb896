"""TraceablePlanner with a fake LM: union extraction of used ids, hallucinated ids, the metadata record, the
failure paths (no LM, dead LM, garbage, an invalid plan, a failing template retriever), and saving demos."""

import json
import logging

import dspy
import pytest
from conftest import INVENTED, PlannerEngine

from tracerag.datasets.planner import load_planner_cases
from tracerag.memory.playbook import Template, parse_playbook
from tracerag.planner.metrics import planner_score
from tracerag.planner.traceable_planner import PlannerConfig, TraceablePlanner, format_templates, trace_used_ids
from tracerag.signatures.planner import Plan, PlanStep

PLAYBOOK = """# PCR playbook

[mat-00001] helpful=3 harmful=0 :: Thaw enzymes and master mixes on ice.
[proc-00001] helpful=1 harmful=0 :: Include a no-template control in every run.
[proc-00002] helpful=0 harmful=2 :: Vortex the polymerase to mix it.
[qc-00001] helpful=2 harmful=0 :: Check the product on an agarose gel.
"""
TEMPLATES = [Template(None, "Routine Taq PCR", "Mix 12.5 µL master mix with primers. " * 8, 0.81),
             Template("template-002", "High-fidelity PCR", "Use a proofreading polymerase.", 0.64),
             Template(None, "Western blot", "Transfer at 100 V for 1 h.", 0.35)]
REQUIREMENTS = "Set up a 25 µL PCR for 12 samples."


@pytest.fixture
def planner_lm():
    """Factory: planner_lm(plan_mode=..., adapter=...) configures DSPy with a PlannerEngine for the test."""
    def make(adapter=None, **kwargs):
        engine = PlannerEngine(**kwargs)
        lm = dspy.LM("fake/model", engine=engine, cache=False, num_retries=0)
        dspy.configure(lm=lm, adapter=adapter or dspy.ChatAdapter(use_json_adapter_fallback=False))
        return engine

    yield make
    dspy.configure(lm=None)


def run(**kwargs):
    planner = TraceablePlanner(kwargs.pop("config", None), retrieve_templates=kwargs.pop("retriever", None))
    return planner(requirements=REQUIREMENTS, **{"bullets": parse_playbook(PLAYBOOK), "templates": TEMPLATES,
                                                 **kwargs})


def test_used_ids_are_the_union_of_reports_and_citations(planner_lm):
    planner_lm()
    pred = run()
    tpl_routine = TEMPLATES[0].id
    assert pred.plan.steps[1] == PlanStep(text="Add a control (proc-00001).", cites=[])  # a bare string step
    assert pred.bullets_used == ["mat-00001", "proc-00001"]  # reported + [id] in a step; (id) in text only
    assert pred.templates_used == ["template-002", tpl_routine]  # reported only; bare in the objective only
    assert pred.hallucinated_ids == [INVENTED]  # flagged, never among the used ids
    assert INVENTED not in pred.bullets_used + pred.templates_used and pred.error is None
    assert pred.hint is None and pred.lm_fallbacks == []


def test_the_lm_sees_every_id_and_nothing_else(planner_lm):
    engine = planner_lm()
    run()
    prompt = engine.prompts[0]
    assert "[mat-00001] helpful=3 harmful=0 :: Thaw enzymes and master mixes on ice." in prompt
    assert f"[{TEMPLATES[0].id}] Routine Taq PCR\nMix 12.5" in prompt and "[template-002] High-fidelity PCR" in prompt
    assert "# PCR playbook" not in prompt  # headings are not bullets


def test_metadata_answers_which_bullets_and_passages_produced_the_plan(planner_lm):
    planner_lm()
    pred = run()
    meta = pred.metadata
    assert meta["retrieved_bullet_ids"] == pred.retrieved_bullet_ids == ["mat-00001", "proc-00001", "proc-00002",
                                                                          "qc-00001"]
    assert meta["retrieved_template_ids"] == [t.id for t in TEMPLATES]
    first = meta["retrieved_templates"][0]
    assert first["id"] == TEMPLATES[0].id and first["title"] == "Routine Taq PCR" and first["score"] == 0.81
    assert len(first["preview"]) == 120 and first["preview"].startswith("Mix 12.5 µL master mix")
    assert meta["retrieved_templates"][1]["preview"] == "Use a proofreading polymerase."
    assert meta["bullets_used"] == pred.bullets_used and meta["templates_used"] == pred.templates_used
    assert meta["hallucinated_ids"] == [INVENTED] and meta["error"] is None
    assert meta["model"] == "fake/model" and meta["lm_calls"] == pred.lm_calls == 1
    usage = meta["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    assert 0 <= meta["duration_s"] < 5
    json.dumps(meta)  # ready to log or store beside the plan


def test_usage_also_reaches_dspy_usage_tracking(planner_lm):
    planner_lm()
    with dspy.context(track_usage=True):
        pred = run()
    assert pred.get_lm_usage()["fake/model"]["total_tokens"] == pred.metadata["usage"]["total_tokens"]


def test_no_lm_returns_no_plan_and_says_why(caplog):
    caplog.set_level(logging.INFO)
    pred = run()
    assert pred.plan is None and pred.error == "no LM configured" and pred.lm_calls == 0
    assert pred.hint == "no_lm" and pred.lm_fallbacks == []  # no LM is not an LM failure
    assert pred.bullets_used == pred.templates_used == pred.hallucinated_ids == []
    assert pred.retrieved_bullet_ids and pred.metadata["model"] is None and pred.metadata["usage"] == {}
    assert "no LM configured" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # no LM is a normal state


@pytest.mark.parametrize("mode,error", [("error", "fake GeneratePlan failed"), ("garbage", "AdapterParseError"),
                                        ("no_steps", "AdapterParseError")])
def test_a_failing_lm_gives_no_plan_never_an_exception(planner_lm, mode, error, caplog):
    caplog.set_level(logging.WARNING)
    planner_lm(plan_mode=mode)
    pred = run()
    assert pred.plan is None and error in pred.error and pred.error.startswith("generate: ") and pred.lm_calls == 1
    assert "\n" not in pred.error  # one line
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["generate"]
    assert pred.bullets_used == pred.templates_used == pred.hallucinated_ids == []
    assert pred.metadata["error"] == pred.error and pred.metadata["lm_fallbacks"] == ["generate"]
    assert "LM stage generate (GeneratePlan) failed" in caplog.text


def test_lm_calls_count_the_adapters_json_retry(planner_lm):
    engine = planner_lm(plan_mode="garbage", adapter=dspy.ChatAdapter())  # DSPy's default: retry as JSON
    pred = run()
    assert pred.plan is None and pred.lm_calls == 2 == engine.calls.count("GeneratePlan")


def test_templates_from_a_retriever_are_capped_and_a_failing_one_is_survived(planner_lm, caplog):
    planner_lm()
    seen = []

    def retriever(requirements):
        seen.append(requirements)
        return [{"title": "Doc 1", "content": "Mix 12.5 µL master mix.", "score": 0.9}, *TEMPLATES]

    pred = run(templates=None, retriever=retriever, config=PlannerConfig(max_templates=2))
    assert seen == [REQUIREMENTS] and len(pred.retrieved_template_ids) == 2
    assert pred.metadata["retrieved_templates"][0]["score"] == 0.9

    def broken(requirements):
        raise ConnectionError("vector store unreachable")

    caplog.set_level(logging.WARNING)
    pred = run(templates=None, retriever=broken)
    assert pred.plan is not None and pred.retrieved_template_ids == pred.templates_used == []
    assert "template retrieval failed (ConnectionError: vector store unreachable)" in caplog.text


def test_without_templates_the_prompt_says_so(planner_lm):
    engine = planner_lm()
    pred = TraceablePlanner()(requirements=REQUIREMENTS, bullets=PLAYBOOK)
    assert "(no templates)" in engine.prompts[0] and pred.plan is not None and pred.retrieved_template_ids == []
    assert format_templates([]) == "(no templates)"


def test_bullets_as_text_lines_and_repeated_ids(planner_lm, caplog):
    planner_lm()
    lines = PLAYBOOK.splitlines()[2:]
    pred = run(bullets=[*lines, lines[0]])
    assert pred.retrieved_bullet_ids == ["mat-00001", "proc-00001", "proc-00002", "qc-00001"]
    assert "given twice" in caplog.text
    with pytest.raises(TypeError):
        run(bullets=[42])


def test_trace_used_ids_classifies_by_what_was_provided():
    p = Plan(objective="x", steps=[PlanStep(text="Follow [template-002] and [mat-00001].")])
    assert trace_used_ids(p, ["template-002", "mat-00001", " [qc-00001] ", "N/A"], ["mat-00001", "qc-00001"],
                          ["template-002"]) == (["mat-00001", "qc-00001"], ["template-002"], [])
    assert trace_used_ids(p, ["mat-00001"], [], []) == ([], [], ["mat-00001", "template-002"])


def test_on_the_bundled_dataset_with_the_metric(planner_lm):
    planner_lm(invent=False)
    examples = [c.to_example() for c in load_planner_cases()[:4]]
    evaluate = dspy.Evaluate(devset=examples, metric=planner_score, num_threads=1, display_progress=False)
    result = evaluate(TraceablePlanner())
    assert 0 < result.score < 100  # the fake model cites the first bullets and templates, not the gold ones


def test_demos_holding_a_plan_survive_save_and_load(planner_lm, tmp_path):
    planner_lm()
    case = load_planner_cases()[0]
    planner = TraceablePlanner()
    planner.generate.demos = [dspy.Example(requirements=case.requirements, bullets="[mat-00001] helpful=0 harmful=0 "
                                           ":: Thaw on ice.", templates="(no templates)", plan=case.reference_plan,
                                           bullets_used=list(case.gold_bullet_ids), templates_used=[])]
    planner.save(tmp_path / "planner.json")
    loaded = TraceablePlanner()
    loaded.load(tmp_path / "planner.json")
    demo = loaded.generate.demos[0]
    assert Plan.model_validate(demo["plan"]) == case.reference_plan
    assert run().plan is not None and loaded(requirements=REQUIREMENTS, bullets=PLAYBOOK, templates=TEMPLATES).plan
