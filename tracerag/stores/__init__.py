"""Vector stores: the protocol programs search through (``vector_store``), its backends (the embedded numpy
bank, ``numpy_store`` over ``cosine_bank`` with its files, exact search and optional HNSW in ``bank_*``; Milvus,
``milvus_store`` with its BM25 word index ``milvus_words``), opening a store by URI (``stores``, the one module
that knows every backend), and copying rows between stores (``store_copy``).
"""

from ..lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    ".stores": ("open_store",),
    ".vector_store": ("StoreError", "StoreHit", "StoreRow", "VectorStore", "parse_store_uri"),
    ".numpy_store": ("NumpyStore",),
    ".cosine_bank": ("BankError", "CosineBank", "Hit"),
    ".milvus_store": ("MilvusStore",),
    ".store_copy": ("CopyReport", "copy_store"),
})
