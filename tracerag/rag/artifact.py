"""SelfReflectiveRAG's artifact: its config, the chunk store it searches (a reference that reopens it
elsewhere), the embedder and the fusion knobs; and rebuilding it on the recorded store or the app's own."""

from __future__ import annotations

from pathlib import Path

from ..artifacts import store_fields, store_source
from ..building import embedder_or_default


def describe(program, where: Path | None = None) -> dict:
    retriever = program.retriever
    return {"program": "SelfReflectiveRAG", "config": program.config.model_dump(),
            "embedder": retriever.describe().embedder_id, **store_fields(retriever.store, where),
            "retriever": {"fusion": retriever.fusion, "dense_weight": retriever.dense_weight,
                          "lexical_weight": retriever.lexical_weight}}


def rebuild(path: Path, meta: dict, *, embedder=None, store=None, **_):
    """``store``: the app's store (a URI, a bank directory or an open VectorStore); default: the recorded one."""
    from ..documents.hybrid import HybridRetriever
    from ..stores.stores import store_and_embedder
    from .self_reflective_rag import RAGConfig, SelfReflectiveRAG

    embedder = embedder_or_default(embedder)
    source = store_source(path, meta, embedder, store, required=True)
    store, embedder = store_and_embedder(source, embedder)
    retriever = HybridRetriever(store, embedder=embedder, **meta.get("retriever", {}))
    return SelfReflectiveRAG(retriever, RAGConfig(**meta["config"]))
