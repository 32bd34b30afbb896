"""Metrics: pure functions (example, pred, trace=None) -> float | bool, plus GEPA feedback variants.

One module per program (``metrics.commands``, ``metrics.experience``, ``metrics.rag``); the optimisation metrics and
their feedback variants are re-exported here.
"""

from . import commands, experience, rag
from .commands import bulk_precision, hit, recall, recall_at_10, recall_feedback, reciprocal_rank, returned_pairs
from .experience import experience_feedback, experience_score, usefulness
from .rag import rag_feedback, rag_score

__all__ = ["bulk_precision", "commands", "experience", "experience_feedback", "experience_score", "hit", "rag",
           "rag_feedback", "rag_score", "recall", "recall_at_10", "recall_feedback", "reciprocal_rank",
           "returned_pairs", "usefulness"]
