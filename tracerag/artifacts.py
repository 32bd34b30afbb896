"""Compiled-program artifacts: DSPy JSON state plus a metadata sidecar, the file format every program shares.

`save_artifact` writes `<file>` (the predictors' instructions and demos, DSPy's own format) and
`<file>.meta.json` (program name, config, retriever parameters, dataset, metric, scores), so a program's
package can rebuild the whole program for an app, retriever knobs included. ``tracerag.save`` and
``tracerag.load`` (``registry``) find that package by the program's name; what each program records and how it
is rebuilt is its package's ``artifact`` module.

The store a program searches is recorded as ``"store"``: a reference that reopens it on another machine
and never holds a secret or a path into the user's cache (see :func:`store_reference`):

    bundled:pubmedqa           the bundled PubMedQA abstracts, ingested into the cache on first use
    cache:banks/<name>         a bank inside tracerag's cache directory
    exp.json.bank              a path relative to the artifact's directory (a store saved beside it)
    /data/banks/traces         an absolute path elsewhere (the user's own)
    milvus:exp.db              Milvus Lite, the same rules for its file
    milvus://host:19530        a Milvus server (the token stays in TRACERAG_MILVUS_TOKEN)

``load(artifact, store=URI)`` opens another store instead.

Durability (every write through :func:`~tracerag.data_files.durable.write_durably`): a kill at any moment of
``save`` leaves the previous complete artifact or the new complete one, and a failed save (a full disk) leaves
the previous one as it was, with an error naming the file ("disk full"). The sidecar records the SHA-256 of
the program file it belongs to (``"program_sha256"``), and ``save`` commits the two files in this order:

1. the new sidecar is written beside the old one, as ``.<file>.meta.json.next``;
2. the program file is replaced (``write_durably``);
3. the new sidecar is renamed over the old one (the commit; a rename needs no disk space).

A save killed before 2 leaves the old pair (the ``.next`` file matches no program file and is ignored); one
killed between 2 and 3 leaves the new program file beside the ``.next`` sidecar that matches it, which
``load`` uses (and renames into place). Saves into one directory take turns (a lock on the directory), and
each removes the temp file a killed save's write left behind. ``load``
verifies the checksum, so a program file and a sidecar from two different saves (copied together by hand, or
edited) are refused with one line naming the file, never loaded as a mix; a sidecar without a checksum
(written before this) is trusted as before. Both files are read only when they are regular files of a sane
size (``read_report.open_regular``): a FIFO, a directory or a socket at the path is an error naming it, at once.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import json
import logging
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

from .data_files.durable import DurableWriteError, fsync_dir, sha256_of, verify_sha256, write_durably
from .data_files.read_report import FileProblem, open_regular, read_capped, read_regular
from .errors import FileMissing, InvalidType, InvalidValue

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: saves do not take turns
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
CHECKSUM_KEY = "program_sha256"  # in the sidecar: the SHA-256 of the program file it belongs to
PROGRAM_MAX_BYTES = 256 * 1024 * 1024  # a program file (demos may hold images); larger is refused, not read
META_MAX_BYTES = 16 * 1024 * 1024


def meta_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".meta.json")


def next_meta_path(path: str | Path) -> Path:
    """Where ``save`` writes the new sidecar before it replaces the program file (see the module docstring)."""
    path = Path(path)
    return path.with_name(f".{path.name}.meta.json.next")


def save_artifact(program, path: str | Path, description: dict, *, dataset: str | None = None,
                  metric: str | None = None, scores: dict | None = None, extra: dict | None = None) -> Path:
    """Write the program state and its sidecar, durably (see the module docstring); returns the sidecar path.
    ``description``: what, beyond the prompts, rebuilds the program (its package's ``describe``), with
    ``"program"`` and ``"config"``.

    Nothing is written until both files are rendered, so a state or metadata that is not JSON fails with the
    previous artifact untouched; a write that fails (``DurableWriteError``, "disk full") leaves it too."""
    path = Path(path)
    if path.suffix != ".json":
        raise InvalidValue(f"{path}: an artifact is a JSON file; name it *.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    state = program_state_bytes(program, path)
    meta = {"format_version": FORMAT_VERSION, **description, "dataset": dataset, "metric": metric,
            "scores": scores or {}, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **(extra or {}),
            CHECKSUM_KEY: sha256_of(state)}
    try:
        text = json.dumps(meta, indent=2, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidType(f"{meta_path(path)}: the metadata is not JSON ({exc}); nothing was written") from None
    sidecar, pending = meta_path(path), next_meta_path(path)
    with _saves_take_turns(path.parent):
        _remove_killed_writes(path)
        written = pending
        try:
            write_durably(pending, text)  # 1. the new sidecar, beside the old one
            written = path
            write_durably(path, state)  # 2. the program file
        except OSError as exc:
            if written == path:  # the old pair is intact: the new sidecar is no use
                pending.unlink(missing_ok=True)
            raise _not_saved(path, written, exc) from exc
        try:
            os.replace(pending, sidecar)  # 3. the commit
            fsync_dir(path.parent)
        except OSError as exc:  # the new pair loads (load uses the .next sidecar); say it was not finished
            raise _not_saved(path, sidecar, exc, committed=True) from exc
    return sidecar


def _remove_killed_writes(path: Path) -> None:
    """Remove the temp files of this artifact's writes that a killed save left (``write_durably``'s
    ``.<file>.XXXXXXXX.tmp``); the caller holds the directory's lock, so no save is writing them."""
    for target in (path, next_meta_path(path)):
        pattern = re.compile(rf"\.{re.escape(target.name)}\.[A-Za-z0-9_]{{8}}\.tmp")
        for leftover in path.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
            if pattern.fullmatch(leftover.name) and leftover.is_file() and not leftover.is_symlink():
                leftover.unlink(missing_ok=True)


