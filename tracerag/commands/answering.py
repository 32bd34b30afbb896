"""How CommandRetrieval answers an utterance, as plain Python: read it, parse it, search the home's index, plan
for all/except, screen for safety, and say why an answer is empty (the module docstring of
``command_retrieval`` tells the whole story).

``CommandAnswering`` is that pipeline, written once as a generator of ``lm_step``/``work`` requests
(``programs.guarded_step``); ``CommandRetrieval`` (a ``dspy.Module``) runs it with its LM stages, and
``RuleCommandRetrieval`` runs it on the rule parse alone without DSPy: the same answers as
``CommandRetrieval(ir_source="none")``, as a ``CommandsResult``. A command line run without an LM answers with
the latter, so its first answer does not wait for DSPy to be imported (about half a second of CPU).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import partial

from ..device_operations import OTHER
from ..embedding.awaited_rows import with_embeddings
from ..errors import UnknownKey
from ..hints import Hint
from ..home_commands.category_words import categories_said
from ..home_commands.command_results import BulkPlan
from ..home_commands.home_index import CommandIndex
from ..home_commands.home_operations import with_operation
from ..home_commands.naming_scope import (
    names_a_kind_only,
    names_an_area,
    says_one_device,
    says_the_kind_itself,
    the_one_said,
)
from ..home_commands.negation import read_negation
from ..home_commands.places import only_floors_of_a_label, unresolved_places
from ..home_commands.plain_verbs import plain_verbs
from ..home_commands.safety_screen import Screen, safety_of
from ..home_commands.several_requests import acting_clauses, first_request
from ..home_commands.spelling import corrected
from ..home_commands.values import with_digits
from ..programs.guarded_step import Pipeline, Stages, lm_step, work
from ..programs.spans import COMMAND_BULK, COMMAND_SEARCH
from ..signatures.query_ir import QueryIR
from .parse_backing import backed_by_words
from .result import CommandsResult
from .rule_parser import parse_without_lm

__all__ = ["MAX_UTTERANCE_CHARS", "CommandAnswering", "RuleCommandRetrieval", "build_indexes"]

MAX_UTTERANCE_CHARS = 1_000


class CommandAnswering:
    """The answer to one utterance, for a program holding ``indexes`` (home name -> CommandIndex), ``k``,
    ``ir_source``, ``arbitration`` and the LM stages' predictors ``parse`` and ``arbitrate``; ``_result`` makes
    the program's return value from the fields of ``CommandsResult``."""

    indexes: dict[str, CommandIndex]
    k: int
    arbitration: bool
    ir_source: str
    _result: Callable[..., object]  # each program sets it: a dspy.Prediction, or a CommandsResult

    def index_for(self, home: str | None) -> CommandIndex:
        if home is None and len(self.indexes) == 1:
            return next(iter(self.indexes.values()))
        if home not in self.indexes:
            raise UnknownKey(f"unknown home {home!r}; this program indexes {sorted(self.indexes)}")
        return self.indexes[home]

    def _pipeline(self, query: str, home: str | None, ir, stages: Stages) -> Pipeline:
        index = self.index_for(home)
        if len(query) > MAX_UTTERANCE_CHARS:
            return self._prediction([], None, QueryIR(), "none", stages, index, hint=Hint.TOO_LONG)
        # The LM reads the utterance as said; the rules, the safety checks and the search read it with the home's
        # misspelt words as meant ("frnt door") and its negations first ("灯不用开了" asks for the lights off,
        # "别锁门" for nothing to be done).
        plain = plain_verbs(corrected(index, query))
        said = read_negation(with_digits(plain, index.names.name_spans(plain)))
        text, unanswered = first_request(index, said.text)  # several requests: the first, never a mix of two
        pred = yield from self._answer(index, query, said, text, ir, stages)
        pred.unanswered = unanswered
        return pred

    def _answer(self, index: CommandIndex, query: str, said, text: str, ir, stages: Stages) -> Pipeline:
        """The prediction for one request (``text``: the utterance read, up to the end of its first request)."""
        safety = safety_of(index)
        screen = safety.screen(text)
        search = partial(self._search, index, screen, query)
        overruled: list[str] = []
        if ir is not None and self.ir_source == "gold":
            parsed, source = QueryIR.model_validate(ir), "gold"
        else:
            parsed, source = (yield work(parse_without_lm, text, index)), "rules"
        if source == "gold":  # a label without an operation: read from its action (the rule parse reads its own)
            parsed = with_operation(parsed, text, index)
        said_all = parsed.is_bulk  # the utterance's own quantifier words (or the caller's gold parse)
        if said.asks_nothing:
            return self._prediction([], None, parsed, source, stages, index, hint=Hint.NO_INTENT)
        places = unresolved_places(index, acting_clauses(index, text))
        # a floor or room this home does not have: asked about, never widened to the whole home
        if places and not only_floors_of_a_label(index, text, places):
            return self._prediction([], None, parsed, source, stages, index, hint=Hint.UNKNOWN_SCOPE, unresolved=places)
        ranked, lm_ir = None, None
        if source == "rules" and self.ir_source == "lm" and _has_lm(self.parse):
            # what asks this home for nothing costs no LM call ("hello", "", "今天天气怎么样"): where the rule
            # parse alone shows no intent, its search decides
            if not _parse_shows_intent(parsed):
                ranked = yield from search(parsed, text)
                if not _has_intent(text, parsed, ranked[0]):
                    return self._prediction([], None, parsed, source, stages, index, hint=Hint.NO_INTENT)
            lm_parse = yield lm_step("parse", self.parse, check=_as_ir, fallback="using the no-LM parser",
                                     utterance=query, rooms=index.home.rooms)
            if lm_parse is None:
                source = "rules_fallback"
            else:
                rules = parsed
                (parsed, overruled), source, ranked = safety.check_parse(lm_parse, rules, text), "lm", None
                parsed, unbacked = backed_by_words(parsed, rules, text, index, screen.asked_rows)
                overruled = [*overruled, *(check for check in unbacked if check not in overruled)]
                parsed = with_operation(parsed, text, index)
                lm_ir = lm_parse
        candidates, withheld = ranked if ranked is not None else (yield from search(parsed, text))
        # a clear ask the rules' search did not offer: the search for what it asks (an LM's parse is reconciled
        # with the words by the safety checks instead, and a caller's own parse stands)
        ask = safety.parse_of_the_ask(screen, parsed, candidates) \
            if source in ("rules", "rules_fallback") and not parsed.is_bulk else None
        if ask is not None:
            parsed = ask
            candidates, withheld = yield from search(parsed, text)
        candidates = safety.without_stand_ins(candidates, withheld, text)  # never another device in its place
        candidates, one_said = the_one_said(index, candidates, text)
        if not withheld and not _has_intent(text, parsed, candidates):
            return self._prediction([], None, parsed, source, stages, index, hint=Hint.NO_INTENT)
        bulk = None
        one = parsed.is_bulk or not candidates or one_said or says_one_device(index, candidates[0].device_id, text)
        area = not one and names_an_area(index, parsed, text)
        # no room and no device said, only a kind ("turn the lights off", "关百叶窗"): the home's devices of
        # that kind, as Home Assistant reads it (a plan over more than max_targets asks instead)
        home_wide = not one and not area and source != "gold" and names_a_kind_only(index, parsed, text, candidates)
        area = area or home_wide
        if parsed.is_bulk or area:
            # an area's kind, where the parse gives none, is the kind of the device the search ranks
            # first; with the kind given, a name said there ("客厅窗帘") is a name and narrows the plan
            scoped = parsed if parsed.is_bulk or parsed.has_category else \
                parsed.model_copy(update={"type_hint": _kind_said(text, index) or candidates[0].category})
            # "the lights", "二楼的窗帘": a word for the kind, which no name of the plan need hold
            if home_wide or says_the_kind_itself(index, scoped.name_hint, scoped.type_hint, text):
                scoped = scoped.model_copy(update={"name_hint": ""})
            other_kind = None if scoped.operation not in (None, OTHER) else screen.other_kind
            bulk = yield work(index.plan_bulk, scoped, text, blocked=screen.blocked, skipped=screen.skipped,
                              other_kind=other_kind, afn=_awaiting_embeddings(index, index.plan_bulk),
                              span=COMMAND_BULK, inputs={"query": query}, outputs=_bulk_outputs)
        if bulk is not None and any(safety.is_sensitive(*t) for t in bulk.targets) and not said_all:
            bulk = None  # a plan opens or unlocks several devices only when the utterance says so ("所有", "all")
        if area and bulk is not None and not _agrees(bulk, candidates):
            bulk = None  # the ranked candidates answer: no confident plan over several devices there
        if bulk is not None and bulk.hint == Hint.NEED_CLARIFICATION and bulk.options and self.arbitration \
                and _has_lm(self.arbitrate):
            bulk = yield from self._arbitrate(query, text, parsed, bulk, index, screen)
        bulk = _guarded(bulk, safety.blocked_targets(bulk.targets, screen) if bulk is not None else [])
        hint = stages.hint or (Hint.LM_OVERRULED if overruled else None)
        return self._prediction(safety.marked(candidates), bulk, parsed, source, stages, index, hint=hint,
                                withheld=safety.withheld(withheld, text), overruled=overruled, lm_ir=lm_ir)

    def _search(self, index: CommandIndex, screen: Screen, query: str, parsed: QueryIR, text: str) -> Pipeline:
        """The ranked candidates for one parse, and the rows the safety screen held back from them."""
        # an unknown operation is ranked by the screen's polarity and value rules; a known one needs none of them
        rules = {} if parsed.operation not in (None, OTHER) else {
            "demoted": screen.demoted, "unfit": screen.unfit, "switching": screen.switching}
        return (yield work(index.rank, parsed, text, k=self.k, blocked=screen.blocked, kind_named=screen.kind_named,
                           **rules,
                           afn=_awaiting_embeddings(index, index.rank), span=COMMAND_SEARCH,
                           inputs={"query": query, "k": self.k, "home": index.home.name, "ir": parsed.model_dump()},
                           outputs=_candidate_outputs))

    def _prediction(self, candidates, bulk, parsed, source, stages: Stages, index: CommandIndex, hint, withheld=(),
                    overruled=(), lm_ir=None, unresolved=()):
        planned = bulk is not None and (bulk.targets or bulk.hint)
        if not candidates and not planned and hint in (None, Hint.LM_OVERRULED):
            hint = Hint.WITHHELD if withheld else Hint.NO_MATCH  # an empty answer always says why
        return self._result(
            candidates=candidates, bulk=bulk, ir=parsed, parse_source=source, hint=hint, withheld=list(withheld),
            unresolved=list(unresolved), unanswered="", lm_overruled=list(overruled), lm_parse=lm_ir,
            lm_fallbacks=stages.fallbacks, lm_errors=stages.errors, lm_calls=stages.calls, home=index.home.name)

    def _arbitrate(self, query: str, text: str, ir: QueryIR, plan: BulkPlan, index: CommandIndex,
                   screen: Screen) -> Pipeline:
        """One closed-set LM call on the utterance as said (``query``): an option index to expand with the
        values of the utterance as read (``text``), or a question for the user (on failure: the plan as it
        was, asking the user)."""
        from .signatures import CommandOption  # a DSPy signature's model: only an LM's arbitration reads it

        options = [CommandOption(index=i, **o.model_dump(exclude={"p"})) for i, o in enumerate(plan.options)]
        decision = yield lm_step("arbitrate", self.arbitrate, check=lambda out: out.decision,
                                 fallback="asking the user", utterance=query, options=options)
        if decision is None:
            return plan
        if decision.choice_index is not None and 0 <= decision.choice_index < len(plan.options):
            return (yield work(index.choose, plan, plan.options[decision.choice_index].command_id, ir, text,
                               blocked=screen.blocked))
        return plan.model_copy(update={"question": (decision.question or "").strip()})


