"""Search the command index's own parameters (fusion weights, room bonus, thresholds) without an LM.

A seeded random local search on the train split: each trial perturbs the best parameters so far and
keeps them when the objective improves. The objective is recall@10 discounted by bulk precision, so
a wider bulk expansion cannot buy recall with wrong devices. Dev scores are reported, never used.
"""

from __future__ import annotations

import random
import statistics

from tqdm import tqdm

from ..home_commands.index_params import IndexParams
from . import metrics as m

# name -> (low, high) for floats; the search moves inside these bounds.
SEARCH_SPACE = {
    "w_lexical": (0.0, 1.5),
    "w_argument": (0.0, 1.0),
    "w_subject": (0.0, 1.5),
    "w_verb": (0.0, 1.5),
    "w_within_device": (0.0, 1.5),
    "repeat_penalty": (0.0, 0.6),
    "w_coverage": (0.0, 1.5),
    "name_specificity": (1.0, 10.0),
    "w_name": (0.0, 1.5),
    "w_name_keyword_first": (0.0, 2.0),
    "w_room": (0.0, 1.0),
    "option_temperature": (0.005, 0.2),
    "min_top1_ratio": (0.2, 0.8),
    "min_margin": (0.0, 0.5),
    "category_share": (0.5, 0.95),
}


def objective(program, queries_by_home) -> float:
    scores = []
    for queries in queries_by_home.values():
        for q in queries:
            example = q.to_example()
            pred = program(query=q.query, home=q.home, ir=q.ir)
            precision = m.bulk_precision(example, pred)
            scores.append(m.recall(example, pred, 10) * (1.0 if precision is None else precision))
    return statistics.fmean(scores) if scores else 0.0


def _set_params(program, params: IndexParams) -> None:
    for index in program.indexes.values():
        index.params = params


def tune_index_params(program, train, dev, *, trials: int = 60, seed: int = 0, progress: bool = True) -> dict:
    """Tune in place; returns the before/after scores on train and dev, and whether any trial beat the
    starting parameters on train (``changed``: False means the program is as it was)."""
    rng = random.Random(seed)
    best = start = next(iter(program.indexes.values())).params
    best_score = start_train = objective(program, train)
    start_dev = objective(program, dev)
    for _ in tqdm(range(trials), desc="tune", disable=not progress, leave=False):
        values = best.model_dump()
        for name in rng.sample(sorted(SEARCH_SPACE), k=rng.randint(1, 3)):
            lo, hi = SEARCH_SPACE[name]
            values[name] = min(hi, max(lo, values[name] + rng.gauss(0, (hi - lo) / 6)))
        candidate = IndexParams(**values)
        _set_params(program, candidate)
        score = objective(program, train)
        if score > best_score:
            best, best_score = candidate, score
    _set_params(program, best)
    return {"train_before": round(start_train, 4), "train_after": round(best_score, 4),
            "dev_before": round(start_dev, 4), "dev_after": round(objective(program, dev), 4),
            "trials": trials, "changed": best != start, "params": best.model_dump()}
