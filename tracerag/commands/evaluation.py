"""Evaluating CommandRetrieval: every labelled query scored (recall, hit, MRR, bulk precision), with
breakdowns per home, quantifier and category so a regression shows where it happens."""

from __future__ import annotations

import time
from collections import defaultdict

from ..evaluation import fallback_metrics, latency_metrics, lm_outcome, mean_of, overruled_metrics, run_examples
from ..hints import Hint
from ..lm.fault_budget import lm_fault_budget
from . import metrics as m
from .result import CommandsResult


def _command_summary(rows: list[dict], k: int) -> dict:
    return {
        f"recall@{k}": mean_of(r["recall"] for r in rows),
        f"hit@{k}": mean_of(r["hit"] for r in rows),
        "mrr": mean_of(r["rr"] for r in rows),
        "bulk_precision": mean_of(r["bulk_precision"] for r in rows),
        "clarification_rate": mean_of(float(r["hint"] == Hint.NEED_CLARIFICATION) for r in rows if r["bulk"]),
        "n": len(rows),
    }


def _deeper_search(program, depth: int | None):
    """A copy of ``program`` that ranks ``depth`` candidates from a parse it is given (no LM call), or None
    when ``depth`` is no deeper than the program's own ranking."""
    import copy

    if not depth or depth <= program.k:
        return None
    deeper = copy.copy(program)
    deeper.k, deeper.ir_source = depth, "gold"
    return deeper


def _ranking_to_depth(deeper, q, result: CommandsResult) -> list[list[str]]:
    """The row's candidates to ``deeper.k``: the same search again with the parse the row used. The program's
    answer changes nothing else, so the ranking starts with the row's own candidates (else they are kept)."""
    shallow = [[c.device_id, c.command_id] for c in result.candidates]
    again = CommandsResult.of(deeper(query=q.query, home=q.home, ir=result.ir))
    ranking = [[c.device_id, c.command_id] for c in again.candidates]
    return ranking if ranking[:len(shallow)] == shallow else shallow


def evaluate_commands(program, queries_by_home: dict, *, dataset: str, k: int = 10, progress: bool = True,
                      num_threads: int = 1, ranked_depth: int | None = None) -> dict:
    """Score CommandRetrieval on every query; `queries_by_home` maps home dir -> LabelledQuery list.

    ``ranked_depth`` (deeper than the program's ``k``): each row whose answer is a ranking, not a bulk plan,
    also carries ``ranking``, its candidates to that depth (the HTML report's recall curve); the metrics and
    every other field stay those of the program as it is."""
    queries = [q for qs in queries_by_home.values() for q in qs]
    deeper = _deeper_search(program, ranked_depth)

    def score_one(q) -> dict:
        example = q.to_example()
        started = time.perf_counter()
        pred = program(query=q.query, home=q.home, ir=q.ir)
        elapsed_ms = (time.perf_counter() - started) * 1000
        result = CommandsResult.of(pred)  # its fields, typed; the metrics read the Prediction, as DSPy's do
        bulk = result.bulk
        index = program.index_for(q.home)
        first = index.home.device(q.expected[0].device_id) if q.expected else None
        return {
            "id": q.id, "home": q.home, "query": q.query, "split": q.split,
            "quantifier": q.quantifier or (q.ir or {}).get("quantifier", "one"),
            "category": first.category if first else "",
            "recall": m.recall(example, pred, k), "hit": m.hit(example, pred, k),
            "rr": m.reciprocal_rank(example, pred, k), "bulk_precision": m.bulk_precision(example, pred),
            "bulk": bulk is not None, "hint": bulk.hint if bulk else None,
            "pred_hint": result.hint or None, "unresolved": list(result.unresolved),
            "parse_source": result.parse_source, "lm_calls": result.lm_calls, "ms": round(elapsed_ms, 2),
            **lm_outcome(pred), "lm_overruled": list(result.lm_overruled),
            "withheld": [f"{w.device_id}/{w.command_id}" for w in result.withheld],
            "ir": result.ir.model_dump(),
            "expected": [{"device_id": t.device_id, "command_id": list(t.command_ids)} for t in q.expected],
            "returned": [list(p) for p in m.returned_pairs(pred, k)][:50],
            **({"ranking": _ranking_to_depth(deeper, q, result)}
               if deeper and bulk is None and result.candidates else {}),
        }

    with lm_fault_budget() as budget:  # the run's, reported
        rows = run_examples(score_one, queries, num_threads=num_threads, desc="evaluate commands", unit="query",
                            progress=progress)
    breakdown = {}
    for key in ("home", "quantifier", "category"):
        groups = defaultdict(list)
        for r in rows:
            groups[r[key] or "-"].append(r)
        breakdown[key] = {name: _command_summary(rs, k) for name, rs in sorted(groups.items())}
    metrics = _command_summary(rows, k)
    metrics["lm_calls_per_query"] = mean_of(r["lm_calls"] for r in rows)
    metrics.update(fallback_metrics(rows))
    metrics.update(overruled_metrics(rows))
    metrics.update(latency_metrics(rows))
    metrics["lm_fault_budget"] = budget.report()
    return {"program": "CommandRetrieval", "dataset": dataset, "k": k, "ir": program.ir_source, "n": len(rows),
            "metrics": metrics, "breakdown": breakdown, "per_query": rows, "devices": _devices_named(program, rows)}


def _devices_named(program, rows: list[dict]) -> dict[str, dict[str, dict[str, str]]]:
    """Per home (the rows' ``home``), the label and room of every device a row names (expected, returned,
    ranked or withheld): the HTML report shows these instead of ids."""
    named: dict[str, dict[str, dict[str, str]]] = {}
    for row in rows:
        ids = {t["device_id"] for t in row["expected"]} | {pair[0] for pair in row["returned"]}
        ids |= {pair[0] for pair in row.get("ranking", ())} | {w.split("/", 1)[0] for w in row["withheld"]}
        home, known = program.index_for(row["home"]).home, named.setdefault(row["home"] or "", {})
        for device_id in sorted(ids - known.keys()):
            device = home.find(device_id)
            if device is not None:
                known[device_id] = {"label": device.label, "room": device.room}
    return named
