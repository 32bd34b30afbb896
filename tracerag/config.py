"""LM and embedder settings: from `configure(...)`, CLI flags, or environment fallbacks.

This is the only module that reads the environment. No LM is a normal state: every program has a
no-LM path. The embedder defaults to the embedded multilingual encoder with an on-disk cache, so
re-indexing an unchanged home costs nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import dspy

from .retrievers.embedders import Embedder, make_embedder
from .retrievers.embedding_cache import default_cache_path

ENV_LM, ENV_API_BASE, ENV_API_KEY = "TRACERAG_LM", "TRACERAG_API_BASE", "TRACERAG_API_KEY"
ENV_EMBEDDER, ENV_EMBED_MODEL, ENV_CACHE_DIR = "TRACERAG_EMBEDDER", "TRACERAG_EMBED_MODEL", "TRACERAG_CACHE_DIR"


@dataclass
class Settings:
    """Where the LM and the embedder come from. Flags win over environment variables."""

    lm: str | None = None
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    embedder: str = "local"
    embed_model: str | None = None
    cache_dir: Path | None = None

    @classmethod
    def resolve(cls, lm=None, api_base=None, api_key=None, embedder=None, embed_model=None, cache_dir=None):
        env = os.environ
        cache = cache_dir or env.get(ENV_CACHE_DIR)
        return cls(
            lm=lm or env.get(ENV_LM) or None,
            api_base=api_base or env.get(ENV_API_BASE) or None,
            api_key=api_key or env.get(ENV_API_KEY) or None,
            embedder=embedder or env.get(ENV_EMBEDDER) or "local",
            embed_model=embed_model or env.get(ENV_EMBED_MODEL) or None,
            cache_dir=Path(cache) if cache else default_cache_path().parent,
        )


_state: dict[str, Embedder | None] = {"embedder": None}


def make_lm(model: str, api_base: str | None = None, api_key: str | None = None, **kwargs) -> dspy.LM:
    """A dspy.LM for any LiteLLM model string (openai/…, hosted_vllm/…, ollama_chat/…)."""
    return dspy.LM(model, api_base=api_base, api_key=api_key, **kwargs)


def configure(lm: str | dspy.BaseLM | None = None, embedder: str | Embedder | None = None, *,
              api_base: str | None = None, api_key: str | None = None, embed_model: str | None = None,
              cache_dir: str | Path | None = None) -> Settings:
    """Set the LM (a model string or a dspy LM; None keeps the no-LM path) and the embedder.

    The adapter is set explicitly: ChatAdapter without the JSON fallback, so a garbled answer costs
    one call and takes the program's fallback path instead of a silent second call.
    """
    settings = Settings.resolve(lm if isinstance(lm, str) else None, api_base, api_key,
                                embedder if isinstance(embedder, str) else None, embed_model, cache_dir)
    lm_obj = lm if isinstance(lm, dspy.BaseLM) else (
        make_lm(settings.lm, settings.api_base, settings.api_key) if settings.lm else None)
    dspy.configure(lm=lm_obj, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
    _state["embedder"] = embedder if embedder is not None and not isinstance(embedder, str) else make_embedder(
        settings.embedder, api_key=settings.api_key, model=settings.embed_model, cache_dir=settings.cache_dir)
    return settings


def get_embedder() -> Embedder:
    """The configured embedder; the cached local default when `configure` was never called."""
    if _state["embedder"] is None:
        settings = Settings.resolve()
        _state["embedder"] = make_embedder(settings.embedder, api_key=settings.api_key,
                                           model=settings.embed_model, cache_dir=settings.cache_dir)
    return _state["embedder"]
