"""TraceablePlanner as one package: structured plans that record which bullets and templates they used.

``traceable_planner`` is the ``dspy.Module``; ``metrics``, ``building``, ``workflow``, ``evaluation``,
``compiling``, ``artifact`` and ``spec`` (its registry entry) are what the front ends need of it.
"""

from ..lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    ".traceable_planner": ("PlannerConfig", "TraceablePlanner",),
    ".building": ("build_planner",)
})
