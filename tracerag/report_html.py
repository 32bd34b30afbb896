"""An evaluation report as one self-contained HTML page: the summary metrics, each breakdown with bars,
and every row, misses first.

The terminal table answers "how good is it?"; this page answers "where does it fail?", so it can be
opened from a CI artifact or mailed. Under each row, a block (``report_rows``) says what was asked, the
parse, what was expected and what came back side by side (devices by label and room), and why it missed;
the worst misses' blocks are open. A run without an LM leaves out the LM figures, which say nothing there.

It is static: inline CSS, no script, and a Content-Security-Policy that forbids every fetch, so opening it
loads nothing from the network. Every string that came from a dataset, a model or a user (queries, answers,
ids, errors) is escaped; a query holding ``<script>`` is shown as text.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable
from html import escape
from pathlib import Path
from typing import Any

from .data_files.durable import write_durably
from .errors import InvalidValue
from .report_rows import LM_FIELDS, row_block

# The row score that decides a miss, first one a row has: commands, experience and rag rows carry
# ``recall``, planner rows ``score``, agent rows ``gold_found``.
HEADLINE_SCORES = ("recall", "score", "gold_found", "hit")

# Row fields that name the row, then the scores, then what happened, in the order the table shows them.
_ROW_NAMES = ("id", "home", "family", "domain", "input", "quantifier", "category", "query", "question")
_ROW_SCORES = ("recall", "hit", "rr", "bulk_precision", "used_recall", "used_precision", "used_f1", "score",
               "accuracy", "kept_gold", "grounded", "citation_validity", "citation_coverage", "gold_found",
               "usefulness")
_ROW_STATUS = ("hint", "stop_reason", "error", "lm_fallbacks")

# The summary metrics and breakdown columns that say what the LM did (or judged): left out without an LM.
LM_METRICS = ("usefulness", "citation_recall", "citation_precision")
# How many misses, worst first, show their block open (the rest open with a click).
OPEN_MISSES = 10

# How deep the page's recall curve goes: ``evaluate --html`` keeps each ranking row's candidates to here.
CURVE_DEPTH = 50

# One line per metric any evaluation report carries, so a reader of the page need not look it up;
# docs/reports.md holds the same table (a test keeps them equal).
METRIC_NOTES = {
    "recall": "share of the expected targets (or relevant ids) found in the top k",
    "hit": "1 when at least one expected target is in the top k",
    "mrr": "mean reciprocal rank of the first expected target (1 = always first)",
    "bulk_precision": "share of a bulk plan's targets that were expected (all/except queries)",
    "clarification_rate": "share of bulk queries answered with need_clarification (asking the user) instead of a plan",
    "used_precision": "share of the ids the output drew on that are relevant",
    "used_recall": "share of the gold ids that the plan used",
    "used_f1": "harmonic mean of used_precision and used_recall",
    "usefulness": "LM-judged usefulness of the experience (none without an LM)",
    "accuracy": "share of decided answers whose yes/no/maybe matches the gold decision",
    "kept_gold": "share of questions where a gold document survived grading",
    "grounded_rate": "share of answers the groundedness check verified",
    "citation_validity": "share of cited ids that were actually provided or returned",
    "citation_coverage": "share of sentences or steps that carry a valid citation",
    "citation_recall": "LM-judged: share of answer sentences their cited chunks support (--alce)",
    "citation_precision": "LM-judged: share of citations that support their sentence (--alce)",
    "gold_found": "share of questions where the tools returned the gold document",
    "score": "the program's combined compile metric",
    "hallucinated_per_plan": "mean count of ids a plan cited that it was never given",
    "plans": "examples that produced a plan (0 without an LM: the no-LM path plans nothing)",
    "tool_calls": "mean tool calls per question",
    "hallucinated_outputs": "mean tool outputs the model wrote itself instead of calling the tool",
    "answered_rate": "share of questions that ended with a valid answer (not a limit, no LM or a failed LM)",
    "lm_calls": "mean LM calls per question",
    "lm_calls_per_query": "mean LM calls per example, the program's own",
    "lm_calls_per_question": "mean LM requests per question, counted as sent",
    "lm_calls_max": "most LM requests one question took",
    "lm_call_budget": "most LM calls one question can take, however the LM replies",
    "lm_calls_judge": "LM calls the evaluation's judge made, apart from the program's",
    "lm_calls_observed": "every LM request of the run, the program's and the judge's",
    "errors": "examples whose prediction carries an error",
    "n": "examples scored",
    "lm_fallback_rate": "share of examples where an LM stage fell back to its no-LM result",
    "lm_fallbacks": "how many times each LM stage fell back",
    "lm_overruled_rate": "share of queries whose LM parse disagreed with the utterance or the home and was overruled",
    "lm_overruled": "how often each check overruled the LM parse",
    "latency_ms_p50": "median milliseconds per example",
    "latency_ms_p95": "95th percentile milliseconds per example",
    "lm_fault_budget": "what failing LM calls cost the run: charged_s, failed_calls, spent (the rest ran without the "
                       "LM) and stages_shut (a stage that failed while the others answered, which fell back alone)",
}

_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;
color:#1b1f24}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #d0d7de}
.sub{color:#57606a;margin-top:0}
table{border-collapse:collapse;margin:.6em 0;width:100%}
th,td{border-bottom:1px solid #eaeef2;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f6f8fa}table.rows>tbody>tr>th{position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.miss td:first-child{border-left:4px solid #cf222e}tr.hit td:first-child{border-left:4px solid #1a7f37}
tr.more>td{border-bottom:1px solid #d0d7de;padding:0 .5em .5em 1.5em}
tr.miss+tr.more>td{border-left:4px solid #cf222e}tr.hit+tr.more>td{border-left:4px solid #1a7f37}
.bar{background:#eaeef2;height:.8em;width:12em;display:inline-block;vertical-align:middle}
.bar span{background:#0969da;display:block;height:100%}
.note{color:#57606a}details summary{cursor:pointer;color:#0969da}
pre{white-space:pre-wrap;word-break:break-word;font-size:12px;background:#f6f8fa;padding:.5em;margin:.3em 0}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.text{max-width:28em;word-break:break-word}.pair{white-space:nowrap}
.block{background:#fbfcfd;border:1px solid #eaeef2;border-radius:6px;padding:.4em .8em;margin-top:.3em}
.asked{margin:.3em 0}.said{font-size:1.1em}.label{font-weight:600;margin:.6em 0 0}
.sides{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1.2em}.block td.name{white-space:nowrap}
@media (max-width:900px){.sides{grid-template-columns:minmax(0,1fr)}}
.block table{font-size:13px;margin:.3em 0}.scroll{overflow-x:auto}table.ir{width:auto}
.block tr.ok td{background:#dafbe1}.block tr.near td{background:#fff8c5}.block tr.bad td{background:#ffebe9}
.block code.ok{background:#dafbe1;outline:1px solid #1a7f37}
.ids .id{display:inline-block;margin:0 .7em .15em 0;white-space:nowrap}
.item{margin:.3em 0;display:flex;gap:.5em}.item>.key{flex:0 0 6.5em}.item>:last-child{min-width:0;flex:1}
.key{color:#57606a}
.answer{white-space:pre-wrap;background:#f6f8fa;padding:.4em;margin-top:.2em;max-height:16em;overflow:auto}
ul.why{margin:.2em 0;padding-left:1.4em}
svg text.axis{fill:#1b1f24;font-size:12px}
"""

