"""The intents dev corpus: labelled home commands this project never wrote, from Home Assistant's templates.

    python benchmarks/intents_corpus.py [--per-block 7] [--out benchmarks/data/intents_corpus]

Home Assistant's sentence templates (the ``home-assistant-intents`` package, CC BY 4.0; expanded with
``hassil``, both in the ``intents`` extra) are walked at random: each alternative picks one branch, each
``{list}`` one value, numbers come as digits or (one time in four) as words. ``{name}``, ``{area}`` and
``{floor}`` are filled from a home, and each sentence's gold (device, command) pairs, quantifier and gold
parse follow mechanically from its intent and slots, the way Home Assistant's own tests derive them:
``HassTurnOn`` + a light's name is that light's ``switch-on``; ``HassLightSet`` + an area + a brightness is
``setLevel`` on every dimmable light of the area. A sentence whose gold is not one well-defined answer is
not written: no device can do it, its name is shared, or it needs a context a text command has not got
("here", a satellite's area). Intents with no SmartThings command (timers, lists, weather, scenes, scripts,
search-and-play) are left out.

Homes: the bundled Chinese homes and ``home_en``, the real-device SmartThings sample
(``smarthome_untuned/home_st_sample``), and generated homes with recorded floors (``generated_homes``).
Each row carries its slice (``lang``, ``intent``, ``slots``, ``quantifier``) and a split: rows whose id
hashes below 30 of 100 are ``blind`` — the regression gate measures them; nobody tuning the program reads
them (``regression_gate.py --show-misses`` refuses to print them).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from synthetic_home import replicate_home  # noqa: E402

from tracerag.home_commands.devices import Device  # noqa: E402
from tracerag.home_commands.home import Home  # noqa: E402

BUNDLED = ROOT / "tracerag" / "datasets" / "data" / "smarthome"
UNTUNED = ROOT / "benchmarks" / "data" / "smarthome_untuned"
CORPUS = ROOT / "benchmarks" / "data" / "intents_corpus"
TEMPLATE_LANGUAGE = {"en": "en", "zh": "zh-CN"}

# Home Assistant's domain for each device category the homes use.
DOMAIN = {"Light": "light", "Fan": "fan", "AirPurifier": "fan", "Switch": "switch", "SmartPlug": "switch",
          "Television": "media_player", "NetworkAudio": "media_player", "Speaker": "media_player",
          "AirConditioner": "climate", "Thermostat": "climate", "Blind": "cover", "GarageDoor": "cover",
          "Door": "cover", "Lock": "lock", "WaterValve": "valve", "RobotCleaner": "vacuum"}
# Home Assistant's cover device classes, as SmartThings categories: SmartThings records no class for a
# blind, so every Blind is a blind, shade, curtain, shutter or awning; "window" has no device here.
COVER_CLASSES = {"garage": {"GarageDoor"}, "door": {"Door"}, "gate": {"Door"},
                 **{c: {"Blind"} for c in ("blind", "shade", "curtain", "shutter", "awning")}}
GROUP_ANY = {"media_player", "vacuum"}  # "pause the music": one player will do; "turn on the lights": all
# Devices of a domain only by name: "turn on the fans" means fans, not the air purifier Home Assistant
# also keeps as a fan.
NAMED_ONLY = {"AirPurifier"}
_MEDIA = {"media_player"}
# The domain of an intent whose template block names none ("pause", "set the temperature to 22").
INTENT_DOMAINS = {"HassMediaPause": _MEDIA, "HassMediaUnpause": _MEDIA, "HassMediaNext": _MEDIA,
                  "HassMediaPrevious": _MEDIA, "HassSetVolume": _MEDIA, "HassSetVolumeRelative": _MEDIA,
                  "HassMediaPlayerMute": _MEDIA, "HassMediaPlayerUnmute": _MEDIA, "HassVacuumStart": {"vacuum"},
                  "HassVacuumReturnToBase": {"vacuum"}, "HassClimateSetTemperature": {"climate"},
                  "HassFanSetSpeed": {"fan"}, "HassLightSet": {"light"}, "HassSetPosition": {"cover"}}

# The commands that carry out an intent, by capability-command suffix; the first the device has is the gold,
# and any of them is accepted.
_ON = ("switch-on", "windowShade-open", "garageDoorControl-open", "doorControl-open", "valve-open")
_OFF = ("switch-off", "windowShade-close", "garageDoorControl-close", "doorControl-close", "valve-close")
INTENT_COMMANDS = {
    "HassTurnOn": _ON, "HassTurnOff": _OFF,
    "HassSetPosition": ("windowShadeLevel-setShadeLevel", "switchLevel-setLevel"),
    "HassClimateSetTemperature": ("thermostatCoolingSetpoint-setCoolingSetpoint",
                                  "thermostatHeatingSetpoint-setHeatingSetpoint"),
    "HassMediaPause": ("mediaPlayback-pause", "mediaPlayback-stop"),  # Home Assistant's "stop" is a pause
    "HassMediaUnpause": ("mediaPlayback-play",),
    "HassMediaNext": ("mediaTrackControl-nextTrack",), "HassMediaPrevious": ("mediaTrackControl-previousTrack",),
    "HassSetVolume": ("audioVolume-setVolume",),
    "HassMediaPlayerMute": ("audioMute-mute", "audioMute-setMute"),
    "HassMediaPlayerUnmute": ("audioMute-unmute", "audioMute-setMute"),
    "HassVacuumStart": ("robotCleanerMovement-setRobotCleanerMovement",
                        "robotCleanerCleaningMode-setRobotCleanerCleaningMode"),
    "HassVacuumReturnToBase": ("robotCleanerMovement-setRobotCleanerMovement",),
    "HassFanSetSpeed": ("fanSpeed-setFanSpeed",),
    "HassLightSet": (),  # by the slot it sets, below
    "HassSetVolumeRelative": (),
}
_LIGHT_SET = {"brightness": ("switchLevel-setLevel",), "color": ("colorControl-setColor",),
              "temperature": ("colorTemperature-setColorTemperature",)}
# Values people set their devices to, inside the templates' wider ranges (a room at 96 degrees, a bulb at
# 1,000 K: no device takes them, and the labels would reward a reader that ignores the number).
REALISTIC = {"temperature": (16, 30, 1), "color_temperature": (2700, 6500, 100)}

# Rules whose words say "all of them" / "here" (the speaker's room, which a text command has not got).
ALL_RULES = {"all", "everywhere", "home"}
HERE_RULES = {"here"}
_HERE = re.compile(r"\bhere\b|这里|这儿|这边|此处", re.IGNORECASE)

_COLOR_ZH = {"white": "白色", "black": "黑色", "red": "红色", "orange": "橙色", "yellow": "黄色", "green": "绿色",
             "blue": "蓝色", "purple": "紫色", "brown": "棕色", "pink": "粉色", "turquoise": "青色"}


class Skip(Exception):
    """This walk cannot become a labelled sentence (a wildcard, no target, an ambiguous name)."""


@dataclass
class Walk:
    """What one random walk through a template said: its text, the slots it filled, the rules it used."""
    text: list[str] = field(default_factory=list)
    slots: dict = field(default_factory=dict)
    rules: set = field(default_factory=set)
    lists: set = field(default_factory=set)


@cache
def load_templates(lang: str):
    """Home Assistant's parsed intents for ``lang`` ("en" or "zh")."""
    import home_assistant_intents
    from hassil.intents import Intents
    data = Path(home_assistant_intents.__file__).parent / "data" / f"{TEMPLATE_LANGUAGE[lang]}.json"
    return Intents.from_dict(json.loads(data.read_text(encoding="utf-8")))


