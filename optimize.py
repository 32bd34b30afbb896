"""tracerag command line: build, run, evaluate, tune and compile retrieval programs.

    tracerag evaluate commands --dataset smarthome --ir none --split test
    tracerag run commands --dataset smarthome/home_small --query "打开客厅的灯"
    tracerag tune commands --dataset smarthome --out out/commands.json
    tracerag compile commands --dataset smarthome --lm openai/gpt-4o-mini --optimizer bootstrap --out out/c.json
    tracerag build-bank --traces runs/ --bank bank/ [--append]
    tracerag evaluate experience --dataset experience --k 5 --split test
    tracerag run experience --bank bank/ --query "What did this receipt cost with tax?"
    tracerag ingest --docs docs.jsonl --bank chunks/
    tracerag evaluate rag --dataset pubmedqa --split test
    tracerag run agent --question "Does aspirin prevent stroke?" --lm openai/gpt-4o-mini
    tracerag serve --program commands=out/commands.json --program rag --port 8700
    tracerag evaluate agent --dataset pubmedqa --split test --limit 50 --jsonl out/agent.jsonl --traces out/runs

LM flags fall back to TRACERAG_LM / TRACERAG_API_BASE / TRACERAG_API_KEY; without an LM every
program runs its documented no-LM path.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import logging
import re
import sys
import tempfile
import time
from pathlib import Path

import tracerag  # cheap: its names load on first use, so --help never imports DSPy or the embedder

PROGRAMS = ("commands", "experience", "rag", "planner", "agent")


def _common(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("models")
    g.add_argument("--lm", help="dspy/LiteLLM model string, e.g. openai/gpt-4o-mini (env TRACERAG_LM)")
    g.add_argument("--api-base", help="LM endpoint, e.g. http://localhost:8000/v1 (env TRACERAG_API_BASE)")
    g.add_argument("--api-key", help="LM key (env TRACERAG_API_KEY, else the provider's, e.g. OPENAI_API_KEY)")
    g.add_argument("--allow-no-lm", action="store_true", help="run the no-LM path when --lm has no usable API key "
                   "(without it, such a command exits 2 naming the variable to set)")
    g.add_argument("--lm-timeout", type=float, help="seconds without a reply before an LM call fails and the "
                   "stage takes its no-LM fallback (default 30; env TRACERAG_LM_TIMEOUT)")
    g.add_argument("--lm-retries", type=int, help="retries of a transient LM failure: 5xx, connection, timeout "
                   "(default 2; env TRACERAG_LM_RETRIES)")
    g.add_argument("--lm-fault-budget", type=float, help="seconds an evaluation's failing LM calls may take, plus "
                   "10%% of its time; then the rest runs the no-LM path (default 40; inf: none; env "
                   "TRACERAG_LM_FAULT_BUDGET)")
    g.add_argument("--no-cache", action="store_true", help="send every LM call to the endpoint: DSPy's response "
                   "cache is neither read nor written (it is keyed by model string and prompt, not endpoint, so an "
                   "evaluation could otherwise score a reply cached from another endpoint)")
    g.add_argument("--embedder", help="local | lexical | http://host:port/v1 (env TRACERAG_EMBEDDER)")
    g.add_argument("--embed-model", help="model name for an HTTP embedder (env TRACERAG_EMBED_MODEL)")
    g.add_argument("--cache-dir", help="embedding cache directory (env TRACERAG_CACHE_DIR)")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress details")


class _Parser(argparse.ArgumentParser):
    """argparse, except that a mistyped command or program name is one line with the closest match
    instead of the whole usage."""

    def error(self, message: str):
        choice = re.match(r"argument (\S+): invalid choice: '(.*?)' \(choose from (.*)\)$", message)
        if choice is None:
            super().error(message)
        name, given, names = choice.group(1), choice.group(2), re.findall(r"'([^']*)'", choice.group(3))
        what = ("program" if name == "program" else f"{name} value" if name.startswith("-") else "command")
        close = difflib.get_close_matches(given, names, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"choose from {', '.join(names)}"
        self.exit(2, f"{self.prog}: error: unknown {what} {given!r}; {hint}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tracerag", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {tracerag.__version__}")
    sub = parser.add_subparsers(dest="verb", required=True)

    ev = sub.add_parser("evaluate", help="score a program on a labelled dataset")
    ev.add_argument("program", choices=PROGRAMS)
    ev.add_argument("--dataset", required=True, help="dataset directory or bundled name (e.g. smarthome)")
    ev.add_argument("--ir", choices=("none", "gold", "lm"), help="how queries are parsed (default: lm with --lm, "
                    "else none)")
    ev.add_argument("--split", default="test", choices=("train", "dev", "test", "all"))
    ev.add_argument("--k", type=int, help="cut-off for the metrics (default: 10 for commands, 5 for experience)")
    ev.add_argument("--program-file", help="a compiled/tuned artifact to evaluate instead of the defaults")
    ev.add_argument("--out", help="write the JSON report here")
    ev.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page: summary, breakdowns, "
                    "every row with misses first (the JSON goes beside it unless --out says where)")
    ev.add_argument("--limit", type=int, default=0, help="agent only: score only the first N questions (0 = all)")
    _max_skipped(ev, 0.0)
    _threads_flag(ev, "examples scored at once (rows stay in the dataset's order; default 1)")
    _experience_flags(ev)
    _agent_flags(ev)
    _common(ev)

    run = sub.add_parser("run", help="answer one query and print the result")
    run.add_argument("program", choices=("commands", "experience", "rag", "agent"))
    run.add_argument("--dataset", help="commands: home directory or bundled name; experience: traces dataset "
                     "(used when --bank is not given)")
    run.add_argument("--query", "--question", dest="query", required=True,
                     help="the utterance (commands), the new task's question (experience), the question (rag, agent)")
    run.add_argument("--caption", help="experience: a description of the task's images")
    run.add_argument("--sub-task", help="experience: the task type, e.g. 'read a value from a bar chart'")
    run.add_argument("--image", action="append", default=[], help="experience: an image path or URL (repeatable)")
    run.add_argument("--home", help="home name when the dataset holds several")
    run.add_argument("--program-file")
    run.add_argument("--arbitration", action="store_true", help="let the LM settle ambiguous bulk commands")
    _experience_flags(run)
    _agent_flags(run)
    _common(run)
    from tracerag.retrievers.store_cli import add_store_commands  # argparse only
    from tracerag.smarthome.cli import add_execute_arguments, add_home_commands

    add_store_commands(sub)

    add_execute_arguments(run)
    add_home_commands(sub)

    bank = sub.add_parser("build-bank", help="index solved traces into an experience bank (atomic; --append adds "
                          "only new traces)")
    bank.add_argument("--traces", required=True, help="directory holding tasks/<task_id>/trace.json")
    _bank_or_store(bank, "bank directory to create or grow")
    mode = bank.add_mutually_exclusive_group()
    mode.add_argument("--append", action="store_true", help="embed only traces not in the bank yet")
    mode.add_argument("--rebuild", action="store_true", help="replace an existing bank")
    bank.add_argument("--no-captions", action="store_true", help="do not caption images even with an LM configured")
    bank.add_argument("--caption-concurrency", type=int, default=8)
    _max_skipped(bank, 0.05)
    _common(bank)

    ingest = sub.add_parser("ingest", help="chunk and embed documents into a chunk bank (unchanged ones are free)")
    ingest.add_argument("--docs", required=True, help='JSONL, one document a line: {"id", "text" | "contexts", ...}')
    _bank_or_store(ingest, "chunk bank directory to create or grow")
    ingest.add_argument("--size", type=int, default=500, help="chunk size in characters (default 500)")
    ingest.add_argument("--overlap", type=int, default=100, help="overlap in characters, whole sentences")
    _common(ingest)

    build = sub.add_parser("build", help="index a dataset (fills the embedding cache) and print its manifest")
    build.add_argument("program", choices=("commands",))
    build.add_argument("--dataset", required=True)
    _common(build)

    tune = sub.add_parser("tune", help="search the retriever's parameters on the train split, no LM")
    tune.add_argument("program", choices=("commands",))
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
    comp.add_argument("--max-metric-calls", type=int, help="gepa: rollout budget (default: its light preset; "
                      "at least 2 x dev examples + 6, one iteration)")
    _threads_flag(comp, "examples the dev scoring, mipro and gepa run at once (default 1)")
    comp.add_argument("--out", required=True)
    g = comp.add_argument_group("prompt LM (mipro, gepa)")
    g.add_argument("--prompt-lm", help="the model that proposes mipro's instructions and gepa's reflections, "
                   "e.g. a stronger one than --lm, which still runs the program (default: --lm)")
    g.add_argument("--prompt-api-base", help="its endpoint (default: the --lm endpoint)")
    g.add_argument("--prompt-api-key", help="its key (default: --lm's key on the --lm endpoint, else the "
                   "provider's environment variable)")
    _experience_flags(comp)
    _agent_flags(comp)
    _common(comp)

    serve = sub.add_parser("serve", help="serve programs over HTTP (JSON endpoints; all five on their bundled "
                           "defaults unless --program is given)")
    serve.add_argument("--program", action="append", default=[], metavar="NAME[=ARTIFACT]",
                       help=f"serve this program ({', '.join(PROGRAMS)}), from a compiled artifact when given; "
                            "repeatable (default: all five on their bundled defaults)")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1); any other than "
                       "loopback needs TRACERAG_SERVE_TOKEN set, or --insecure-no-token")
    serve.add_argument("--port", type=int, default=8700, help="port (default 8700)")
    serve.add_argument("--insecure-no-token", action="store_true", help="serve a non-loopback --host without a "
                       "token: anyone who reaches the port may call every program")
    serve.add_argument("--allowed-host", action="append", default=[], metavar="NAME[:PORT]",
                       help="a name clients reach the service by (its Host header; a browser page's Origin), besides "
                            "localhost, 127.0.0.1, [::1] and --host; repeatable, e.g. the reverse proxy's name")
    serve.add_argument("--dataset", dest="homes", help="commands: home directory or bundled name (default: the "
                       "artifact's, else smarthome)")
    serve.add_argument("--arbitration", action="store_true", help="commands: let the LM settle ambiguous bulk "
                       "commands")
    serve.add_argument("--max-body", type=_positive_int, default=1 << 20, metavar="BYTES",
                       help="largest request body accepted (default 1 MiB); a larger one gets 413")
    serve.add_argument("--concurrency", type=_positive_int, default=8, metavar="N",
                       help="program calls running at once (default 8); further requests wait their turn")
    serve.add_argument("--calls", choices=("thread", "async"), default="thread",
                       help="run each call as program(...) in a worker thread (default), or await program.acall(...)")
    serve.add_argument("--header-timeout", type=_positive_float, default=10.0, metavar="SECONDS",
                       help="a request line and headers not complete this long after the connection opens (or the "
                            "previous answer) get 408 and the connection is closed (default 10)")
    serve.add_argument("--body-timeout", type=_positive_float, default=30.0, metavar="SECONDS",
                       help="a body not complete this long after its headers gets 408 and the connection is closed "
                            "(default 30)")
    serve.add_argument("--keep-alive", type=_positive_float, default=5.0, metavar="SECONDS",
                       help="an idle keep-alive connection is closed after this long (default 5)")
    serve.add_argument("--max-pending", type=_positive_int, default=256, metavar="N",
                       help="program calls running or waiting for a --concurrency slot; one beyond it gets 503 at "
                            "once (default 256)")
    serve.add_argument("--trace", choices=("otel", "mlflow"), help="trace each request with the program's spans: "
                       "otel (OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT; extra tracerag[otel]) or mlflow "
                       "(mlflow.dspy.autolog() to MLFLOW_TRACKING_URI; extra tracerag[mlflow])")
    serve.add_argument("--metrics", action="store_true", help="offer GET /metrics (Prometheus text: requests, "
                       "latency, LM fallbacks, in flight), behind the token like the programs")
    _experience_flags(serve)
    _agent_flags(serve, exports=False)
    _common(serve)
    return parser


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value


def _threads_flag(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--num-threads", type=_positive_int, default=1, metavar="N",
                   help=f"threads for the LM calls: {what}")


def _max_skipped(p: argparse.ArgumentParser, default: float) -> None:
    p.add_argument("--max-skipped", type=_share, default=default, metavar="SHARE",
                   help=f"fail when more than this share of the data's items is skipped as unreadable "
                        f"(0..1, default {default:g}); nothing usable left always fails")


def _share(text: str) -> float:
    value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share between 0 and 1 (or 0% and 100%)")
    return value


def _agent_flags(p: argparse.ArgumentParser, exports: bool = True) -> None:
    g = p.add_argument_group("agent")
    g.add_argument("--tools", action="append", default=[], metavar="SPEC",
                   help="MCP tool server: local (default) | http(s)://… (streamable HTTP) | a command line (stdio); "
                        "repeatable")
    g.add_argument("--pubmed", choices=("local", "eutils"), default="local",
                   help="pubmed_search over the bundled abstracts (default) or NCBI E-utilities (needs internet)")
    g.add_argument("--browse-root", help="directory browse_webpage may read (default: none)")
    g.add_argument("--max-tool-calls", type=int, help="total tool calls per question (default 6)")
    if not exports:
        p.set_defaults(jsonl=None, traces=None)
        return
    g.add_argument("--jsonl", help="write the trajectories here, one JSON object a line")
    g.add_argument("--traces", help="write successful runs as <dir>/tasks/<id>/trace.json (experience traces)")


def _bank_or_store(p: argparse.ArgumentParser, bank_help: str) -> None:
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--bank", help=bank_help)
    where.add_argument("--store", metavar="URI", help="a store URI instead (milvus:./file.db, milvus://host:19530, "
                       "or a directory): built in a local bank first, then only new or changed rows are written")


def _into_store(args, build) -> tuple[object, object]:
    """Run ``build(bank_dir)`` into ``--bank``; with ``--store``, into a staging bank whose rows are then
    copied into the store (unchanged rows are skipped, so a rerun writes only what is new). Returns
    (what build returned, the copy report or None)."""
    if args.bank or not str(args.store).startswith("milvus"):
        return build(Path(args.bank or args.store)), None
    from tracerag.retrievers.store_copy import copy_store

    with tempfile.TemporaryDirectory(prefix="tracerag-staging-") as staging:
        built = build(Path(staging) / "bank")
        copied = copy_store(Path(staging) / "bank", args.store, progress=sys.stderr.isatty())
    print(copied.summary(), file=sys.stderr)
    if not copied.ok:
        raise ValueError(f"{args.store}: the copy did not verify")
    return built, copied


def _experience_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("experience")
    g.add_argument("--bank", help="experience bank directory (default: built from the dataset's traces)")
    g.add_argument("--store", metavar="URI", help="experience, rag and planner: the vector store to search — a "
                   "bank directory, milvus:./file.db (Milvus Lite), milvus://host:19530 or milvus+https://host "
                   "(token in TRACERAG_MILVUS_TOKEN); an empty store is filled from the dataset / bundled corpus / "
                   "dataset's templates first; planner: templates are searched there instead of handed over")
    g.add_argument("--reranker", help="local (default) | none | http://host:port/v1 rerank service")
    g.add_argument("--rerank-model", help="model name for a rerank service")
    g.add_argument("--rounds", type=int, default=1, help="max retrieval rounds (default 1)")
    g.add_argument("--top-n", type=int, default=5, help="candidates handed to the summary (default 5)")
    g.add_argument("--no-rewrite", dest="rewrite", action="store_false",
                   help="search with the raw task even with an LM")
    g.add_argument("--max-rounds", type=int, default=2, help="rag: retrieval rounds (default 2)")
    g.add_argument("--alce", action="store_true", help="rag: LM-judged citation recall/precision (extra calls)")


def _configure(args) -> tracerag.config.Settings:
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    # a command names its whole setup: the embedder from its flag, else the environment, else the default
    from tracerag.config import Settings, configure

    if getattr(args, "no_cache", False):
        import dspy

        dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    settings = configure(lm=args.lm, embedder=Settings.resolve(embedder=args.embedder).embedder,
                         api_base=args.api_base, api_key=args.api_key, embed_model=args.embed_model,
                         cache_dir=args.cache_dir, timeout=args.lm_timeout, retries=args.lm_retries,
                         fault_budget=getattr(args, "lm_fault_budget", None))
    return _require_key(args, settings)


def _require_key(args, settings):
    """An LM that needs an API key and has none ends the command with one line naming the variable to set
    (``ValueError``: exit 2), or with ``--allow-no-lm`` runs the no-LM path after one warning line."""
    import dspy

    from tracerag.config import missing_key

    names = missing_key(dspy.settings.lm) if settings.lm else []
    if not names:
        return settings
    line = f"the LM {settings.lm} has no API key: set {' or '.join(names)}, or pass --api-key"
    if not getattr(args, "allow_no_lm", False):
        raise ValueError(f"{line} (--allow-no-lm runs without the LM)")
    print(f"warning: {line}; running without the LM (--allow-no-lm)", file=sys.stderr)
    dspy.configure(lm=None)
    return dataclasses.replace(settings, lm=None)


# Builder options read from flags of another name
_FLAG_OF = {"artifact": "program_file", "homes": "dataset", "tool_embedder": "embedder"}


def _options(name: str, args) -> dict:
    """The options the registry's builder of ``name`` takes from these flags (a flag not given keeps the
    builder's default)."""
    import inspect

    options = {}
    for param in inspect.signature(tracerag.registry.entry(name).build).parameters:
        if param == "embedder":  # configured by the command (_configure), never passed as a flag's string
            continue
        value = getattr(args, param, None)
        if value is None and param in _FLAG_OF:
            value = getattr(args, _FLAG_OF[param], None)
        if value is not None:
            options[param] = value
    return options


