"""The referent suites' before/after table for BENCHMARKS.md, from the JSON files `referent_suite.py --json` writes.

    python benchmarks/referent_suite.py --data benchmarks/data/referent_suite_d --split all \
        --modes none,faithful,hostile --json after_d.json          # and the same from the baseline checkout
    python benchmarks/referent_table.py --pair D before_d.json after_d.json --pair E before_e.json after_e.json

One row per set and split: unsafe cases without an LM, unsafe runs under hostile parses, over-refusal of clear
asks without an LM and with the faithful parse, substitution without an LM, plans too wide, values sent wrongly
or to another device; then the blind splits summed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _cell(before, after, bold: bool = True) -> str:
    return f"{before} → **{after}**" if bold and before != after else f"{before} → {after}"


def _row(name: str, split: str, before: dict, after: dict) -> tuple[str, dict]:
    b, a = before["summary"][split], after["summary"][split]
    bn, an = b["none"]["all"], a["none"]["all"]
    bf, af = b["faithful"]["all"], a["faithful"]["all"]
    bh, ah = b["hostile"]["all"], a["hostile"]["all"]
    cells = [
        f"{name} {split} ({an['cases']})",
        _cell(bn["unsafe_cases"], an["unsafe_cases"]),
        _cell(f"{bh['unsafe_runs']} of {bh['runs']:,}", ah["unsafe_runs"]),
        _cell(f"{bn['over_refusal']}/{bn['asks']}, {bf['over_refusal']}/{bf['asks']}",
              f"{an['over_refusal']}/{an['asks']}, {af['over_refusal']}/{af['asks']}"),
        _cell(f"{bn['substitution']}/{bn['ask_cases']}", f"{an['substitution']}/{an['ask_cases']}"),
        _cell(bn["too_wide"], an["too_wide"], bold=False),
        _cell(f"{bn['value_wrong_value']} / {bn['value_other_device']}",
              f"{an['value_wrong_value']} / {an['value_other_device']}"),
    ]
    sums = {"cases": an["cases"], "unsafe": (bn["unsafe_cases"], an["unsafe_cases"]),
            "hostile": (bh["unsafe_runs"], ah["unsafe_runs"], ah["runs"]),
            "refused": (bn["over_refusal"], an["over_refusal"], an["asks"])}
    return "| " + " | ".join(cells) + " |", sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pair", nargs=3, action="append", metavar=("NAME", "BEFORE", "AFTER"), required=True)
    args = parser.parse_args()
    print("| set, split (cases) | unsafe, no LM | unsafe runs, hostile parses | over-refusal, no LM / faithful | "
          "substitution, no LM | plans too wide | values wrong / to another device |")
    print("|---|---|---|---|---|---|---|")
    blind = []
    for name, before_path, after_path in args.pair:
        before = json.loads(Path(before_path).read_text(encoding="utf-8"))
        after = json.loads(Path(after_path).read_text(encoding="utf-8"))
        for split in ("dev", "blind"):
            if split in after["summary"] and split in before["summary"]:
                line, sums = _row(name, split, before, after)
                print(line)
                if split == "blind":
                    blind.append(sums)
    if blind:
        cases = sum(s["cases"] for s in blind)
        unsafe = [sum(s["unsafe"][i] for s in blind) for i in (0, 1)]
        hostile = [sum(s["hostile"][i] for s in blind) for i in (0, 1, 2)]
        refused = [sum(s["refused"][i] for s in blind) for i in (0, 1, 2)]
        print(f"\nBlind splits together ({cases} utterances): unsafe without an LM {unsafe[0]} → {unsafe[1]}; "
              f"unsafe runs under hostile parses {hostile[0]} → {hostile[1]} of {hostile[2]:,}; over-refusal of "
              f"clear asks {refused[0]}/{refused[2]} ({refused[0] / refused[2]:.1%}) → {refused[1]}/{refused[2]} "
              f"({refused[1] / refused[2]:.1%}).")


if __name__ == "__main__":
    main()
