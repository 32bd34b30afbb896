"""The vector-store protocol: the few operations retrieval programs need, whatever engine holds the rows.

Two backends implement it: the embedded numpy bank (:mod:`.numpy_store`, a directory on local disk, the
default) and Milvus (:mod:`.milvus_store`: Milvus Lite in one local file, or a Milvus server by URI) for
stores that outgrow one machine's memory or need deletes and metadata filters at scale. Programs should
only ever see :class:`VectorStore`, the result dataclasses here and :func:`.stores.open_store`.

A store holds rows ``(id, unit vector, metadata)``: ids are unique non-empty strings, vectors are
L2-normalised on the way in (scores are cosine similarities in [-1, 1], higher is better, comparable
across backends), metadata is a JSON object. Every store records the embedder id and dimension it was
built with and refuses to be opened with another.

Filters are one small, backend-neutral language (see :func:`check_filter`): a mapping of metadata key to
a value (equality) or to a list of values (any of them), all keys ANDed. Each backend translates it
(numpy: a predicate over the row's metadata; Milvus: a boolean expression with escaped literals).

Store URIs (see :func:`parse_store_uri`)::

    ./banks/traces                     a numpy bank directory (the embedded default)
    milvus:./traces.db                 Milvus Lite file (relative or absolute path, must end in .db)
    milvus://host:19530                a Milvus server over plain gRPC/HTTP
    milvus+https://host                a Milvus server over TLS; token from env TRACERAG_MILVUS_TOKEN
    ...?collection=name                (Milvus only) the collection; default "tracerag"
    ...&consistency=session            (Milvus only) read consistency: session (default: this client's
                                       writes are seen at once), strong, bounded or eventually
    ...&ef=256                         (Milvus only) HNSW search breadth once the index is HNSW (default 128)

Credentials never appear in a URI (one in the URI is refused) and so never in ``describe()`` or logs.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import parse_qs, urlsplit

import numpy as np

from ..embedding.embedders import l2_normalize
from ..errors import InvalidValue, TraceragError

__all__ = [
    "DEFAULT_COLLECTION",
    "TOKEN_ENV",
    "Filter",
    "StoreError",
    "StoreHit",
    "StoreInfo",
    "ScanBatch",
    "StoreRow",
    "StoreTarget",
    "UpsertReport",
    "VectorStore",
    "check_filter",
    "parse_store_uri",
]

TOKEN_ENV = "TRACERAG_MILVUS_TOKEN"
DEFAULT_COLLECTION = "tracerag"
# Milvus read consistency: "session" sees this client's own writes at once and costs a bounded read
# (Strong waits for the newest timestamp on every call: ~200 ms a search on a server)
CONSISTENCY_LEVELS = ("strong", "session", "bounded", "eventually")
DEFAULT_CONSISTENCY = "session"

Scalar = str | int | float | bool
Filter = Mapping[str, Scalar | Sequence[Scalar]]


class StoreError(TraceragError, RuntimeError):
    """A store cannot be opened or used as asked (bad URI, wrong embedder, missing store or backend)."""


# ---------------------------------------------------------------------------------------------
# Results.


@dataclass(frozen=True, slots=True)
class StoreHit:
    """One search result: the row's id, its cosine similarity to the query, and its metadata."""

    id: str
    score: float
    metadata: dict[str, Any] = field(hash=False)


@dataclass(frozen=True, slots=True)
class StoreRow:
    """One stored row as :meth:`VectorStore.get` returns it (the vector is the stored unit vector)."""

    id: str
    vector: np.ndarray = field(hash=False, compare=False)
    metadata: dict[str, Any] = field(hash=False)


@dataclass(frozen=True, slots=True)
class ScanBatch:
    """One batch of :meth:`VectorStore.scan`: ids, their metadata and (only with ``with_vectors``) their
    stored unit vectors as a (len(ids), dim) float32 array. Unpacks as ``ids, metadata = batch``."""

    ids: list[str]
    metadata: list[dict[str, Any]] = field(hash=False)
    vectors: np.ndarray | None = field(default=None, hash=False, compare=False)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.ids, self.metadata))

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True, slots=True)
class UpsertReport:
    """What an upsert did: rows written (new or changed) and rows skipped because they were unchanged."""

    written: int
    skipped: int


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """What a store is, safe to log or record in an artifact (never holds a credential)."""

    backend: str  # "numpy", "milvus-lite" or "milvus"
    uri: str  # the URI that reopens this store, without secrets
    embedder_id: str
    dim: int
    collection: str | None = None  # Milvus only
    index: str | None = None  # how search is done: "exact" (numpy), or the Milvus index type


