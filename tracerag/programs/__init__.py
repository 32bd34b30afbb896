"""DSPy modules composing signatures and retrievers."""

from .captioning import make_captioner
from .command_retrieval import CommandRetrieval
from .experience_retrieval import ExperienceConfig, ExperienceRetrieval, render_experience_section
from .rule_parser import parse_without_lm
from .search_agent import AgentConfig, SearchAgent
from .self_reflective_rag import NEED_MORE_CONTEXT, RAGConfig, SelfReflectiveRAG
from .traceable_planner import PlannerConfig, TraceablePlanner

__all__ = ["AgentConfig", "CommandRetrieval", "ExperienceConfig", "ExperienceRetrieval", "NEED_MORE_CONTEXT",
           "PlannerConfig", "RAGConfig", "SearchAgent", "SelfReflectiveRAG", "TraceablePlanner", "make_captioner",
           "parse_without_lm", "render_experience_section"]
