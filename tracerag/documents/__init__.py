"""Documents for retrieval-augmented answers: split into sentence-aligned chunks (``chunking``), a JSONL
corpus ingested into a chunk bank (``corpus``), and rerankers that re-score candidates against the query
(``rerankers``). Hybrid dense + BM25 retrieval over the chunk bank is ``tracerag.retrievers.hybrid``.
"""
