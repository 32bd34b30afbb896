"""Compiled-program artifacts: DSPy JSON state plus a metadata sidecar.

`save` writes `<file>` (the predictors' instructions and demos, DSPy's own format) and
`<file>.meta.json` (program name, config, retriever parameters, dataset, metric, scores), so
`load` can rebuild the whole program for an app, retriever knobs included.

The store a program searches is recorded as ``"store"``: a reference that reopens it on another machine
and never holds a secret or a path into the user's cache (see :func:`store_reference`):

    bundled:pubmedqa           the bundled PubMedQA abstracts, ingested into the cache on first use
    cache:banks/<name>         a bank inside tracerag's cache directory
    exp.json.bank              a path relative to the artifact's directory (a store saved beside it)
    /data/banks/traces         an absolute path elsewhere (the user's own)
    milvus:exp.db              Milvus Lite, the same rules for its file
    milvus://host:19530        a Milvus server (the token stays in TRACERAG_MILVUS_TOKEN)

``load(artifact, store=URI)`` opens another store instead. Artifacts written before stores recorded only
``"bank"`` (an absolute directory), which is still read.
"""

from __future__ import annotations

import json
import os
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
    meta = {"format_version": FORMAT_VERSION, **_describe(program, path.parent), "dataset": dataset, "metric": metric,
            "scores": scores or {}, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **(extra or {})}
    program.save(str(path))
    sidecar = meta_path(path)
    sidecar.write_text(json.dumps(meta, indent=2, ensure_ascii=False), encoding="utf-8")
    return sidecar


def _describe(program, where: Path | None = None) -> dict:
    """What, beyond the prompts, rebuilds this program: its config and the retriever it runs on (store
    references relative to ``where``, the artifact's directory)."""
    from .documents.rerankers import HttpReranker
    from .memory.playbook import TemplateIndex
    from .programs.command_retrieval import CommandRetrieval
    from .programs.experience_retrieval import ExperienceRetrieval
    from .programs.search_agent import SearchAgent
    from .programs.self_reflective_rag import SelfReflectiveRAG
    from .programs.traceable_planner import TraceablePlanner

    if isinstance(program, CommandRetrieval):
        index = next(iter(program.indexes.values()))
        return {"program": "CommandRetrieval",
                "config": {"k": program.k, "arbitration": program.arbitration, "ir_source": program.ir_source},
                "index_params": index.params.model_dump(), "embedder": index.embedder.id,
                "homes": sorted(program.indexes)}
    if isinstance(program, ExperienceRetrieval):
        reranker = program.reranker
        out = {"program": "ExperienceRetrieval", "config": program.config.model_dump(),
               "embedder": program.embedder.id if program.store is not None else None,
               **_store_fields(program.store, where),
               "reranker": {"base_url": reranker.base_url, "model": reranker.model}
               if isinstance(reranker, HttpReranker) else None}
        return out
    if isinstance(program, SelfReflectiveRAG):
        retriever = program.retriever
        return {"program": "SelfReflectiveRAG", "config": program.config.model_dump(),
                "embedder": retriever.describe().embedder_id, **_store_fields(retriever.store, where),
                "retriever": {"fusion": retriever.fusion, "dense_weight": retriever.dense_weight,
                              "lexical_weight": retriever.lexical_weight}}
    if isinstance(program, TraceablePlanner):  # bullets come with each call; templates too, or from a store
        templates = program.retrieve_templates
        if isinstance(templates, TemplateIndex):
            return {"program": "TraceablePlanner", "config": program.config.model_dump(),
                    "embedder": templates.embedder.id, **_store_fields(templates.store, where),
                    "templates": {"k": templates.k, "min_score": templates.min_score}}
        return {"program": "TraceablePlanner", "config": program.config.model_dump(), "embedder": None}
    if isinstance(program, SearchAgent):  # the tools are the app's to give at load time
        return {"program": "SearchAgent", "config": program.config.model_dump(), "embedder": None}
    raise TypeError(f"cannot save {type(program).__name__}: no artifact format for it")


def _store_fields(store, where: Path | None) -> dict:
    """``{"store": reference}`` (plus ``"bank"``, the same reference, for a numpy bank: older readers)."""
    if store is None:
        return {"store": None, "bank": None}
    info = store.describe()
    reference = store_reference(info, where)
    return {"store": reference, **({"bank": reference} if info.backend == "numpy" else {})}


def _cache_dir() -> Path | None:
    try:
        from .config import Settings

        return Settings.resolve().cache_dir
    except Exception:  # no settings: nothing is in the cache
        return None


def _bundled_bank(directory: Path) -> str | None:
    """``bundled:pubmedqa`` when ``directory`` is where the bundled abstracts are ingested for some embedder."""
    if directory.name.startswith("pubmedqa-") and directory.parent.name == "banks":
        cache = _cache_dir()
        if cache is not None and directory.parent.resolve() == (cache / "banks").resolve():
            return "bundled:pubmedqa"
    return None


def _portable_path(path: Path, where: Path | None) -> str:
    """``path`` relative to the artifact's directory when inside it, ``cache:<relative>`` inside the cache
    directory, else absolute."""
    path = path.resolve()
    if where is not None and path.is_relative_to(where.resolve()):
        return os.path.relpath(path, where.resolve())
    cache = _cache_dir()
    if cache is not None and path.is_relative_to(cache.resolve()):
        return "cache:" + path.relative_to(cache.resolve()).as_posix()
    return str(path)


