"""Building TraceablePlanner: on its bundled defaults, on the user's data or store, or from a compiled artifact."""

from __future__ import annotations

from pathlib import Path

from ..building import embedder_or_default
from ..store_cli import StoreFill, open_program_store


def build_planner(*, artifact: str | Path | None = None, store: str | None = None,
                  dataset: str | Path | None = "planner", embedder=None):
    """TraceablePlanner from an artifact or the defaults. With ``store`` it searches its templates in that
    store, which is filled from the dataset's templates when empty.

    Args:
        artifact: a compiled program (``tracerag compile planner``).
        store: a store URI for the templates (none: templates come with each call).
        dataset: where to fill an empty store's templates from.
        embedder: the embedder (default: the configured one).

    Returns:
        The program, ready to call: ``program(requirements=..., bullets=..., templates=...)``.
    """
    from ..artifacts import load_program
    from .artifact import rebuild
    from .traceable_planner import TraceablePlanner

    if artifact:
        return load_program(artifact, "TraceablePlanner", rebuild, store=store, embedder=embedder)
    if not store:
        return TraceablePlanner()
    from ..datasets.smarthome import resolve_dataset

    embedder = embedder_or_default(embedder)
    templates = open_program_store(STORE_FILL, store, embedder, fill_from=resolve_dataset(dataset or "planner"))
    return TraceablePlanner(retrieve_templates=templates, embedder=embedder)


def _templates(fill_from: str | Path | None) -> list:
    """The templates of ``fill_from`` (a templates JSONL, or a dataset directory holding one; default: the
    bundled planner dataset's)."""
    from ..datasets.planner import TEMPLATES_FILE, load_templates
    from ..datasets.smarthome import resolve_dataset

    path = Path(fill_from) if fill_from is not None else resolve_dataset("planner") / TEMPLATES_FILE
    if path.is_dir():
        path = path / TEMPLATES_FILE
    return list(load_templates(path).values())


def _fill_templates(store, embedder, fill_from: str | Path | None, progress) -> None:
    """The templates written straight into an open store (any backend)."""
    from ..memory.playbook import index_templates

    index_templates(store, embedder, _templates(fill_from))


def _template_bank(bank_dir: Path, embedder, fill_from: str | Path | None, progress) -> None:
    """A numpy bank of the templates: an empty bank, then the templates written into it."""
    import numpy as np

    from ..stores.cosine_bank import CosineBank
    from ..stores.stores import open_store

    CosineBank.from_vectors(bank_dir, np.zeros((0, embedder.dim), np.float32), [], [], embedder_id=embedder.id)
    _fill_templates(open_store(bank_dir, embedder_id=embedder.id, dim=embedder.dim), embedder, fill_from, progress)


STORE_FILL = StoreFill(_template_bank, _fill_templates)  # what fills an empty --store
