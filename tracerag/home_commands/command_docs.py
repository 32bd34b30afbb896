"""The text embedded for one command: what it does, in the words users say.

A command document is pure semantic text: its description, verb synonyms in the description's
language, and the descriptions of its enumerated values ("制冷 制热 除湿"). Category names and
command ids never enter it: mixed identifiers blur short-text embeddings (the cause of the 40%
recall of the first design, where "打开" landed on a window shade).

A document is built in time linear in its length (``_join_new_phrases``), and a command brings at
most ``home.MAX_VALUES_PER_COMMAND`` values (the home reader skips the rest, with a warning).
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from .devices import CommandSpec
from .text_match import contains, join_tokens, split_on_phrases, tokens

_CJK = re.compile(r"[\u3400-\u9fff]")

# command name -> (Chinese synonyms, English synonyms); phrases are separated by spaces in Chinese and
# by commas in English. Keyed by the SmartThings command name, so
# one entry covers every capability that uses it (switch.on, outlet.on, ...).
VERB_SYNONYMS: dict[str, tuple[str, str]] = {
    "on": ("打开 开启 开 启动 接通", "turn on, switch on, power on, start"),
    "off": ("关闭 关掉 关 熄灭 停止 断开", "turn off, switch off, power off, shut"),
    "open": ("打开 拉开 开启 升起", "open, raise"),
    "close": ("关闭 合上 拉上 放下", "close, shut, lower"),
    "pause": ("暂停 停住 停下", "pause, hold"),
    "lock": ("锁上 上锁 锁门 反锁", "lock"),
    "unlock": ("解锁 开锁 打开门锁", "unlock"),
    "play": ("播放 开始播放 继续播放 恢复播放", "play, resume"),
    "stop": ("停止 结束", "stop"),
    "mute": ("静音 关闭声音", "mute, silence"),
    "unmute": ("取消静音 恢复声音 解除静音", "unmute"),
    "volumeUp": ("调高音量 大声一点 增大音量", "volume up, louder"),
    "volumeDown": ("调低音量 小声一点 减小音量", "volume down, quieter"),
    "channelUp": ("下一个频道 换台 频道加", "next channel, channel up"),
    "channelDown": ("上一个频道 换台 频道减", "previous channel, channel down"),
    "nextTrack": ("下一首 下一曲 下一台 切歌", "next track, skip"),
    "previousTrack": ("上一首 上一曲 上一台", "previous track"),
    "push": ("按一下 触发", "press, push"),
    "stepLevel": ("调亮一点 调暗一点 增减", "brighter, dimmer"),
    "enableCharging": ("开始充电", "start charging"),
    "disableCharging": ("停止充电", "stop charging"),
    "heat": ("制热 加热", "heat"),
    "cool": ("制冷 降温", "cool"),
    "auto": ("自动", "auto"),
}
# the words for playback, said only of a player's commands: a blind or a washer pauses, it does not pause playback
_PLAYBACK_SYNONYMS = {"pause": ("暂停播放", "pause playback"), "stop": ("停止播放", "stop playback")}
_PLAYERS = re.compile(r"media|music|audio", re.IGNORECASE)


def verb_synonyms(command: str, capability: str = "") -> tuple[str, str] | None:
    """(Chinese, English) synonyms of a verb command on a capability; None for a command that is no verb."""
    words = VERB_SYNONYMS.get(command)
    if words is None or command not in _PLAYBACK_SYNONYMS or not _PLAYERS.search(capability):
        return words
    chinese, english = _PLAYBACK_SYNONYMS[command]
    return f"{words[0]} {chinese}", f"{words[1]}, {english}"

_SET_SYNONYMS = ("调到 调成 设为 设置 调节 改成", "set to, adjust, change")
_UNIT_WORDS = {
    "%": ("百分比", "percent"),
    "c": ("度 摄氏度 温度", "degrees celsius, temperature"),
    "℃": ("度 摄氏度 温度", "degrees celsius, temperature"),
    "°c": ("度 摄氏度 温度", "degrees celsius, temperature"),
    "f": ("度 华氏度 温度", "degrees fahrenheit, temperature"),
    "°f": ("度 华氏度 温度", "degrees fahrenheit, temperature"),
}


def is_chinese(text: str) -> bool:
    return bool(_CJK.search(text))


@lru_cache(maxsize=1024)  # every device of a profile shares its specs: each document is built once
def command_texts(spec: CommandSpec) -> tuple[str, ...]:
    """The command's documents: the enriched one, plus its verbs (and units) in the other language.

    Homes mix Chinese and English spec descriptions; a Chinese query would otherwise find an
    English-described device only through the weaker cross-lingual similarity and never through
    the lexical channel. The second document holds only verbs and unit words, so languages never
    mix in one text and no object ("亮度") is guessed for a description that does not say it.
    """
    lang = 1 if is_chinese(spec.description) else 0  # the other language
    parts = []
    verbs = verb_synonyms(spec.command, spec.capability)
    if verbs:
        parts.append(verbs[lang])
    unit = _unit_words(spec)
    if unit:
        if spec.command.startswith("set"):
            parts.append(_SET_SYNONYMS[lang])
        parts.append(unit[lang])
    primary = command_text(spec)
    return (primary, _join_new_phrases(parts, lang == 0)) if parts else (primary,)


def _unit_words(spec: CommandSpec) -> tuple[str, str] | None:
    unit = dict(spec.value_range or ()).get("unit")
    return _UNIT_WORDS.get(unit.strip().lower()) if isinstance(unit, str) else None


def command_text(spec: CommandSpec) -> str:
    """Build the enriched document of one command (same command, same text, on every device)."""
    chinese = is_chinese(spec.description)
    lang = 0 if chinese else 1
    parts = [spec.description]
    name, verbs = spec.command, verb_synonyms(spec.command, spec.capability)
    if verbs:
        parts.append(verbs[lang])
    elif name.startswith("set"):
        parts.append(_SET_SYNONYMS[lang])
    parts.extend(v.description for v in spec.value_list if v.description)
    unit = _unit_words(spec)
    if unit:
        parts.append(unit[lang])
    text = _join_new_phrases(parts, chinese)
    if chinese:  # a Chinese document carries no Latin identifiers
        text = " ".join(w for w in text.split() if is_chinese(w) or not re.search(r"[A-Za-z]", w))
    return text


def _join_new_phrases(parts: list[str], chinese: bool) -> str:
    """Join parts' phrases with spaces, skipping a phrase the text written so far already holds ("turn
    on" twice adds nothing, nor "开" after "打开")."""
    text = _JoinedText()
    for part in parts:
        for phrase in part.split() if chinese else [p.strip() for p in part.split(",")]:
            if phrase and not text.holds(phrase):
                text.append(phrase)
    return text.value()


