"""Which sensitive commands two trees read as asked, on template utterances nobody labelled.

Why: the referent suites judge labelled sentences; a change to the command rules can also move utterances no suite
holds. This writes, for every home given, a few thousand plain templates over its own rooms and labels ("unlock
the {room}", "the {room} door, unlock it", "{label}，打开它", "turn on the light by the {label}") and lists each
utterance whose asked sensitive commands (``SensitiveRequests.asked``, no LM) differ between this tree and
``--baseline`` (checked out into a temporary worktree). A command this tree asks that the baseline did not is
printed first: each must be one the utterance really asks for.

    python benchmarks/sensitive_asks_diff.py --baseline 735d689 benchmarks/data/referent_suite_i/en_larkspur ...
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from baseline_tree import measured_on


def templates(rooms: list[str], labels: list[str]) -> list[str]:
    """The utterances written for one home's rooms and labels, in its language."""
    chinese = any("\u4e00" <= ch <= "\u9fff" for ch in "".join(rooms + labels))
    out = []
    for room in rooms:
        if chinese:
            out += [f"把{room}的门打开", f"{room}的锁打开", f"开一下{room}", f"{room}开锁", f"{room}的门，帮我打开它",
                    f"让客人进{room}"]
        else:
            room = room.lower()
            out += [f"unlock the {room} door", f"open the {room} door", f"unlock the lock in the {room}",
                    f"open up the {room}", f"the {room} door, unlock it", f"let them into the {room}",
                    f"unlock the {room}", f"turn the {room} on"]
    for label in labels:
        if chinese:
            out += [f"{label}打开", f"{label}旁边的灯打开", f"把{label}关了", f"{label}，打开它"]
        else:
            out += [f"open the {label}", f"turn on the light by the {label}", f"the {label}, open it",
                    f"unlock the {label}", f"turn the {label} on"]
    return out


def measure(homes: list[str]) -> dict[str, list[str]]:
    """Per "home|utterance": the sensitive "label:command" pairs the tree on ``sys.path`` reads as asked."""
    import tracerag
    from tracerag import CommandIndex, Home
    from tracerag.home_commands.safety_screen import safety_of

    tracerag.configure()
    out = {}
    for path in homes:
        home = Home.load(path, log_warnings=False)
        index = CommandIndex(home, tracerag.get_embedder())
        safety = safety_of(index)
        rooms = sorted({d.room for d in home.devices if d.room})
        for utterance in templates(rooms, sorted({d.label for d in home.devices})):
            rows = safety.sensitive.rows[safety.requests.asked(utterance)]
            out[f"{Path(path).name}|{utterance}"] = sorted(
                f"{home.devices[index.table.row_device[r]].label}:{index.table.spec_of_row(r).id}" for r in rows)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("homes", nargs="+", help="home directories (devices.json, rooms.json, spec.jsonl)")
    parser.add_argument("--baseline", help="a commit to compare with")
    parser.add_argument("--measure", action="store_true", help="only measure this tree (used for the baseline)")
    parser.add_argument("--json", type=Path, help="where --measure writes")
    args = parser.parse_args()
    homes = [str(Path(h).resolve()) for h in args.homes]
    if args.measure:
        args.json.write_text(json.dumps(measure(homes), ensure_ascii=False), encoding="utf-8")
        return
    after = measure(homes)
    before = measured_on(args.baseline, __file__, ["--measure", *homes]) if args.baseline else after
    gained = {k: sorted(set(after[k]) - set(before.get(k, []))) for k in after}
    lost = {k: sorted(set(before.get(k, [])) - set(after[k])) for k in after}
    for title, changes in (("asked now, not before", gained), ("asked before, not now", lost)):
        moved = {k: v for k, v in changes.items() if v}
        print(f"## {title}: {len(moved)} of {len(after)} utterances")
        for key, pairs in moved.items():
            print(f"  {key}: {', '.join(pairs[:4])}{' …' if len(pairs) > 4 else ''}")


if __name__ == "__main__":
    main()
