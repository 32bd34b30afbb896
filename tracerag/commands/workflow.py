"""CommandRetrieval's workflows: its labelled queries, evaluation, one utterance (optionally executed on the
home's API), compile, and the index build and tuning that only this program has."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import InvalidValue
from ..workflows.reading import print_reading
from ..workflows.results import Compiled, Outcome


def examples(dataset: str, split: str = "test", *, max_skipped: float = 0.0) -> list:
    """The labelled queries of ``split`` (``all``: every split) as dspy Examples."""
    from ..data_files.read_report import ReadReport
    from ..datasets.smarthome import load_dataset

    read = ReadReport("queries")
    queries = load_dataset(dataset, None if split == "all" else split, report=read)
    print_reading(f"{dataset} queries.jsonl", read, max_skipped)
    return [q.to_example() for qs in queries.values() for q in qs]


def evaluate(build: Callable, *, dataset: str, split: str = "test", ir: str | None = None, k: int | None = None,
             max_skipped: float = 0.0, num_threads: int = 1, lm: bool = False,
             ranked_depth: int | None = None) -> Outcome:
    """Score the program on the split's queries; ``ir``: how queries are parsed (none, gold, lm; default lm
    with an LM, else none); ``ranked_depth``: how deep each row's ``ranking`` goes (the HTML report's
    recall curve; the metrics stay at ``k``)."""
    from ..data_files.read_report import DataSetShrunk, ReadReport
    from ..datasets.smarthome import load_dataset
    from .evaluation import evaluate_commands

    ir = ir or ("lm" if lm else "none")
    if ir == "lm" and not lm:
        raise InvalidValue("--ir lm needs an LM (--lm or TRACERAG_LM)")
    read = ReadReport("queries")
    queries = load_dataset(dataset, None if split == "all" else split, report=read)
    program = build(ir_source=ir)
    print_reading(f"{dataset} queries.jsonl", read, max_skipped)
    if not any(queries.values()):
        raise DataSetShrunk(f"{dataset}: no labelled queries in the {split} split (queries.jsonl)")
    return Outcome(evaluate_commands(program, queries, dataset=str(dataset), k=k or 10, num_threads=num_threads,
                                     ranked_depth=ranked_depth))


def run(build: Callable, *, query: str, dataset: str | None = None, home: str | None = None, execute: bool = False,
        dry_run: bool = False, confirm_sensitive: bool = False, target: str | None = None,
        home_url: str | None = None) -> Outcome:
    """The candidates (or bulk plan) for one utterance as JSON; with ``execute``, sent to the home's API too
    (exit code 1 when anything was refused or failed, 2 when the target cannot be used)."""
    from ..smarthome.cli import execute_prediction

    if not dataset:
        raise InvalidValue("run commands needs --dataset")
    program = build(plain=True)  # without an LM: the same answer, without importing DSPy
    pred = program(query=query, home=home)
    out = {"ir": pred.ir.model_dump(), "parse_source": pred.parse_source, "hint": pred.hint,
           "lm_fallbacks": pred.lm_fallbacks, "lm_overruled": pred.lm_overruled, "lm_calls": pred.lm_calls,
           "lm_parse": pred.lm_parse.model_dump() if pred.lm_parse is not None else None,
           "candidates": [c.model_dump() for c in pred.candidates],
           "bulk": pred.bulk.model_dump() if pred.bulk else None,
           "withheld": [w.model_dump() for w in pred.withheld]}
    code = 0
    if execute:
        out["execution"], code = execute_prediction(pred, home=program.index_for(home).home, target=target,
                                                    home_url=home_url, dry_run=dry_run,
                                                    confirm_sensitive=confirm_sensitive, dataset=dataset, query=query)
    return Outcome(json.dumps(out, ensure_ascii=False, indent=1), code=code)


def compile(build: Callable, *, dataset: str, optimizer: str, max_train: int = 0, options: dict) -> Compiled:
    """Optimise the LM parse's prompt for parse_recall@10 on the train split, scored on dev."""
    from .compiling import compile_commands

    program = build(ir_source="lm")
    scores = compile_commands(program, dataset, optimizer, max_train=max_train, **options)
    return Compiled(scores.pop("program"), scores)


def indexed(dataset: str, embedder) -> Iterator[tuple[Path, dict, Any]]:
    """Index every home of ``dataset`` in turn (filling the embedding cache): (home directory, the index's
    manifest with the seconds it took and its warning count, the home read)."""
    from ..datasets.smarthome import home_dirs, resolve_dataset
    from .command_retrieval import build_indexes

    for path in home_dirs(resolve_dataset(dataset)):
        started = time.perf_counter()
        built = next(iter(build_indexes([path], embedder).values()))
        yield path, {**built.manifest, "seconds": round(time.perf_counter() - started, 3),
                     "warnings": len(built.home.warnings)}, built.home


def tune(build: Callable, *, dataset: str, trials: int = 60, seed: int = 0) -> Compiled:
    """Search the index parameters on the train split (no LM), checked on dev."""
    from ..datasets.smarthome import load_dataset
    from .tuning import tune_index_params

    program = build(ir_source="none")
    result = tune_index_params(program, load_dataset(dataset, "train"), load_dataset(dataset, "dev"), trials=trials,
                               seed=seed)
    return Compiled(program, result)
