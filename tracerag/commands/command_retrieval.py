"""CommandRetrieval: smart-home utterance -> (device, command) candidates, or a bulk plan.

parse (one LM call) -> CommandIndex -> optional arbitration (a second call, only when a bulk command
is ambiguous and arbitration is enabled). At most two LM calls per utterance. Without an LM, or when
the LM call fails or returns garbage, the deterministic no-LM parser takes over (``hint="lm_failed"``,
``lm_fallbacks=["parse"]``): the app always gets an answer, and never a worse one than without an LM.
An utterance that asks for nothing (empty, punctuation, words no command of the home is close to,
only negated verbs that start nothing: "别锁门", "don't turn off the fan") gets no candidates and
``hint=Hint.NO_INTENT``, never a confident command to execute. A negated verb that starts something asks
for its opposite: "老人房的灯不用开了" is searched as "老人房的灯关闭了" (see ``home_commands.negation``).
An utterance longer than ``MAX_UTTERANCE_CHARS`` is no command (the longest bundled one has 58
characters, and the search's cost grows with the length): no candidates, ``hint=Hint.TOO_LONG``, no LM call.
An utterance that asks the home for nothing costs no LM call either.

Every path goes through ``home_commands.safety_screen``: a sensitive command (unlock, open a door or a valve,
disarm, an oven on) the utterance did not ask for is never a candidate or in a plan (``withheld`` says what
was held back), and the LM's parse is checked against the utterance and the home field by field, the fields that
decide the search against what the words say (``parse_backing``) (``hint="lm_overruled"``, ``lm_overruled`` names
the checks, ``lm_parse`` keeps the parse as the LM gave it).
"""

from __future__ import annotations

from collections.abc import Mapping

import dspy

from ..home_commands.home_index import CommandIndex
from ..programs.guarded_step import Stages
from ..signatures.query_ir import QueryIR
from .answering import MAX_UTTERANCE_CHARS, CommandAnswering, build_indexes
from .result import CommandsResult
from .signatures import ArbitrateCapability, ParseCommand

__all__ = ["MAX_UTTERANCE_CHARS", "CommandRetrieval", "build_indexes"]


class CommandRetrieval(CommandAnswering, dspy.Module):
    """Find the commands an utterance asks for in one of the homes it was given.

    The prediction: ``candidates``, ``bulk`` (a BulkPlan for all/except), ``ir``, ``parse_source``
    (lm, rules, rules_fallback, gold; none when nothing was read), ``hint`` (None, ``lm_failed``,
    ``lm_overruled``, ``no_intent``, ``too_long``, ``withheld``: every command it reached is held back by the
    safety rules or the home's policy, ``unknown_scope``: it says a floor or room this home does not have
    (``unresolved`` lists them; ask the user), ``no_match``: nothing in the home matched; an empty answer always
    has one), ``withheld``, ``unresolved``, ``unanswered`` (where the utterance makes several requests, the
    ones after the first, which is the one answered: ask it again), ``lm_overruled``, ``lm_parse``,
    ``lm_fallbacks`` (stages that fell back: parse, arbitrate), ``lm_calls``.

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

    def forward(self, query: str, home: str | None = None, ir: QueryIR | dict | None = None) -> dspy.Prediction:
        """Find the (device, command) the utterance asks for, or the plan for every device it names.

        Args:
            query: the utterance, as said ("打开客厅的灯", "turn off every light but the hall").
            home: which home (a name the program indexes); needed when it indexes several.
            ir: a parse the caller already has (``ir_source="gold"`` uses it instead of parsing).

        Returns:
            A ``dspy.Prediction`` with the fields of :class:`~tracerag.commands.result.CommandsResult`:
            ``candidates`` (ranked ``Candidate``s, at most ``k``), ``bulk`` (a ``BulkPlan`` for all/except, or
            None), ``ir`` (the parse used), ``hint`` (``tracerag.hints.Hint``: why it is empty or needs the user),
            ``withheld`` (commands held back and why), the LM's outcome and ``home``.

        Example:
            >>> program = tracerag.build("commands")
            >>> program(query="打开客厅的灯", home="home_small").candidates[0].command_id
            'main-switch-on'
        """
        stages = Stages()
        return stages.run(self._pipeline(query, home, ir, stages))

    async def aforward(self, query: str, home: str | None = None,
                       ir: QueryIR | dict | None = None) -> dspy.Prediction:
        """``forward`` for ``await program.acall(...)``: the parse through the LM's async path, a remote
        embedder's rows for the search awaited, the rule parser and the index search in a worker thread;
        the same prediction."""
        stages = Stages()
        return await stages.arun(self._pipeline(query, home, ir, stages))

    def execute(self, pred: dspy.Prediction, target, dry_run: bool = True, *, query: str | None = None,
                confirm_sensitive: bool = False):
        """Send ``pred`` to a real home's API (``tracerag.smarthome.execute``): dry-run by default, refused
        for unsafe hints; ``query`` (the utterance) is where argument values come from; a sensitive command
        (unlock, open a door …) is sent only with ``confirm_sensitive=True``. A per-device report."""
        from ..smarthome.execute import execute

        home = self.index_for(getattr(pred, "home", None)).home
        return execute(pred, target, dry_run=dry_run, home=home, query=query, confirm_sensitive=confirm_sensitive)

    _result = staticmethod(CommandsResult.prediction)
