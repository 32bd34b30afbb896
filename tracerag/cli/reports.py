"""An evaluation's report on the terminal: a table of its metrics, overall and per breakdown, then the LM
figures; ``finish_report`` also writes the JSON report where ``--out`` says."""

from __future__ import annotations

import json
from pathlib import Path

from ..data_files.durable import write_durably


def finish_report(report: dict, out: str | None, extra_cols: tuple[str, ...]) -> int:
    """Print the report's table and, with ``out``, write the whole report there as JSON."""
    print_report(report, extra_cols)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_durably(out, json.dumps(report, ensure_ascii=False, indent=1))
        print(f"report written to {out}")
    return 0


def print_report(report: dict, extra_cols: tuple[str, ...] = ()) -> None:
    """The report as a table: recall, hit and mrr at its k, ``extra_cols``, then one row per breakdown group."""
    k = report["k"]
    cols = [c for c in (f"recall@{k}", f"hit@{k}", "mrr", *extra_cols, "n") if c in report["metrics"]]
    how = f", ir={report['ir']}" if "ir" in report else ""
    metrics = report["metrics"]
    fell_back = round(metrics.get("lm_fallback_rate", 0.0) * report["n"])
    stages = ", ".join(f"{stage} {n}" for stage, n in metrics.get("lm_fallbacks", {}).items())
    fallbacks = f"; {fell_back} of {report['n']} fell back to the no-LM path ({stages})" if fell_back else ""
    overruled = round(metrics.get("lm_overruled_rate", 0.0) * report["n"])
    checks = ", ".join(f"{check} {n}" for check, n in metrics.get("lm_overruled", {}).items())
    fallbacks += f"; {overruled} LM parse(s) overruled by the utterance ({checks})" if overruled else ""
    print(f"{report['program']} on {report['dataset']} ({report.get('split', 'all')}{how}){fallbacks}")
    rows = [("ALL", report["metrics"])]
    for key, groups in report["breakdown"].items():
        rows += [(f"{key}={name}", s) for name, s in groups.items()]
    for line in table_lines(rows, cols):
        print(line)
    extras = {key: report["metrics"][key] for key in ("lm_calls_per_query", "lm_calls_per_question", "lm_calls_max",
                                                      "lm_call_budget", "latency_ms_p50", "latency_ms_p95")
              if key in report["metrics"]}
    line = ""
    for item in (f"{key}={v}" for key, v in extras.items()):  # wrapped at the table's width
        if line and len(line) + 2 + len(item) > TABLE_WIDTH:
            print(line)
            line = ""
        line = f"{line}  {item}" if line else item
    print(line)


TABLE_WIDTH = 100  # a terminal's width, and a CI log's; docs/reports.md explains each metric


def table_lines(rows: list[tuple[str, dict]], cols: list[str], width: int = TABLE_WIDTH) -> list[str]:
    """``rows`` (name, scores) as a table at most ``width`` characters wide: each column as wide as its
    name or widest value, and the columns that do not fit continue in a block below, named again."""
    name_width = min(28, max(len(name) for name, _ in rows)) + 2
    cells = {c: ["-" if s.get(c) is None else str(s[c]) for _, s in rows] for c in cols}
    widths = {c: max(len(c), *map(len, cells[c])) + 2 for c in cols}
    blocks, used = [[]], name_width
    for c in cols:
        if blocks[-1] and used + widths[c] > width:
            blocks.append([])
            used = name_width
        blocks[-1].append(c)
        used += widths[c]
    lines = []
    for block in blocks:
        lines += [""] if lines else []
        lines.append(" " * name_width + "".join(f"{c:>{widths[c]}}" for c in block))
        lines += [f"{name[:name_width - 2]:{name_width}}" + "".join(f"{cells[c][n]:>{widths[c]}}" for c in block)
                  for n, (name, _) in enumerate(rows)]
    return lines
