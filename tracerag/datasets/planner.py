"""Planner evaluation data: requirement -> plan cases with the playbook bullets and scored templates handed
to the planner, the ids a good plan uses, and a reference plan.

A dataset is a directory (the bundled one is ``planner``) holding ``cases.jsonl``, ``templates.jsonl``
and the playbook files the cases name; the formats are in ``data/planner/README.md``. Every case is
checked against its playbook and the templates (an unknown id, a gold id that was not handed over, a
reference plan that is not a Plan), and a problem is an error naming file:line and field. Splits are the
stable hash of the case id shared by all datasets.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dspy
from pydantic import ValidationError

from ..retrievers.jsonl import iter_json_lines
from ..retrievers.playbook import Bullet, Playbook, PlaybookError, Template, load_playbook
from ..signatures.planner import Plan
from .smarthome import SPLITS, resolve_dataset, split_of

__all__ = ["PlannerCase", "PlannerDataError", "load_planner_cases", "load_templates"]

CASES_FILE = "cases.jsonl"
TEMPLATES_FILE = "templates.jsonl"


class PlannerDataError(ValueError):
    """Planner data that cannot be read; the message names file:line and field."""


@dataclass(frozen=True)
class PlannerCase:
    id: str
    domain: str
    requirements: str
    bullets: tuple[Bullet, ...]  # handed to the planner, in playbook order
    templates: tuple[Template, ...]  # handed to the planner, with their retrieval scores, best first
    gold_bullet_ids: tuple[str, ...]
    gold_template_ids: tuple[str, ...]
    reference_plan: Plan | None = None

    @property
    def split(self) -> str:
        return split_of(self.id)

    def to_example(self) -> dspy.Example:
        """Inputs ``requirements``, ``bullets``, ``templates`` (the planner's call); the rest are labels."""
        return dspy.Example(id=self.id, domain=self.domain, requirements=self.requirements,
                            bullets=list(self.bullets), templates=list(self.templates),
                            gold_bullet_ids=list(self.gold_bullet_ids), gold_template_ids=list(self.gold_template_ids),
                            reference_plan=self.reference_plan).with_inputs("requirements", "bullets", "templates")


def load_templates(path: Path) -> dict[str, Template]:
    """id -> Template (no score) from a templates JSONL; ids must be unique."""
    templates: dict[str, Template] = {}
    for where, row in iter_json_lines(path, PlannerDataError):
        for key in ("id", "text"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise PlannerDataError(f"{where}: field {key!r} is missing or not a string")
        if not isinstance(row.get("title", ""), str):
            raise PlannerDataError(f"{where}: field 'title' must be a string")
        if row["id"] in templates:
            raise PlannerDataError(f"{where}: field 'id' {row['id']!r} appears twice")
        templates[row["id"]] = Template(row["id"], row.get("title", ""), row["text"])
    return templates


def _string_list(row: dict, key: str, where: str) -> list[str]:
    value = row.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PlannerDataError(f"{where}: field {key!r} is missing or not a list of strings")
    if len(set(value)) != len(value):
        raise PlannerDataError(f"{where}: field {key!r} repeats an id")
    return value


def _case_templates(row: dict, known: dict[str, Template], where: str) -> list[Template]:
    value = row.get("templates")
    if not isinstance(value, list):
        raise PlannerDataError(f"{where}: field 'templates' is missing or not a list")
    out = []
    for i, item in enumerate(value):
        field = f"templates[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise PlannerDataError(f"{where}: field {field!r} needs an 'id' string")
        if item["id"] not in known:
            raise PlannerDataError(f"{where}: field {field!r}: unknown template id {item['id']!r}")
        score = item.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float) or
                                  not 0.0 <= score <= 1.0):
            raise PlannerDataError(f"{where}: field {field + '.score'!r} must be a number in [0, 1]")
        base = known[item["id"]]
        out.append(Template(base.id, base.title, base.text, None if score is None else float(score)))
    if len({t.id for t in out}) != len(out):
        raise PlannerDataError(f"{where}: field 'templates' repeats an id")
    return out


def load_planner_cases(name_or_path: str | Path = "planner", split: str | None = None) -> list[PlannerCase]:
    """Parse a planner dataset directory (or a bundled name); ``split`` keeps "train", "dev" or "test"."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {list(SPLITS)}")
    root = resolve_dataset(name_or_path)
    templates = load_templates(root / TEMPLATES_FILE)
    playbooks: dict[str, Playbook] = {}
    cases, seen = [], set()
    for where, row in iter_json_lines(root / CASES_FILE, PlannerDataError):
        for key in ("id", "domain", "requirements", "playbook"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise PlannerDataError(f"{where}: field {key!r} is missing or not a string")
        if row["id"] in seen:
            raise PlannerDataError(f"{where}: field 'id' {row['id']!r} appears twice")
        seen.add(row["id"])
        if row["playbook"] not in playbooks:
            try:
                playbooks[row["playbook"]] = load_playbook(root / row["playbook"])
            except PlaybookError as exc:
                raise PlannerDataError(f"{where}: field 'playbook': {exc}") from None
        playbook = playbooks[row["playbook"]]
        bullets = []
        for bullet_id in _string_list(row, "bullet_ids", where):
            bullet = playbook.get(bullet_id)
            if bullet is None:
                raise PlannerDataError(f"{where}: field 'bullet_ids': {bullet_id!r} is not in {row['playbook']}")
            bullets.append(bullet)
        shown_templates = _case_templates(row, templates, where)
        gold_b = _string_list(row, "gold_bullet_ids", where)
        gold_t = _string_list(row, "gold_template_ids", where)
        for key, gold, shown in (("gold_bullet_ids", gold_b, {b.id for b in bullets}),
                                 ("gold_template_ids", gold_t, {t.id for t in shown_templates})):
            missing = [g for g in gold if g not in shown]
            if missing:
                raise PlannerDataError(f"{where}: field {key!r}: {missing} were not handed to the planner")
        plan = None
        if row.get("reference_plan") is not None:
            try:
                plan = Plan.model_validate(row["reference_plan"])
            except ValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(["reference_plan", *(str(p) for p in first["loc"])])
                raise PlannerDataError(f"{where}: field {field!r}: {first['msg']}") from None
        case = PlannerCase(row["id"], row["domain"], row["requirements"], tuple(bullets), tuple(shown_templates),
                           tuple(gold_b), tuple(gold_t), plan)
        if split is None or case.split == split:
            cases.append(case)
    return cases
