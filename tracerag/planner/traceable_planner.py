"""TraceablePlanner: requirements + playbook bullets + reference templates -> a structured plan that records
which bullets and templates produced it.

One LM step (``GeneratePlan``). The bullets and templates are given per call (the caller's retrieval
picks them), or templates come from a ``retrieve_templates(requirements)`` callable. Every one is shown
to the LM headed by its id. The ids the plan used are the union of what the LM reports
(``bullets_used``, ``templates_used``, each step's ``cites``) and what a regex finds in the plan's text
(``[mat-00001]``, ``(mat-00001)``, ``tpl-1a2b3c4d``, ``template-001``), because models cite inline
more reliably than they fill lists, and the lists catch what the text only paraphrases. An id that was
never provided goes to ``hallucinated_ids`` and never into the used ids.

The prediction's ``metadata`` answers "which bullets and which retrieved passages produced this plan":
retrieved bullet ids, retrieved templates (id, title, score, a 120-character preview), used ids,
hallucinated ids, model, token usage, duration and LM calls (see ``lm.meter``).

The one LM stage, ``generate``, is a guarded step (``guarded_step.Stages``): it uses the predictor's own
LM (``set_lm``, ``dspy.context(lm=...)``, else the configured one) and respects the circuit breaker.
Failure paths (the caller never sees an exception from the LM):

- no LM configured: ``plan=None``, no used ids, ``error="no LM configured"``, ``hint="no_lm"``;
- the LM call failing, or a reply that does not parse into a valid Plan or is over a cap (``reply_limits``:
  ``MAX_PLAN_CHARS``, ``MAX_IDS``): the same no-plan result,
  ``hint="lm_failed"``, ``lm_fallbacks=["generate"]`` and ``error`` saying what went wrong in one line;
- requirements that say nothing (empty, blanks, punctuation): no LM call, no plan, ``hint="empty_input"``,
  ``lm_skipped=["generate"]``;
- a failing template retriever: planning without templates, with a warning.

LM-call budget: one ``GeneratePlan`` call per request (two when the adapter retries an unparsable reply
as JSON; ``lm_calls`` counts what the LM was really asked, none while the breaker is open).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import dspy
from pydantic import BaseModel, ConfigDict, Field

from ..embedding.awaited_rows import with_embeddings
from ..errors import InvalidType, InvalidValue
from ..hints import Hint
from ..lm.calls import lm_of
from ..lm.meter import LMMeter
from ..lm.reply_limits import MAX_IDS, MAX_PLAN_CHARS, ReplyRejected
from ..memory.playbook import Bullet, Playbook, Template, TemplateIndex, as_template, parse_playbook
from ..programs.guarded_step import Pipeline, Stages, lm_step, work
from ..programs.spans import TEMPLATE_SEARCH
from ..signatures.planner import Plan
from ..stores.vector_store import VectorStore
from .metrics import plan_cited_ids
from .result import PlanResult
from .signatures import GeneratePlan

__all__ = ["PlannerConfig", "TraceablePlanner", "format_bullets", "format_templates", "trace_used_ids"]

logger = logging.getLogger(__name__)

TemplateRetriever = Callable[[str], Sequence[Template | Mapping[str, Any]]]
_NO_ID = {"", "none", "n/a", "na", "null", "-"}  # what models write in an id list to mean "nothing"


class PlannerConfig(BaseModel):
    """TraceablePlanner's settings: how many templates the LM sees and what the metadata previews."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    max_templates: int = Field(5, ge=0, le=50)
    """Templates shown to the LM, in the order given (a retriever's rank)."""
    preview_chars: int = Field(120, ge=0, le=2000)
    """Content preview per template in the metadata."""