def store_reference(info, where: Path | None = None) -> str:
    """The reference an artifact records for the store described by ``info`` (a StoreInfo): see the module
    docstring. ``where`` is the artifact's directory."""
    from .stores.vector_store import parse_store_uri

    if info.backend == "numpy":
        directory = Path(info.uri)
        return _bundled_bank(directory.resolve()) or _portable_path(directory, where)
    if info.backend == "milvus-lite":
        target = parse_store_uri(info.uri)
        suffix = info.uri[info.uri.index("?"):] if "?" in info.uri else ""
        return "milvus:" + _portable_path(Path(target.location), where) + suffix
    return info.uri  # a server: host and collection only, never the token


def resolve_store_reference(reference: str, artifact: str | Path | None, embedder=None, kind: str | None = None):
    """A store URI (or, for ``bundled:pubmedqa``, the opened store) from a recorded reference; relative
    paths are resolved against the artifact's directory."""
    base = Path(artifact).resolve().parent if artifact is not None else Path.cwd()
    if reference == "bundled:pubmedqa":
        from .tools.pubmed_corpus import open_pubmedqa_bank

        return open_pubmedqa_bank(embedder)
    if reference.startswith("cache:"):
        cache = _cache_dir()
        if cache is None:
            raise ValueError(f"{reference}: no cache directory configured")
        return str(cache / reference[len("cache:"):])
    if reference.startswith("milvus:") and not reference.startswith("milvus://"):
        path, _, query = reference[len("milvus:"):].partition("?")
        if path.startswith("cache:"):
            cache = _cache_dir()
            path = str(cache / path[len("cache:"):]) if cache is not None else path
        elif not Path(path).expanduser().is_absolute():
            path = str(base / path)
        return f"milvus:{path}" + (f"?{query}" if query else "")
    if "://" in reference or Path(reference).expanduser().is_absolute():
        return reference
    return str(base / reference)


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
         store=None, tools=None):
    """Rebuild a compiled program for an app.

    CommandRetrieval: ``home`` is the app's home directory (defaults to the dataset it was compiled on).
    ExperienceRetrieval, SelfReflectiveRAG, TraceablePlanner with a template store: ``store`` is the app's
    store (a URI, e.g. ``milvus://host:19530?collection=traces`` or a bank directory, or an open
    VectorStore); it defaults to the store the artifact records. ``bank`` is the older name of ``store``.
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
    chosen = store if store is not None else bank
    if meta["program"] == "ExperienceRetrieval":
        program = _load_experience(path, meta, embedder, chosen)
    elif meta["program"] == "SelfReflectiveRAG":
        program = _load_rag(path, meta, embedder, chosen)
    elif meta["program"] == "TraceablePlanner":
        program = _load_planner(path, meta, embedder, chosen)
    elif meta["program"] == "CommandRetrieval":
        program = _load_commands(path, meta, embedder, home)
    else:
        raise ValueError(f"{meta_path(path)}: unknown program {meta['program']!r}")
    program.load(str(path))
    return program


def _store_source(path, meta: dict, embedder, chosen):
    """What to open: the caller's store (as given), else the recorded reference resolved (or None)."""
    if chosen is not None:
        return chosen
    recorded = meta.get("store") or meta.get("bank")
    if not recorded:
        return None
    return resolve_store_reference(str(recorded), path, embedder)


def _load_commands(path, meta: dict, embedder, home):
    from .datasets.smarthome import home_dirs, resolve_dataset
    from .home_commands.index_params import IndexParams
    from .programs.command_retrieval import CommandRetrieval, build_indexes

    source = home if home is not None else meta.get("dataset")
    if source is None:
        raise ValueError(f"{path}: no home given and the artifact records no dataset")
    indexes = build_indexes(home_dirs(resolve_dataset(source)), embedder, IndexParams(**meta["index_params"]))
    return CommandRetrieval(indexes, **meta["config"])


def _load_experience(path, meta: dict, embedder, chosen):
    from .documents.rerankers import make_reranker
    from .programs.experience_retrieval import ExperienceConfig, ExperienceRetrieval

    config = ExperienceConfig(**meta["config"])
    if not config.enable:
        return ExperienceRetrieval(None, config)
    source = _store_source(path, meta, embedder, chosen)
    if source is None:
        raise ValueError(f"{path}: no store given and the artifact records none")
    service = meta.get("reranker")
    reranker = make_reranker(service["base_url"], model=service["model"]) if service else None
    return ExperienceRetrieval(source, config, reranker=reranker, embedder=embedder)


def _load_rag(path, meta: dict, embedder, chosen):
    from .documents.hybrid import HybridRetriever
    from .programs.self_reflective_rag import RAGConfig, SelfReflectiveRAG
    from .stores.stores import store_and_embedder

    source = _store_source(path, meta, embedder, chosen)
    if source is None:
        raise ValueError(f"{path}: no store given and the artifact records none")
    store, embedder = store_and_embedder(source, embedder)
    retriever = HybridRetriever(store, embedder=embedder, **meta.get("retriever", {}))
    return SelfReflectiveRAG(retriever, RAGConfig(**meta["config"]))


def _load_planner(path, meta: dict, embedder, chosen):
    from .memory.playbook import TemplateIndex
    from .programs.traceable_planner import PlannerConfig, TraceablePlanner

    config = PlannerConfig(**meta["config"])
    source = _store_source(path, meta, embedder, chosen)
    if source is None:  # templates come with each call
        return TraceablePlanner(config)
    knobs = meta.get("templates") or {}
    index = TemplateIndex(source, embedder, k=knobs.get("k", max(config.max_templates, 1)),
                          min_score=knobs.get("min_score"))
    return TraceablePlanner(config, retrieve_templates=index)
