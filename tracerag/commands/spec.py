"""CommandRetrieval's entry in the registry: its builder, workflows and artifact, under the name ``commands``."""

from ..program_entry import ProgramEntry
from . import artifact, workflow
from .building import build_commands

ENTRY = ProgramEntry(
    "commands", "CommandRetrieval",
    "Find the smart-home (device, command) candidates an utterance asks for, or the bulk plan for all/except; "
    "hint says when to ask the user instead.",
    build_commands, "smarthome", "parse_recall@10", ("bulk_precision", "clarification_rate"),
    workflow.examples, workflow.evaluate, workflow.compile, artifact.describe, artifact.rebuild, workflow.run)