# ---------------------------------------------------------------------------------------------
# The protocol.


@runtime_checkable
class VectorStore(Protocol):
    """The store operations programs use. All batched; all ids are strings; scores are cosine similarities."""

    def upsert(
        self, ids: Sequence[str], vectors: np.ndarray, metadata: Sequence[dict[str, Any]] | None = None
    ) -> UpsertReport:
        """Insert rows, or replace the rows with these ids; rows identical to the stored ones are skipped."""
        ...

    def delete(self, ids: Sequence[str]) -> int:
        """Remove the rows with these ids (unknown ids are ignored); returns how many were removed."""
        ...

    def search(
        self, query_vectors: np.ndarray, k: int = 10, min_score: float | None = None, filter: Filter | None = None
    ) -> list[list[StoreHit]]:
        """Per query (a 1-D vector is one query), the best ``k`` rows by cosine, best first, that score at
        least ``min_score`` and match ``filter``."""
        ...

    def get(self, ids: Sequence[str]) -> list[StoreRow]:
        """The stored rows with these ids (vector and metadata), in the order asked; unknown ids are left out."""
        ...

    def scan(self, batch_size: int = 1000, *, with_vectors: bool = False) -> Iterator[ScanBatch]:
        """Every row, ``batch_size`` at a time (numpy: row order, one version throughout; Milvus: primary-key
        order through a query iterator). For building side indexes (the lexical channel) and copying stores;
        rows written during a scan may or may not show."""
        ...

    def count(self) -> int:
        """How many rows the store holds."""
        ...

    def describe(self) -> StoreInfo:
        """Backend, secret-free URI, embedder id and dimension."""
        ...

    def close(self) -> None:
        """Release connections or handles (the store must not be used afterwards)."""
        ...


# ---------------------------------------------------------------------------------------------
# Row checks shared by the backends.


def check_rows(
    ids: Sequence[str], vectors: np.ndarray, metadata: Sequence[dict[str, Any]] | None, dim: int
) -> tuple[list[str], np.ndarray, list[dict[str, Any]]]:
    """(ids, unit float32 vectors, metadata) checked: unique non-empty string ids, finite non-zero vectors of
    ``dim`` columns, metadata dicts that survive JSON (returned as their JSON round trip)."""
    ids = list(ids)
    if not all(isinstance(x, str) and x for x in ids):
        raise InvalidValue("ids must be non-empty strings")
    if len(set(ids)) != len(ids):
        dupes = sorted(x for x, c in Counter(ids).items() if c > 1)
        raise InvalidValue(f"duplicate ids in one call: {dupes[:5]}")
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[1] != dim:
        raise InvalidValue(f"vectors must have shape (n, {dim}), got {vectors.shape}")
    if len(vectors) != len(ids):
        raise InvalidValue(f"got {len(ids)} ids but {len(vectors)} vectors")
    if not np.isfinite(vectors).all():
        raise InvalidValue("vectors contain NaN or infinity")
    zero = np.flatnonzero(~vectors.any(axis=1))
    if len(zero):
        raise InvalidValue(f"vector of id {ids[int(zero[0])]!r} is all zeros; a stored row must have a direction")
    if metadata is None:
        meta: list[dict[str, Any]] = [{} for _ in ids]
    else:
        meta = list(metadata)
        if len(meta) != len(ids):
            raise InvalidValue(f"got {len(ids)} ids but {len(meta)} metadata entries")
        meta = [_json_object(m, x) for m, x in zip(meta, ids, strict=True)]
    return ids, l2_normalize(vectors), meta


