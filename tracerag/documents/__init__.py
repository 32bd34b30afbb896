"""Documents for retrieval-augmented answers: split into sentence-aligned chunks (``chunking``), a JSONL
corpus ingested into a chunk bank (``corpus``), dense + BM25 retrieval over that bank (``hybrid``, with its
in-memory BM25 index ``word_index`` and its access to any store's rows ``store_rows``), and rerankers that
re-score candidates against the query (``rerankers``).
"""

from ..lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    ".chunking": ("Chunk", "chunk_text"),
    ".corpus": ("CorpusError", "IngestReport", "ingest_documents"),
    ".hybrid": ("HybridRetriever", "ScoredChunk"),
    ".rerankers": ("HttpReranker", "LocalReranker", "Reranker", "make_reranker"),
})
