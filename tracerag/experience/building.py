"""Building ExperienceRetrieval: on its bundled defaults, on the user's data or store, or from a compiled artifact."""

from __future__ import annotations

from pathlib import Path

from ..building import TEMP_BANKS, embedder_or_default
from ..errors import InvalidValue
from ..store_cli import StoreFill, open_program_store


def build_experience(*, artifact: str | Path | None = None, dataset: str | Path | None = "experience",
                     bank: str | Path | None = None, store: str | None = None, bank_dir: str | Path | None = None,
                     reranker: str = "local", rerank_model: str | None = None, rewrite: bool = True,
                     max_rounds: int = 1, top_n: int = 5, embedder=None):
    """ExperienceRetrieval from an artifact (on ``store``/``bank`` when given), on a store (filled from the
    dataset's traces when empty), on a bank directory, or on a bank built from the dataset's traces (into
    ``bank_dir``, else a temporary directory removed at exit; the embedding cache makes rebuilding cheap).
    ``reranker``: local (default), none, or the URL of a rerank service.

    Args:
        artifact: a compiled program (``tracerag compile experience``).
        dataset: the traces to build a bank from (a bundled name or a directory with ``tasks/``).
        bank: an experience bank directory (``tracerag build-bank``).
        store: a store URI, filled from the dataset's traces when empty.
        bank_dir: where a bank built from the traces goes (default: a temporary directory).
        reranker: ``local``, ``none`` or the URL of a rerank service; ``rerank_model`` names its model.
        rewrite: let the LM rewrite the task into search queries.
        max_rounds: retrieval rounds at most; ``top_n``: candidates handed to the summary.
        embedder: the embedder (default: the configured one).

    Returns:
        The program, ready to call: ``program(question=..., images=..., caption=..., sub_task=...)``.
    """
    from ..artifacts import load_program
    from ..datasets.smarthome import resolve_dataset
    from ..documents.rerankers import make_reranker
    from ..memory.experience_bank import build_experience_bank
    from ..stores.cosine_bank import CosineBank
    from .artifact import rebuild
    from .experience_retrieval import ExperienceConfig, ExperienceRetrieval

    if artifact:
        return load_program(artifact, "ExperienceRetrieval", rebuild, store=store or bank, embedder=embedder)
    embedder = embedder_or_default(embedder)
    traces = resolve_dataset(dataset) if dataset else None
    if store:
        found = open_program_store(STORE_FILL, store, embedder, fill_from=traces or resolve_dataset("experience"))
    elif bank:
        found = CosineBank.load(bank, embedder)
    elif traces is not None:
        if bank_dir is None:
            import tempfile

            TEMP_BANKS.append(tempfile.mkdtemp(prefix="tracerag-bank-"))
            bank_dir = Path(TEMP_BANKS[-1]) / "bank"
        build_experience_bank(traces, bank_dir, embedder, rebuild=True)
        found = CosineBank.load(bank_dir, embedder)
    else:
        raise InvalidValue("experience needs a bank, a store or a dataset of traces to build the bank from")
    config = ExperienceConfig(enable=True, enable_query_rewrite=rewrite, enable_rerank=reranker != "none",
                              max_retrieval_rounds=max_rounds, top_n=top_n)
    service = None if reranker in ("local", "none") else make_reranker(reranker, model=rerank_model)
    return ExperienceRetrieval(found, config, reranker=service, embedder=embedder)


def _experience_bank(bank_dir: Path, embedder, fill_from: str | Path | None, progress) -> None:
    """The experience bank of the traces in ``fill_from`` (default: the bundled ``experience`` dataset)."""
    from ..datasets.smarthome import resolve_dataset
    from ..memory.experience_bank import build_experience_bank

    traces = resolve_dataset(fill_from if fill_from is not None else "experience")
    build_experience_bank(traces, bank_dir, embedder, rebuild=True, progress=progress)


STORE_FILL = StoreFill(_experience_bank)  # what fills an empty --store
