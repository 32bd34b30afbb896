"""Typed DSPy signatures and pydantic models more than one part reads (the parse every command reader shares,
the plan data files hold, what the judges and captioning ask). A signature only one program uses is in its
package. Declarations only: no logic beyond validation."""

from .experience import CaptionImages, CheckSufficiency, JudgeExperience, RewriteQuery, SummarizeExperience
from .planner import GeneratePlan, Plan, PlanStep
from .query_ir import DEVICE_CATEGORIES, UNKNOWN_CATEGORY, QueryIR
from .rag import AnswerWithCitations, ChunkGrade, GradeRelevance, RefineQuery, VerifyGroundedness

__all__ = ["AnswerWithCitations", "CaptionImages", "CheckSufficiency", "ChunkGrade", "DEVICE_CATEGORIES",
           "GeneratePlan", "GradeRelevance", "JudgeExperience", "Plan", "PlanStep", "QueryIR", "RefineQuery",
           "RewriteQuery", "SummarizeExperience", "UNKNOWN_CATEGORY", "VerifyGroundedness"]
