"""Deprecated: the old home of the retrieval components, kept for one release so old imports keep working.

The modules that lived here are now in packages named after their concept:

- ``tracerag.home_commands``: a home, the command index and the readers and safety screen around it;
- ``tracerag.stores``: the vector-store protocol, the numpy bank, Milvus, opening by URI, copying;
- ``tracerag.documents``: chunking, corpus ingestion, hybrid retrieval, rerankers;
- ``tracerag.memory``: traces, the experience bank, the planner's playbook;
- ``tracerag.embedding``: embedders, their cache and choice by spec;
- ``tracerag.data_files`` and ``tracerag.http_json``: reading users' files, the bounded HTTP call.

``tracerag.retrievers.<old module>`` (say ``tracerag.retrievers.home``) still imports, and is the SAME module
object as the new path, so ``mock.patch`` and ``monkeypatch`` on either path patch both. A module is loaded
only when asked for (a finder on ``sys.meta_path``, below), not when this package is imported; the names
this package used to offer (``tracerag.retrievers.Home``, ...) are imported on first use too. New code
imports the new paths; this package goes in the release after next.
"""

import importlib
import importlib.abc
import importlib.util
import sys

# old module name here -> where it lives now
_MOVED = {
    "bank_ann": "tracerag.stores.bank_ann",
    "bank_files": "tracerag.stores.bank_files",
    "bank_search": "tracerag.stores.bank_search",
    "category_words": "tracerag.home_commands.category_words",
    "chunking": "tracerag.documents.chunking",
    "command_docs": "tracerag.home_commands.command_docs",
    "command_index": "tracerag.home_commands.home_index",
    "command_results": "tracerag.home_commands.command_results",
    "command_safety": "tracerag.home_commands.safety_screen",
    "corpus": "tracerag.documents.corpus",
    "cosine_bank": "tracerag.stores.cosine_bank",
    "embedder_choice": "tracerag.embedding.embedder_choice",
    "embedders": "tracerag.embedding.embedders",
    "embedding_cache": "tracerag.embedding.embedding_cache",
    "experience_bank": "tracerag.memory.experience_bank",
    "home": "tracerag.home_commands.home",
    "home_policy": "tracerag.home_commands.home_policy",
    "http_embedder": "tracerag.embedding.http_embedder",
    "http_json": "tracerag.http_json",
    "hybrid": "tracerag.documents.hybrid",
    "jsonl": "tracerag.data_files.jsonl",
    "milvus_store": "tracerag.stores.milvus_store",
    "milvus_words": "tracerag.stores.milvus_words",
    "name_index": "tracerag.home_commands.name_index",
    "negation": "tracerag.home_commands.negation",
    "numpy_store": "tracerag.stores.numpy_store",
    "plain_verbs": "tracerag.home_commands.plain_verbs",
    "playbook": "tracerag.memory.playbook",
    "read_report": "tracerag.data_files.read_report",
    "request_reading": "tracerag.home_commands.request_reading",
    "rerankers": "tracerag.documents.rerankers",
    "store_cli": "tracerag.store_cli",
    "store_copy": "tracerag.stores.store_copy",
    "stores": "tracerag.stores.stores",
    "text_match": "tracerag.home_commands.text_match",
    "traces": "tracerag.memory.traces",
    "vector_store": "tracerag.stores.vector_store",
}

_SOURCES = {
    "tracerag.documents.chunking": ("Chunk", "chunk_text"),
    "tracerag.home_commands.home_index": ("CommandIndex",),
    "tracerag.home_commands.index_params": ("IndexParams",),
    "tracerag.home_commands.command_results": ("BulkGroup", "BulkPlan", "Candidate", "CapabilityOption"),
    "tracerag.documents.corpus": ("IngestReport", "ingest_documents"),
    "tracerag.stores.cosine_bank": ("BankError", "CosineBank", "Hit"),
    "tracerag.embedding.embedder_choice": ("make_embedder",),
    "tracerag.embedding.embedders": ("Embedder", "LexicalEmbedder", "LocalUSEEmbedder"),
    "tracerag.memory.experience_bank": ("BankBuildReport", "build_experience_bank"),
    "tracerag.home_commands.devices": ("CommandSpec", "Device"),
    "tracerag.home_commands.file_fields": ("HomeDataError",),
    "tracerag.home_commands.home": ("Home",),
    "tracerag.documents.hybrid": ("HybridRetriever", "ScoredChunk"),
    "tracerag.memory.playbook": ("Bullet", "Playbook", "Template", "apply_feedback", "load_playbook",
                                     "parse_playbook"),
    "tracerag.documents.rerankers": ("HttpReranker", "LocalReranker", "Reranker", "make_reranker"),
    "tracerag.memory.traces": ("Trace", "TraceLoad", "load_traces"),
    "tracerag.stores.vector_store": ("StoreHit", "VectorStore"),
    "tracerag.stores.stores": ("open_store",),
}
_MODULE_OF = {name: module for module, names in _SOURCES.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    globals()[name] = value  # later look-ups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _MovedModuleLoader(importlib.abc.Loader):
    """Hands the import system the module at its new path, so both names share one module object."""

    def __init__(self, new_name: str) -> None:
        self.new_name = new_name
        self._spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.new_name)
        self._spec = module.__spec__  # the import system overwrites __spec__; exec_module puts it back
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = self._spec


class _MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds ``tracerag.retrievers.<old module>`` for a module that moved (deprecated paths, one release)."""

    def find_spec(self, fullname, path, target=None):
        package, _, module = fullname.rpartition(".")
        if package != __name__ or module not in _MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, _MovedModuleLoader(_MOVED[module]))


if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModuleFinder())