class _JoinedText:
    """Phrases joined by spaces, answering "does the text hold this?" in time linear in the text.

    Up to ``SCAN_CHARS`` characters the text is simply scanned (at C speed, bounded per phrase); past
    that, every run of up to ``WINDOW`` characters is kept in a set as the text grows, so a short phrase
    is one look-up and a longer one is scanned for only when each of its ``WINDOW``-character runs is
    there, which it almost never is unless the text holds it. (Re-joining the text for every phrase
    made a 32,000-value list take 23 s.)"""

    SCAN_CHARS = 32_768
    WINDOW = 8

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.text = ""  # the whole text while it is short; then only its last WINDOW - 1 characters
        self.runs: set[str] | None = None  # every run of up to WINDOW characters, once the text is long

    def holds(self, phrase: str) -> bool:
        runs, window = self.runs, self.WINDOW
        if runs is None:
            return phrase in self.text
        if len(phrase) <= window:
            return phrase in runs
        return all(phrase[i:i + window] in runs for i in range(len(phrase) - window + 1)) and phrase in self.value()

    def append(self, phrase: str) -> None:
        start = len(self.text)
        self.text = f"{self.text} {phrase}" if self.pieces else phrase
        self.pieces.append(phrase)
        if self.runs is None:
            if len(self.text) <= self.SCAN_CHARS:
                return
            self.runs, start = set(), 0
        text, window = self.text, self.WINDOW
        self.runs.update([text[begin:end] for end in range(start + 1, len(text) + 1)
                          for begin in range(max(0, end - window), end)])
        self.text = text[-(window - 1):]

    def value(self) -> str:
        return " ".join(self.pieces)


@cache
def verb_phrases(command: str, capability: str = "") -> frozenset[tuple[str, ...]]:
    """The words that name a verb command ("off": off, 关闭, turn off ...); empty for other commands."""
    verbs = verb_synonyms(command, capability)
    if verbs is None:
        return frozenset()
    chinese, english = verbs
    return frozenset(t for t in (tokens(command), *map(tokens, chinese.split()), *map(tokens, english.split(",")))
                     if t)


_VERBS = tuple(set().union(*(verb_phrases(command, "media") for command in VERB_SYNONYMS),
                           {tokens(w) for w in (*_SET_SYNONYMS[0].split(), *_SET_SYNONYMS[1].split(","), "set")}))
# the words that ask for a value to be set ("设置", "调到", "set"): a command taking a value is meant
SET_VERBS = tuple({tokens(w) for w in (*_SET_SYNONYMS[0].split(), *_SET_SYNONYMS[1].split(","), "set")} - {()})
# the verb phrases of two or more tokens ("调到", "下一首", "turn on"): said, they name no device
VERB_RUNS = tuple(v for v in _VERBS if len(v) >= 2)


def subject_phrases(spec: CommandSpec, siblings: tuple[CommandSpec, ...]) -> tuple[tuple[str, ...], ...]:
    """The words of a command's description that say what it acts on, and no sibling command says.

    "设置空调风速" next to "设置空调模式" (whose values are 制冷, 自动 ...) yields 风速: a user who
    says "风速调到自动" names the fan-speed command even though 自动 is a value of the mode command.
    Verbs are left out (how a command is invoked is the vector channel's business), and so is any
    run a sibling's description or values contain, so "制冷" of "设置制冷温度" never competes with the
    mode value 制冷. A command that is its verb (on, off, open, pause ...) acts on the device itself
    and has no subject: "关闭电源" next to "打开" must not claim "打开电源". Returns the shortest such
    runs: two CJK characters or one Latin word at least.
    """
    if spec.command in VERB_SYNONYMS:
        return ()
    others = [tokens(t) for c in siblings if c.id != spec.id
              for t in (c.description, *(v.description for v in c.value_list), *(v.value for v in c.value_list))]
    found: list[tuple[str, ...]] = []
    for segment in split_on_phrases(tokens(spec.description), _VERBS):
        for n in range(1, len(segment) + 1):
            for i in range(len(segment) - n + 1):
                run = segment[i:i + n]
                if (n >= 2 or (run[0].isascii() and len(run[0]) >= 3)) \
                        and not any(contains(o, run) for o in others) and not any(contains(run, f) for f in found):
                    found.append(run)
    return tuple(found)


def subject_text(spec: CommandSpec, kind: set[str]) -> str:
    """What a command's description says it acts on, in its own words: the description without verbs
    or the words of the device's kind ("设置空调风速" -> 风速, "set AC fan speed" -> fan speed); empty
    for a command that is its verb."""
    if spec.command in VERB_SYNONYMS:
        return ""
    return join_tokens([t for segment in split_on_phrases(tokens(spec.description), _VERBS) for t in segment
                        if t not in kind])
