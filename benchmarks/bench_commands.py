"""Measure CommandRetrieval on the bundled smart-home dataset and print the BENCHMARKS.md tables.

    python benchmarks/bench_commands.py [--split test] [--queries heldout.jsonl] [--repeats 5] [--json out/bench.json]

``--queries`` names the query file read in each home (default queries.jsonl; ``heldout.jsonl`` holds the
hand-written held-out queries, which take ``--split all``). Recall and bulk precision are also printed
per home and language.

Quality: recall@10 / bulk precision with the no-LM parse (`none`) and the gold parse (`gold`), next to
a baseline measured in the same run: one flat top-10 list from the dense embedder over "label room
description" documents and the raw query (no parse, gating, channels or bulk mode). Speed: query
latency on the largest home against the cost of embedding the query alone (the floor any embedding
retriever pays), cold index build with an empty embedding cache, and warm rebuild from the cache.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dspy  # noqa: E402
import numpy as np  # noqa: E402

from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes  # noqa: E402
from tracerag.commands.evaluation import evaluate_commands  # noqa: E402
from tracerag.datasets.smarthome import load_dataset, resolve_dataset  # noqa: E402
from tracerag.embedding.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.embedding.embedding_cache import CachedEmbedder  # noqa: E402
from tracerag.home_commands.command_docs import command_text, is_chinese  # noqa: E402
from tracerag.home_commands.home import Home  # noqa: E402

FAILURE_CASES = [  # (home, query, the category and command top-1 must have)
    ("home_large", "打开客厅的灯", "Light", "main-switch-on"),
    ("home_large", "把灯光调到50%", "Light", "main-switchLevel-setLevel"),
    ("home_medium", "打开客厅的灯", "Light", "main-switch-on"),
    ("home_medium", "把灯光调到50%", "Light", "main-switchLevel-setLevel"),
]


class FlatBaseline:
    """The obvious flat design: one document per (device, command) = "label room description",
    one dense top-k list for the raw query; no parse, gating, channels or bulk mode."""

    def __init__(self, index, k=10):
        self.index, self.k = index, k
        texts = []
        for di, ci in index.table.rows:
            device = index.home.devices[di]
            texts.append(f"{device.label} {device.room} {command_text(device.commands[ci])}")
        self.vectors = index.embedder.embed(texts) if texts else np.zeros((0, index.embedder.dim))

    def __call__(self, query):
        index = self.index
        scores = self.vectors @ index.embedder.embed([query])[0]
        top = np.argsort(-scores, kind="stable")[: self.k]
        return [(index.home.devices[index.table.rows[r][0]].device_id,
                 index.home.devices[index.table.rows[r][0]].commands[index.table.rows[r][1]].id) for r in top]


def baseline_report(indexes, queries_by_home, k=10):
    from tracerag.commands.metrics import recall
    from tracerag.home_commands.command_results import Candidate

    rows = []
    for path, queries in queries_by_home.items():
        flat = FlatBaseline(indexes[path.name], k)
        for q in queries:
            cands = [Candidate(device_id=d, command_id=c, label="", room="", category="", score=0.0, channels={})
                     for d, c in flat(q.query)]
            pred = dspy.Prediction(candidates=cands, bulk=None)
            rows.append((q.quantifier or "one", recall(q.to_example(), pred, k)))
    by_q = {}
    for quant, r in rows:
        by_q.setdefault(quant, []).append(r)
    return statistics.fmean(r for _, r in rows), {k_: statistics.fmean(v) for k_, v in sorted(by_q.items())}


def quality(indexes, split, queries_file="queries.jsonl", dataset="smarthome"):
    dspy.configure(lm=None)
    data = load_dataset(dataset, None if split == "all" else split, queries_file=queries_file)
    out = {}
    for ir in ("none", "gold"):
        program = CommandRetrieval(indexes, ir_source=ir)
        out[ir] = evaluate_commands(program, data, dataset="smarthome", progress=False)
    out["baseline"] = baseline_report(indexes, data)
    return out


def latency(index, queries, repeats):
    program = CommandRetrieval(index, ir_source="none")
    embed_only, full = [], []
    for q in queries:  # warm caches and code paths once
        program(query=q.query)
    for _ in range(repeats):
        for q in queries:
            t = time.perf_counter()
            index.embedder.embed([q.query])
            embed_only.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            program(query=q.query)
            full.append((time.perf_counter() - t) * 1000)
    pct = lambda xs, p: float(np.percentile(xs, p))  # noqa: E731
    return {"p50_ms": pct(full, 50), "p95_ms": pct(full, 95), "embed_p50_ms": pct(embed_only, 50),
            "ratio_p50": pct(full, 50) / pct(embed_only, 50), "n": len(full)}


def build_times(home_path, repeats):
    texts = {command_text(c) for d in Home.load(home_path).devices for c in d.commands}
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            embedder = CachedEmbedder(LocalUSEEmbedder(), Path(tmp) / "e.sqlite")
            t = time.perf_counter()
            build_indexes([home_path], embedder)
            cold.append(time.perf_counter() - t)
            t = time.perf_counter()
            build_indexes([home_path], embedder)
            warm.append(time.perf_counter() - t)
    return {"cold_s": statistics.median(cold), "warm_s": statistics.median(warm), "documents": len(texts)}


def per_language(report) -> dict[tuple[str, str], dict]:
    """(home or "all", language or "all") -> recall@10, bulk precision (mean over bulk plans), n."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in report["per_query"]:
        lang = "zh" if is_chinese(row["query"]) else "en"
        for key in ((row["home"], lang), (row["home"], "all"), ("all", lang), ("all", "all")):
            groups.setdefault(key, []).append(row)
    out = {}
    for key, rows in sorted(groups.items()):
        bulk = [r["bulk_precision"] for r in rows if r["bulk_precision"] is not None]
        out[key] = {"recall@10": statistics.fmean(r["recall"] for r in rows),
                    "bulk_precision": statistics.fmean(bulk) if bulk else "-", "n": len(rows), "bulk_n": len(bulk)}
    return out


