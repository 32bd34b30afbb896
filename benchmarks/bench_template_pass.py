"""Does Home Assistant's template matcher help as a first pass before the rule parser? Measured, no LM.

    python benchmarks/bench_template_pass.py [--json out.json]

Before: CommandRetrieval with the rule parser (``ir_source="none"``). After: ``template_pass.TemplatePass``
reads the utterance first; a match becomes the QueryIR CommandRetrieval searches with (passed as its parse),
anything else goes to the rule parser as before. Same indexes, scorer and embedder for both (the regression
gate's: ``evaluate_commands``, the local USE embedder with its cache).

Sets: the bundled test split and held-out queries (every home: the honest judge, written for neither) and the
intents corpus's dev split (generated from the very templates the matcher uses: a gain there is circular).
The corpus's blind split is scored for its totals only; none of its rows is printed or kept.

Each program runs over every set twice, alternating, and the second run is the one reported: the first warms
the embedding cache for the texts each parse makes. Latency is per query over the whole call (the match
included), p50 / p95 in the same run; the matcher alone is timed too; and the same at 5,000 devices
(``--scale``: home_en and home_medium replicated, latency only).
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
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from intents_corpus import CORPUS  # noqa: E402
from regression_gate import _corpus  # noqa: E402
from synthetic_home import replicate_home  # noqa: E402
from template_pass import TemplatePass  # noqa: E402

from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes  # noqa: E402
from tracerag.commands.evaluation import evaluate_commands  # noqa: E402
from tracerag.datasets.smarthome import load_dataset, resolve_dataset  # noqa: E402
from tracerag.embedding.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.embedding.embedding_cache import CachedEmbedder  # noqa: E402


class TemplateFirst:
    """CommandRetrieval behind the template pass: a match is the parse, no match goes to the rule parser.
    The labelled ``ir`` the evaluation passes is ignored: the parse is the pass's own."""

    ir_source = "template"

    def __init__(self, indexes: dict):
        self.rules = CommandRetrieval(indexes, ir_source="none")
        self.with_ir = CommandRetrieval(indexes, ir_source="gold")
        self.passes = {name: TemplatePass(index.home) for name, index in indexes.items()}
        self.matched: dict[tuple[str, str], bool] = {}
        self.match_ms: list[float] = []

    def index_for(self, home):
        return self.rules.index_for(home)

    def __call__(self, query: str, home: str | None = None, ir=None):
        started = time.perf_counter()
        parsed = self.passes[home].ir(query)
        self.match_ms.append((time.perf_counter() - started) * 1000)
        self.matched[(home, query)] = parsed is not None
        if parsed is None:
            return self.rules(query=query, home=home)
        return self.with_ir(query=query, home=home, ir=parsed)


def _quantile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[int(q * (len(values) - 1))] if values else float("nan")


def figures(rows: list[dict]) -> dict:
    """recall@10, bulk precision over the plans made, how many plans, and how many of them answer a query
    labelled ``one`` (the regression gate counts such a plan against a one-device slice)."""
    bulk = [r["bulk_precision"] for r in rows if r["bulk_precision"] is not None]
    ms = [r["ms"] for r in rows]
    return {"n": len(rows), "recall@10": statistics.fmean(r["recall"] for r in rows),
            "bulk_precision": statistics.fmean(bulk) if bulk else None, "plans": len(bulk),
            "plans_for_one": sum(r["bulk_precision"] is not None and r["quantifier"] == "one" for r in rows),
            "p50_ms": statistics.median(ms), "p95_ms": _quantile(ms, 0.95)}


def changes(before: list[dict], after: list[dict]) -> dict:
    """Per query: recall up / down, and the bulk precision of a plan up / down (no plan counts as 0 where the
    other side made one)."""
    out = {"recall_up": 0, "recall_down": 0, "bulk_up": 0, "bulk_down": 0}
    for b, a in zip(before, after, strict=True):
        assert b["id"] == a["id"]
        out["recall_up"] += a["recall"] > b["recall"] + 1e-9
        out["recall_down"] += a["recall"] < b["recall"] - 1e-9
        if a["bulk_precision"] is not None or b["bulk_precision"] is not None:
            pa, pb = a["bulk_precision"] or 0.0, b["bulk_precision"] or 0.0
            out["bulk_up"] += pa > pb + 1e-9
            out["bulk_down"] += pa < pb - 1e-9
    return out


def _timed(program, calls: list[tuple[str, str]]) -> list[float]:
    out = []
    for query, home in calls:
        started = time.perf_counter()
        program(query=query, home=home)
        out.append((time.perf_counter() - started) * 1000)
    return out