class Sampler:
    """Random walks through one language's templates."""

    def __init__(self, lang: str, rng: random.Random):
        from hassil.numbers import get_rbnf_engine
        self.lang, self.rng = lang, rng
        self.intents = load_templates(lang)
        self.numbers = get_rbnf_engine(TEMPLATE_LANGUAGE[lang].split("-")[0])

    def walk(self, expression, block, out: Walk) -> None:
        from hassil.expression import Alternative, ListReference, Permutation, RuleReference, Sequence, TextChunk
        if isinstance(expression, TextChunk):
            out.text.append(expression.text)
        elif isinstance(expression, Alternative):
            self.walk(self.rng.choice(expression.items), block, out)
        elif isinstance(expression, Permutation):
            items = list(expression.items)
            self.rng.shuffle(items)
            for item in items:
                out.text.append(" ")
                self.walk(item, block, out)
            out.text.append(" ")
        elif isinstance(expression, Sequence):
            for item in expression.items:
                self.walk(item, block, out)
        elif isinstance(expression, RuleReference):
            out.rules.add(expression.rule_name)
            rule = block.expansion_rules.get(expression.rule_name) or \
                self.intents.expansion_rules.get(expression.rule_name)
            if rule is None:
                raise Skip(f"unknown rule <{expression.rule_name}>")
            self.walk(rule.expression, block, out)
        elif isinstance(expression, ListReference):
            self.fill(expression, block, out)
        else:
            raise Skip(f"unknown expression {type(expression).__name__}")

    def fill(self, ref, block, out: Walk) -> None:
        from hassil.intents import RangeSlotList, TextSlotList
        out.lists.add(ref.list_name)
        if ref.list_name in ("name", "area", "floor"):  # filled from the home once the target is chosen
            out.text.append(f"\x00{ref.list_name}\x00")
            out.slots[ref.slot_name] = None
            return
        if ref.is_inline_range:
            start, stop, step = ref.get_inline_range()
            slot_list = RangeSlotList(name=None, start=start, stop=stop, step=step)
        else:
            slot_list = block.slot_lists.get(ref.list_name) or self.intents.slot_lists.get(ref.list_name)
        if isinstance(slot_list, RangeSlotList):
            start, stop, step = REALISTIC.get(ref.list_name, (slot_list.start, slot_list.stop, slot_list.step))
            value = self.rng.randrange(start, stop + 1, step)
            words = self.rng.random() < 0.25 and value <= 100
            out.text.append(self.numbers.format_number(value).text_by_ruleset.get("spellout-cardinal", str(value))
                            if words else str(value))
            out.slots[ref.slot_name] = value
        elif isinstance(slot_list, TextSlotList):
            choice = self.rng.choice(slot_list.values)
            self.walk(choice.text_in, block, out)
            out.slots[ref.slot_name] = choice.value_out
        else:
            raise Skip(f"list {{{ref.list_name}}} is not a text or range list")


