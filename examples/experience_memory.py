"""Experience memory for an agent: save the runs it solved, and before a new task, retrieve what worked on
similar ones as a few sentences for its system prompt.

    python examples/experience_memory.py

Each solved run is one ``tasks/<task_id>/trace.json`` (the format ``tracerag build-bank`` reads; only
``is_correct: true`` runs enter the bank). Here three runs are written as your agent would log them; the
bank goes to ./out/bank. Without TRACERAG_LM the task itself is the query and the experience is extractive
(the best runs' task type, tool chain and strategy); with it the task is rewritten and the experience
summarised.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import tracerag
from tracerag import ExperienceConfig, ExperienceRetrieval, render_experience_section

RUNS = [
    {"task_id": "receipt-total-1", "question": "What did this grocery run cost in total, tax included?",
     "sub_task": "add up a shopping receipt", "tools": ["ocr", "calculator"],
     "steps": [{"thought": "read every line item and the tax line", "tool": "ocr", "tool_input": "receipt.jpg",
                "observation": "7 items, tax 3.12"},
               {"thought": "sum the items, then add the tax", "tool": "calculator", "tool_input": "39.05 + 3.12",
                "observation": "42.17"}],
     "reasoning": "Read the items and the tax separately; the printed subtotal is often before tax.",
     "final_answer": "42.17", "is_correct": True},
    {"task_id": "unit-convert-1", "question": "How many cups is 500 ml of milk?",
     "sub_task": "convert units of volume", "tools": ["calculator"],
     "steps": [{"thought": "1 US cup is 236.6 ml", "tool": "calculator", "tool_input": "500 / 236.6",
                "observation": "2.113"}],
     "reasoning": "Use US cups unless the recipe says metric cups (250 ml).", "final_answer": "2.11",
     "is_correct": True},
    {"task_id": "receipt-total-2", "question": "Sum up the restaurant bill including the tip.",
     "sub_task": "add up a shopping receipt", "tools": ["ocr"],
     "reasoning": "Guessed the tip.", "final_answer": "31.00", "is_correct": False},   # counted, not banked
]


def write_runs(runs: list[dict], directory: Path) -> Path:
    for run in runs:
        path = directory / "tasks" / run["task_id"] / "trace.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(run, ensure_ascii=False, indent=1), encoding="utf-8")
    return directory


def main(argv: list[str] | None = None, out_dir: str | Path = "out") -> int:
    args = sys.argv[1:] if argv is None else argv
    task = args[0] if args else "Add up this supermarket receipt, tax included."
    out_dir = Path(out_dir)
    tracerag.configure()                                   # the LM named by TRACERAG_LM, if any
    embedder = tracerag.get_embedder()
    traces = write_runs(RUNS, out_dir / "runs")
    built = tracerag.build_experience_bank(traces, out_dir / "bank", embedder, rebuild=True)
    print(f"bank {out_dir / 'bank'}: {built.added} runs indexed, {built.incorrect_skipped} incorrect left out")
    program = ExperienceRetrieval(out_dir / "bank", ExperienceConfig(enable=True, top_n=2), embedder=embedder)
    pred = program(question=task, images=[], caption=None, sub_task=None)
    print(f"\ntask: {task}\ndrawn from: {', '.join(pred.used_task_ids)}\n")
    print(render_experience_section(pred.experience))     # "" when nothing similar was found
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except tracerag.TraceragError as exc:  # a wrong path, a file that cannot be read: one line, not a traceback
        sys.exit(f"error: {exc}")
