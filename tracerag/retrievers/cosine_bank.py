"""A persisted, memory-mapped, exact-cosine vector store (experience memory bank, RAG chunk store).

Why exact search: at up to ~1M x 512 rows one BLAS matrix-vector product streams the whole matrix at
memory bandwidth (tens of milliseconds), which is fast enough and never loses a neighbour the way an
approximate index can. The bank is a plain directory::

    manifest.json    {"format_version": 1, "embedder": id, "dim", "count", "created", "updated"}
    embeddings.npy   float32 (count, dim), rows L2-normalised, opened with mmap
    ids.json         list[str], unique, row order
    metadata.jsonl   one JSON object per row, row order

Every version of a bank is written into a fresh temporary sibling directory and swapped in with
renames, so a crash leaves the old or the new bank complete, and a version is never modified once
visible. Readers read all files of one load through one directory handle, so a concurrent swap cannot
mix files from two versions, and banks that are already open keep their (unlinked) memory map.
Writers serialise on a sibling lock file (``.<name>.lock``); readers never lock. Metadata lines are
decoded lazily, per hit, so opening a large bank does not parse every row's JSON.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import functools
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from .embedders import Embedder, l2_normalize

try:  # POSIX only; without it writers are not serialised (documented single-writer fallback)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["BankError", "CosineBank", "Hit", "Progress"]

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
EMBEDDINGS = "embeddings.npy"
IDS = "ids.json"
METADATA = "metadata.jsonl"

# A progress callback receives (rows done, rows total); True means a tqdm bar on stderr.
Progress = Callable[[int, int], None] | bool | None

_WRITE_CHUNK = 65_536  # rows normalised/written at a time by from_vectors (bounds temporary memory)
_BLOCK_ROWS = 1024  # rows per GEMM block for batched queries: a 2 MiB slab OpenBLAS packs cheaply
_PARALLEL_MIN_BYTES = 64 << 20  # below this the matrix is cache-resident and per-query GEMV wins
_GEMM_MIN_QUERIES = 64  # from here on one plain GEMM amortises OpenBLAS' packing of the matrix
_LOAD_ATTEMPTS = 20  # a load that races a writer's swap retries (10 ms apart)


class BankError(RuntimeError):
    """A bank directory is missing, inconsistent or does not match the embedder it is used with."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result; ``metadata`` is a fresh dict decoded for this hit (safe to mutate)."""

    id: str
    score: float
    row: int
    metadata: dict[str, Any] = field(hash=False)


# ---------------------------------------------------------------------------------------------
# Reading one version.


@dataclass(eq=False)
class _Snapshot:
    """One immutable on-disk version, fully validated."""

    path: Path
    manifest: dict[str, Any]
    matrix: np.ndarray  # (count, dim) float32, C-contiguous, read-only (memory-mapped when count > 0)
    ids: list[str]
    rows: dict[str, int]
    meta_raw: bytes
    meta_ends: np.ndarray  # int64 offset of each row's terminating newline in meta_raw

    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def dim(self) -> int:
        return int(self.manifest["dim"])

    def metadata(self, row: int) -> dict[str, Any]:
        start = int(self.meta_ends[row - 1]) + 1 if row > 0 else 0
        line = self.meta_raw[start : int(self.meta_ends[row])]
        return _json_object(line, f"{self.path / METADATA}: line {row + 1} is")


