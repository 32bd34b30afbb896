"""A Milvus Lite store's files, looked at from outside the engine: the mark a writer killed mid-flush
leaves, the first file the engine cannot read, and which process holds the store's lock.

A Milvus Lite file (a directory in Lite 3) is looked at before the engine opens it: a collection holding a
write-ahead log the engine already applied to its files is the mark of a writer killed between the two
steps of a flush, after which Lite serves those rows twice (same sequence number: its own dedup keeps
both; :func:`_lite_crash_marks`). An engine that fails to load a collection has its files checked (JSON,
Parquet footers, index files' sizes: :func:`_lite_damage`), and a damaged file is one
:class:`~.milvus_errors.StoreDamaged` line saying what to do for what it holds (:func:`_damaged`): a
damaged index file (derived data; Lite writes them in place, so a kill leaves them truncated) is deleted
and the engine rebuilds it; a damaged file of the word index or its journal drops that collection, rebuilt
from the rows; a damaged file of the rows themselves is to be restored from a copy, or deleted and its
rows ingested again. Milvus Lite admits one process per store: :func:`_lock_holder` names the process
holding its lock, for :class:`~.milvus_errors.StoreLocked`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from .milvus_errors import StoreDamaged, _one_line
from .milvus_words import BM25_SUFFIX, POSTINGS_SUFFIX
from .vector_store import StoreTarget


def _lock_holder(path: Path) -> str | None:
    """None when no process holds the Lite file's lock (Milvus Lite ``flock``s ``<file>/LOCK``), else who does:
    "pid N: command line" from ``/proc/locks``, else from this user's ``/proc/*/fd``, else "pid unknown"."""
    lock = path / "LOCK"
    try:
        import fcntl

        fd = os.open(lock, os.O_RDWR)
    except (ImportError, OSError):
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pass
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
    finally:
        os.close(fd)
    pids = _flock_pids(lock) or _open_by(lock)
    if not pids:
        return "pid unknown"
    return "; ".join(_process(pid) for pid in pids[:3])


def _flock_pids(lock: Path) -> list[int]:
    """The pids ``/proc/locks`` names for flocks on this file (matched by device and inode)."""
    try:
        st = os.stat(lock)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return []
    pids = []
    for line in lines:
        f = line.split()  # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:2236662 0 EOF"; a waiter's has "->" after "1:"
        if len(f) < 6 or f[1] != "FLOCK":
            continue
        try:
            major, minor, inode = f[5].split(":")
            if (int(inode), int(major, 16), int(minor, 16)) == (st.st_ino, os.major(st.st_dev), os.minor(st.st_dev)):
                pids.append(int(f[4]))
        except ValueError:
            continue
    return sorted({p for p in pids if p > 0})


def _open_by(lock: Path) -> list[int]:
    """This user's processes with the file open (``/proc/*/fd``; no lsof)."""
    target, pids = str(lock.resolve()), []
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            if os.stat(f"/proc/{entry}").st_uid != os.getuid():
                continue
            if any(os.readlink(f"/proc/{entry}/fd/{fd}") == target for fd in os.listdir(f"/proc/{entry}/fd")):
                pids.append(int(entry))
        except OSError:
            continue
    return pids


