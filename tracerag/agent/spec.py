"""SearchAgent's registry entry, ``agent``: its builder, workflows, artifact and service."""

from ..program_entry import ProgramEntry
from . import artifact, workflow
from .building import build_agent


def _service():
    from .service import SERVICE

    return SERVICE


ENTRY = ProgramEntry(
    "agent", "SearchAgent",
    "Research a question with the search tools and answer with citations of what they returned.",
    build_agent, "pubmedqa", "agent_score",
    ("accuracy", "citation_validity", "citation_coverage", "gold_found", "tool_calls", "hallucinated_outputs",
     "answered_rate"),
    workflow.examples, workflow.evaluate, workflow.compile, artifact.describe, artifact.rebuild, workflow.run,
    service=_service)