def _json_object(raw: bytes, where: str) -> dict[str, Any]:
    """Decode one JSON object, or raise BankError naming where it came from ("file:" or "file: line 3 is")."""
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise BankError(f"{where} not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise BankError(f"{where} a {type(value).__name__}, not a JSON object")
    return value


class _Dir:
    """Opens files relative to one directory handle, so every file comes from the same version."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        if os.open in os.supports_dir_fd:
            self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))

    def open(self, name: str, mode: str = "rb") -> IO[Any]:
        if self.fd is None:  # pragma: no cover - platforms without dir_fd
            return open(self.path / name, mode)
        fd = self.fd
        return open(name, mode, opener=lambda p, flags: os.open(p, flags, dir_fd=fd))

    def same_as_path(self) -> bool:
        """Whether ``path`` still names the directory we opened (False after a concurrent swap)."""
        if self.fd is None:  # pragma: no cover
            return True
        try:
            a, b = os.fstat(self.fd), os.stat(self.path)
        except FileNotFoundError:
            return False
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class _Raced(Exception):
    """The directory was swapped while being read; the load is retried."""


def _read_snapshot(path: Path, is_backup: bool = False) -> _Snapshot:
    try:
        d = _Dir(path)
    except FileNotFoundError as exc:  # vanished between the caller's check and here (a swap)
        raise _Raced from exc
    try:
        return _read_files(d)
    except FileNotFoundError as exc:
        if is_backup or not d.same_as_path():  # a writer removes the backup right after its swap
            raise _Raced from exc
        raise BankError(f"{path}: missing {Path(exc.filename or '?').name} ({exc.strerror})") from exc
    finally:
        d.close()


def _read_files(d: _Dir) -> _Snapshot:
    path = d.path
    with d.open(MANIFEST) as f:
        raw_manifest = f.read()
    manifest = _json_object(raw_manifest, f"{path / MANIFEST}:")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise BankError(f"{path / MANIFEST}: format_version is {version!r}, this library reads {FORMAT_VERSION}")
    for key, kind in (("embedder", str), ("dim", int), ("count", int)):
        if not isinstance(manifest.get(key), kind) or isinstance(manifest.get(key), bool):
            raise BankError(f"{path / MANIFEST}: {key!r} missing or not a {kind.__name__}: {manifest.get(key)!r}")
    count, dim = manifest["count"], manifest["dim"]
    if count < 0 or dim <= 0:
        raise BankError(f"{path / MANIFEST}: invalid count={count} / dim={dim}")

    with d.open(EMBEDDINGS) as f:
        matrix = _map_npy(f, path / EMBEDDINGS, count, dim)

    with d.open(IDS) as f:
        raw_ids = f.read()
    try:
        ids = json.loads(raw_ids)
    except ValueError as exc:
        raise BankError(f"{path / IDS}: not valid JSON ({exc})") from exc
    if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids):
        raise BankError(f"{path / IDS}: expected a JSON list of strings")
    if len(ids) != count:
        raise BankError(f"{path / IDS}: holds {len(ids)} ids but {MANIFEST} says count={count}")
    rows = {x: i for i, x in enumerate(ids)}
    if len(rows) != len(ids):
        dupes = sorted(x for x, c in Counter(ids).items() if c > 1)[:5]
        raise BankError(f"{path / IDS}: ids are not unique, e.g. {dupes}")

    with d.open(METADATA) as f:
        meta_raw = f.read()
    ends = np.flatnonzero(np.frombuffer(meta_raw, dtype=np.uint8) == 0x0A).astype(np.int64)
    if meta_raw and not meta_raw.endswith(b"\n"):
        raise BankError(
            f"{path / METADATA}: truncated (last line has no newline); {len(ends)} complete lines, "
            f"{MANIFEST} says count={count}"
        )
    if len(ends) != count:
        raise BankError(f"{path / METADATA}: holds {len(ends)} lines but {MANIFEST} says count={count}")
    return _Snapshot(path, manifest, matrix, ids, rows, meta_raw, ends)


def _read_npy_header(f: IO[bytes]) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran_order, dtype); leaves ``f`` at the first data byte."""
    fmt = np.lib.format
    version = fmt.read_magic(f)
    if version == (1, 0):
        return fmt.read_array_header_1_0(f)
    if version == (2, 0):
        return fmt.read_array_header_2_0(f)
    raise ValueError(f"unsupported .npy version {version}")


def _map_npy(f: IO[bytes], where: Path, count: int, dim: int) -> np.ndarray:
    """Validate the .npy header and memory-map the data (from the open handle, not the path)."""
    try:
        shape, fortran, dtype = _read_npy_header(f)
    except ValueError as exc:
        raise BankError(f"{where}: not a readable .npy file ({exc})") from exc
    if dtype != np.dtype(np.float32) or fortran or len(shape) != 2:
        raise BankError(
            f"{where}: expected a C-ordered float32 matrix, got dtype={dtype}, shape={shape}, fortran_order={fortran}"
        )
    if shape[1] != dim:
        raise BankError(f"{where}: rows have dim {shape[1]} but {MANIFEST} says dim={dim}")
    if shape[0] != count:
        raise BankError(f"{where}: holds {shape[0]} rows but {MANIFEST} says count={count}")
    offset = f.tell()
    size = os.fstat(f.fileno()).st_size
    expected = offset + count * dim * 4
    if size != expected:
        raise BankError(f"{where}: file is {size} bytes, header promises {expected} (truncated or padded)")
    if count == 0:
        return np.zeros((0, dim), dtype=np.float32)
    mapped = np.memmap(f, dtype=np.float32, mode="r", offset=offset, shape=(count, dim), order="C")
    return mapped.view(np.ndarray)  # plain ndarray view (cheaper slicing); keeps the mmap alive via .base


# ---------------------------------------------------------------------------------------------
# Writing versions atomically.


def _backup_path(target: Path) -> Path:
    return target.parent / f".{target.name}.old"


def _tmp_prefix(target: Path) -> str:
    return f".{target.name}.tmp-"


@contextlib.contextmanager
def _writer_lock(target: Path) -> Iterator[None]:
    target.parent.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover
        yield
        return
    with open(target.parent / f".{target.name}.lock", "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - e.g. Windows cannot open directories
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on directories
        pass
    finally:
        os.close(fd)


def _recover(target: Path) -> None:
    """Finish what a crashed writer left behind (caller holds the writer lock)."""
    backup = _backup_path(target)
    if backup.exists():
        if target.exists():  # crashed after the swap, before removing the old version
            shutil.rmtree(backup, ignore_errors=True)
        else:  # crashed between the two renames: the old version is complete, put it back
            logger.warning("restoring %s from %s left by an interrupted write", target, backup)
            os.rename(backup, target)
            _fsync_dir(target.parent)
    for stale in target.parent.glob(_tmp_prefix(target) + "*"):
        shutil.rmtree(stale, ignore_errors=True)


def _swap_in(tmp: Path, target: Path) -> None:
    """Make ``tmp`` the bank at ``target``; at every instant one complete version exists on disk."""
    if not target.exists():
        os.rename(tmp, target)
        _fsync_dir(target.parent)
        return
    backup = _backup_path(target)
    os.rename(target, backup)
    try:
        os.rename(tmp, target)
    except BaseException:
        os.rename(backup, target)
        raise
    _fsync_dir(target.parent)
    shutil.rmtree(backup, ignore_errors=True)


def _write_version(target: Path, write: Callable[[Path], None]) -> None:
    """Write a complete version into a temp sibling directory (same filesystem), fsync it, swap it in."""
    tmp = Path(tempfile.mkdtemp(prefix=_tmp_prefix(target), dir=target.parent))
    try:
        write(tmp)
        _fsync_dir(tmp)
        _swap_in(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _fsync_file(f: IO[Any]) -> None:
    f.flush()
    os.fsync(f.fileno())


def _write_npy_header(f: IO[bytes], rows: int, dim: int) -> None:
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)), "fortran_order": False, "shape": (rows, dim)}
    np.lib.format.write_array_header_1_0(f, header)


