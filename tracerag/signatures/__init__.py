"""Typed DSPy signatures and pydantic models more than one part reads: the parse every command reader shares
(``query_ir``), the plan a planner writes and its dataset holds (``planner``), captioning an image
(``captioning``: the experience bank and the experience program). A signature only one program uses is in its
package (``tracerag.rag.signatures``, ...). Declarations only: no logic beyond validation."""

from .captioning import CaptionImages
from .planner import Plan, PlanStep
from .query_ir import DEVICE_CATEGORIES, UNKNOWN_CATEGORY, QueryIR

__all__ = ["CaptionImages", "DEVICE_CATEGORIES", "Plan", "PlanStep", "QueryIR", "UNKNOWN_CATEGORY"]
