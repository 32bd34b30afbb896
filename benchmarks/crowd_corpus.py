"""Crowd corpus: CommandRetrieval on crowd-sourced English commands nobody on the team wrote (HWU64).

    python benchmarks/crowd_corpus.py --source /work/crowd/hwu64 --out /tmp/crowd_corpus   # write queries.jsonl
    python benchmarks/crowd_corpus.py --source /work/crowd/hwu64 --evaluate [--show-misses] [--json out.json]

The sentences are HWU64 ("NLU-Evaluation-Data", Liu et al., IWSDS 2019; github.com/xliuhw/NLU-Evaluation-Data),
typed by Mechanical Turk workers and annotated with an intent and slots ("[house_place : living room]").
The upstream README releases the data under CC BY-SA 3.0; it is never stored in this repository: ``--source``
is a directory outside it holding ``trainset/<intent>.csv`` and ``testset/<intent>.csv`` of the KFold_1
cross-validation split (together the whole intent), semicolon-separated
``answerid;scenario;intent;answer_annotation;answer_from_anno;answer_from_user``.

Each row becomes one labelled query per home (the bundled ``home_en`` and the real SmartThings sample
``home_st_sample``), in the bundled smart-home format plus the slice fields ``lang``, ``intent`` (HWU's),
``slots`` and ``split``. The query is ``answer_from_anno`` as typed (wake words left in). The gold follows
mechanically from the intent and the slots, written from what a person would accept and independently of
how the library reads commands:

* operation: lightoff/lighton -> off/on; lightdim/lightup -> level_down/level_up, or set_level when a target
  number is said ("to forty percent"; "by twenty percent" stays relative); lightchange -> set_color for a
  colour, warmer/cooler/set_color_temperature for warm/cool/white, set_level for a brightness number, else
  the row is skipped; wemo_on/off -> on/off (SmartPlug or Switch); cleaning -> start (RobotCleaner);
  audio_volume_up/down -> volume_up/down or set_volume with a target number; volume_mute -> mute (media).
* targets: the devices of that kind in the room(s) ``house_place`` names (``PLACES``: a small table per
  home; whole-home words limit nothing; a place the home has not got, or the speaker's own room, skips
  the row), else every device of that kind; a ``device_type`` naming a device narrows to it. For cleaning
  the place is what to clean, not where the cleaner stands, so it limits nothing. The quantifier is
  "one" for one target, "all" for several, "any" for several media players (one player will do, as in the
  intents corpus) or "one light" of several.
* acceptable commands per target (``ACCEPT``); a target with none of them is left out, and a row left with
  no target is skipped. Every skip is counted with its reason.
* split: ``heldout`` when sha256("<intent>:<answerid>") % 100 < 50, else ``dev``: fixed before anything ran.
  ``--show-misses`` prints dev rows only; nobody tuning the program reads the held-out ones.

Evaluation is the regression gate's: ``evaluate_commands`` with the parse from
the rules (``none``) and the gold parse (``gold``), the local embedder, no LM; deterministic.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tracerag.home_commands.devices import Device  # noqa: E402
from tracerag.home_commands.home import Home  # noqa: E402

HOMES = {"home_en": ROOT / "tracerag" / "datasets" / "data" / "smarthome" / "home_en",
         "home_st_sample": ROOT / "benchmarks" / "data" / "smarthome_untuned" / "home_st_sample"}
INTENTS = ("iot_hue_lightoff", "iot_hue_lighton", "iot_hue_lightdim", "iot_hue_lightup", "iot_hue_lightchange",
           "iot_wemo_on", "iot_wemo_off", "iot_cleaning", "audio_volume_up", "audio_volume_down", "audio_volume_mute")
FOLDS = ("trainset", "testset")

# The kind of device each intent is about, and the categories of that kind.
KIND = {"iot_hue_lightoff": "light", "iot_hue_lighton": "light", "iot_hue_lightdim": "light",
        "iot_hue_lightup": "light", "iot_hue_lightchange": "light", "iot_wemo_on": "plug", "iot_wemo_off": "plug",
        "iot_cleaning": "cleaner", "audio_volume_up": "media", "audio_volume_down": "media",
        "audio_volume_mute": "media"}
CATEGORIES = {"light": {"Light"}, "plug": {"SmartPlug", "Switch"}, "cleaner": {"RobotCleaner"},
              "media": {"NetworkAudio", "Television", "Speaker"}}
GROUP_ANY = {"media"}  # "turn up the volume" with several players: any one of them will do

# Acceptable commands per operation, as "<capability>-<command>" of a device's main component, in order.
_STEP_LEVEL = ("statelessSwitchLevelStep-stepLevel", "switchLevel-setLevel")
_TEMPERATURE = ("statelessColorTemperatureStep-stepColorTemperatureByPercent", "colorTemperature-setColorTemperature")
_COLOR = ("colorControl-setColor", "colorControl-setHue")
ACCEPT = {
    "on": ("switch-on",), "off": ("switch-off",),
    "level_up": _STEP_LEVEL, "level_down": _STEP_LEVEL, "set_level": ("switchLevel-setLevel",),
    "set_color": _COLOR, "warmer": _TEMPERATURE, "cooler": _TEMPERATURE, "set_color_temperature": _TEMPERATURE,
    "volume_up": ("audioVolume-volumeUp", "audioVolume-setVolume"),
    "volume_down": ("audioVolume-volumeDown", "audioVolume-setVolume"),
    "set_volume": ("audioVolume-setVolume",), "mute": ("audioMute-mute", "audioMute-setMute"),
    "start": ("robotCleanerMovement-setRobotCleanerMovement", "*-start"),
}
# "white" is a colour temperature as much as a colour: either kind of command will do.
WHITE_ACCEPTS = _TEMPERATURE + _COLOR
ACTION = {"on": "turn on", "off": "turn off", "level_up": "brighten", "level_down": "dim",
          "set_level": "set the brightness", "set_color": "set the colour",
          "set_color_temperature": "set the colour temperature", "warmer": "make warmer", "cooler": "make cooler",
          "volume_up": "turn the volume up", "volume_down": "turn the volume down", "set_volume": "set the volume",
          "mute": "mute", "start": "start cleaning"}

# Places the crowd named, as each home's rooms. Whole-home words limit nothing; a place a home lacks (and the
# speaker's own room: "this room", "here") is not in the table, and its rows are skipped for that home.
HOME_WIDE = {"house", "home", "my house", "the house", "apartment", "flat", "whole house", "interior"}
PLACES = {
    "home_en": {
        "living room": ["Living Room"], "living rooms": ["Living Room"], "living room's": ["Living Room"],
        "front room": ["Living Room"], "kitchen": ["Kitchen"], "dining room": ["Dining Room"],
        "dining area": ["Dining Room"], "bedroom": ["Master Bedroom"], "bed room": ["Master Bedroom"],
        "master bedroom": ["Master Bedroom"], "master's bedroom": ["Master Bedroom"],
        "bedrooms": ["Kids Room", "Master Bedroom"], "my son's room": ["Kids Room"], "son's room": ["Kids Room"],
        "kids room": ["Kids Room"], "playroom": ["Kids Room"], "office": ["Office"], "study room": ["Office"],
        "garage": ["Garage"], "porch": ["Entryway"], "front porch": ["Entryway"], "entryway": ["Entryway"],
        "laundry room": ["Laundry Room"],
    },
    "home_st_sample": {},  # SmartThings records no rooms for this home
}
# The speaker's own room, which a typed command has not got.
SPEAKERS_ROOM = {"room", "the room", "this room", "my room", "here", "corner"}
# house_place values that name a kind of light, not a place ("lower the overhead lights", always plural here).
PLACE_AS_NAME = {"overhead": "ceiling lights", "ceiling": "ceiling lights"}

# Words of a device_type slot that say the kind, not which device ("wemo plug socket", "all lights").
GENERIC = {
    "light": {"light", "lights", "lighting", "lightning", "bulb", "bulbs"},
    "plug": {"wemo", "plug", "plugs", "socket", "sockets", "outlet", "outlets", "smart", "power", "point", "sps",
             "okug", "new", "switch"},
    "cleaner": {"vacuum", "vacuums", "cleaner", "robot", "robotic", "roomba", "iroomba", "irobot", "robo", "vac",
                "bot", "vacuuming"},
    "media": {"music", "player", "system", "speaker", "speakers", "radio", "audio", "sound", "media"},
}
FUNCTION_WORDS = {"the", "a", "an", "my", "all", "every", "of", "on", "in", "to", "one", "this", "that", "next"}
SYNONYMS = {"overhead": "ceiling", "television": "tv"}

COLOURS = {"red", "blue", "green", "yellow", "orange", "pink", "purple", "black", "lavender", "violet", "brown",
           "magenta", "cyan", "turquoise", "teal", "gold", "pinkish", "redder", "reddish", "yellowish", "bluish",
           "greenish", "ish"}
NUMBER_WORDS = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
                "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "half"}
_NUMBER = r"(?:\d+|" + "|".join(sorted(NUMBER_WORDS)) + r")"
_TARGET_IN_TEXT = re.compile(rf"\b(?:to|at)\s+(?:level\s+)?{_NUMBER}\b")
_SLOT = re.compile(r"\[\s*(\w+)\s*:\s*([^\]]*?)\s*\]")


class Skip(Exception):
    """This row has no well-defined gold in this home."""


def split_of(intent: str, answer_id: str) -> str:
    return "heldout" if int(hashlib.sha256(f"{intent}:{answer_id}".encode()).hexdigest(), 16) % 100 < 50 else "dev"


def read_source(source: Path) -> list[dict]:
    """Every row of the intents, in file order (trainset, then testset), with its slots parsed."""
    rows = []
    for intent in INTENTS:
        for fold in FOLDS:
            path = source / fold / f"{intent}.csv"
            with open(path, newline="", encoding="utf-8") as f:
                for n, row in enumerate(csv.DictReader(f, delimiter=";", quotechar='"'), start=2):
                    if None in row or len(row) != 6:
                        raise SystemExit(f"{path}:{n}: not six fields")
                    slots = [(k, v.strip().lower()) for k, v in _SLOT.findall(row["answer_annotation"])]
                    rows.append({"intent": intent, "fold": fold, "answerid": row["answerid"].strip(),
                                 "query": row["answer_from_anno"], "slots": slots})
    return rows


def _words(text: str) -> list[str]:
    """Lower-case words, possessives dropped, synonyms applied."""
    out = []
    for w in re.findall(r"[a-z0-9']+", text.lower()):
        w = re.sub(r"'s$|'$", "", w)
        out.append(SYNONYMS.get(w, w))
    return out


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def has_number(text: str) -> bool:
    return any(w.isdigit() or w in NUMBER_WORDS for w in _words(text))


def operation_of(intent: str, slots: list[tuple[str, str]], text: str) -> tuple[str, tuple[str, ...] | None]:
    """(operation, the acceptable commands when they differ from ``ACCEPT``); Skip when the row names none."""
    amounts = [v for k, v in slots if k == "change_amount"]
    amount = amounts[-1] if amounts else None

    def target_number() -> bool:
        """A number said as the value to reach: "to forty percent", "at sixty", "to level two"; not "by half"
        or "decrease twenty percent" (an amount to change by)."""
        if amount is not None:
            return has_number(amount) and (amount.startswith(("to ", "at ")) or bool(
                re.search(rf"\b(?:to|at)\s+(?:level\s+)?{re.escape(amount)}\b", text.lower())))
        return bool(_TARGET_IN_TEXT.search(text.lower()))

    if intent == "iot_hue_lightoff":
        return "off", None
    if intent == "iot_hue_lighton":
        return "on", None
    if intent in ("iot_hue_lightdim", "iot_hue_lightup"):
        return ("set_level" if target_number() else
                "level_down" if intent == "iot_hue_lightdim" else "level_up"), None
    if intent == "iot_hue_lightchange":
        colours = [v for k, v in slots if k == "color_type"]
        said = _words(colours[-1]) if colours else _words(text)  # the colour asked for is the last one named
        if any(w in COLOURS for w in said):
            return "set_color", None
        if "white" in said:
            return "set_color_temperature", WHITE_ACCEPTS
        if any(w in ("warmer", "cooler") for w in said) or ("more" in _words(text) and {"warm", "cool"} & set(said)):
            return ("warmer" if {"warmer", "warm"} & set(said) else "cooler"), None
        if {"warm", "cool", "cold"} & set(said):
            return "set_color_temperature", None
        if amount is not None and has_number(amount):
            return "set_level", None
        raise Skip("lightchange names no colour, colour temperature or brightness number")
    if intent in ("iot_wemo_on", "iot_wemo_off"):
        return ("on" if intent == "iot_wemo_on" else "off"), None
    if intent == "iot_cleaning":
        return "start", None
    if intent in ("audio_volume_up", "audio_volume_down"):
        return ("set_volume" if target_number() else
                "volume_up" if intent == "audio_volume_up" else "volume_down"), None
    if intent == "audio_volume_mute":
        return "mute", None
    raise ValueError(intent)


def accepted_commands(device: Device, wanted: tuple[str, ...]) -> list[str]:
    """The device's main-component commands among ``wanted``, in the order wanted."""
    own = [c.id for c in device.commands if c.id.startswith("main-")]
    out = []
    for suffix in wanted:
        for command_id in own:
            rest = command_id.split("-", 1)[1]
            if (rest == suffix or (suffix.startswith("*-") and rest.split("-", 1)[-1] == suffix[2:])) \
                    and command_id not in out:
                out.append(command_id)
    return out