def _write_rows(f: IO[bytes], vectors: np.ndarray, dim: int, what: str) -> None:
    vectors = np.asarray(vectors)
    if vectors.ndim != 2 or vectors.shape[1] != dim:
        raise BankError(f"{what}: expected vectors of shape (n, {dim}), got {vectors.shape}")
    if not np.isfinite(vectors).all():
        raise BankError(f"{what}: vectors contain NaN or infinity")
    # The embedder contract promises unit rows; renormalising is cheap and protects the cosine invariant.
    f.write(np.ascontiguousarray(l2_normalize(vectors), dtype="<f4").tobytes())


def _write_json(path: Path, value: Any) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(value, ensure_ascii=False) + "\n")  # dumps: C encoder; dump() streams in Python
        _fsync_file(f)


def _metadata_lines(metadata: Sequence[dict[str, Any]], first_row: int) -> bytes:
    out = []
    for i, item in enumerate(metadata):
        try:
            out.append(json.dumps(item, ensure_ascii=False, separators=(",", ":")))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"metadata for row {first_row + i} is not JSON-serialisable: {exc}") from exc
    return ("\n".join(out) + "\n").encode("utf-8") if out else b""


def _write_metadata(path: Path, head: bytes, tail: bytes) -> None:
    with open(path, "wb") as f:
        f.write(head)
        f.write(tail)
        _fsync_file(f)


