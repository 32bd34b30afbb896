"""One row of an evaluation report as the HTML page shows it under the row: what was asked, the parse,
what was expected and what came back side by side, and why it missed.

It reads the fields a row has, not which program wrote it: a row with a parse (``ir``) shows it; a row whose
``expected`` names (device, command) targets shows them by device label and room (the report's ``devices``,
per home, from the home the evaluation used), each with the rank it reached, beside the returned ranking;
any other row shows its gold decision and ids beside what it answered, ranked and cited, the gold ids
marked. Every string is escaped.
"""

from __future__ import annotations

import json
import math
from html import escape
from typing import Any

from .hints import MEANING

# What was asked, by the row field that holds it, and what the block calls it.
ASKED = (("query", "utterance"), ("question", "question"), ("requirements", "requirements"))
# The row fields that say what the LM did: left out of a run without an LM.
LM_FIELDS = ("lm_calls", "lm_calls_judge", "lm_calls_observed", "lm_failed", "lm_fallbacks", "lm_overruled",
             "usefulness", "citation_recall", "citation_precision")
# A bulk plan or a list longer than this shows its first ones and says how many more.
SHOWN = 20
_MEANING = {str(hint): text.replace("``", "") for hint, text in MEANING.items()}


def row_block(row: dict, report: dict, *, lm_used: bool) -> str:
    """The readable block for one row (HTML, every value escaped)."""
    parts = [_asked(row), _parse(row), _sides(row, report), _why(row, report, lm_used), _every_field(row, lm_used)]
    return "".join(part for part in parts if part)


def _asked(row: dict) -> str:
    field, name = next(((f, n) for f, n in ASKED if isinstance(row.get(f), str)), (None, None))
    context = [f"in {_t(row['home'])}" if row.get("home") else "",
               f"parsed by {_t(row['parse_source'])}" if row.get("parse_source") else ""]
    note = " · ".join(c for c in context if c)
    if field is None:
        return f'<p class="note">{note}</p>' if note else ""
    note = f' <span class="note">{note}</span>' if note else ""
    return f'<p class="asked"><strong>{name}</strong> <span class="said">{_t(row[field])}</span>{note}</p>'


def _parse(row: dict) -> str:
    ir = row.get("ir")
    if not isinstance(ir, dict) or not ir:
        return ""
    head = "".join(f"<th>{_t(key)}</th>" for key in ir)
    cells = "".join(f"<td>{_value(value)}</td>" for value in ir.values())
    return f'<p class="label">parse (QueryIR)</p><div class="scroll"><table class="ir"><tr>{head}</tr>' \
           f"<tr>{cells}</tr></table></div>"


def _sides(row: dict, report: dict) -> str:
    expected = row.get("expected")
    if isinstance(expected, list) and all(isinstance(t, dict) and "device_id" in t for t in expected):
        return _device_sides(row, report)
    return _answer_sides(row)


# --- rows that name (device, command) targets -------------------------------------------------------------


def _commands(target: dict) -> list[str]:
    command = target.get("command_id")
    if command is None:
        return []
    return [str(c) for c in command] if isinstance(command, list) else [str(command)]


def _pairs(value: Any) -> list[tuple[str, str]]:
    return [(str(p[0]), str(p[1])) for p in value or () if isinstance(p, (list, tuple)) and len(p) == 2]


def _device(devices: dict, device_id: str) -> str:
    """Two cells: the device's label (its id on hover) and its room."""
    found = devices.get(device_id)
    if not isinstance(found, dict):
        return f'<td><code>{_t(device_id)}</code></td><td class="note">not in the home</td>'
    room = _t(found.get("room") or "") or '<span class="note">no room</span>'
    return f'<td class="name" title="{_t(device_id)}">{_t(found.get("label") or device_id)}</td>' \
           f'<td class="name">{room}</td>'


def _rank_of(target: dict, ranking: list[tuple[str, str]]) -> int | None:
    commands = set(_commands(target))
    return next((n for n, (device, command) in enumerate(ranking, 1)
                 if device == target["device_id"] and command in commands), None)