def _build(name: str, args, **given):
    """The registry's program ``name`` for these flags, then ``given``."""
    return tracerag.registry.build(name, **{**_options(name, args), **given})


def cmd_evaluate(args) -> int:
    if args.html:
        from tracerag.report_html import evaluate_to_html

        return evaluate_to_html(args, cmd_evaluate)
    from tracerag.datasets.smarthome import load_dataset
    from tracerag.evaluation import evaluate_commands
    from tracerag.retrievers.read_report import DataSetShrunk, ReadReport

    if args.limit and args.program != "agent":
        print(f"error: --limit applies to evaluate agent only; {args.program} scores the whole --split",
              file=sys.stderr)
        return 2
    settings = _configure(args)
    if args.program == "experience":
        return _evaluate_experience(args, settings)
    if args.program == "rag":
        return _evaluate_rag(args)
    if args.program == "planner":
        return _evaluate_planner(args)
    if args.program == "agent":
        return _evaluate_agent(args)
    args.k = args.k or 10
    ir = args.ir or ("lm" if settings.lm else "none")
    if ir == "lm" and not settings.lm:
        print("error: --ir lm needs an LM (--lm or TRACERAG_LM)", file=sys.stderr)
        return 2
    read = ReadReport("queries")
    queries = load_dataset(args.dataset, None if args.split == "all" else args.split, report=read)
    program = _build("commands", args, ir_source=ir)
    _print_reading(f"{args.dataset} queries.jsonl", read, args.max_skipped)
    if not any(queries.values()):
        raise DataSetShrunk(f"{args.dataset}: no labelled queries in the {args.split} split (queries.jsonl)")
    report = evaluate_commands(program, queries, dataset=str(args.dataset), k=args.k, num_threads=args.num_threads)
    report["split"] = args.split
    return _finish_report(report, args.out, ("bulk_precision", "clarification_rate"))