def _copy_range(src: IO[bytes], dst: IO[bytes], offset: int, length: int) -> None:
    """Copy ``length`` bytes from ``src`` at ``offset`` to the end of ``dst`` (in-kernel when possible)."""
    dst.flush()
    src_fd, dst_fd = src.fileno(), dst.fileno()
    done = 0
    if hasattr(os, "copy_file_range"):
        try:
            while done < length:
                n = os.copy_file_range(src_fd, dst_fd, length - done, offset + done)
                if n == 0:
                    break
                done += n
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM):
                raise
    dst.seek(0, os.SEEK_END)
    src.seek(offset + done)
    while done < length:
        chunk = src.read(min(8 << 20, length - done))
        if not chunk:
            raise BankError(f"{src.name}: ended {length - done} bytes early while copying")
        dst.write(chunk)
        done += len(chunk)


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")


def _manifest(embedder_id: str, dim: int, count: int, created: str | None = None) -> dict[str, Any]:
    now = _now()
    return {"format_version": FORMAT_VERSION, "embedder": embedder_id, "dim": dim, "count": count,
            "created": created or now, "updated": now}


# ---------------------------------------------------------------------------------------------
# Input checks and embedding.


def _check_rows(
    ids: Sequence[str], n: int, metadata: Sequence[dict[str, Any]] | None, what: str
) -> tuple[list[str], list[dict[str, Any]] | None]:
    ids = list(ids)
    if not all(isinstance(x, str) for x in ids):
        raise ValueError("ids must be strings")
    if len(ids) != n:
        raise ValueError(f"got {len(ids)} ids but {n} {what}")
    if len(set(ids)) != len(ids):
        dupes = sorted(x for x, c in Counter(ids).items() if c > 1)
        raise ValueError(f"duplicate ids in one call: {dupes[:5]}")
    if metadata is not None:
        metadata = list(metadata)
        if len(metadata) != n:
            raise ValueError(f"got {len(metadata)} metadata entries but {n} {what}")
        bad = next((i for i, m in enumerate(metadata) if not isinstance(m, dict)), None)
        if bad is not None:
            raise ValueError(f"metadata[{bad}] is a {type(metadata[bad]).__name__}, expected a dict")
    return ids, metadata


def _progress_callback(progress: Progress, total: int) -> tuple[Callable[[int], None], Callable[[], None]]:
    """(advance(n_done), close) for a user callback, a tqdm bar on stderr, or nothing."""
    if progress is True:
        from tqdm import tqdm

        bar = tqdm(total=total, file=sys.stderr, unit="text", desc="embedding")
        return (lambda done: bar.update(done - bar.n)), bar.close
    if callable(progress):
        return (lambda done: progress(done, total)), lambda: None
    return (lambda done: None), lambda: None


def _embed_into(
    f: IO[bytes], embedder: Embedder, texts: list[str], batch_size: int, progress: Progress, where: str
) -> None:
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    advance, close = _progress_callback(progress, len(texts))
    try:
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            vectors = embedder.embed(batch)
            if len(vectors) != len(batch):
                raise BankError(
                    f"{where}: embedder {embedder.id!r} returned {len(vectors)} rows for {len(batch)} texts"
                )
            _write_rows(f, vectors, embedder.dim, f"{where} (embedder {embedder.id!r})")
            advance(start + len(batch))
    finally:
        close()


# ---------------------------------------------------------------------------------------------
# Scoring.

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_blas_limiter: Any = None  # threadpoolctl limiter while any search holds BLAS at one thread
_blas_holders = 0


def _workers() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        n = os.cpu_count() or 1
    return max(1, min(n, 8))


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_workers(), thread_name_prefix="cosine-bank")
        return _pool


@functools.cache
def _blas_controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()  # scanning the loaded libraries costs ~0.3 ms: do it once


@contextlib.contextmanager
def _single_threaded_blas() -> Iterator[None]:
    """Hold BLAS at one thread; reference-counted so overlapping searches restore the original limit once.

    (Nesting plain threadpoolctl limits from several threads would restore in the wrong order and could
    leave the process stuck at one BLAS thread.) The limit is process-wide while held.
    """
    global _blas_limiter, _blas_holders
    with _pool_lock:
        if _blas_holders == 0:
            _blas_limiter = _blas_controller().limit(limits=1, user_api="blas")
        _blas_holders += 1
    try:
        yield
    finally:
        with _pool_lock:
            _blas_holders -= 1
            if _blas_holders == 0:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


