"""Compiled-program artifacts: DSPy JSON state plus a metadata sidecar.

`save` writes `<file>` (the predictors' instructions and demos, DSPy's own format) and
`<file>.meta.json` (program name, config, retriever parameters, dataset, metric, scores), so
`load` can rebuild the whole program for an app, retriever knobs included.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

FORMAT_VERSION = 1


def meta_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".meta.json")


def save(program, path: str | Path, *, dataset: str | None = None, metric: str | None = None,
         scores: dict | None = None, extra: dict | None = None) -> Path:
    """Write the program state and its sidecar; returns the sidecar path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"format_version": FORMAT_VERSION, **_describe(program), "dataset": dataset, "metric": metric,
            "scores": scores or {}, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **(extra or {})}
    program.save(str(path))
    sidecar = meta_path(path)
    sidecar.write_text(json.dumps(meta, indent=2, ensure_ascii=False), encoding="utf-8")
    return sidecar


def _describe(program) -> dict:
    """What, beyond the prompts, rebuilds this program: its config and the retriever it runs on."""
    from .programs.command_retrieval import CommandRetrieval
    from .programs.experience_retrieval import ExperienceRetrieval
    from .programs.search_agent import SearchAgent
    from .programs.self_reflective_rag import SelfReflectiveRAG
    from .programs.traceable_planner import TraceablePlanner
    from .retrievers.rerankers import HttpReranker

    if isinstance(program, CommandRetrieval):
        index = next(iter(program.indexes.values()))
        return {"program": "CommandRetrieval",
                "config": {"k": program.k, "arbitration": program.arbitration, "ir_source": program.ir_source},
                "index_params": index.params.model_dump(), "embedder": index.embedder.id,
                "homes": sorted(program.indexes)}
    if isinstance(program, ExperienceRetrieval):
        bank = program.bank
        reranker = program.reranker
        return {"program": "ExperienceRetrieval", "config": program.config.model_dump(),
                "embedder": bank.embedder_id if bank else None,
                "bank": str(bank.directory.resolve()) if bank else None,
                "reranker": {"base_url": reranker.base_url, "model": reranker.model}
                if isinstance(reranker, HttpReranker) else None}
    if isinstance(program, SelfReflectiveRAG):
        retriever = program.retriever
        return {"program": "SelfReflectiveRAG", "config": program.config.model_dump(),
                "embedder": retriever.bank.embedder_id, "bank": str(retriever.bank.directory.resolve()),
                "retriever": {"fusion": retriever.fusion, "dense_weight": retriever.dense_weight,
                              "lexical_weight": retriever.lexical_weight}}
    if isinstance(program, TraceablePlanner):  # bullets and templates come with each call
        return {"program": "TraceablePlanner", "config": program.config.model_dump(), "embedder": None}
    if isinstance(program, SearchAgent):  # the tools are the app's to give at load time
        return {"program": "SearchAgent", "config": program.config.model_dump(), "embedder": None}
    raise TypeError(f"cannot save {type(program).__name__}: no artifact format for it")


PROGRAMS = ("CommandRetrieval", "ExperienceRetrieval", "SelfReflectiveRAG", "TraceablePlanner", "SearchAgent")
_REQUIRED = {"program": str, "config": dict}  # every sidecar; CommandRetrieval also needs index_params
_REQUIRED_FOR = {"CommandRetrieval": {"index_params": dict}}


def read_meta(path: str | Path) -> dict:
    """The sidecar's metadata; anything unusable (not JSON, a required key missing or of the wrong type, an
    unknown program) is one ValueError line naming the sidecar."""
    sidecar = meta_path(path)
    if not sidecar.is_file():
        raise FileNotFoundError(f"{sidecar}: metadata sidecar missing; was {path} written by tracerag.save?")
    try:
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{sidecar}: not UTF-8 (byte {exc.start + 1})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{sidecar}: invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise ValueError(f"{sidecar}: invalid JSON (nested too deeply)") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{sidecar}: expected a JSON object, got {type(meta).__name__}")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{sidecar}: format_version {meta.get('format_version')} is not {FORMAT_VERSION}")
    required = {**_REQUIRED, **_REQUIRED_FOR.get(meta.get("program"), {})}
    for key, kind in required.items():
        if key not in meta:
            raise ValueError(f"{sidecar}: field {key!r} is missing; was {path} written by tracerag.save?")
        if not isinstance(meta[key], kind):
            raise ValueError(f"{sidecar}: field {key!r}: expected {'a string' if kind is str else 'an object'}, "
                             f"got {type(meta[key]).__name__}")
    if meta["program"] not in PROGRAMS:
        raise ValueError(f"{sidecar}: unknown program {meta['program']!r}; expected one of {list(PROGRAMS)}")
    return meta


