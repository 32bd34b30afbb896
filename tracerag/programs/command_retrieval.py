"""CommandRetrieval: smart-home utterance -> (device, command) candidates, or a bulk plan.

parse (one LM call) -> CommandIndex -> optional arbitration (a second call, only when a bulk command
is ambiguous and arbitration is enabled). Without an LM, or when the LM call fails or returns
garbage, the deterministic no-LM parser takes over: the app always gets an answer.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import dspy

from ..retrievers.command_index import CommandIndex
from ..retrievers.command_results import BulkPlan
from ..signatures.command import ArbitrateCapability, CommandOption, ParseCommand
from ..signatures.query_ir import QueryIR
from .rule_parser import parse_without_lm

logger = logging.getLogger(__name__)


class CommandRetrieval(dspy.Module):
    """Find the commands an utterance asks for in one of the homes it was given.

    `indexes` maps a home name to its CommandIndex (a single index is accepted too). `ir_source`
    is "lm" (parse with the configured LM, falling back to rules), "none" (rules only) or "gold"
    (the caller passes `ir`: the upper bound of the retrieval stage).
    """

    def __init__(self, indexes: CommandIndex | Mapping[str, CommandIndex], *, k: int = 10,
                 arbitration: bool = False, ir_source: str = "lm"):
        super().__init__()
        self.indexes = {indexes.home.name: indexes} if isinstance(indexes, CommandIndex) else dict(indexes)
        self.k = k
        self.arbitration = arbitration
        self.ir_source = ir_source
        self.parse = dspy.Predict(ParseCommand)
        self.arbitrate = dspy.Predict(ArbitrateCapability)

    def index_for(self, home: str | None) -> CommandIndex:
        if home is None and len(self.indexes) == 1:
            return next(iter(self.indexes.values()))
        if home not in self.indexes:
            raise KeyError(f"unknown home {home!r}; this program indexes {sorted(self.indexes)}")
        return self.indexes[home]

    def forward(self, query: str, home: str | None = None, ir: QueryIR | dict | None = None) -> dspy.Prediction:
        index = self.index_for(home)
        lm_calls = 0
        if ir is not None and self.ir_source == "gold":
            parsed, source = QueryIR.model_validate(ir), "gold"
        elif self.ir_source == "lm" and dspy.settings.lm is not None:
            parsed, source = self._parse_with_lm(query, index)
            lm_calls += 1
        else:
            parsed, source = parse_without_lm(query, index), "rules"
        candidates = index.search(parsed, query, k=self.k)
        bulk = index.plan_bulk(parsed, query) if parsed.is_bulk else None
        if bulk is not None and bulk.hint == "need_clarification" and bulk.options and self.arbitration \
                and dspy.settings.lm is not None:
            bulk = self._arbitrate(query, parsed, bulk, index)
            lm_calls += 1
        return dspy.Prediction(candidates=candidates, bulk=bulk, ir=parsed, parse_source=source,
                               lm_calls=lm_calls, home=index.home.name)

    def _parse_with_lm(self, query: str, index: CommandIndex) -> tuple[QueryIR, str]:
        try:
            ir = self.parse(utterance=query, rooms=index.home.rooms).ir
            return QueryIR.model_validate(ir if not isinstance(ir, QueryIR) else ir.model_dump()), "lm"
        except Exception as exc:  # any LM failure or unparsable answer: the documented fallback
            logger.warning("ParseCommand failed (%s: %s); using the no-LM parser", type(exc).__name__, exc)
            return parse_without_lm(query, index), "rules_fallback"

    def _arbitrate(self, query: str, ir: QueryIR, plan: BulkPlan, index: CommandIndex) -> BulkPlan:
        """One closed-set LM call: an option index to expand, or a question for the user."""
        options = [CommandOption(index=i, **o.model_dump(exclude={"p"})) for i, o in enumerate(plan.options)]
        try:
            decision = self.arbitrate(utterance=query, options=options).decision
        except Exception as exc:
            logger.warning("ArbitrateCapability failed (%s: %s); asking the user", type(exc).__name__, exc)
            return plan
        if decision.choice_index is not None and 0 <= decision.choice_index < len(plan.options):
            return index.choose(plan, plan.options[decision.choice_index].command_id, ir, query)
        return plan.model_copy(update={"question": (decision.question or "").strip()})


def build_indexes(home_paths, embedder, params=None) -> dict[str, CommandIndex]:
    """Load and index each home directory (embeddings come from the embedder's cache when warm)."""
    from ..retrievers.home import Home

    indexes = {}
    for path in home_paths:
        home = Home.load(path)
        indexes[home.name] = CommandIndex(home, embedder, params)
    return indexes
