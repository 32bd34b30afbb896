"""Dataset loaders and the bundled data (each name imported on first use: reading a home loads no DSPy)."""

from ..lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    ".experience": ("ExperienceQuery", "load_experience_queries"),
    ".smarthome": ("LabelledQuery", "Target", "load_dataset", "resolve_dataset", "split_of"),
})
