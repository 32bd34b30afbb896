"""SearchAgent's workflows: its questions (PubMedQA's), evaluation, one question, compile, and the exports
of its trajectories (JSONL, and the successful runs as experience traces). Each closes the agent's tools."""

from __future__ import annotations

import json
from collections.abc import Callable

from ..workflows.reading import pubmedqa_examples
from ..workflows.results import Compiled, Outcome


def examples(dataset: str, split: str = "test", *, max_skipped: float = 0.0, limit: int = 0) -> list:
    """The questions of ``split`` as dspy Examples, the first ``limit`` of them when given."""
    labelled = pubmedqa_examples(dataset, split, max_skipped=max_skipped)
    return labelled[:limit] if limit else labelled


def export_trajectories(trajectories: dict, sub_task: str, *, jsonl: str | None = None, traces: str | None = None,
                        correct: dict | None = None) -> list[str]:
    """Write every trajectory to ``jsonl``, and the successful ones (with gold, the correct ones) as experience
    traces under ``traces``; the lines that say what was written."""
    from ..tools.trajectory import write_jsonl, write_traces

    lines = []
    if jsonl:
        lines.append(f"{write_jsonl(trajectories.items(), jsonl)} trajectories written to {jsonl}")
    if traces:
        kept = [t.to_trace(f"agent-{task_id}", is_correct=True, sub_task=sub_task)
                for task_id, t in trajectories.items()
                if t.succeeded and (correct is None or correct.get(task_id) is not False)]
        lines.append(f"{write_traces(kept, traces)} successful runs written to {traces}/tasks/ (index them with "
                     "tracerag build-bank --append)")
    return lines


def evaluate(build: Callable, *, dataset: str, split: str = "test", limit: int = 0, max_skipped: float = 0.0,
             num_threads: int = 1, jsonl: str | None = None, traces: str | None = None) -> Outcome:
    """Score the agent on the split's questions (the first ``limit``); each row carries its trajectory."""
    from .evaluation import evaluate_agent

    program = build()
    try:
        report = evaluate_agent(program, examples(dataset, split, max_skipped=max_skipped, limit=limit),
                                dataset=str(dataset), num_threads=num_threads)
    finally:
        program.toolbox.close()
    trajectories = report.pop("trajectories")
    report["per_query"] = [{**row, "trajectory": trajectories[row["id"]].model_dump()} for row in report["per_query"]]
    lines = export_trajectories(trajectories, program.config.sub_task, jsonl=jsonl, traces=traces,
                                correct={row["id"]: row["accuracy"] != 0.0 for row in report["per_query"]})
    return Outcome(report, lines=lines)


def run(build: Callable, *, query: str, sub_task: str | None = None, jsonl: str | None = None,
        traces: str | None = None) -> Outcome:
    """The interleaved trajectory for one question, then its summary as JSON."""
    import hashlib

    program = build()
    try:
        pred = program(question=query)
    finally:
        program.toolbox.close()
    t = pred.trajectory
    summary = {"stop_reason": t.stop_reason, "tool_calls": t.total_tool_calls, "tools_used": t.tools_used,
               "ids_cited": t.ids_cited, "invalid_citations": t.invalid_citations,
               "hallucinated_outputs": t.hallucinated_outputs, "steps": t.steps, "hint": pred.hint,
               "lm_fallbacks": pred.lm_fallbacks}
    lines = export_trajectories({hashlib.sha1(query.encode()).hexdigest()[:12]: t},
                                sub_task or program.config.sub_task, jsonl=jsonl, traces=traces)
    return Outcome(t.interleaved_text + "\n" + json.dumps(summary, ensure_ascii=False), lines=lines)


def compile(build: Callable, *, dataset: str, optimizer: str, max_train: int = 0, options: dict) -> Compiled:
    """Optimise the step policy on the train split, scored on dev."""
    from .compiling import compile_agent

    program = build()
    try:
        trainset = examples(dataset, "train")
        scores = compile_agent(program, trainset[:max_train] if max_train else trainset, examples(dataset, "dev"),
                               optimizer, **options)
    finally:
        program.toolbox.close()
    return Compiled(scores.pop("program"), scores)
