"""Command-retrieval metrics: pure functions of (example, prediction).

The returned set is the bulk plan's targets when bulk mode produced an executable plan, otherwise
the top-k candidates. An "any" query ("开个灯就行，哪盏都可以") lists every acceptable device, and
returning one of them satisfies it. A gold target counts as found when its device is returned with any of its
acceptable command ids. Metric contract: with `trace` (bootstrapping) a strict bool, else a float.
"""

from __future__ import annotations

import dspy


def returned_pairs(pred, k: int = 10) -> list[tuple[str, str]]:
    bulk = getattr(pred, "bulk", None)
    if bulk is not None and bulk.targets:
        return bulk.targets
    return [(c.device_id, c.command_id) for c in pred.candidates[:k]]


def _matches(target, pair: tuple[str, str]) -> bool:
    return pair[0] == target.device_id and pair[1] in target.command_ids


def recall(example, pred, k: int = 10) -> float:
    """|expected ∩ returned| / |expected|; for an "any" query one expected target is enough."""
    returned = returned_pairs(pred, k)
    if not example.expected:
        return 1.0
    if getattr(example, "quantifier", None) == "any":
        return hit(example, pred, k)
    return sum(any(_matches(t, p) for p in returned) for t in example.expected) / len(example.expected)


def hit(example, pred, k: int = 10) -> float:
    returned = returned_pairs(pred, k)
    return float(any(_matches(t, p) for t in example.expected for p in returned))


def reciprocal_rank(example, pred, k: int = 10) -> float:
    for rank, pair in enumerate(returned_pairs(pred, k), start=1):
        if any(_matches(t, pair) for t in example.expected):
            return 1.0 / rank
    return 0.0


def bulk_precision(example, pred) -> float | None:
    """Share of bulk targets that were expected; None when no bulk plan was executed."""
    bulk = getattr(pred, "bulk", None)
    if bulk is None or not bulk.targets:
        return None
    targets = bulk.targets
    return sum(any(_matches(t, p) for t in example.expected) for p in targets) / len(targets)


def recall_at_10(example, pred, trace=None) -> float | bool:
    """The optimisation metric: recall@10 (all gold targets found, when bootstrapping)."""
    score = recall(example, pred, 10)
    return score >= 1.0 if trace is not None else score


def recall_feedback(gold, pred, trace=None, pred_name=None, pred_trace=None) -> dspy.Prediction:
    """recall@10 with a textual diagnosis for GEPA: which devices/commands were missed or wrongly included."""
    returned = returned_pairs(pred, 10)
    labels = {c.device_id: c.label for c in pred.candidates}
    missed = [t for t in gold.expected if not any(_matches(t, p) for p in returned)]
    wrong = [p for p in returned if not any(_matches(t, p) for t in gold.expected)]
    score = recall(gold, pred, 10)
    lines = [f"recall@10 = {score:.2f}. Parsed IR: {pred.ir.model_dump_json()}"]
    if missed:
        lines.append("Missed: " + "; ".join(f"{labels.get(t.device_id, t.device_id)} ({'|'.join(t.command_ids)})"
                                            for t in missed))
    bulk = getattr(pred, "bulk", None)
    if bulk is not None and bulk.targets and wrong:
        lines.append("Wrongly included: " + "; ".join(f"{labels.get(d, d)} ({c})" for d, c in wrong[:10]))
    if bulk is not None and bulk.hint:
        lines.append(f"Bulk mode answered {bulk.hint}: {bulk.reason}")
    gold_ir = getattr(gold, "ir", None)
    if score < 1.0 and gold_ir:
        lines.append(f"A correct parse would be: {gold_ir}")
    return dspy.Prediction(score=score, feedback="\n".join(lines))
