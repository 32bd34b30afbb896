"""Dataset loaders and the bundled data."""

from .experience import ExperienceQuery, load_experience_queries
from .smarthome import LabelledQuery, Target, load_dataset, resolve_dataset, split_of

__all__ = ["ExperienceQuery", "LabelledQuery", "Target", "load_dataset", "load_experience_queries", "resolve_dataset",
           "split_of"]
