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

    python benchmarks/bench_lm_faults.py --matrix [--programs ...] [--jobs 6]

The fault matrix at the CLI's default settings (--lm-timeout 30, --lm-retries 2, an LM fault budget of
40 s + 10 % of the run): every program against an endpoint that is down (HTTP 500), stalled (never
answers), drips (a byte a second), sends an endless body, or fails at one stage only (that stage stalls
while the others answer: ExperienceRetrieval's summary, SelfReflectiveRAG's verification; for the
programs whose evaluation runs one LM stage, that stage stalls on part of its calls and answers the
others: CommandRetrieval's parse on half the utterances, the planner on half the cases, the agent's
steps after its first tool call). Each run is a fresh child process (so its peak RSS is its own)
talking to a stub endpoint served by this process; runs go ``--jobs`` at a time (they mostly wait).
Prints wall ÷ the no-LM run's wall and whether it is within 2 × no-LM + 60 s, peak RSS against the
no-LM run's and whether it is within 100 MB of it, the LM calls (the program's, and an evaluation's
judge), the HTTP requests the endpoint saw (in all, and per signature where one stage fails: the stalled
stage's against the others', which keep answering), and whether every quality metric equals the no-LM
run's.
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
from collections import Counter
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import dspy  # noqa: E402
from conftest import AgentEngine, FakeEngine, PlannerEngine  # noqa: E402
from lm_server import StubLMServer, after_a_tool_call, half_of_inputs  # noqa: E402

import optimize  # noqa: E402
from tracerag.lm.failures import reset_lm_guard  # noqa: E402

DATASETS = {"commands": "smarthome", "experience": "experience", "rag": "pubmedqa", "planner": "planner",
            "agent": "pubmedqa"}
ENGINES = {"commands": FakeEngine, "experience": FakeEngine, "rag": FakeEngine, "planner": PlannerEngine,
           "agent": AgentEngine}
FAULTS = (("down (HTTP 500)", "http500", ()), ("garbage", "garbage", ()),
          ("slow (replies after 5 s, --lm-timeout 1)", "slow", ("--lm-timeout", "1")))
# what an LM run may differ in without being worse: its own call counts, fallbacks and timings
NOT_QUALITY = ("lm_calls", "lm_call", "lm_fallback", "lm_fault_budget", "latency", "errors", "usefulness")


def evaluate(program: str, out: Path, *extra: str) -> tuple[dict, float]:
    """One in-process CLI run from a clean slate (no LM, closed breaker); the report and its seconds."""
    dspy.configure(lm=None, adapter=None)
    reset_lm_guard()
    # --allow-no-lm: a run against an endpoint that never answers is what this measures, not an error
    argv = ["evaluate", program, "--dataset", DATASETS[program], "--split", "test", "--allow-no-lm", "--out",
            str(out), *extra]
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


# the fault matrix: (label, the stub's mode for every signature, {signature: mode} for one stage only)
STALL_S = 3600.0  # a stalled endpoint's reply delay: past any attempt's deadline
MATRIX = (("down (HTTP 500)", "http500", None), ("stalled", "slow", None), ("drip (1 byte/s)", "drip", None),
          ("endless body", "endless", None), ("one stage stalls", "good", "slow"))
# the stage that fails alone: (its signature, which of its calls fail (None: all), how the row says it).
# ExperienceRetrieval and SelfReflectiveRAG call it on every example after a good first stage; the others'
# evaluations run one LM stage, which fails on part of its calls, between calls that answer
ONE_STAGE = {"commands": ("ParseCommand", half_of_inputs, "ParseCommand, half the utterances"),
             "experience": ("SummarizeExperience", None, "SummarizeExperience"),
             "rag": ("VerifyGroundedness", None, "VerifyGroundedness"),
             "planner": ("GeneratePlan", half_of_inputs, "GeneratePlan, half the cases"),
             "agent": ("AgentStep", after_a_tool_call, "AgentStep after the first tool call")}
BOUND_MB = 100  # the goal: peak RSS at most this much above the no-LM run's


def _hwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def child(program: str, out: Path, extra: list[str]) -> None:
    """One evaluation in this fresh process; prints {seconds, peak_mb} as JSON. The embedder's weights are
    loaded first, in every run alike: whether a run loads them otherwise depends on what the embedding cache
    still holds (an LM's rewritten queries are new texts), which is no cost of the LM's faults."""
    from tracerag.embedding.embedders import LocalUSEEmbedder

    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    LocalUSEEmbedder().embed(["warm"])  # the process's one copy of the weights, which every instance shares
    _, seconds = evaluate(program, out, *extra)
    print(json.dumps({"seconds": seconds, "peak_mb": _hwm_mb()}))


