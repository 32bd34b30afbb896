"""Compile CommandRetrieval's parse with your own LM, save the artifact, load it back as an app would.

    export TRACERAG_LM=openai/gpt-4o-mini OPENAI_API_KEY=...              # or any OpenAI-compatible server:
    export TRACERAG_LM=openai/qwen2.5-7b TRACERAG_API_BASE=http://localhost:8000/v1 TRACERAG_API_KEY=none
    python examples/compile_with_your_lm.py

Without TRACERAG_LM it says so and exits 0: compiling teaches an LM, so there is nothing to do without
one. The bootstrap optimizer runs the program on the home's train split, keeps the parses whose
candidates were right (the compile metric checks the parse against the gold one too) as demos, and the
artifact out/commands-compiled.json (+ .meta.json) holds them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import tracerag
from tracerag.commands.compiling import compile_commands

HOME = "smarthome/home_small"


def main(argv: list[str] | None = None, out_dir: str | Path = "out") -> int:
    if not os.environ.get("TRACERAG_LM"):
        print("skipped: set TRACERAG_LM (and TRACERAG_API_BASE / TRACERAG_API_KEY for your own server) to compile")
        return 0
    artifact = Path(out_dir) / "commands-compiled.json"
    tracerag.configure()                                  # TRACERAG_LM, TRACERAG_API_BASE, TRACERAG_API_KEY
    program = tracerag.build("commands", homes=HOME, ir_source="lm")
    scores = compile_commands(program, HOME, "bootstrap", max_train=8)
    tracerag.save(scores.pop("program"), artifact, dataset=HOME, metric="parse_recall@10", scores=scores)
    print(json.dumps(scores, indent=1))

    app = tracerag.load(artifact, home=HOME)              # what an app does at start-up
    pred = app(query="把主卧空调调到26度")
    print(f"written to {artifact}; loaded back: {pred.candidates[0].label} {pred.candidates[0].command_id}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except tracerag.TraceragError as exc:  # a wrong path, a file that cannot be read: one line, not a traceback
        sys.exit(f"error: {exc}")