def _device_sides(row: dict, report: dict) -> str:
    devices = (report.get("devices") or {}).get(row.get("home") or "", {})
    returned = _pairs(row.get("returned"))
    ranking = _pairs(row.get("ranking")) or returned
    bulk = bool(row.get("bulk"))
    k = report.get("k") or len(returned)
    wanted = {(t["device_id"], c) for t in row["expected"] for c in _commands(t)}
    wanted_devices = {t["device_id"] for t in row["expected"]}
    left = ["<table><tr><th>device</th><th>room</th><th>command</th><th>"
            + ("in the plan" if bulk else "rank") + "</th></tr>"]
    for target in row["expected"][:SHOWN]:
        rank = _rank_of(target, ranking)
        if bulk:
            said, mark = ("yes", "ok") if rank else ("left out", "bad")
        elif rank is None:
            said, mark = (f"not among the {len(ranking)} ranked", "bad") if ranking else ("nothing returned", "bad")
        else:
            said, mark = (f"#{rank}", "ok") if rank <= k else (f"#{rank}, past k = {k}", "bad")
        commands = " or ".join(f"<code>{_t(c)}</code>" for c in _commands(target))
        left.append(f'<tr class="{mark}">{_device(devices, target["device_id"])}<td>{commands}</td>'
                    f"<td>{_t(said)}</td></tr>")
    left.append(_more(len(row["expected"]), 4) + "</table>")
    right = ["<table><tr><th>#</th><th>device</th><th>room</th><th>command</th></tr>"]
    for n, (device, command) in enumerate(returned[:SHOWN], 1):
        mark = "ok" if (device, command) in wanted else "near" if device in wanted_devices else ""
        right.append(f'<tr class="{mark}"><td class="num">{n}</td>{_device(devices, device)}'
                     f"<td><code>{_t(command)}</code></td></tr>")
    if not returned:
        right.append('<tr><td colspan="4" class="note">nothing</td></tr>')
    right.append(_more(len(returned), 4) + "</table>")
    what = f"the plan ({len(returned)})" if bulk else f"returned (top {k})"
    return _two(f"expected ({len(row['expected'])})", "".join(left), what, "".join(right))


def _more(count: int, span: int) -> str:
    return f'<tr><td colspan="{span}" class="note">… and {count - SHOWN} more</td></tr>' if count > SHOWN else ""


def _two(left_title: str, left: str, right_title: str, right: str) -> str:
    return (f'<div class="sides"><div><p class="label">{_t(left_title)}</p>{left}</div>'
            f'<div><p class="label">{_t(right_title)}</p>{right}</div></div>')


def _device_reasons(row: dict, report: dict) -> list[str]:
    """Why a row naming (device, command) targets missed, from its ranking and its plan."""
    returned = _pairs(row.get("returned"))
    ranking = _pairs(row.get("ranking")) or returned
    devices = (report.get("devices") or {}).get(row.get("home") or "", {})
    k = report.get("k") or len(returned)
    reasons = []
    if row.get("bulk"):
        wanted = {(t["device_id"], c) for t in row["expected"] for c in _commands(t)}
        missing = sum(_rank_of(t, returned) is None for t in row["expected"])
        extra = sum(pair not in wanted for pair in returned)
        if missing:
            reasons.append(f"the plan leaves out {missing} of the {len(row['expected'])} expected targets")
        if extra:
            reasons.append(f"the plan holds {extra} target(s) that were not expected")
        targets = {t["device_id"] for t in row["expected"]}
        other = sorted({c for d, c in returned if (d, c) not in wanted and d in targets})
        if other:
            reasons.append(f"it reaches expected devices with another command: {', '.join(other)}")
        return reasons
    for target in row["expected"]:
        name = _label(devices, target["device_id"])
        rank = _rank_of(target, ranking)
        if rank is not None and rank <= k:
            continue
        if rank is not None:
            reasons.append(f"{name} with the expected command is ranked #{rank}, past k = {k}")
        elif not ranking:
            reasons.append("nothing was returned")
        else:
            reasons.append(f"{name} with the expected command is not among the {len(ranking)} ranked")
        other = next(((n, c) for n, (d, c) in enumerate(ranking, 1) if d == target["device_id"]), None)
        if other is not None and (rank is None or other[0] < rank):
            reasons.append(f"{name} comes at #{other[0]} with another command, {other[1]}")
    return reasons


def _label(devices: dict, device_id: str) -> str:
    found = devices.get(device_id)
    if not isinstance(found, dict):
        return device_id
    room = found.get("room")
    return f"{found.get('label') or device_id} ({room})" if room else str(found.get("label") or device_id)


# --- every other row: decisions and ids ------------------------------------------------------------------


def _gold_ids(row: dict) -> set[str]:
    gold = row.get("relevant") if isinstance(row.get("relevant"), list) else row.get("gold")
    return {str(g) for g in gold} if isinstance(gold, list) else set()


def _answer_sides(row: dict) -> str:
    gold = _gold_ids(row)
    left, right = [], []
    if isinstance(row.get("gold"), str):
        left.append(_item("decision", _t(row["gold"])))
    if gold:
        left.append(_item("gold ids", _ids(sorted(gold), gold)))
    for field, name in (("verdict", "decision"), ("decision", "decision")):
        if isinstance(row.get(field), str) and row[field]:
            right.append(_item(name, _t(row[field])))
            break
    ranked = next((row[f] for f in ("ranking", "ranked", "retrieved") if isinstance(row.get(f), list)), None)
    if ranked is not None:
        right.append(_item("ranked", _ids(ranked, gold, ordered=True)))
    for field, name in (("used", "used"), ("kept", "kept"), ("cited", "cited"), ("invalid_cited", "invalid citations")):
        if isinstance(row.get(field), list) and (row[field] or field in ("used", "cited")):
            right.append(_item(name, _ids(row[field], gold)))
    for field in ("answer", "experience"):
        if isinstance(row.get(field), str) and row[field].strip():
            right.append(_item(field, f'<div class="answer">{_t(row[field])}</div>'))
    if not left and not right:
        return ""
    return _two("expected", "".join(left) or '<p class="note">nothing recorded</p>', "returned",
                "".join(right) or '<p class="note">nothing</p>')


