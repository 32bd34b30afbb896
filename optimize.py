"""tracerag command line: build, run, evaluate, tune and compile retrieval programs.

    tracerag evaluate commands --dataset smarthome --ir none --split test
    tracerag run commands --dataset smarthome/home_small --query "打开客厅的灯"
    tracerag tune commands --dataset smarthome --out out/commands.json
    tracerag compile commands --dataset smarthome --lm openai/gpt-4o-mini --optimizer bootstrap --out out/c.json

LM flags fall back to TRACERAG_LM / TRACERAG_API_BASE / TRACERAG_API_KEY; without an LM every
program runs its documented no-LM path.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import tracerag
from tracerag.config import Settings, configure, get_embedder

PROGRAMS = ("commands",)


def _common(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("models")
    g.add_argument("--lm", help="dspy/LiteLLM model string, e.g. openai/gpt-4o-mini (env TRACERAG_LM)")
    g.add_argument("--api-base", help="LM endpoint, e.g. http://localhost:8000/v1 (env TRACERAG_API_BASE)")
    g.add_argument("--api-key", help="LM key (env TRACERAG_API_KEY)")
    g.add_argument("--embedder", help="local | lexical | http://host:port/v1 (env TRACERAG_EMBEDDER)")
    g.add_argument("--embed-model", help="model name for an HTTP embedder (env TRACERAG_EMBED_MODEL)")
    g.add_argument("--cache-dir", help="embedding cache directory (env TRACERAG_CACHE_DIR)")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress details")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tracerag", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)

    ev = sub.add_parser("evaluate", help="score a program on a labelled dataset")
    ev.add_argument("program", choices=PROGRAMS)
    ev.add_argument("--dataset", required=True, help="dataset directory or bundled name (e.g. smarthome)")
    ev.add_argument("--ir", choices=("none", "gold", "lm"), help="how queries are parsed (default: lm with --lm, "
                    "else none)")
    ev.add_argument("--split", default="test", choices=("train", "dev", "test", "all"))
    ev.add_argument("--k", type=int, default=10)
    ev.add_argument("--program-file", help="a compiled/tuned artifact to evaluate instead of the defaults")
    ev.add_argument("--out", help="write the JSON report here")
    _common(ev)

    run = sub.add_parser("run", help="answer one query and print the result")
    run.add_argument("program", choices=PROGRAMS)
    run.add_argument("--dataset", required=True, help="home directory or bundled name")
    run.add_argument("--query", required=True)
    run.add_argument("--home", help="home name when the dataset holds several")
    run.add_argument("--program-file")
    run.add_argument("--arbitration", action="store_true", help="let the LM settle ambiguous bulk commands")
    _common(run)

    build = sub.add_parser("build", help="index a dataset (fills the embedding cache) and print its manifest")
    build.add_argument("program", choices=PROGRAMS)
    build.add_argument("--dataset", required=True)
    _common(build)

    tune = sub.add_parser("tune", help="search the retriever's parameters on the train split, no LM")
    tune.add_argument("program", choices=PROGRAMS)
    tune.add_argument("--dataset", required=True)
    tune.add_argument("--trials", type=int, default=60)
    tune.add_argument("--seed", type=int, default=0)
    tune.add_argument("--out", required=True, help="artifact to write (loadable with tracerag.load)")
    _common(tune)

    comp = sub.add_parser("compile", help="optimise the program's prompts with a DSPy optimizer")
    comp.add_argument("program", choices=PROGRAMS)
    comp.add_argument("--dataset", required=True)
    comp.add_argument("--optimizer", choices=("bootstrap", "mipro", "gepa"), default="bootstrap")
    comp.add_argument("--program-file", help="start from this artifact (e.g. the output of tune)")
    comp.add_argument("--max-train", type=int, default=0, help="use at most this many train examples (0 = all)")
    comp.add_argument("--out", required=True)
    _common(comp)
    return parser


def _configure(args) -> Settings:
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    return configure(lm=args.lm, embedder=args.embedder, api_base=args.api_base, api_key=args.api_key,
                     embed_model=args.embed_model, cache_dir=args.cache_dir)


def _program(args, ir_source: str, arbitration: bool = False):
    """A CommandRetrieval over the dataset's homes: from an artifact when given, else defaults."""
    from tracerag.datasets.smarthome import home_dirs, resolve_dataset
    from tracerag.programs.command_retrieval import CommandRetrieval, build_indexes

    dataset = resolve_dataset(args.dataset)
    if getattr(args, "program_file", None):
        program = tracerag.load(args.program_file, home=dataset)
        program.ir_source = ir_source
        return program
    return CommandRetrieval(build_indexes(home_dirs(dataset), get_embedder()), ir_source=ir_source,
                            arbitration=arbitration)


