"""DSPy modules composing signatures and retrievers."""

from .command_retrieval import CommandRetrieval
from .rule_parser import parse_without_lm

__all__ = ["CommandRetrieval", "parse_without_lm"]
