"""Metrics: pure functions (example, pred, trace=None) -> float | bool, plus GEPA feedback variants.

One module per program (``commands``, ``experience``, ``rag``, ``planner``; ``citations`` is shared);
the optimisation metrics and their feedback variants are re-exported here. Metrics an LM judges are in
``tracerag.judges``.
"""

from . import citations, commands, experience, planner, rag
from .citations import citation_coverage, citation_validity, extract_cited_ids
from .commands import bulk_precision, hit, recall, recall_at_10, recall_feedback, reciprocal_rank, returned_pairs
from .experience import experience_feedback, experience_score
from .planner import planner_feedback, planner_score
from .rag import rag_feedback, rag_score

__all__ = ["bulk_precision", "citation_coverage", "citation_validity", "citations", "commands", "experience",
           "experience_feedback", "experience_score", "extract_cited_ids", "hit", "planner", "planner_feedback",
           "planner_score", "rag", "rag_feedback", "rag_score", "recall", "recall_at_10", "recall_feedback",
           "reciprocal_rank", "returned_pairs"]
