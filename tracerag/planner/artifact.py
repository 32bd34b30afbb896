"""TraceablePlanner's artifact: its config and, when it searches templates, the template store (bullets, and
templates without a store, come with each call); and rebuilding it."""

from __future__ import annotations

from pathlib import Path

from ..artifacts import store_fields, store_source
from ..building import embedder_or_default


def describe(program, where: Path | None = None) -> dict:
    from ..memory.playbook import TemplateIndex

    templates = program.retrieve_templates
    if isinstance(templates, TemplateIndex):
        return {"program": "TraceablePlanner", "config": program.config.model_dump(),
                "embedder": templates.embedder.id, **store_fields(templates.store, where),
                "templates": {"k": templates.k, "min_score": templates.min_score}}
    return {"program": "TraceablePlanner", "config": program.config.model_dump(), "embedder": None}


def rebuild(path: Path, meta: dict, *, embedder=None, store=None, **_):
    """``store``: the app's template store; default: the recorded one (none: templates come with each call)."""
    from ..memory.playbook import TemplateIndex
    from .traceable_planner import PlannerConfig, TraceablePlanner

    config = PlannerConfig(**meta["config"])
    source = store_source(path, meta, embedder, store)
    if source is None:  # templates come with each call
        return TraceablePlanner(config)
    knobs = meta.get("templates") or {}
    return TraceablePlanner(config, retrieve_templates=TemplateIndex(
        source, embedder_or_default(embedder), k=knobs.get("k", max(config.max_templates, 1)),
        min_score=knobs.get("min_score")))