class RuleCommandRetrieval(CommandAnswering):
    """CommandRetrieval on the rule parse alone, in plain Python: ``program(query=..., home=...)`` gives the answer
    ``CommandRetrieval(indexes, k=k, ir_source="none")`` gives, as a ``CommandsResult`` (the prediction's fields,
    same names and values) instead of a ``dspy.Prediction``. Neither it nor its answer imports DSPy: what a run
    without an LM answers with (``build_commands(without_lm=True)``)."""

    def __init__(self, indexes: CommandIndex | Mapping[str, CommandIndex], *, k: int = 10):
        self.indexes = {indexes.home.name: indexes} if isinstance(indexes, CommandIndex) else dict(indexes)
        self.k = k
        self.arbitration = False
        self.ir_source = "none"
        self.parse = self.arbitrate = None  # no LM stage is ever asked for

    def __call__(self, query: str, home: str | None = None, ir: QueryIR | dict | None = None) -> CommandsResult:
        stages = Stages()
        return stages.run(self._pipeline(query, home, ir, stages))

    _result = staticmethod(CommandsResult.from_fields)


def _has_lm(predictor) -> bool:
    """Whether an LM stage's predictor has an LM to call (imported here: only a program with LM stages asks)."""
    from ..lm.calls import lm_of

    return lm_of(predictor) is not None


