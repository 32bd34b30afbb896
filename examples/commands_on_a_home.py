"""Smart-home commands on a home: ranked (device, command) candidates, bulk plans, and a dry run that shows
the exact API calls it would send. Nothing is sent.

    python examples/commands_on_a_home.py                                 # the bundled home_small
    python examples/commands_on_a_home.py my_home/ "turn off all the lights"   # your home, your words

``my_home/`` is what ``tracerag home pull smartthings|homeassistant --out my_home/`` writes (or devices.json,
rooms.json and spec.jsonl by hand). Without TRACERAG_LM the deterministic parser reads the utterance; with
it the LM parses and the home's own data checks the parse.
"""

from __future__ import annotations

import sys

import tracerag
from tracerag.smarthome import target_for_home

QUERIES = ["打开客厅的灯", "把主卧空调调到26度", "除了卧室，其他灯都关掉", "unlock the front door"]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    home = args[0] if args else "smarthome/home_small"
    queries = args[1:] or QUERIES
    tracerag.configure()                                  # the LM named by TRACERAG_LM, if any; default embedder
    program = tracerag.build("commands", homes=home)
    target = target_for_home(home)                        # source.json says which API; else dry-run only
    for query in queries:
        pred = program(query=query)
        print(f"\n{query}")
        if pred.hint:                                     # no_intent, withheld, need_clarification, ...
            print(f"  hint: {pred.hint}")
        for c in pred.candidates[:3]:
            print(f"  {c.score:6.3f}  {c.label} ({c.room})  {c.command_id}")
        if pred.bulk is not None or pred.candidates:
            report = program.execute(pred, target, query=query)     # dry run: the default
            print("\n".join(f"  | {line}" for line in report.lines()))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except tracerag.TraceragError as exc:  # a wrong path, a file that cannot be read: one line, not a traceback
        sys.exit(f"error: {exc}")
