"""Embedders: the ``Embedder`` protocol and the built-in local channels (``embedders``), the on-disk cache
(``embedding_cache``), any OpenAI-compatible ``/embeddings`` endpoint (``http_embedder``), and the embedder a
short spec names (``embedder_choice``). Every index records its embedder's id and dimension.
"""
