"""Which embedder a short spec names ("local", "lexical", an OpenAI-compatible URL), with its on-disk cache:
kept apart from ``embedders`` so the protocol module imports none of the embedders built on it."""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidValue
from .embedders import Embedder, LexicalEmbedder, LocalUSEEmbedder

__all__ = ["make_embedder"]


def make_embedder(
    spec: str = "local",
    *,
    api_key: str | None = None,
    model: str | None = None,
    cache_dir: str | Path | None = None,
) -> Embedder:
    """Build an embedder from a short spec: "local", "lexical", or an OpenAI-compatible base URL.

    With ``cache_dir`` the embedder is wrapped in an on-disk cache (``<cache_dir>/embeddings.sqlite``).
    """
    embedder: Embedder
    if spec == "local":  # its weights are prepared for a fast start in the cache directory, when there is one
        embedder = LocalUSEEmbedder(prepared=cache_dir)
    elif spec == "lexical":
        embedder = LexicalEmbedder()
    elif spec.startswith(("http://", "https://")):
        from .http_embedder import HttpEmbedder  # httpx loads only for a remote embedder

        embedder = HttpEmbedder(base_url=spec, model=model or "default", api_key=api_key)
    else:
        raise InvalidValue(
            f"unknown embedder spec {spec!r}; expected 'local' (USE multilingual v3), 'lexical' "
            "(hashed character n-grams) or an OpenAI-compatible base URL such as 'http://host:port/v1'"
        )
    if cache_dir is not None:
        from .embedding_cache import CachedEmbedder

        embedder = CachedEmbedder(embedder, Path(cache_dir) / "embeddings.sqlite")
    return embedder