def table(title, header, rows):
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(f"{x:.3f}" if isinstance(x, float) else str(x) for x in r) + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="test", help="train | dev | test | all")
    ap.add_argument("--queries", default="queries.jsonl",
                    help="the query file read in each home (heldout.jsonl: the hand-written held-out queries)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--misses", action="store_true", help="list the queries not fully recalled or precise")
    ap.add_argument("--dataset", default="smarthome",
                    help="a directory of homes to measure instead of the bundled ones (quality tables only), "
                         "e.g. benchmarks/data/smarthome_untuned")
    args = ap.parse_args()

    root = resolve_dataset(args.dataset) if args.dataset == "smarthome" else Path(args.dataset)
    with tempfile.TemporaryDirectory() as tmp:
        embedder = CachedEmbedder(LocalUSEEmbedder(), Path(tmp) / "e.sqlite")
        homes = sorted(p for p in root.iterdir() if (p / "devices.json").is_file())
        indexes = build_indexes(homes, embedder)
        q = quality(indexes, args.split, args.queries, root)
        none, gold = q["none"], q["gold"]
        base_all, base_q = q["baseline"]
        mm = lambda r, g, key, col: r["breakdown"][g].get(key, {}).get(col)  # noqa: E731

        source = "" if args.queries == "queries.jsonl" else f"{args.queries}, "
        table(f"Quality ({source}{args.split} split, k=10)", ["parse", "recall@10", "hit@10", "MRR", "bulk precision",
                                                       "clarification rate", "n"],
              [["flat top-10 baseline", base_all, "-", "-", "-", "-", none["n"]]] +
              [[name, r["metrics"]["recall@10"], r["metrics"]["hit@10"], r["metrics"]["mrr"],
                r["metrics"]["bulk_precision"], r["metrics"]["clarification_rate"], r["n"]]
               for name, r in (("none (no LM)", none), ("gold IR", gold))])
        quants = sorted(none["breakdown"]["quantifier"])
        table("recall@10 per quantifier", ["quantifier", "baseline", "none", "gold", "bulk precision none",
                                           "bulk precision gold", "n"],
              [[k, base_q.get(k, "-"), mm(none, "quantifier", k, "recall@10"), mm(gold, "quantifier", k, "recall@10"),
                mm(none, "quantifier", k, "bulk_precision") or "-", mm(gold, "quantifier", k, "bulk_precision") or "-",
                mm(none, "quantifier", k, "n")] for k in quants])
        table("recall@10 per category (of the first expected device)", ["category", "none", "gold", "n"],
              [[k, mm(none, "category", k, "recall@10"), mm(gold, "category", k, "recall@10"),
                mm(none, "category", k, "n")] for k in sorted(none["breakdown"]["category"])])
        table("recall@10 per home", ["home", "none", "gold", "n"],
              [[k, mm(none, "home", k, "recall@10"), mm(gold, "home", k, "recall@10"), mm(none, "home", k, "n")]
               for k in sorted(none["breakdown"]["home"])])

        lang_none, lang_gold = per_language(none), per_language(gold)
        table("recall@10 and bulk precision per home and language", ["home", "language", "recall@10 none",
                                                                      "recall@10 gold", "bulk precision none",
                                                                      "bulk precision gold", "n", "bulk n none"],
              [[home, lang, r["recall@10"], lang_gold[home, lang]["recall@10"], r["bulk_precision"],
                lang_gold[home, lang]["bulk_precision"], r["n"], r["bulk_n"]]
               for (home, lang), r in lang_none.items()])
        if args.misses:
            for name, report in (("none", none), ("gold", gold)):
                for row in report["per_query"]:
                    if row["recall"] < 1 or (row["bulk_precision"] is not None and row["bulk_precision"] < 1):
                        print(f"miss {name} {row['id']} {row['query']!r} recall={row['recall']:.2f} "
                              f"bulk_precision={row['bulk_precision']} hint={row['hint']}")

        if args.dataset != "smarthome":
            return
        rows = []
        for home, query, category, command in FAILURE_CASES:
            pred = CommandRetrieval(indexes[home], ir_source="none")(query=query)
            top1 = pred.candidates[0]
            fixed = top1.category == category and top1.command_id == command
            rows.append([home, query, f"{top1.label} ({top1.category}) / {top1.command_id}", "yes" if fixed else "no"])
        table("Known failure cases of the first design (no LM)", ["home", "query", "top-1", "fixed"], rows)

        # latency with the plain encoder: a new utterance is never in the embedding cache
        large = build_indexes([root / "home_large"], LocalUSEEmbedder())["home_large"]
        large_queries = load_dataset(root / "home_large")[root / "home_large"]
        lat = latency(large, large_queries, args.repeats)
        table(f"Query latency, home_large ({len(large.home.devices)} devices, index built, no LM, "
              f"{lat['n']} calls)", ["p50 ms", "p95 ms", "embed-only p50 ms", "p50 / embed-only"],
              [[lat["p50_ms"], lat["p95_ms"], lat["embed_p50_ms"], lat["ratio_p50"]]])
    bt = build_times(root / "home_large", max(1, min(args.repeats, 3)))
    table("Index build, home_large (median)", ["cold build s (empty cache)", "warm rebuild s (cache)",
                                               "cold / warm", "distinct documents"],
          [[bt["cold_s"], bt["warm_s"], bt["cold_s"] / bt["warm_s"], bt["documents"]]])
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"none": none["metrics"], "gold": gold["metrics"],
                                               "baseline": base_all, "latency": lat, "build": bt}, indent=1))


if __name__ == "__main__":
    main()
