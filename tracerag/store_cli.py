"""Store commands for the command line, and opening the store a program runs on.

``add_store_commands(subparsers)`` adds ``tracerag store copy --from URI --to URI`` (and its options) to
the CLI's sub-parsers; ``cmd_store(args)`` runs it. Everything heavy (numpy, pymilvus) is imported when
the command runs, not when the parser is built.

``open_program_store(fill, uri, embedder, fill_from=...)`` opens (creating) the store a program runs on and,
when it is empty, fills it the way the program's default numpy bank is built, with the same code. What fills
it is the program's own: its package hands a :class:`StoreFill` (its ``ProgramEntry.store_fill``), so this
module holds no branch per program. A numpy URI is built in place; any other store gets a numpy bank built in
a temporary directory (the embedding cache makes that cheap) and copied into it with
:func:`~tracerag.stores.store_copy.copy_store`, unless the program writes its rows straight into any store.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InvalidValue

__all__ = ["StoreFill", "add_store_commands", "cmd_store", "open_program_store"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoreFill:
    """How a program fills an empty store with its data: ``fill_from`` (a path), None for its bundled data.

    ``build_bank(bank_dir, embedder, fill_from, progress)`` builds a numpy bank in the new directory
    ``bank_dir``; ``fill(store, embedder, fill_from, progress)``, when the program has one, writes the rows
    straight into any open store instead of building a bank and copying it."""

    build_bank: Callable[[Path, Any, str | Path | None, Any], None]
    fill: Callable[[Any, Any, str | Path | None, Any], None] | None = None


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


def open_program_store(fill: StoreFill, uri: str | Path, embedder: Any, fill_from: str | Path | None = None,
                       *, progress: Any = None) -> Any:
    """The VectorStore at ``uri`` for the program whose ``fill`` it is, filled when empty.

    See the module docstring for how. A store that already holds rows is returned as it is (checked against
    ``embedder``): filling never replaces rows.
    """
    from .stores.stores import open_store
    from .stores.vector_store import parse_store_uri

    target = parse_store_uri(uri)
    if target.backend == "numpy" and not (Path(target.location) / "manifest.json").exists():
        fill.build_bank(Path(target.location), embedder, fill_from, progress)
        return open_store(uri, embedder_id=embedder.id, dim=embedder.dim)
    store = open_store(uri, embedder_id=embedder.id, dim=embedder.dim, create=True)
    try:
        if store.count() == 0:
            _fill(fill, store, embedder, fill_from, progress)
    except BaseException:
        store.close()
        raise
    return store


def _fill(fill: StoreFill, store: Any, embedder: Any, fill_from: str | Path | None, progress: Any) -> None:
    """Fill an empty store: straight in when the program can, else a numpy bank built and copied over."""
    if fill.fill is not None:
        fill.fill(store, embedder, fill_from, progress)
        return
    from .stores.store_copy import copy_store

    with tempfile.TemporaryDirectory(prefix="tracerag-fill-") as tmp:
        bank_dir = Path(tmp) / "bank"
        fill.build_bank(bank_dir, embedder, fill_from, progress)
        report = copy_store(str(bank_dir), store, progress=progress)
    if not report.ok:
        raise InvalidValue(report.summary())
