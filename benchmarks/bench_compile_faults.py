"""compile against an endpoint that stalls the optimizer's own calls: bounded, counted, never an exception.

CommandRetrieval on the bundled smarthome dataset (train capped at 20 queries, the whole dev split) is
compiled through the library as a user does it: ``dspy.configure(lm=dspy.LM("openai/…"))`` with no
timeout of its own, against the tests' stub endpoint on 127.0.0.1, which answers the program's parse
calls at once and holds every other call (MIPROv2's proposals, GEPA's reflection) for ``--stall``
seconds. Each optimizer runs twice in one process:

- MIPROv2 with the LM policy's timeout above the stall (60 s: every proposal waits the stall out and is
  then answered, as a ``dspy.LM`` without a timeout did before compile bounded it) and at 0.3 s;
- GEPA at 0.3 s without and with its stop after 5 failed calls in a row (without: the breaker count set
  past any run, the same code otherwise).

    python benchmarks/bench_compile_faults.py [--stall 8] [--gepa-calls 600]

Prints a markdown table: wall seconds, the optimizer's own calls (failed), stopped early, fell back to
the labelled demos, and dev parse_recall@10 before and after.

    python benchmarks/bench_compile_faults.py --program-stall

The other fault: the program's own stage stalls (every ParseCommand call held for an hour) while the
optimizer's calls are answered, at the CLI's default settings (an LM built as ``--lm`` builds it: 30 s a
try, 2 retries; breaker after 5). BootstrapFewShot compiles twice in one process: with no LM fault budget
(``inf``: how compile ran before it had one) and with the default, 40 s + 10 % of the compile's time.
Prints wall seconds, the parse calls the endpoint saw, and the scores' ``lm_fault_budget``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import dspy  # noqa: E402
from conftest import FakeEngine  # noqa: E402
from lm_server import StubLMServer  # noqa: E402

import tracerag  # noqa: E402
from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes  # noqa: E402
from tracerag.commands.compiling import compile_commands  # noqa: E402
from tracerag.datasets.smarthome import home_dirs, resolve_dataset  # noqa: E402
from tracerag.lm.failures import reset_lm_guard  # noqa: E402
from tracerag.lm.policy import set_policy

RUNS = (  # (label, optimizer, timeout, breaker count)
    ("MIPROv2, timeout 60 s (no bound below the stall)", "mipro", 60.0, 5),
    ("MIPROv2, timeout 0.3 s", "mipro", 0.3, 5),
    ("GEPA, timeout 0.3 s, no stop", "gepa", 0.3, 10**9),
    ("GEPA, timeout 0.3 s, stop after 5 in a row", "gepa", 0.3, 5),
)


def program_stall(dataset, indexes, max_train: int) -> None:
    """Bootstrap with the program's parse stage stalled, without and with the run's fault budget."""
    rows = []
    for label, budget in (("no fault budget (before)", math.inf), ("fault budget 40 s + 10 % (default)", 40.0)):
        set_policy(timeout=30.0, retries=2, breaker_failures=5, fault_budget=budget)
        reset_lm_guard()
        with StubLMServer(FakeEngine(), modes={"ParseCommand": "slow"}, delay=3600.0) as stub:
            dspy.configure(lm=stub.lm(timeout=30.0, retries=2))  # as --lm builds it
            started = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                scores = compile_commands(CommandRetrieval(indexes, ir_source="lm"), dataset, "bootstrap",
                                          max_train=max_train)
            seconds = time.perf_counter() - started
            parses = sum(name == "ParseCommand" for name, _ in stub.requests)
        spent = scores["lm_fault_budget"]
        rows.append(f"| {label} | {seconds:.1f} | {parses} | {spent['failed_calls']} | {spent['charged_s']} | "
                    f"{spent['spent']} | {scores['dev_parse_recall@10_before']} → "
                    f"{scores['dev_parse_recall@10_after']} |")
        print(rows[-1], file=sys.stderr, flush=True)
    print(f"train {max_train}, ParseCommand stalled, --lm-timeout 30, --lm-retries 2\n")
    print("| compile (bootstrap) | wall s | parse requests | failed calls | charged s | budget spent "
          "| dev parse_recall@10 before → after |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stall", type=float, default=8.0, help="seconds the endpoint holds an optimizer call")
    parser.add_argument("--gepa-calls", type=int, default=600, help="GEPA's max_metric_calls")
    parser.add_argument("--max-train", type=int, default=20)
    parser.add_argument("--program-stall", action="store_true", help="the program's parse stalls instead; "
                        "bootstrap without and with the LM fault budget")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # DSPy's and GEPA's logs of each failed call; the table says it all
    dataset = resolve_dataset("smarthome")
    indexes = build_indexes(home_dirs(dataset), tracerag.get_embedder())
    if args.program_stall:
        program_stall(dataset, indexes, args.max_train)
        return
    rows = []
    for label, optimizer, timeout, breaker in RUNS:
        set_policy(timeout=timeout, breaker_failures=breaker)
        reset_lm_guard()
        with StubLMServer(FakeEngine(), modes={"other": "slow"}, delay=args.stall) as stub:
            dspy.configure(lm=stub.user_lm())  # as users build it: no timeout of its own
            started = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):  # the optimizers' own progress prints
                scores = compile_commands(CommandRetrieval(indexes, ir_source="lm"), dataset, optimizer,
                                          max_train=args.max_train,
                                          max_metric_calls=args.gepa_calls if optimizer == "gepa" else None)
            seconds = time.perf_counter() - started
        own = scores["optimizer_lm"]
        rows.append(f"| {label} | {seconds:.1f} | {own['calls']} ({own['failed']}) | {own['stopped_early']} | "
                    f"{own['fell_back']} | {scores['dev_parse_recall@10_before']} → "
                    f"{scores['dev_parse_recall@10_after']} |")
        print(rows[-1], file=sys.stderr, flush=True)  # progress
    print(f"stall {args.stall:g} s, train {args.max_train}, GEPA budget {args.gepa_calls} metric calls\n")
    print("| run | wall s | optimizer calls (failed) | stopped early | fell back | dev parse_recall@10 "
          "before → after |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
