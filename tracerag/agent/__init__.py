"""SearchAgent as one package: research a question with search tools, answering with citations.

``search_agent`` is the ``dspy.Module``; ``signatures``, ``metrics``, ``building``, ``workflow``, ``evaluation``,
``compiling``, ``artifact`` and ``spec`` (its registry entry) are what the front ends need of it.
"""

from ..lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    ".search_agent": ("AgentConfig", "SearchAgent",),
    ".building": ("build_agent",)
})
