"""Embedders: the ``Embedder`` protocol and the built-in local channels (``embedders``), the local model's weights
read fast from a prepared copy (``use_model``), the on-disk cache (``embedding_cache``, with its SQLite file
``cache_file`` and what a failure of it costs ``cache_failures``), any OpenAI-compatible ``/embeddings`` endpoint
(``http_embedder``, and the rows it awaits for a worker thread, ``awaited_rows``), and the embedder a short spec
names (``embedder_choice``). Every index records its embedder's id and dimension.
"""

from ..lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    ".embedders": ("Embedder", "LexicalEmbedder", "LocalUSEEmbedder"),
    ".embedder_choice": ("make_embedder",),
    ".embedding_cache": ("CachedEmbedder",),
    ".http_embedder": ("EmbeddingServiceError", "HttpEmbedder"),
})
