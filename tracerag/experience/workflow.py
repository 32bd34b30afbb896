"""ExperienceRetrieval's workflows: its labelled tasks, evaluation (with the LM-judged usefulness when an LM
is configured), one new task, and compile."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

from ..workflows.reading import print_reading
from ..workflows.results import Compiled, Outcome


def examples(dataset, split: str = "test", *, max_skipped: float = 0.0, report=None, task_ids=None) -> list:
    """The labelled tasks of ``split`` as dspy Examples, without the image files that are not on disk;
    ``task_ids``: keep only the relevant tasks the bank holds."""
    from ..datasets.experience import load_experience_queries
    from ..datasets.smarthome import resolve_dataset

    dataset = resolve_dataset(dataset)
    queries = load_experience_queries(dataset, None if split == "all" else split, max_skipped=max_skipped,
                                      report=report, task_ids=task_ids)
    return without_missing_images([q.to_example(dataset) for q in queries], dataset)


def without_missing_images(examples: list, dataset: Path) -> list:
    """Drop the image files a query names that are not on disk, saying so in one line (the bundled set ships
    captions, not images; the program would drop each one anyway, with a warning per image)."""
    missing = 0
    for ex in examples:
        kept = [i for i in ex.images if re.match(r"^(https?|gs|data):", i) or Path(i).is_file()]
        missing += len(ex.images) - len(kept)
        ex.images = kept
    if missing:
        print(f"{dataset}: {missing} image file(s) named in queries.jsonl are not on disk; those queries run "
              "on their question and caption", file=sys.stderr)
    return examples


def evaluate(build: Callable, *, dataset: str, split: str = "test", k: int | None = None, top_n: int = 5,
             max_skipped: float = 0.0, num_threads: int = 1, lm: bool = False,
             ranked_depth: int | None = None) -> Outcome:
    """Score the program at cut-off ``k`` (default 5) on the split's tasks whose relevant tasks the bank holds;
    with an LM, the usefulness judge compares each experience with how a relevant task was really solved;
    ``ranked_depth``: each row also carries its recall at each cut-off to ``k`` (the HTML report's curve)."""
    from ..data_files.read_report import ReadReport
    from ..datasets.smarthome import resolve_dataset
    from .evaluation import evaluate_experience

    k = k or 5
    path = resolve_dataset(dataset)
    read = ReadReport("queries")
    program = build(top_n=max(top_n, k))
    labelled = examples(path, split, max_skipped=max_skipped, report=read, task_ids=program.stored_ids())
    print_reading(path / "queries.jsonl", read)
    if lm:
        for ex in labelled:
            stored = program.stored_metadata(ex.relevant_task_ids)
            first = next((t for t in ex.relevant_task_ids if t in stored), None)
            ex.reference_strategy = stored[first].get("reasoning") if first is not None else None
    return Outcome(evaluate_experience(program, labelled, dataset=str(dataset), k=k, judge=lm,
                                       num_threads=num_threads, ranked_depth=ranked_depth))


def run(build: Callable, *, query: str, image: list[str] = (), caption: str | None = None,
        sub_task: str | None = None) -> Outcome:
    """The experience for one new task as JSON, then the section an agent's prompt would carry."""
    pred = build()(question=query, images=list(image), caption=caption, sub_task=sub_task)
    out = {key: pred[key] for key in ("experience", "task_ids", "used_task_ids", "queries", "rounds", "lm_calls",
                                      "hint", "lm_fallbacks", "error")}
    text = json.dumps(out, ensure_ascii=False, indent=1)
    return Outcome(text + ("\n\n" + pred.section if pred.section else ""))


def compile(build: Callable, *, dataset: str, optimizer: str, out: str, max_train: int = 0,
            options: dict) -> Compiled:
    """Optimise the rewrite and summary prompts on the train split, scored on dev; the bank is built beside
    the artifact (``OUT.bank``)."""
    from ..datasets.smarthome import resolve_dataset
    from .compiling import compile_experience

    path, out = resolve_dataset(dataset), Path(out)
    program = build(bank_dir=out.with_name(out.name + ".bank"))
    trainset = examples(path, "train")
    scores = compile_experience(program, trainset[:max_train] if max_train else trainset, examples(path, "dev"),
                                optimizer, **options)
    return Compiled(scores.pop("program"), scores, program.store.describe().uri)
