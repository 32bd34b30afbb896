"""Building SelfReflectiveRAG: on its bundled defaults, on the user's data or store, or from a compiled artifact."""

from __future__ import annotations

from pathlib import Path

from ..building import embedder_or_default


def build_rag(*, artifact: str | Path | None = None, bank: str | Path | None = None, store: str | None = None,
              k: int = 10, max_rounds: int = 2, embedder=None):
    """SelfReflectiveRAG from an artifact, over a store or a bank directory, or over the bundled PubMedQA
    abstracts ingested once into the cache directory (re-ingesting unchanged abstracts costs nothing).

    Args:
        artifact: a compiled program (``tracerag compile rag``); ``store``/``bank`` then replace its store.
        bank: a chunk bank directory (``tracerag ingest``).
        store: a store URI (a directory, ``milvus:./file.db``, ``milvus://host:19530``), filled from the bundled
            abstracts when empty.
        k: chunks retrieved per round.
        max_rounds: retrieval rounds at most.
        embedder: the embedder (default: the configured one).

    Returns:
        The program, ready to call: ``program(question=...)``.
    """
    from ..artifacts import load_program
    from ..documents.hybrid import HybridRetriever
    from ..stores.cosine_bank import CosineBank
    from ..tools.pubmed_corpus import open_pubmedqa_bank
    from .artifact import rebuild
    from .self_reflective_rag import RAGConfig, SelfReflectiveRAG

    if artifact:
        return load_program(artifact, "SelfReflectiveRAG", rebuild, store=store or bank, embedder=embedder)
    embedder = embedder_or_default(embedder)
    if store:
        from ..store_cli import open_program_store

        retriever = HybridRetriever(open_program_store("rag", store, embedder), embedder=embedder)
    else:
        retriever = HybridRetriever(CosineBank.load(bank, embedder) if bank else open_pubmedqa_bank(embedder))
    return SelfReflectiveRAG(retriever, RAGConfig(k=k, max_rounds=max_rounds))
