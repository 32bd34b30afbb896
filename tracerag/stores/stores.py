"""Opening a vector store: the one module that knows every backend (the protocol in :mod:`.vector_store`
knows none, so the backends can import it).

``open_store(uri)`` opens a bank directory or a Milvus URI; a bank directory may end in a query choosing
how it searches (``bank?search=ann&ef=256``: see :mod:`.numpy_store`); ``store_and_embedder`` turns what a program
was given (a store, a bank, a URI) into a checked (store, embedder) pair.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from ..errors import InvalidType, InvalidValue
from .cosine_bank import CosineBank
from .milvus_store import MilvusStore
from .numpy_store import SEARCH_MODES, NumpyStore
from .vector_store import StoreError, VectorStore, check_recorded, parse_store_uri

__all__ = ["open_store", "store_and_embedder"]


def open_store(
    uri: str | Path,
    *,
    embedder_id: str | None = None,
    dim: int | None = None,
    create: bool = False,
    **index: int,
) -> VectorStore:
    """Open the store at ``uri`` (see the module docstring for URI forms).

    Args:
        uri: a bank directory, ``milvus:./file.db`` (Milvus Lite) or ``milvus://host:19530?collection=name``.
        embedder_id: the embedder the store must have been built with (a mismatch is one ``StoreError`` line
            naming both).
        dim: the vectors' dimension it must have.
        create: create a missing store empty (``embedder_id`` and ``dim`` are then required); an existing one
            is opened and checked as usual.
        **index: Milvus' ``hnsw_threshold``, ``hnsw_m`` and ``hnsw_ef_construction`` (see
            :meth:`MilvusStore.open`); the numpy bank is always exact.

    Returns:
        The open ``VectorStore``; ``close()`` it when done.

    Example:
        >>> from tracerag.stores import open_store
        >>> store = open_store("milvus:./chunks.db", embedder_id=embedder.id, dim=embedder.dim, create=True)
    """
    target = parse_store_uri(uri)
    if create and (not embedder_id or not dim):
        raise StoreError(f"{target}: creating a store needs embedder_id and dim")
    unknown = sorted(set(index) - {"hnsw_threshold", "hnsw_m", "hnsw_ef_construction"})
    if unknown:
        raise InvalidType(f"open_store() got an unexpected keyword argument {unknown[0]!r}")
    if target.backend == "numpy":
        if index:
            raise StoreError(f"{target}: {', '.join(sorted(index))} apply only to Milvus stores (the bank is exact)")
        location, options = _bank_options(target.location)
        return NumpyStore.open(location, embedder_id=embedder_id, dim=dim, create=create, **options)
    return MilvusStore.open(target, embedder_id=embedder_id, dim=dim, create=create, **index)


def store_and_embedder(source: Any, embedder: Any = None) -> tuple[VectorStore, Any]:
    """(store, embedder) for a program: ``source`` is a VectorStore, a CosineBank (its own embedder is used
    when none is given) or a store URI / bank directory (opened and checked against ``embedder``).

    The embedder is required (a store holds vectors, not the model that made them) and must be the one
    the store records; a mismatch is one :class:`StoreError` line.
    """
    if isinstance(source, CosineBank):
        embedder = embedder if embedder is not None else source.embedder
        if embedder is None:
            raise InvalidValue(f"{source.directory}: the bank was loaded without an embedder; queries cannot be "
                               "embedded")
        store: VectorStore = NumpyStore(source)
    elif isinstance(source, str | Path):
        if embedder is None:
            raise InvalidValue(f"{source}: opening a store needs the embedder it was built with")
        return open_store(source, embedder_id=embedder.id, dim=embedder.dim), embedder
    elif isinstance(source, VectorStore):
        if embedder is None:
            raise InvalidValue(f"{source!r}: searching a store needs the embedder it was built with")
        store = source
    else:
        raise InvalidType(f"expected a VectorStore, a CosineBank or a store URI, got {type(source).__name__}")
    info = store.describe()
    check_recorded(info.uri, info.embedder_id, info.dim, embedder.id, embedder.dim)
    return store, embedder


def _bank_options(location: str) -> tuple[str, dict[str, Any]]:
    """(directory, NumpyStore.open options) from a bank location that may end in ``?search=...&ef=...``.

    A directory whose name really holds a ``?`` is taken as it is."""
    path, sep, query = location.partition("?")
    if not sep or Path(location).exists():
        return location, {}
    try:
        params = parse_qs(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise StoreError(f"{location}: cannot parse query {query!r}") from None
    unknown = sorted(set(params) - {"search", "ef"})
    if unknown:
        raise StoreError(f"{location}: unknown parameter {unknown[0]!r} (a bank takes search= and ef=)")
    options: dict[str, Any] = {}
    search = params.get("search")
    if search is not None:
        if len(search) != 1 or search[0] not in SEARCH_MODES:
            raise StoreError(f"{location}: search {search[-1]!r} must be one of {', '.join(SEARCH_MODES)}")
        options["search"] = search[0]
    ef = params.get("ef")
    if ef is not None:
        if len(ef) != 1 or not ef[0].isdigit() or not 1 <= int(ef[0]) <= 32768:
            raise StoreError(f"{location}: ef {ef[-1]!r} must be one whole number from 1 to 32768")
        options["ef"] = int(ef[0])
    return path, options
