"""Planner evaluation data: requirement -> plan cases with the playbook bullets and scored templates handed
to the planner, the ids a good plan uses, and a reference plan.

A dataset is a directory (the bundled one is ``planner``) holding ``cases.jsonl``, ``templates.jsonl``
and the playbook files the cases name; the formats are in ``data/planner/README.md``. Every case is
checked against its playbook and the templates (an unknown id, a gold id that was not handed over, a
reference plan that is not a Plan), and a problem is an error naming file:line and field. Splits are the
stable hash of the case id shared by all datasets.

Reading is liberal where the meaning is clear, and each normalisation is counted in a
:class:`ReadReport`: a BOM, CRLF, an id given as a number, one id string where a list of ids is
expected, templates given as bare ids, a template ``text`` given as a list of strings. With a report, a
case that cannot be used (a field missing, an unknown id, an unreadable playbook, a lone surrogate) is
skipped with its ``file:line: field: what was expected`` and the caller decides with ``report.check``
how much may be skipped; without one, the first such line is an error. A case's ``playbook`` must be a
path inside the dataset directory: an absolute path or one leaving it (``../x``, a symlink out) is
refused before anything is read. Only regular files are read (a FIFO never blocks), with a size cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dspy
from pydantic import ValidationError

from ..data_files.read_report import DEFAULT_MAX_BYTES, ReadReport, not_finite, text_problem
from ..documents.corpus import ItemSink, iter_data_lines
from ..errors import DataFileError, InvalidValue
from ..memory.playbook import Bullet, Playbook, PlaybookError, Template, load_playbook
from ..signatures.planner import Plan
from .smarthome import SPLITS, resolve_dataset, split_of

__all__ = ["PlannerCase", "PlannerDataError", "load_planner_cases", "load_templates"]

CASES_FILE = "cases.jsonl"
TEMPLATES_FILE = "templates.jsonl"


class PlannerDataError(DataFileError):
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


def load_templates(path: Path, report: ReadReport | None = None) -> dict[str, Template]:
    """id -> Template (no score) from a templates JSONL; ids must be unique.

    With ``report``, a template that cannot be used is skipped and counted there; without one, it is an
    error naming file:line and field."""
    sink = ItemSink(PlannerDataError, report, strict=report is None)
    templates: dict[str, Template] = {}
    for where, row in iter_data_lines(path, sink, DEFAULT_MAX_BYTES):
        template = _template(row, where, sink, templates)
        if template is not None:
            templates[template.id] = template
    return templates


def _template(row: dict, where: str, sink: ItemSink, known: dict[str, Template]) -> Template | None:
    if isinstance(row.get("id"), int) and not isinstance(row["id"], bool):
        row["id"] = str(row["id"])
        sink.normalise("id as a number")
    text = row.get("text")
    if isinstance(text, list) and text and all(isinstance(v, str) for v in text):
        row["text"] = "\n".join(text)
        sink.normalise("text as a list of strings")
    for key in ("id", "text"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            return sink.bad(where, f"no {key}", f"field {key!r} is missing or not a string")
    title = row.get("title")
    if title is None:
        title = ""
    elif not_finite(title):
        return sink.bad(where, "bad title", f"field 'title' must be a string, got {not_finite(title)}")
    elif isinstance(title, int | float) and not isinstance(title, bool):
        title = str(title)
        sink.normalise("title as a number")
    if not isinstance(title, str):
        return sink.bad(where, "bad title", "field 'title' must be a string")
    if row["id"] in known:
        return sink.bad(where, "repeated id", f"field 'id' {row['id']!r} appears twice")
    for key, value in (("id", row["id"]), ("title", title), ("text", row["text"])):
        problem = text_problem(value)
        if problem is not None:
            return sink.unstorable(where, "text that cannot be stored", f"field {key!r} {problem}; template skipped")
    return Template(row["id"], title, row["text"])


def _string_list(row: dict, key: str, where: str, sink: ItemSink) -> list[str] | None:
    value = row.get(key)
    if isinstance(value, str) and value.strip():
        value = [value]
        sink.normalise(f"{key} as one string")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return sink.bad(where, f"bad {key}", f"field {key!r} is missing or not a list of strings")
    if len(set(value)) != len(value):
        return sink.bad(where, f"bad {key}", f"field {key!r} repeats an id")
    return value


def _case_templates(row: dict, known: dict[str, Template], where: str, sink: ItemSink) -> list[Template] | None:
    value = row.get("templates")
    if isinstance(value, str) and value.strip():
        value = [value]
        sink.normalise("templates as one string")
    if not isinstance(value, list):
        return sink.bad(where, "bad templates", "field 'templates' is missing or not a list")
    if value and all(isinstance(v, str) for v in value):
        value = [{"id": v} for v in value]
        sink.normalise("templates as bare ids")
    out = []
    for i, item in enumerate(value):
        field = f"templates[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            return sink.bad(where, "bad templates", f"field {field!r} needs an 'id' string")
        if item["id"] not in known:
            return sink.bad(where, "unknown template", f"field {field!r}: unknown template id {item['id']!r}")
        score = item.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float) or
                                  not 0.0 <= score <= 1.0):
            return sink.bad(where, "bad templates", f"field {field + '.score'!r} must be a number in [0, 1]")
        base = known[item["id"]]
        out.append(Template(base.id, base.title, base.text, None if score is None else float(score)))
    if len({t.id for t in out}) != len(out):
        return sink.bad(where, "bad templates", "field 'templates' repeats an id")
    return out


def _playbook_path(root: Path, value: str, where: str) -> Path:
    """The playbook file a case names, which must lie inside the dataset directory (symlinks resolved).

    Refused before anything is read, so the error never shows a byte of a file outside the dataset."""
    base = root.resolve()
    given = Path(value)
    target = (base / given).resolve()
    if given.is_absolute() or not target.is_relative_to(base) or target == base:
        raise PlannerDataError(f"{where}: field 'playbook': {value!r} is not a file inside the dataset directory "
                               f"{root}; give a path relative to it")
    return target


def load_planner_cases(name_or_path: str | Path = "planner", split: str | None = None,
                       report: ReadReport | None = None) -> list[PlannerCase]:
    """Parse a planner dataset directory (or a bundled name); ``split`` keeps "train", "dev" or "test".

    With ``report``, a case (or a template) that cannot be used is skipped and counted there (check it
    with ``report.check``); without one, it is a PlannerDataError naming file:line and field. Files that
    cannot be read at all, and a playbook path leaving the dataset directory, are always errors."""
    if split is not None and split not in SPLITS:
        raise InvalidValue(f"unknown split {split!r}; choose from {list(SPLITS)}")
    root = resolve_dataset(name_or_path)
    template_report = ReadReport("templates") if report is not None else None
    templates = load_templates(root / TEMPLATES_FILE, template_report)
    sink = ItemSink(PlannerDataError, report, strict=report is None)
    playbooks: dict[str, Playbook | str] = {}  # path as given -> the playbook, or why it cannot be read
    cases, seen = [], set()
    lines = 0
    for where, row in iter_data_lines(root / CASES_FILE, sink, DEFAULT_MAX_BYTES):
        lines += 1
        case = _case(row, where, sink, root, templates, playbooks, seen)
        if case is not None and (split is None or case.split == split):
            cases.append(case)
    if not lines and not (report is not None and report.read):
        raise PlannerDataError(f"{root / CASES_FILE}: no cases (the file holds no JSON lines)")
    if template_report is not None and report is not None:
        for kind, n in template_report.normalised.items():
            report.normalised[f"templates: {kind}"] += n
        report.problems.extend(template_report.problems)  # why the cases naming those templates were skipped
    return cases


def _case(row: dict, where: str, sink: ItemSink, root: Path, templates: dict[str, Template],
          playbooks: dict[str, Playbook | str], seen: set[str]) -> PlannerCase | None:
    """One line's case, or None when it was skipped (counted in the sink's report)."""
    if isinstance(row.get("id"), int) and not isinstance(row["id"], bool):
        row["id"] = str(row["id"])
        sink.normalise("id as a number")
    for key in ("id", "domain", "requirements", "playbook"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            return sink.bad(where, f"no {key}", f"field {key!r} is missing or not a string")
    if row["id"] in seen:
        return sink.bad(where, "repeated id", f"field 'id' {row['id']!r} appears twice")
    problem = text_problem(row) or text_problem(list(row))
    if problem is not None:
        name = next((k for k, v in row.items() if text_problem(v) or text_problem(k)), "?")
        return sink.unstorable(where, "text that cannot be stored", f"field {name!r} {problem}; case skipped")
    if row["playbook"] not in playbooks:
        path = _playbook_path(root, row["playbook"], where)
        try:
            playbooks[row["playbook"]] = load_playbook(path)
        except PlaybookError as exc:
            playbooks[row["playbook"]] = str(exc)
    playbook = playbooks[row["playbook"]]
    if isinstance(playbook, str):
        return sink.bad(where, "unreadable playbook", f"field 'playbook': {playbook}")
    bullet_ids = _string_list(row, "bullet_ids", where, sink)
    if bullet_ids is None:
        return None
    bullets = []
    for bullet_id in bullet_ids:
        bullet = playbook.get(bullet_id)
        if bullet is None:
            return sink.bad(where, "unknown bullet", f"field 'bullet_ids': {bullet_id!r} is not in {row['playbook']}")
        bullets.append(bullet)
    shown_templates = _case_templates(row, templates, where, sink)
    gold_b = None if shown_templates is None else _string_list(row, "gold_bullet_ids", where, sink)
    gold_t = None if gold_b is None else _string_list(row, "gold_template_ids", where, sink)
    if gold_t is None:
        return None
    for key, gold, shown in (("gold_bullet_ids", gold_b, {b.id for b in bullets}),
                             ("gold_template_ids", gold_t, {t.id for t in shown_templates})):
        missing = [g for g in gold if g not in shown]
        if missing:
            return sink.bad(where, f"bad {key}", f"field {key!r}: {missing} were not handed to the planner")
    plan = None
    if row.get("reference_plan") is not None:
        try:
            plan = Plan.model_validate(row["reference_plan"])
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(["reference_plan", *(str(p) for p in first["loc"])])
            return sink.bad(where, "bad reference_plan", f"field {field!r}: {first['msg']}")
    seen.add(row["id"])
    return PlannerCase(row["id"], row["domain"], row["requirements"], tuple(bullets), tuple(shown_templates),
                       tuple(gold_b), tuple(gold_t), plan)