def _kind_said(text: str, index: CommandIndex) -> str | None:
    """The one kind of device of this home the utterance names ("my shutter ... to 22%"), else None."""
    kinds = [k for k in categories_said(text) if k in index.table.categories]
    return kinds[0] if len(kinds) == 1 else None


def _agrees(plan: BulkPlan, candidates: list) -> bool:
    """Whether a plan over every device of an area is one the ranked search (some candidates) backs:
    executable, over several devices, the best candidate's device among them."""
    devices = {device for device, _ in plan.targets}
    return len(devices) >= 2 and candidates[0].device_id in devices


def _guarded(plan: BulkPlan | None, blocked: list[tuple[str, str]]) -> BulkPlan | None:
    """A plan holding a (device, command) the safety screen blocks is not executed: it asks the user. The
    index never builds one (blocked rows are neither options nor targets); this holds whatever path built it."""
    if plan is None or not blocked:
        return plan
    device, command = blocked[0]
    return plan.model_copy(update={"hint": Hint.NEED_CLARIFICATION, "reason": f"the plan holds {command} on {device}, "
                                   "which the utterance does not ask for"})


def _candidate_outputs(ranked: tuple[list, list]) -> dict:
    candidates, withheld = ranked
    return {"ids": [f"{c.device_id}/{c.command_id}" for c in candidates], "scores": [c.score for c in candidates],
            "withheld_rows": len(withheld)}


