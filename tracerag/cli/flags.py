"""The flags several subcommands share, each group added by one function, and the value types they parse.

A flag means the same thing, with the same spelling, wherever it appears. Only argparse is imported here.
"""

from __future__ import annotations

import argparse


def add_model_flags(p: argparse.ArgumentParser) -> None:
    """The LM, its bounds and cache, the embedder, and -v: every command that runs a program or embeds."""
    g = p.add_argument_group("models")
    g.add_argument("--lm", help="dspy/LiteLLM model string, e.g. openai/gpt-4o-mini (env TRACERAG_LM)")
    g.add_argument("--api-base", help="LM endpoint, e.g. http://localhost:8000/v1 (env TRACERAG_API_BASE)")
    g.add_argument("--api-key", help="LM key (env TRACERAG_API_KEY, else the provider's, e.g. OPENAI_API_KEY)")
    g.add_argument("--allow-no-lm", action="store_true", help="run the no-LM path when --lm has no usable API key "
                   "(without it, such a command exits 2 naming the variable to set), and accept a run whose LM "
                   "never answered (without it, evaluate and run exit 1 and compile writes nothing)")
    g.add_argument("--lm-timeout", type=float, help="seconds without a reply before an LM call fails and the "
                   "stage takes its no-LM fallback (default 30; env TRACERAG_LM_TIMEOUT)")
    g.add_argument("--lm-retries", type=int, help="retries of a transient LM failure: 5xx, connection, timeout "
                   "(default 2; env TRACERAG_LM_RETRIES)")
    g.add_argument("--lm-fault-budget", type=float, help="seconds an evaluation's or a compile's failing LM calls "
                   "may take, plus 10%% of its time (serve: each request's, no share); then the rest runs the no-LM "
                   "path, and one stage failing while the others answer may take half, then falls back alone "
                   "(default 40; inf: none; env TRACERAG_LM_FAULT_BUDGET)")
    g.add_argument("--no-cache", action="store_true", help="send every LM call to the endpoint: DSPy's response "
                   "cache is neither read nor written (it is keyed by model string and prompt, not endpoint, so an "
                   "evaluation could otherwise score a reply cached from another endpoint)")
    g.add_argument("--embedder", help="local | lexical | http://host:port/v1 (env TRACERAG_EMBEDDER)")
    g.add_argument("--embed-model", help="model name for an HTTP embedder (env TRACERAG_EMBED_MODEL)")
    g.add_argument("--cache-dir", help="embedding cache directory (env TRACERAG_CACHE_DIR)")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress details")


def positive_int(text: str) -> int:
    """An integer of at least 1 (argparse type)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def positive_float(text: str) -> float:
    """A number above 0 (argparse type)."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value


def add_threads_flag(p: argparse.ArgumentParser, what: str, default: int = 1) -> None:
    """``--num-threads N``: how many LM calls run at once; ``what`` says what runs in them."""
    p.add_argument("--num-threads", type=positive_int, default=default, metavar="N",
                   help=f"threads for the LM calls: {what}")


def add_max_skipped(p: argparse.ArgumentParser, default: float) -> None:
    """``--max-skipped SHARE``: how much unreadable data a command tolerates before it fails."""
    p.add_argument("--max-skipped", type=share, default=default, metavar="SHARE",
                   help=f"fail when more than this share of the data's items is skipped as unreadable "
                        f"(0..1, default {default:g}); nothing usable left always fails")


def share(text: str) -> float:
    """A share between 0 and 1, or a percentage (``5%``) (argparse type)."""
    value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share between 0 and 1 (or 0% and 100%)")
    return value


def add_agent_flags(p: argparse.ArgumentParser, exports: bool = True) -> None:
    """The search agent's tools and call cap; with ``exports``, where its trajectories are written."""
    g = p.add_argument_group("agent")
    g.add_argument("--tool", dest="tools", action="append", default=[], metavar="SPEC",
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


def add_bank_or_store(p: argparse.ArgumentParser, bank_help: str) -> None:
    """``--bank DIR`` or ``--store URI`` (one of them): where build-bank and ingest write."""
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--bank", help=bank_help)
    where.add_argument("--store", metavar="URI", help="a store URI instead (milvus:./file.db, milvus://host:19530, "
                       "or a directory): built in a local bank first, then only new or changed rows are written")


def add_experience_flags(p: argparse.ArgumentParser) -> None:
    """What the retrieving programs search and how: bank or store, reranker, rounds, top-n, rewrite, ALCE."""
    g = p.add_argument_group("experience")
    g.add_argument("--bank", help="experience bank directory (default: built from the dataset's traces)")
    g.add_argument("--store", metavar="URI", help="experience, rag and planner: the vector store to search — a "
                   "bank directory, milvus:./file.db (Milvus Lite), milvus://host:19530 or milvus+https://host "
                   "(token in TRACERAG_MILVUS_TOKEN); an empty store is filled from the dataset / bundled corpus / "
                   "dataset's templates first; planner: templates are searched there instead of handed over")
    g.add_argument("--reranker", help="local (default) | none | http://host:port/v1 rerank service")
    g.add_argument("--rerank-model", help="model name for a rerank service")
    g.add_argument("--max-rounds", type=int, metavar="N", help="experience, rag: retrieval rounds at most "
                   "(default: experience 1, rag 2)")
    g.add_argument("--top-n", type=int, default=5, help="candidates handed to the summary (default 5)")
    g.add_argument("--no-rewrite", dest="rewrite", action="store_false",
                   help="search with the raw task even with an LM")
    g.add_argument("--alce", action="store_true", help="rag: LM-judged citation recall/precision (extra calls)")