def load(path: str | Path, home: str | Path | None = None, embedder=None, *, bank: str | Path | None = None,
         tools=None):
    """Rebuild a compiled program for an app.

    CommandRetrieval: ``home`` is the app's home directory (defaults to the dataset it was compiled on).
    ExperienceRetrieval, SelfReflectiveRAG: ``bank`` is the app's bank directory (defaults to the one it
    was compiled with).
    SearchAgent: ``tools`` is the app's Toolbox (default: the bundled local MCP server, started on first use).
    The embedder must be the one the artifact was built with.
    """
    from .config import get_embedder

    meta = read_meta(path)
    if meta["program"] == "SearchAgent":  # no embedder of its own: the tools bring theirs
        from .programs.search_agent import AgentConfig, SearchAgent

        program = SearchAgent(tools, AgentConfig(**meta["config"]))
        program.load(str(path))
        return program
    embedder = embedder or get_embedder()
    if meta.get("embedder") and embedder.id != meta["embedder"]:
        raise ValueError(f"{path} was built with embedder {meta['embedder']!r} but {embedder.id!r} is configured; "
                         "configure the same embedder (vectors of two embedders cannot be mixed)")
    if meta["program"] == "ExperienceRetrieval":
        program = _load_experience(path, meta, embedder, bank)
    elif meta["program"] == "SelfReflectiveRAG":
        program = _load_rag(path, meta, embedder, bank)
    elif meta["program"] == "TraceablePlanner":
        from .programs.traceable_planner import PlannerConfig, TraceablePlanner

        program = TraceablePlanner(PlannerConfig(**meta["config"]))
    elif meta["program"] == "CommandRetrieval":
        program = _load_commands(path, meta, embedder, home)
    else:
        raise ValueError(f"{meta_path(path)}: unknown program {meta['program']!r}")
    program.load(str(path))
    return program


def _load_commands(path, meta: dict, embedder, home):
    from .datasets.smarthome import home_dirs, resolve_dataset
    from .programs.command_retrieval import CommandRetrieval, build_indexes
    from .retrievers.command_index import IndexParams

    source = home if home is not None else meta.get("dataset")
    if source is None:
        raise ValueError(f"{path}: no home given and the artifact records no dataset")
    indexes = build_indexes(home_dirs(resolve_dataset(source)), embedder, IndexParams(**meta["index_params"]))
    return CommandRetrieval(indexes, **meta["config"])


def _load_experience(path, meta: dict, embedder, bank):
    from .programs.experience_retrieval import ExperienceConfig, ExperienceRetrieval
    from .retrievers.cosine_bank import CosineBank
    from .retrievers.rerankers import make_reranker

    config = ExperienceConfig(**meta["config"])
    if not config.enable:
        return ExperienceRetrieval(None, config)
    source = bank if bank is not None else meta.get("bank")
    if source is None:
        raise ValueError(f"{path}: no bank given and the artifact records none")
    service = meta.get("reranker")
    reranker = make_reranker(service["base_url"], model=service["model"]) if service else None
    return ExperienceRetrieval(CosineBank.load(source, embedder), config, reranker=reranker)


def _load_rag(path, meta: dict, embedder, bank):
    from .programs.self_reflective_rag import RAGConfig, SelfReflectiveRAG
    from .retrievers.cosine_bank import CosineBank
    from .retrievers.hybrid import HybridRetriever

    source = bank if bank is not None else meta.get("bank")
    if source is None:
        raise ValueError(f"{path}: no bank given and the artifact records none")
    retriever = HybridRetriever(CosineBank.load(source, embedder), **meta.get("retriever", {}))
    return SelfReflectiveRAG(retriever, RAGConfig(**meta["config"]))
