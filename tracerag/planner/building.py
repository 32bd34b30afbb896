"""Building TraceablePlanner: on its bundled defaults, on the user's data or store, or from a compiled artifact."""

from __future__ import annotations

from pathlib import Path

from ..building import embedder_or_default


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
    from ..store_cli import open_program_store

    embedder = embedder_or_default(embedder)
    templates = open_program_store("planner", store, embedder, fill_from=resolve_dataset(dataset or "planner"))
    return TraceablePlanner(retrieve_templates=templates, embedder=embedder)