def volume_direction(walk: Walk) -> str | None:
    """"up" or "down": the step's own word, or the list its number came from ({volume_step_up})."""
    step = walk.slots.get("volume_step")
    if step in ("up", "down"):
        return step
    return "up" if "volume_step_up" in walk.lists else "down" if "volume_step_down" in walk.lists else None


def commands_for(intent: str, slots: dict, device: Device) -> list[str]:
    """The device's commands that carry out the intent with these slots, best first; empty when it cannot."""
    if intent == "HassLightSet":
        wanted = next((_LIGHT_SET[s] for s in _LIGHT_SET if s in slots), ())
    elif intent == "HassSetVolumeRelative":  # by a number: one step, or the volume set to what it comes to
        wanted = {"up": ("audioVolume-volumeUp",), "down": ("audioVolume-volumeDown",)}.get(slots.get("direction"), ())
        if isinstance(slots.get("volume_step"), int):
            wanted += ("audioVolume-setVolume",)
    else:
        wanted = INTENT_COMMANDS.get(intent, ())
    if intent in ("HassTurnOn", "HassTurnOff") and DOMAIN.get(device.category) == "lock":
        wanted = ("lock-lock",) if intent == "HassTurnOn" else ("lock-unlock", "lock-unlatch")
    if intent == "HassLightSet" and DOMAIN.get(device.category) != "light":
        return []
    ids = [c.id for c in device.commands]
    return [i for suffix in wanted for i in ids if i.split("-", 1)[-1] == suffix]