def _print_reading(source, read, max_skipped: float | None = None) -> None:
    """What reading a data file did, on stderr (counts, then each skipped item's line); with
    ``max_skipped``, fail in one line when more than that share was skipped or nothing is usable."""
    print(f"{source}: {read.summary()}", file=sys.stderr)
    for problem in read.problems:
        print(f"  skipped: {problem}", file=sys.stderr)
    if max_skipped is not None:
        read.check(max_skipped, str(source))


def _finish_report(report: dict, out: str | None, extra_cols: tuple[str, ...]) -> int:
    print_report(report, extra_cols)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"report written to {out}")
    return 0


def print_report(report: dict, extra_cols: tuple[str, ...] = ()) -> None:
    k = report["k"]
    cols = [c for c in (f"recall@{k}", f"hit@{k}", "mrr", *extra_cols, "n") if c in report["metrics"]]
    how = f", ir={report['ir']}" if "ir" in report else ""
    metrics = report["metrics"]
    fell_back = round(metrics.get("lm_fallback_rate", 0.0) * report["n"])
    stages = ", ".join(f"{stage} {n}" for stage, n in metrics.get("lm_fallbacks", {}).items())
    fallbacks = f"; {fell_back} of {report['n']} fell back to the no-LM path ({stages})" if fell_back else ""
    overruled = round(metrics.get("lm_overruled_rate", 0.0) * report["n"])
    checks = ", ".join(f"{check} {n}" for check, n in metrics.get("lm_overruled", {}).items())
    fallbacks += f"; {overruled} LM parse(s) overruled by the utterance ({checks})" if overruled else ""
    print(f"{report['program']} on {report['dataset']} ({report.get('split', 'all')}{how}){fallbacks}")
    print(f"{'':28}" + "".join(f"{c:>22}" for c in cols))
    rows = [("ALL", report["metrics"])]
    for key, groups in report["breakdown"].items():
        rows += [(f"{key}={name}", s) for name, s in groups.items()]
    for name, s in rows:
        print(f"{name[:28]:28}" + "".join(f"{'-' if s.get(c) is None else s[c]:>22}" for c in cols))
    extras = {key: report["metrics"][key] for key in ("lm_calls_per_query", "lm_calls_per_question", "lm_calls_max",
                                                      "lm_call_budget", "latency_ms_p50", "latency_ms_p95")
              if key in report["metrics"]}
    print("  ".join(f"{key}={v}" for key, v in extras.items()))


