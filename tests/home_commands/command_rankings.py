"""What CommandRetrieval answers for every bundled query and for synthetic queries on a 1,000-device
building, as plain data: the snapshot the ranking regression test compares against.

    python tests/home_commands/command_rankings.py     # rewrite the snapshot (only for an intended change)

Per query, with the no-LM parse and (bundled queries) the gold parse: the parse, the top-10
(device, command, score) and the bulk plan (command, hint, category, targets, options).
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(__file__).with_name("data") / "command_rankings.json.gz"
BUILDING_DEVICES = 1000


def _plan(bulk) -> dict | None:
    if bulk is None:
        return None
    return {"command": bulk.command_id, "hint": bulk.hint, "category": bulk.category,
            "targets": sorted(d for group in bulk.groups for d in group.device_ids),
            "options": [[o.command_id, o.p] for o in bulk.options]}


def _answer(program, query: str, home: str | None = None, ir=None) -> dict:
    pred = program(query=query, home=home, ir=ir)
    return {"ir": pred.ir.model_dump(), "hint": pred.hint,
            "top": [[c.device_id, c.command_id, c.score] for c in pred.candidates],
            "bulk": _plan(pred.bulk)}


def building_queries(queries: list[str], rooms: list[str]) -> list[str]:
    """Each bundled utterance three ways on the building: as it is, with its rooms moved to wing 7,
    and naming the devices of wing 5 by their code word."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from synthetic_home import code_word

    by_length = sorted(rooms, key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, by_length)))
    out = []
    for q in queries:
        out += [q, pattern.sub(lambda m: f"7栋{m.group(0)}", q), f"{q} {code_word(5)}"]
    return out


def rankings(embedder) -> dict:
    """{"bundled": {query id: {"rules": answer, "gold": answer}}, "building": {utterance: answer}}."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from synthetic_home import BUNDLED, replicate_home

    from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
    from tracerag.datasets.smarthome import load_dataset

    data = load_dataset("smarthome")
    indexes = build_indexes(list(data), embedder)
    rules = CommandRetrieval(indexes, ir_source="none")
    gold = CommandRetrieval(indexes, ir_source="gold")
    bundled = {}
    for path, queries in data.items():
        for q in queries:
            bundled[q.id] = {"rules": _answer(rules, q.query, path.name),
                             "gold": _answer(gold, q.query, path.name, q.ir) if q.ir else None}
    with tempfile.TemporaryDirectory() as tmp:
        building = build_indexes([replicate_home("home_large", Path(tmp) / "building", BUILDING_DEVICES)], embedder)
    program = CommandRetrieval(building, ir_source="none")
    rooms = json.loads((BUNDLED / "home_large" / "rooms.json").read_text(encoding="utf-8"))["items"]
    utterances = building_queries([q.query for q in data[BUNDLED / "home_large"]], [r["name"] for r in rooms])
    return {"bundled": bundled, "building": {u: _answer(program, u) for u in dict.fromkeys(utterances)}}


def load_snapshot() -> dict:
    with gzip.open(SNAPSHOT, "rt", encoding="utf-8") as f:
        return json.load(f)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from tracerag.embedding.embedders import LocalUSEEmbedder

    result = rankings(LocalUSEEmbedder())
    SNAPSHOT.parent.mkdir(exist_ok=True)
    with gzip.GzipFile(SNAPSHOT, "wb", mtime=0) as f:
        f.write(json.dumps(result, ensure_ascii=False, sort_keys=True, indent=0).encode("utf-8"))
    print(f"{SNAPSHOT}: {len(result['bundled'])} bundled queries, {len(result['building'])} building utterances")
