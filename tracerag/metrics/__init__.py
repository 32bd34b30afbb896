"""Metrics: pure functions (example, pred, trace=None) -> float | bool, plus GEPA feedback variants."""

from .commands import bulk_precision, hit, recall, recall_at_10, recall_feedback, reciprocal_rank, returned_pairs

__all__ = ["bulk_precision", "hit", "recall", "recall_at_10", "recall_feedback", "reciprocal_rank",
           "returned_pairs"]