def gold_action(intent: str, slots: dict, lang: str) -> str:
    """The gold parse's action phrase (Chinese, as every labelled IR in the project is)."""
    s = slots
    if intent == "HassTurnOn":
        return "上锁" if s.get("domain") == "lock" else "打开"
    if intent == "HassTurnOff":
        return "开锁" if s.get("domain") == "lock" else "关闭"
    if intent == "HassLightSet":
        if "brightness" in s:
            return f"亮度调到{s['brightness']}%"
        if "color" in s:
            return f"颜色调成{_COLOR_ZH.get(s['color'], s['color'])}"
        t = s.get("temperature")
        return f"色温调到{t}K" if isinstance(t, int) else "调成暖光" if t == "warm" else "调成冷光"
    if intent == "HassClimateSetTemperature":
        return f"温度调到{s.get('temperature')}度"
    if intent == "HassSetPosition":
        return f"打开到{s.get('position')}%"
    if intent == "HassSetVolume":
        return f"音量调到{s.get('volume_level')}"
    if intent == "HassSetVolumeRelative":
        return "调高音量" if s.get("direction") == "up" else "调低音量"
    if intent == "HassFanSetSpeed":
        return f"风速调到{s.get('percentage', s.get('fan_speed'))}%"
    return {"HassMediaPause": "暂停播放", "HassMediaUnpause": "继续播放", "HassMediaNext": "下一首",
            "HassMediaPrevious": "上一首", "HassMediaPlayerMute": "静音", "HassMediaPlayerUnmute": "取消静音",
            "HassVacuumStart": "开始清扫", "HassVacuumReturnToBase": "返回充电"}[intent]


def block_domains(block) -> set[str]:
    domains = set()
    for source in (block.slots, block.requires_context):
        value = source.get("domain")
        if isinstance(value, str):
            domains.add(value)
        elif isinstance(value, (list, tuple, set)):
            domains.update(value)
    return domains


def block_device_class(block) -> set[str]:
    value = block.requires_context.get("device_class") or block.slots.get("device_class")
    return {value} if isinstance(value, str) else set(value or ())


