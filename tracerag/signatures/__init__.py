"""Typed DSPy signatures and their pydantic models. Declarations only: no logic beyond validation."""

from .command import ArbitrateCapability, ArbitrationDecision, CommandOption, ParseCommand
from .experience import CaptionImages, CheckSufficiency, JudgeExperience, RewriteQuery, SummarizeExperience
from .planner import GeneratePlan, Plan, PlanStep
from .query_ir import DEVICE_CATEGORIES, UNKNOWN_CATEGORY, QueryIR
from .rag import AnswerWithCitations, ChunkGrade, GradeRelevance, RefineQuery, VerifyGroundedness

__all__ = ["AnswerWithCitations", "ArbitrateCapability", "ArbitrationDecision", "CaptionImages", "CheckSufficiency",
           "ChunkGrade", "CommandOption", "DEVICE_CATEGORIES", "GeneratePlan", "GradeRelevance",
           "JudgeExperience", "ParseCommand", "Plan", "PlanStep", "QueryIR", "RefineQuery", "RewriteQuery",
           "SummarizeExperience", "UNKNOWN_CATEGORY", "VerifyGroundedness"]