def _named(devices: list[Device], name: str, kind: str) -> tuple[list[Device], bool]:
    """The devices a device_type slot names, and whether it named any at all ("wemo plug socket" names the
    kind, not a device: every device stays)."""
    words = [w for w in _words(name) if w not in FUNCTION_WORDS]
    distinctive = [_stem(w) for w in words if w not in GENERIC[kind]]
    if not distinctive:
        return devices, False
    generic = GENERIC[kind] | FUNCTION_WORDS

    def label_words(d: Device) -> set[str]:
        return {_stem(w) for w in _words(d.label) if w not in generic}

    said = set(distinctive) | {_stem(w) for w in words}
    matched = [d for d in devices if set(distinctive) <= label_words(d)
               or (label_words(d) and label_words(d) <= said)]
    return matched, True


def gold_for_home(row: dict, home_name: str, home: Home) -> dict:
    """The labelled query for one home, or Skip with the reason."""
    intent, slots, kind = row["intent"], row["slots"], KIND[row["intent"]]
    operation, accepts = operation_of(intent, slots, row["query"])
    accepts = accepts or ACCEPT[operation]
    devices = [d for d in home.devices if d.category in CATEGORIES[kind]]
    if not devices:
        raise Skip(f"no {kind} device in the home")

    names = [v for k, v in slots if k == "device_type"]
    places = [v for k, v in slots if k == "house_place"]
    table = PLACES[home_name]
    # a device_type that begins with a place ("living room speakers") says where, then which
    for i, name in enumerate(names):
        for place in sorted(table, key=len, reverse=True):
            if name.startswith(place + " "):
                places.append(place)
                names[i] = name[len(place) + 1:]
                break
    names += [PLACE_AS_NAME[p] for p in places if p in PLACE_AS_NAME]
    places = [p for p in places if p not in PLACE_AS_NAME]

    rooms: list[str] = []
    if kind != "cleaner":  # "vacuum the kitchen": where to clean, not where the cleaner is
        if len(set(places)) > 1:
            raise Skip("several places named")
        for place in places:
            if place in HOME_WIDE:
                continue
            if place in SPEAKERS_ROOM:
                raise Skip("place is the speaker's own room")
            if place not in table:
                raise Skip("place not in the home")
            rooms = sorted(table[place])
    targets = [d for d in devices if not rooms or d.room in rooms]
    if not targets:
        raise Skip(f"no {kind} device in that place")

    name_hint, one_of = [], False
    for name in names:
        narrowed, named = _named(targets, name, kind)
        if not named:
            one_of = one_of or _words(name)[:1] == ["one"]  # "turn off one light in my bedroom"
            continue
        if not narrowed:
            raise Skip("named device not in the home")
        plural = _words(name)[-1].endswith("s") if _words(name) else False
        if len(narrowed) > 1 and kind not in GROUP_ANY and not plural:
            raise Skip("name matches several devices")
        targets = narrowed
        name_hint.append(name)

    expected = []
    for d in targets:
        commands = accepted_commands(d, accepts)
        if commands:
            expected.append({"device_id": d.device_id, "command_id": commands[0] if len(commands) == 1 else commands})
    if not expected:
        raise Skip("no target has an acceptable command")
    quantifier = "one" if len(expected) == 1 else "any" if kind in GROUP_ANY or one_of else "all"
    kept = {e["device_id"] for e in expected}
    categories = {d.category for d in targets if d.device_id in kept}
    ir = {"operation": operation, "action": ACTION[operation],
          "type_hint": categories.pop() if len(categories) == 1 else "Unknown",
          "name_hint": " ".join(name_hint), "scope_include": rooms, "scope_exclude": [], "quantifier": quantifier}
    slot_names = "+".join(sorted({k for k, _ in slots})) or "none"
    answer = row["answerid"] if row["answerid"] != "null" else f"null{row['null_index']}"
    return {"id": f"{home_name}-{intent}-{answer}", "query": row["query"], "expected": expected,
            "quantifier": quantifier, "ir": ir, "lang": "en", "intent": intent, "slots": slot_names,
            "split": row["split"], "source": f"hwu64/{row['fold']}", "answerid": row["answerid"]}