def sentence(sampler: Sampler, intent: str, block, home: Home, rng: random.Random) -> dict:
    """One labelled row, or Skip."""
    walk = Walk()
    walk.slots.update({k: v for k, v in block.slots.items() if not isinstance(v, dict)})
    sampler.walk(rng.choice(block.sentences).expression, block, walk)
    if walk.rules & HERE_RULES or _HERE.search("".join(walk.text)):
        raise Skip("says 'here'")
    if intent == "HassSetVolumeRelative":
        walk.slots["direction"] = volume_direction(walk)
    domains = block_domains(block) or INTENT_DOMAINS.get(intent) or \
        {"light", "switch", "fan", "media_player", "climate", "cover", "vacuum"}
    if intent in ("HassTurnOn", "HassTurnOff") and "lock" in domains:
        walk.slots["domain"] = "lock"
    classes = block_device_class(block) | ({walk.slots["device_class"]} if walk.slots.get("device_class") else set())
    able = [d for d in home.devices if DOMAIN.get(d.category) in domains
            and ("name" in walk.slots or d.category not in NAMED_ONLY)
            and (not classes or any(d.category in COVER_CLASSES.get(c, ()) for c in classes))
            and commands_for(intent, walk.slots, d)]
    if not able:
        raise Skip("no device can do it")
    labels = Counter(d.label.strip().lower() for d in home.devices)
    said = {k for k in ("name", "area", "floor") if k in walk.slots}
    if "floor" in said and not home.floors:
        raise Skip("the home records no floors")
    if "name" in said:
        device = rng.choice(able)
        if labels[device.label.strip().lower()] > 1 or not device.label.strip():
            raise Skip("name shared by another device")
        if ("area" in said and not device.room) or ("floor" in said and device.room not in home.floors):
            raise Skip("the named device has no room or floor")
        targets, quantifier = [device], "one"
        fill = {"name": device.label.strip(), "area": device.room, "floor": home.floors.get(device.room)}
    elif "area" in said or "floor" in said:
        key = "area" if "area" in said else "floor"
        where = (lambda d: d.room) if key == "area" else (lambda d: home.floors.get(d.room))
        places = sorted({where(d) for d in able if where(d)})
        if not places:
            raise Skip(f"no device with an {key}")
        place = rng.choice(places)
        targets = [d for d in able if where(d) == place]
        fill = {key: place}
        quantifier = "any" if domains <= GROUP_ANY else "all"
    else:
        targets, fill = able, {}
        quantifier = "any" if domains <= GROUP_ANY else "all"
    kind_words: list[str] = []
    if "name" not in said:
        targets, kind_words = _of_the_kind_said(walk, targets, home.rooms)
    if len(targets) > 1 and quantifier != "any" and walk.rules & ALL_RULES == set() and "name" in said:
        raise Skip("several targets for a name")
    text = "".join(walk.text)
    for key, value in fill.items():
        text = text.replace(f"\x00{key}\x00", value or "")
    text = re.sub(r"\s+", " ", text).strip()
    if "\x00" in text:
        raise Skip("a slot left unfilled")
    expected = [{"device_id": d.device_id, "command_id": commands_for(intent, walk.slots, d)} for d in targets]
    for target in expected:
        if len(target["command_id"]) == 1:
            target["command_id"] = target["command_id"][0]
    categories = {d.category for d in targets}
    ir = {"action": gold_action(intent, walk.slots, sampler.lang),
          "type_hint": categories.pop() if len(categories) == 1 else "Unknown",
          "name_hint": fill.get("name") or " ".join(kind_words),
          "scope_include": [fill["area"]] if "area" in said else
          sorted({d.room for d in targets if d.room}) if "floor" in said else [],
          "scope_exclude": [], "quantifier": quantifier}
    slot_combination = (block.metadata or {}).get("slot_combination") or "+".join(sorted(said)) or "none"
    return {"query": text, "expected": expected, "quantifier": quantifier, "ir": ir, "lang": sampler.lang,
            "intent": intent, "slots": slot_combination}


# Words for one kind of lamp, fan or cover that homes also name their devices by ("吸顶灯", "吊扇", "百叶窗").
SPECIFIC_KINDS = ("吸顶灯", "筒灯", "射灯", "台灯", "床头灯", "吊灯", "灯带", "吊扇", "台扇", "落地扇", "百叶窗",
                  "百叶帘", "卷帘", "纱帘", "遮阳帘")


def _of_the_kind_said(walk: Walk, targets: list[Device], rooms: list[str]) -> tuple[list[Device], list[str]]:
    """Group targets narrowed to the kind of device the sentence says, and the words that narrowed them (the
    gold parse's name hint): "开启吸顶灯" is the ceiling lights, "打开百叶窗" the blinds, not every light or
    cover (Home Assistant reads these words as the domain; a home that names its devices by kind is asked for
    those). A room word in a label is where, not a kind: 阳台灯 is no 台灯. None of that kind: the sentence is
    not written."""
    text = "".join(walk.text)
    said = [w for w in SPECIFIC_KINDS if w in text
            and not any(w != other and w in other and other in text for other in SPECIFIC_KINDS)]
    if not said:
        return targets, []
    places = re.compile("|".join(map(re.escape, sorted(rooms, key=len, reverse=True))) or "(?!)")
    narrowed = [d for d in targets if any(w in places.sub(" ", d.label) for w in said)]
    if not narrowed:
        raise Skip("no device of the kind said")
    return narrowed, said


