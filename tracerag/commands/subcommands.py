"""CommandRetrieval's own subcommands: ``tracerag build commands`` indexes each home of a dataset (filling the
embedding cache) and prints its manifest; ``tracerag tune commands`` searches the index parameters with no LM
and writes the artifact. The entry declares them (``ProgramEntry.cli_commands``), so the command line adds and
runs them without naming this program."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from ..program_entry import ProgramCommand

TUNE_METRIC = "recall@10 x bulk_precision (ir=none)"  # what tune optimises, recorded in the artifact


def _build_flags(parser) -> None:
    parser.add_argument("--dataset", required=True)


def run_build(build: Callable, *, dataset: str) -> int:
    """Index every home of ``dataset``: its manifest on stdout, what reading it did on stderr, home by home."""
    from ..config import get_embedder
    from .workflow import indexed

    for path, manifest, home in indexed(dataset, get_embedder()):
        print(json.dumps(manifest, ensure_ascii=False))
        print(f"{path}: {home.report.summary()}", file=sys.stderr)
        for warning in home.warnings:
            print(f"  warning: {warning}", file=sys.stderr)
    return 0


def _tune_flags(parser) -> None:
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="artifact to write (loadable with tracerag.load)")


def run_tune(build: Callable, *, dataset: str, out: str, trials: int = 60, seed: int = 0) -> int:
    """Tune on train (checked on dev), write the artifact, print the scores; say so when nothing beat the start."""
    from ..artifacts import save_artifact
    from .artifact import describe
    from .workflow import tune as tune_params

    tuned = tune_params(build, dataset=dataset, trials=trials, seed=seed)
    result = tuned.scores
    save_artifact(tuned.program, out, describe(tuned.program, Path(out).parent), dataset=str(dataset),
                  metric=TUNE_METRIC, scores=result)
    print(json.dumps(result, indent=1))
    if not result["changed"]:
        print(f"no change: none of {trials} trials beat the starting parameters on train "
              f"({result['train_before']}); {out} holds them as they were", file=sys.stderr)
    print(f"tuned program written to {out}")
    return 0


COMMANDS = (
    ProgramCommand("build", "index a dataset (fills the embedding cache) and print its manifest", _build_flags,
                   run_build),
    ProgramCommand("tune", "search the retriever's parameters on the train split, no LM", _tune_flags, run_tune),
)