def build(source: Path, out: Path) -> dict:
    """Write ``out/<home>/queries.jsonl``; return the counts written and skipped."""
    rows = read_source(source)
    nulls = Counter()
    for row in rows:  # a few upstream rows have no answer id: numbered within their intent
        row["split"] = split_of(row["intent"], row["answerid"])
        if row["answerid"] == "null":
            nulls[row["intent"]] += 1
            row["null_index"] = nulls[row["intent"]]
    summary = {"source_rows": Counter(r["intent"] for r in rows), "written": {}, "skipped": {}}
    for home_name, home_dir in HOMES.items():
        home = Home.load(home_dir, log_warnings=False)
        written, skipped, seen = [], Counter(), set()
        for row in rows:
            try:
                labelled = gold_for_home(row, home_name, home)
            except Skip as why:
                skipped[(row["intent"], str(why))] += 1
                continue
            if labelled["id"] in seen:
                raise SystemExit(f"repeated id {labelled['id']}")
            seen.add(labelled["id"])
            written.append(labelled)
        target = out / home_name
        target.mkdir(parents=True, exist_ok=True)
        with open(target / "queries.jsonl", "w", encoding="utf-8") as f:
            for labelled in written:
                f.write(json.dumps(labelled, ensure_ascii=False) + "\n")
        summary["written"][home_name] = Counter((r["intent"], r["split"]) for r in written)
        summary["skipped"][home_name] = skipped
    return summary


