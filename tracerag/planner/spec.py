"""TraceablePlanner's registry entry, ``planner``: its builder, workflows, artifact, service and store."""

from ..program_entry import ProgramEntry
from . import artifact, workflow
from .building import STORE_FILL, build_planner


def _service():
    from .service import SERVICE

    return SERVICE


ENTRY = ProgramEntry(
    "planner", "TraceablePlanner",
    "Write a structured plan from requirements, playbook bullets and templates, recording which ids it used.",
    build_planner, "planner", "planner_score",
    ("used_recall", "used_precision", "used_f1", "citation_validity", "citation_coverage", "hallucinated_per_plan",
     "score"),
    workflow.examples, workflow.evaluate, workflow.compile, artifact.describe, artifact.rebuild, service=_service,
    store_fill=STORE_FILL)
