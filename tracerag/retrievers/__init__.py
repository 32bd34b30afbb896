"""Plain-Python retrieval components (no LM): homes and the command index, the vector bank and the
experience bank built on it, traces, embedders and rerankers."""

from .command_index import CommandIndex, IndexParams
from .command_results import BulkGroup, BulkPlan, Candidate, CapabilityOption
from .cosine_bank import BankError, CosineBank, Hit
from .embedders import Embedder, LexicalEmbedder, LocalUSEEmbedder, make_embedder
from .experience_bank import BankBuildReport, build_experience_bank
from .home import CommandSpec, Device, Home, HomeDataError
from .rerankers import HttpReranker, LocalReranker, Reranker, make_reranker
from .traces import Trace, TraceLoad, load_traces

__all__ = ["BankBuildReport", "BankError", "BulkGroup", "BulkPlan", "Candidate", "CapabilityOption", "CommandIndex",
           "CommandSpec", "CosineBank", "Device", "Embedder", "Hit", "Home", "HomeDataError", "HttpReranker",
           "IndexParams", "LexicalEmbedder", "LocalReranker", "LocalUSEEmbedder", "Reranker", "Trace", "TraceLoad",
           "build_experience_bank", "load_traces", "make_embedder", "make_reranker"]
