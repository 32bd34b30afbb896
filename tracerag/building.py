"""How each program is built: from a compiled artifact, or on its bundled defaults, with typed options.

One builder per program, shared by the command line (``tracerag run/evaluate/compile``), the HTTP
service, the MCP tools and apps (``tracerag.build("rag")``), so all of them run the same program for
the same options. A builder reads no command-line flags and no environment: the LM and the embedder
come from :func:`tracerag.configure` (or ``embedder=``).
"""

from __future__ import annotations

import atexit
import os
from pathlib import Path

__all__ = ["build_agent", "build_commands", "build_experience", "build_planner", "build_rag"]

_TEMP_BANKS: list[str] = []  # banks built for one process on the bundled traces, removed at exit


@atexit.register
def _remove_temp_banks() -> None:
    import shutil

    for path in _TEMP_BANKS:
        shutil.rmtree(path, ignore_errors=True)


def _embedder(embedder):
    from .config import get_embedder

    return embedder if embedder is not None else get_embedder()


def build_commands(*, artifact: str | Path | None = None, homes: str | Path | None = None,
                   ir_source: str | None = None, arbitration: bool = False, embedder=None):
    """CommandRetrieval over ``homes`` (a bundled name such as ``smarthome``, a directory of homes or one
    home; default: the bundled ones), or from ``artifact`` (on the homes it was compiled on, or on ``homes``).
    ``ir_source`` defaults to the LM's parse when an LM is configured, else the rule parser's."""
    import dspy

    from .artifacts import load
    from .datasets.smarthome import home_dirs, resolve_dataset
    from .programs.command_retrieval import CommandRetrieval, build_indexes

    ir_source = ir_source or ("lm" if dspy.settings.lm is not None else "none")
    if artifact:
        program = load(artifact, home=resolve_dataset(homes) if homes else None, embedder=embedder)
        program.ir_source = ir_source
        return program
    return CommandRetrieval(build_indexes(home_dirs(resolve_dataset(homes or "smarthome")), _embedder(embedder)),
                            ir_source=ir_source, arbitration=arbitration)


def build_experience(*, artifact: str | Path | None = None, dataset: str | Path | None = "experience",
                     bank: str | Path | None = None, store: str | None = None, bank_dir: str | Path | None = None,
                     reranker: str = "local", rerank_model: str | None = None, rewrite: bool = True,
                     max_rounds: int = 1, top_n: int = 5, embedder=None):
    """ExperienceRetrieval from an artifact (on ``store``/``bank`` when given), on a store (filled from the
    dataset's traces when empty), on a bank directory, or on a bank built from the dataset's traces (into
    ``bank_dir``, else a temporary directory removed at exit; the embedding cache makes rebuilding cheap).
    ``reranker``: local (default), none, or the URL of a rerank service."""
    from .artifacts import load
    from .datasets.smarthome import resolve_dataset
    from .documents.rerankers import make_reranker
    from .memory.experience_bank import build_experience_bank
    from .programs.experience_retrieval import ExperienceConfig, ExperienceRetrieval
    from .stores.cosine_bank import CosineBank

    if artifact:
        return load(artifact, store=store or bank, embedder=embedder)
    embedder = _embedder(embedder)
    traces = resolve_dataset(dataset) if dataset else None
    if store:
        from .store_cli import open_program_store

        found = open_program_store("experience", store, embedder, fill_from=traces or resolve_dataset("experience"))
    elif bank:
        found = CosineBank.load(bank, embedder)
    elif traces is not None:
        if bank_dir is None:
            import tempfile

            _TEMP_BANKS.append(tempfile.mkdtemp(prefix="tracerag-bank-"))
            bank_dir = Path(_TEMP_BANKS[-1]) / "bank"
        build_experience_bank(traces, bank_dir, embedder, rebuild=True)
        found = CosineBank.load(bank_dir, embedder)
    else:
        raise ValueError("experience needs a bank, a store or a dataset of traces to build the bank from")
    config = ExperienceConfig(enable=True, enable_query_rewrite=rewrite, enable_rerank=reranker != "none",
                              max_retrieval_rounds=max_rounds, top_n=top_n)
    service = None if reranker in ("local", "none") else make_reranker(reranker, model=rerank_model)
    return ExperienceRetrieval(found, config, reranker=service, embedder=embedder)


def build_rag(*, artifact: str | Path | None = None, bank: str | Path | None = None, store: str | None = None,
              k: int = 10, max_rounds: int = 2, embedder=None):
    """SelfReflectiveRAG from an artifact, over a store or a bank directory, or over the bundled PubMedQA
    abstracts ingested once into the cache directory (re-ingesting unchanged abstracts costs nothing)."""
    from .artifacts import load
    from .documents.hybrid import HybridRetriever
    from .programs.self_reflective_rag import RAGConfig, SelfReflectiveRAG
    from .stores.cosine_bank import CosineBank
    from .tools.pubmed_corpus import open_pubmedqa_bank

    if artifact:
        return load(artifact, store=store or bank, embedder=embedder)
    embedder = _embedder(embedder)
    if store:
        from .store_cli import open_program_store

        retriever = HybridRetriever(open_program_store("rag", store, embedder), embedder=embedder)
    else:
        retriever = HybridRetriever(CosineBank.load(bank, embedder) if bank else open_pubmedqa_bank(embedder))
    return SelfReflectiveRAG(retriever, RAGConfig(k=k, max_rounds=max_rounds))


def build_planner(*, artifact: str | Path | None = None, store: str | None = None,
                  dataset: str | Path | None = "planner", embedder=None):
    """TraceablePlanner from an artifact or the defaults. With ``store`` it searches its templates in that
    store, which is filled from the dataset's templates when empty."""
    from .artifacts import load
    from .programs.traceable_planner import TraceablePlanner

    if artifact:
        return load(artifact, store=store, embedder=embedder)
    if not store:
        return TraceablePlanner()
    from .datasets.smarthome import resolve_dataset
    from .store_cli import open_program_store

    embedder = _embedder(embedder)
    templates = open_program_store("planner", store, embedder, fill_from=resolve_dataset(dataset or "planner"))
    return TraceablePlanner(retrieve_templates=templates, embedder=embedder)


def build_agent(*, artifact: str | Path | None = None, tools: list[str] | None = None, pubmed: str | None = "local",
                bank: str | Path | None = None, browse_root: str | Path | None = None, tool_embedder: str | None = None,
                cache_dir: str | Path | None = None, max_tool_calls: int | None = None):
    """SearchAgent over ``tools`` (MCP tool sources; default: the bundled local MCP server, a child process
    that searches ``bank`` or the PubMedQA abstracts with the ``tool_embedder`` spec), from an artifact when given.
    Close it with ``program.toolbox.close()``."""
    from .artifacts import load
    from .config import ENV_CACHE_DIR
    from .programs.search_agent import SearchAgent
    from .tools.mcp_client import Toolbox

    if cache_dir:  # the local tool server is a child process: it reads the cache directory from here
        os.environ[ENV_CACHE_DIR] = str(cache_dir)
    toolbox = Toolbox.open(tools or None, pubmed=pubmed or "local", bank=bank, browse_root=browse_root,
                           embedder=tool_embedder)
    program = load(artifact, tools=toolbox) if artifact else SearchAgent(toolbox)
    if max_tool_calls is not None:
        program.config = program.config.model_copy(update={"max_tool_calls": max_tool_calls})
    return program

