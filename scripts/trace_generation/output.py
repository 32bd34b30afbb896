"""The files the dataset consists of: trace.json per task, queries.jsonl and the README, and writing them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path


def dump(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"


def readme(traces: list[dict], queries: list[dict], meta: dict) -> str:
    n_ok = sum(t["is_correct"] for t in traces)
    n_img = sum(1 for t in traces if t["images"])
    n_cap = sum(1 for t in traces if "caption" in t)
    flags = meta["_query_flags"]
    n_zh = sum(1 for _, lang, _ in flags if lang == "zh")
    n_co = sum(1 for _, _, co in flags if co)
    n_qimg = sum(1 for q in queries if q.get("images"))
    n_qsub = sum(1 for q in queries if "sub_task" in q)
    rows = "\n".join(f"| `{slug}` | {m['correct']} | {m['incorrect']} | {m['queries']} | {m['sub_task']} |"
                     for slug, m in meta.items() if not slug.startswith("_"))
    tools = sorted({x for t in traces for x in t["tools"]})
    return f"""# `experience` - bundled evaluation data for ExperienceRetrieval

A memory bank of solved multimodal agent tasks ("traces") and a set of held-out new tasks labelled with the
traces that are relevant to them. It is the evaluation set for tracerag's `ExperienceRetrieval` program, which,
before an agent starts a task, retrieves similar previously solved traces and distils short actionable experience
from them.

The data was written for tracerag. It is **synthetic**: every question, step, observation and answer comes from
templates and slot values in `scripts/generate_traces.py` (Python stdlib only, fixed seed, no network, no external
datasets). Regenerate it with

```bash
python scripts/generate_traces.py
```

Two runs give byte-identical files. The script validates everything before writing (unique ids; each relevant id
exists, is a correct trace and is in the query's family; every family has at least 8 correct traces and 4 queries;
no query repeats a trace question) and exits non-zero if a check fails.

Facts in well-known families (landmarks, plants, birds, artworks, books, films, papers, company headquarters,
sports records, historical dates) are meant to be correct, and computed answers (molar masses, conversions,
distances, regexes, SQL results, puzzle solutions) are computed or checked by the generator. The following are
invented and must not be used as facts: exchange rates, product prices, timetables, weather observations, the
companies and prices in `stock-price`, the trials in `pubmed-question`, receipts, labels and tables. Image files are
not included: `images` holds relative paths only, and `caption` describes what the image shows.

## Contents

- `tasks/<task_id>/trace.json` - {len(traces)} traces: {n_ok} correct (`is_correct: true`) and {len(traces) - n_ok}
  incorrect (`is_correct: false`, which a bank builder must filter out); {n_img} have images, {n_cap} of those a
  caption.
- `queries.jsonl` - {len(queries)} held-out tasks: new entities, numbers and phrasings, some casual, {n_zh} in
  Chinese, {n_co} given only as an image caption; {n_qimg} have images, {n_qsub} carry a `sub_task`.

Families are groups of tasks that share a solution strategy; some are deliberately confusable (chart reading vs
table lookup, currency vs recipe vs physics unit conversion, landmark vs plant vs bird vs artwork identification,
receipt vs nutrition label, regex vs SQL vs spreadsheet formula, book vs film vs paper lookup).

| family | correct traces | incorrect traces | queries | example sub_task |
|---|---|---|---|---|
{rows}
| **total** | **{n_ok}** | **{len(traces) - n_ok}** | **{len(queries)}** | |

## Trace format (`tasks/<task_id>/trace.json`)

| field | type | meaning |
|---|---|---|
| `task_id` | str | `<family>-NNNN`, also the directory name |
| `question` | str | the task as the user asked it |
| `sub_task` | str | short task-type phrase, e.g. "read a value from a bar chart" |
| `images` | list[str] | relative image paths such as `images/chart_0007.png` (files not included); may be empty |
| `caption` | str, optional | precomputed description of the image(s); on about 70% of traces with images |
| `tools` | list[str] | tools in the order used (consecutive repeats collapsed): {", ".join(tools)} |
| `steps` | list[object] | 2-6 steps, each `{{"thought", "tool", "tool_input", "observation"}}` |
| `reasoning` | str | summary of the solution strategy: what worked, which pitfalls were avoided |
| `final_answer` | str | the answer given |
| `is_correct` | bool | whether the answer was right; only correct traces belong in the bank |
| `family` | str | the task family; metadata for evaluation only, not for retrieval |

## Query format (`queries.jsonl`, one JSON object per line)

| field | type | meaning |
|---|---|---|
| `id` | str | `q-NNNN` (does not reveal the family) |
| `question` | str | the new task |
| `sub_task` | str, optional | task-type phrase; present on about half of the queries |
| `images` | list[str], optional | relative image paths (files not included) |
| `caption` | str, optional | description of the image; for caption-only queries it carries the actual task |
| `family` | str | gold family, for evaluation only |
| `relevant_task_ids` | list[str] | every correct trace of the same family; incorrect traces are never listed |
"""


def render(traces: list[dict], queries: list[dict], meta: dict) -> dict[str, str]:
    """Every file's text by its path under the dataset directory."""
    files = {f"tasks/{t['task_id']}/trace.json": dump(t) for t in traces}
    files["queries.jsonl"] = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries)
    files["README.md"] = readme(traces, queries, meta)
    return files


def write(files: dict[str, str], out: Path) -> None:
    """Replace the tasks under out and write every file."""
    if (out / "tasks").exists():
        shutil.rmtree(out / "tasks")
    for rel, text in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