def cmd_run(args) -> int:
    _configure(args)
    if args.program == "experience":
        return _run_experience(args)
    if args.program == "rag":
        return _run_rag(args)
    if args.program == "agent":
        return _run_agent(args)
    if not args.dataset:
        print("error: run commands needs --dataset", file=sys.stderr)
        return 2
    program = _build("commands", args)
    pred = program(query=args.query, home=args.home)
    out = {"ir": pred.ir.model_dump(), "parse_source": pred.parse_source, "hint": pred.hint,
           "lm_fallbacks": pred.lm_fallbacks, "lm_overruled": pred.lm_overruled, "lm_calls": pred.lm_calls,
           "lm_parse": pred.lm_parse.model_dump() if pred.lm_parse is not None else None,
           "candidates": [c.model_dump() for c in pred.candidates],
           "bulk": pred.bulk.model_dump() if pred.bulk else None,
           "withheld": [w.model_dump() for w in pred.withheld]}
    from tracerag.smarthome.cli import execute_from_args

    execution, code = execute_from_args(args, pred, home=program.index_for(args.home).home)
    if execution is not None:
        out["execution"] = execution
    print(json.dumps(out, ensure_ascii=False, indent=1))
    return code


def cmd_build(args) -> int:
    from tracerag.datasets.smarthome import home_dirs, resolve_dataset
    from tracerag.programs.command_retrieval import build_indexes

    _configure(args)
    for path in home_dirs(resolve_dataset(args.dataset)):
        started = time.perf_counter()
        index = next(iter(build_indexes([path], tracerag.get_embedder()).values()))
        manifest = {**index.manifest, "seconds": round(time.perf_counter() - started, 3),
                    "warnings": len(index.home.warnings)}
        print(json.dumps(manifest, ensure_ascii=False))
        print(f"{path}: {index.home.report.summary()}", file=sys.stderr)
        for warning in index.home.warnings:
            print(f"  warning: {warning}", file=sys.stderr)
    return 0


