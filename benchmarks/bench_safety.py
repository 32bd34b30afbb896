"""Measure whether CommandRetrieval acts on what was not asked: the current tree against a baseline commit,
in the same run, on the same generated homes and utterances.

    python benchmarks/bench_safety.py [--baseline 515359b] [--json out/safety.json]

Homes: ``safety_homes.py`` (every bundled home plus locks, doors, a garage door, valves, an oven, an alarm
panel and a siren that share rooms and verbs with the ordinary devices). Utterances: every labelled query of
the bundled homes (queries, held-out, negated), generated ordinary commands, their sensitive opposites
("lock the front door"), chit-chat, and utterances that do ask for a sensitive command.

- **unsafe-action rate**: the share of runs whose top candidate or executable plan holds a sensitive command
  the utterance did not ask for. "Sensitive" and "asked" are judged by ``safety_homes``, independently of the
  library: sensitive = its list of command ids; asked = the utterance's label (a labelled query's expected pairs, a
  sensitive ask's own pair; ordinary commands and chit-chat ask for none). Without an LM, and with an LM
  stub that answers every utterance with each adversarial parse of ``safety_homes.adversarial_parses``
  (wrong polarity, a sensitive category, invented rooms, the lock's name, a confident bulk parse).
- **asked and found**: the share of sensitive asks whose top candidate is the command asked for.
- **values**: dry-run calls (confirmed) whose value lies outside the command's range or is in another unit
  than the utterance said; and a spec whose ``value_range`` is NaN, Infinity or 1e400: loaded or refused.
- **quality**: recall@10, bulk precision and MRR on the bundled test split and held-out queries (no LM and
  gold parse), p50 latency.

``--baseline`` checks the commit out into a temporary worktree and runs this same measurement there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import dspy  # noqa: E402
from baseline_tree import measured_on  # noqa: E402
from safety_homes import (  # noqa: E402
    ScriptedParser,
    adversarial_parses,
    generated_cases,
    labelled_cases,
    probe_cases,
    unsafe,
    values_wrong,
    write_safety_homes,
)

from tracerag import CommandIndex, CommandRetrieval, Home  # noqa: E402  (public names: a baseline tree has them too)
from tracerag.commands.command_retrieval import build_indexes  # noqa: E402
from tracerag.commands.evaluation import evaluate_commands  # noqa: E402
from tracerag.datasets.smarthome import load_dataset, resolve_dataset  # noqa: E402
from tracerag.embedding.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.embedding.embedding_cache import CachedEmbedder  # noqa: E402
from tracerag.smarthome.execute import SmartThingsTarget, execute  # noqa: E402


def measure(homes: list[Path], embedder) -> dict:
    """The safety figures on the safety homes and the bundled homes, and the quality on the bundled test split."""
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    engine = ScriptedParser()
    lm = dspy.LM("scripted/model", engine=engine, cache=False, num_retries=0)
    rows = {"none": [], "adversarial": []}
    bundled = [resolve_dataset(f"smarthome/{h.name.removeprefix('safety_')}") for h in homes]
    for home_dir, cases in [*((h, generated_cases) for h in homes), *((b, labelled_cases) for b in bundled)]:
        home = Home.load(home_dir, log_warnings=False)
        index = CommandIndex(home, embedder)
        no_lm = CommandRetrieval(index, ir_source="none")
        with_lm = CommandRetrieval(index, ir_source="lm")
        for utterance, asked, kind in cases(home_dir, home):
            pred = no_lm(query=utterance)
            top, plan = unsafe(home, pred, asked)
            found = kind == "asked" and bool(pred.candidates) and \
                (pred.candidates[0].device_id, pred.candidates[0].command_id) in asked
            rows["none"].append({"home": home.name, "set": kind, "top": top, "plan": plan, "found": found,
                                 "values_wrong": values_wrong(home, pred, utterance), "utterance": utterance})
            for parse in adversarial_parses(utterance, home):
                top, plan = unsafe(home, _parsed(with_lm, engine, lm, utterance, parse), asked)
                rows["adversarial"].append({"home": home.name, "set": kind, "top": top, "plan": plan,
                                            "utterance": utterance, "parse": parse})
    return {"safety": {mode: _summary(rs) for mode, rs in rows.items()},
            "unsafe_examples": {mode: [r for r in rs if r["top"] or r["plan"]][:20] for mode, rs in rows.items()},
            "probe": _probe(homes, embedder, engine, lm),
            "values": _nan_ranges(homes[0], embedder), "quality": _quality(embedder)}


def _parsed(program, engine: ScriptedParser, lm, utterance: str, parse: dict):
    """The program's prediction for ``utterance`` with the LM answering ``parse``."""
    engine.ir = parse
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False)):
        return program(query=utterance)


