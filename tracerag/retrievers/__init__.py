"""Plain-Python retrieval components (no LM): homes, the command index, embedders."""

from .command_index import CommandIndex, IndexParams
from .command_results import BulkGroup, BulkPlan, Candidate, CapabilityOption
from .embedders import Embedder, LexicalEmbedder, LocalUSEEmbedder, make_embedder
from .home import CommandSpec, Device, Home, HomeDataError

__all__ = ["BulkGroup", "BulkPlan", "Candidate", "CapabilityOption", "CommandIndex", "CommandSpec", "Device",
           "Embedder", "Home", "HomeDataError", "IndexParams", "LexicalEmbedder", "LocalUSEEmbedder",
           "make_embedder"]
