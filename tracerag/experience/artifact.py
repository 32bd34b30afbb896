"""ExperienceRetrieval's artifact: its config, the store of traces it searches (a reference that reopens it
elsewhere), the embedder and a rerank service; and rebuilding it on the recorded store or the app's own."""

from __future__ import annotations

from pathlib import Path

from ..artifacts import store_fields, store_source
from ..building import embedder_or_default


def describe(program, where: Path | None = None) -> dict:
    from ..documents.rerankers import HttpReranker

    reranker = program.reranker
    return {"program": "ExperienceRetrieval", "config": program.config.model_dump(),
            "embedder": program.embedder.id if program.store is not None else None,
            **store_fields(program.store, where),
            "reranker": {"base_url": reranker.base_url, "model": reranker.model}
            if isinstance(reranker, HttpReranker) else None}


def rebuild(path: Path, meta: dict, *, embedder=None, store=None, **_):
    """``store``: the app's store (a URI, a bank directory or an open VectorStore); default: the recorded one."""
    from ..documents.rerankers import make_reranker
    from .experience_retrieval import ExperienceConfig, ExperienceRetrieval

    config = ExperienceConfig(**meta["config"])
    if not config.enable:
        return ExperienceRetrieval(None, config)
    embedder = embedder_or_default(embedder)
    source = store_source(path, meta, embedder, store, required=True)
    service = meta.get("reranker")
    reranker = make_reranker(service["base_url"], model=service["model"]) if service else None
    return ExperienceRetrieval(source, config, reranker=reranker, embedder=embedder)