def cmd_tune(args) -> int:
    from tracerag.datasets.smarthome import load_dataset
    from tracerag.tuning import tune_index_params

    _configure(args)
    program = _build("commands", args, ir_source="none")
    train = load_dataset(args.dataset, "train")
    dev = load_dataset(args.dataset, "dev")
    result = tune_index_params(program, train, dev, trials=args.trials, seed=args.seed)
    tracerag.save(program, args.out, dataset=str(args.dataset), metric="recall@10 x bulk_precision (ir=none)",
                  scores=result)
    print(json.dumps(result, indent=1))
    if not result["changed"]:
        print(f"no change: none of {args.trials} trials beat the starting parameters on train "
              f"({result['train_before']}); {args.out} holds them as they were", file=sys.stderr)
    print(f"tuned program written to {args.out}")
    return 0


def _optimizer_options(args) -> dict:
    """What every compile takes from the flags: GEPA's budget, threads, and the prompt LM (built like --lm,
    with the same timeout and retries, on the --lm endpoint unless --prompt-api-base names another)."""
    prompt_lm = None
    if args.prompt_lm:
        from tracerag.config import Settings, make_lm

        lm_settings = Settings.resolve(api_base=args.api_base, api_key=args.api_key)
        own_base = args.prompt_api_base is not None
        prompt_lm = make_lm(args.prompt_lm, args.prompt_api_base if own_base else lm_settings.api_base,
                            args.prompt_api_key or (None if own_base else lm_settings.api_key))
    return {"max_metric_calls": args.max_metric_calls, "num_threads": args.num_threads, "prompt_lm": prompt_lm}


