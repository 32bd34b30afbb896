"""CommandRetrieval's artifact: what beyond the prompts rebuilds it (its config, the index parameters, the
embedder and the homes it was compiled on), and rebuilding it on the app's home."""

from __future__ import annotations

from pathlib import Path

from ..artifacts import meta_path
from ..building import embedder_or_default
from ..errors import InvalidValue


def describe(program, where: Path | None = None) -> dict:
    index = next(iter(program.indexes.values()))
    return {"program": "CommandRetrieval",
            "config": {"k": program.k, "arbitration": program.arbitration, "ir_source": program.ir_source},
            "index_params": index.params.model_dump(), "embedder": index.embedder.id, "homes": sorted(program.indexes)}


def rebuild(path: Path, meta: dict, *, embedder=None, home=None, **_):
    """The program the sidecar describes, on ``home`` (the app's home directory; default: the dataset it was
    compiled on), without its prompts (``apply_state`` adds them)."""
    from ..datasets.smarthome import home_dirs, resolve_dataset
    from ..home_commands.index_params import IndexParams
    from .command_retrieval import CommandRetrieval, build_indexes

    if not isinstance(meta.get("index_params"), dict):
        raise InvalidValue(f"{meta_path(path)}: field 'index_params' is missing; was {path} written by tracerag.save?")
    source = home if home is not None else meta.get("dataset")
    if source is None:
        raise InvalidValue(f"{path}: no home given and the artifact records no dataset")
    indexes = build_indexes(home_dirs(resolve_dataset(source)), embedder_or_default(embedder),
                            IndexParams(**meta["index_params"]))
    return CommandRetrieval(indexes, **meta["config"])
