"""Command-retrieval metrics: pure functions of (example, prediction).

The returned set is the bulk plan's targets when bulk mode produced an executable plan, otherwise
the top-k candidates. An "any" query ("开个灯就行，哪盏都可以") lists every acceptable device, and
returning one of them satisfies it. A gold target counts as found when its device is returned with any of its
acceptable command ids. Metric contract: with `trace` (bootstrapping) a strict bool, else a float.

`parse_recall_at_10` (the metric compile uses) also checks the parse against the example's gold IR:
recall alone keeps a parse of "主卧的灯都关掉" as 打开 whenever both commands sit in the top ten.
"""

from __future__ import annotations

import dspy
from pydantic import ValidationError

from ..signatures.query_ir import QueryIR, action_polarity


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


# -- the parse itself, against the gold IR ----------------------------------------------------------

def _as_query_ir(value) -> QueryIR | None:
    if isinstance(value, QueryIR):
        return value
    if not isinstance(value, dict):
        return None
    try:
        return QueryIR.model_validate(value)
    except ValidationError:
        return None


def parse_disagreements(gold_ir, ir) -> list[str]:
    """What a parse gets wrong against the gold IR: the action's on/off polarity (when the gold action has
    one), type_hint, scope_include, scope_exclude, quantifier. Empty when the parse agrees."""
    gold, parsed = _as_query_ir(gold_ir), _as_query_ir(ir)
    if gold is None:
        return []
    if parsed is None:
        return ["no parse"]
    problems = []
    want = action_polarity(gold.action)
    if want is not None and action_polarity(parsed.action) != want:
        problems.append(f"action {parsed.action!r} does not switch {want} like the gold {gold.action!r}")
    if parsed.type_hint != gold.type_hint:
        problems.append(f"type_hint {parsed.type_hint} where the gold is {gold.type_hint}")
    for name in ("scope_include", "scope_exclude"):
        got, expected = getattr(parsed, name), getattr(gold, name)
        if set(got) != set(expected):
            problems.append(f"{name} {got} where the gold is {expected}")
    if parsed.quantifier != gold.quantifier:
        problems.append(f"quantifier {parsed.quantifier} where the gold is {gold.quantifier}")
    return problems


def parse_agreement(gold_ir, ir) -> float:
    """The share of the checked parts (polarity, type_hint, both scopes, quantifier) the parse gets right;
    0.0 when it switches the wrong way (an "off" read as "on" is never half right)."""
    gold, parsed = _as_query_ir(gold_ir), _as_query_ir(ir)
    if gold is None:
        return 1.0
    if parsed is None:
        return 0.0
    problems = parse_disagreements(gold, parsed)
    want = action_polarity(gold.action)
    if want is not None and action_polarity(parsed.action) != want:
        return 0.0
    checked = 4 + (want is not None)
    return (checked - len(problems)) / checked


def lm_parse(pred):
    """The parse the LM gave, before any field was overruled by the utterance (``pred.lm_parse``), else the
    prediction's parse: what an optimizer teaches is the LM's own reading, and a reading the program had to
    correct must never become a demo."""
    return getattr(pred, "lm_parse", None) or getattr(pred, "ir", None)


def parse_recall_at_10(example, pred, trace=None) -> float | bool:
    """The commands optimisation metric: recall@10 and the parse checked against the example's gold IR.

    With ``trace`` (bootstrapping): every gold target found AND the LM's own parse (``lm_parse``) agrees with
    the gold IR (polarity, type_hint, scopes, quantifier), so a demo that reads "关掉" as 打开 is never kept
    however good its recall, even when the program overruled that reading. Otherwise recall@10 x
    parse_agreement, in [0, 1]. Without a gold IR (or one that does not validate): recall_at_10."""
    gold = _as_query_ir(getattr(example, "ir", None))
    if gold is None:
        return recall_at_10(example, pred, trace)
    score = recall(example, pred, 10)
    parsed = lm_parse(pred)
    if trace is not None:
        return score >= 1.0 and not parse_disagreements(gold, parsed)
    return score * parse_agreement(gold, parsed)


def parse_recall_feedback(gold, pred, trace=None, pred_name=None, pred_trace=None) -> dspy.Prediction:
    """parse_recall_at_10 with the text GEPA reflects on: recall_feedback's diagnosis plus each part of the
    parse that disagrees with the gold IR."""
    base = recall_feedback(gold, pred, trace, pred_name, pred_trace)
    gold_ir = _as_query_ir(getattr(gold, "ir", None))
    if gold_ir is None:
        return base
    parsed = lm_parse(pred)
    problems = parse_disagreements(gold_ir, parsed)
    score = parse_recall_at_10(gold, pred)
    lines = [f"score = {score:.2f} (recall@10 x parse agreement {parse_agreement(gold_ir, parsed):.2f})",
             base.feedback]
    if problems:
        lines.append("The parse disagrees with the gold IR: " + "; ".join(problems) + ".")
        if "A correct parse would be" not in base.feedback:
            lines.append(f"A correct parse would be: {gold_ir.model_dump_json()}")
    return dspy.Prediction(score=score, feedback="\n".join(lines))
