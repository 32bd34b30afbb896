"""An approximate (HNSW) index beside a bank's exact rows: faiss-cpu's HNSW graph, an optional extra.

Why: one exact query streams the whole matrix (~50-100 ms at 1M x 512 rows on 2 cores); an HNSW graph
visits a few thousand rows instead. Why faiss: measured against hnswlib and usearch on the same data
behind the same rescoring (``benchmarks/bench_ann.py``, BENCHMARKS.md "The approximate index against its
engine, at 1M x 128"): hnswlib answers one query faster at the same recall, but it keeps the vectors
inside its graph (a second copy beside the bank's rows) and its last release (0.8.0, 2023) ships no
wheels (it compiles C++ at install); usearch's float32 build was the slowest. faiss-cpu ships wheels for
every platform, is already what the Milvus extra installs, and its flat storage can be a view of memory
it does not own, so the graph reads the bank's own rows and the vectors are held once.

The index is two files inside a bank version, written before its manifest (so the manifest's checksums
cover them) and never changed afterwards, like every other file of a version:

    ann.faiss   the graph alone (faiss IndexHNSWFlat written without its storage); label i is row i of
                embeddings.npy, which is what the graph reads when searching
    ann.json    {"kind": "faiss-hnsw", "count", "m", "ef_construction"}

(Earlier releases wrote kind ``faiss-hnsw-flat``: the graph with its own copy of the vectors. Such a file
still reads; the copy is dropped for the bank's rows.)

The graph only proposes candidates: they are rescored with the bank's exact float32 rows (the same
arithmetic as the exact path's rescoring), so a row found by both paths has the same score, and
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
import itertools
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidValue, TraceragError
from .bank_search import RESCORE_MARGIN, SCORE_LIMIT, Screen, keep_sane, rescore, rescore_one

ANN_FILE = "ann.faiss"
ANN_INFO = "ann.json"
KIND = "faiss-hnsw"  # the graph alone: its vectors are the version's embeddings.npy
_KIND_WITH_VECTORS = "faiss-hnsw-flat"  # written by earlier releases: the graph and a copy of the vectors
DEFAULT_M = 16  # graph degree (32 links per row on the bottom layer)
DEFAULT_EF_CONSTRUCTION = 128  # candidate list while building (recall 0.991 at 1M clustered rows, ef 256)
DEFAULT_EF = 256  # candidate list while searching: see BENCHMARKS.md for recall and time per value
ANN_MIN_ROWS = 50_000  # below this many rows a bank searches exactly even when it has an index
_EXACT_SHARE = 4  # a window reaching count / 4 rows is answered by the exact scan instead
_ONE_THREAD_ROWS = 20_000  # fewer rows than this are added by one thread (starting threads costs more)
_THREADED_QUERIES = 256  # batches of at least this many queries are searched on every CPU
_TIE_ROWS = 2  # candidates asked for past the k-th: enough to see that nothing ties with it (else: the window)


class AnnUnavailable(TraceragError, ImportError):
    """faiss-cpu is not installed (the ``ann`` extra)."""


_loaded: list[Any] = []  # the faiss module once imported (every search asks for it)


def _faiss() -> Any:
    if _loaded:
        return _loaded[0]
    # faiss' OpenMP threads spin while they wait unless told otherwise: on a busy 2-core machine that made
    # builds 3-20x slower (measured). A user's own setting wins; it must be set before OpenMP loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import faiss
    except ImportError as exc:
        raise AnnUnavailable("approximate search needs faiss-cpu: pip install 'tracerag[ann]'") from exc
    _loaded.append(faiss)
    return faiss


class AnnIndex:
    """An HNSW graph over rows ``0..count-1`` of one bank version (see the module docstring).

    The graph reads the bank's own rows (:meth:`share`): faiss' flat storage is made a view of the bank's
    memory-mapped matrix, so the vectors are held once (the pages of ``embeddings.npy``, which exact search
    and the rescoring read too). Only between a build or an append and :meth:`share` does faiss own a copy.
    """

    def __init__(self, index: Any, m: int, ef_construction: int) -> None:
        self._index = index
        self.m = m
        self.ef_construction = ef_construction
        self._storage: Any = None  # the flat storage the graph reads; Python owns it (the index does not)
        self._matrix: np.ndarray | None = None  # the bank rows that storage is a view of (kept alive with it)
        self._params: dict[int, Any] = {}  # efSearch -> SearchParametersHNSW (read-only, shared by searches)
        self._count = int(index.ntotal)  # read per search: kept here (a SWIG attribute costs microseconds)
        if index.storage is not None and index.own_fields:
            self._storage = index.storage
            self._storage.this.acquire()  # freed with this object or when replaced by share(), not by the index
            index.own_fields = False

    @classmethod
    def build(cls, matrix: np.ndarray, m: int = DEFAULT_M, ef_construction: int = DEFAULT_EF_CONSTRUCTION,
              progress: Callable[[int, int], None] | None = None) -> AnnIndex:
        """A new graph over every row of ``matrix`` (unit rows; inner product is cosine), all CPUs.

        Every row goes to faiss in one call: faiss inserts the rows of one call level by level, highest
        first, several at a time, and rows handed over in chunks made a different, worse graph (recall@10
        0.4-2 points lower at 1M rows: BENCHMARKS.md). The graph then reads ``matrix`` itself (:meth:`share`).
        """
        if m < 2 or ef_construction < 1:
            raise InvalidValue(f"m must be >= 2 and ef_construction >= 1, got m={m}, ef_construction={ef_construction}")
        faiss = _faiss()
        index = faiss.IndexHNSWFlat(int(matrix.shape[1]), int(m), faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = int(ef_construction)
        ann = cls(index, m, ef_construction)
        ann.add(matrix, progress)
        ann.share(matrix)
        return ann

    @classmethod
    def read(cls, directory: Path, matrix: np.ndarray) -> AnnIndex | None:
        """The index stored in a version directory over its rows ``matrix`` (None when it has none).

        A graph written by an older release carries its own copy of the vectors (kind ``faiss-hnsw-flat``):
        it is read too, and the copy is dropped for the bank's rows.
        """
        try:
            info = json.loads((directory / ANN_INFO).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise InvalidValue(f"{directory / ANN_INFO}: not readable JSON ({exc})") from exc
        if not isinstance(info, dict) or info.get("kind") not in (KIND, _KIND_WITH_VECTORS):
            raise InvalidValue(f"{directory / ANN_INFO}: kind {info.get('kind') if isinstance(info, dict) else info!r} "
                               f"is not {KIND!r}")
        faiss = _faiss()
        count = len(matrix)
        try:
            index = faiss.read_index(str(directory / ANN_FILE))
        except RuntimeError as exc:  # faiss' message names its C++ source, not the problem's fix
            raise InvalidValue(f"{directory / ANN_FILE}: not a readable faiss index ({_faiss_reason(exc)}); "
                               "rebuild it with CosineBank.build_ann()") from None
        if not hasattr(index, "hnsw") or index.d != matrix.shape[1]:
            raise InvalidValue(f"{directory / ANN_FILE}: not an HNSW graph over rows of dim {matrix.shape[1]}; "
                               "rebuild it with CosineBank.build_ann()")
        if index.ntotal != count or info.get("count") != count:
            raise InvalidValue(f"{directory / ANN_FILE}: covers {index.ntotal} rows ({ANN_INFO} says "
                               f"{info.get('count')}), the bank has {count}")
        ann = cls(index, int(info.get("m", DEFAULT_M)), int(info.get("ef_construction", DEFAULT_EF_CONSTRUCTION)))
        ann.share(matrix)
        return ann

    def write(self, directory: Path) -> None:
        """Write ``ann.faiss`` (the graph alone: its vectors are the version's rows) and ``ann.json`` into a
        version being written (before its manifest)."""
        faiss = _faiss()
        try:
            faiss.write_index(self._index, str(directory / ANN_FILE), faiss.IO_FLAG_SKIP_STORAGE)
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
        return self._count

    @property
    def shares_rows(self) -> bool:
        """Whether the graph reads the bank's rows in place (False: faiss holds its own copy of them)."""
        return self._matrix is not None

    def share(self, matrix: np.ndarray) -> None:
        """Make the graph read ``matrix`` (this version's rows 0..count-1) instead of a copy of its own.

        The copy is freed. A faiss whose storage is a plain vector (no ``MaybeOwnedVector``) cannot read
        memory it does not own: there it gets a copy of ``matrix`` (held twice, as before this existed).
        """
        if matrix.shape != (self.count, self._index.d):
            raise InvalidValue(f"the graph covers {self.count} rows of dim {self._index.d}, "
                               f"the matrix has shape {matrix.shape}")
        faiss = _faiss()
        rows = np.ascontiguousarray(matrix, dtype=np.float32)
        storage = faiss.IndexFlatIP(int(rows.shape[1]))
        codes = storage.codes
        if hasattr(codes, "view_data"):  # a MaybeOwnedVector: point it at the rows, no copy
            address = faiss.swig_ptr(rows.reshape(-1).view(np.uint8))
            codes.is_owned = False
            codes.view_data = codes.c_ptr = address
            codes.view_size = codes.c_size = rows.nbytes
            storage.ntotal = len(rows)
            shared: np.ndarray | None = rows
        else:  # pragma: no cover - a faiss without MaybeOwnedVector
            storage.add(rows)
            shared = None
        self._index.storage = storage
        self._storage, self._matrix = storage, shared  # the old storage (a copy, or another view) is freed

    def add(self, rows: np.ndarray, progress: Callable[[int, int], None] | None = None) -> None:
        """Append rows (labels continue from :attr:`count`): an append to the bank adds its new rows here.

        The rows go in in one call (see :meth:`build`). While the graph reads the bank's rows, faiss first
        gets its own copy of them (it cannot grow a view); :meth:`share` with the new version's rows drops it.
        """
        faiss = _faiss()
        total = len(rows)
        if self._matrix is not None:
            owned = faiss.IndexFlatIP(int(self._index.d))
            owned.add(self._matrix)
            self._index.storage = owned
            self._storage, self._matrix = owned, None
        faiss.omp_set_num_threads(1 if total < _ONE_THREAD_ROWS else _cpus())
        if progress is not None:
            progress(0, total)
        if total:
            self._index.add(np.ascontiguousarray(rows, dtype=np.float32))
            self._count = int(self._index.ntotal)
        if progress is not None:
            progress(total, total)

    def candidates(self, queries: np.ndarray, n: int, ef: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, rows), each (q, n): the rows the graph proposes per (unit) query, best first, with their
        inner products as faiss computed them; row -1 pads a short list."""
        faiss = _faiss()
        n = min(n, self.count)
        # One thread unless the batch is large: faiss splits a batch's queries over OpenMP threads, and on a
        # busy 2-core machine a batch of 32 took 0.3 s that way against ~30 ms on one thread (measured).
        faiss.omp_set_num_threads(1 if len(queries) < _THREADED_QUERIES else _cpus())
        breadth = int(max(ef, n))
        params = self._params.get(breadth)
        if params is None:
            params = self._params.setdefault(breadth, faiss.SearchParametersHNSW(efSearch=breadth))
        # faiss' own call without its Python wrapper's checks (done here once: unit float32 rows of dim d).
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        scores = np.empty((len(queries), n), dtype=np.float32)
        rows = np.empty((len(queries), n), dtype=np.int64)
        self._index.search_c(len(queries), faiss.swig_ptr(queries), n, faiss.swig_ptr(scores), faiss.swig_ptr(rows),
                             params)
        return scores, rows


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

    faiss scores the candidates with the very rows the bank holds, so only those within
    :data:`~.bank_search.RESCORE_MARGIN` of a query's k-th best faiss score can be among its k best.
    Without dedupe, faiss is asked for the best ``k + 2`` of its ``ef`` candidates (asking for ``ef`` of
    them costs 10-25% more time in faiss), those within the margin are rescored (for the whole batch at
    once), and a query they leave short (rows left out, ``min_score``, ties past those asked for) goes through
    :func:`_window_top_rows`, which asks for the whole window and rescores every candidate.
    """
    count = matrix.shape[0]
    window = max(4 * k, ef)
    if window * _EXACT_SHARE >= count:
        return exact(queries)
    floor = -np.inf if min_score is None else float(min_score)
    if dedupe is not None:
        return _window_top_rows(ann, matrix, queries, k, floor, ef, dedupe, exact, screen, window)
    found, labels = ann.candidates(queries, k + _TIE_ROWS, ef)
    if len(queries) == 1:  # the same steps as below with fewer numpy calls (a third of the bank's own time)
        one = _one_top_rows(matrix, queries, k, floor, screen, found[0], labels[0])
        return [one] if one is not None else _window_top_rows(ann, matrix, queries, k, floor, ef, None, exact,
                                                               screen, window)
    valid = (labels >= 0) & (labels < count)
    kth = np.where(valid[:, k - 1], found[:, k - 1], -np.inf)  # faiss lists valid rows first, best first
    near = valid & (found >= (kth - RESCORE_MARGIN)[:, None])
    query_of, at = np.nonzero(near)
    rows = labels[query_of, at]
    if screen is not None:
        screen.touch(rows)
    scores = rescore(matrix, queries, query_of, rows)
    sane = keep_sane(screen, rows, scores)
    keep = scores >= floor if sane is None else sane & (scores >= floor)
    order = np.lexsort((rows, -scores, query_of))
    order = order[keep[order]]
    query_of, rows, scores = query_of[order], rows[order].tolist(), scores[order].tolist()
    bounds = np.searchsorted(query_of, np.arange(len(queries) + 1)).tolist()
    tied_to_the_end = near[:, -1].tolist()  # rows past those asked for may tie with the k-th
    results: list[tuple[list[int], list[float]]] = []
    short = []
    for i, (a, b) in enumerate(itertools.pairwise(bounds)):
        if b - a < k or tied_to_the_end[i]:  # the next candidates decide (or the query has fewer than k)
            short.append(i)
            results.append(([], []))
        else:
            results.append((rows[a : a + k], scores[a : a + k]))
    if short:
        for i, one in zip(short, _window_top_rows(ann, matrix, queries[short], k, floor, ef, None, exact, screen,
                                                  window), strict=True):
            results[i] = one
    return results


def _one_top_rows(matrix: np.ndarray, queries: np.ndarray, k: int, floor: float, screen: Screen | None,
                  found: np.ndarray, labels: np.ndarray) -> tuple[list[int], list[float]] | None:
    """:func:`ann_top_rows` of one query from its candidates (``found``: faiss' scores, best first); None
    when they leave it short. A dozen rows: looked at and sorted as Python lists, which costs less than
    numpy's calls on them."""
    scores_asked = found.tolist()
    low = float(found[k - 1] - RESCORE_MARGIN)  # in float32, as the batch path compares
    end = k
    while end < len(scores_asked) and scores_asked[end] >= low:  # usually none: rows tied with the k-th
        end += 1
    if end == len(scores_asked):  # rows past those asked for may tie with the k-th too
        return None
    found_rows = labels[:end].tolist()
    if found_rows[-1] < 0 or max(found_rows) >= len(matrix):  # -1 pads a short list at its end
        return None
    if screen is not None:
        screen.touch(found_rows)
    rows = labels[:end]
    exact = rescore_one(matrix, queries[0], rows)
    scores = exact.tolist()
    if not all(-SCORE_LIMIT <= x <= SCORE_LIMIT for x in scores) or (  # NaN fails it too
            screen is not None and screen.excluded is not None):
        sane = keep_sane(screen, rows, exact)
        if sane is not None:
            keep = sane.tolist()
            scores = [x for x, ok in zip(scores, keep, strict=True) if ok]
            found_rows = [r for r, ok in zip(found_rows, keep, strict=True) if ok]
    # Best first, ties by row: (-score, row) tuples compare as that order without a key function (rows are
    # distinct, so the score itself, kept as computed, is never compared).
    best = sorted(zip(map(float.__neg__, scores), found_rows, scores, strict=True))
    if floor > -np.inf:
        best = [entry for entry in best if entry[2] >= floor]
    if len(best) < k:
        return None
    best = best[:k]
    return [r for _, r, _ in best], [x for _, _, x in best]


def _window_top_rows(
    ann: AnnIndex,
    matrix: np.ndarray,
    queries: np.ndarray,
    k: int,
    floor: float,
    ef: int,
    dedupe: Callable[[list[int], int], list[int]] | None,
    exact: Callable[[np.ndarray], list[tuple[list[int], list[float]]]],
    screen: Screen | None,
    window: int,
) -> list[tuple[list[int], list[float]]]:
    """:func:`ann_top_rows` by rescoring every candidate of a query's window; a query whose window cannot
    fill ``k`` (after dedupe) is widened fourfold (see the module docstring)."""
    count = matrix.shape[0]
    results: list[tuple[list[int], list[float]] | None] = [None] * len(queries)
    pending = list(range(len(queries)))
    while pending:
        if window * _EXACT_SHARE >= count:
            for i, found in zip(pending, exact(queries[pending]), strict=True):
                results[i] = found
            break
        labels = ann.candidates(queries[pending], window, max(ef, window))[1]
        unfinished = []
        for i, cand in zip(pending, labels, strict=True):
            rows = np.unique(cand[(cand >= 0) & (cand < count)])  # sorted: ties by row below
            if screen is not None:
                screen.touch(rows)
            scores = rescore_one(matrix, queries[i], rows)
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