def _scores(matrix: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """(q, count) float32 cosine scores, streaming the matrix from memory once wherever possible.

    Matrices larger than the cache (the bandwidth-bound case), fewer than ``_GEMM_MIN_QUERIES`` queries:
    our own thread per core over a contiguous row range, with BLAS limited to one thread. One query is
    then a GEMV per range (memory bandwidth, like OpenBLAS' threaded GEMV); a few queries are GEMMs over
    2 MiB row blocks, ~2x one query for 4 (one threaded GEMM re-packs the whole matrix for a handful of
    columns: ~3x). Keeping all threading ours also avoids OpenBLAS workers that spin for ~0.1 s after
    each threaded call and then compete with our threads. Cache-resident matrices: BLAS-threaded GEMV
    per query. Many queries: one plain GEMM, where packing is amortised.
    """
    nq, count = queries.shape[0], matrix.shape[0]
    out = np.empty((nq, count), dtype=np.float32)
    workers = _workers()
    if nq >= _GEMM_MIN_QUERIES:
        np.matmul(queries, matrix.T, out=out)
    elif matrix.nbytes < _PARALLEL_MIN_BYTES or workers == 1:
        for j in range(nq):
            np.matmul(matrix, queries[j], out=out[j])
    else:
        pool = _get_pool()
        bounds = np.linspace(0, count, workers + 1).astype(int).tolist()

        def part(lo: int, hi: int) -> None:
            if nq == 1:
                np.matmul(matrix[lo:hi], queries[0], out=out[0, lo:hi])
                return
            for i in range(lo, hi, _BLOCK_ROWS):
                e = min(i + _BLOCK_ROWS, hi)
                np.matmul(queries, matrix[i:e].T, out=out[:, i:e])

        with _single_threaded_blas():
            for fut in [pool.submit(part, lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]:
                fut.result()
    return out


def _group_key(snap: _Snapshot, row: int, key: str) -> Any:
    value = snap.metadata(row).get(key, _MISSING)
    if value is _MISSING:
        return (_MISSING, row)  # rows without the key are never merged
    try:
        hash(value)
        return (type(value).__name__, value)
    except TypeError:
        return ("json", json.dumps(value, sort_keys=True, ensure_ascii=False))


_MISSING = object()


def _top_rows(snap: _Snapshot, scores: np.ndarray, k: int, min_score: float | None, dedupe_by: str | None) -> list[int]:
    """Rows of the best ``k`` scores (>= min_score), best first, ties by row; optional group dedupe."""
    if min_score is not None:
        cand = np.flatnonzero(scores >= min_score)
        cand_scores = scores[cand]
    else:
        cand, cand_scores = None, scores
    n = cand_scores.shape[0]
    if n == 0:
        return []
    # With dedupe, look at a window of the best m rows and widen it until k distinct groups are found:
    # the first row of each group inside the window is that group's best row overall.
    m = min(n, k if dedupe_by is None else 4 * k)
    while True:
        part = np.argpartition(cand_scores, n - m)[n - m :] if m < n else np.arange(n)  # the m largest
        order = part[np.lexsort((part, -cand_scores[part]))]
        rows = order if cand is None else cand[order]
        if dedupe_by is None:
            return [int(r) for r in rows[:k]]
        kept: list[int] = []
        seen: set[Any] = set()
        for r in rows.tolist():
            g = _group_key(snap, r, dedupe_by)
            if g not in seen:
                seen.add(g)
                kept.append(r)
                if len(kept) == k:
                    return kept
        if m == n:
            return kept
        m = min(n, m * 4)


# ---------------------------------------------------------------------------------------------
# The bank.


class CosineBank:
    """Exact cosine search over a persisted bank; see the module docstring for the directory layout.

    Build with :meth:`create` (texts + embedder) or :meth:`from_vectors` (precomputed vectors), open
    with :meth:`load`, grow with :meth:`append` / :meth:`append_vectors`. An instance always reads one
    immutable version; ``append`` moves this instance to the new version, other open instances keep
    theirs until :meth:`refresh`.
    """

    def __init__(self, snapshot: _Snapshot, embedder: Embedder | None = None, directory: Path | None = None) -> None:
        self._snap = snapshot
        self._directory = directory or snapshot.path
        self.embedder = embedder
        self._write_lock = threading.Lock()

    # -- construction ----------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        directory: str | Path,
        embedder: Embedder,
        ids: Sequence[str],
        texts: Sequence[str],
        metadata: Sequence[dict[str, Any]] | None = None,
        *,
        batch_size: int = 256,
        progress: Progress = None,
        overwrite: bool = False,
    ) -> CosineBank:
        """Embed ``texts`` in batches and write a new bank (metadata defaults to ``{"text": text}``).

        An existing bank at ``directory`` is replaced atomically only with ``overwrite=True``.
        """
        texts = list(texts)
        if not all(isinstance(t, str) for t in texts):
            raise ValueError("texts must be strings")
        ids, metadata = _check_rows(ids, len(texts), metadata, "texts")
        meta = metadata if metadata is not None else [{"text": t} for t in texts]
        target = Path(directory)
        dim = embedder.dim

        def write(tmp: Path) -> None:
            with open(tmp / EMBEDDINGS, "wb") as f:
                _write_npy_header(f, len(ids), dim)
                _embed_into(f, embedder, texts, batch_size, progress, str(target))
                _fsync_file(f)
            _write_json(tmp / IDS, ids)
            _write_metadata(tmp / METADATA, b"", _metadata_lines(meta, 0))
            _write_json(tmp / MANIFEST, _manifest(embedder.id, dim, len(ids)))

        cls._write_new(target, write, overwrite)
        logger.info("created bank %s: %d rows embedded with %s", target, len(ids), embedder.id)
        return cls.load(target, embedder)

    @classmethod
    def from_vectors(
        cls,
        directory: str | Path,
        vectors: np.ndarray,
        ids: Sequence[str],
        metadata: Sequence[dict[str, Any]] | None = None,
        *,
        embedder_id: str,
        embedder: Embedder | None = None,
        overwrite: bool = False,
    ) -> CosineBank:
        """Low-level constructor from precomputed (n, dim) vectors, normalised here; no embedding.

        ``embedder_id`` is recorded in the manifest; pass ``embedder`` too if the bank should be able
        to embed (``search_texts`` / ``append``).
        """
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[1] == 0:
            raise ValueError(f"vectors must have shape (n, dim), got {vectors.shape}")
        n, dim = vectors.shape
        ids, metadata = _check_rows(ids, n, metadata, "vectors")
        meta = metadata if metadata is not None else [{} for _ in range(n)]
        if embedder is not None and (embedder.id != embedder_id or embedder.dim != dim):
            raise BankError(f"embedder {embedder.id!r} (dim {embedder.dim}) does not match {embedder_id!r} (dim {dim})")
        target = Path(directory)

        def write(tmp: Path) -> None:
            with open(tmp / EMBEDDINGS, "wb") as f:
                _write_npy_header(f, n, dim)
                for start in range(0, n, _WRITE_CHUNK):
                    _write_rows(f, vectors[start : start + _WRITE_CHUNK], dim, str(target))
                _fsync_file(f)
            _write_json(tmp / IDS, ids)
            _write_metadata(tmp / METADATA, b"", _metadata_lines(meta, 0))
            _write_json(tmp / MANIFEST, _manifest(embedder_id, dim, n))

        cls._write_new(target, write, overwrite)
        return cls.load(target, embedder)

    @staticmethod
    def _write_new(target: Path, write: Callable[[Path], None], overwrite: bool) -> None:
        with _writer_lock(target):
            _recover(target)
            if target.exists():
                if not target.is_dir():
                    raise BankError(f"{target}: exists and is not a directory")
                is_bank = (target / MANIFEST).exists()
                if is_bank and not overwrite:
                    raise BankError(f"{target}: a bank already exists; pass overwrite=True to replace it or use append")
                if not is_bank and any(target.iterdir()):
                    raise BankError(f"{target}: exists, is not empty and holds no {MANIFEST}; refusing to replace it")
            _write_version(target, write)

    @classmethod
    def load(cls, directory: str | Path, embedder: Embedder | None = None) -> CosineBank:
        """Open and validate a bank; ``embedder`` (optional) must match the manifest's id and dim."""
        target = Path(directory)
        snap = cls._load_snapshot(target)
        if embedder is not None:
            _check_embedder(snap, embedder)
        return cls(snap, embedder, target)

    @staticmethod
    def _load_snapshot(target: Path) -> _Snapshot:
        for _ in range(_LOAD_ATTEMPTS):
            for path in (target, _backup_path(target)):  # the backup is complete if a writer died mid-swap
                if not path.is_dir():
                    continue
                try:
                    return _read_snapshot(path, is_backup=path != target)
                except _Raced:
                    break
            else:
                if not target.exists():
                    raise BankError(f"{target}: no bank (directory does not exist)")
                if not target.is_dir():
                    raise BankError(f"{target}: not a directory")
            time.sleep(0.01)
        raise BankError(f"{target}: kept changing while loading (concurrent writers?)")

    def refresh(self) -> CosineBank:
        """Move this instance to the newest version on disk (e.g. after another process appended)."""
        snap = self._load_snapshot(self._directory)
        if self.embedder is not None:
            _check_embedder(snap, self.embedder)
        self._snap = snap
        return self

    # -- growth ----------------------------------------------------------------------------------

    def append(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        metadata: Sequence[dict[str, Any]] | None = None,
        *,
        batch_size: int = 256,
        progress: Progress = None,
    ) -> int:
        """Embed and add the rows whose id is not in the bank yet; returns how many were added.

        Existing ids are skipped, not updated. Cost: embedding the new texts, an in-kernel copy of the
        old ``embeddings.npy``/``metadata.jsonl`` bytes (no re-read through Python, no re-embedding)
        and rewriting ``ids.json``.
        """
        embedder = self._require_embedder()
        texts = list(texts)
        if not all(isinstance(t, str) for t in texts):
            raise ValueError("texts must be strings")
        ids, metadata = _check_rows(ids, len(texts), metadata, "texts")
        meta = metadata if metadata is not None else [{"text": t} for t in texts]

        def new_rows(f: IO[bytes], keep: list[int]) -> None:
            _embed_into(f, embedder, [texts[i] for i in keep], batch_size, progress, str(self._directory))

        return self._append(ids, meta, new_rows)

    def append_vectors(
        self, ids: Sequence[str], vectors: np.ndarray, metadata: Sequence[dict[str, Any]] | None = None
    ) -> int:
        """Like :meth:`append` with precomputed vectors (normalised here); returns how many were added."""
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"vectors must have shape (n, {self.dim}), got {vectors.shape}")
        ids, metadata = _check_rows(ids, len(vectors), metadata, "vectors")
        meta = metadata if metadata is not None else [{} for _ in ids]

        def new_rows(f: IO[bytes], keep: list[int]) -> None:
            for start in range(0, len(keep), _WRITE_CHUNK):
                _write_rows(f, vectors[keep[start : start + _WRITE_CHUNK]], self.dim, str(self._directory))

        return self._append(ids, meta, new_rows)

    def _append(
        self, ids: list[str], meta: list[dict[str, Any]], new_rows: Callable[[IO[bytes], list[int]], None]
    ) -> int:
        target = self._directory
        with self._write_lock, _writer_lock(target):
            _recover(target)
            if _read_manifest(target) != self._snap.manifest:  # another writer got there first: build on theirs
                self.refresh()
            snap = self._snap
            keep = [i for i, x in enumerate(ids) if x not in snap.rows]
            if not keep:
                return 0
            total = snap.count + len(keep)
            new_ids = [ids[i] for i in keep]
            tail = _metadata_lines([meta[i] for i in keep], snap.count)

            def write(tmp: Path) -> None:
                with open(tmp / EMBEDDINGS, "wb") as f:
                    _write_npy_header(f, total, snap.dim)
                    if snap.count:  # target holds exactly this snapshot's version (checked above)
                        with open(target / EMBEDDINGS, "rb") as src:
                            _read_npy_header(src)
                            _copy_range(src, f, src.tell(), snap.count * snap.dim * 4)
                    f.seek(0, os.SEEK_END)
                    new_rows(f, keep)
                    _fsync_file(f)
                _write_json(tmp / IDS, snap.ids + new_ids)
                _write_metadata(tmp / METADATA, snap.meta_raw, tail)
                manifest = _manifest(snap.manifest["embedder"], snap.dim, total, created=snap.manifest.get("created"))
                _write_json(tmp / MANIFEST, manifest)

            _write_version(target, write)
            self._snap = self._load_snapshot(target)
        logger.info("appended %d rows to %s (%d skipped as present)", len(keep), target, len(ids) - len(keep))
        return len(keep)

    def _require_embedder(self) -> Embedder:
        if self.embedder is None:
            raise BankError(f"{self._directory}: bank was loaded without an embedder; pass one to CosineBank.load")
        return self.embedder

    # -- search ----------------------------------------------------------------------------------

    def search(
        self,
        query_vectors: np.ndarray,
        k: int = 10,
        min_score: float | None = 0.1,
        dedupe_by: str | None = None,
    ) -> list[list[Hit]]:
        """Top-``k`` rows per query by cosine, best first (one list per query, also for a 1-D query).

        Rows scoring below ``min_score`` are dropped (None keeps all). ``dedupe_by`` names a metadata
        key: only the best row per value is kept (rows lacking the key are never merged); the default
        dedupes by id, which is a no-op because ids are unique.
        """
        snap = self._snap
        q = np.asarray(query_vectors, dtype=np.float32)
        if q.ndim == 1:
            q = q[None, :]
        if q.ndim != 2 or q.shape[1] != snap.dim:
            raise ValueError(f"query vectors must have shape (q, {snap.dim}) or ({snap.dim},), got {q.shape}")
        if not np.isfinite(q).all():
            raise ValueError("query vectors contain NaN or infinity")
        if k <= 0 or snap.count == 0 or q.shape[0] == 0:
            return [[] for _ in range(q.shape[0])]
        scores = _scores(snap.matrix, np.ascontiguousarray(l2_normalize(q)))
        key = None if dedupe_by in (None, "id") else dedupe_by
        results = []
        for i in range(q.shape[0]):
            rows = _top_rows(snap, scores[i], k, min_score, key)
            results.append([Hit(snap.ids[r], float(scores[i, r]), r, snap.metadata(r)) for r in rows])
        return results

    def search_texts(
        self, texts: Sequence[str], k: int = 10, min_score: float | None = 0.1, dedupe_by: str | None = None
    ) -> list[list[Hit]]:
        """Embed ``texts`` in one call with the bank's embedder, then :meth:`search`."""
        texts = list(texts)
        if not texts:
            return []
        return self.search(self._require_embedder().embed(texts), k=k, min_score=min_score, dedupe_by=dedupe_by)

    # -- access ----------------------------------------------------------------------------------

    @property
    def directory(self) -> Path:
        return self._directory

    @property
    def manifest(self) -> dict[str, Any]:
        return dict(self._snap.manifest)

    @property
    def embedder_id(self) -> str:
        return str(self._snap.manifest["embedder"])

    @property
    def dim(self) -> int:
        return self._snap.dim

    @property
    def ids(self) -> list[str]:
        return list(self._snap.ids)

    @property
    def vectors(self) -> np.ndarray:
        """The (count, dim) read-only, memory-mapped matrix."""
        return self._snap.matrix

    def row_of(self, id: str) -> int:
        try:
            return self._snap.rows[id]
        except KeyError:
            raise KeyError(f"{id!r} is not in bank {self._directory}") from None

    def metadata(self, row: int) -> dict[str, Any]:
        snap = self._snap
        if not 0 <= row < snap.count:
            raise IndexError(f"row {row} out of range for a bank of {snap.count}")
        return snap.metadata(row)

    def __len__(self) -> int:
        return self._snap.count

    def __contains__(self, id: object) -> bool:
        return id in self._snap.rows

    def __deepcopy__(self, memo: dict) -> CosineBank:
        return self

    def __repr__(self) -> str:
        return f"CosineBank({str(self._directory)!r}, count={len(self)}, dim={self.dim}, embedder={self.embedder_id!r})"


def _read_manifest(target: Path) -> Any:
    try:
        return json.loads((target / MANIFEST).read_bytes())
    except (OSError, ValueError):
        return None


def _check_embedder(snap: _Snapshot, embedder: Embedder) -> None:
    where = snap.path / MANIFEST
    if embedder.id != snap.manifest["embedder"]:
        raise BankError(f"{where}: bank was built with embedder {snap.manifest['embedder']!r}, got {embedder.id!r}")
    if embedder.dim != snap.dim:
        raise BankError(f"{where}: bank has dim {snap.dim}, embedder {embedder.id!r} has dim {embedder.dim}")