def print_build(summary: dict, file=sys.stderr) -> None:
    print(f"source rows: {sum(summary['source_rows'].values())}", file=file)
    for home_name, written in summary["written"].items():
        print(f"\n{home_name}: {sum(written.values())} queries written "
              f"({sum(summary['skipped'][home_name].values())} rows skipped)", file=file)
        print(f"  {'intent':22} {'source':>6} {'dev':>5} {'held':>5} {'skip':>5}", file=file)
        for intent in INTENTS:
            skips = sum(n for (i, _), n in summary["skipped"][home_name].items() if i == intent)
            print(f"  {intent:22} {summary['source_rows'][intent]:6} {written[(intent, 'dev')]:5} "
                  f"{written[(intent, 'heldout')]:5} {skips:5}", file=file)
        reasons = Counter()
        for (_, why), n in summary["skipped"][home_name].items():
            reasons[why] += n
        for why, n in reasons.most_common():
            print(f"  skipped {n:4}  {why}", file=file)


def _load(out: Path, home_name: str, home: Home):
    """The labelled queries of one home, read and checked by the project's loader (targets against the home)."""
    from tracerag.datasets.smarthome import load_queries
    path = out / home_name / "queries.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return load_queries(path, home_name, devices=home), {r["id"]: r for r in rows}


