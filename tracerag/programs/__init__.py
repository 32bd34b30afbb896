"""DSPy modules composing signatures and retrievers."""

from .captioning import make_captioner
from .command_retrieval import CommandRetrieval
from .experience_retrieval import ExperienceConfig, ExperienceRetrieval, render_experience_section
from .rule_parser import parse_without_lm
from .self_reflective_rag import NEED_MORE_CONTEXT, RAGConfig, SelfReflectiveRAG
from .traceable_planner import PlannerConfig, TraceablePlanner

__all__ = ["NEED_MORE_CONTEXT", "CommandRetrieval", "ExperienceConfig", "ExperienceRetrieval", "PlannerConfig",
           "RAGConfig", "SelfReflectiveRAG", "TraceablePlanner", "make_captioner", "parse_without_lm",
           "render_experience_section"]
