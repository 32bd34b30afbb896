"""Documents for retrieval-augmented answers: split into sentence-aligned chunks (``chunking``), a JSONL
corpus ingested into a chunk bank (``corpus``), dense + BM25 retrieval over that bank (``hybrid``), and
rerankers that re-score candidates against the query (``rerankers``).
"""