class TraceablePlanner(dspy.Module):
    """``planner(requirements=..., bullets=[Bullet...] | Playbook | playbook text, templates=[Template...])``.

    ``retrieve_templates(requirements)`` is used when a call passes no ``templates``; it returns
    Templates (or dicts with ``text``/``content``, ``title``, ``score``, ``id``) best first. A
    :class:`~tracerag.stores.vector_store.VectorStore` of templates (rows written by
    ``index_templates``) may be given instead, with the ``embedder`` it was built with: it is searched
    through a :class:`~tracerag.memory.playbook.TemplateIndex` (``max_templates`` best).
    """

    def __init__(self, config: PlannerConfig | dict | None = None, *,
                 retrieve_templates: TemplateRetriever | VectorStore | None = None, embedder=None):
        super().__init__()
        self.config = config if isinstance(config, PlannerConfig) else PlannerConfig(**(config or {}))
        if isinstance(retrieve_templates, VectorStore):  # templates in a store: searched through the protocol
            if embedder is None:
                from ..config import get_embedder

                embedder = get_embedder()
            retrieve_templates = TemplateIndex(retrieve_templates, embedder, k=max(self.config.max_templates, 1))
        self.retrieve_templates = retrieve_templates
        self.generate = dspy.Predict(GeneratePlan)

    def forward(self, requirements: str, bullets: Playbook | Sequence[Bullet | str] | str = (),
                templates: Sequence[Template | Mapping[str, Any]] | None = None) -> dspy.Prediction:
        """Write a structured plan and record which playbook bullets and templates it used.

        Args:
            requirements: what the plan must achieve.
            bullets: playbook lines (``[slug-00001] helpful=X harmful=Y :: text``), as a ``Playbook``, a list or
                one text.
            templates: reference passages, best first (``{id?, title?, text, score?}``); with a template store,
                searched there instead.

        Returns:
            A ``dspy.Prediction`` with the fields of :class:`~tracerag.planner.result.PlanResult`: ``plan`` (a
            ``Plan``, None without an LM), ``bullets_used``, ``templates_used``, ``hallucinated_ids`` (cited, never
            given), the ids shown to the LM, ``hint``, ``error``, the LM's outcome and ``metadata``.

        Example:
            >>> program = tracerag.build("planner")
            >>> program(requirements="Set up a 25 µL PCR.", bullets=["[mat-00001] helpful=3 harmful=0 :: Thaw on ice."])
        """
        stages = Stages(subject=requirements)
        return stages.run(self._pipeline(requirements, bullets, templates, stages))

    async def aforward(self, requirements: str, bullets: Playbook | Sequence[Bullet | str] | str = (),
                       templates: Sequence[Template | Mapping[str, Any]] | None = None) -> dspy.Prediction:
        """``forward`` for ``await program.acall(...)``: the plan through the LM's async path, the template
        retriever in a worker thread; the same prediction."""
        stages = Stages(subject=requirements)
        return await stages.arun(self._pipeline(requirements, bullets, templates, stages))

    def _pipeline(self, requirements: str, bullets, templates, stages: Stages) -> Pipeline:
        start = time.perf_counter()
        shown_bullets = _unique(_as_bullets(bullets), "bullet")
        retrieved = yield from self._templates(requirements, templates)
        shown_templates = _unique(retrieved, "template")[: self.config.max_templates]
        meter = LMMeter()
        plan, reported, error, hint = None, [], None, None
        lm = lm_of(self.generate)
        if lm is None:
            error, hint = "no LM configured", Hint.NO_LM
            logger.info("TraceablePlanner: no LM configured; returning no plan")  # a normal state, not a fault
        else:
            with meter.measure():
                out = yield lm_step("generate", self.generate, check=_plan_and_ids, fallback="returning no plan",
                                    requirements=requirements, bullets=format_bullets(shown_bullets),
                                    templates=format_templates(shown_templates))
            if out is None:  # the documented contract: no plan, an error, never a raise
                error = stages.errors[-1] if stages.errors else "the requirements say nothing to plan"
                hint = stages.hint
            else:
                plan, reported = out
        bullet_ids = [b.id for b in shown_bullets]
        template_ids = [t.id for t in shown_templates]
        used_bullets, used_templates, hallucinated = (
            trace_used_ids(plan, reported, bullet_ids, template_ids) if plan is not None else ([], [], []))
        if hallucinated:
            logger.warning("the plan cites ids that were never provided: %s", ", ".join(hallucinated))
        metadata = {
            "model": ", ".join(meter.models) or getattr(lm, "model", None),
            "usage": dict(meter.usage),
            "duration_s": round(time.perf_counter() - start, 4),
            "lm_calls": meter.calls,
            "retrieved_bullet_ids": bullet_ids,
            "retrieved_template_ids": template_ids,
            "retrieved_templates": [{"id": t.id, "title": t.title, "score": t.score,
                                     "preview": t.preview(self.config.preview_chars)} for t in shown_templates],
            "bullets_used": used_bullets,
            "templates_used": used_templates,
            "hallucinated_ids": hallucinated,
            "error": error,
            "hint": hint,
            "lm_fallbacks": stages.fallbacks,
        }
        return PlanResult.prediction(plan=plan, bullets_used=used_bullets, templates_used=used_templates,
                                     hallucinated_ids=hallucinated, retrieved_bullet_ids=bullet_ids,
                                     retrieved_template_ids=template_ids, lm_calls=meter.calls, error=error,
                                     hint=hint, lm_fallbacks=stages.fallbacks, lm_skipped=stages.skipped,
                                     metadata=metadata)

    def _templates(self, requirements: str, templates) -> Pipeline:
        if templates is not None:
            return [as_template(t) for t in templates]
        if self.retrieve_templates is None:
            return []
        try:
            return (yield work(self._retrieve, requirements, afn=self._aretrieve, span=TEMPLATE_SEARCH,
                               outputs=_template_outputs,
                               inputs={"query": requirements, "k": self.config.max_templates}))
        except Exception as exc:
            logger.warning("template retrieval failed (%s: %s); planning without templates", type(exc).__name__, exc)
            return []

    def _retrieve(self, requirements: str) -> list[Template]:
        return [as_template(t) for t in self.retrieve_templates(requirements)]

    async def _aretrieve(self, requirements: str) -> list[Template]:
        """``_retrieve`` in a worker thread, a remote embedder's row awaited first (``with_embeddings``)."""
        embedder = getattr(self.retrieve_templates, "embedder", None)
        return await with_embeddings(embedder, [requirements], self._retrieve, requirements)


