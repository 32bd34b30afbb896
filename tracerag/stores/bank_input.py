"""What a bank write is handed: rows checked before anything is written, and texts embedded into the new
version's embeddings file in batches, reporting progress (:data:`Progress`).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import IO, Any

from ..embedding.embedders import Embedder
from ..errors import InvalidValue
from .bank_errors import BankError
from .bank_writing import write_rows

__all__ = ["Progress", "progress_callback"]

# A progress callback receives (rows done, rows total); True means a tqdm bar on stderr.
Progress = Callable[[int, int], None] | bool | None


def _check_rows(
    ids: Sequence[str],
    n: int,
    metadata: Sequence[dict[str, Any]] | None,
    what: str,
    default_metadata: Callable[[int], dict[str, Any]] | None = None,
) -> tuple[list[str], list[dict[str, Any]]]:
    """(ids, metadata) as lists, checked against ``n`` rows; absent metadata is ``default_metadata(i)`` or {}."""
    ids = list(ids)
    if not all(isinstance(x, str) for x in ids):
        raise InvalidValue("ids must be strings")
    if len(ids) != n:
        raise InvalidValue(f"got {len(ids)} ids but {n} {what}")
    if len(set(ids)) != len(ids):
        dupes = sorted(x for x, c in Counter(ids).items() if c > 1)
        raise InvalidValue(f"duplicate ids in one call: {dupes[:5]}")
    if metadata is None:
        return ids, [default_metadata(i) if default_metadata else {} for i in range(n)]
    metadata = list(metadata)
    if len(metadata) != n:
        raise InvalidValue(f"got {len(metadata)} metadata entries but {n} {what}")
    bad = next((i for i, m in enumerate(metadata) if not isinstance(m, dict)), None)
    if bad is not None:
        raise InvalidValue(f"metadata[{bad}] is a {type(metadata[bad]).__name__}, expected a dict")
    return ids, metadata


def _check_text_rows(
    ids: Sequence[str], texts: Sequence[str], metadata: Sequence[dict[str, Any]] | None
) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    """(ids, texts, metadata) as lists; metadata defaults to ``{"text": text}``."""
    texts = list(texts)
    if not all(isinstance(t, str) for t in texts):
        raise InvalidValue("texts must be strings")
    ids, meta = _check_rows(ids, len(texts), metadata, "texts", lambda i: {"text": texts[i]})
    return ids, texts, meta


def progress_callback(progress: Progress, total: int, *, unit: str = "text",
                      desc: str = "embedding") -> tuple[Callable[[int], None], Callable[[], None]]:
    """(advance(n_done), close) for a user callback, a tqdm bar on stderr, or nothing."""
    if progress is True:
        from tqdm import tqdm

        bar = tqdm(total=total, file=sys.stderr, unit=unit, desc=desc)
        return (lambda done: bar.update(done - bar.n)), bar.close
    if callable(progress):
        return (lambda done: progress(done, total)), lambda: None
    return (lambda done: None), lambda: None


def _embed_into(
    f: IO[bytes], embedder: Embedder, texts: list[str], batch_size: int, progress: Progress, where: str
) -> None:
    if batch_size <= 0:
        raise InvalidValue(f"batch_size must be positive, got {batch_size}")
    advance, close = progress_callback(progress, len(texts))
    try:
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            vectors = embedder.embed(batch)
            if len(vectors) != len(batch):
                raise BankError(
                    f"{where}: embedder {embedder.id!r} returned {len(vectors)} rows for {len(batch)} texts"
                )
            write_rows(f, vectors, embedder.dim, f"{where} (embedder {embedder.id!r})")
            advance(start + len(batch))
    finally:
        close()