def measure(out: Path) -> dict:
    """Per-query results per mode, the regression gate's way."""
    from regression_gate import MODES

    from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
    from tracerag.commands.evaluation import evaluate_commands
    from tracerag.embedding.embedders import LocalUSEEmbedder
    from tracerag.embedding.embedding_cache import CachedEmbedder

    embedder = CachedEmbedder(LocalUSEEmbedder(), Path(tempfile.gettempdir()) / "tracerag-bench-cache.sqlite")
    queries_by_home, rows_by_id = {}, {}
    for home_name, home_dir in HOMES.items():
        queries, rows = _load(out, home_name, Home.load(home_dir, log_warnings=False))
        queries_by_home[home_dir] = queries
        rows_by_id.update(rows)
    indexes = build_indexes(list(queries_by_home), embedder)
    measured = {}
    for mode in MODES:
        program = CommandRetrieval(indexes, ir_source=mode)
        report = evaluate_commands(program, queries_by_home, dataset="crowd", progress=False)
        measured[mode] = [{"id": r["id"], "home": r["home"], "query": r["query"], "quantifier": r["quantifier"],
                           "intent": rows_by_id[r["id"]]["intent"], "split": rows_by_id[r["id"]]["split"],
                           "recall": r["recall"], "bulk_precision": r["bulk_precision"], "ir": r["ir"],
                           "returned": r["returned"][:3], "expected": r["expected"][:3]}
                          for r in report["per_query"]]
    return measured