def _process(pid: int) -> str:
    if pid == os.getpid():
        return f"pid {pid}: this process"
    try:
        command = " ".join(Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0"))
        command = " ".join(command.split())  # one line, whatever the arguments hold
    except OSError:
        command = ""
    return f"pid {pid}: {command[:80]}" if command else f"pid {pid}"


_WAL_FILE = re.compile(r"wal_(?:data|delta)_(\d+)\.arrow$")


def _lite_crash_marks(path: Path, collection: str) -> dict[str, str]:
    """Collection -> the mark a writer killed mid-flush leaves, read before the engine opens the file: a
    write-ahead log the engine had already applied to its files (numbered below the manifest's active log).
    Milvus Lite replays it and, as those rows keep their sequence numbers, serves them twice."""
    marks = {}
    for name in (collection, collection + BM25_SUFFIX, collection + POSTINGS_SUFFIX):
        wal = path / "collections" / name / "wal"
        try:
            logs = sorted(int(m.group(1)) for f in os.listdir(wal) if (m := _WAL_FILE.match(f)))
        except OSError:
            continue
        if not logs:
            continue
        try:
            active = int(json.loads((wal.parent / "manifest.json").read_text())["active_wal_number"])
        except (OSError, ValueError, KeyError, TypeError):
            active = None
        if active is None or logs[0] < active:
            marks[name] = (f"a writer was killed while flushing {name}: its log {wal} holds writes the engine "
                           "had already applied, which it replays and then holds twice")
    return marks


_DERIVED = ("__bm25", "__words", "__journal")  # collections derived from the rows (milvus_words)


def _collection_of(file: str) -> str | None:
    """The Milvus Lite collection a file of the store belongs to (the directory under ``collections``)."""
    parts = Path(file).parts
    return parts[parts.index("collections") + 1] if "collections" in parts[:-1] else None


def _damaged(target: StoreTarget, file: Path, detail: str) -> StoreDamaged:
    """The one line for a file of a Lite store that cannot be read, with what to do for what it holds."""
    path, name = Path(target.location), _collection_of(str(file)) or ""
    head = f"{path}: damaged (a writer was killed mid-write?): {file} cannot be read ({detail[:160]})"
    if any(suffix in name for suffix in _DERIVED):
        kind, todo = "words", "opening the store drops and rebuilds the word index"
    elif file.suffix in (".idx", ".sidx"):
        kind, todo = "index", f"delete {file} and the engine rebuilds it from the rows (opening the store does this)"
    elif file.name.startswith("manifest.json"):
        kind, todo = "manifest", f"restore {path} from a copy"
    elif file.name == "schema.json":
        kind, todo = "schema", f"restore {path} from a copy"
    else:
        kind, todo = "rows", (f"restore {path} from a copy, or delete {file} to open the store without the rows "
                              "it holds (then ingest them again)")
    return StoreDamaged(f"{head}: {todo}", path=str(path), file=str(file), kind=kind, detail=detail)


def _lite_damage(path: Path, first: str | None = None) -> tuple[Path, str] | None:
    """The first file of a Milvus Lite store the engine cannot read, with why: each collection's schema and
    manifest (JSON; the engine falls back to the previous manifest), the Parquet files the manifest names
    (their footers) and the index files (NumPy headers against the file size, Arrow footers, FAISS reads when
    faiss is installed). Collection ``first`` is looked at first. Only run after the engine failed, so its cost
    (one footer read per file) is paid then."""
    collections = sorted(path.glob("collections/*")) + sorted(path.glob("databases/*/collections/*"))
    collections.sort(key=lambda col: col.name != first)
    for col in collections:
        for check in (_schema_damage, _manifest_damage, _parquet_damage, _index_damage):
            found = check(col)
            if found is not None:
                return found
    return None


def _schema_damage(col: Path) -> tuple[Path, str] | None:
    try:
        json.loads((col / "schema.json").read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        return col / "schema.json", _one_line(e)
    return None


def _manifest(col: Path) -> dict[str, Any] | None:
    for name in ("manifest.json", "manifest.json.prev"):
        try:
            found = json.loads((col / name).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(found, dict):
            return found
    return None


def _manifest_damage(col: Path) -> tuple[Path, str] | None:
    if not (col / "manifest.json").exists() or _manifest(col) is not None:
        return None
    return col / "manifest.json", "neither it nor manifest.json.prev is readable JSON"


def _parquet_damage(col: Path) -> tuple[Path, str] | None:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return None
    manifest = _manifest(col) or {}
    for part, files in (manifest.get("partitions") or {}).items():
        for rel in [*(files.get("data_files") or []), *(files.get("delta_files") or [])]:
            file = col / "partitions" / part / rel
            if not file.exists():
                continue
            try:
                pq.ParquetFile(file).metadata  # noqa: B018 - reading the footer is the check
            except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds for a bad file
                return file, _one_line(e)
    return None


def _index_damage(col: Path) -> tuple[Path, str] | None:
    for file in sorted(col.glob("partitions/*/indexes/*")):
        why = _index_file_damage(file)
        if why:
            return file, why
    return None


def _index_file_damage(file: Path) -> str | None:
    try:
        if file.suffix == ".sidx":
            import pyarrow as pa

            with pa.memory_map(str(file), "r") as source:
                pa.ipc.open_file(source).read_all()
            return None
        if file.suffix != ".idx":
            return None
        with open(file, "rb") as f:
            head = f.read(6)
            if head != b"\x93NUMPY":  # a FAISS index (HNSW, IVF...)
                if importlib.util.find_spec("faiss") is None:
                    return None
                import faiss

                faiss.read_index(str(file))
                return None
            f.seek(0)
            version = np.lib.format.read_magic(f)
            shape, _, dtype = (np.lib.format.read_array_header_1_0(f) if version == (1, 0)
                               else np.lib.format.read_array_header_2_0(f))
            if dtype.hasobject:
                return None
            want = f.tell() + int(np.prod(shape)) * dtype.itemsize
        size = file.stat().st_size
        return None if size == want else f"{size} bytes, its header promises {want}"
    except Exception as e:  # noqa: BLE001 - any failure to read it is the finding
        return _one_line(e) or type(e).__name__
