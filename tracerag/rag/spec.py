"""SelfReflectiveRAG's registry entry, ``rag``: its builder, workflows, artifact, service and store."""

from ..program_entry import ProgramEntry
from . import artifact, workflow
from .building import STORE_FILL, build_rag


def _service():
    from .service import SERVICE

    return SERVICE


ENTRY = ProgramEntry(
    "rag", "SelfReflectiveRAG",
    "Answer a question from graded passages, citing [chunk-id]s, with a groundedness check.",
    build_rag, "pubmedqa", "rag_score",
    ("accuracy", "grounded_rate", "citation_validity", "citation_coverage", "citation_recall", "citation_precision"),
    workflow.examples, workflow.evaluate, workflow.compile, artifact.describe, artifact.rebuild, workflow.run,
    service=_service, store_fill=STORE_FILL, embeds=True)
