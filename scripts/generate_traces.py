#!/usr/bin/env python3
"""Generate the bundled `experience` dataset for tracerag's ExperienceRetrieval program.

Writes, under tracerag/datasets/data/experience/:

* tasks/<task_id>/trace.json  solved (and some failed) multimodal agent traces, the memory bank
* queries.jsonl               held-out new tasks labelled with the relevant (same-family, correct) traces
* README.md                   what the data is, its formats and the counts

Everything is synthetic and produced from the templates and slot values in scripts/trace_generation/ (stdlib
only, no network, no external data). A fixed seed makes two runs byte-identical. The script validates the data
before writing anything and exits non-zero if a check fails.

    python scripts/generate_traces.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from trace_generation.assembly import FAMILIES, build
from trace_generation.output import render, write
from trace_generation.validation import validate

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tracerag" / "datasets" / "data" / "experience"


def main() -> int:
    traces, queries, meta = build()
    errs = validate(traces, queries, meta)
    files = render(traces, queries, meta)
    size = sum(len(v.encode("utf-8")) for v in files.values())
    if size > 3_200_000:
        errs.append(f"output is {size / 1e6:.2f} MB (> 3.2 MB)")
    if errs:
        print(f"validation failed ({len(errs)} problems):", file=sys.stderr)
        for e in errs:
            print("  -", e, file=sys.stderr)
        return 1
    write(files, OUT)
    n_ok = sum(t["is_correct"] for t in traces)
    print(f"families: {len(FAMILIES)}; traces: {len(traces)} ({n_ok} correct, {len(traces) - n_ok} incorrect); "
          f"queries: {len(queries)}; size {size / 1e6:.2f} MB -> {OUT.relative_to(ROOT)}")
    for slug, m in meta.items():
        if not slug.startswith("_"):
            print(f"  {slug:22s} correct {m['correct']:3d}  incorrect {m['incorrect']}  queries {m['queries']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