def _template_outputs(templates: list[Template]) -> dict[str, Any]:
    return {"ids": [t.id for t in templates], "scores": [t.score for t in templates]}


def trace_used_ids(plan: Plan, reported: Sequence[str], bullet_ids: Sequence[str],
                   template_ids: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """(bullets used, templates used, hallucinated ids) from the LM's own lists and the plan's citations.

    An id counts by what was provided, not by which list the LM put it in (a bullet id reported under
    templates_used is still a used bullet); anything else it cites is hallucinated. First seen first.
    """
    bullets, templates = set(bullet_ids), set(template_ids)
    used_bullets, used_templates, hallucinated = [], [], []
    for cited in dict.fromkeys([*(_clean_id(r) for r in reported), *plan_cited_ids(plan)]):
        if cited.lower() in _NO_ID:
            continue
        (used_bullets if cited in bullets else used_templates if cited in templates else hallucinated).append(cited)
    return used_bullets, used_templates, hallucinated


def format_bullets(bullets: Sequence[Bullet]) -> str:
    """The LM's view: each bullet's playbook line, ``[id] helpful=N harmful=N :: text``."""
    return "\n".join(b.render() for b in bullets) or "(no bullets)"


def format_templates(templates: Sequence[Template]) -> str:
    """The LM's view: ``[id] title`` then the template text, blank line between templates."""
    return "\n\n".join(f"[{t.id}] {t.title}".rstrip() + "\n" + t.text.strip() for t in templates) or "(no templates)"


def _as_bullets(bullets: Playbook | Sequence[Bullet | str] | str) -> list[Bullet]:
    """Bullets from a Playbook, playbook text, or a list of Bullets / bullet lines (a bad line raises)."""
    if isinstance(bullets, Playbook):
        return bullets.bullets
    if isinstance(bullets, str):
        return parse_playbook(bullets, "<bullets>").bullets
    out = []
    for item in bullets:
        if isinstance(item, Bullet):
            out.append(item)
        elif isinstance(item, str):
            out.extend(parse_playbook(item, "<bullets>").bullets)
        else:
            raise InvalidType(f"a bullet must be a Bullet or a playbook line, got {type(item).__name__}")
    return out


def _unique(items: list, what: str) -> list:
    """The first of each id; a repeated id is dropped with a warning (it could not be told apart when cited)."""
    seen, out = set(), []
    for item in items:
        if item.id in seen:
            logger.warning("%s id %s given twice; keeping the first", what, item.id)
            continue
        seen.add(item.id)
        out.append(item)
    return out


def _plan_and_ids(out) -> tuple[Plan, list[str]]:
    """The stage's check: a valid Plan of at most ``MAX_PLAN_CHARS`` (as JSON) and at most ``MAX_IDS`` ids
    reported; anything else raises (no plan). Ids never provided are kept out of the used ids and
    reported as ``hallucinated_ids`` (``trace_used_ids``)."""
    ids = [*_as_ids(out.bullets_used), *_as_ids(out.templates_used)]
    if len(ids) > MAX_IDS:
        raise ReplyRejected(f"bullets_used and templates_used list {len(ids):,} ids; the cap is {MAX_IDS}")
    return _as_plan(out.plan), ids


def _as_plan(value: Any) -> Plan:
    if isinstance(value, Mapping):
        value = Plan.model_validate(value)
    if not isinstance(value, Plan):
        raise InvalidValue(f"GeneratePlan returned no plan (got {type(value).__name__})")
    size = len(value.model_dump_json())
    if size > MAX_PLAN_CHARS:
        raise ReplyRejected(f"the plan is {size:,} characters as JSON; the cap is {MAX_PLAN_CHARS:,}")
    return value


def _as_ids(value: Any) -> list[str]:
    """An id list as reported: strings stripped of brackets; a single string is split on commas."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list | tuple):
        return []
    return [_clean_id(v) for v in value if isinstance(v, str)]


def _clean_id(value: str) -> str:
    """``" [mat-00001] "`` -> ``"mat-00001"``: models often report ids the way they cite them."""
    return value.strip().strip("[]()").strip()