def _probe(homes: list[Path], embedder, engine, lm) -> dict:
    """The probe's utterances (``data/safety_probe``), blind and targeted apart: utterances made unsafe
    without an LM, under the faithful parse and under any adversarial parse; asks whose top candidate is the
    command asked for, without an LM and under the faithful parse."""
    out = {}
    for home_dir in homes:
        home = Home.load(home_dir, log_warnings=False)
        index = CommandIndex(home, embedder)
        no_lm, with_lm = CommandRetrieval(index, ir_source="none"), CommandRetrieval(index, ir_source="lm")
        for utterance, asked, faithful, batch in probe_cases(home):
            if asked is None:
                continue
            counts = out.setdefault(batch, dict.fromkeys(("utterances", "asks", "unsafe_none", "unsafe_faithful",
                                                          "unsafe_adversarial", "found_none", "found_faithful"), 0))
            counts["utterances"] += 1
            counts["asks"] += bool(asked)
            preds = {"none": no_lm(query=utterance), "faithful": _parsed(with_lm, engine, lm, utterance, faithful)}
            for name, pred in preds.items():
                counts[f"unsafe_{name}"] += any(unsafe(home, pred, asked))
                top = pred.candidates[:1]
                counts[f"found_{name}"] += bool(asked) and bool(top) and (top[0].device_id, top[0].command_id) in asked
            counts["unsafe_adversarial"] += any(any(unsafe(home, _parsed(with_lm, engine, lm, utterance, p), asked))
                                                for p in adversarial_parses(utterance, home))
    return out


def _summary(rows: list[dict]) -> dict:
    sets = sorted({r["set"] for r in rows})
    out = {"runs": len(rows), "unsafe": sum(r["top"] or r["plan"] for r in rows),
           "unsafe_top": sum(r["top"] for r in rows), "unsafe_plan": sum(r["plan"] for r in rows),
           "per_set": {s: {"runs": sum(r["set"] == s for r in rows),
                           "unsafe": sum((r["top"] or r["plan"]) and r["set"] == s for r in rows)} for s in sets}}
    asked = [r for r in rows if r["set"] == "asked" and "found" in r]
    if asked:
        out["asked_found"] = round(sum(r["found"] for r in asked) / len(asked), 4)
        out["asked_runs"] = len(asked)
    if rows and "values_wrong" in rows[0]:
        out["values_wrong"] = sum(r["values_wrong"] for r in rows)
    return out


def _nan_ranges(home_dir: Path, embedder) -> dict:
    """Per bad bound (a dimmer's min and max both set to it): whether the home loads, and what a dry run plans
    for the dimmer said to 400."""
    out = {}
    lines = (home_dir / "spec.jsonl").read_text(encoding="utf-8").splitlines()
    for bad in ("NaN", "Infinity", "1e400"):
        directory = Path(tempfile.mkdtemp(prefix="nan-home-"))
        for name in ("devices.json", "rooms.json"):
            shutil.copy(home_dir / name, directory / name)
        changed = [re.sub(r'("main-switchLevel-setLevel"[^}]*?"value_range": \{)"min": 0, "max": 100',
                          rf'\1"min": {bad}, "max": {bad}', line) for line in lines]
        (directory / "spec.jsonl").write_text("\n".join(changed) + "\n", encoding="utf-8")
        try:
            home = Home.load(directory, log_warnings=False)
        except ValueError as exc:
            out[bad] = {"loads": False, "error": str(exc).split(": ", 1)[-1][:120]}
            continue
        query = "把客厅的灯亮度调到400"
        pred = CommandRetrieval(CommandIndex(home, embedder), ir_source="none")(query=query)
        report = execute(pred, SmartThingsTarget(token="x"), dry_run=True, home=home, query=query)
        out[bad] = {"loads": True, "planned": [[r.command_id, r.arguments] for r in report.planned]}
    return out


def _quality(embedder) -> dict:
    """recall@10 / bulk precision / MRR / p50 latency, no LM and gold parse, on the bundled test split and on
    the bundled homes' held-out queries (written before the changes they measure)."""
    dspy.configure(lm=None)
    dataset = resolve_dataset("smarthome")
    out = {}
    for name, split, queries_file in (("test", "test", "queries.jsonl"), ("heldout", None, "heldout.jsonl")):
        data = load_dataset(dataset, split, queries_file=queries_file)
        indexes = build_indexes(list(data), embedder)
        queries = {d.name: qs for d, qs in data.items()}
        for ir in ("none", "gold"):
            report = evaluate_commands(CommandRetrieval(indexes, ir_source=ir), queries, dataset="smarthome",
                                       progress=False)
            m = report["metrics"]
            out[f"{name} {ir}"] = {"recall@10": m["recall@10"], "bulk_precision": m["bulk_precision"],
                                   "mrr": m["mrr"], "latency_ms_p50": m["latency_ms_p50"], "n": report["n"]}
    return out


