"""A template first pass for CommandRetrieval: Home Assistant's own matcher reads the utterance.

``hassil`` matches the utterance against the ``home-assistant-intents`` sentence templates (en, zh-CN; the
``intents`` extra) with the slot lists filled from the home, as Home Assistant fills them: every device
label is a ``{name}`` (with its domain as context, so a template that needs a light takes only lights),
every room an ``{area}``, every floor the home records a ``{floor}``. A match (intent + slots) becomes the
QueryIR the intents corpus derives as its gold parse from the same intent + slots (``intents_corpus``:
``gold_action``, the domains of the template block, the devices able to do it): the action phrase, the
name hint, the rooms, the kind of device and the quantifier. No match, an intent with no SmartThings
command, or a match no device of the home can carry out: ``None``, and the rule parser reads it as today.

Measured by ``bench_template_pass.py``; not part of the library (BENCHMARKS.md says why).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from intents_corpus import (  # noqa: E402
    _HERE,
    COVER_CLASSES,
    DOMAIN,
    GROUP_ANY,
    INTENT_COMMANDS,
    INTENT_DOMAINS,
    NAMED_ONLY,
    Skip,
    Walk,
    _of_the_kind_said,
    block_device_class,
    block_domains,
    commands_for,
    gold_action,
    load_templates,
)

from tracerag.home_commands.devices import Device  # noqa: E402
from tracerag.home_commands.home import Home  # noqa: E402
from tracerag.signatures.query_ir import QueryIR  # noqa: E402

_CJK = re.compile(r"[\u3400-\u9fff]")
# The domains a template that names none may mean (as the corpus reads such a block).
_ANY_DOMAIN = {"light", "switch", "fan", "media_player", "climate", "cover", "vacuum"}
# Home Assistant's cover device class of each SmartThings cover category (the first class the corpus maps
# to it): what a template's ``requires_context: device_class`` is checked against.
_COVER_CLASS = {category: cls for cls, categories in reversed(list(COVER_CLASSES.items())) for category in categories}


def language_of(utterance: str) -> str:
    """"zh" for an utterance with Chinese characters, else "en" (the two template languages read here)."""
    return "zh" if _CJK.search(utterance) else "en"


@cache
def command_intents(lang: str):
    """The language's templates cut to the intents that map to a SmartThings command (fewer to try).

    A block that takes its area from the speaker's satellite ("turn on the lights", ``requires_context:
    area``) is kept without that requirement: a text command has no satellite, and the corpus reads such a
    sentence as the home's devices of that kind (its gold parse), so the pass reads it the same way."""
    from hassil.intents import Intent, Intents

    full = load_templates(lang)
    intents = {}
    for name, intent in full.intents.items():
        if name in INTENT_COMMANDS:
            data = [replace(block, requires_context={k: v for k, v in block.requires_context.items()
                                                     if k not in ("area", "floor")})
                    for block in intent.data]
            intents[name] = Intent(name=name, data=data)
    return Intents(language=full.language, intents=intents, slot_lists=full.slot_lists,
                   expansion_rules=full.expansion_rules, skip_words=full.skip_words, settings=full.settings)


@dataclass(frozen=True)
class TemplateMatch:
    """What the matcher read: the intent, its slot values, and the template block that matched."""
    intent: str
    slots: dict
    block: object


