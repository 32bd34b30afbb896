"""Every CommandRetrieval answer over the bundled utterances, written as JSON lines to compare two trees.

    PYTHONHASHSEED=0 PYTHONPATH=<tree> python benchmarks/dump_command_answers.py out.jsonl [--cache emb.sqlite]
    python benchmarks/dump_command_answers.py --compare before.jsonl after.jsonl

A change meant to make the search faster must leave every answer as it was: this writes, per home and
utterance, the candidates (scores and channels), the bulk plan (options, groups, batches, hint, reason), the
hint, what was withheld, the parse and the rest of the prediction. Utterances: the bundled sets (queries,
held-out, negated), the intents corpus and the referent suites. Homes: home_large replicated to 20,000 devices
and 1,000 (``synthetic_home.py``), the referent home zh_villa to 3,000, home_en to 3,000, home_medium to 2,000,
home_small to 1,500, each over every utterance without an LM; and each referent suite's cases on their own home,
without an LM and with the case's own parse (``ir_source="gold"``), as each intents-corpus row with its parse on
the 20,000-device home. ``PYTHONPATH`` selects the tree measured; the embedding cache is shared between runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))

DATA = Path(__file__).resolve().parent / "data"
SCALED = (("home_large", 20000), ("home_large", 1000), (DATA / "referent_suite" / "zh_villa", 3000),
          ("home_en", 3000), ("home_medium", 2000), ("home_small", 1500))


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def utterances() -> tuple[list[str], list[tuple[str, dict]], dict[Path, list[dict]]]:
    """(every utterance once, in a fixed order; the intents corpus rows with a parse; referent cases by home)."""
    from synthetic_home import BUNDLED

    said, parsed, cases = [], [], {}
    for home in sorted(BUNDLED.iterdir()):
        for name in ("queries.jsonl", "heldout.jsonl", "negated.jsonl"):
            if (home / name).exists():
                said += [row["query"] for row in _lines(home / name)]
    for path in sorted((DATA / "intents_corpus").glob("*/queries.jsonl")):
        for row in _lines(path):
            said.append(row["query"])
            if row.get("ir"):
                parsed.append((row["query"], row["ir"]))
    for suite in sorted(DATA.glob("referent_suite*")):
        for case in _lines(suite / "cases.jsonl"):
            said.append(case["utterance"])
            cases.setdefault(suite / case["home"], []).append(case)
    return list(dict.fromkeys(said)), parsed, cases


def answer(pred) -> str:
    """The prediction as canonical JSON: every field the program returns."""
    def plain(value):
        if hasattr(value, "model_dump"):
            return value.model_dump(mode="json")
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value if value is None or isinstance(value, str | int | float | bool) else str(value)
    return json.dumps({k: plain(v) for k, v in sorted(pred.items())}, ensure_ascii=False, sort_keys=True)


def dump(out: Path, cache: Path) -> None:
    from synthetic_home import replicate_home

    import tracerag
    from tracerag.commands.command_retrieval import CommandRetrieval
    from tracerag.embedding.embedders import LocalUSEEmbedder
    from tracerag.embedding.embedding_cache import CachedEmbedder
    from tracerag.home_commands.home import Home
    from tracerag.home_commands.home_index import CommandIndex

    print(f"tree: {Path(tracerag.__file__).parents[1]}", file=sys.stderr)
    said, parsed, cases = utterances()
    embedder = CachedEmbedder(LocalUSEEmbedder(), cache)
    with tempfile.TemporaryDirectory() as tmp, out.open("w", encoding="utf-8") as sink:
        def run(tag: str, program, items) -> None:
            started = time.perf_counter()
            for key, kwargs in items:
                sink.write(json.dumps({"home": tag, "key": key, "answer": answer(program(**kwargs))},
                                      ensure_ascii=False) + "\n")
            print(f"{tag}: {len(items)} answers, {time.perf_counter() - started:.0f} s", file=sys.stderr)

        for source, devices in SCALED:
            name = Path(source).name
            home = Home.load(replicate_home(source, Path(tmp) / f"{name}_{devices}", devices), log_warnings=False)
            program = CommandRetrieval(CommandIndex(home, embedder), ir_source="none")
            run(f"{name}@{devices}", program, [(q, {"query": q}) for q in said])
            if (name, devices) == ("home_large", 20000):
                gold = CommandRetrieval(CommandIndex(home, embedder), ir_source="gold")
                run(f"{name}@{devices}/gold", gold, [(f"{i}:{q}", {"query": q, "ir": ir})
                                                     for i, (q, ir) in enumerate(parsed)])
        for home_dir, home_cases in sorted(cases.items()):
            index = CommandIndex(Home.load(home_dir, log_warnings=False), embedder)
            tag = f"{home_dir.parent.name}/{home_dir.name}"
            run(tag, CommandRetrieval(index, ir_source="none"), [(c["id"], {"query": c["utterance"]})
                                                                  for c in home_cases])
            run(f"{tag}/gold", CommandRetrieval(index, ir_source="gold"),
                [(c["id"], {"query": c["utterance"], "ir": c["parse"]}) for c in home_cases if c.get("parse")])


def compare(before: Path, after: Path) -> int:
    """Print the answers that differ; the number of them."""
    a, b = _lines(before), _lines(after)
    if [(r["home"], r["key"]) for r in a] != [(r["home"], r["key"]) for r in b]:
        print("the two dumps hold different utterances")
        return 1
    differ = [(x, y) for x, y in zip(a, b, strict=True) if x["answer"] != y["answer"]]
    for x, y in differ[:20]:
        print(f"{x['home']} {x['key']!r}\n  before {x['answer'][:400]}\n  after  {y['answer'][:400]}")
    digest = hashlib.sha256("".join(r["answer"] for r in a).encode()).hexdigest()[:16]
    print(f"{len(a)} answers on {len({r['home'] for r in a})} homes, {len(differ)} differ (before sha256 {digest})")
    return len(differ)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, nargs="?")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "dump_answers_embeddings.sqlite")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        sys.exit(1 if compare(*args.compare) else 0)
    if os.environ.get("PYTHONHASHSEED") != "0":
        parser.error("run with PYTHONHASHSEED=0: some answers depend on the order of sets")
    if args.out is None:
        parser.error("the output file is required")
    dump(args.out, args.cache)


if __name__ == "__main__":
    main()