_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def render_html_report(report: dict, *, open_misses: int = OPEN_MISSES) -> str:
    """The page for a report as ``tracerag evaluate --out`` writes it (``program``, ``dataset``, ``n``,
    ``metrics``, ``breakdown``, ``per_query``; ``devices``: the labels and rooms of the devices its rows
    name; ``lm``: the run's LM, None for none). The first ``open_misses`` misses show their block open."""
    for field in ("program", "metrics", "per_query"):
        if field not in report:
            raise InvalidValue(f"report: field '{field}' is missing (not a tracerag evaluate report)")
    rows = report["per_query"]
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise InvalidValue("report: field 'per_query' must be a list of objects")
    title = f"{report['program']} on {report.get('dataset', '?')}"
    facts = [f"split {report.get('split', 'all')}", f"n = {report.get('n', len(rows))}"]
    facts += [f"{key} = {report[key]}" for key in ("k", "ir") if key in report]
    lm = lm_used(report)
    facts.append(f"LM {report['lm']}" if isinstance(report.get("lm"), str) else "LM" if lm else "no LM")
    if report.get("lm_never_answered"):
        facts.append("the LM never answered")
    ordered, misses, headline = misses_first(rows)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_text(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_text(title)}</h1>",
        f'<p class="sub">{_text(", ".join(facts))}</p>',
        _summary(report["metrics"], lm),
        _config(report.get("config")),
        _curve(recall_curve(rows), _curve_note(rows)),
        _breakdowns(report.get("breakdown") or {}, report["metrics"], lm),
        _rows(ordered, misses, headline, report, lm, open_misses),
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def write_html_report(report: dict, path: str | Path, *, open_misses: int = OPEN_MISSES) -> Path:
    """Write the page (creating its directory) and return its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_durably(path, render_html_report(report, open_misses=open_misses))
    return path


def lm_used(report: dict) -> bool:
    """Whether the run had an LM: the report's ``lm`` (the CLI records it), else what its figures show (LM
    calls made, stages that fell back, a parse by the LM)."""
    if "lm" in report:
        return bool(report["lm"])
    metrics = report.get("metrics") or {}
    if report.get("ir") == "lm" or report.get("lm_never_answered") or metrics.get("lm_fallback_rate"):
        return True
    if any(_number(value) and value > 0 for name, value in metrics.items() if name.startswith("lm_calls")):
        return True
    return any(row.get("lm_calls") or row.get("lm_fallbacks") for row in report.get("per_query") or ()
               if isinstance(row, dict))


def _is_lm_metric(name: str) -> bool:
    return name.startswith("lm_") or name.split("@")[0] in LM_METRICS


def misses_first(rows: list[dict]) -> tuple[list[dict], int, str | None]:
    """The rows with misses first (worst score first, then the dataset's order), how many missed, and
    the row score that decided it. A row misses when that score is below 1; rows without it are not
    misses."""
    headline = next((name for name in HEADLINE_SCORES if any(_number(row.get(name)) for row in rows)), None)
    if headline is None:
        return list(rows), 0, None
    missed = [(row[headline], n) for n, row in enumerate(rows) if _number(row.get(headline)) and row[headline] < 1]
    order = [n for _, n in sorted(missed)]
    missed_at = set(order)
    order += [n for n in range(len(rows)) if n not in missed_at]
    return [rows[n] for n in order], len(missed), headline


def recall_curve(rows: list[dict]) -> list[float] | None:
    """Mean recall@j for j = 1..depth over the rows whose answer is a ranking: CommandRetrieval rows that are
    not bulk plans (a plan's targets are a set, not a ranking), rows that name their ``relevant`` ids
    (SelfReflectiveRAG: the gold documents), and rows that carry ``recall_at`` (ExperienceRetrieval). A row's
    ranking is its ``ranking`` (kept to the depth ``evaluate --html`` asks for), else its ``returned`` list
    (the top k). None when no row has one."""
    scored = [row["recall_at"] for row in rows if isinstance(row.get("recall_at"), list) and row["recall_at"]]
    if scored:  # rows that carry their recall at each cut-off (ExperienceRetrieval's capped recall)
        depth = max(map(len, scored))
        return [sum(points[min(j, len(points)) - 1] for points in scored) / len(scored) for j in range(1, depth + 1)]
    ranked = [row for row in rows if _ranked(row)]
    if not ranked:
        return None
    depth = max(len(_ranking(row)) for row in ranked)
    return [sum(_recall_at(row, j) for row in ranked) / len(ranked) for j in range(1, depth + 1)]


def _ranking(row: dict) -> Any:
    return row["ranking"] if isinstance(row.get("ranking"), list) else row.get("returned")


def _ranked(row: dict) -> bool:
    if isinstance(row.get("relevant"), list):
        return bool(row["relevant"]) and isinstance(row.get("ranking"), list)
    return row.get("bulk") is False and isinstance(_ranking(row), list) and isinstance(row.get("expected"), list) \
        and bool(row["expected"])


def _recall_at(row: dict, j: int) -> float:
    if isinstance(row.get("relevant"), list):  # ids: the share of the relevant ones in the first j
        relevant = set(row["relevant"])
        return len(relevant & set(row["ranking"][:j])) / len(relevant)
    returned = {tuple(pair) for pair in _ranking(row)[:j]}
    found = 0
    for target in row["expected"]:
        commands = target["command_id"] if isinstance(target["command_id"], list) else [target["command_id"]]
        found += any((target["device_id"], command) in returned for command in commands)
    return found / len(row["expected"])


def evaluate_to_html(args, evaluate) -> int:
    """``tracerag evaluate ... --html FILE``: run ``evaluate(args)`` with its JSON report written to
    ``--out`` (else beside the page, ``FILE`` with ``.json``), then draw the page from that report."""
    page = Path(args.html)
    args.html = None
    args.ranked_depth = max(CURVE_DEPTH, args.k or 0)  # the curve's rows keep their ranking this deep
    args.out = args.out or str(page.with_suffix(".json"))
    if Path(args.out).resolve() == page.resolve():
        print(f"error: --html {page} would overwrite the JSON report: give the page a .html name", file=sys.stderr)
        return 2
    code = evaluate(args)
    if code == 0:
        report = json.loads(Path(args.out).read_text(encoding="utf-8"))
        print(f"HTML report written to {write_html_report(report, page)}")
    return code


def _summary(metrics: dict, lm: bool) -> str:
    lines = ["<h2>Summary</h2>", "<table><tr><th>metric</th><th>value</th><th>what it means</th></tr>"]
    for name, value in metrics.items():
        if not lm and _is_lm_metric(name):
            continue
        if isinstance(value, dict):
            shown = "<br>".join(f'<span class="pair">{_text(str(key))} {_cell(count) or "none"}</span>'
                                for key, count in value.items()) or "none"
            cell = f'<td class="fields">{shown}</td>'
        else:
            cell = f'<td class="num">{_cell(value)}</td>'
        lines.append(f"<tr><td>{_text(name)}</td>{cell}<td class=\"note\">{_text(_note(name))}</td></tr>")
    lines.append("</table>")
    if not lm:
        lines.append('<p class="note">This run had no LM: its LM figures (LM calls, fallbacks, the fault budget) '
                     "are left out.</p>")
    return "\n".join(lines)


def _config(config: Any) -> str:
    if not config:
        return ""
    return (f"<details><summary>configuration</summary><pre>{_text(json.dumps(config, ensure_ascii=False, indent=1))}"
            "</pre></details>")


def _curve_note(rows: list[dict]) -> str:
    if any(isinstance(row.get("recall_at"), list) for row in rows):
        return "Relevant solved tasks among those handed to the summary, recall capped at min(j, relevant)"
    if any(isinstance(row.get("relevant"), list) for row in rows):
        return "Gold documents among the first round's chunks (the question as asked)"
    return "Single-target queries (bulk plans are sets, not rankings)"


def curve_axis(points: list[float]) -> tuple[float, float, float]:
    """The recall axis: (low, high, step). It starts at a round value just below the lowest point, not at 0,
    so a curve from 0.95 to 1 is not a flat line at the top; it ends at the round value at or above the highest."""
    low = max(0.0, math.floor(min(points) * 20 - 1e-9) / 20)
    if low > 0 and low >= min(points) - 1e-9:  # the lowest point sits above the axis, not on it
        low = round(low - 0.05, 2)
    high = min(1.0, math.ceil(max(points) * 20 - 1e-9) / 20)
    if high <= low:
        high = min(1.0, low + 0.05)
        low = min(low, high - 0.05)
    span = high - low
    step = next(s for s in (0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25) if span / s <= 5 + 1e-9)
    return round(low, 4), round(high, 4), step


def _curve(points: list[float] | None, note: str = "") -> str:
    """recall@j against j as an inline SVG line (no script, no image file); both axes labelled."""
    if not points:
        return ""
    width, height, left, bottom, top, right = 660, 270, 64, 46, 12, 16
    low, high, step = curve_axis(points)
    plot = height - bottom - top

    def y_of(value: float) -> float:
        return height - bottom - (value - low) / (high - low) * plot

    step_x = (width - left - right) / max(len(points) - 1, 1)
    xy = [(left + n * step_x, y_of(value)) for n, value in enumerate(points)]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    labelled = _cut_offs(len(points))
    ticks = "".join(f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle">{n}</text>'
                    for n, (x, _) in enumerate(xy, 1) if n in labelled)
    levels = [round(low + n * step, 4) for n in range(int(round((high - low) / step)) + 1)]
    grid = "".join(f'<line x1="{left}" x2="{width - right}" y1="{y_of(v):.1f}" y2="{y_of(v):.1f}" stroke="#eaeef2"/>'
                   f'<text x="{left - 6}" y="{y_of(v) + 4:.1f}" text-anchor="end">{v:g}</text>' for v in levels)
    axes = (f'<line x1="{left}" x2="{left}" y1="{top}" y2="{height - bottom}" stroke="#8c959f"/>'
            f'<line x1="{left}" x2="{width - right}" y1="{height - bottom}" y2="{height - bottom}" stroke="#8c959f"/>'
            f'<text class="axis" x="{(left + width - right) / 2:.0f}" y="{height - 6}" text-anchor="middle">'
            f"k (cut-off)</text>"
            f'<text class="axis" x="0" y="0" transform="translate(16 {top + plot / 2:.0f}) rotate(-90)" '
            f'text-anchor="middle">recall@k</text>')
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="#0969da"><title>recall@{n} = {v:.4f}</title>'
                   f"</circle>" for n, ((x, y), v) in enumerate(zip(xy, points, strict=True), 1))
    values = ", ".join(f"@{n} {v:.3f}" for n, v in enumerate(points, 1) if n in labelled)
    from_zero = "" if low == 0 else f" The recall axis starts at {low:g}, not 0."
    return (f'<h2 id="recall-curve">Recall at each cut-off</h2><p class="note">{_text(note)}: mean recall@j for '
            f'j = 1..{len(points)}.{from_zero}</p>'
            f'<svg role="img" aria-label="recall at each cut-off" width="{width}" height="{height}" '
            f'data-y-min="{low:g}" data-y-max="{high:g}" font-size="11" fill="#57606a">{grid}{axes}{ticks}'
            f'<polyline points="{line}" fill="none" stroke="#0969da" stroke-width="2"/>{dots}</svg>'
            f'<p class="note">{values}</p>')


def _cut_offs(depth: int) -> set[int]:
    """The cut-offs the curve labels: every one up to 12, else 1, 5, 10 … and the last."""
    if depth <= 12:
        return set(range(1, depth + 1))
    return {1, depth} | set(range(5, depth + 1, 5))


def _breakdowns(breakdown: dict, metrics: dict, lm: bool) -> str:
    out = []
    for key, groups in breakdown.items():
        if not isinstance(groups, dict) or not groups:
            continue
        columns = [c for c in _score_columns(groups.values(), metrics) if lm or not _is_lm_metric(c)]
        if not columns:
            continue
        out.append(f"<h2>By {_text(key)}</h2>")
        head = "".join(f"<th>{_text(column)}</th>" for column in columns)
        out.append(f"<table><tr><th>{_text(key)}</th>{head}<th>n</th></tr>")
        for name, scores in groups.items():
            cells = [_bar_cell(scores.get(columns[0]))] + [f'<td class="num">{_cell(scores.get(c))}</td>'
                                                          for c in columns[1:]]
            count = f'<td class="num">{_cell(scores.get("n"))}</td>'
            out.append(f"<tr><td>{_text(name)}</td>{''.join(cells)}{count}</tr>")
        out.append("</table>")
    return "\n".join(out)


def _rows(rows: list[dict], misses: int, headline: str | None, report: dict, lm: bool, open_misses: int) -> str:
    if not rows:
        return '<h2 id="rows">Rows</h2><p>No rows.</p>'
    present = set().union(*(row.keys() for row in rows))
    names = [c for c in _ROW_NAMES if c in present]
    scores = [c for c in _ROW_SCORES if c in present and (lm or c not in LM_FIELDS)]
    status = [c for c in _ROW_STATUS if c in present and (lm or c not in LM_FIELDS)]
    columns = names + scores + status
    if headline is None:
        said = f"{len(rows)} rows."
    elif misses:
        opened = min(misses, open_misses)
        said = (f"{misses} of {len(rows)} rows missed ({_text(headline)} below 1), shown first, worst first; "
                f"under each, what was asked, expected and returned, and why"
                + (f" (open for the first {opened})." if opened < misses else "."))
    else:
        said = f"No row of {len(rows)} missed ({_text(headline)} is 1 for each)."
    out = [f'<h2 id="rows">Rows</h2><p>{said}</p>', '<table class="rows"><tr>'
           + "".join(f"<th>{_text(c)}</th>" for c in columns) + "</tr>"]
    for n, row in enumerate(rows):
        missed = headline is not None and _number(row.get(headline)) and row[headline] < 1
        kind = "" if headline is None or not _number(row.get(headline)) else (' class="miss"' if missed else
                                                                              ' class="hit"')
        cells = []
        for column in columns:
            value = row.get(column)
            if column in scores:
                cells.append(f'<td class="num">{_cell(value)}</td>')
            elif column in ("query", "question", "error"):
                cells.append(f'<td class="text">{_cell(value)}</td>')
            else:
                cells.append(f"<td>{_cell(value)}</td>")
        out.append(f"<tr{kind}>{''.join(cells)}</tr>")
        is_open = " open" if missed and n < open_misses else ""
        summary = "why it missed" if missed else "details"
        out.append(f'<tr class="more"><td colspan="{len(columns)}"><details{is_open}><summary>{summary}</summary>'
                   f'<div class="block">{row_block(row, report, lm_used=lm)}</div></details></td></tr>')
    out.append("</table>")
    return "\n".join(out)


def _score_columns(groups: Iterable[dict], metrics: dict) -> list[str]:
    """The breakdown's numeric columns, in the order of the summary metrics."""
    groups = list(groups)
    return [name for name in metrics if name != "n" and any(_number(g.get(name)) for g in groups)]


def _bar_cell(value: Any) -> str:
    if not _number(value):
        return f'<td class="num">{_cell(value)}</td>'
    width = max(0.0, min(1.0, float(value))) * 100
    return (f'<td class="num">{_cell(value)} <span class="bar" aria-hidden="true">'
            f'<span style="width:{width:.1f}%"></span></span></td>')


def _note(name: str) -> str:
    return METRIC_NOTES.get(name) or METRIC_NOTES.get(name.split("@")[0], "")


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return _text(f"{value:.4g}") if math.isfinite(value) else _text(str(value))
    if isinstance(value, (list, tuple)):
        return _text(", ".join(str(v) for v in value)) if value else ""
    if isinstance(value, dict):
        return _text(json.dumps(value, ensure_ascii=False))
    return _text(str(value))


def _text(value: str) -> str:
    return escape(value, quote=True)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
