"""Typed DSPy signatures and pydantic models more than one part reads: the parse every command reader shares
(``query_ir``), the plan a planner writes and its dataset holds (``planner``), captioning an image
(``captioning``: the experience bank and the experience program). A signature only one program uses is in its
package (``tracerag.rag.signatures``, ...). Declarations only: no logic beyond validation.

Each name is imported on first use: the parse (``query_ir``, pydantic only) loads no DSPy, so a run without an LM
reads utterances without it."""

from ..lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    ".captioning": ("CaptionImages",),
    ".planner": ("Plan", "PlanStep"),
    ".query_ir": ("DEVICE_CATEGORIES", "UNKNOWN_CATEGORY", "QueryIR"),
})