def cmd_compile(args) -> int:
    from tracerag.compiling import compile_commands, preflight

    # the flags first, before building anything; the GEPA budget is checked once the dev set is read
    preflight(args.optimizer, prompt_lm=args.prompt_lm)
    settings = _configure(args)
    if not settings.lm:
        print("error: compile needs an LM (--lm or TRACERAG_LM)", file=sys.stderr)
        return 2
    if args.program == "experience":
        return _compile_experience(args)
    if args.program == "rag":
        return _compile_rag(args)
    if args.program == "planner":
        return _compile_planner(args)
    if args.program == "agent":
        return _compile_agent(args)
    program = _build("commands", args, ir_source="lm")
    scores = compile_commands(program, args.dataset, args.optimizer, max_train=args.max_train,
                              **_optimizer_options(args))
    tracerag.save(scores.pop("program"), args.out, dataset=str(args.dataset), metric="parse_recall@10",
                  scores=scores)
    print(json.dumps(scores, indent=1))
    print(f"compiled program written to {args.out}")
    return 0


# -- experience ------------------------------------------------------------------------------------

def _experience_examples(dataset: Path, split: str, max_skipped: float = 0.0, report=None, task_ids=None) -> list:
    from tracerag.datasets.experience import load_experience_queries

    queries = load_experience_queries(dataset, None if split == "all" else split, max_skipped=max_skipped,
                                      report=report, task_ids=task_ids)
    return _without_missing_images([q.to_example(dataset) for q in queries], dataset)


def _without_missing_images(examples: list, dataset: Path) -> list:
    """Drop the image files a query names that are not on disk, saying so in one line (the bundled set ships
    captions, not images; the program would drop each one anyway, with a warning per image)."""
    missing = 0
    for ex in examples:
        kept = [i for i in ex.images if re.match(r"^(https?|gs|data):", i) or Path(i).is_file()]
        missing += len(ex.images) - len(kept)
        ex.images = kept
    if missing:
        print(f"{dataset}: {missing} image file(s) named in queries.jsonl are not on disk; those queries run "
              "on their question and caption", file=sys.stderr)
    return examples


def _evaluate_experience(args, settings: tracerag.config.Settings) -> int:
    from tracerag.datasets.smarthome import resolve_dataset
    from tracerag.evaluation import evaluate_experience
    from tracerag.retrievers.read_report import ReadReport

    k = args.k or 5
    dataset = resolve_dataset(args.dataset)
    read = ReadReport("queries")
    program = _build("experience", args, top_n=max(args.top_n, k))
    examples = _experience_examples(dataset, args.split, args.max_skipped, read, task_ids=program.stored_ids())
    _print_reading(dataset / "queries.jsonl", read)
    if settings.lm:  # the usefulness judge compares against how a relevant task was really solved
        for ex in examples:
            stored = program.stored_metadata(ex.relevant_task_ids)
            first = next((t for t in ex.relevant_task_ids if t in stored), None)
            ex.reference_strategy = stored[first].get("reasoning") if first is not None else None
    report = evaluate_experience(program, examples, dataset=str(args.dataset), k=k, judge=bool(settings.lm),
                                 num_threads=args.num_threads)
    report["split"] = args.split
    return _finish_report(report, args.out, ("used_precision", "usefulness"))


def _run_experience(args) -> int:
    program = _build("experience", args)
    pred = program(question=args.query, images=args.image, caption=args.caption, sub_task=args.sub_task)
    out = {key: pred[key] for key in ("experience", "task_ids", "used_task_ids", "queries", "rounds", "lm_calls",
                                      "hint", "lm_fallbacks", "error")}
    print(json.dumps(out, ensure_ascii=False, indent=1))
    if pred.section:
        print("\n" + pred.section)
    return 0


def cmd_build_bank(args) -> int:
    from tracerag.programs.captioning import make_captioner
    from tracerag.retrievers.experience_bank import build_experience_bank

    _configure(args)
    captioner = None if args.no_captions else make_captioner(args.caption_concurrency)
    report, copied = _into_store(args, lambda bank: build_experience_bank(
        args.traces, bank, tracerag.get_embedder(), append=args.append, rebuild=args.rebuild, captioner=captioner,
        progress=sys.stderr.isatty(), max_skipped=args.max_skipped, warn=False))
    print(f"{args.traces}: {report.read_summary}", file=sys.stderr)
    for problem in report.corrupt_skipped:
        print(f"  skipped: {problem}", file=sys.stderr)
    out = {**report.to_dict(), "corrupt_skipped": len(report.corrupt_skipped)}
    print(json.dumps(out | ({"store": copied.to_dict()} if copied else {}), ensure_ascii=False))
    return 0


def _compile_experience(args) -> int:
    from tracerag.compiling import compile_experience
    from tracerag.datasets.smarthome import resolve_dataset

    dataset = resolve_dataset(args.dataset)
    out = Path(args.out)
    program = _build("experience", args, bank_dir=out.with_name(out.name + ".bank"))
    trainset = _experience_examples(dataset, "train")
    scores = compile_experience(program, trainset[: args.max_train] if args.max_train else trainset,
                                _experience_examples(dataset, "dev"), args.optimizer, **_optimizer_options(args))
    tracerag.save(scores.pop("program"), out, dataset=str(args.dataset), metric="experience_score", scores=scores)
    print(json.dumps(scores, indent=1))
    print(f"compiled program written to {out} (store: {program.store.describe().uri})")
    return 0