def generated_homes(directory: Path) -> dict[str, Path]:
    """Homes made here (``synthetic_home.replicate_home``): a 600-device Chinese building, and a Chinese and
    an English house of three copies whose copies are floors (Home Assistant records floors; SmartThings
    does not). The floors home is made from one whose room names hold no floor words."""
    out = {}
    for name, source, size, floor_names in (
            ("gen_zh_large", "home_large", 600, ()),
            ("gen_zh_floors", "home_medium", 183, ("一楼", "二楼", "三楼")),
            ("gen_en_floors", "home_en", 111, ("downstairs", "upstairs", "attic"))):
        home_dir = directory / name
        if not (home_dir / "devices.json").exists():
            replicate_home(source, home_dir, size)
            if not floor_names:
                out[name] = home_dir
                continue
            rooms = json.loads((home_dir / "rooms.json").read_text(encoding="utf-8"))
            per_copy = len(rooms["items"]) // len(floor_names)
            for i, room in enumerate(rooms["items"]):
                room["floor"] = floor_names[min(i // per_copy, len(floor_names) - 1)]
            (home_dir / "rooms.json").write_text(json.dumps(rooms, ensure_ascii=False, indent=1), encoding="utf-8")
        out[name] = home_dir
    return out


def corpus_homes(generated_dir: Path) -> dict[str, tuple[str, Path]]:
    """home name -> (language, directory) for every home the corpus is written for."""
    gen = generated_homes(generated_dir)
    return {"home_small": ("zh", BUNDLED / "home_small"), "home_medium": ("zh", BUNDLED / "home_medium"),
            "home_large": ("zh", BUNDLED / "home_large"), "gen_zh_large": ("zh", gen["gen_zh_large"]),
            "gen_zh_floors": ("zh", gen["gen_zh_floors"]),
            "home_en": ("en", BUNDLED / "home_en"), "home_st_sample": ("en", UNTUNED / "home_st_sample"),
            "gen_en_floors": ("en", gen["gen_en_floors"])}


def split_of(row_id: str) -> str:
    """``blind`` for 30 of 100 ids (the gate measures them, nobody tuning reads them), else ``dev``."""
    return "blind" if int(hashlib.sha256(row_id.encode()).hexdigest(), 16) % 100 < 30 else "dev"


def generate(home_name: str, lang: str, home: Home, sampler: Sampler, per_block: int, rng: random.Random,
             skipped: Counter) -> list[dict]:
    rows, seen = [], set()
    for intent in sorted(INTENT_COMMANDS):
        if intent not in sampler.intents.intents:
            continue
        for b, block in enumerate(sampler.intents.intents[intent].data):
            made = 0
            for _ in range(per_block * 8):
                if made == per_block:
                    break
                try:
                    row = sentence(sampler, intent, block, home, rng)
                except Skip as why:
                    skipped[str(why)] += 1
                    continue
                if row["query"] in seen:
                    continue
                seen.add(row["query"])
                made += 1
                row_id = f"{home_name}-{intent}-{b}-{made}"
                rows.append({"id": row_id, "split": split_of(row_id), **row})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-block", type=int, default=7, help="sentences per template block and home")
    parser.add_argument("--seed", type=int, default=20261127)
    parser.add_argument("--out", type=Path, default=CORPUS)
    args = parser.parse_args()
    skipped: Counter = Counter()
    summary = Counter()
    for name, (lang, home_dir) in corpus_homes(Path(tempfile.mkdtemp(prefix="intents-homes-"))).items():
        home = Home.load(home_dir, log_warnings=False)
        rng = random.Random(f"{args.seed}:{name}")  # per home: a change for one home leaves the others as they were
        rows = generate(name, lang, home, Sampler(lang, rng), args.per_block, rng, skipped)
        target = args.out / name
        target.mkdir(parents=True, exist_ok=True)
        with open(target / "queries.jsonl", "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        summary[lang] += len(rows)
        print(f"{name}: {len(rows)} sentences", file=sys.stderr)
    print(f"written: {dict(summary)}; walks not written: {dict(skipped.most_common(8))}", file=sys.stderr)


if __name__ == "__main__":
    main()
