"""tracerag: declarative, optimizable retrieval programs built on DSPy.

Public API: the programs, `build()` for one on its defaults (the registry's), `configure()` for the LM and
embedder, `load()` for compiled artifacts, `TraceragError` the root of the errors the library raises.

The names are imported on first use (PEP 562), so ``import tracerag`` (and the command line's
``--help``) does not pay for DSPy, numpy and the embedder until a program or a setting is asked for.
``from tracerag import CommandRetrieval`` works as before.
"""

import os

from .lazy_exports import lazy_exports

# LiteLLM fetches a model cost map from the network at import unless told otherwise; this must be
# set before anything imports it.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_SOURCES = {
    ".config": ("configure", "get_embedder"),
    ".registry": ("build", "load", "save"),
    ".commands.command_retrieval": ("CommandRetrieval",),
    ".experience.experience_retrieval": ("ExperienceConfig", "ExperienceRetrieval", "render_experience_section"),
    ".rag.self_reflective_rag": ("RAGConfig", "SelfReflectiveRAG"),
    ".planner.traceable_planner": ("PlannerConfig", "TraceablePlanner"),
    ".agent.search_agent": ("AgentConfig", "SearchAgent"),
    ".documents.corpus": ("ingest_documents",),
    ".documents.hybrid": ("HybridRetriever",),
    ".home_commands.home_index": ("CommandIndex",),
    ".home_commands.index_params": ("IndexParams",),
    ".home_commands.home": ("Home",),
    ".memory.experience_bank": ("build_experience_bank",),
    ".stores.cosine_bank": ("CosineBank",),
    ".signatures": ("QueryIR",),
    ".errors": ("TraceragError",),
}
# Modules reachable as attributes after a bare ``import tracerag`` (``tracerag.config.make_embedder``), as
# when this file imported them all.
_SUBMODULES = ("agent", "artifacts", "building", "commands", "compiling", "config", "data_files", "datasets",
               "documents", "embedding", "evaluation", "experience", "home_commands", "lm", "memory", "metrics",
               "planner", "programs", "rag", "registry", "signatures", "stores", "tools")
__all__, __getattr__, __dir__ = lazy_exports(__name__, _SOURCES, _SUBMODULES)
__version__ = "0.1.0"