# -- rag -------------------------------------------------------------------------------------------


def _rag_examples(dataset: str, split: str, max_skipped: float = 0.0, pmids=None) -> list:
    """The questions as examples; prints what reading them did and fails when too many were skipped."""
    from tracerag.datasets.pubmedqa import load_pubmedqa_questions, pubmedqa_questions_path
    from tracerag.retrievers.read_report import ReadReport

    read = ReadReport("questions")
    questions = load_pubmedqa_questions(dataset, None if split == "all" else split, report=read, pmids=pmids)
    _print_reading(pubmedqa_questions_path(dataset), read, max_skipped)
    return [q.to_example() for q in questions]


def _evaluate_rag(args) -> int:
    from tracerag.datasets.pubmedqa import corpus_pmids
    from tracerag.evaluation import evaluate_rag

    k = args.k or 10
    program = _build("rag", args, k=k)
    examples = _rag_examples(args.dataset, args.split, args.max_skipped, corpus_pmids(program.retriever))
    report = evaluate_rag(program, examples, dataset=str(args.dataset), k=k, alce=args.alce,
                          num_threads=args.num_threads)
    report["split"] = args.split
    return _finish_report(report, args.out, ("accuracy", "grounded_rate", "citation_validity", "citation_coverage",
                                             "citation_recall", "citation_precision"))


def _run_rag(args) -> int:
    pred = _build("rag", args)(question=args.query)
    keys = ("answer", "verdict", "grounded", "hint", "lm_fallbacks", "cited_ids", "invalid_cited_ids", "kept_ids",
            "retrieved_ids",
            "unsupported_claims", "rounds", "lm_calls")
    print(json.dumps({key: pred[key] for key in keys}, ensure_ascii=False, indent=1))
    return 0


def cmd_ingest(args) -> int:
    from tracerag.retrievers.corpus import ingest_documents

    _configure(args)
    report, copied = _into_store(args, lambda bank: ingest_documents(
        args.docs, bank, tracerag.get_embedder(), size=args.size, overlap=args.overlap, progress=sys.stderr.isatty()))
    _print_reading(args.docs, report.reading)
    for doc in report.changed_skipped:
        print(f"  changed since it was ingested, skipped (rebuild the bank to update it): {doc}", file=sys.stderr)
    print(json.dumps(report.to_dict() | ({"store": copied.to_dict()} if copied else {}), ensure_ascii=False))
    return 0


def _compile_rag(args) -> int:
    from tracerag.compiling import compile_rag

    program = _build("rag", args)
    trainset = _rag_examples(args.dataset, "train")
    scores = compile_rag(program, trainset[: args.max_train] if args.max_train else trainset,
                         _rag_examples(args.dataset, "dev"), args.optimizer, **_optimizer_options(args))
    tracerag.save(scores.pop("program"), args.out, dataset=str(args.dataset), metric="rag_score", scores=scores)
    print(json.dumps(scores, indent=1))
    print(f"compiled program written to {args.out} (store: {program.retriever.describe().uri})")
    return 0


# -- planner ---------------------------------------------------------------------------------------


def _planner_examples(dataset: str, split: str, max_skipped: float = 0.0, program=None) -> list:
    """The cases as examples; prints what reading them did and fails when too many were skipped. For a
    ``program`` that retrieves its templates, the cases' templates are not handed over (only the labels stay)."""
    from tracerag.datasets.planner import CASES_FILE, load_planner_cases
    from tracerag.datasets.smarthome import resolve_dataset
    from tracerag.retrievers.read_report import ReadReport

    read = ReadReport("cases")
    cases = load_planner_cases(dataset, None if split == "all" else split, report=read)
    _print_reading(resolve_dataset(dataset) / CASES_FILE, read, max_skipped)
    examples = [c.to_example() for c in cases]
    if getattr(program, "retrieve_templates", None) is not None:
        examples = [ex.with_inputs("requirements", "bullets") for ex in examples]
    return examples


def _evaluate_planner(args) -> int:
    from tracerag.evaluation import evaluate_planner

    program = _build("planner", args)
    report = evaluate_planner(program, _planner_examples(args.dataset, args.split, args.max_skipped, program),
                              dataset=str(args.dataset), num_threads=args.num_threads)
    report["split"] = args.split
    code = _finish_report(report, args.out, ("used_recall", "used_precision", "used_f1", "citation_validity",
                                             "citation_coverage", "hallucinated_per_plan", "score"))
    if not report["metrics"]["plans"]:
        why = "no LM configured" if not report["metrics"]["lm_calls_per_query"] else "every LM call fell back"
        print(f"note: no plan was made ({why}), so every planner metric is 0: the planner needs an LM "
              "(--lm or TRACERAG_LM)", file=sys.stderr)
    return code


def _compile_planner(args) -> int:
    from tracerag.compiling import compile_planner

    program = _build("planner", args)
    trainset = _planner_examples(args.dataset, "train", program=program)
    scores = compile_planner(program, trainset[: args.max_train] if args.max_train else trainset,
                             _planner_examples(args.dataset, "dev", program=program), args.optimizer,
                             **_optimizer_options(args))
    tracerag.save(scores.pop("program"), args.out, dataset=str(args.dataset), metric="planner_score", scores=scores)
    print(json.dumps(scores, indent=1))
    print(f"compiled program written to {args.out}")
    return 0