def _item(name: str, html: str) -> str:
    return f'<div class="item"><span class="key">{_t(name)}</span><div>{html}</div></div>'


def _ids(values: list, gold: set[str], *, ordered: bool = False) -> str:
    """Ids as code, never broken inside one, the gold ones marked; a ranking numbered."""
    if not values:
        return '<span class="note">none</span>'
    shown = []
    for n, value in enumerate(values[:SHOWN], 1):
        mark = ' class="ok"' if str(value) in gold else ""
        rank = f'<span class="note">#{n}</span> ' if ordered else ""
        shown.append(f'<span class="id">{rank}<code{mark}>{_t(str(value))}</code></span>')
    more = f' <span class="note">… and {len(values) - SHOWN} more</span>' if len(values) > SHOWN else ""
    return '<span class="ids">' + " ".join(shown) + more + "</span>"


# --- why ------------------------------------------------------------------------------------------------


def _why(row: dict, report: dict, lm_used: bool) -> str:
    reasons = []
    expected = row.get("expected")
    if isinstance(expected, list) and all(isinstance(t, dict) and "device_id" in t for t in expected):
        reasons += _device_reasons(row, report)
    elif _gold_ids(row) and _number(row.get("recall")) and row["recall"] < 1:
        ranked = next((row[f] for f in ("ranking", "ranked", "retrieved") if isinstance(row.get(f), list)), [])
        found = len(_gold_ids(row) & {str(v) for v in ranked})
        reasons.append(f"{found} of the {len(_gold_ids(row))} gold ids among the {len(ranked)} ranked")
    if isinstance(row.get("gold"), str) and isinstance(row.get("verdict") or row.get("decision"), str):
        said = row.get("verdict") or row.get("decision")
        if said and said != row["gold"]:
            reasons.append(f"decided {said}, the gold decision is {row['gold']}")
    # a commands row's ``hint`` is its bulk plan's, ``pred_hint`` the prediction's own; other rows have one
    hints = [("plan hint" if "pred_hint" in row else "hint", row.get("hint")), ("hint", row.get("pred_hint"))]
    for n, (name, hint) in enumerate(hints):
        if isinstance(hint, str) and hint not in ("", "-") and not (n and hint == row.get("hint")):
            meaning = _MEANING.get(hint)
            reasons.append(f"{name} {hint}" + (f": {meaning}" if meaning else ""))
    if row.get("unresolved"):
        reasons.append(f"unresolved: {', '.join(map(str, row['unresolved']))}")
    if row.get("withheld"):
        devices = (report.get("devices") or {}).get(row.get("home") or "", {})
        held = [f"{_label(devices, w.split('/', 1)[0])} {w.split('/', 1)[-1]}" for w in map(str, row["withheld"])]
        reasons.append(f"withheld by the safety check: {'; '.join(held)}")
    if row.get("stop_reason"):
        reasons.append(f"stopped: {row['stop_reason']}")
    if row.get("error"):
        reasons.append(f"error: {row['error']}")
    if lm_used:
        if row.get("lm_fallbacks"):
            reasons.append(f"LM stages that fell back to the no-LM result: {', '.join(map(str, row['lm_fallbacks']))}")
        if row.get("lm_overruled"):
            reasons.append(f"LM parse overruled by: {', '.join(map(str, row['lm_overruled']))}")
    if not reasons:
        return ""
    return '<p class="label">why</p><ul class="why">' + "".join(f"<li>{_t(r)}</li>" for r in reasons) + "</ul>"


def _every_field(row: dict, lm_used: bool) -> str:
    """The row's JSON, for what the block leaves out (the deeper ranking is summed up by the ranks)."""
    hidden = {"ranking"} | (set() if lm_used else set(LM_FIELDS))
    rest = {key: value for key, value in row.items() if key not in hidden}
    return (f'<details class="raw"><summary>every field (JSON)</summary>'
            f"<pre>{_t(json.dumps(rest, ensure_ascii=False, indent=1))}</pre></details>")


def _value(value: Any) -> str:
    if value is None or value == "" or value == []:
        return '<span class="note">–</span>'
    if isinstance(value, (list, tuple)):
        return ", ".join(_t(str(v)) for v in value)
    if isinstance(value, dict):
        return _t(json.dumps(value, ensure_ascii=False))
    return _t(str(value))


def _t(value: Any) -> str:
    return escape(str(value), quote=True)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