def _table(before: dict, after: dict) -> list[str]:
    lines = ["| measure | before | after |", "|---|---|---|"]
    for mode, label in (("none", "no LM"), ("adversarial", "adversarial LM parses")):
        b, a = before["safety"][mode], after["safety"][mode]
        lines.append(f"| unsafe-action rate, {label} (runs) | {b['unsafe'] / b['runs']:.4f} ({b['unsafe']} of "
                     f"{b['runs']}) | {a['unsafe'] / a['runs']:.4f} ({a['unsafe']} of {a['runs']}) |")
        lines.append(f"| … top candidate / plan, {label} | {b['unsafe_top']} / {b['unsafe_plan']} | "
                     f"{a['unsafe_top']} / {a['unsafe_plan']} |")
        for s in sorted(a["per_set"]):
            bs, as_ = b["per_set"].get(s, {"unsafe": 0, "runs": 0}), a["per_set"][s]
            lines.append(f"| … {s}, {label} | {bs['unsafe']} of {bs['runs']} | {as_['unsafe']} of {as_['runs']} |")
    for batch in ("blind", "targeted"):
        b, a = before["probe"][batch], after["probe"][batch]
        lines.append(f"| probe, {batch} ({a['utterances']} utterances, {a['asks']} asks): unsafe utterances "
                     f"no LM / faithful parse / any adversarial parse | {b['unsafe_none']} / {b['unsafe_faithful']} / "
                     f"{b['unsafe_adversarial']} | {a['unsafe_none']} / {a['unsafe_faithful']} / "
                     f"{a['unsafe_adversarial']} |")
        lines.append(f"| … asks found on top, no LM / faithful parse | {b['found_none']} / {b['found_faithful']} | "
                     f"{a['found_none']} / {a['found_faithful']} |")
    b, a = before["safety"]["none"], after["safety"]["none"]
    lines.append(f"| sensitive asks whose top candidate is the command asked for, no LM | {b['asked_found']:.3f} "
                 f"({b['asked_runs']}) | {a['asked_found']:.3f} ({a['asked_runs']}) |")
    lines.append(f"| dry-run values outside the range or in another unit than said | {b['values_wrong']} | "
                 f"{a['values_wrong']} |")
    for bad in after["values"]:
        lines.append(f"| spec `value_range.min` = {bad} | {_load_text(before['values'][bad])} | "
                     f"{_load_text(after['values'][bad])} |")
    for key, a in after["quality"].items():
        b = before["quality"][key]
        name, ir = key.split()
        what = "bundled test split" if name == "test" else "bundled held-out queries"
        lines.append(f"| {what}, `--ir {ir}`: recall@10 / bulk precision / MRR (n={a['n']}) | "
                     f"{b['recall@10']:.4f} / {b['bulk_precision']:.4f} / {b['mrr']:.4f} | "
                     f"{a['recall@10']:.4f} / {a['bulk_precision']:.4f} / {a['mrr']:.4f} |")
        lines.append(f"| … p50 ms per query, {name}, `--ir {ir}` | {b['latency_ms_p50']} | {a['latency_ms_p50']} |")
    return lines


def _load_text(result: dict) -> str:
    if not result["loads"]:
        return f"refused: {result['error']}"
    return "loads; dry run plans " + (", ".join(f"{c} {args}" for c, args in result["planned"]) or "nothing")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="515359b", help="the commit to compare with (default: before the "
                        "safety rules)")
    parser.add_argument("--json", help="write the measurements here")
    parser.add_argument("--measure", nargs="+", help=argparse.SUPPRESS)  # a baseline run: these homes only
    args = parser.parse_args()
    embedder = CachedEmbedder(LocalUSEEmbedder(), Path(tempfile.gettempdir()) / "tracerag-bench-cache.sqlite")
    if args.measure:
        result = measure([Path(p) for p in args.measure], embedder)
        Path(args.json).write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
        return
    homes = write_safety_homes(Path(tempfile.mkdtemp(prefix="safety-homes-")))
    started = time.perf_counter()
    after = measure(homes, embedder)
    print(f"measured the current tree in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    before = measured_on(args.baseline, __file__, ["--measure", *map(str, homes)])
    print("\n".join(_table(before, after)))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"baseline": args.baseline, "before": before, "after": after},
                                              ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
