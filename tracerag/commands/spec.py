"""CommandRetrieval's registry entry, ``commands``: its builder, workflows, artifact, service and its own
subcommands (build, tune)."""

from ..program_entry import ProgramEntry
from . import artifact, subcommands, workflow
from .building import build_commands


def _service():
    from .service import SERVICE

    return SERVICE


ENTRY = ProgramEntry(
    "commands", "CommandRetrieval",
    "Find the smart-home (device, command) candidates an utterance asks for, or the bulk plan for all/except; "
    "hint says when to ask the user instead.",
    build_commands, "smarthome", "parse_recall@10", ("bulk_precision", "clarification_rate"),
    workflow.examples, workflow.evaluate, workflow.compile, artifact.describe, artifact.rebuild, workflow.run,
    service=_service, cli_commands=subcommands.COMMANDS, embeds=True)