def _json_object(value: Any, id: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidValue(f"metadata of id {id!r} is a {type(value).__name__}, expected a dict")
    try:
        return json.loads(canonical_json(value))
    except (TypeError, ValueError) as e:
        raise InvalidValue(f"metadata of id {id!r} is not JSON-safe: {e}") from None


def canonical_json(metadata: dict[str, Any]) -> str:
    """One JSON text per metadata value (sorted keys, no NaN), so equal metadata hashes equal."""
    return json.dumps(metadata, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def row_hash(vector: np.ndarray, metadata: dict[str, Any]) -> str:
    """sha256 of a stored row's unit float32 vector bytes and canonical metadata JSON: equal hashes mean an
    upsert of that row would change nothing."""
    h = hashlib.sha256(np.ascontiguousarray(vector, dtype="<f4").tobytes())
    h.update(b"\0")
    h.update(canonical_json(metadata).encode("utf-8"))
    return h.hexdigest()


def check_queries(query_vectors: np.ndarray, dim: int) -> np.ndarray:
    """Queries as a (q, dim) float32 array of unit rows (a 1-D vector is one query)."""
    q = np.asarray(query_vectors, dtype=np.float32)
    if q.ndim == 1:
        q = q[None, :]
    if q.ndim != 2 or q.shape[1] != dim:
        raise InvalidValue(f"query vectors must have shape (q, {dim}) or ({dim},), got {q.shape}")
    if not np.isfinite(q).all():
        raise InvalidValue("query vectors contain NaN or infinity")
    return l2_normalize(q)


# ---------------------------------------------------------------------------------------------
# The filter language.

_FILTER_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT64 = 2**63


def check_filter(filter: Filter | None) -> dict[str, tuple[Scalar, ...]] | None:
    """The filter as {key: allowed values}, or None for no filter.

    The language: ``{"source": "faq.md"}`` keeps rows whose metadata ``source`` equals ``"faq.md"``;
    ``{"lang": ["en", "zh"]}`` keeps rows whose ``lang`` is either; several keys must all match. Keys are
    metadata keys (identifiers: letters, digits, underscore); values are str, int, float or bool (no
    None, NaN or nested values); a row lacking the key never matches. Numbers compare by value
    (``1 == 1.0``); do not mix bools and numbers under one key (backends differ on ``True == 1``).
    """
    if filter is None:
        return None
    if not isinstance(filter, Mapping):
        raise InvalidValue(f"filter must be a mapping of metadata key to value(s), got {type(filter).__name__}")
    checked: dict[str, tuple[Scalar, ...]] = {}
    for key, wanted in filter.items():
        if not isinstance(key, str) or not _FILTER_KEY.match(key):
            raise InvalidValue(f"filter key {key!r} must be an identifier (letters, digits, underscore)")
        values = tuple(wanted) if isinstance(wanted, list | tuple | set | frozenset) else (wanted,)
        if not values:
            raise InvalidValue(f"filter key {key!r} has an empty list of values (it could match nothing)")
        for v in values:
            _check_filter_value(key, v)
        checked[key] = values
    return checked or None


def _check_filter_value(key: str, v: Any) -> None:
    if isinstance(v, bool | str):
        return
    if isinstance(v, int):
        if not -_INT64 <= v < _INT64:
            raise InvalidValue(f"filter value {v} for {key!r} is outside 64-bit integers")
        return
    if isinstance(v, float):
        if not math.isfinite(v):
            raise InvalidValue(f"filter value {v} for {key!r} is not finite")
        return
    raise InvalidValue(f"filter value {v!r} for {key!r} must be a str, int, float or bool, not {type(v).__name__}")


# ---------------------------------------------------------------------------------------------
# URIs.

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(.*)\Z", re.S)
_COLLECTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,254}\Z")
_EXPECTED = ("expected a bank directory, milvus:./file.db, milvus:/abs/file.db, milvus://host:19530 or "
             "milvus+https://host (optionally ?collection=name)")


@dataclass(frozen=True, slots=True)
class StoreTarget:
    """A parsed store URI: which backend, where, and the secret-free URI to show and record."""

    backend: str  # "numpy", "milvus-lite" or "milvus"
    location: str  # numpy: the directory; milvus-lite: the absolute .db path; milvus: http(s)://host[:port]
    collection: str | None  # Milvus only
    uri: str  # normalised, secret-free
    consistency: str = DEFAULT_CONSISTENCY  # Milvus only: the consistency level of reads
    ef: int | None = None  # Milvus only: HNSW search breadth (None: the store's default)

    def __str__(self) -> str:
        return self.uri


def _bad(uri: str, why: str) -> StoreError:
    return StoreError(f"store URI {uri!r}: {why}; {_EXPECTED}")


def parse_store_uri(uri: str | Path) -> StoreTarget:
    """Parse a store URI (see the module docstring); a bad one raises one :class:`StoreError` line."""
    if isinstance(uri, Path):
        return StoreTarget("numpy", str(uri), None, str(uri))
    if not isinstance(uri, str) or not uri.strip():
        raise _bad(str(uri), "empty")
    text = uri.strip()
    m = _SCHEME.match(text)
    if m is None or len(m.group(1)) == 1:  # no scheme (or a Windows drive letter): a bank directory
        if "?collection=" in text:
            raise _bad(uri, "?collection= applies only to milvus URIs")
        return StoreTarget("numpy", text, None, text)
    scheme, rest = m.group(1).lower(), m.group(2)
    if scheme not in ("milvus", "milvus+http", "milvus+https"):
        raise _bad(uri, f"unknown scheme {m.group(1)!r}")
    rest, _, query = rest.partition("?")
    collection, consistency, ef = _milvus_params(uri, query)
    given = ([f"collection={collection}"] if collection != DEFAULT_COLLECTION else []) + \
        ([f"consistency={consistency}"] if consistency != DEFAULT_CONSISTENCY else []) + \
        ([f"ef={ef}"] if ef is not None else [])
    suffix = "?" + "&".join(given) if given else ""
    if scheme == "milvus" and not rest.startswith("//"):
        target = _lite_target(uri, rest, collection, suffix)
    elif not rest.startswith("//"):
        raise _bad(uri, f"{scheme}: needs //host")
    else:
        target = _server_target(uri, scheme, rest, collection, suffix)
    return replace(target, consistency=consistency, ef=ef)


def _milvus_params(uri: str, query: str) -> tuple[str, str, int | None]:
    """(collection, read consistency, HNSW ef) from a Milvus URI's query."""
    if not query:
        return DEFAULT_COLLECTION, DEFAULT_CONSISTENCY, None
    try:
        params = parse_qs(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise _bad(uri, f"cannot parse query {query!r}") from None
    unknown = sorted(set(params) - {"collection", "consistency", "ef"})
    if unknown:
        raise _bad(uri, f"unknown parameter {unknown[0]!r}")
    collection = params.get("collection", [DEFAULT_COLLECTION])
    if len(collection) != 1 or not _COLLECTION.match(collection[0]):
        raise _bad(uri, f"collection {collection[-1]!r} must be one name of letters, digits and underscores, "
                        "not starting with a digit")
    consistency = params.get("consistency", [DEFAULT_CONSISTENCY])
    if len(consistency) != 1 or consistency[0].lower() not in CONSISTENCY_LEVELS:
        raise _bad(uri, f"consistency {consistency[-1]!r} must be one of {', '.join(CONSISTENCY_LEVELS)}")
    ef = params.get("ef")
    if ef is not None and (len(ef) != 1 or not ef[0].isdigit() or not 1 <= int(ef[0]) <= 32768):
        raise _bad(uri, f"ef {ef[-1]!r} must be one whole number from 1 to 32768")
    return collection[0], consistency[0].lower(), int(ef[0]) if ef else None


def _lite_target(uri: str, path: str, collection: str, suffix: str) -> StoreTarget:
    if not path:
        raise _bad(uri, "milvus: needs a file path")
    if not path.endswith(".db"):
        raise _bad(uri, f"Milvus Lite file {path!r} must end in .db")
    absolute = str(Path(path).expanduser().absolute())
    return StoreTarget("milvus-lite", absolute, collection, f"milvus:{absolute}{suffix}")


def _server_target(uri: str, scheme: str, rest: str, collection: str, suffix: str) -> StoreTarget:
    transport = "https" if scheme == "milvus+https" else "http"
    try:
        parts = urlsplit(f"{transport}:{rest}")
        port = parts.port
    except ValueError as e:
        raise _bad(uri, str(e)) from None
    if parts.username is not None or parts.password is not None:
        # Do not echo the URI: it holds a credential.
        raise StoreError(f"store URI {scheme}://...: credentials do not belong in a store URI (it is shown and "
                         f"recorded); put the token in the environment variable {TOKEN_ENV}")
    if not parts.hostname:
        raise _bad(uri, "needs a host")
    if parts.path not in ("", "/") or parts.fragment:
        raise _bad(uri, f"unexpected path {parts.path!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = host if port is None else f"{host}:{port}"
    if port is None and scheme != "milvus+https":
        netloc = f"{host}:19530"  # the Milvus default port
    return StoreTarget("milvus", f"{transport}://{netloc}", collection, f"{scheme}://{netloc}{suffix}")


def check_recorded(where: str, embedder_id: str, dim: int, want_embedder: str | None, want_dim: int | None) -> None:
    """Raise one StoreError line when the store's recorded embedder/dim differ from what the caller expects."""
    if (want_embedder is not None and want_embedder != embedder_id) or (want_dim is not None and want_dim != dim):
        raise StoreError(f"{where}: store holds vectors of embedder {embedder_id!r} (dim {dim}), but "
                         f"{want_embedder or embedder_id!r} (dim {want_dim or dim}) was asked for; "
                         "vectors of two embedders cannot be mixed")