def measure_scale(embedder, devices: int) -> dict:
    """Latency only, at ``devices`` devices: home_en and home_medium replicated (``synthetic_home``; copy 0
    keeps its names, so the bundled test and held-out utterances still name devices), every one of their
    bundled utterances through both programs, twice, alternating; the second run reported."""
    bundled = resolve_dataset("smarthome")
    out = {}
    for source in ("home_en", "home_medium"):
        home_dir = replicate_home(source, Path(tempfile.mkdtemp(prefix="template-scale-")) / source, devices)
        indexes = build_indexes([home_dir], embedder)
        calls = [(q.query, source) for split in (load_dataset(bundled, "test"),
                                                  load_dataset(bundled, queries_file="heldout.jsonl"))
                 for q in split[bundled / source]]
        rules, first = CommandRetrieval(indexes, ir_source="none"), TemplateFirst(indexes)
        for _ in range(2):
            first.match_ms.clear()
            before, after = _timed(rules, calls), _timed(first, calls)
        out[f"{source} × {devices:,} devices"] = {
            "n": len(calls), "matched": sum(first.matched[(home, query)] for query, home in calls) / len(calls),
            "before": {"p50_ms": statistics.median(before), "p95_ms": _quantile(before, 0.95)},
            "after": {"p50_ms": statistics.median(after), "p95_ms": _quantile(after, 0.95)},
            "match_p50_ms": statistics.median(first.match_ms), "match_p95_ms": _quantile(first.match_ms, 0.95)}
        print(f"{source} at {devices} devices: done", file=sys.stderr)
    return out


def measure(scale: int) -> dict:
    embedder = CachedEmbedder(LocalUSEEmbedder(), Path(tempfile.gettempdir()) / "tracerag-bench-cache.sqlite")
    bundled = resolve_dataset("smarthome")
    corpus, rows = _corpus(CORPUS)
    sets = {"bundled test": load_dataset(bundled, "test"),
            "bundled heldout": load_dataset(bundled, queries_file="heldout.jsonl"),
            "corpus dev": {h: [q for q in qs if rows[q.id]["split"] == "dev"] for h, qs in corpus.items()},
            "corpus blind": {h: [q for q in qs if rows[q.id]["split"] == "blind"] for h, qs in corpus.items()}}
    out = {}
    for set_name, queries in sets.items():
        indexes = build_indexes(list(queries), embedder)
        rules, first = CommandRetrieval(indexes, ir_source="none"), TemplateFirst(indexes)
        reports = {}
        for _ in range(2):  # the second run of each is reported (warm embedding cache for both)
            first.match_ms.clear()
            for side, program in (("before", rules), ("after", first)):
                reports[side] = evaluate_commands(program, queries, dataset=set_name, progress=False)["per_query"]
        before, after = reports["before"], reports["after"]
        matched = [first.matched[(r["home"], r["query"])] for r in after]
        result = {"before": figures(before), "after": figures(after),
                  "matched": sum(matched) / len(matched),
                  "match_p50_ms": statistics.median(first.match_ms), "match_p95_ms": _quantile(first.match_ms, 0.95)}
        if set_name != "corpus blind":  # the blind split: totals only
            result["changes"] = changes(before, after)
            result["changes_matched"] = changes([b for b, m in zip(before, matched, strict=True) if m],
                                                [a for a, m in zip(after, matched, strict=True) if m])
            result["changed"] = [{"id": a["id"], "query": a["query"], "recall": [b["recall"], a["recall"]],
                                  "bulk_precision": [b["bulk_precision"], a["bulk_precision"]], "ir": a["ir"]}
                                 for b, a in zip(before, after, strict=True)
                                 if (b["recall"], b["bulk_precision"]) != (a["recall"], a["bulk_precision"])]
        out[set_name] = result
        print(f"{set_name}: done", file=sys.stderr)
    return {"sets": out, "scale": measure_scale(embedder, scale) if scale else {}}


def table(measured: dict) -> list[str]:
    def bulk(f):
        return "—" if f["bulk_precision"] is None else f"{f['bulk_precision']:.3f} ({f['plans']})"

    lines = ["| set | n | matched | recall@10 before → after | bulk precision (plans) before → after | "
             "plans for a `one` query | recall up / down | bulk up / down |", "|---|---|---|---|---|---|---|---|"]
    for name, r in measured["sets"].items():
        b, a, c = r["before"], r["after"], r.get("changes")
        moved = f"{c['recall_up']} / {c['recall_down']}" if c else "(blind: totals only)"
        moved_bulk = f"{c['bulk_up']} / {c['bulk_down']}" if c else "—"
        lines.append(f"| {name} | {b['n']} | {r['matched']:.3f} | {b['recall@10']:.3f} → {a['recall@10']:.3f} | "
                     f"{bulk(b)} → {bulk(a)} | {b['plans_for_one']} → {a['plans_for_one']} | {moved} | "
                     f"{moved_bulk} |")
    lines += ["", "| set | p50 ms before | p50 after | ratio | p95 ms before | p95 after | ratio | "
              "matcher alone p50 / p95 ms |", "|---|---|---|---|---|---|---|---|"]
    for name, r in {**measured["sets"], **measured["scale"]}.items():
        b, a = r["before"], r["after"]
        lines.append(f"| {name} | {b['p50_ms']:.1f} | {a['p50_ms']:.1f} | {a['p50_ms'] / b['p50_ms']:.2f} | "
                     f"{b['p95_ms']:.1f} | {a['p95_ms']:.1f} | {a['p95_ms'] / b['p95_ms']:.2f} | "
                     f"{r['match_p50_ms']:.1f} / {r['match_p95_ms']:.1f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the figures and the changed (non-blind) queries here")
    parser.add_argument("--scale", type=int, default=5000, help="devices of the latency-only homes (0: none)")
    args = parser.parse_args()
    measured = measure(args.scale)
    if args.json:
        args.json.write_text(json.dumps(measured, ensure_ascii=False, indent=1), encoding="utf-8")
    print("\n".join(table(measured)))


if __name__ == "__main__":
    main()