def cmd_evaluate(args) -> int:
    from tracerag.datasets.smarthome import load_dataset
    from tracerag.evaluation import evaluate_commands

    settings = _configure(args)
    ir = args.ir or ("lm" if settings.lm else "none")
    if ir == "lm" and not settings.lm:
        print("error: --ir lm needs an LM (--lm or TRACERAG_LM)", file=sys.stderr)
        return 2
    queries = load_dataset(args.dataset, None if args.split == "all" else args.split)
    program = _program(args, ir)
    report = evaluate_commands(program, queries, dataset=str(args.dataset), k=args.k)
    report["split"] = args.split
    print_report(report)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"report written to {args.out}")
    return 0


def print_report(report: dict) -> None:
    k = report["k"]
    cols = (f"recall@{k}", f"hit@{k}", "mrr", "bulk_precision", "clarification_rate", "n")
    print(f"{report['program']} on {report['dataset']} ({report.get('split', 'all')}, ir={report['ir']})")
    print(f"{'':28}" + "".join(f"{c:>20}" for c in cols))
    rows = [("ALL", report["metrics"])]
    for key, groups in report["breakdown"].items():
        rows += [(f"{key}={name}", s) for name, s in groups.items()]
    for name, s in rows:
        print(f"{name[:28]:28}" + "".join(f"{'-' if s.get(c) is None else s[c]:>20}" for c in cols))
    extras = {key: report["metrics"].get(key) for key in ("lm_calls_per_query", "latency_ms_p50", "latency_ms_p95")}
    print("  ".join(f"{key}={v}" for key, v in extras.items()))


def cmd_run(args) -> int:
    settings = _configure(args)
    program = _program(args, "lm" if settings.lm else "none", arbitration=args.arbitration)
    pred = program(query=args.query, home=args.home)
    out = {"ir": pred.ir.model_dump(), "parse_source": pred.parse_source, "lm_calls": pred.lm_calls,
           "candidates": [c.model_dump() for c in pred.candidates],
           "bulk": pred.bulk.model_dump() if pred.bulk else None}
    print(json.dumps(out, ensure_ascii=False, indent=1))
    return 0


def cmd_build(args) -> int:
    from tracerag.datasets.smarthome import home_dirs, resolve_dataset
    from tracerag.programs.command_retrieval import build_indexes

    _configure(args)
    for path in home_dirs(resolve_dataset(args.dataset)):
        started = time.perf_counter()
        index = next(iter(build_indexes([path], get_embedder()).values()))
        manifest = {**index.manifest, "seconds": round(time.perf_counter() - started, 3),
                    "warnings": len(index.home.warnings)}
        print(json.dumps(manifest, ensure_ascii=False))
        for warning in index.home.warnings:
            print(f"  warning: {warning}", file=sys.stderr)
    return 0


def cmd_tune(args) -> int:
    from tracerag.datasets.smarthome import load_dataset
    from tracerag.tuning import tune_index_params

    _configure(args)
    program = _program(args, "none")
    train = load_dataset(args.dataset, "train")
    dev = load_dataset(args.dataset, "dev")
    result = tune_index_params(program, train, dev, trials=args.trials, seed=args.seed)
    tracerag.save(program, args.out, dataset=str(args.dataset), metric="recall@10 x bulk_precision (ir=none)",
                  scores=result)
    print(json.dumps(result, indent=1))
    print(f"tuned program written to {args.out}")
    return 0


def cmd_compile(args) -> int:
    from tracerag.compiling import compile_commands

    settings = _configure(args)
    if not settings.lm:
        print("error: compile needs an LM (--lm or TRACERAG_LM)", file=sys.stderr)
        return 2
    program = _program(args, "lm")
    scores = compile_commands(program, args.dataset, args.optimizer, max_train=args.max_train)
    tracerag.save(scores.pop("program"), args.out, dataset=str(args.dataset), metric="recall@10", scores=scores)
    print(json.dumps(scores, indent=1))
    print(f"compiled program written to {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = {"evaluate": cmd_evaluate, "run": cmd_run, "build": cmd_build, "tune": cmd_tune,
               "compile": cmd_compile}[args.verb]
    try:
        return handler(args)
    except (FileNotFoundError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
