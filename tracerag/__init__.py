"""tracerag: declarative, optimizable retrieval programs built on DSPy.

Public API: the programs, `configure()` for the LM and embedder, `load()` for compiled artifacts.
"""

import os

# LiteLLM fetches a model cost map from the network at import unless told otherwise; this must be
# set before anything imports it.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from .artifacts import load, save  # noqa: E402
from .config import configure, get_embedder  # noqa: E402
from .programs import (  # noqa: E402
    AgentConfig,
    CommandRetrieval,
    ExperienceConfig,
    ExperienceRetrieval,
    PlannerConfig,
    RAGConfig,
    SearchAgent,
    SelfReflectiveRAG,
    TraceablePlanner,
    render_experience_section,
)
from .retrievers import (  # noqa: E402
    CommandIndex,
    CosineBank,
    Home,
    HybridRetriever,
    IndexParams,
    build_experience_bank,
    ingest_documents,
)
from .signatures import QueryIR  # noqa: E402

__all__ = ["AgentConfig", "CommandIndex", "CommandRetrieval", "CosineBank", "ExperienceConfig",
           "ExperienceRetrieval", "Home", "HybridRetriever", "IndexParams", "PlannerConfig", "QueryIR",
           "RAGConfig", "SearchAgent", "SelfReflectiveRAG", "TraceablePlanner", "build_experience_bank",
           "configure", "get_embedder", "ingest_documents", "load", "render_experience_section", "save"]
__version__ = "0.1.0"