def _bulk_outputs(plan: BulkPlan | None) -> dict:
    if plan is None:
        return {"command_id": None, "hint": None, "ids": []}
    return {"command_id": plan.command_id, "hint": plan.hint, "ids": [f"{d}/{c}" for d, c in plan.targets],
            "options": [o.command_id for o in plan.options]}


def _as_ir(out) -> QueryIR:
    """The parse's QueryIR; a reply of the wrong shape raises, so the stage falls back."""
    ir = out.ir
    return QueryIR.model_validate(ir.model_dump() if isinstance(ir, QueryIR) else ir)


_WORD = re.compile(r"\w")
_NO_INTENT_LEXICAL = 0.3  # labelled queries with no other evidence score >= 0.66 here; chit-chat <= 0.13
_EVIDENCE_CHANNELS = ("name", "room", "argument", "subject", "within_device")


def _parse_shows_intent(ir: QueryIR) -> bool:
    """A category, device name, room, quantifier or operation in the parse: the utterance asks the home for
    something ("be quiet": mute)."""
    return ir.has_category or bool(ir.name_hint or ir.scope_include or ir.scope_exclude or ir.operation) or ir.is_bulk


def _has_intent(query: str, ir: QueryIR, candidates: list) -> bool:
    """Whether the utterance asks this home for anything: a category, device, room, value or quantifier
    the parse found, a word for a kind of device the home has, or words a command document shares
    (lexical channel). The dense channel alone
    does not count: it ranks any text, "hello" and "" included, against the nearest command."""
    if not _WORD.search(query or ""):
        return False
    if _parse_shows_intent(ir):
        return True
    kinds = categories_said(query)  # "open our blind": a kind of device the home has is asked for
    return any(c.category in kinds for c in candidates) or \
        any(c.channels.get(name, 0.0) > 0 for c in candidates for name in _EVIDENCE_CHANNELS) or \
        any(c.channels.get("lexical", 0.0) >= _NO_INTENT_LEXICAL for c in candidates)


def build_indexes(home_paths, embedder, params=None) -> dict[str, CommandIndex]:
    """Load and index each home directory (embeddings come from the embedder's cache when warm)."""
    from ..home_commands.home import Home

    indexes = {}
    for path in home_paths:
        home = Home.load(path)
        indexes[home.name] = CommandIndex(home, embedder, params)
    return indexes


def _awaiting_embeddings(index: CommandIndex, fn):
    """``fn(parsed, query, ...)`` (the index search, the bulk plan) for the async path: the texts it embeds
    are awaited first when the embedder is remote (``with_embeddings``), so its thread does not wait for
    the service."""

    async def call(parsed: QueryIR, query: str, **kwargs):
        return await with_embeddings(index.embedder, parsed.search_texts(query), fn, parsed, query, **kwargs)

    return call