def figures(measured: dict) -> dict:
    """{view: {slice: {mode: figures}}}: split × intent, split × home, split."""
    from regression_gate import _figures
    views = {"split x intent": lambda r: f"{r['split']} {r['intent']}",
             "split x home": lambda r: f"{r['split']} {r['home']}", "split": lambda r: r["split"]}
    out = {}
    for view, key in views.items():
        for mode, rows in measured.items():
            groups = defaultdict(list)
            for r in rows:
                groups[key(r)].append(r)
            for name, group in groups.items():
                out.setdefault(view, {}).setdefault(name, {})[mode] = _figures(group)
    return {view: dict(sorted(slices.items())) for view, slices in out.items()}


def print_figures(figs: dict) -> None:
    def cell(f):
        bulk = "—" if f["bulk_precision"] is None else f"{f['bulk_precision']:.3f}"
        return f"{f['recall@10']:.3f} / {bulk:>5} / {f['plans']:.2f}"

    for view, slices in figs.items():
        print(f"\n{view}: recall@10 / bulk precision / share answered with a plan")
        print(f"  {'slice':34} {'n':>4}   {'no LM (rules)':24} {'gold parse':24}")
        for name, modes in slices.items():
            print(f"  {name:34} {modes['none']['n']:4}   {cell(modes['none']):24} {cell(modes['gold']):24}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="directory of trainset/ and testset/ csv files")
    parser.add_argument("--out", type=Path, help="write <home>/queries.jsonl here (with --evaluate: a temp dir)")
    parser.add_argument("--evaluate", action="store_true", help="build in a temp dir and run CommandRetrieval")
    parser.add_argument("--show-misses", action="store_true", help="print the dev rows missed without an LM")
    parser.add_argument("--json", type=Path, help="write the figures (and the build counts) here")
    args = parser.parse_args()
    if not args.evaluate and args.out is None:
        parser.error("give --out, or --evaluate")
    out = args.out or Path(tempfile.mkdtemp(prefix="crowd-corpus-"))
    summary = build(args.source, out)
    print_build(summary)
    if not args.evaluate:
        print(f"\nwritten to {out}", file=sys.stderr)
        return
    measured = measure(out)
    figs = figures(measured)
    print_figures(figs)
    if args.show_misses:
        print("\ndev misses without an LM:")
        for r in measured["none"]:
            if r["split"] == "dev" and (r["recall"] < 1 or (r["bulk_precision"] or 1) < 1):
                print(json.dumps({k: r[k] for k in ("id", "query", "recall", "bulk_precision", "ir", "returned",
                                                    "expected")}, ensure_ascii=False))
    if args.json:
        counts = {"source_rows": dict(summary["source_rows"]),
                  "written": {h: {f"{i} {s}": n for (i, s), n in sorted(c.items())}
                              for h, c in summary["written"].items()},
                  "skipped": {h: {f"{i}: {why}": n for (i, why), n in sorted(c.items())}
                              for h, c in summary["skipped"].items()}}
        args.json.write_text(json.dumps({"figures": figs, "counts": counts}, ensure_ascii=False, indent=1),
                             encoding="utf-8")


if __name__ == "__main__":
    main()
