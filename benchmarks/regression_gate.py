"""The regression gate: CommandRetrieval per slice against a checked-in baseline; fails when a slice drops.

    python benchmarks/regression_gate.py                 # measure, compare with the baseline, exit 1 on a drop
    python benchmarks/regression_gate.py --update        # rewrite the baseline (commit it, saying why)
    python benchmarks/regression_gate.py --json out.json # keep the measurement (for the tables below)
    python benchmarks/regression_gate.py --table before.json after.json   # BENCHMARKS.md tables
    python benchmarks/regression_gate.py --show-misses   # the dev rows missed (never the blind ones)

Sets: the intents dev corpus (``intents_corpus.py``: Home Assistant's templates over seven homes, sentences
nobody here wrote) and the bundled smart-home test split and held-out queries. Each is run without an LM
(``none``) and with its gold parse (``gold``). A slice is language × intent × quantifier × home (corpus) or
home × quantifier (bundled sets), per mode; its figures are recall@10, bulk precision and the operation read
right (the parse's operation is one the expected commands perform: derived from the labels, never written by
hand). The gate fails when any slice's figure is more than ``--tolerance`` (0.01) below the baseline's, or a
slice is missing.
Everything here is deterministic (no LM, local embedder), so a drop is a changed answer, never noise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from intents_corpus import CORPUS, corpus_homes  # noqa: E402

from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes  # noqa: E402
from tracerag.commands.evaluation import evaluate_commands  # noqa: E402
from tracerag.datasets.smarthome import load_dataset, load_queries, resolve_dataset  # noqa: E402
from tracerag.embedding.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.embedding.embedding_cache import CachedEmbedder  # noqa: E402
from tracerag.home_commands.operations import STANDS_FOR, operations_of  # noqa: E402

BASELINE = ROOT / "benchmarks" / "data" / "regression_baseline.json"
MODES = ("none", "gold")


def _corpus(corpus_dir: Path) -> tuple[dict, dict]:
    """(home dir -> LabelledQuery list, query id -> its corpus row) for the intents corpus."""
    queries, rows = {}, {}
    for name, (_lang, home_dir) in corpus_homes(Path(tempfile.mkdtemp(prefix="gate-homes-"))).items():
        path = corpus_dir / name / "queries.jsonl"
        with open(path, encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                rows[row["id"]] = row
        queries[home_dir] = load_queries(path, name)
    return queries, rows


def measure(corpus_dir: Path = CORPUS) -> dict:
    """Per-query results of every set and mode: {"sets": {set: {mode: [row, ...]}}}."""
    embedder = CachedEmbedder(LocalUSEEmbedder(), Path(tempfile.gettempdir()) / "tracerag-bench-cache.sqlite")
    corpus, corpus_rows = _corpus(corpus_dir)
    bundled = resolve_dataset("smarthome")
    sets = {"corpus": corpus,
            "test": load_dataset(bundled, "test"), "heldout": load_dataset(bundled, queries_file="heldout.jsonl")}
    out = {}
    for set_name, queries_by_home in sets.items():
        indexes = build_indexes(list(queries_by_home), embedder)
        for mode in MODES:
            program = CommandRetrieval(indexes, ir_source=mode)
            report = evaluate_commands(program, queries_by_home, dataset=set_name, progress=False)
            rows = []
            for r in report["per_query"]:
                extra = corpus_rows.get(r["id"], {}) if set_name == "corpus" else {}
                rows.append({"id": r["id"], "home": r["home"], "query": r["query"], "quantifier": r["quantifier"],
                             "lang": extra.get("lang", "en" if r["home"] == "home_en" else "zh"),
                             "intent": extra.get("intent", "-"), "split": extra.get("split", r["split"]),
                             "recall": r["recall"], "bulk_precision": r["bulk_precision"], "ms": r["ms"],
                             "operation_ok": operation_read_right(indexes[r["home"]], r),
                             "ir": r["ir"], "returned": r["returned"][:3], "expected": r["expected"][:3]})
            out.setdefault(set_name, {})[mode] = rows
    return {"sets": out}


def operation_read_right(index, row: dict) -> bool | None:
    """Whether the parse's operation is one every expected command performs (directly, or as the stand-in of
    a device without its own command: "turn on" a blind opens it); None for a row that expects nothing. The
    gold operation is derived from the expected commands, so no label is written by hand."""
    said = (row["ir"] or {}).get("operation")
    accepted = None
    for target in row["expected"]:
        device = index.home.find(target["device_id"])
        if device is None:
            continue
        ids = target["command_id"] if isinstance(target["command_id"], list) else [target["command_id"]]
        own = {op for spec in device.commands for op in operations_of(spec)}
        ops = {op for cid in ids if (spec := device.command(cid)) is not None for op in operations_of(spec)}
        ops |= {op for op, stand_ins in STANDS_FOR.items() if op not in own and ops & set(stand_ins)}
        accepted = ops if accepted is None else accepted & ops
    return None if accepted is None else said in accepted


def _figures(rows: list[dict]) -> dict:
    """recall@10; bulk precision over the rows that got a plan; ``plans``: the share that got one (for a
    one-device command, a plan is a wrong answer); ``operation``: the share of rows expecting a command whose
    parse read an operation that command performs."""
    bulk = [r["bulk_precision"] for r in rows if r["bulk_precision"] is not None]
    read = [r["operation_ok"] for r in rows if r.get("operation_ok") is not None]
    return {"n": len(rows), "recall@10": round(statistics.fmean(r["recall"] for r in rows), 4),
            "bulk_precision": round(statistics.fmean(bulk), 4) if bulk else None,
            "plans": round(len(bulk) / len(rows), 4),
            "operation": round(statistics.fmean(read), 4) if read else None}


def slices(measured: dict) -> dict:
    """slice key -> figures, e.g. "corpus none en HassTurnOn all home_en"."""
    groups = defaultdict(list)
    for set_name, modes in measured["sets"].items():
        for mode, rows in modes.items():
            for r in rows:
                key = (f"{set_name} {mode} {r['lang']} {r['intent']} {r['quantifier']} {r['home']}"
                       if set_name == "corpus" else f"{set_name} {mode} {r['home']} {r['quantifier']}")
                groups[key].append(r)
    return {key: _figures(rows) for key, rows in sorted(groups.items())}


def compare(baseline: dict, current: dict, tolerance: float) -> list[str]:
    """One line per slice that dropped by more than ``tolerance`` or went missing: recall@10; for a slice of
    one-device commands the share answered with a plan (up is worse), else the bulk precision of the plans
    made (a slice that makes none now loses recall instead, which is checked)."""
    problems = []
    for key, before in baseline.items():
        now = current.get(key)
        if now is None:
            problems.append(f"{key}: missing (baseline n={before['n']})")
            continue
        checks = [("recall@10", 1), ("operation", 1)] + \
            ([("plans", -1)] if " one" in f" {key} " else [("bulk_precision", 1)])
        for metric, direction in checks:
            b, a = before.get(metric), now.get(metric)
            if b is not None and a is not None and (a - b) * direction < -tolerance:
                problems.append(f"{key}: {metric} {b} -> {a} (n={now['n']})")
    return problems


def table(before: dict, after: dict) -> list[str]:
    """BENCHMARKS.md tables: the corpus per language × intent and × quantifier, dev and blind apart, and the
    bundled sets; recall@10 / bulk precision before → after, no LM and gold parse."""
    def group(measured, set_name, mode, key, split=None):
        out = defaultdict(list)
        for r in measured["sets"][set_name][mode]:
            if split is None or r["split"] == split:
                out[key(r)].append(r)
        return {k: _figures(v) for k, v in out.items()}

    def cell(f):
        if f is None:
            return "—"
        bulk = "—" if f["bulk_precision"] is None else f"{f['bulk_precision']:.3f}"
        return f"{f['recall@10']:.3f} / {bulk}"

    lines = []
    views = [("corpus", "language × split", lambda r: f"{r['lang']} {r['split']}", None),
             ("corpus", "language × intent", lambda r: f"{r['lang']} {r['intent']}", None),
             ("corpus", "language × quantifier", lambda r: f"{r['lang']} {r['quantifier']}", None),
             ("corpus", "language × home", lambda r: f"{r['lang']} {r['home']}", None),
             ("test", "bundled test split", lambda r: "all", None),
             ("heldout", "bundled held-out queries", lambda r: "all", None)]
    for set_name, title, key, split in views:
        lines += ["", f"{title}: recall@10 / bulk precision", "",
                  "| slice | n | no LM before | no LM after | gold before | gold after |", "|---|---|---|---|---|---|"]
        cells = {(side, mode): group(m, set_name, mode, key, split)
                 for side, m in (("before", before), ("after", after)) for mode in MODES}
        for name in sorted(cells[("after", "none")]):
            n = cells[("after", "none")][name]["n"]
            lines.append(f"| {name} | {n} | " + " | ".join(cell(cells[(side, mode)].get(name)) for mode in MODES
                                                           for side in ("before", "after")) + " |")
    lines += ["", "operation read right (the parse's operation is one the expected commands perform), after", "",
              "| slice | n | no LM | gold parse |", "|---|---|---|---|"]
    ops = {mode: group(after, "corpus", mode, lambda r: f"{r['lang']} {r['split']}") for mode in MODES}
    for name in sorted(ops["none"]):
        lines.append(f"| {name} | {ops['none'][name]['n']} | " +
                     " | ".join(f"{ops[mode][name]['operation']:.3f}" for mode in MODES) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite the baseline with this measurement")
    parser.add_argument("--json", type=Path, help="write the per-query measurement here")
    parser.add_argument("--baseline", type=Path, default=BASELINE)
    parser.add_argument("--tolerance", type=float, default=0.01)
    parser.add_argument("--table", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--show-misses", action="store_true", help="print the dev rows missed without an LM")
    args = parser.parse_args()
    if args.table:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.table)
        print("\n".join(table(before, after)))
        return
    measured = measure()
    if args.json:
        args.json.write_text(json.dumps(measured, ensure_ascii=False), encoding="utf-8")
    if args.show_misses:
        for r in measured["sets"]["corpus"]["none"]:
            if r["split"] == "dev" and (r["recall"] < 1 or (r["bulk_precision"] or 1) < 1):
                print(json.dumps({k: r[k] for k in ("id", "query", "recall", "bulk_precision", "ir", "returned",
                                                    "expected")}, ensure_ascii=False))
    current = slices(measured)
    if args.update:
        args.baseline.write_text(json.dumps(current, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
        print(f"baseline written: {len(current)} slices -> {args.baseline}")
        return
    baseline = json.loads(args.baseline.read_text(encoding="utf-8"))
    problems = compare(baseline, current, args.tolerance)
    gained = sum(1 for k, f in current.items() if k in baseline and f["recall@10"] > baseline[k]["recall@10"] + 1e-9)
    print(f"{len(current)} slices, {gained} above the baseline, {len(problems)} below it by more than "
          f"{args.tolerance}")
    for line in problems:
        print("  " + line)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
