"""Building SelfReflectiveRAG: on its bundled defaults, on the user's data or store, or from a compiled artifact."""

from __future__ import annotations

from pathlib import Path

from ..building import embedder_or_default
from ..store_cli import StoreFill, open_program_store


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
        retriever = HybridRetriever(open_program_store(STORE_FILL, store, embedder), embedder=embedder)
    else:
        retriever = HybridRetriever(CosineBank.load(bank, embedder) if bank else open_pubmedqa_bank(embedder))
    return SelfReflectiveRAG(retriever, RAGConfig(k=k, max_rounds=max_rounds))


def _chunk_bank(bank_dir: Path, embedder, fill_from: str | Path | None, progress) -> None:
    """The chunk bank of the JSONL corpus ``fill_from`` (default: the bundled PubMedQA abstracts; the embedding
    cache makes their vectors free after the first time)."""
    from ..datasets.pubmedqa import pubmedqa_abstracts_path
    from ..documents.corpus import ingest_documents

    docs = Path(fill_from) if fill_from is not None else pubmedqa_abstracts_path()
    ingest_documents(docs, bank_dir, embedder, progress=progress)


STORE_FILL = StoreFill(_chunk_bank)  # what fills an empty --store
