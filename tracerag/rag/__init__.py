"""SelfReflectiveRAG as one package: answers from graded passages, cited and checked for groundedness.

``self_reflective_rag`` is the ``dspy.Module``; ``metrics``, ``building``, ``workflow``, ``evaluation``,
``compiling``, ``artifact`` and ``spec`` (its registry entry) are what the front ends need of it.
"""

from ..lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    ".self_reflective_rag": ("NEED_MORE_CONTEXT", "RAGConfig", "SelfReflectiveRAG",),
    ".building": ("build_rag",)
})
