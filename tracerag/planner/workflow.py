"""TraceablePlanner's workflows: its labelled cases, evaluation, and compile (it has no one-input run)."""

from __future__ import annotations

from collections.abc import Callable

from ..workflows.reading import print_reading
from ..workflows.results import Compiled, Outcome


def examples(dataset: str, split: str = "test", *, max_skipped: float = 0.0, program=None) -> list:
    """The cases of ``split`` as dspy Examples. For a ``program`` that retrieves its templates, the cases'
    templates are not handed over (only the labels stay). Prints what reading them did and fails when more
    than ``max_skipped`` was skipped."""
    from ..data_files.read_report import ReadReport
    from ..datasets.planner import CASES_FILE, load_planner_cases
    from ..datasets.smarthome import resolve_dataset

    read = ReadReport("cases")
    cases = load_planner_cases(dataset, None if split == "all" else split, report=read)
    print_reading(resolve_dataset(dataset) / CASES_FILE, read, max_skipped)
    labelled = [c.to_example() for c in cases]
    if getattr(program, "retrieve_templates", None) is not None:
        labelled = [ex.with_inputs("requirements", "bullets") for ex in labelled]
    return labelled


def evaluate(build: Callable, *, dataset: str, split: str = "test", max_skipped: float = 0.0,
             num_threads: int = 1) -> Outcome:
    """Score the plans on the split's cases; a run that made no plan says why every metric is 0."""
    from .evaluation import evaluate_planner

    program = build()
    report = evaluate_planner(program, examples(dataset, split, max_skipped=max_skipped, program=program),
                              dataset=str(dataset), num_threads=num_threads)
    notes = []
    if not report["metrics"]["plans"]:
        why = "no LM configured" if not report["metrics"]["lm_calls_per_query"] else "every LM call fell back"
        notes.append(f"note: no plan was made ({why}), so every planner metric is 0: the planner needs an LM "
                     "(--lm or TRACERAG_LM)")
    return Outcome(report, notes=notes)


def compile(build: Callable, *, dataset: str, optimizer: str, max_train: int = 0, options: dict) -> Compiled:
    """Optimise the plan prompt on the train split, scored on dev."""
    from .compiling import compile_planner

    program = build()
    trainset = examples(dataset, "train", program=program)
    scores = compile_planner(program, trainset[:max_train] if max_train else trainset,
                             examples(dataset, "dev", program=program), optimizer, **options)
    return Compiled(scores.pop("program"), scores)
