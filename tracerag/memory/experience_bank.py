"""Build or grow the experience memory bank: correct traces -> index texts -> a CosineBank.

A bank row is one correct trace: its id is the task_id, its vector embeds the trace's index text,
and its metadata keeps what the program needs at run time (index text for reranking, reasoning and
steps for summarising, the caption), so an app needs the bank directory only, not the traces.

Bank directory: CosineBank's files (``ids.json`` and ``metadata.jsonl`` are what the bank reads)
plus two views written into every version for other tools: ``task_ids.json`` (the task_ids in row
order) and ``captions.json`` ({task_id: caption} for traces that have one).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..embedding.embedders import Embedder
from ..stores.bank_errors import BankExists
from ..stores.bank_input import Progress
from ..stores.cosine_bank import BankError, ExperienceBank
from .traces import Trace, load_traces

__all__ = ["BankBuildReport", "Captioner", "ExperienceBank", "build_experience_bank"]

logger = logging.getLogger(__name__)

# Given traces that need a caption (they have images and none precomputed), return task_id -> caption
# for those it could caption. Built from a vision LM in programs/captioning.py; None skips captioning.
Captioner = Callable[[list[Trace]], dict[str, str]]


@dataclass
class BankBuildReport:
    bank: str
    traces_seen: int = 0
    correct: int = 0
    incorrect_skipped: int = 0
    corrupt_skipped: list[str] = field(default_factory=list)  # "path: field: what was expected", one per file
    read: dict = field(default_factory=dict)  # the ReadReport: read, kept, normalised per kind, skipped per reason
    read_summary: str = ""  # the same as one line: "read 120 traces, kept 118; normalised: …; skipped: …"
    already_in_bank: int = 0
    added: int = 0
    captioned: int = 0
    bank_size: int = 0
    seconds: float = 0.0

    @property
    def traces_per_second(self) -> float:
        return self.added / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        out = {**asdict(self), "traces_per_second": round(self.traces_per_second, 1)}
        del out["read_summary"]
        return out


def build_experience_bank(
    traces_dir: str | Path,
    bank_dir: str | Path,
    embedder: Embedder,
    *,
    append: bool = False,
    rebuild: bool = False,
    captioner: Captioner | None = None,
    batch_size: int = 256,
    progress: Progress = None,
    max_skipped: float = 0.05,
    warn: bool = True,
) -> BankBuildReport:
    """Index the correct traces of ``traces_dir`` into the bank at ``bank_dir``.

    ``append`` embeds only traces whose task_id is not in the bank yet (an existing trace is never
    re-embedded or changed); ``rebuild`` replaces an existing bank. Without either, an existing bank
    is an error, so a typo cannot wipe a bank. Either way the write is atomic: a crash leaves the
    previous bank as it was, and readers holding it open keep reading it.

    The traces are read liberally (``load_traces``); when nothing usable is left or more than
    ``max_skipped`` (a share) of the trace files were skipped as unreadable, ``DataSetShrunk`` (a
    ValueError naming the directory, the counts and the first problems) is raised before the bank is
    touched. Incorrect traces are not unreadable: they are counted in ``incorrect_skipped``. With
    ``warn``, a build that skipped or normalised anything logs the read summary as a warning.
    """
    started = time.perf_counter()
    bank_dir = Path(bank_dir)
    exists = (bank_dir / "manifest.json").exists()
    if exists and not (append or rebuild):
        raise BankError(f"{bank_dir}: a bank already exists; pass --append to add new traces or --rebuild to "
                        "replace it")
    loaded = load_traces(traces_dir)
    loaded.report.check(max_skipped, str(traces_dir))
    if warn and (loaded.report.skipped or loaded.report.normalised):
        logger.warning("%s: %s", traces_dir, loaded.report.summary())
        for problem in loaded.corrupt:
            logger.warning("skipped %s", problem)
    report = BankBuildReport(bank=str(bank_dir), traces_seen=loaded.seen, correct=len(loaded.traces),
                             incorrect_skipped=loaded.incorrect, corrupt_skipped=list(loaded.corrupt),
                             read=loaded.report.to_dict(), read_summary=loaded.report.summary())
    bank = ExperienceBank.load(bank_dir, embedder) if exists and append else None
    todo = [t for t in loaded.traces if bank is None or t.task_id not in bank]
    report.already_in_bank = len(loaded.traces) - len(todo)

    captions = {t.task_id: t.caption for t in todo}
    needs_caption = [t for t in todo if t.caption is None and t.images]
    if captioner is not None and needs_caption:
        made = captioner(needs_caption)
        captions.update({k: v for k, v in made.items() if k in captions and v})
        report.captioned = len(made)

    ids = [t.task_id for t in todo]
    texts = [t.index_text(captions[t.task_id]) for t in todo]
    metadata = [t.bank_metadata(captions[t.task_id]) for t in todo]
    if bank is not None:
        report.added = bank.append(ids, texts, metadata, batch_size=batch_size, progress=progress) if todo else 0
    else:
        if not todo:
            raise BankError(f"{traces_dir}: no correct traces to build a bank from "
                            f"({loaded.incorrect} incorrect, {len(loaded.corrupt)} unreadable)")
        try:
            bank = ExperienceBank.create(bank_dir, embedder, ids, texts, metadata, batch_size=batch_size,
                                         progress=progress, overwrite=rebuild)
            report.added = len(ids)
        except BankExists:
            if not append:
                raise
            # another --append created the bank first: what it does not hold yet is appended
            bank = ExperienceBank.load(bank_dir, embedder)
            todo = [i for i, task_id in enumerate(ids) if task_id not in bank]
            report.already_in_bank += len(ids) - len(todo)
            report.added = bank.append([ids[i] for i in todo], [texts[i] for i in todo],
                                       [metadata[i] for i in todo], batch_size=batch_size,
                                       progress=progress) if todo else 0
    report.bank_size = len(bank)
    report.seconds = time.perf_counter() - started
    logger.info("bank %s: +%d traces (%d already present, %d incorrect, %d unreadable) in %.1fs",
                bank_dir, report.added, report.already_in_bank, report.incorrect_skipped,
                len(report.corrupt_skipped), report.seconds)
    return report
