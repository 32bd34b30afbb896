"""An approximate (HNSW) index beside a bank's exact rows: faiss-cpu's ``IndexHNSWFlat``, an optional extra.

Why: one exact query streams the whole matrix (~50-100 ms at 1M x 512 rows on 2 cores); an HNSW graph
visits a few thousand rows instead. Why faiss: measured against hnswlib and usearch on the same data
(``benchmarks/bench_ann.py``, BENCHMARKS.md "One machine, a million rows"), its graph answers one
query as fast as hnswlib's at the same recall; hnswlib built faster, but its last release (0.8.0, 2023)
ships no wheels and compiles C++ at install, and usearch's float32 build was the slowest here. faiss-cpu
ships wheels for every platform and is already what the Milvus extra installs.

The index is two files inside a bank version, written before its manifest (so the manifest's checksums
cover them) and never changed afterwards, like every other file of a version:

    ann.faiss   the faiss index; label i is row i of embeddings.npy
    ann.json    {"kind": "faiss-hnsw-flat", "count", "m", "ef_construction"}

The graph only proposes candidates: every candidate is rescored with the bank's exact float32 rows (the
same arithmetic as the exact path's rescoring), so a row found by both paths has the same score, and
ids, ``min_score`` and ``dedupe_by`` behave as in exact search. What ANN can miss is a row the graph
never proposes; a query whose candidates cannot fill ``k`` (after dedupe) is widened fourfold, and
falls back to the exact scan once the window would cover a quarter of the bank. The candidates' rows go
through the bank's screen as exact hits do (:func:`~.bank_search.keep_sane`): their blocks are verified on
first touch, rows the bank excludes and impossible scores are left out, and labels outside the bank
(a damaged graph) are ignored.

A file faiss cannot read or write is one line naming it (``ValueError`` / ``OSError``), never faiss' own
multi-line C++ message.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidValue, TraceragError
from .bank_search import Screen, keep_sane

ANN_FILE = "ann.faiss"
ANN_INFO = "ann.json"
KIND = "faiss-hnsw-flat"
DEFAULT_M = 16  # graph degree (32 links per row on the bottom layer)
DEFAULT_EF_CONSTRUCTION = 128  # candidate list while building (recall 0.991 at 1M clustered rows, ef 256)
DEFAULT_EF = 256  # candidate list while searching: see BENCHMARKS.md for recall and time per value
ANN_MIN_ROWS = 50_000  # below this many rows a bank searches exactly even when it has an index
_EXACT_SHARE = 4  # a window reaching count / 4 rows is answered by the exact scan instead
_ADD_CHUNK = 65_536  # rows handed to faiss at a time (bounds the float32 copy of a memory-mapped matrix)
_ONE_THREAD_ROWS = 20_000  # fewer rows than this are added by one thread (starting threads costs more)
_THREADED_QUERIES = 256  # batches of at least this many queries are searched on every CPU


class AnnUnavailable(TraceragError, ImportError):
    """faiss-cpu is not installed (the ``ann`` extra)."""


def _faiss() -> Any:
    # faiss' OpenMP threads spin while they wait unless told otherwise: on a busy 2-core machine that made
    # builds 3-20x slower (measured). A user's own setting wins; it must be set before OpenMP loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import faiss
    except ImportError as exc:
        raise AnnUnavailable("approximate search needs faiss-cpu: pip install 'tracerag[ann]'") from exc
    return faiss


class AnnIndex:
    """An HNSW graph over rows ``0..count-1`` of one bank version (see the module docstring)."""

    def __init__(self, index: Any, m: int, ef_construction: int) -> None:
        self._index = index
        self.m = m
        self.ef_construction = ef_construction

    @classmethod
    def build(cls, matrix: np.ndarray, m: int = DEFAULT_M, ef_construction: int = DEFAULT_EF_CONSTRUCTION,
              progress: Callable[[int, int], None] | None = None) -> AnnIndex:
        """A new graph over every row of ``matrix`` (unit rows; inner product is cosine), all CPUs."""
        if m < 2 or ef_construction < 1:
            raise InvalidValue(f"m must be >= 2 and ef_construction >= 1, got m={m}, ef_construction={ef_construction}")
        faiss = _faiss()
        index = faiss.IndexHNSWFlat(int(matrix.shape[1]), int(m), faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = int(ef_construction)
        ann = cls(index, m, ef_construction)
        ann.add(matrix, progress)
        return ann

    @classmethod
    def read(cls, directory: Path, count: int) -> AnnIndex | None:
        """The index stored in a version directory (None when it has none); it must cover ``count`` rows."""
        try:
            info = json.loads((directory / ANN_INFO).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise InvalidValue(f"{directory / ANN_INFO}: not readable JSON ({exc})") from exc
        if not isinstance(info, dict) or info.get("kind") != KIND:
            raise InvalidValue(f"{directory / ANN_INFO}: kind {info.get('kind') if isinstance(info, dict) else info!r} "
                               f"is not {KIND!r}")
        faiss = _faiss()
        try:
            index = faiss.read_index(str(directory / ANN_FILE))
        except RuntimeError as exc:  # faiss' message names its C++ source, not the problem's fix
            raise InvalidValue(f"{directory / ANN_FILE}: not a readable faiss index ({_faiss_reason(exc)}); "
                               "rebuild it with CosineBank.build_ann()") from None
        if index.ntotal != count or info.get("count") != count:
            raise InvalidValue(f"{directory / ANN_FILE}: covers {index.ntotal} rows ({ANN_INFO} says "
                               f"{info.get('count')}), the bank has {count}")
        return cls(index, int(info.get("m", DEFAULT_M)), int(info.get("ef_construction", DEFAULT_EF_CONSTRUCTION)))

    def write(self, directory: Path) -> None:
        """Write ``ann.faiss`` and ``ann.json`` into a version being written (before its manifest)."""
        faiss = _faiss()
        try:
            faiss.write_index(self._index, str(directory / ANN_FILE))
        except RuntimeError as exc:  # faiss reports a failed fwrite as a RuntimeError: give it its errno back
            full = _free_bytes(directory) < (1 << 20)
            error = OSError(errno.ENOSPC if full else errno.EIO,
                            "No space left on device" if full else f"faiss could not write it: {_faiss_reason(exc)}")
            error.bank_file = ANN_FILE  # type: ignore[attr-defined]  # named by the bank's write error
            raise error from None
        with open(directory / ANN_INFO, "w", encoding="utf-8") as f:
            f.write(json.dumps({"kind": KIND, "count": self.count, "m": self.m,
                                "ef_construction": self.ef_construction}) + "\n")
            f.flush()
            os.fsync(f.fileno())
        fd = os.open(directory / ANN_FILE, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    @property
    def count(self) -> int:
        return int(self._index.ntotal)

    def add(self, rows: np.ndarray, progress: Callable[[int, int], None] | None = None) -> None:
        """Append rows (labels continue from :attr:`count`): an append to the bank adds its new rows here."""
        total = len(rows)
        _faiss().omp_set_num_threads(1 if total < _ONE_THREAD_ROWS else _cpus())
        for start in range(0, total, _ADD_CHUNK):
            self._index.add(np.ascontiguousarray(rows[start : start + _ADD_CHUNK], dtype=np.float32))
            if progress is not None:
                progress(min(total, start + _ADD_CHUNK), total)

    def candidates(self, queries: np.ndarray, n: int, ef: int) -> np.ndarray:
        """(q, n) rows the graph proposes per (unit) query, best first; -1 pads a short list."""
        faiss = _faiss()
        n = min(n, self.count)
        # One thread unless the batch is large: faiss splits a batch's queries over OpenMP threads, and on a
        # busy 2-core machine a batch of 32 took 0.3 s that way against ~30 ms on one thread (measured).
        faiss.omp_set_num_threads(1 if len(queries) < _THREADED_QUERIES else _cpus())
        params = faiss.SearchParametersHNSW(efSearch=int(max(ef, n)))
        _, labels = self._index.search(np.ascontiguousarray(queries, dtype=np.float32), n, params=params)
        return labels


def _faiss_reason(exc: BaseException) -> str:
    """The gist of a faiss error on one line: what follows its "Error: ..." source location."""
    text = " ".join(str(exc).split())
    reason = text.split(" Error: ", 1)[-1] if " Error: " in text else text.rsplit(": ", 1)[-1]
    return reason if len(reason) <= 160 else reason[:157] + "..."


def _free_bytes(directory: Path) -> int:
    try:
        return shutil.disk_usage(directory).free
    except OSError:
        return 1 << 62


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def ann_top_rows(
    ann: AnnIndex,
    matrix: np.ndarray,
    queries: np.ndarray,
    k: int,
    min_score: float | None,
    ef: int,
    dedupe: Callable[[list[int], int], list[int]] | None,
    exact: Callable[[np.ndarray], list[tuple[list[int], list[float]]]],
    screen: Screen | None = None,
) -> list[tuple[list[int], list[float]]]:
    """Per (unit) query, (rows, scores) of its best ``k`` candidates by exact cosine, best first, ties by row.

    ``dedupe(rows, k)`` keeps the first row per group (as the exact path does); ``exact(queries)`` answers
    the queries whose window would reach a quarter of the bank (see the module docstring); ``screen``
    verifies the candidates' rows on first touch and says which to leave out.
    """
    count = matrix.shape[0]
    floor = -np.inf if min_score is None else float(min_score)
    results: list[tuple[list[int], list[float]] | None] = [None] * len(queries)
    pending = list(range(len(queries)))
    window = max(4 * k, ef)
    while pending:
        if window * _EXACT_SHARE >= count:
            for i, found in zip(pending, exact(queries[pending]), strict=True):
                results[i] = found
            break
        labels = ann.candidates(queries[pending], window, max(ef, window))
        if screen is not None:
            screen.touch(labels[(labels >= 0) & (labels < count)])
        unfinished = []
        for i, cand in zip(pending, labels, strict=True):
            rows = np.unique(cand[(cand >= 0) & (cand < count)])  # sorted: ties by row below
            # The exact path's rescoring, pair by pair (not a broadcast): the same row gets the same score.
            scores = np.einsum("ij,ij->i", matrix[rows], queries[np.full(len(rows), i)])
            sane = keep_sane(screen, rows, scores)
            if sane is not None:
                rows, scores = rows[sane], scores[sane]
            order = np.lexsort((rows, -scores))
            rows, scores = rows[order], scores[order]
            keep = scores >= floor
            reached_floor = not keep.all()
            rows, scores = rows[keep].tolist(), scores[keep].tolist()
            kept = dedupe(rows, k) if dedupe is not None else rows[:k]
            if len(kept) < k and not reached_floor and cand[-1] >= 0:
                unfinished.append(i)  # dedupe or a short list left it short, and rows below may still count
                continue
            score_of = dict(zip(rows, scores, strict=True))
            results[i] = (kept, [score_of[r] for r in kept])
        pending = unfinished
        window *= 4
    return results  # type: ignore[return-value]
