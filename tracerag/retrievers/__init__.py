"""Plain-Python retrieval components (no LM): homes and the command index, the vector bank, the store
protocol and the experience bank built on it, traces, embedders and rerankers.

The names are imported on first use (PEP 562): the command line reads its argument definitions from
modules here (``store_cli``) without paying for numpy and the embedder.
"""

import importlib

_SOURCES = {
    ".chunking": ("Chunk", "chunk_text"),
    ".command_index": ("CommandIndex", "IndexParams"),
    ".command_results": ("BulkGroup", "BulkPlan", "Candidate", "CapabilityOption"),
    ".corpus": ("IngestReport", "ingest_documents"),
    ".cosine_bank": ("BankError", "CosineBank", "Hit"),
    ".embedder_choice": ("make_embedder",),
    ".embedders": ("Embedder", "LexicalEmbedder", "LocalUSEEmbedder"),
    ".experience_bank": ("BankBuildReport", "build_experience_bank"),
    ".home": ("CommandSpec", "Device", "Home", "HomeDataError"),
    ".hybrid": ("HybridRetriever", "ScoredChunk"),
    ".playbook": ("Bullet", "Playbook", "Template", "apply_feedback", "load_playbook", "parse_playbook"),
    ".rerankers": ("HttpReranker", "LocalReranker", "Reranker", "make_reranker"),
    ".traces": ("Trace", "TraceLoad", "load_traces"),
    ".vector_store": ("StoreHit", "VectorStore", "open_store"),
}
_MODULE_OF = {name: module for module, names in _SOURCES.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name], __name__), name)
    globals()[name] = value  # later look-ups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
