"""The collection a Milvus store keeps its rows in: its fields, the record checked on open, and the limits
rows meet there.

One store = one collection (default name ``tracerag``) with the fields:

    id        VARCHAR primary key (at most 1,024 UTF-8 bytes): the row's stable id
    vector    FLOAT_VECTOR(dim), stored L2-normalised
    hash      VARCHAR(64): sha256 of the vector bytes and canonical metadata JSON (idempotent re-ingest)
    metadata  JSON: the row's metadata object (at most 65,536 bytes of JSON)

Metadata is one JSON field rather than dynamic fields, so any metadata key (even ``id`` or ``vector``)
round-trips unchanged and filters address it as ``metadata["key"]``. The collection records
``tracerag.format``, ``tracerag.embedder`` and ``tracerag.dim`` twice, in its properties and as JSON in
its description (Milvus Lite 2.5 keeps no properties, Milvus Lite 3 no description); opening checks them
like the numpy manifest (a collection without them was not written by tracerag and is refused).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import InvalidValue
from .milvus_expressions import _expressible
from .vector_store import StoreError, StoreTarget, canonical_json

FORMAT = "1"
_FORMAT_KEY, _EMBEDDER_KEY, _DIM_KEY = "tracerag.format", "tracerag.embedder", "tracerag.dim"
_DESCRIPTION_PREFIX = "tracerag vector store "
ID_MAX_BYTES = 1024
METADATA_MAX_BYTES = 65_536
BATCH_ROWS = 1_000
MAX_TOP_K = 16_384  # Milvus' limit on k per search
_FIELDS = ("id", "vector", "hash", "metadata")


def _create_collection(client: Any, name: str, embedder_id: str, dim: int) -> None:
    from pymilvus import DataType, MilvusClient

    record = {_FORMAT_KEY: FORMAT, _EMBEDDER_KEY: embedder_id, _DIM_KEY: str(dim)}
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False,
                                        description=_DESCRIPTION_PREFIX + json.dumps(record, ensure_ascii=False))
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX_BYTES)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("hash", DataType.VARCHAR, max_length=64)
    schema.add_field("metadata", DataType.JSON)
    index = client.prepare_index_params()
    index.add_index(field_name="vector", index_type="FLAT", metric_type="COSINE")
    try:
        client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong",
                                 properties=record)
    except Exception:
        if not client.has_collection(name):  # not a race with another creator: a real failure
            raise


def _recorded(client: Any, name: str, target: StoreTarget) -> tuple[str, int]:
    """(embedder id, dim) from the collection's properties; refuse collections tracerag did not write."""
    info = client.describe_collection(name)
    props = info.get("properties") or {}
    if _FORMAT_KEY not in props:
        props = _from_description(info.get("description") or "")
    fields = {f["name"]: f for f in info.get("fields", [])}
    if props.get(_FORMAT_KEY) is None or not set(_FIELDS) <= set(fields):
        raise StoreError(f"{target}: collection {name!r} was not written by tracerag "
                         f"(no {_FORMAT_KEY} property or fields {', '.join(_FIELDS)})")
    if props[_FORMAT_KEY] != FORMAT:
        raise StoreError(f"{target}: collection {name!r} has tracerag format {props[_FORMAT_KEY]!r}; "
                         f"this version reads format {FORMAT!r}")
    dim = int(props.get(_DIM_KEY, 0))
    field_dim = int(fields["vector"].get("params", {}).get("dim", 0))
    if dim != field_dim:
        raise StoreError(f"{target}: collection {name!r} records dim {dim} but its vector field has dim {field_dim}")
    return str(props.get(_EMBEDDER_KEY, "")), dim


def _from_description(description: str) -> dict[str, str]:
    """The record as written into the description (engines that keep no collection properties, e.g. Milvus
    Lite 2.5; Milvus Lite 3 keeps properties but drops the description)."""
    if not description.startswith(_DESCRIPTION_PREFIX):
        return {}
    try:
        record = json.loads(description[len(_DESCRIPTION_PREFIX):])
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in record.items()} if isinstance(record, dict) else {}


def _check_sizes(id: str, metadata: dict[str, Any]) -> None:
    if not _expressible(id):
        raise InvalidValue(f"id {id[:40]!r} holds a control character other than \\n, \\r, \\t: Milvus could store "
                           "it but no expression could find or delete it again")
    if len(id.encode("utf-8")) > ID_MAX_BYTES:
        raise InvalidValue(f"id {id[:40]!r}... is longer than {ID_MAX_BYTES} UTF-8 bytes (the Milvus id field)")
    size = len(canonical_json(metadata).encode("utf-8"))
    if size > METADATA_MAX_BYTES:
        raise InvalidValue(f"metadata of id {id!r} is {size} bytes of JSON; a Milvus JSON field holds at most "
                           f"{METADATA_MAX_BYTES}")
