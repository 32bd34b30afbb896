"""Copy a vector store to another (numpy bank <-> Milvus, or between collections), streaming, resumable,
verified.

``copy_store(src, dst)`` reads the source with ``scan(batch_size, with_vectors=True)`` and upserts each
batch into the destination (created with the source's embedder id and dimension when missing; an
existing destination must record the same ones). Memory is one batch, not the store.

Resumable: upserts are idempotent (a row identical to the stored one is skipped: Milvus compares a
stored hash, the numpy bank compares the row), so rerunning an interrupted copy writes only what is
missing or changed; the report counts ``written`` and ``skipped``. Rows already in the destination that
the source does not hold are left alone (the count check then reports them).

Verification, at the end: the destination holds every source id (its count is at least the source's,
and equal unless it held other rows before), and a random sample of rows (``sample``, default 256) has
the same metadata and vectors with cosine >= ``min_cosine`` (0.9999; stored vectors are float32 unit
rows, so a faithful copy gives 1.0 within rounding). ``CopyReport.ok`` and ``summary()`` say what held.

After a copy that wrote rows the destination's ``refresh_index()`` runs when it has one (a Milvus server
with an HNSW index: every row sealed, indexed and loaded, so no segment is left on the interim index;
the collection is unavailable while it reloads: ``refresh=False`` / ``store copy --no-refresh`` skips it).

Cost: the numpy bank appends in versions (each append copies the existing files in-kernel), so writing
into a numpy bank groups batches into :data:`NUMPY_WRITE_ROWS`-row appends (O(n^2 / 65,536) bytes
copied in all); Milvus takes ``batch_size`` rows per upsert.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidValue
from .bank_input import Progress, progress_callback
from .stores import open_store
from .vector_store import StoreError, VectorStore

__all__ = ["CopyReport", "copy_store", "verify_copy"]

logger = logging.getLogger(__name__)

NUMPY_WRITE_ROWS = 65_536  # rows per append when the destination is a numpy bank (bounds the copies)
MIN_COSINE = 0.9999


@dataclass
class CopyReport:
    source: str
    target: str
    source_count: int = 0
    target_count: int = 0
    rows_read: int = 0
    written: int = 0
    skipped: int = 0  # already in the destination unchanged (a resumed copy skips what it wrote before)
    sampled: int = 0
    min_cosine: float | None = None
    missing: list[str] = field(default_factory=list)  # sampled ids the destination lacks
    mismatched: list[str] = field(default_factory=list)  # sampled ids whose vector or metadata differ
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        head = (f"copied {self.source} -> {self.target}: {self.rows_read} rows read, {self.written} written, "
                f"{self.skipped} already there; counts {self.source_count} -> {self.target_count}; "
                f"{self.sampled} sampled rows checked")
        if self.min_cosine is not None:
            head += f" (min cosine {self.min_cosine:.6f})"
        head += f"; {self.seconds:.1f} s"
        if self.ok:
            return head + "; verified"
        return head + "; VERIFICATION FAILED: " + "; ".join(self.problems)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def _open(store: VectorStore | str | Path, **kwargs: Any) -> tuple[VectorStore, bool]:
    """(store, whether we opened it and so must close it)."""
    if isinstance(store, VectorStore):
        return store, False
    return open_store(store, **kwargs), True


def copy_store(
    src: VectorStore | str | Path,
    dst: VectorStore | str | Path,
    batch_size: int = 1000,
    progress: Progress = None,
    *,
    sample: int = 256,
    min_cosine: float = MIN_COSINE,
    seed: int = 0,
    refresh: bool = True,
) -> CopyReport:
    """Copy every row of ``src`` into ``dst`` (URIs or open stores) and verify; see the module docstring.

    ``progress`` is a ``(rows done, rows total)`` callback, or True for a bar on stderr. Never raises for
    a failed verification: read ``report.ok`` / ``report.summary()``.
    """
    if batch_size <= 0:
        raise InvalidValue(f"batch_size must be positive, got {batch_size}")
    started = time.perf_counter()
    source, close_source = _open(src)
    try:
        info = source.describe()
        target, close_target = _open(dst, embedder_id=info.embedder_id, dim=info.dim, create=True)
        try:
            target_info = target.describe()
            if target_info.uri == info.uri and target_info.collection == info.collection:
                raise StoreError(f"{info.uri}: source and destination are the same store")
            report = CopyReport(info.uri, target_info.uri, source_count=source.count())
            rng = np.random.default_rng(seed)
            reservoir: list[str] = []
            group = NUMPY_WRITE_ROWS if target_info.backend == "numpy" else batch_size
            pending: list[Any] = []
            advance, close_bar = progress_callback(progress, report.source_count, unit="row", desc="copying")
            try:
                for batch in source.scan(batch_size, with_vectors=True):
                    _keep_sample(reservoir, batch.ids, report.rows_read, sample, rng)
                    report.rows_read += len(batch.ids)
                    pending.append(batch)
                    if sum(len(b.ids) for b in pending) >= group:
                        _write(target, pending, report)
                        advance(report.rows_read)
                if pending:
                    _write(target, pending, report)
                advance(report.rows_read)
            finally:
                close_bar()
            reload = getattr(target, "refresh_index", None)
            if refresh and report.written and callable(reload):  # else late-sealed rows stay on an interim index
                reload()
            verify_copy(source, target, reservoir, report, min_cosine)
            report.seconds = time.perf_counter() - started
            (logger.info if report.ok else logger.warning)("%s", report.summary())
            return report
        finally:
            if close_target:
                target.close()
    finally:
        if close_source:
            source.close()


def _keep_sample(reservoir: list[str], ids: list[str], seen: int, size: int, rng: np.random.Generator) -> None:
    """Reservoir sampling: after the scan, ``reservoir`` is a uniform sample of ``size`` ids."""
    for offset, x in enumerate(ids):
        n = seen + offset
        if len(reservoir) < size:
            reservoir.append(x)
        else:
            j = int(rng.integers(0, n + 1))
            if j < size:
                reservoir[j] = x


def _write(target: VectorStore, pending: list[Any], report: CopyReport) -> None:
    ids = [x for b in pending for x in b.ids]
    vectors = np.concatenate([b.vectors for b in pending]) if pending else None
    metadata = [m for b in pending for m in b.metadata]
    result = target.upsert(ids, vectors, metadata)
    report.written += result.written
    report.skipped += result.skipped
    pending.clear()


def verify_copy(source: VectorStore, target: VectorStore, ids: list[str], report: CopyReport,
                min_cosine: float = MIN_COSINE) -> CopyReport:
    """Check counts and the sampled ``ids`` (vectors by cosine, metadata exactly); fills ``report``."""
    report.source_count = source.count()
    report.target_count = target.count()
    if report.target_count < report.source_count:
        report.problems.append(f"destination holds {report.target_count} rows, fewer than the source's "
                               f"{report.source_count}")
    elif report.target_count > report.source_count:
        report.problems.append(f"destination holds {report.target_count - report.source_count} rows the source "
                               "does not (it was not empty before the copy, or the source lost rows)")
    originals = {row.id: row for row in source.get(ids)}
    copies = {row.id: row for row in target.get(ids)}
    report.sampled = len(originals)
    worst = 1.0
    for x, row in originals.items():
        copy = copies.get(x)
        if copy is None:
            report.missing.append(x)
            continue
        a, b = np.asarray(row.vector, np.float64), np.asarray(copy.vector, np.float64)
        cosine = float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-12))
        worst = min(worst, cosine)
        if cosine < min_cosine or copy.metadata != row.metadata:
            report.mismatched.append(x)
    report.min_cosine = worst if originals else None
    if report.missing:
        report.problems.append(f"{len(report.missing)} sampled rows missing from the destination, e.g. "
                               f"{report.missing[:3]}")
    if report.mismatched:
        report.problems.append(f"{len(report.mismatched)} sampled rows differ (cosine < {min_cosine} or other "
                               f"metadata), e.g. {report.mismatched[:3]}")
    return report