def _run_child(program: str, out: Path, extra: list[str]) -> dict:
    import subprocess

    done = subprocess.run([sys.executable, __file__, "--child", program, str(out), *extra], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{program} {extra}: exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]) | {"report": json.loads(out.read_text(encoding="utf-8"))}


def cell(program: str, label: str | None, mode: str | None, stage_mode: str | None, tmp: Path) -> tuple:
    """One cell of the matrix (``label`` None: the no-LM run): (program, label, {seconds, peak_mb, report},
    the HTTP requests the endpoint saw: {signature: count})."""
    out = tmp / f"{program}-{mode or 'none'}-{stage_mode or ''}.json"
    if label is None:
        return program, None, _run_child(program, out, []), {}
    signature, when, _ = ONE_STAGE[program]
    modes = {signature: stage_mode} if stage_mode else None
    with StubLMServer(ENGINES[program](), mode, modes=modes, delay=STALL_S,
                      modes_when=when if stage_mode else None) as stub:
        result = _run_child(program, out, ["--lm", f"openai/stub-{mode}", "--api-base", stub.url, "--api-key", "k"])
        return program, label, result, dict(Counter(name for name, _ in stub.requests))


def by_signature(requests: dict[str, int], failing: str) -> str:
    """The HTTP requests per signature, the failing one first: "SummarizeExperience 1; RewriteQuery 95, …"."""
    others = ", ".join(f"{name} {n}" for name, n in sorted(requests.items()) if name != failing)
    return f"{failing} {requests.get(failing, 0)}; {others or 'no other'}"


def matrix(programs: list[str], jobs: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with tempfile.TemporaryDirectory(prefix="bench-lm-matrix-") as tmp, ThreadPoolExecutor(jobs) as pool:
        tasks = [(p, None, None, None) for p in programs]
        tasks += [(p, label, mode, stage) for label, mode, stage in MATRIX for p in programs]
        tasks.sort(key=lambda t: t[2] not in ("slow", "drip", "good"))  # the long waits first
        futures = [pool.submit(cell, *task, Path(tmp)) for task in tasks]
        results = [f.result() for f in futures]
    base = {program: result for program, label, result, _ in results if label is None}
    print("| program | endpoint | wall s (no LM s) | wall ÷ no LM | ≤ 2× + 60 s | peak RSS MB (no LM) | ≤ +100 MB "
          "| LM calls | HTTP requests | lm_fallback_rate | metrics equal to no LM |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    one_stage = []
    order = {label: n for n, (label, _, _) in enumerate(MATRIX)}
    for program, label, result, requests in sorted((r for r in results if r[1] is not None),
                                                   key=lambda r: (programs.index(r[0]), order[r[1]])):
        b = base[program]
        report = result["report"]
        calls = sum(row.get("lm_calls", 0) + row.get("lm_calls_judge", 0) for row in report["per_query"])
        diff = differences(quality(b["report"]), quality(report))
        equal = "yes" if not diff else "NO: " + "; ".join(diff)
        if label.startswith("one stage"):  # the other stages (calls) answer: an LM run, not the no-LM one
            label, equal = f"{label}: {ONE_STAGE[program][2]}", "n/a (the other calls answer)"
            one_stage.append((program, ONE_STAGE[program][2], by_signature(requests, ONE_STAGE[program][0]),
                              report["metrics"].get("lm_fallbacks")))
        in_time = "yes" if result["seconds"] <= 2 * b["seconds"] + 60 else "NO"
        in_memory = "yes" if result["peak_mb"] <= b["peak_mb"] + BOUND_MB else "NO"
        print(f"| {program} | {label} | {result['seconds']:.1f} ({b['seconds']:.1f}) "
              f"| {result['seconds'] / max(b['seconds'], 0.05):.1f}x | {in_time} "
              f"| {result['peak_mb']:.0f} ({b['peak_mb']:.0f}) | {in_memory} "
              f"| {calls} | {sum(requests.values())} | {report['metrics'].get('lm_fallback_rate')} | {equal} |")
    if one_stage:
        print("\n| program | the stage that stalls | HTTP requests: that stage; the others | lm_fallbacks |")
        print("|---|---|---|---|")
        for program, stage, requests, fallbacks in one_stage:
            print(f"| {program} | {stage} | {requests} | {fallbacks} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", default=",".join(DATASETS))
    parser.add_argument("--matrix", action="store_true", help="the fault matrix at default settings")
    parser.add_argument("--jobs", type=int, default=6, help="matrix runs at a time")
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        program, out, *extra = args.child
        child(program, Path(out), extra)
        return
    if args.matrix:
        matrix(args.programs.split(","), args.jobs)
        return
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
