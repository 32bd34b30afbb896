"""An evaluation's report on the terminal: a table of its metrics, overall and per breakdown, then the LM
figures; ``finish_report`` also writes the JSON report where ``--out`` says."""

from __future__ import annotations

import json
from pathlib import Path


def finish_report(report: dict, out: str | None, extra_cols: tuple[str, ...]) -> int:
    """Print the report's table and, with ``out``, write the whole report there as JSON."""
    print_report(report, extra_cols)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
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
    print(f"{'':28}" + "".join(f"{c:>22}" for c in cols))
    rows = [("ALL", report["metrics"])]
    for key, groups in report["breakdown"].items():
        rows += [(f"{key}={name}", s) for name, s in groups.items()]
    for name, s in rows:
        print(f"{name[:28]:28}" + "".join(f"{'-' if s.get(c) is None else s[c]:>22}" for c in cols))
    extras = {key: report["metrics"][key] for key in ("lm_calls_per_query", "lm_calls_per_question", "lm_calls_max",
                                                      "lm_call_budget", "latency_ms_p50", "latency_ms_p95")
              if key in report["metrics"]}
    print("  ".join(f"{key}={v}" for key, v in extras.items()))

