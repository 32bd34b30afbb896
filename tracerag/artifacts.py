"""Compiled-program artifacts: DSPy JSON state plus a metadata sidecar.

`save` writes `<file>` (the predictors' instructions and demos, DSPy's own format) and
`<file>.meta.json` (program name, config, retriever parameters, dataset, metric, scores), so
`load` can rebuild the whole program for an app, retriever knobs included.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

FORMAT_VERSION = 1


def meta_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".meta.json")


def save(program, path: str | Path, *, dataset: str | None = None, metric: str | None = None,
         scores: dict | None = None, extra: dict | None = None) -> Path:
    """Write the program state and its sidecar; returns the sidecar path."""
    from .programs.command_retrieval import CommandRetrieval

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not isinstance(program, CommandRetrieval):
        raise TypeError(f"cannot save {type(program).__name__}: no artifact format for it")
    program.save(str(path))
    index = next(iter(program.indexes.values()))
    meta = {
        "format_version": FORMAT_VERSION,
        "program": "CommandRetrieval",
        "config": {"k": program.k, "arbitration": program.arbitration, "ir_source": program.ir_source},
        "index_params": index.params.model_dump(),
        "embedder": index.embedder.id,
        "homes": sorted(program.indexes),
        "dataset": dataset,
        "metric": metric,
        "scores": scores or {},
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **(extra or {}),
    }
    sidecar = meta_path(path)
    sidecar.write_text(json.dumps(meta, indent=2, ensure_ascii=False), encoding="utf-8")
    return sidecar


def read_meta(path: str | Path) -> dict:
    sidecar = meta_path(path)
    if not sidecar.is_file():
        raise FileNotFoundError(f"{sidecar}: metadata sidecar missing; was {path} written by tracerag.save?")
    meta = json.loads(sidecar.read_text(encoding="utf-8"))
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{sidecar}: format_version {meta.get('format_version')} is not {FORMAT_VERSION}")
    return meta


def load(path: str | Path, home: str | Path | None = None, embedder=None):
    """Rebuild a compiled program. `home` is the app's home directory (defaults to the dataset it was
    compiled on); the embedder must be the one the artifact was built with."""
    from .config import get_embedder
    from .datasets.smarthome import home_dirs, resolve_dataset
    from .programs.command_retrieval import CommandRetrieval, build_indexes
    from .retrievers.command_index import IndexParams

    meta = read_meta(path)
    embedder = embedder or get_embedder()
    if embedder.id != meta["embedder"]:
        raise ValueError(f"{path} was built with embedder {meta['embedder']!r} but {embedder.id!r} is configured; "
                         "configure the same embedder (vectors of two embedders cannot be mixed)")
    source = home if home is not None else meta.get("dataset")
    if source is None:
        raise ValueError(f"{path}: no home given and the artifact records no dataset")
    indexes = build_indexes(home_dirs(resolve_dataset(source)), embedder, IndexParams(**meta["index_params"]))
    program = CommandRetrieval(indexes, **meta["config"])
    program.load(str(path))
    return program