def _not_saved(path: Path, written: Path, exc: OSError, committed: bool = False) -> DurableWriteError:
    """One line: the artifact, the file that failed, why ("disk full"), and what is left."""
    full = exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
    why = "disk full" if full else (os.strerror(exc.errno) if exc.errno else str(exc))
    left = ("the new program file is in place and loads with its sidecar " + str(next_meta_path(path))
            if committed else "the previous artifact is intact")
    return DurableWriteError(exc.errno, f"{path}: not saved ({why}, writing {written}); {left}")


def program_state_bytes(program, path: str | Path = "program.json") -> bytes:
    """The program file's bytes exactly as DSPy's ``program.save(path)`` writes a ``.json`` state (its
    predictors' state plus the dependency versions), rendered in memory so it can be written durably."""
    import orjson
    from dspy.utils.saving import get_dependency_versions

    state = program.dump_state()
    state["metadata"] = {"dependency_versions": get_dependency_versions()}
    try:
        return orjson.dumps(state, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    except TypeError as exc:
        raise InvalidType(f"{path}: the program's state is not JSON ({exc}); nothing was written") from None


@contextlib.contextmanager
def _saves_take_turns(directory: Path, blocking: bool = True) -> Iterator[bool]:
    """An exclusive lock on ``directory`` (yields whether it was taken: a non-blocking try may fail), so two
    saves into one directory never interleave their files. Where directories cannot be locked, True."""
    if fcntl is None:  # pragma: no cover
        yield True
        return
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - cannot open the directory to lock it
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
            taken = True
        except BlockingIOError:
            taken = False
        except OSError:  # pragma: no cover - a filesystem without locks (some network mounts)
            taken = blocking
        yield taken
    finally:
        os.close(fd)  # releases the lock


def store_fields(store, where: Path | None) -> dict:
    """``{"store": reference}``: where the program's store is, relative to the artifact when beside it."""
    if store is None:
        return {"store": None}
    return {"store": store_reference(store.describe(), where)}


def _cache_dir() -> Path | None:
    try:
        from .config import Settings

        return Settings.resolve().cache_dir
    except Exception:  # no settings: nothing is in the cache
        return None


def _bundled_bank(directory: Path) -> str | None:
    """``bundled:pubmedqa`` when ``directory`` is where the bundled abstracts are ingested for some embedder."""
    if directory.name.startswith("pubmedqa-") and directory.parent.name == "banks":
        cache = _cache_dir()
        if cache is not None and directory.parent.resolve() == (cache / "banks").resolve():
            return "bundled:pubmedqa"
    return None


def _portable_path(path: Path, where: Path | None) -> str:
    """``path`` relative to the artifact's directory when inside it, ``cache:<relative>`` inside the cache
    directory, else absolute."""
    path = path.resolve()
    if where is not None and path.is_relative_to(where.resolve()):
        return os.path.relpath(path, where.resolve())
    cache = _cache_dir()
    if cache is not None and path.is_relative_to(cache.resolve()):
        return "cache:" + path.relative_to(cache.resolve()).as_posix()
    return str(path)


def store_reference(info, where: Path | None = None) -> str:
    """The reference an artifact records for the store described by ``info`` (a StoreInfo): see the module
    docstring. ``where`` is the artifact's directory."""
    from .stores.vector_store import parse_store_uri

    if info.backend == "numpy":
        directory = Path(info.uri)
        return _bundled_bank(directory.resolve()) or _portable_path(directory, where)
    if info.backend == "milvus-lite":
        target = parse_store_uri(info.uri)
        suffix = info.uri[info.uri.index("?"):] if "?" in info.uri else ""
        return "milvus:" + _portable_path(Path(target.location), where) + suffix
    return info.uri  # a server: host and collection only, never the token


def resolve_store_reference(reference: str, artifact: str | Path | None, embedder=None, kind: str | None = None):
    """A store URI (or, for ``bundled:pubmedqa``, the opened store) from a recorded reference; relative
    paths are resolved against the artifact's directory."""
    base = Path(artifact).resolve().parent if artifact is not None else Path.cwd()
    if reference == "bundled:pubmedqa":
        from .tools.pubmed_corpus import open_pubmedqa_bank

        return open_pubmedqa_bank(embedder)
    if reference.startswith("cache:"):
        cache = _cache_dir()
        if cache is None:
            raise InvalidValue(f"{reference}: no cache directory configured")
        return str(cache / reference[len("cache:"):])
    if reference.startswith("milvus:") and not reference.startswith("milvus://"):
        path, _, query = reference[len("milvus:"):].partition("?")
        if path.startswith("cache:"):
            cache = _cache_dir()
            path = str(cache / path[len("cache:"):]) if cache is not None else path
        elif not Path(path).expanduser().is_absolute():
            path = str(base / path)
        return f"milvus:{path}" + (f"?{query}" if query else "")
    if "://" in reference or Path(reference).expanduser().is_absolute():
        return reference
    return str(base / reference)


_REQUIRED = {"program": str, "config": dict}  # every sidecar; a program's own fields its package checks


def read_meta(path: str | Path) -> dict:
    """The sidecar's metadata; anything unusable (not JSON, a required key missing or of the wrong type, an
    unknown program, not a regular file) is one ValueError line naming the sidecar. No artifact at all at
    ``path`` (neither file) is one line saying so."""
    sidecar = meta_path(path)
    if not os.path.lexists(sidecar):
        if not os.path.lexists(path):
            raise FileMissing(f"{path}: no such artifact (neither the file nor its {sidecar.name} sidecar is there)")
        if not Path(path).is_file():  # a FIFO or a directory: say so, not "no sidecar"
            _read_program_file(path)
        raise FileMissing(f"{sidecar}: metadata sidecar missing; was {path} written by tracerag.save?")
    return _read_sidecar(sidecar, path)


def _read_sidecar(sidecar: Path, path: str | Path) -> dict:
    try:
        text = read_regular(sidecar, META_MAX_BYTES)
    except FileProblem as exc:
        if not os.path.lexists(sidecar):
            raise FileMissing(f"{sidecar}: metadata sidecar missing; was {path} written by tracerag.save?"
                              ) from None
        raise InvalidValue(str(exc)) from None
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidValue(f"{sidecar}: invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise InvalidValue(f"{sidecar}: invalid JSON (nested too deeply)") from None
    except ValueError as exc:  # an integer past Python's digit limit
        raise InvalidValue(f"{sidecar}: invalid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise InvalidValue(f"{sidecar}: expected a JSON object, got {type(meta).__name__}")
    if meta.get("format_version") != FORMAT_VERSION:
        raise InvalidValue(f"{sidecar}: format_version {meta.get('format_version')} is not {FORMAT_VERSION}")
    for key, kind in _REQUIRED.items():
        if key not in meta:
            raise InvalidValue(f"{sidecar}: field {key!r} is missing; was {path} written by tracerag.save?")
        if not isinstance(meta[key], kind):
            raise InvalidValue(f"{sidecar}: field {key!r}: expected {'a string' if kind is str else 'an object'}, "
                               f"got {type(meta[key]).__name__}")
    if not isinstance(meta.get(CHECKSUM_KEY, ""), str):
        raise InvalidValue(f"{sidecar}: field {CHECKSUM_KEY!r}: expected a string, "
                           f"got {type(meta[CHECKSUM_KEY]).__name__}")
    return meta


def _read_program_file(path: str | Path) -> bytes:
    """The program file's bytes, when it is a regular file of at most PROGRAM_MAX_BYTES (never blocking on a
    FIFO); else one ValueError line naming it (FileNotFoundError when it is missing)."""
    try:
        with open_regular(path, FileProblem, PROGRAM_MAX_BYTES) as f:
            data = read_capped(f, PROGRAM_MAX_BYTES)
    except FileProblem:
        if not os.path.lexists(path):
            raise FileMissing(f"{path}: program file missing; its sidecar {meta_path(path)} is there") from None
        raise
    if len(data) > PROGRAM_MAX_BYTES:  # it grew after the check
        raise FileProblem(f"{path}: over the {PROGRAM_MAX_BYTES:,}-byte limit for one file")
    return data


def read_artifact(path: str | Path) -> tuple[dict, bytes]:
    """(the metadata, the program file's bytes) of one complete save, checked against each other.

    The sidecar's checksum must match the program file. When it does not, a ``.next`` sidecar that matches is
    a save killed just before its commit: its metadata is used (and renamed into place when no save is
    running). Otherwise the pair is read again (a save may have committed between the two reads) and then
    refused: one ValueError line naming the program file and its sidecar."""
    path = Path(path)
    for _ in range(3):
        meta = read_meta(path)
        data = _read_program_file(path)
        recorded = meta.get(CHECKSUM_KEY)
        if recorded is not None:
            try:
                verify_sha256(data, recorded, path)
                return meta, data
            except ValueError as exc:
                mismatch = exc
        pending = _matching_pending(path, data)
        if pending is not None:
            _finish_commit(path, data)
            return pending, data
        if recorded is None:  # a sidecar written before checksums, and no save of ours stopped half-way
            return meta, data
    raise InvalidValue(f"{mismatch} (the checksum is in {meta_path(path)}: a program file and a sidecar from two "
                       f"different saves are refused; for a program file edited by hand, delete {CHECKSUM_KEY!r} "
                       "from the sidecar)") from None


def _matching_pending(path: Path, data: bytes) -> dict | None:
    """The ``.next`` sidecar's metadata when it is usable and records ``data``'s checksum, else None."""
    pending = next_meta_path(path)
    if not os.path.lexists(pending):
        return None
    try:
        meta = _read_sidecar(pending, path)
    except (OSError, ValueError):
        return None
    return meta if meta.get(CHECKSUM_KEY) == sha256_of(data) else None


def _finish_commit(path: Path, data: bytes) -> None:
    """Rename the ``.next`` sidecar that matches ``data`` over the sidecar, as the killed save would have; skipped
    when a save is running (it will) or the directory cannot be written (loading does not need it)."""
    try:
        with _saves_take_turns(path.parent, blocking=False) as mine:
            if mine and _matching_pending(path, data) is not None and _read_program_file(path) == data:
                os.replace(next_meta_path(path), meta_path(path))
                fsync_dir(path.parent)
                logger.info("%s: finished a save that was stopped before its sidecar was in place", path)
    except (OSError, ValueError) as exc:
        logger.debug("%s: left the .next sidecar as it is: %s", path, exc)


def apply_state(program, path: Path, data: bytes) -> None:
    """Load the program file's verified ``data`` into ``program`` as DSPy's ``program.load`` does (a warning
    for each dependency whose version differs from the one it was saved with)."""
    import orjson
    from dspy.utils.saving import get_dependency_versions

    try:
        state = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InvalidValue(f"{path}: invalid JSON ({exc})") from None
    if not isinstance(state, dict):
        raise InvalidValue(f"{path}: expected a JSON object, got {type(state).__name__}")
    saved = (state.get("metadata") or {}).get("dependency_versions") or {}
    current = get_dependency_versions()
    for key, version in saved.items():
        if key in current and current[key] != version:
            logger.warning("%s was saved with %s==%s; this environment has %s==%s (the program may behave "
                           "differently)", path, key, version, key, current[key])
    program.load_state(state)


def store_source(path, meta: dict, embedder, chosen, *, required: bool = False):
    """What to open: the caller's store (as given), else the recorded reference resolved (or None; with
    ``required``, a ValueError naming the artifact)."""
    if chosen is not None:
        return chosen
    recorded = meta.get("store")
    if not recorded:
        if required:
            raise InvalidValue(f"{path}: no store given and the artifact records none")
        return None
    return resolve_store_reference(str(recorded), path, embedder)


def rebuilt(path: str | Path, meta: dict, state: bytes, rebuild, *, embedder=None, **app):
    """The program an artifact holds: ``rebuild(path, meta, embedder=, **app)`` (its package's), checked to use
    the embedder it was built with, with its prompts and demos loaded from ``state``."""
    path = Path(path)
    if meta.get("embedder"):
        from .config import get_embedder

        embedder = embedder or get_embedder()
        if embedder.id != meta["embedder"]:
            raise InvalidValue(f"{path} was built with embedder {meta['embedder']!r} but {embedder.id!r} is "
                               "configured; configure the same embedder (vectors of two embedders cannot be mixed)")
    program = rebuild(path, meta, embedder=embedder, **app)
    apply_state(program, path, state)
    return program


def load_program(path: str | Path, program_class: str, rebuild, **app):
    """``tracerag.load`` for one program: the artifact at ``path`` must hold a ``program_class``."""
    meta, state = read_artifact(path)
    if meta["program"] != program_class:
        raise InvalidValue(f"{meta_path(path)}: holds a {meta['program']}, not a {program_class}")
    return rebuilt(path, meta, state, rebuild, **app)