# -- agent -----------------------------------------------------------------------------------------


def _export_trajectories(args, trajectories: dict, sub_task: str, correct: dict | None = None) -> None:
    """--jsonl: every trajectory; --traces: the successful ones (and, with gold, the correct) as experience
    traces."""
    from tracerag.tools.trajectory import write_jsonl, write_traces

    if args.jsonl:
        n = write_jsonl(trajectories.items(), args.jsonl)
        print(f"{n} trajectories written to {args.jsonl}")
    if args.traces:
        traces = []
        for task_id, t in trajectories.items():
            ok = t.succeeded and (correct is None or correct.get(task_id) is not False)
            if ok:
                traces.append(t.to_trace(f"agent-{task_id}", is_correct=True, sub_task=sub_task))
        n = write_traces(traces, args.traces)
        print(f"{n} successful runs written to {args.traces}/tasks/ (index them with tracerag build-bank --append)")


def _agent_examples(args, split: str) -> list:
    examples = _rag_examples(args.dataset, split, getattr(args, "max_skipped", 0.0))
    return examples[: args.limit] if getattr(args, "limit", 0) else examples


def _run_agent(args) -> int:
    import hashlib

    program = _build("agent", args)
    try:
        pred = program(question=args.query)
    finally:
        program.toolbox.close()
    t = pred.trajectory
    print(t.interleaved_text)
    summary = {"stop_reason": t.stop_reason, "tool_calls": t.total_tool_calls, "tools_used": t.tools_used,
               "ids_cited": t.ids_cited, "invalid_citations": t.invalid_citations,
               "hallucinated_outputs": t.hallucinated_outputs, "steps": t.steps, "hint": pred.hint,
               "lm_fallbacks": pred.lm_fallbacks}
    print(json.dumps(summary, ensure_ascii=False))
    _export_trajectories(args, {hashlib.sha1(args.query.encode()).hexdigest()[:12]: t},
                         args.sub_task or program.config.sub_task)
    return 0


def _evaluate_agent(args) -> int:
    from tracerag.evaluation import evaluate_agent

    program = _build("agent", args)
    try:
        report = evaluate_agent(program, _agent_examples(args, args.split), dataset=str(args.dataset),
                                num_threads=args.num_threads)
    finally:
        program.toolbox.close()
    report["split"] = args.split
    trajectories = report.pop("trajectories")
    report["per_query"] = [{**row, "trajectory": trajectories[row["id"]].model_dump()} for row in report["per_query"]]
    code = _finish_report(report, args.out, ("accuracy", "citation_validity", "citation_coverage", "gold_found",
                                             "tool_calls", "hallucinated_outputs", "answered_rate"))
    _export_trajectories(args, trajectories, program.config.sub_task,
                         {row["id"]: row["accuracy"] != 0.0 for row in report["per_query"]})
    return code


def _compile_agent(args) -> int:
    from tracerag.compiling import compile_agent

    program = _build("agent", args)
    try:
        trainset = _rag_examples(args.dataset, "train")
        scores = compile_agent(program, trainset[: args.max_train] if args.max_train else trainset,
                               _agent_examples(args, "dev"), args.optimizer, **_optimizer_options(args))
    finally:
        program.toolbox.close()
    tracerag.save(scores.pop("program"), args.out, dataset=str(args.dataset), metric="agent_score", scores=scores)
    print(json.dumps(scores, indent=1))
    print(f"compiled program written to {args.out}")
    return 0


# -- serve -----------------------------------------------------------------------------------------


def cmd_serve(args) -> int:
    from tracerag.serving.app import serve
    from tracerag.serving.programs import parse_program_specs

    specs = parse_program_specs(args.program)  # a bad --program fails before anything is loaded
    _configure(args)
    return serve(specs, {name: _options(name, args) for name in specs}, args)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = {"evaluate": cmd_evaluate, "run": cmd_run, "build": cmd_build, "tune": cmd_tune,
               "compile": cmd_compile, "build-bank": cmd_build_bank, "ingest": cmd_ingest,
               "serve": cmd_serve, "home": _run_home, "store": _run_store}[args.verb]
    try:
        return handler(args)
    except Exception as exc:
        if not isinstance(exc, _user_errors()):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        guarded = sys.modules.get("tracerag.programs.guarded_step")  # no LM step ran if it was never imported
        for line in guarded.warning_summary() if guarded is not None else ():
            print(f"WARNING {line}", file=sys.stderr)


def _run_home(args) -> int:
    from tracerag.smarthome.cli import run_home_command

    return run_home_command(args)


def _run_store(args) -> int:
    from tracerag.retrievers.store_cli import cmd_store

    return cmd_store(args)


def _user_errors() -> tuple[type[Exception], ...]:
    """The errors that end a command with one ``error:`` line (exit 2) instead of a traceback; imported
    only when a command failed, so a command does not load the bank and tool modules just to name them."""
    from tracerag.retrievers.cosine_bank import BankError
    from tracerag.retrievers.vector_store import StoreError
    from tracerag.tools.mcp_client import ToolSourceError

    return FileNotFoundError, ValueError, KeyError, BankError, StoreError, ToolSourceError


if __name__ == "__main__":
    sys.exit(main())
