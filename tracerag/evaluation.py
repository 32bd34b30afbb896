"""What every program's evaluation shares: running it over labelled examples (in threads, under one LM fault
budget) and the report columns every program's report has. Each program's own evaluation is its package's
``evaluation`` module.

The report shape is shared by every program: {"program", "dataset", "k", "n", "metrics", "breakdown",
"per_query"}; every per-query row says whether the LM failed for it (``lm_failed``, ``lm_fallbacks``).
Breakdowns (per home, quantifier, category) make regressions visible where they
happen instead of averaging them away.
"""

from __future__ import annotations

import statistics
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from dspy.utils.parallelizer import ParallelExecutor
from tqdm import tqdm

from .lm.fault_budget import lm_fault_budget


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


def mean_of(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.fmean(values), 4) if values else None


def latency_metrics(rows: list[dict]) -> dict:
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
    return mean_of(float(bool(row.get(key))) for row in rows) or 0.0, dict(sorted(counts.items()))


def _fallbacks(pred) -> list[str]:
    return list(getattr(pred, "lm_fallbacks", None) or [])


def lm_outcome(pred, *more: str) -> dict:
    """A report row's LM columns: ``lm_failed`` (an LM stage fell back to its no-LM result for this row,
    whatever the row's own ``hint`` says) and ``lm_fallbacks`` (which stages, in order; ``more``: the
    evaluation's own LM stages that fell back for the row, e.g. a judge)."""
    fallbacks = [*_fallbacks(pred), *more]
    return {"lm_failed": bool(fallbacks), "lm_fallbacks": fallbacks}
