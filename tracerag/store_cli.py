"""Store commands for the command line, and opening the store a program runs on.

``add_store_commands(subparsers)`` adds ``tracerag store copy --from URI --to URI`` (and its options) to
the CLI's sub-parsers; ``cmd_store(args)`` runs it. Everything heavy (numpy, pymilvus) is imported when
the command runs, not when the parser is built.

``open_program_store(kind, uri, embedder, fill_from=...)`` opens (creating) the store for a program and,
when it is empty, fills it the way the default numpy bank is built today, with the same code:

- ``experience``: ``build_experience_bank`` over the traces directory ``fill_from`` (default: the bundled
  ``experience`` dataset);
- ``rag``: ``ingest_documents`` of the JSONL corpus ``fill_from`` (default: the bundled PubMedQA abstracts;
  the embedding cache makes their vectors free after the first time);
- ``planner``: ``index_templates`` of the templates JSONL ``fill_from`` (default: the bundled planner
  dataset's ``templates.jsonl``).

A numpy URI is built in place; any other store gets a numpy bank built in a temporary directory (the
embedding cache makes that cheap) and copied into it with :func:`~tracerag.stores.store_copy.copy_store`.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

from .errors import InvalidValue

__all__ = ["PROGRAM_STORE_KINDS", "add_store_commands", "cmd_store", "open_program_store"]

logger = logging.getLogger(__name__)

PROGRAM_STORE_KINDS = ("experience", "rag", "planner")


def add_store_commands(subparsers: Any) -> None:
    """Add ``store`` (with ``store copy``) to an argparse sub-parser set; dispatch with :func:`cmd_store`."""
    store = subparsers.add_parser("store", help="vector stores: copy a store between backends (numpy bank, Milvus)")
    verbs = store.add_subparsers(dest="store_command", required=True)
    copy = verbs.add_parser(
        "copy", help="copy every row of one store into another, resumably, and verify the copy",
        description="Stream every row (id, vector, metadata) of --from into --to in batches. Rerunning an "
                    "interrupted copy skips rows already copied. Verifies the counts and a sample of vectors "
                    "(cosine >= 0.9999) at the end; exit 1 when that fails. URIs: a bank directory, "
                    "milvus:./file.db, milvus://host:19530 or milvus+https://host, optionally ?collection=name "
                    "(the Milvus token comes from TRACERAG_MILVUS_TOKEN).")
    copy.add_argument("--from", dest="source", required=True, metavar="URI", help="the store to read")
    copy.add_argument("--to", dest="target", required=True, metavar="URI",
                      help="the store to write (created with the source's embedder and dimension if missing)")
    copy.add_argument("--batch-size", type=int, default=1000, help="rows per read and per write (default 1000)")
    copy.add_argument("--sample", type=int, default=256, help="rows whose vectors are compared at the end")
    copy.add_argument("--no-refresh", dest="refresh", action="store_false",
                      help="do not reload the destination's HNSW index at the end (a Milvus server is unavailable "
                           "while it reloads; without it rows sealed after the index switch stay on an interim index)")
    copy.add_argument("--json", action="store_true", help="print the report as JSON")
    copy.add_argument("-v", "--verbose", action="store_true", help="log progress details")


def cmd_store(args: Any) -> int:
    """Run a ``store`` sub-command; returns the exit code (0 ok, 1 verification failed)."""
    if getattr(args, "verbose", False):
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.store_command == "copy":
        from .stores.store_copy import copy_store

        report = copy_store(args.source, args.target, batch_size=args.batch_size, sample=args.sample,
                            progress=sys.stderr.isatty(), refresh=getattr(args, "refresh", True))
        print(json.dumps(report.to_dict(), indent=2) if args.json else report.summary())
        return 0 if report.ok else 1
    raise InvalidValue(f"unknown store command {args.store_command!r}")


def open_program_store(kind: str, uri: str | Path, embedder: Any, fill_from: str | Path | None = None,
                       *, progress: Any = None) -> Any:
    """The VectorStore at ``uri`` for program ``kind`` (experience, rag, planner), filled when empty.

    See the module docstring for what fills each kind. A store that already holds rows is returned as it
    is (checked against ``embedder``): filling never replaces rows.
    """
    from .stores.stores import open_store
    from .stores.vector_store import parse_store_uri

    if kind not in PROGRAM_STORE_KINDS:
        raise InvalidValue(f"unknown store kind {kind!r}; expected one of {', '.join(PROGRAM_STORE_KINDS)}")
    target = parse_store_uri(uri)
    if target.backend == "numpy" and not (Path(target.location) / "manifest.json").exists():
        _build_numpy(kind, Path(target.location), embedder, fill_from, progress)
        return open_store(uri, embedder_id=embedder.id, dim=embedder.dim)
    store = open_store(uri, embedder_id=embedder.id, dim=embedder.dim, create=True)
    try:
        if store.count() == 0:
            _fill(kind, store, embedder, fill_from, progress)
    except BaseException:
        store.close()
        raise
    return store


def _fill(kind: str, store: Any, embedder: Any, fill_from: str | Path | None, progress: Any) -> None:
    """Fill an empty store: templates go straight in; banks are built as numpy and copied over."""
    if kind == "planner":
        from .memory.playbook import index_templates

        index_templates(store, embedder, _templates(fill_from))
        return
    from .stores.store_copy import copy_store

    with tempfile.TemporaryDirectory(prefix="tracerag-fill-") as tmp:
        bank_dir = Path(tmp) / "bank"
        _build_numpy(kind, bank_dir, embedder, fill_from, progress)
        _check(copy_store(str(bank_dir), store, progress=progress))


def _check(report: Any) -> None:
    if not report.ok:
        raise InvalidValue(report.summary())


def _build_numpy(kind: str, bank_dir: Path, embedder: Any, fill_from: str | Path | None, progress: Any) -> None:
    if kind == "experience":
        from .datasets.smarthome import resolve_dataset
        from .memory.experience_bank import build_experience_bank

        traces = resolve_dataset(fill_from if fill_from is not None else "experience")
        build_experience_bank(traces, bank_dir, embedder, rebuild=True, progress=progress)
    elif kind == "rag":
        from .datasets.pubmedqa import pubmedqa_abstracts_path
        from .documents.corpus import ingest_documents

        docs = Path(fill_from) if fill_from is not None else pubmedqa_abstracts_path()
        ingest_documents(docs, bank_dir, embedder, progress=progress)
    else:
        import numpy as np

        from .memory.playbook import index_templates
        from .stores.cosine_bank import CosineBank
        from .stores.stores import open_store

        CosineBank.from_vectors(bank_dir, np.zeros((0, embedder.dim), np.float32), [], [], embedder_id=embedder.id)
        store = open_store(bank_dir, embedder_id=embedder.id, dim=embedder.dim)
        index_templates(store, embedder, _templates(fill_from))


def _templates(fill_from: str | Path | None) -> list[Any]:
    from .datasets.planner import TEMPLATES_FILE, load_templates
    from .datasets.smarthome import resolve_dataset

    path = Path(fill_from) if fill_from is not None else resolve_dataset("planner") / TEMPLATES_FILE
    if path.is_dir():
        path = path / TEMPLATES_FILE
    return list(load_templates(path).values())
