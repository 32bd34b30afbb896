"""SelfReflectiveRAG's entry in the registry: its builder, workflows and artifact, under the name ``rag``."""

from ..program_entry import ProgramEntry
from . import artifact, workflow
from .building import build_rag

ENTRY = ProgramEntry(
    "rag", "SelfReflectiveRAG",
    "Answer a question from graded passages, citing [chunk-id]s, with a groundedness check.",
    build_rag, "pubmedqa", "rag_score",
    ("accuracy", "grounded_rate", "citation_validity", "citation_coverage", "citation_recall", "citation_precision"),
    workflow.examples, workflow.evaluate, workflow.compile, artifact.describe, artifact.rebuild, workflow.run)
