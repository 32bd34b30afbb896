"""tracerag: declarative, optimizable retrieval programs built on DSPy.

Public API: the programs, `configure()` for the LM and embedder, `load()` for compiled artifacts.
"""

import os

# LiteLLM fetches a model cost map from the network at import unless told otherwise; this must be
# set before anything imports it.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from .artifacts import load, save  # noqa: E402
from .config import configure, get_embedder  # noqa: E402
from .programs import CommandRetrieval, ExperienceConfig, ExperienceRetrieval, render_experience_section  # noqa: E402
from .retrievers import CommandIndex, CosineBank, Home, IndexParams, build_experience_bank  # noqa: E402
from .signatures import QueryIR  # noqa: E402

__all__ = ["CommandIndex", "CommandRetrieval", "CosineBank", "ExperienceConfig", "ExperienceRetrieval", "Home",
           "IndexParams", "QueryIR", "build_experience_bank", "configure", "get_embedder", "load",
           "render_experience_section", "save"]
__version__ = "0.1.0"