class TemplatePass:
    """Home Assistant's matcher over one home: ``ir(utterance)`` is a QueryIR, or None (the rules read it)."""

    def __init__(self, home: Home):
        from hassil.intents import TextSlotList

        self.home = home
        self.by_label: dict[str, list[Device]] = {}
        for device in home.devices:
            if device.label.strip():
                self.by_label.setdefault(device.label.strip(), []).append(device)
        names = []
        for label, devices in self.by_label.items():
            context = {"domain": DOMAIN.get(devices[0].category, devices[0].category.lower())}
            if devices[0].category in _COVER_CLASS:
                context["device_class"] = _COVER_CLASS[devices[0].category]
            names.append((label, label, context))
        self.slot_lists = {"name": TextSlotList.from_tuples(names, allow_template=False, name="name"),
                           "area": TextSlotList.from_strings(home.rooms, allow_template=False, name="area"),
                           "floor": TextSlotList.from_strings(sorted(set(home.floors.values())),
                                                              allow_template=False, name="floor")}

    def match(self, utterance: str) -> TemplateMatch | None:
        """Home Assistant's best match among the command intents, as its default agent picks it."""
        from hassil.recognize import recognize_best

        if _HERE.search(utterance):  # the speaker's room, which a text command has not got
            return None
        result = recognize_best(utterance, command_intents(language_of(utterance)), slot_lists=self.slot_lists,
                                best_slot_name="name")
        if result is None:
            return None
        slots = {name: _whole(entity.value) for name, entity in result.entities.items()
                 if not isinstance(entity.value, dict)}
        if result.intent.name == "HassSetVolumeRelative":
            slots["direction"] = _volume_direction(slots, result.intent_sentence)
        return TemplateMatch(result.intent.name, slots, result.intent_data)

    def ir(self, utterance: str) -> QueryIR | None:
        found = self.match(utterance)
        return None if found is None else ir_of(found, self.home, utterance)


def _whole(value):
    """A number the matcher read as 20.0 is 20 (the action phrase says "20度", as the gold parse does)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _volume_direction(slots: dict, sentence) -> str | None:
    """"up" / "down": the step's own word, or the list its number came from ({volume_step_up:volume_step})."""
    step = slots.get("volume_step")
    if step in ("up", "down"):
        return step
    text = getattr(sentence, "text", "") or ""
    up, down = "volume_step_up" in text, "volume_step_down" in text
    return "up" if up and not down else "down" if down and not up else None


def ir_of(found: TemplateMatch, home: Home, utterance: str) -> QueryIR | None:
    """The QueryIR of a match, derived as the intents corpus derives its gold parse; None when no device of the
    home can carry the intent out (the rule parser then reads the utterance)."""
    intent, slots, block = found.intent, dict(found.slots), found.block
    named = [d for d in home.devices if d.label.strip() == slots.get("name")] if "name" in slots else []
    domains = block_domains(block) or INTENT_DOMAINS.get(intent) or _ANY_DOMAIN
    if intent in ("HassTurnOn", "HassTurnOff") and ("lock" in domains or
                                                   any(DOMAIN.get(d.category) == "lock" for d in named)):
        slots["domain"] = "lock"
    classes = block_device_class(block) | ({slots["device_class"]} if slots.get("device_class") else set())
    if named:
        able = [d for d in named if commands_for(intent, slots, d)]
        targets, quantifier = able, "one"
    else:
        able = [d for d in home.devices if DOMAIN.get(d.category) in domains and d.category not in NAMED_ONLY
                and (not classes or any(d.category in COVER_CLASSES.get(c, ()) for c in classes))
                and commands_for(intent, slots, d)]
        if "area" in slots:
            targets = [d for d in able if d.room == slots["area"]]
        elif "floor" in slots:
            targets = [d for d in able if home.floors.get(d.room) == slots["floor"]]
        else:
            targets = able
        quantifier = "any" if domains <= GROUP_ANY else "all"
    if not targets:
        return None
    kind_words: list[str] = []
    if not named:
        try:
            targets, kind_words = _of_the_kind_said(Walk(text=[utterance]), targets, home.rooms)
        except Skip:
            return None
    categories = {d.category for d in targets}
    scope = [slots["area"]] if "area" in slots else sorted({d.room for d in targets if d.room}) if "floor" in slots \
        else []
    return QueryIR(action=gold_action(intent, slots, language_of(utterance)),
                   type_hint=categories.pop() if len(categories) == 1 else "Unknown",
                   name_hint=slots["name"] if named else " ".join(kind_words), scope_include=scope,
                   scope_exclude=[], quantifier=quantifier)
