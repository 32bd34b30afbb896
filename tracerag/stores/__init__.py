"""Vector stores: the protocol programs search through (``vector_store``), its backends, opening a store by
URI (``stores``, the one module that knows every backend), and copying rows between stores (``store_copy``).

The embedded numpy bank: ``numpy_store`` over ``cosine_bank`` (its searches and approximate index in
``bank_queries``, what a write is handed in ``bank_input``); a version's files named in ``bank_layout``, read
and checked in ``bank_reading`` (ids and metadata: ``bank_columns``; rows checked on first touch:
``bank_row_guard``), written in ``bank_writing`` and swapped in by ``bank_swap``, with the errors of
``bank_errors``; exact search in ``bank_search``, the optional HNSW index in ``bank_ann``.

Milvus: ``milvus_store`` (its word-index upkeep in ``milvus_store_words``, its check on open in
``milvus_store_checks``), reached through ``milvus_client`` (errors: ``milvus_errors``; Milvus Lite's files:
``milvus_lite_files``), its collection in ``milvus_collection``, its vector index in ``milvus_index``, ids and
filters as expressions in ``milvus_expressions``; the BM25 word index ``milvus_words``, in two layouts
(``milvus_words_bm25``, ``milvus_words_postings``) with a write journal (``milvus_words_journal``).
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
