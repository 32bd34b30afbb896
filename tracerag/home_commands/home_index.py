"""CommandIndex: find the (device, command) pairs an utterance asks for, in one home.

The index is an assembly, built once per home and cheap to query; each part is a concept of its own:

- ``table`` (``command_table``): the (device, command) rows, the slots devices of one profile share, and
  the embedded command documents;
- ``rooms`` (``room_words``) and ``names`` (``home_names``): the home's rooms, floors, device names and
  labels, and what an utterance says of them;
- ``verbs``, ``arguments``, ``subjects`` (``verb_channel``, ``argument_channel``, ``subject_channel``) and
  ``scoring``: the channels a query is scored on, fused per row;
- ranking (``ranking``: ``search``, ``rank``) and bulk plans for "all" / "except" (``bulk_plans``:
  ``plan_bulk``, ``choose``) read them.

What the operation asked for decides is ``command_choice``; what one utterance may reach is
``safety_screen``; whether a one-device parse means one device, a kind or an area is ``naming_scope``.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from ..embedding.embedders import Embedder, LexicalEmbedder
from ..signatures.query_ir import QueryIR
from . import bulk_plans, ranking
from .argument_channel import ArgumentChannel
from .command_results import BulkPlan, Candidate
from .command_table import CommandTable
from .home import Home
from .home_names import ROOMS_SAID_CACHE, HomeNames
from .index_params import IndexParams
from .room_words import RoomWords
from .scoring import Scoring
from .subject_channel import SubjectChannel
from .verb_channel import VerbChannel

logger = logging.getLogger(__name__)


class CommandIndex:
    """Command-level index of one home. Cheap to query; shared, never copied, by DSPy optimizers."""

    def __init__(self, home: Home, embedder: Embedder, params: IndexParams | None = None,
                 lexical: LexicalEmbedder | None = None):
        started = time.perf_counter()
        self.home = home
        self.embedder = embedder
        self.lexical = lexical or LexicalEmbedder()
        self.params = params or IndexParams()
        self._memo: dict[tuple, object] = {}
        self.table = CommandTable(home, embedder, self.lexical)
        self.rooms = RoomWords(home, self.table.device_rooms)
        self.names = HomeNames(home, self.table, self.rooms, self.params, self.memo)
        self.verbs = VerbChannel(self.table)
        self.arguments = ArgumentChannel(self.table, self.names, self.verbs)
        self.subjects = SubjectChannel(self.table, self.rooms, self.names, self.arguments, self.verbs, embedder,
                                       self.params)
        self.scoring = Scoring(self.table, self.rooms, self.names, self.arguments, self.subjects, self.verbs,
                               embedder, self.lexical, self.params)
        logger.info("indexed %s: %d devices, %d commands, %d distinct documents (%s) in %.2f s", home.name,
                    len(home.devices), len(self.table.rows), len(self.table.doc_texts), embedder.id,
                    time.perf_counter() - started)

    def __deepcopy__(self, memo):
        return self

    @property
    def manifest(self) -> dict:
        return {"home": self.home.name, "embedder": self.embedder.id, "dim": int(self.embedder.dim),
                "devices": len(self.home.devices), "rows": len(self.table.rows),
                "documents": len(self.table.doc_texts)}

    def memo(self, key: tuple, compute):
        """``compute()``, remembered for ``key``: what one utterance's parse, search and safety rules each ask of
        it is read once (the last ``ROOMS_SAID_CACHE`` times four answers are kept)."""
        if key in self._memo:
            return self._memo[key]
        if len(self._memo) >= 4 * ROOMS_SAID_CACHE:
            self._memo.clear()
        value = self._memo[key] = compute()
        return value

    # ----- what the index answers ----------------------------------------------------------------

    def search(self, ir: QueryIR, utterance: str, k: int = 10, **screen) -> list[Candidate]:
        """Top-k (device, command) candidates for a single-target query (``screen``: see ``rank``)."""
        return self.rank(ir, utterance, k, **screen)[0]

    def rank(self, ir: QueryIR, utterance: str, k: int = 10, *, blocked: np.ndarray | None = None,
             demoted: np.ndarray | None = None, unfit: np.ndarray | None = None,
             switching: np.ndarray | None = None,
             kind_named: np.ndarray | None = None) -> tuple[list[Candidate], list[int]]:
        """Top-k candidates, and the ``blocked`` rows that would have ranked among them (best first): see
        ``ranking.rank`` for what the safety screen's masks do."""
        return ranking.rank(self, ir, utterance, k, blocked=blocked, demoted=demoted, unfit=unfit,
                            switching=switching, kind_named=kind_named)

    def plan_bulk(self, ir: QueryIR, utterance: str, *, blocked: np.ndarray | None = None,
                  skipped: np.ndarray | None = None, other_kind: np.ndarray | None = None) -> BulkPlan:
        """One command for every device an all / except utterance reaches (``bulk_plans.plan_bulk``)."""
        return bulk_plans.plan_bulk(self, ir, utterance, blocked=blocked, skipped=skipped, other_kind=other_kind)

    def choose(self, plan: BulkPlan, command_id: str, ir: QueryIR, utterance: str, *,
               blocked: np.ndarray | None = None) -> BulkPlan:
        """Expand a command picked outside the index (an arbiter or the user's answer)."""
        return bulk_plans.choose(self, plan, command_id, ir, utterance, blocked=blocked)
