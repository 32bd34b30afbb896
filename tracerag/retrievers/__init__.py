"""Plain-Python retrieval components (no LM): homes and the command index, the vector bank and the
experience bank built on it, traces, embedders and rerankers."""

from .chunking import Chunk, chunk_text
from .command_index import CommandIndex, IndexParams
from .command_results import BulkGroup, BulkPlan, Candidate, CapabilityOption
from .corpus import IngestReport, ingest_documents
from .cosine_bank import BankError, CosineBank, Hit
from .embedders import Embedder, LexicalEmbedder, LocalUSEEmbedder, make_embedder
from .experience_bank import BankBuildReport, build_experience_bank
from .home import CommandSpec, Device, Home, HomeDataError
from .hybrid import HybridRetriever, ScoredChunk
from .playbook import Bullet, Playbook, Template, apply_feedback, load_playbook, parse_playbook
from .rerankers import HttpReranker, LocalReranker, Reranker, make_reranker
from .traces import Trace, TraceLoad, load_traces

__all__ = ["BankBuildReport", "BankError", "BulkGroup", "BulkPlan", "Bullet", "Candidate", "CapabilityOption", "Chunk",
           "CommandIndex", "CommandSpec", "CosineBank", "Device", "Embedder", "Hit", "Home",
           "HomeDataError", "HttpReranker", "HybridRetriever", "IndexParams", "IngestReport",
           "LexicalEmbedder", "LocalReranker", "LocalUSEEmbedder", "Playbook", "Reranker", "ScoredChunk",
           "Template", "Trace", "TraceLoad", "apply_feedback", "build_experience_bank", "chunk_text",
           "ingest_documents", "load_playbook", "load_traces", "make_embedder", "make_reranker",
           "parse_playbook"]
