"""ExperienceRetrieval's entry in the registry: its builder, workflows and artifact, under the name ``experience``."""

from ..program_entry import ProgramEntry
from . import artifact, workflow
from .building import build_experience

ENTRY = ProgramEntry(
    "experience", "ExperienceRetrieval",
    "Distil short experience for a new agent task from similar solved tasks, with the task ids it came from.",
    build_experience, "experience", "experience_score", ("used_precision", "usefulness"),
    workflow.examples, workflow.evaluate, workflow.compile, artifact.describe, artifact.rebuild, workflow.run)
