"""ExperienceRetrieval's registry entry, ``experience``: its builder, workflows, artifact, service and store."""

from ..program_entry import ProgramEntry
from . import artifact, workflow
from .building import STORE_FILL, build_experience


def _service():
    from .service import SERVICE

    return SERVICE


ENTRY = ProgramEntry(
    "experience", "ExperienceRetrieval",
    "Distil short experience for a new agent task from similar solved tasks, with the task ids it came from.",
    build_experience, "experience", "experience_score", ("used_precision", "usefulness"),
    workflow.examples, workflow.evaluate, workflow.compile, artifact.describe, artifact.rebuild, workflow.run,
    service=_service, store_fill=STORE_FILL, embeds=True)
