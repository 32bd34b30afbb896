"""``tracerag build-bank`` (solved traces into an experience bank) and ``tracerag ingest`` (documents into a
chunk bank): into a bank directory, or through a staging bank into a store (only new or changed rows are
written)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..errors import InvalidValue
from .flags import add_bank_or_store, add_max_skipped, add_model_flags, add_threads_flag


def add_bank_commands(sub) -> None:
    """Add ``build-bank`` and ``ingest`` to the top-level subparsers."""
    bank = sub.add_parser("build-bank", help="index solved traces into an experience bank (atomic; --append adds "
                          "only new traces)")
    bank.add_argument("--traces", required=True, help="directory holding tasks/<task_id>/trace.json")
    add_bank_or_store(bank, "bank directory to create or grow")
    mode = bank.add_mutually_exclusive_group()
    mode.add_argument("--append", action="store_true", help="embed only traces not in the bank yet")
    mode.add_argument("--rebuild", action="store_true", help="replace an existing bank")
    bank.add_argument("--no-captions", action="store_true", help="do not caption images even with an LM configured")
    add_threads_flag(bank, "images captioned at once (default 8)", default=8)
    add_max_skipped(bank, 0.05)
    add_model_flags(bank)

    ingest = sub.add_parser("ingest", help="chunk and embed documents into a chunk bank (unchanged ones are free)")
    ingest.add_argument("--docs", required=True, help='JSONL, one document a line: {"id", "text" | "contexts", ...}')
    add_bank_or_store(ingest, "chunk bank directory to create or grow")
    ingest.add_argument("--size", type=int, default=500, help="chunk size in characters (default 500)")
    ingest.add_argument("--overlap", type=int, default=100, help="overlap in characters, whole sentences")
    add_model_flags(ingest)


def into_store(args, build) -> tuple[object, object]:
    """Run ``build(bank_dir)`` into ``--bank``; with ``--store``, into a staging bank whose rows are then
    copied into the store (unchanged rows are skipped, so a rerun writes only what is new). Returns
    (what build returned, the copy report or None)."""
    if args.bank or not str(args.store).startswith("milvus"):
        return build(Path(args.bank or args.store)), None
    import tempfile

    from ..stores.store_copy import copy_store

    with tempfile.TemporaryDirectory(prefix="tracerag-staging-") as staging:
        built = build(Path(staging) / "bank")
        copied = copy_store(Path(staging) / "bank", args.store, progress=sys.stderr.isatty())
    print(copied.summary(), file=sys.stderr)
    if not copied.ok:
        raise InvalidValue(f"{args.store}: the copy did not verify")
    return built, copied


def cmd_build_bank(args) -> int:
    from ..config import get_embedder
    from ..memory.experience_bank import build_experience_bank
    from ..programs.captioning import make_captioner
    from .configuring import configure

    configure(args)
    captioner = None if args.no_captions else make_captioner(args.num_threads)
    report, copied = into_store(args, lambda bank: build_experience_bank(
        args.traces, bank, get_embedder(), append=args.append, rebuild=args.rebuild, captioner=captioner,
        progress=sys.stderr.isatty(), max_skipped=args.max_skipped, warn=False))
    print(f"{args.traces}: {report.read_summary}", file=sys.stderr)
    for problem in report.corrupt_skipped:
        print(f"  skipped: {problem}", file=sys.stderr)
    out = {**report.to_dict(), "corrupt_skipped": len(report.corrupt_skipped)}
    print(json.dumps(out | ({"store": copied.to_dict()} if copied else {}), ensure_ascii=False))
    return 0


def cmd_ingest(args) -> int:
    from ..config import get_embedder
    from ..documents.corpus import ingest_documents
    from ..workflows.reading import print_reading
    from .configuring import configure

    configure(args)
    report, copied = into_store(args, lambda bank: ingest_documents(
        args.docs, bank, get_embedder(), size=args.size, overlap=args.overlap, progress=sys.stderr.isatty()))
    print_reading(args.docs, report.reading)
    for doc in report.changed_skipped:
        print(f"  changed since it was ingested, skipped (rebuild the bank to update it): {doc}", file=sys.stderr)
    print(json.dumps(report.to_dict() | ({"store": copied.to_dict()} if copied else {}), ensure_ascii=False))
    return 0
