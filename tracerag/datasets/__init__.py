"""Dataset loaders and the bundled data."""

from .smarthome import LabelledQuery, Target, load_dataset, resolve_dataset, split_of

__all__ = ["LabelledQuery", "Target", "load_dataset", "resolve_dataset", "split_of"]
