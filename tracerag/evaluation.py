"""Run a program over labelled queries and build the report the CLI prints and writes as JSON.

The report shape is shared by every program: {"program", "dataset", "k", "n", "metrics", "breakdown",
"per_query"}; every per-query row says whether the LM failed for it (``lm_failed``, ``lm_fallbacks``).
Breakdowns (per home, quantifier, category) make regressions visible where they
happen instead of averaging them away.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from dspy.utils.parallelizer import ParallelExecutor
from tqdm import tqdm

from .lm.fault_budget import lm_fault_budget
from .metrics import commands as m


class _Failed:
    def __init__(self, error: Exception):
        self.error = error


def run_examples(score: Callable[[Any], dict], items: Sequence, *, num_threads: int = 1, desc: str, unit: str,
                 progress: bool = True) -> list[dict]:
    """``score(item)`` for every item, on ``num_threads`` threads, results in the items' order.

    DSPy's ParallelExecutor runs them, so each thread sees the caller's dspy settings and context (LM,
    adapter, callbacks); one thread runs them in this thread, one after another. The first failure (in
    the items' order) is raised once the items already started are done, and no new item starts after
    one failed. The progress bar counts finished items. The items are one run with one LM fault budget
    (``lm.fault_budget``): what failing LM calls may cost all of them together."""
    bar = tqdm(total=len(items), desc=desc, unit=unit, disable=not progress, leave=False)
    lock, failed = threading.Lock(), threading.Event()

    def task(item):
        if failed.is_set():
            return None
        try:
            out = score(item)
        except Exception as exc:  # raised below, after the other threads finish
            failed.set()
            out = _Failed(exc)
        with lock:
            bar.update()
        return out

    try:  # timeout=0: a slow item is never started a second time
        with lm_fault_budget():
            results = ParallelExecutor(num_threads=num_threads, disable_progress_bar=True,
                                       timeout=0).execute(task, items)
    finally:
        bar.close()
    for result in results:
        if isinstance(result, _Failed):
            raise result.error
    return results


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.fmean(values), 4) if values else None


def _latency(rows: list[dict]) -> dict:
    latencies = sorted(r["ms"] for r in rows)
    if not latencies:
        return {}
    return {"latency_ms_p50": round(statistics.median(latencies), 2),
            "latency_ms_p95": round(latencies[int(0.95 * (len(latencies) - 1))], 2)}


def fallback_metrics(rows: list[dict]) -> dict:
    """``lm_fallback_rate``: the share of examples where any LM stage fell back to its no-LM result;
    ``lm_fallbacks``: how many times each stage did. Zero with no LM (no LM is not a failure)."""
    rate, counts = _tally(rows, "lm_fallbacks")
    return {"lm_fallback_rate": rate, "lm_fallbacks": counts}


def overruled_metrics(rows: list[dict]) -> dict:
    """``lm_overruled_rate``: the share of queries whose LM parse failed a check against the utterance and
    the home (``safety_screen.CommandSafety.check_parse``); ``lm_overruled``: how often each check did."""
    rate, counts = _tally(rows, "lm_overruled")
    return {"lm_overruled_rate": rate, "lm_overruled": counts}


def _tally(rows: list[dict], key: str) -> tuple[float, dict[str, int]]:
    """(the share of rows whose ``key`` lists anything, how often each name is listed)."""
    counts = defaultdict(int)
    for row in rows:
        for name in row.get(key) or ():
            counts[name] += 1
    return _mean(float(bool(row.get(key))) for row in rows) or 0.0, dict(sorted(counts.items()))


def _fallbacks(pred) -> list[str]:
    return list(getattr(pred, "lm_fallbacks", None) or [])


def _lm_outcome(pred, *more: str) -> dict:
    """A report row's LM columns: ``lm_failed`` (an LM stage fell back to its no-LM result for this row,
    whatever the row's own ``hint`` says) and ``lm_fallbacks`` (which stages, in order; ``more``: the
    evaluation's own LM stages that fell back for the row, e.g. a judge)."""
    fallbacks = [*_fallbacks(pred), *more]
    return {"lm_failed": bool(fallbacks), "lm_fallbacks": fallbacks}


def _summary(rows: list[dict], k: int) -> dict:
    return {
        f"recall@{k}": _mean(r["recall"] for r in rows),
        f"hit@{k}": _mean(r["hit"] for r in rows),
        "mrr": _mean(r["rr"] for r in rows),
        "bulk_precision": _mean(r["bulk_precision"] for r in rows),
        "clarification_rate": _mean(float(r["hint"] == "need_clarification") for r in rows if r["bulk"]),
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


def _ranking_to_depth(deeper, q, pred) -> list[list[str]]:
    """The row's candidates to ``deeper.k``: the same search again with the parse the row used. The program's
    answer changes nothing else, so the ranking starts with the row's own candidates (else they are kept)."""
    shallow = [[c.device_id, c.command_id] for c in pred.candidates]
    again = deeper(query=q.query, home=q.home, ir=pred.ir)
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
        bulk = pred.bulk
        index = program.index_for(q.home)
        first = index.home.device(q.expected[0].device_id) if q.expected else None
        return {
            "id": q.id, "home": q.home, "query": q.query, "split": q.split,
            "quantifier": q.quantifier or (q.ir or {}).get("quantifier", "one"),
            "category": first.category if first else "",
            "recall": m.recall(example, pred, k), "hit": m.hit(example, pred, k),
            "rr": m.reciprocal_rank(example, pred, k), "bulk_precision": m.bulk_precision(example, pred),
            "bulk": bulk is not None, "hint": bulk.hint if bulk else None,
            "parse_source": pred.parse_source, "lm_calls": pred.lm_calls, "ms": round(elapsed_ms, 2),
            **_lm_outcome(pred), "lm_overruled": list(getattr(pred, "lm_overruled", None) or []),
            "withheld": [f"{w.device_id}/{w.command_id}" for w in getattr(pred, "withheld", None) or []],
            "ir": pred.ir.model_dump(),
            "expected": [{"device_id": t.device_id, "command_id": list(t.command_ids)} for t in q.expected],
            "returned": [list(p) for p in m.returned_pairs(pred, k)][:50],
            **({"ranking": _ranking_to_depth(deeper, q, pred)} if deeper and bulk is None and pred.candidates else {}),
        }

    with lm_fault_budget() as budget:  # the run's, reported
        rows = run_examples(score_one, queries, num_threads=num_threads, desc="evaluate commands", unit="query",
                            progress=progress)
    breakdown = {}
    for key in ("home", "quantifier", "category"):
        groups = defaultdict(list)
        for r in rows:
            groups[r[key] or "-"].append(r)
        breakdown[key] = {name: _summary(rs, k) for name, rs in sorted(groups.items())}
    metrics = _summary(rows, k)
    metrics["lm_calls_per_query"] = _mean(r["lm_calls"] for r in rows)
    metrics.update(fallback_metrics(rows))
    metrics.update(overruled_metrics(rows))
    metrics.update(_latency(rows))
    metrics["lm_fault_budget"] = budget.report()
    return {"program": "CommandRetrieval", "dataset": dataset, "k": k, "ir": program.ir_source, "n": len(rows),
            "metrics": metrics, "breakdown": breakdown, "per_query": rows}


def _experience_summary(rows: list[dict], k: int) -> dict:
    return {
        f"hit@{k}": _mean(r["hit"] for r in rows),
        f"recall@{k}": _mean(r["recall"] for r in rows),
        "mrr": _mean(r["rr"] for r in rows),
        "used_precision": _mean(r["used_precision"] for r in rows),
        "usefulness": _mean(r["usefulness"] for r in rows),
        "n": len(rows),
    }


def evaluate_experience(program, examples: list, *, dataset: str, k: int = 5, judge: bool = False,
                        progress: bool = True, num_threads: int = 1, ranked_depth: int | None = None) -> dict:
    """Score ExperienceRetrieval on dspy Examples from `ExperienceQuery.to_example` (same report shape).

    `judge` adds the LM-judged usefulness (one extra LM call per query with a non-empty experience). The
    judge's calls are counted (``lm_calls_judge``; ``lm_calls_observed``: every LM request of the row, the
    program's and the judge's) and a judge that fails is a fallback of the row (stage ``judge``).
    ``ranked_depth`` (any): each row also carries ``recall_at``, its recall@j for j = 1..k by the same metric
    (the HTML report's recall curve; the ranking is the selection handed to the summary, k deep).
    """
    from . import judges
    from .lm.meter import LMMeter
    from .metrics import experience as e
    from .programs.guarded_step import Stages

    def score_one(ex) -> dict:
        meter, judged = LMMeter(), Stages()
        with meter.measure():
            started = time.perf_counter()
            pred = program(**ex.inputs())
            elapsed_ms = (time.perf_counter() - started) * 1000
            usefulness = judges.usefulness(ex, pred, stages=judged) if judge else None
        return {
            "id": ex.id, "question": ex.question, "family": ex.family or "-",
            "input": "image" if ex.images or ex.caption else "text",
            "hit": e.hit_at_k(ex, pred, k), "recall": e.recall_at_k(ex, pred, k), "rr": e.reciprocal_rank(ex, pred, k),
            "used_precision": e.used_precision(ex, pred),
            "usefulness": usefulness,
            "rounds": pred.rounds, "lm_calls": pred.lm_calls, "lm_calls_judge": judged.calls,
            "lm_calls_observed": meter.calls, "ms": round(elapsed_ms, 2), "error": pred.error,
            **_lm_outcome(pred, *judged.fallbacks),
            "queries": pred.queries, "ranked": e.ranked_task_ids(pred)[:k], "used": pred.used_task_ids,
            "experience": pred.experience,
            **({"recall_at": [e.recall_at_k(ex, pred, j) for j in range(1, k + 1)]} if ranked_depth else {}),
        }

    with lm_fault_budget() as budget:  # the run's, reported
        rows = run_examples(score_one, examples, num_threads=num_threads, desc="evaluate experience", unit="task",
                            progress=progress)
    breakdown = {}
    for key in ("family", "input"):
        groups = defaultdict(list)
        for r in rows:
            groups[r[key]].append(r)
        breakdown[key] = {name: _experience_summary(rs, k) for name, rs in sorted(groups.items())}
    metrics = _experience_summary(rows, k)
    metrics["lm_calls_per_query"] = _mean(r["lm_calls"] for r in rows)
    metrics["lm_calls_judge"] = sum(r["lm_calls_judge"] for r in rows)
    metrics["lm_calls_observed"] = sum(r["lm_calls_observed"] for r in rows)
    metrics["errors"] = sum(r["error"] is not None for r in rows)
    metrics.update(fallback_metrics(rows))
    metrics.update(_latency(rows))
    metrics["lm_fault_budget"] = budget.report()
    return {"program": "ExperienceRetrieval", "dataset": dataset, "k": k, "n": len(rows),
            "config": program.config.model_dump(), "metrics": metrics, "breakdown": breakdown, "per_query": rows}


def _rag_summary(rows: list[dict], k: int) -> dict:
    return {
        f"recall@{k}": _mean(r["recall"] for r in rows),
        "mrr": _mean(r["rr"] for r in rows),
        "accuracy": _mean(r["accuracy"] for r in rows),
        "kept_gold": _mean(r["kept_gold"] for r in rows),
        "grounded_rate": _mean(None if r["grounded"] is None else float(r["grounded"]) for r in rows),
        "citation_validity": _mean(r["citation_validity"] for r in rows),
        "citation_coverage": _mean(r["citation_coverage"] for r in rows),
        "citation_recall": _mean(r["citation_recall"] for r in rows),
        "citation_precision": _mean(r["citation_precision"] for r in rows),
        "n": len(rows),
    }


def _ranked_documents(ex, pred, k: int) -> dict:
    """The documents of the first round's top-k chunks in rank order, and the gold documents (the HTML
    report's recall curve). No deeper search: the hybrid search's candidate pools grow with k, so a second
    search 50 deep does not start with the chunks the row was scored on (130 of the 206 bundled questions)."""
    first = (pred.retrieved_per_round or [[]])[0][:k]
    return {"ranking": [pred.chunk_doc_ids.get(c) for c in first], "relevant": list(ex.gold_doc_ids)}


def _rag_decided(pred) -> bool:
    """False for the extractive answer that decides nothing (no LM, an LM stage that failed before a
    verdict, a question that says nothing): its accuracy and kept_gold are not scored, so a dead endpoint
    reports what no LM does."""
    return not (pred.hint in ("no_lm", "empty_input") or (pred.hint == "lm_failed" and not pred.verdict))


def evaluate_rag(program, examples: list, *, dataset: str, k: int = 10, alce: bool = False,
                 progress: bool = True, num_threads: int = 1, ranked_depth: int | None = None) -> dict:
    """Score SelfReflectiveRAG on PubMedQA-style Examples (same report shape as the other programs).

    LM calls are counted twice: by the program and by an LMMeter (a DSPy callback); the report carries both and
    the program's per-question budget. ``alce`` adds the LM-judged citation recall and precision
    (after the program's calls, so they do not count against its budget): the judge is a guarded stage
    (``judge``: the breaker and the run's fault budget apply), its calls are counted apart
    (``lm_calls_judge``) and a judge that fails is a fallback of the row. ``ranked_depth`` (any): each row
    also carries ``ranking``, the documents of its first round's top k, and ``relevant``, its gold documents
    (the HTML report's recall curve, to k: ``--k 50`` for one to 50); nothing else changes.
    """
    from . import judges
    from .lm.meter import LMMeter
    from .metrics import rag as r
    from .programs.guarded_step import Stages

    def score_one(ex) -> dict:
        meter, judged = LMMeter(), Stages()
        with meter.measure():
            pred = program(question=ex.question)
        elapsed_ms = meter.seconds * 1000
        cited = pred.cited_ids
        citation_recall, citation_precision = judges.alce_citation_scores(pred, stages=judged) if alce else (None, None)
        return {
            "id": ex.pmid, "question": ex.question, "gold": ex.final_decision, "verdict": pred.verdict,
            "recall": r.doc_recall_at_k(ex, pred, k), "rr": r.doc_reciprocal_rank(ex, pred, k),
            "accuracy": r.decision_accuracy(ex, pred) if _rag_decided(pred) else None,
            "kept_gold": r.kept_gold(ex, pred) if _rag_decided(pred) else None,
            "grounded": pred.grounded, "hint": pred.hint or "-",
            "citation_validity": r.citation_validity(pred), "citation_coverage": r.answer_citation_coverage(pred),
            "citation_recall": citation_recall, "citation_precision": citation_precision,
            "rounds": pred.rounds, "lm_calls": pred.lm_calls, "lm_calls_observed": meter.calls,
            "lm_calls_judge": judged.calls, **_lm_outcome(pred, *judged.fallbacks),
            "ms": round(elapsed_ms, 2), "answer": pred.answer, "retrieved": pred.retrieved_per_round[0][:k],
            "kept": pred.kept_ids, "cited": cited, "invalid_cited": pred.invalid_cited_ids,
            **(_ranked_documents(ex, pred, k) if ranked_depth else {}),
        }

    with lm_fault_budget() as budget:  # the run's, reported
        rows = run_examples(score_one, examples, num_threads=num_threads, desc="evaluate rag", unit="question",
                            progress=progress)
    groups = defaultdict(list)
    for row in rows:
        groups[row["hint"]].append(row)
    metrics = _rag_summary(rows, k)
    metrics["lm_calls_per_question"] = _mean(row["lm_calls_observed"] for row in rows)
    metrics["lm_calls_max"] = max((row["lm_calls_observed"] for row in rows), default=0)
    metrics["lm_call_budget"] = program.lm_call_budget()
    metrics["lm_calls_judge"] = sum(row["lm_calls_judge"] for row in rows)
    metrics.update(fallback_metrics(rows))
    metrics.update(_latency(rows))
    metrics["lm_fault_budget"] = budget.report()
    return {"program": "SelfReflectiveRAG", "dataset": dataset, "k": k, "n": len(rows),
            "config": program.config.model_dump(), "metrics": metrics,
            "breakdown": {"hint": {name: _rag_summary(rs, k) for name, rs in sorted(groups.items())}},
            "per_query": rows}


def _planner_summary(rows: list[dict]) -> dict:
    return {key: _mean(r[key] for r in rows) for key in ("used_recall", "used_precision", "used_f1",
                                                         "citation_validity", "citation_coverage", "score")} | {
        "hallucinated_per_plan": _mean(float(r["hallucinated"]) for r in rows), "n": len(rows)}


def evaluate_planner(program, examples: list, *, dataset: str, progress: bool = True,
                     num_threads: int = 1) -> dict:
    """Score TraceablePlanner on Examples from `PlannerCase.to_example` (same report shape)."""
    from .metrics import planner as p

    def score_one(ex) -> dict:
        started = time.perf_counter()
        pred = program(**ex.inputs())
        elapsed_ms = (time.perf_counter() - started) * 1000
        return {
            "id": ex.id, "domain": ex.domain, "used_recall": p.used_id_recall(ex, pred),
            "used_precision": p.used_id_precision(ex, pred), "used_f1": p.used_id_f1(ex, pred),
            "citation_validity": p.plan_citation_validity(ex, pred),
            "citation_coverage": p.plan_citation_coverage(ex, pred), "score": p.planner_score(ex, pred),
            "hallucinated": len(pred.hallucinated_ids), "lm_calls": pred.lm_calls, "error": pred.error,
            "planned": pred.plan is not None, **_lm_outcome(pred),
            "ms": round(elapsed_ms, 2), "gold": list(ex.gold_bullet_ids) + list(ex.gold_template_ids),
            "used": list(pred.bullets_used) + list(pred.templates_used), "metadata": pred.metadata,
        }

    with lm_fault_budget() as budget:  # the run's, reported
        rows = run_examples(score_one, examples, num_threads=num_threads, desc="evaluate planner", unit="case",
                            progress=progress)
    groups = defaultdict(list)
    for row in rows:
        groups[row["domain"]].append(row)
    metrics = _planner_summary(rows)
    metrics["lm_calls_per_query"] = _mean(row["lm_calls"] for row in rows)
    metrics["errors"] = sum(row["error"] is not None for row in rows)
    metrics["plans"] = sum(row["planned"] for row in rows)  # 0 without an LM: the no-LM path plans nothing
    metrics.update(fallback_metrics(rows))
    metrics.update(_latency(rows))
    metrics["lm_fault_budget"] = budget.report()
    return {"program": "TraceablePlanner", "dataset": dataset, "k": None, "n": len(rows),
            "config": program.config.model_dump(), "metrics": metrics,
            "breakdown": {"domain": {name: _planner_summary(rs) for name, rs in sorted(groups.items())}},
            "per_query": rows}


def _agent_summary(rows: list[dict]) -> dict:
    return {key: _mean(r[key] for r in rows) for key in (
        "accuracy", "citation_validity", "citation_coverage", "gold_found", "tool_calls", "hallucinated_outputs",
        "lm_calls")} | {"answered_rate": _mean(float(r["stop_reason"] == "answered") for r in rows), "n": len(rows)}


def evaluate_agent(program, examples: list, *, dataset: str, progress: bool = True,
                   num_threads: int = 1) -> dict:
    """Score SearchAgent on PubMedQA-style Examples (same report shape); ``trajectories`` holds every
    run's Trajectory by example id, for export."""
    from .metrics import agent as a

    trajectories = {}

    def score_one(ex) -> dict:
        pred = program(question=ex.question)
        trajectories[ex.pmid] = pred.trajectory
        return {
            "id": ex.pmid, "question": ex.question, "gold": ex.final_decision,
            "decision": a.answer_decision(pred.answer),
            # the no-LM answer (also what an LM failure gives) quotes evidence and decides nothing
            "accuracy": a.decision_accuracy(ex, pred) if pred.hint not in ("no_lm", "lm_failed", "empty_input")
            else None,
            "citation_validity": a.citation_validity(pred), "citation_coverage": a.citation_coverage(pred),
            "gold_found": a.gold_found(ex, pred), "tool_calls": pred.tool_calls,
            "hallucinated_outputs": pred.hallucinated_outputs, "lm_calls": pred.lm_calls,
            "stop_reason": pred.stop_reason, "ms": pred.ms, "cited": pred.ids_cited,
            "invalid_cited": pred.trajectory.invalid_citations, "answer": pred.answer,
            **_lm_outcome(pred),
        }

    with lm_fault_budget() as budget:  # the run's, reported
        rows = run_examples(score_one, examples, num_threads=num_threads, desc="evaluate agent", unit="question",
                            progress=progress)
    trajectories = {r["id"]: trajectories[r["id"]] for r in rows}  # in the examples' order
    groups = defaultdict(list)
    for row in rows:
        groups[row["stop_reason"]].append(row)
    metrics = _agent_summary(rows)
    metrics.update(fallback_metrics(rows))
    metrics.update(_latency(rows))
    metrics["lm_fault_budget"] = budget.report()
    return {"program": "SearchAgent", "dataset": dataset, "k": None, "n": len(rows),
            "config": program.config.model_dump(), "metrics": metrics,
            "breakdown": {"stop_reason": {name: _agent_summary(rs) for name, rs in sorted(groups.items())}},
            "per_query": rows, "trajectories": trajectories}
