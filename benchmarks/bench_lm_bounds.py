"""How long an LM call takes to end against an endpoint that fails, next to the bound that ends it.

The tests (tests/lm/test_lm_bounds.py, tests/lm/test_fault_budget.py, tests/faults/) check what ended each call
from its failure line (the deadline it names, the reply cap, the fault budget), which no machine load changes;
this script measures the seconds, which it does. Each case runs ``--repeat`` times against the tests' stub
endpoint on 127.0.0.1 (tests/lm_server.py); the table gives the median and the slowest run, and each against
its bound: the deadline given to the transport, the documented worst case of a call with retries
(``BoundedLM.worst_case()``), or what the run's fault budget had left.

    python benchmarks/bench_lm_bounds.py [--repeat 5]

Cases: one guarded stage call (timeout 1 s, no retry) against each hostile endpoint (a byte a second, a
10 GB body declared, an endless body, a gzip bomb), through DSPy's native engine and through LiteLLM, sync and
async; the same call with one retry against the dripping endpoint; a call of 30 s a try and 2 retries cut by a
0.15 s fault budget; and CommandRetrieval against an endpoint that answers after 3 s (timeout 0.3 s, one
retry), which takes its no-LM path.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import dspy  # noqa: E402
from conftest import FakeEngine  # noqa: E402
from lm_server import StubLMServer  # noqa: E402

from tracerag.lm.bounded_lm import make_lm  # noqa: E402
from tracerag.lm.failures import reset_lm_guard  # noqa: E402
from tracerag.programs.guarded_step import Stages  # noqa: E402

ADAPTER = dspy.ChatAdapter(use_json_adapter_fallback=False)
HOSTILE = ("drip", "huge_length", "endless", "gzip_bomb")


def ask(lm, asynchronous: bool = False) -> Stages:
    """One guarded stage call with ``lm``; its Stages record (the failure line says what ended it)."""
    stages, predictor = Stages(), dspy.Predict("question -> answer")
    with dspy.context(lm=lm, adapter=ADAPTER):
        if asynchronous:
            asyncio.run(stages.acall("answer", predictor, question="hi"))
        else:
            stages.call("answer", predictor, question="hi")
    return stages


def litellm_lm(url: str, **kwargs):
    """An openai/ LM DSPy sends through LiteLLM (an extra header is a setting its native engine lacks)."""
    return make_lm("openai/stub-model", url, "k", cache=False, extra_headers={"X-Client": "bench"}, **kwargs)


def timed(run: Callable[[], Stages | str]) -> tuple[float, str]:
    reset_lm_guard()  # each run starts with a closed breaker, as a new process would
    started = time.perf_counter()
    ended = run()
    seconds = time.perf_counter() - started
    line = ended.errors[0] if isinstance(ended, Stages) and ended.errors else str(ended)
    return seconds, line


def hostile(mode: str, engine: str, asynchronous: bool) -> Callable[[], Stages]:
    def run() -> Stages:
        with StubLMServer(FakeEngine(), mode, bomb_size=100 * 2**20) as server:
            lm = server.lm(timeout=1, retries=0) if engine == "native" else litellm_lm(server.url, timeout=1,
                                                                                        retries=0)
            return ask(lm, asynchronous)
    return run


def with_a_retry() -> Stages:
    with StubLMServer(FakeEngine(), "drip") as server:
        return ask(server.lm(timeout=1, retries=1))


def cut_by_the_budget() -> Stages:
    from tracerag.lm.fault_budget import FaultBudget, lm_fault_budget

    with StubLMServer(FakeEngine(), "slow", delay=30.0) as server:
        with lm_fault_budget(FaultBudget(0.15, share=0.0)):
            return ask(server.lm(timeout=30.0, retries=2))


def commands_on_a_slow_endpoint(program) -> Callable[[], str]:
    def run() -> str:
        with StubLMServer(FakeEngine(), "slow", delay=3.0) as server:
            with dspy.context(lm=server.lm(timeout=0.3, retries=1)):
                pred = program(query="打开客厅的灯")
        return pred.lm_errors[0] if pred.lm_errors else pred.parse_source
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each case (default 5)")
    args = parser.parse_args(argv)

    from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
    from tracerag.datasets.smarthome import home_dirs, resolve_dataset
    from tracerag.embedding.embedder_choice import make_embedder

    homes = [d for d in home_dirs(resolve_dataset("smarthome")) if d.name == "home_small"]
    program = CommandRetrieval(build_indexes(homes, make_embedder("lexical")))
    with StubLMServer(FakeEngine()) as server:  # LiteLLM's first call imports and builds a lot: not measured
        ask(litellm_lm(server.url, timeout=10, retries=0))

    cases = [(f"{mode}, {engine}, {'async' if asynchronous else 'sync'}", 1.0, hostile(mode, engine, asynchronous))
             for mode in HOSTILE for engine in ("native", "litellm") for asynchronous in (False, True)]
    cases += [("drip, native, one retry (worst case)", make_lm("openai/m", "http://127.0.0.1:9/v1", "k", timeout=1,
                                                              retries=1).worst_case(), with_a_retry),
              ("stalled 30 s a try, 2 retries, fault budget 0.15 s", 0.15, cut_by_the_budget),
              ("CommandRetrieval, answers after 3 s, timeout 0.3 s, one retry (worst case)",
               make_lm("openai/m", "http://127.0.0.1:9/v1", "k", timeout=0.3, retries=1).worst_case(),
               commands_on_a_slow_endpoint(program))]
    print("| case | bound (s) | median (s) | slowest (s) | slowest ÷ bound | what ended it (first run) |")
    print("|---|---:|---:|---:|---:|---|")
    for name, bound, run in cases:
        runs = [timed(run) for _ in range(args.repeat)]
        seconds = [s for s, _ in runs]
        line = runs[0][1].split(": ", 1)[-1][:70]
        print(f"| {name} | {bound:g} | {statistics.median(seconds):.2f} | {max(seconds):.2f} | "
              f"{max(seconds) / bound:.2f} | {line} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
