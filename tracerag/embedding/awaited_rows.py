"""Rows awaited on an event loop, handed to the worker thread that embeds the same texts (``with_embeddings``).

Kept apart from :mod:`.http_embedder` (the remote embedder that awaits them) so the programs that call
``with_embeddings`` on their async path import no HTTP client: a local embedder never needs one.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

__all__ = ["awaited_rows", "with_embeddings"]

T = TypeVar("T")

# (embedder, {text: row}) awaited by `with_embeddings` for the work it runs in a worker thread
_awaited: contextvars.ContextVar[tuple[Any, dict[str, np.ndarray]] | None] = contextvars.ContextVar(
    "tracerag_awaited_embeddings", default=None)


async def with_embeddings(embedder: Any, texts: Sequence[str], fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a worker thread, for CPU-bound work (a bank search) that embeds ``texts``.

    When ``embedder`` has a native async path (``aembed``, e.g. :class:`HttpEmbedder`), their rows are
    awaited first on the event loop and ``embedder.embed(texts)`` inside ``fn`` returns them without a
    request, so the service's latency holds no thread; an embedding failure is raised as ``embed`` would
    raise it. Any other embedder (a local model) is simply called inside ``fn``, in the thread."""
    import asyncio  # loaded already when this runs (on an event loop); a sync caller need not import it

    texts = list(texts)
    aembed = getattr(embedder, "aembed", None)
    if aembed is None or not texts:
        return await asyncio.to_thread(fn, *args, **kwargs)
    rows = await aembed(texts)
    token = _awaited.set((embedder, dict(zip(texts, rows, strict=True))))
    try:
        return await asyncio.to_thread(fn, *args, **kwargs)  # the thread runs in a copy of this context
    finally:
        _awaited.reset(token)


def awaited_rows(embedder: Any, texts: list[str]) -> np.ndarray | None:
    """The rows ``with_embeddings`` awaited for ``texts`` with ``embedder``, or None (not all of them)."""
    awaited = _awaited.get()
    if awaited is None or awaited[0] is not embedder or not all(t in awaited[1] for t in texts):
        return None
    return np.stack([awaited[1][t] for t in texts])
