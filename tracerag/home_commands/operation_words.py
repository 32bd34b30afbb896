"""The words that ask for each operation, in English and Chinese: ``read_operation(text, kinds)``.

The rule parser reads the operation an utterance asks for here, and so does an IR that carries only free
text (an older label, another tool's parse: its ``action``). A word plays one of five roles:

- an **operation** said outright: "unlock", "下一首", "mute", "dim", "调高音量";
- a **switching** verb: "turn on", "打开", "close", "关" (on a blind it opens or closes, on a lock "打开"
  unlocks and "关" locks, as Home Assistant and Chinese read them);
- a **subject**: what is changed ("volume", "亮度", "colour temperature", "fan speed", "位置");
- a **direction**: "up", "lower", "调高", "decrease";
- a **value**: "50%", "to 22", "26度", "2700K", "一半", a colour, a mode.

An operation said wins (the first one); a switching verb followed by a subject or a value sets it ("打开一半",
"turn the lights on to 50%"); otherwise a subject with a direction changes it ("turn the volume down"), with
a value or alone sets it; a direction or a value alone acts on the subject of the kind of device meant
(``kinds``: "lower" is ``close`` for blinds, ``level_down`` for lights, ``volume_down`` for a speaker; "to
22" sets an air conditioner's temperature). A change said with a target ("turn the lights down to 30%",
"increase the colour temperature to cool white") sets that target, unless it says "by". A negated verb is
read before this (``negation.read_negation``); names of devices and rooms should be masked by the caller, so
"Red Lamp" sets no colour and "Gas Fireplace" no gas.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from ..device_operations import RELATIVE_TO_SETTING
from .category_words import is_kind_word, normalised
from .letting_in import ANIMALS, ZH_LET_IN
from .text_match import join_tokens, phrase_pattern, tokens
from .values import SaidValue, sets_target, value_said

COVERS = frozenset({"Blind", "Window", "Door", "GarageDoor", "WaterValve", "GasValve", "Irrigation"})
LOCKS = frozenset({"Lock"})
MEDIA = frozenset({"Television", "NetworkAudio", "Speaker", "Projector"})
CLIMATE = frozenset({"AirConditioner", "Thermostat", "WaterHeater", "Oven", "Refrigerator", "Humidifier",
                     "Dehumidifier"})
LIGHTS = frozenset({"Light"})
FANS = frozenset({"Fan", "AirPurifier", "Vent"})
CYCLES = frozenset({"RobotCleaner", "Washer", "Dryer", "Dishwasher", "Charger"})  # start and stop a cycle
SECURITY = frozenset({"SecurityPanel"})
SIRENS = frozenset({"Siren"})
_SWITCHED = frozenset({"Switch", "SmartPlug", "Outlet"})  # devices that only switch: "start" one, it is on

OPERATION, SWITCH, SUBJECT, DIRECTION, VALUE = "operation", "switch", "subject", "direction", "value"
COMPLAINT = "complaint"  # what is wrong ("too loud", "太吵"): what would mend it, where nothing else is asked

# subject -> (set it, raise it, lower it)
SUBJECTS = {
    "volume": ("set_volume", "volume_up", "volume_down"),
    "level": ("set_level", "level_up", "level_down"),
    "temperature": ("set_temperature", "temperature_up", "temperature_down"),
    "color_temperature": ("set_color_temperature", "cooler", "warmer"),  # a higher colour temperature is cooler
    "fan_speed": ("set_fan_speed", "fan_speed_up", "fan_speed_down"),
    "position": ("set_position", "open", "close"),
    "tilt": ("set_tilt", "set_tilt", "set_tilt"),
    "color": ("set_color", "set_color", "set_color"),
    "mode": ("set_mode", "set_mode", "set_mode"),
    "channel": ("set_channel", "channel_up", "channel_down"),
    "input": ("set_input", "set_input", "set_input"),
    "current": ("set_current", "set_current", "set_current"),
}
# the subject a direction or a bare value changes on a device of each kind ("lower" the blinds: their position)
_KIND_SUBJECT = ((COVERS, "position"), (LIGHTS, "level"), (MEDIA, "volume"), (CLIMATE, "temperature"),
                 (FANS, "fan_speed"))

Reading = Callable[[frozenset[str]], str | None]


def _by_kind(default: str | None, *pairs: tuple[frozenset[str], str | None]) -> Reading:
    """A word whose meaning depends on the kinds acted on: the first pair whose kinds hold all of ``kinds``
    ("lower the blinds and the lights" is no one operation), else ``default``."""

    def read(kinds: frozenset[str]) -> str | None:
        for group, meaning in pairs:
            if kinds and kinds <= group:
                return meaning
        return default

    return read


def _always(meaning: str | None) -> Reading:
    return lambda kinds: meaning


def kind_subject(kinds: frozenset[str], default: str | None = None) -> str | None:
    """The subject a direction or a bare value changes on devices of these kinds, else ``default``."""
    return _by_kind(default, *_KIND_SUBJECT)(kinds)


@dataclass(frozen=True)
class Sense:
    """Words (``pattern``) in a ``role``, and what they mean given the kinds acted on (``read``): an operation
    (roles operation, switch), a subject (subject, value: the subject the value sets; None: the kind's), or
    a direction (+1 / -1)."""

    pattern: re.Pattern
    role: str
    read: Reading


# switching verbs: English "turn on" a lock locks it (Home Assistant), Chinese 打开 one unlocks it
_ON = _by_kind("on", (COVERS, "open"), (LOCKS, "lock"), (SECURITY, "arm"))
_OFF = _by_kind("off", (COVERS, "close"), (LOCKS, None), (SECURITY, "disarm"))
# doors and locks together ("把门打开" where the doors are locks and a garage door): open, a lock's unlock
_ZH_ON = _by_kind("on", (COVERS, "open"), (LOCKS, "unlock"), (SECURITY, "arm"), (COVERS | LOCKS, "open"))
_ZH_OFF = _by_kind("off", (COVERS, "close"), (LOCKS, "lock"), (SECURITY, "disarm"))
_OPEN = _by_kind("open", (LOCKS, "unlock"), (LIGHTS | MEDIA | FANS | CLIMATE, "on"))
_CLOSE = _by_kind("close", (LOCKS, "lock"), (LIGHTS | MEDIA | FANS | CLIMATE, "off"))
# "start" with no kind said starts a cycle ("start cleaning"); a device that only switches is switched on
_STARTED = ((CYCLES | frozenset({"Oven"}), "start"), (MEDIA, "play"), (_SWITCHED, "on"))
_START = _by_kind("start", *_STARTED)
# a water valve said to start runs water ("start the drip in the orchard"); "run the bath" opens no valve
_START_SAID = _by_kind("start", *_STARTED, (frozenset({"WaterValve", "Irrigation"}), "open"))
# "stop" with no kind said stops what moves or plays (a blind, a player, a cycle); a lamp, fan, alarm panel: off
_STOP = _by_kind("stop", (LIGHTS | FANS | (CLIMATE - {"Oven"}) | SIRENS | {"SecurityPanel"} | _SWITCHED, "off"))
_PAUSE = _by_kind("pause", (COVERS, "stop"))
# a lock that rises or lowers is a parking-space lock: raised it bars the space (车位锁升起来: locked), lowered it
# lets a car in (车位锁降下来，我要停车: unlocked)
_RAISED = _by_kind("open", (LOCKS, "lock"))
_LOWERED = _by_kind("close", (LOCKS, "unlock"))
_MUTE = _by_kind("mute", (SIRENS, "off"), (SECURITY, "disarm"), (SIRENS | SECURITY, "off"))
# "be quiet", "silent mode": a player mutes; an air conditioner or a fan has no mute (its quiet mode, if listed)
_HUSH = _by_kind("mute", (FANS | CLIMATE | CYCLES, None))
_WARMER = _by_kind("temperature_up", (LIGHTS, "warmer"))
_HEATED = _by_kind("temperature_up", (LIGHTS, "warmer"), (frozenset({"Oven"}), "start"))  # an oven heated up: on
_COOLER = _by_kind("temperature_down", (LIGHTS, "cooler"))
_UP, _DOWN = _always(+1), _always(-1)
_WATERING = _by_kind(None, (frozenset({"WaterValve", "Irrigation"}), "open"))
_RELEASED = _by_kind(None, (LOCKS, "unlock"))  # "release the lockers": a lock let go; nothing else it names
_WITHDRAWN = _by_kind(None, (SECURITY, "disarm"))  # "看门狗先撤了" (a security system by its name): disarmed

# up to six words between a verb and its particle ("turn the kitchen lights on"), none of them another particle or
# an exception ("turn off all the lights except on the second floor" turns nothing on; "turn up the volume on
# the speaker" switches nothing)
_E = r"(?:(?:(?!(?:on|off|up|down|except|but|and)\b)[\w'-]+|·)\s+){0,6}?"  # ·: a name masked (verb_text)
_COLOURS_EN = r"red|green|blue|yellow|purple|orange|pink|turquoise|cyan|magenta|violet|brown|black|gold|teal|lavender"
_COLOURS_ZH = r"[红绿蓝黄紫橙粉青棕黑金]色"
_MODES_EN = r"cool(?:ing)?|heat(?:ing)?|auto(?:matic)?|dry|dehumidify|fan only|eco|sleep|turbo|quiet|boost"
_MODES_ZH = r"制冷|制热|除湿|送风|[\u4e00-\u9fff]{1,4}模式"
_NO_VERB = _always(None)


def _among_chinese(word: str) -> str:
    """An English verb said among Chinese ("大门open一下"): no word boundary stands between it and a Chinese
    character, so it is read where one is on either side."""
    return rf"(?<![A-Za-z]){word}(?=[\u4e00-\u9fff])|(?<=[\u4e00-\u9fff]){word}(?![A-Za-z])"

_SENSES_EN: tuple[tuple[str, str, Reading], ...] = (
    # operations said outright
    (r"\b(?:unlock|unlcok|unlokc|unlok|unloack|unlatch|unbolt)(?:s|ed|ing)?\b|\blocked\s+out\b|"
     rf"\btake\s+{_E}off\s+(?:the\s+)?lock\b|"
     r"\b(?:desbloquea|desbloquear|destranca|d[ée]verrouille|entsperre|entriegle)\b", OPERATION,
     _always("unlock")),  # "we're locked out of suite B": let us in; "take the strongroom off lock"; code-switched
    (r"\brelease[sd]?\b", OPERATION, _RELEASED),
    (r"\bdisarm(?:s|ed|ing)?\b|\b(?:turn|switch)\s+off\s+(?:the\s+)?(?:security|alarm)\s+system|"
     rf"(?:^|[,.;!]\s*|\bplease\s+)stand\s+{_E}down\b", OPERATION, _always("disarm")),  # "stand the alarm down"
    (r"(?:^|\b(?:please|and|then|to|you|can|could|would|will|go)\s+)lock\b(?!\s+(?:is|was|log|status|battery))"
     r"|\block\s+(?:up|it|them|all|every\w*|the|my|our|\w+\s+doors?)\b", OPERATION, _always("lock")),
    (r"\barm(?:ed)?\b(?!\s*chair)", OPERATION, _always("arm")),
    (r"\bunmute[sd]?\b", OPERATION, _always("unmute")),
    (r"\bmute[sd]?\b|\bsilence\b|\b(?:stop|quit)\s+(?:the\s+)?(?:beeping|ringing|wailing|blaring)\b", OPERATION,
     _MUTE),
    (rf"\bshut\s+{_E}up\b", OPERATION,  # "shut that siren up" silences it; "shut up the blinds" closes them
     _by_kind("close", (SIRENS, "off"), (LIGHTS | MEDIA | FANS | CLIMATE, "off"))),
    (r"\b(?:be|keep|stay|go|remain)\s+(?:quiet|silent)\b|\bquiet\s+(?:the|my|down)\b|\bsilent\s+mode\b|"
     r"\bquiet\s+(?:mode\s+)?on\b|\bsound\s+off\b|\bhush\b", OPERATION, _HUSH),
    (rf"\bsound\s+{_E}(?:siren|alarm)s?\b", OPERATION, _always("on")),
    (r"\bsound\s+(?:the\s+|an?\s+)?·", OPERATION, _by_kind(None, (SIRENS, "on"))),  # "sound the Hall Siren"
    (r"\bnext\s+channel\b|\bchannel\s+up\b", OPERATION, _always("channel_up")),
    (r"\b(?:previous|last)\s+channel\b|\bchannel\s+down\b", OPERATION, _always("channel_down")),
    (r"\bnext\b(?:\s+(?:track|song|one|item|episode|video))?(?!\s+(?:[\w-]+\s+)?(?:hours?|minutes?|seconds?|days?|"
     r"weeks?|months?|morning|night|time)\b)|\bskip\b", OPERATION, _always("next")),
    (r"\bprevious(?:\s+(?:track|song|one|item|episode))?\b|\blast\s+(?:track|song)\b|\bgo\s+back\b", OPERATION,
     _always("previous")),
    (r"\bshuffle\b|\brepeat\b|\bon\s+loop\b", OPERATION, _always("set_mode")),
    (r"\b(?:resume|unpause|continue)\b|\bplay\b", OPERATION, _always("play")),
    (r"\bpause[sd]?\b|\bhold\b(?!\s+(?:[\w'·-]+\s+){0,5}?open\b)", OPERATION, _PAUSE),  # "hold the door open" opens
    (r"\bvolume\s+(?:up|higher)\b|\bloud(?:er)?\b", OPERATION, _always("volume_up")),
    (r"\bvolume\s+(?:down|lower)\b|\b(?:quiet|soft)er\b", OPERATION, _always("volume_down")),
    # what is wrong, for what would mend it ("it's too loud", "too dark in here")
    (r"\btoo\s+(?:loud|noisy)\b", COMPLAINT, _always("volume_down")),
    (r"\btoo\s+(?:quiet|soft)\b|\bcan'?t\s+hear\b", COMPLAINT, _always("volume_up")),
    (r"\btoo\s+bright\b", COMPLAINT, _always("level_down")),
    (r"\btoo\s+dark\b", COMPLAINT, _always("level_up")),
    (r"\btoo\s+(?:hot|warm)\b", COMPLAINT, _always("temperature_down")),
    (r"\btoo\s+(?:cold|chilly)\b", COMPLAINT, _always("temperature_up")),
    (r"\b(?:dim|dimmer|darker|darken)\b|\bless\s+bright", OPERATION, _always("level_down")),
    (r"\b(?:brighten|brighter)\b|\bmore\s+(?:bright|light)\b", OPERATION, _always("level_up")),
    (r"\bwarmer\b", OPERATION, _WARMER),
    (r"\bcooler\b|\bcolder\b", OPERATION, _COOLER),
    (r"\bhotter\b", OPERATION, _WARMER),
    # "heat the oven up for the pasties"; "the oven takes forty minutes to heat up" says how it goes
    (rf"(?<!\bto )\b(?:heat|warm)\s+{_E}up\b", OPERATION, _HEATED),
    (r"\bto\s+(?:heat|warm)\s+up\b", OPERATION, _WARMER),
    (r"\bcool\s+down\b", OPERATION, _always("temperature_down")),
    (r"\bfaster\b|\bspeed\s+up\b", OPERATION, _always("fan_speed_up")),
    (r"\bslow(?:er|\s+down)\b(?!\s+(?:the\s+|my\s+)?(?:\w+\s+)?(?:volume|sound)\b)", OPERATION,
     _always("fan_speed_down")),
    (r"\b(?:return|go|send|head)\b(?:\s+(?:[\w']+|·)){0,3}?\s+(?:home|base|dock|charger)\b|\bdock\b|\brecharge\b",
     OPERATION, _always("return_home")),
    (r"\breturn\b", OPERATION, _by_kind(None, (frozenset({"RobotCleaner"}), "return_home"))),  # "return Bob"
    (r"\b(?:start|begin|resume)\s+charging\b|\bcharge\s+(?:the|my)\s+(?:car|vehicle|ev)\b", OPERATION,
     _always("start")),
    (r"\b(?:stop|end|pause|halt)\s+charging\b", OPERATION, _always("stop")),
    (r"\bpreset\b|\bfavou?rite\s+position\b|\bmy\s+position\b", OPERATION, _always("preset")),
    (r"\b(?:vacuum|hoover|mop|sweep)(?:s|ed|ing)?\b(?!\s+(?:cleaner|robot))|\bclean(?:s|ed|ing)?\b", OPERATION,
     _always("start")),
    (r"\bstart(?:s|ed|ing)?\b|\bbegin\b", OPERATION, _START_SAID),
    (r"\brun\b|\bpre-?heat(?:s|ed|ing)?\b", OPERATION, _START),
    (rf"\bget\s+{_E}going\b", OPERATION, _START),  # "get the oven going"
    (r"\bstop(?:s|ped|ping)?\b|\bhalt\b|\bcancel\b", OPERATION, _STOP),
    (r"\btoggle\b", OPERATION, _always("toggle")),
    # switching
    (rf"\b(?:turn|switch|power|put|flip|bring|get|shut|cut)\s+{_E}off\b|\bturn\s+{_E}out\b|\bshut\s+{_E}down\b|\bpower\s+down\b|"
     r"\bkill\b|\bdisable\b|"
     r"\b(?:lights?|lamps?)\s+out\b|\boff\b", SWITCH, _OFF),
    # "on the" after what is switched says where: "get the roller door on the keg store up" switches nothing on
    (rf"\b(?:turn|switch|power|put|flip|bring|get)\s+(?:on\b|{_E}on\b(?!\s+(?:the|my|our|this|that)\b))|\blight\s+(?:\w+\s+){{0,3}}?up\b|\benable\b|"
     r"\b(?:lights?|lamps?)\s+on\b(?=\s*(?:$|[,.!?]|please|now|again|in\b|for\b|thanks))|"
     r"(?:^|[,.;!?]\s*|\b(?:please|and|then)\s+)light\s+(?:the|my|our|·)|\blight\s+(?:a|one|two|all|both)\s+"
     r"(?:\w+\s+)?burners?\b|\bfire\s+(?:\w+\s+){0,3}?up\b|\bignite\b|\bback\s+on\b|"
     # "fire the mash burner", "fire the kiln": a heater fired is switched on
     r"\bfire\s+(?:the\s+|my\s+|our\s+)?(?:[\w-]+\s+){0,2}?(?:burners?|kilns?|ovens?|boilers?|furnaces?|forges?)\b|"
     r"\bfire\s+(?:the|my|our)\s+·|"
     # "oven on", "oven on in the cafe pls"
     r"\bon\b(?=\s*(?:in\s+the\s+\S+(?:\s+\w+)?\s*)?(?:please|pls|plz|now|again|for\s+me|thanks?|"
     r"for\s+(?:\w+\s+){1,2}(?:minutes?|mins?|hours?|hrs?|seconds?|secs?))?\s*[.!?]*\s*$)", SWITCH, _ON),
    (r"\b(?:open(?:s|ed|ing)?|raise[sd]?|lift(?:s|ed)?)\s+up\b|\b(?:open|opne|oepn|opn)(?:s|ed|ing)?\b|\bpull\s+up\b|"
     r"\bpop\s+(?:(?:the|my|our)\s+)?(?:·|(?:[\w-]+\s+){0,2}?(?:lock\w*|door|gate|trunk|hatch|safe|\w*box)\b)|"
     rf"\bput\s+up\b|\broll\s+up\b|\b(?:let|buzz)\s+{_E}(?:in(?:to)?|(?:up|down)\s+(?:on)?to|onto|through)\b", SWITCH,
     _OPEN),  # "let the movers in", "buzz the courier in", "let him up onto the roof", "pop the lockbox"
    (rf"\blet\s+(?:the|my|our)\s+(?:{ANIMALS})\s+out\b", SWITCH, _OPEN),  # "let the chickens out": their door
    # Spanish, Portuguese, French and German said among English ("por favor abre the door")
    (r"\b(?:abre|abra|abrir|[áa]brel[oa]|ouvre|ouvrir|öffne|öffnen|oeffne)\b", SWITCH, _OPEN),
    (r"\b(?:cierra|cierre|cerrar|ferme|fermer|schließe|schliess?e)\b", SWITCH, _CLOSE),
    (r"\b(?:enciende|prende|allume)\b", SWITCH, _ON),
    (r"\b(?:apaga|[ée]teins)\b", SWITCH, _OFF),
    # a clause that is only a device and "on" ("gas bottle on, I've just swapped it"), never a state said of it
    (r"^\s*(?:(?:the|my|our)\s+)?(?:(?!(?:is|are|was|were|still|been|left|already|not|it|all|come|came|goes|"
     r"went|stays?|turned|switched|kept)\b)[\w-]+\s+){1,3}on\b(?=\s*[,;]\s*\w)", SWITCH, _ON),
    (r"\b(?:close[sd]?|closing|shut|shuts|draw)\b|\bpull\s+down\b|\broll\s+down\b", SWITCH, _CLOSE),
    # "fill the water trough", "water the kitchen garden": a water valve opens
    (r"^\s*(?:please\s+)?(?:fill|water)\s+(?:up\s+)?(?:the|my|our)\b", SWITCH, _WATERING),
    # subjects
    (r"\bvolume\b|\bsound\b(?!\s*(?:bar|system|machine)s?\b)", SUBJECT, _always("volume")),
    (r"\bbrightness\b|\bintensity\b", SUBJECT, _always("level")),
    (r"\bcolou?r\s+temp\w*", SUBJECT, _always("color_temperature")),
    (r"\btemp(?:erature)?s?\b", SUBJECT, _by_kind("temperature", (LIGHTS, "color_temperature"))),
    (r"\bheat(?:ing|er)?\b", SUBJECT, _always("temperature")),
    (r"\b(?:fan\s+)?speed\b", SUBJECT, _always("fan_speed")),
    (r"\btilt\w*|\bslats?\b|\bangle\b", SUBJECT, _always("tilt")),
    (r"\bposition\b", SUBJECT, _always("position")),
    (r"\bcolou?r\b", SUBJECT, _always("color")),
    (r"\bmode\b|\b(?:swing|oscillat\w*)\b", SUBJECT, _always("mode")),
    (r"\bchannel\b", SUBJECT, _always("channel")),
    (r"\b(?:input|source)\b|\bhdmi\b", SUBJECT, _always("input")),
    # directions
    (r"\b(?:raise[sd]?|increase[sd]?|higher|boost|more)\b|\bturn\s+(?:[\w']+\s+){0,4}?up\b|\bup\b", DIRECTION, _UP),
    (r"\b(?:lower(?:ed)?|decrease[sd]?|reduce[sd]?|less)\b|\bturn\s+(?:[\w']+\s+){0,4}?down\b|\bdown\b", DIRECTION,
     _DOWN),
    # values
    (r"\b(?:warm|cool|cold|soft|bright)\s+white\b|\bdaylight\b|\bcandle\s*light\b", VALUE,
     _always("color_temperature")),
    (rf"\b(?:{_COLOURS_EN})\b|\bwhite\b", VALUE, _always("color")),
    (rf"\b(?:to|on|into)\s+(?:{_MODES_EN})\b", VALUE, _always("mode")),
    (r"\b(?:on|to)\s+(?:high|low|medium)\b", VALUE, _always("fan_speed")),
    (r"\bhalf\s*way\b|\bhalf\s+open\b", VALUE, _always("position")),
)

_SENSES_ZH: tuple[tuple[str, str, Reading], ...] = (
    (r"播放器|开关机|开关|关系|关于|开心|离开|公开", OPERATION, _NO_VERB),  # nouns holding a verb's character
    # English verbs said among Chinese ("大门open一下", "帮我unlock一下后门"): no word boundary to a Chinese character
    (_among_chinese("unlock"), OPERATION, _always("unlock")),
    (_among_chinese("open"), SWITCH, _OPEN),
    (_among_chinese("close"), SWITCH, _CLOSE),
    (r"解锁|开锁|打开门锁|把门锁打开", OPERATION, _always("unlock")),
    (ZH_LET_IN, SWITCH, _OPEN),  # "让他进来": someone let in, as "let them in"
    # "安防撤一下", "把安防撤了": the security said, then withdrawn
    (r"撤防|解除布防|取消布防|撤销布防|关闭安防|解除警戒|解除警报|(?:安防|警戒)[^，,。；;！!？?\s]{0,3}?撤(?!回)|撤(?:掉|了)?(?:安防|警戒)",
     OPERATION, _always("disarm")),
    (r"拉响|鸣响|响起", OPERATION, _always("on")),
    (r"锁上|上锁|锁门|锁好|锁住|反锁|锁起来|关上门锁", OPERATION, _always("lock")),
    (r"布防|设防|开启安防|打开安防|启动安防", OPERATION, _always("arm")),
    (r"取消静音|解除静音|恢复声音|声音恢复|打开声音|开声音", OPERATION, _always("unmute")),
    (r"静音|关闭声音|关掉声音|把声音关|别再?[响叫吵鸣]", OPERATION, _MUTE),
    (r"下一个频道|换台|频道加|下个台|下一个台", OPERATION, _always("channel_up")),
    (r"上一个频道|频道减|上个台|上一个台", OPERATION, _always("channel_down")),
    (r"下一首|下一曲|切歌|下一集|下一个|下一台", OPERATION, _always("next")),
    (r"上一首|上一曲|上一集|上一个|上一台", OPERATION, _always("previous")),
    (r"随机播放|单曲循环|循环播放|顺序播放|列表循环", OPERATION, _always("set_mode")),
    (r"继续播放|恢复播放|接着放|继续放|播放|接着播|继续(?!充电|清扫|打扫)|恢复(?!声音|静音|充电|出厂|默认)", OPERATION,
     _always("play")),
    (r"暂停", OPERATION, _PAUSE),
    (r"停止播放", OPERATION, _always("stop")),
    (r"(?:调高|调大|加大|增大|提高)音量|音量(?:调高|调大|加大|增大|高一点|大一点|大点|加)|大声|声音(?:大|调大|开大)",
     OPERATION, _always("volume_up")),
    (r"(?:调低|调小|减小|降低)音量|音量(?:调低|调小|减小|低一点|小一点|小点|减)|小声|声音(?:小|调小|关小)",
     OPERATION, _always("volume_down")),
    (r"太吵|太响", COMPLAINT, _always("volume_down")),
    (r"太刺眼|太亮", COMPLAINT, _always("level_down")),
    (r"太暗|太黑", COMPLAINT, _always("level_up")),
    (r"太热", COMPLAINT, _always("temperature_down")),
    (r"太冷", COMPLAINT, _always("temperature_up")),
    (r"调暗|暗一[点些]|暗点|变暗", OPERATION, _always("level_down")),
    (r"调亮|亮一[点些]|亮点|变亮", OPERATION, _always("level_up")),
    (r"暖一[点些]|调暖", OPERATION, _WARMER),
    (r"冷一[点些]|凉快", OPERATION, _COOLER),
    (r"升温|热一[点些]|暖和", OPERATION, _always("temperature_up")),
    (r"降温", OPERATION, _always("temperature_down")),
    (r"风(?:速|量)?(?:调大|调高|大一[点些]|加大)|(?:调大|加大)风(?:速|量)", OPERATION, _always("fan_speed_up")),
    (r"风(?:速|量)?(?:调小|调低|小一[点些]|减小)|(?:调小|减小)风(?:速|量)", OPERATION, _always("fan_speed_down")),
    (r"回充|返回充电|回去充电|回到?基[座站]|返回基[座站]|去充电|回家充电", OPERATION, _always("return_home")),
    (r"预设位置|预置位|收藏位置|常用位置", OPERATION, _always("preset")),
    (r"(?:开始|启动)[^，,。]{0,5}?充电|给[^，,。]{0,4}?充电", OPERATION, _always("start")),
    (r"(?:停止|结束|暂停|别再?)充电", OPERATION, _always("stop")),
    (r"扫地|清扫|打扫|拖地|吸尘", OPERATION, _always("start")),
    (r"开始|启动|预热", OPERATION, _START),
    (r"停止|停下|停住|停一下|别动", OPERATION, _STOP),
    # switching
    (r"拉开|升起|拉起|升上去|拉上去|推上去|卷上去|卷起", SWITCH, _RAISED),  # 拉上去: a shutter pulled up, not 拉上
    (r"撤(?:了|掉|一下|下来)", OPERATION, _WITHDRAWN),

    (r"合上|拉上|放下|降下|落下|拉下", SWITCH, _LOWERED),
    (r"关闭|关掉|关上|关了|关一下|关下|熄灭|灭掉|断电|断开|(?<!开)关(?![于系注心键])", SWITCH, _ZH_OFF),
    # "给菜园浇浇水", "给大棚喷点水": a water valve opens (浇水, 喷水 say the kind)
    (r"浇浇?水|浇花|浇菜|灌溉|喷(?:一?点|些)?水|洒(?:一?点|些)?水", SWITCH, _WATERING),
    # 整着: 东北话 for switch it on
    # 点上: a fire lit ("厨房的煤气灶点上"; 点着 and 点上了 say it burns)
    (r"打开|开启|开一下|开开|点亮|通电|接通|点火|点上火|点上(?!了)|开火|整着|开(?![关始心会车学放])", SWITCH, _ZH_ON),
    # subjects
    (r"音量|声音", SUBJECT, _always("volume")),
    (r"亮度", SUBJECT, _always("level")),
    (r"色温|颜色温度", SUBJECT, _always("color_temperature")),
    (r"温度", SUBJECT, _by_kind("temperature", (LIGHTS, "color_temperature"))),
    (r"风速|风量", SUBJECT, _always("fan_speed")),
    (r"角度|叶片|倾斜|翻转", SUBJECT, _always("tilt")),
    (r"开合度|位置", SUBJECT, _always("position")),
    (r"颜色", SUBJECT, _always("color")),
    (r"模式|扫风|摆风|摇头", SUBJECT, _always("mode")),
    (r"频道", SUBJECT, _always("channel")),
    (r"信号源|输入源|hdmi", SUBJECT, _always("input")),
    # directions
    (r"调高|升高|提高|加大|调大|增大|高一[点些]|大一[点些]", DIRECTION, _UP),
    (r"调低|降低|减小|调小|低一[点些]|小一[点些]", DIRECTION, _DOWN),
    # values
    (r"暖光|暖白|暖色|冷光|冷白|白光|日光|自然光|蜡烛光|烛光", VALUE, _always("color_temperature")),
    (_COLOURS_ZH, VALUE, _always("color")),
    (_MODES_ZH, VALUE, _always("mode")),
    (r"(?:\d|[一二两三四五六七八九十])\s*[档挡]|[高中低]档|[高中低]速", VALUE, _always("fan_speed")),
    (r"\d+\s*开(?![\u4e00-\u9fff])", VALUE, _always("color_temperature")),  # "3900开": kelvin, said short
    # (开到二档: a fan's speed, said by its step)
    (r"打?开到(?![^，,。；;]{0,6}[档挡])|拉到|开一半|关到|一半", VALUE, _always("position")),
)


def _compile(senses: Iterable[tuple[str, str, Reading]]) -> tuple[Sense, ...]:
    return tuple(Sense(re.compile(pattern, re.IGNORECASE), role, read) for pattern, role, read in senses)


SENSES = _compile(_SENSES_EN) + _compile(_SENSES_ZH)
_SWITCHING = frozenset({"on", "off", "open", "close"})


# what the unit of the value said says is set (a number without one, a share or an extreme: the kind's subject)
_UNIT_SUBJECT = {"celsius": "temperature", "fahrenheit": "temperature", "degrees": "temperature",
                 "kelvin": "color_temperature", "ampere": "current", "milliampere": "current"}


def words_said(text: str, kinds: Iterable[str] = ()) -> list[tuple[int, str, object]]:
    """Every operation word the text says: (start, role, meaning) in the order said (see ``Sense``); the value it
    sets (``values.read_value``: never a time of day, a name's number or a count) is one, its unit saying what it
    sets. A word inside a longer one said counts only as the longer one (the "off" of "turn the lights off")."""
    kinds = frozenset(kinds)
    spans, value = _senses_in(text) if len(text) <= _CACHED_CHARS else _read_senses(text)
    words = [(start, SENSES[i].role, SENSES[i].read(kinds)) for start, i in spans]
    if isinstance(value, SaidValue):
        words.append((value.start, VALUE, _UNIT_SUBJECT.get(value.unit)))
    return sorted(words, key=lambda w: w[0])


_CACHED_CHARS = 512  # utterances; longer texts are read each time rather than held

# a noun made of a word and a particle, no verb: "the drive-off this morning", "the kick-off", "a drop-off"
_NOUN_COMPOUND = re.compile(r"\b(?!(?:turn|switch|power|shut|flip|lock|open|close|roll|pull|push|warm|heat|cool|"
                            r"start|set|dim|fire|light|lit)-)[a-z]+-(?:off|on|up|in|out)\b")


@lru_cache(maxsize=4096)
def _senses_in(text: str) -> tuple[tuple[tuple[int, int], ...], object]:
    """Read once per text (the screen, the parse and the search each ask): ``_read_senses``."""
    return _read_senses(text)


def _read_senses(text: str) -> tuple[tuple[tuple[int, int], ...], object]:
    """The (start, sense index) of every operation word said, a word inside a longer one left out, and the value
    the text sets."""
    value = value_said(text)
    text = _NOUN_COMPOUND.sub(lambda m: " " * len(m.group(0)), normalised(text))  # the same length: starts hold
    found = [(m.start(), m.end(), i) for i, sense in enumerate(SENSES) for m in sense.pattern.finditer(text)
             if m.end() > m.start()]
    found.sort(key=lambda f: (f[0], f[0] - f[1], f[2]))
    kept: list[tuple[int, int, int]] = []
    for start, end, i in found:
        # a subject or a value inside a verb's span stays ("turn the volume down", "turn the heat up")
        if not any(s <= start and end <= e and not (SENSES[i].role in (SUBJECT, VALUE)
                                                    and SENSES[j].role in (DIRECTION, SWITCH)) for s, e, j in kept):
            kept.append((start, end, i))
    spans = tuple((start, i) for start, end, i in sorted(kept)
                  if not (isinstance(value, SaidValue) and value.start <= start and end <= value.end))  # 4100开尔文
    return spans, value


def read_operation(text: str, kinds: Iterable[str] = ()) -> str | None:
    """The operation the text asks for (see the module docstring), else None."""
    kinds = frozenset(kinds)
    said = words_said(text, kinds)
    text = normalised(text)
    by_role = {role: [(at, meaning) for at, r, meaning in said if r == role] for role in
               (OPERATION, SWITCH, SUBJECT, DIRECTION, VALUE, COMPLAINT)}
    if not (by_role[OPERATION] or by_role[SWITCH]):  # "it's too loud": what would mend it
        by_role[OPERATION] = by_role[COMPLAINT]
    subjects = [meaning for _, meaning in by_role[SUBJECT]]
    named = [meaning for _, meaning in by_role[VALUE] if meaning]  # values that say what they set ("2700K")
    # a number said with no unit and no kind sets what a room has ("让健身房调成16": its temperature); a share, a level
    plain = value_said(text)
    share = isinstance(plain, SaidValue) and (plain.unit == "percent" or plain.extreme is not None)
    values = named + [kind_subject(kinds, "level" if share else "temperature")
                      for _, meaning in by_role[VALUE] if not meaning]
    direction = next((meaning for _, meaning in by_role[DIRECTION]), None)
    acts = sorted(p for p in by_role[OPERATION] + by_role[SWITCH] if p[1] is not None)
    if acts:
        at, operation = acts[0]
        if operation in _SWITCHING:  # "打开一半", "turn the lights on to 50%": what is set after the verb
            later = [m for a, m in by_role[SUBJECT] + by_role[VALUE] if a > at]
            subject = next((m for m in later if m is not None), None) or (kind_subject(kinds) if later else None)
            if subject == "volume" and not values:  # "turn off the sound", "turn the volume back on"
                return "mute" if operation in ("off", "close") else "unmute"
            if subject is not None and subject != "position" or (subject == "position" and later and values):
                return SUBJECTS[subject][0]
        return _with_target(operation, text)
    subject = next((s for s in subjects if s is not None), None) or next((v for v in values if v), None)
    if subject is None and direction is not None:  # "turn it up", no kind said: what assistants read as volume
        subject = kind_subject(kinds, "level" if kinds else "volume")
    if subject is None:
        return None
    setting, up, down = SUBJECTS[subject]
    if subject == "position" and (values or sets_target(text)):
        return setting  # "increase the awnings' position to 83%", "decrease curtains to 59%"
    if direction is not None and not any(v in _ABSOLUTE for v in named):
        return _with_target(up if direction > 0 else down, text)
    return setting  # a value no change can be ("increase the colour temperature to cool white", "… 2700K")


_ABSOLUTE = frozenset({"color_temperature", "color", "mode"})  # values said as what they are, never an amount


def _with_target(operation: str, text: str) -> str:
    """A change said with a target ("turn the lights down to 30%") sets it; one by an amount stays a change."""
    if operation in RELATIVE_TO_SETTING and isinstance(value_said(text), SaidValue) and sets_target(text):
        return RELATIVE_TO_SETTING[operation]
    return operation


def verb_text(utterance: str, index) -> str:
    """The utterance with the rooms and device names it says masked, for reading its verbs: 玄关 (a room)
    closes nothing, "Gas Fireplace" opens no gas, "Red Lamp" sets no colour. Read once per utterance."""
    return index.memo(("verb_text", utterance), lambda: _verb_text(utterance, index))


def _verb_text(utterance: str, index) -> str:
    said = tokens(utterance)
    # whole names, and runs of two or more words of a Latin name ("open shelf" of Open Shelf Light); a run of a
    # Chinese name may be a verb of its own (充电 of 充电桩)
    names = [p for p in (*index.names.name_phrases.found_in(said), *index.names.label_phrases.found_in(said))
             if not is_kind_word(join_tokens(p))]  # "light" stays: "lights out"
    phrases = {*index.rooms.phrases.found_in(said), *names,
               *(p for p in index.names.run_phrases.found_in(said) if len(p) >= 2 and all(t.isascii() for t in p))}
    for phrase in sorted(phrases, key=lambda p: (-len(p), p)):  # with the number that ends a name (庭院灯8)
        utterance = re.sub(phrase_pattern(phrase).pattern + r"(?:[ \t]*[0-9]+(?![0-9%.]))?", " · ", utterance,
                           flags=re.IGNORECASE)
    return _WORD.sub(_respelled, utterance)


# the verbs of sensitive asks, read through a typo ("dissarm", "unlcok"; "opne" is in the vocabulary): a letter
# added, dropped, changed or two swapped; never a word of its own ("unblock")
_RESPELLED = ("unlock", "disarm", "unlatch", "preheat")
_WORDS_OF_THEIR_OWN = frozenset({"unblock", "unlocks", "disarms", "unlatches", "preheats"})
_WORD = re.compile(r"\b[A-Za-z]{5,9}\b")


def _respelled(match: re.Match) -> str:
    word = match.group(0).lower()
    if word in _RESPELLED or word in _WORDS_OF_THEIR_OWN:
        return match.group(0)
    return next((verb for verb in _RESPELLED if _one_edit(word, verb)), match.group(0))


def _one_edit(a: str, b: str) -> bool:
    """Whether two words differ by one letter added, dropped or changed, or two neighbours swapped."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))
