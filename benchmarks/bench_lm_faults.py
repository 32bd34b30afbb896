"""Every program against a failing LM endpoint: never worse than no LM, fallbacks visible, time bounded.

For each program, `tracerag evaluate <program> --split test` runs four times on its bundled dataset:
with no LM, against an OpenAI-compatible endpoint on 127.0.0.1 that answers HTTP 500 to everything
("down"), one that answers prose with none of the expected fields ("garbage"), and one that answers
after 5 s to a client that waits 1 s ("slow"). The endpoint is the tests' stub server, reached
through DSPy exactly like a user's server, with the CLI's default --lm-timeout (30 s, 1 s for
"slow") and --lm-retries (2). A fourth row for CommandRetrieval: an endpoint answering
each query's gold parse, `--ir lm` against `--ir gold`.

    python benchmarks/bench_lm_faults.py [--programs commands,experience,rag,planner,agent]

Prints a markdown table: metric equal to the no-LM run (every quality metric of the report),
lm_fallback_rate, wall time, and the bound 2 x no-LM + 60 s.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import dspy  # noqa: E402
from conftest import AgentEngine, FakeEngine, PlannerEngine  # noqa: E402
from lm_server import StubLMServer  # noqa: E402

import optimize  # noqa: E402
from tracerag.programs.guarded_step import reset_lm_guard  # noqa: E402

DATASETS = {"commands": "smarthome", "experience": "experience", "rag": "pubmedqa", "planner": "planner",
            "agent": "pubmedqa"}
ENGINES = {"commands": FakeEngine, "experience": FakeEngine, "rag": FakeEngine, "planner": PlannerEngine,
           "agent": AgentEngine}
FAULTS = (("down (HTTP 500)", "http500", ()), ("garbage", "garbage", ()),
          ("slow (replies after 5 s, --lm-timeout 1)", "slow", ("--lm-timeout", "1")))
# what an LM run may differ in without being worse: its own call counts, fallbacks and timings
NOT_QUALITY = ("lm_calls", "lm_call", "lm_fallback", "latency", "errors", "usefulness")


def evaluate(program: str, out: Path, *extra: str) -> tuple[dict, float]:
    """One in-process CLI run from a clean slate (no LM, closed breaker); the report and its seconds."""
    dspy.configure(lm=None, adapter=None)
    reset_lm_guard()
    argv = ["evaluate", program, "--dataset", DATASETS[program], "--split", "test", "--out", str(out), *extra]
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = optimize.main(argv)
    seconds = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"tracerag {' '.join(argv)} exited {code}")
    return json.loads(out.read_text(encoding="utf-8")), seconds


def quality(report: dict) -> dict:
    return {key: value for key, value in report["metrics"].items() if not key.startswith(NOT_QUALITY)}


def differences(a: dict, b: dict) -> list[str]:
    return [f"{key}: {a.get(key)} vs {b.get(key)}" for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]


def gold_parses() -> dict[str, dict]:
    from tracerag.datasets.smarthome import load_dataset

    return {q.query: q.ir for qs in load_dataset("smarthome", "test").values() for q in qs if q.ir}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", default=",".join(DATASETS))
    args = parser.parse_args()
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)  # an outage must not be hidden
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-lm-faults-") as tmp:
        tmp = Path(tmp)
        for program in args.programs.split(","):
            baseline, base_s = evaluate(program, tmp / f"{program}-none.json")
            print(f"{program}: no LM {base_s:.1f} s", file=sys.stderr)
            for fault, mode, flags in FAULTS:
                with StubLMServer(ENGINES[program](), mode, delay=5.0) as stub:
                    report, seconds = evaluate(program, tmp / f"{program}-{mode}.json", "--lm", f"openai/stub-{mode}",
                                               "--api-base", stub.url, "--api-key", "k", *flags)
                diff = differences(quality(baseline), quality(report))
                bound = 2 * base_s + 60
                rows.append((program, fault, "yes" if not diff else "NO: " + "; ".join(diff),
                             report["metrics"].get("lm_fallback_rate"), len(stub.requests), report["n"],
                             f"{base_s:.1f}", f"{seconds:.1f}", f"{bound:.0f}", "yes" if seconds <= bound else "NO"))
                print(f"{program} {fault}: {seconds:.1f} s, {len(stub.requests)} requests", file=sys.stderr)
        if "commands" in args.programs:
            gold, gold_s = evaluate("commands", tmp / "commands-gold.json", "--ir", "gold")
            with StubLMServer(FakeEngine(irs=gold_parses())) as stub:
                report, seconds = evaluate("commands", tmp / "commands-lm.json", "--ir", "lm", "--lm",
                                           "openai/stub-gold", "--api-base", stub.url, "--api-key", "k")
            diff = differences(quality(gold), quality(report))
            equal = "yes" if not diff else "NO: " + "; ".join(diff)
            rows.append(("commands", "gold parses, --ir lm vs --ir gold", equal,
                         report["metrics"].get("lm_fallback_rate"), len(stub.requests), report["n"], f"{gold_s:.1f}",
                         f"{seconds:.1f}", "-", "-"))
    print("| program | endpoint | metrics equal to the baseline run | lm_fallback_rate | LM requests | n "
          "| baseline s | run s | bound s (2x + 60) | within |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")


if __name__ == "__main__":
    main()
