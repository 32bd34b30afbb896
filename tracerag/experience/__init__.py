"""ExperienceRetrieval as one package: short experience for a new agent task, from similar solved tasks.

``experience_retrieval`` is the ``dspy.Module``; ``metrics``, ``building``, ``workflow``, ``evaluation``,
``compiling``, ``artifact`` and ``spec`` (its registry entry) are what the front ends need of it.
"""

from ..lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    ".experience_retrieval": ("ExperienceConfig", "ExperienceRetrieval", "render_experience_section",),
    ".building": ("build_experience",)
})
