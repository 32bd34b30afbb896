import dspy

from tracerag.commands import metrics as m
from tracerag.datasets.smarthome import Target
from tracerag.home_commands.command_results import BulkGroup, BulkPlan, Candidate


def cand(device, command):
    return Candidate(device_id=device, command_id=command, label=device, room="", category="", score=1.0,
                     channels={})


def example(*targets):
    return dspy.Example(expected=[Target(d, tuple(c)) for d, c in targets], ir={"type_hint": "Light"})


def pred(candidates=(), bulk=None):
    from tracerag.signatures.query_ir import QueryIR

    return dspy.Prediction(candidates=[cand(*c) for c in candidates], bulk=bulk, ir=QueryIR())


def test_recall_counts_alternatives_and_partial_hits():
    ex = example(("a", ["on"]), ("b", ["level", "step"]))
    p = pred([("x", "on"), ("b", "step"), ("a", "off")])
    assert m.recall(ex, p) == 0.5
    assert m.hit(ex, p) == 1.0
    assert m.reciprocal_rank(ex, p) == 0.5


def test_recall_respects_k():
    ex = example(("a", ["on"]))
    p = pred([(f"x{i}", "on") for i in range(10)] + [("a", "on")])
    assert m.recall(ex, p, k=10) == 0.0 and m.recall(ex, p, k=11) == 1.0


def test_bulk_targets_replace_the_top_k_list():
    ex = example(("a", ["off"]), ("b", ["off"]))
    bulk = BulkPlan(command_id="off", groups=[BulkGroup(command_id="off", signature="s", device_ids=["a", "b", "c"])])
    p = pred([("z", "off")], bulk=bulk)
    assert m.recall(ex, p) == 1.0
    assert m.bulk_precision(ex, p) == 2 / 3


def test_bulk_that_asks_falls_back_to_candidates_and_has_no_precision():
    ex = example(("a", ["off"]))
    p = pred([("a", "off")], bulk=BulkPlan(hint="need_clarification"))
    assert m.recall(ex, p) == 1.0 and m.bulk_precision(ex, p) is None


def test_metric_contract_bool_with_trace():
    ex = example(("a", ["on"]), ("b", ["on"]))
    p = pred([("a", "on")])
    assert m.recall_at_10(ex, p) == 0.5
    assert m.recall_at_10(ex, p, trace=[]) is False


def test_feedback_names_missed_and_wrong_devices():
    ex = example(("a", ["off"]), ("b", ["off"]))
    bulk = BulkPlan(command_id="off", groups=[BulkGroup(command_id="off", signature="s", device_ids=["a", "fridge"])])
    fb = m.recall_feedback(ex, pred([("a", "off")], bulk=bulk))
    assert fb.score == 0.5
    assert "Missed: b (off)" in fb.feedback and "Wrongly included: fridge (off)" in fb.feedback
    assert "A correct parse would be" in fb.feedback
