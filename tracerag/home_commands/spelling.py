"""A word of the home's misspelt by one letter, read as that word: "frnt door" is the Front Door, "kitchn door
unlock" the Kitchen Door, "preheat the ovn" the Oven, 卷帘们 the 卷帘门.

People type fast. A device's word said one letter short, or with two letters swapped, names nothing, and a clear
ask is then refused. Only what can be nothing else is read again:

- an English word of three letters or more that is no word of this home (its labels, rooms, words for kinds)
  and no common English word, one letter short of exactly one such word of four letters or more, or with two
  letters swapped in it ("ovn": oven; "unlok" of the verbs of a sensitive ask too), or, of eight letters or
  more, with one letter wrong ("serberus": Cerberus). A letter too many or a different letter in a shorter word is
  left alone ("movers" is never "covers"), and so is a common word ("all" is never "hall");
- an English word that is two words said together in a label or room of this home ("the gatehouse" of the Gate
  House, "backdoor" of the Back Door), read as those two words;
- a Chinese character that sounds like the one a device's name has, picked by mistake from a pinyin input
  method's list (卷帘们 for 卷帘门, 保险贵 for 保险柜, 德试曼 for 德施曼, 烤路 for 烤炉): where three characters
  said are no run of a label or a word for a kind, and with one of them swapped for one of the same sound are
  exactly one run of three of a label; or are a label of two or a word for a kind so (no numeral is ever
  swapped). The sounds are each character's usual reading without its tone (``data/pinyin.txt``), heard as an
  input method's fuzzy setting hears them (感因门: 感应门).
"""

from __future__ import annotations

import re
import weakref
from functools import lru_cache
from pathlib import Path

from .category_words import CATEGORY_WORDS
from .device_files import LABEL_MAX
from .text_match import tokens

_WORD = re.compile(r"[A-Za-z]{3,}")
_LONG = 8  # letters, from which one wrong letter still tells a word of the home ("certain" is no "curtain")
# the verbs of a sensitive ask, read again where misspelt ("unlok", "disram")
_SENSITIVE_VERBS = frozenset({"unlock", "disarm", "open"})
_FUNCTION_CHARACTERS = frozenset("忘是不没了的在有把给让被和也都就还要想")
_NUMERALS = frozenset("零〇一二两三四五六七八九十百千万亿")  # "十度", "百分之": a number is never a misspelling
_PINYIN = Path(__file__).with_name("data") / "pinyin.txt"
# common English words that are one letter short of a word a home may use ("all" of hall, "her" of here)
_COMMON = frozenset("""
a about above after again all also am an and any are as ask at away back be been before being below between
both but by can come could day did do does done down each else even ever every few find first for from get go
going got had has have he her here him his how i if in into is it its just keep know last leave let like little
long look made make many may me more most much must my need never new next no not now of off oh ok okay old on
once one only or other our out over own part please put quite really right same say see set she should show so
some still such take than thanks that the their them then there these they thing think this those though three
through time to too turn two under until up upon us use very want was way we well were what when where which
while who why will with would yes yet you your yours ten set sat hat bat cat car bar far tar war sun fun run
gun gum hum sum bus but cut hut nut put rut tub cub rub sub pub dad mad bad sad pad lad fad tad ran pan van can
man ban tan fan win bin din fin pin sin tin kin led bed red fed wed net bet get jet let met pet set vet wet yet
dog fog hog log jog bog cog hot lot not pot rot dot got cot tot box fox lox pox mix fix six sit bit fit hit kit
lit pit wit dim rim him aim air fair hair pair lair bear dear fear gear hear near rear tear wear year
arm disarm close open stop start lock unlock shut raise lower lift mute unmute play pause resume skip dim
brighten heat cool warm chill fire light sound silence kill cut flip power boot run keep make pull push roll draw
switch toggle enable disable activate deactivate set adjust change increase decrease boost drop reduce raise
bring send call ring buzz wake sleep rest wash dry bake cook boil brew fill empty drain water feed clean vacuum
mop sweep charge plug watch listen tune record show hide move slide tilt spin fan blow vent air heat
high low mid max min full half bright dark warm cold hot loud quiet soft hard fast slow late early
morning noon evening night tonight today tomorrow home away back front side rear top bottom left right
middle inside outside upstairs downstairs please thanks thank sorry hey hello hi yo okay sure
beside besides behind beneath below above beyond across along around against among toward towards facing
opposite near nearby next over onto into within without underneath upon atop past round
""".split())


def corrected(index, text: str) -> str:
    """The text with each misspelt word of this home read as it (see the module docstring); as said where none."""
    if text.isascii():
        return _WORD.sub(lambda m: _english(index, m.group(0)), text) if _WORD.search(text) else text
    text = _WORD.sub(lambda m: _english(index, m.group(0)), text)
    return _chinese(index, text)


def _english(index, word: str) -> str:
    lower = word.lower()
    vocabulary = home_words(index)
    if lower in vocabulary or lower in _COMMON or lower.rstrip("s") in vocabulary:
        return word
    pairs = home_pairs(index)
    split = {f"{lower[:i]} {lower[i:]}" for i in range(3, len(lower) - 2) if (lower[:i], lower[i:]) in pairs}
    if len(split) == 1:
        return split.pop()
    found = {w for w in _one_letter_short(lower) | _swapped(lower)
             if (w in vocabulary or w in _SENSITIVE_VERBS) and len(w) >= 4}
    if not found and len(lower) >= _LONG:  # "cerburus", "serberus": a long name with one letter wrong
        stem = "".join(tokens(lower))  # as the home's words are read ("cerberus": cerberu)
        found = {w + lower[len(stem):] for w in _built(index)[4].get(len(stem), ())
                 if sum(a != b for a, b in zip(w, stem, strict=True)) == 1}
    return found.pop() if len(found) == 1 else word


def _one_letter_short(word: str) -> set[str]:
    """The words ``word`` is one letter short of, as keys to look up: every word with one letter put back."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return {word[:i] + c + word[i:] for i in range(len(word) + 1) for c in letters}


def _swapped(word: str) -> set[str]:
    return {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)}


def _chinese(index, text: str) -> str:
    runs, by_sound = home_runs(index), _runs_by_sound(index)
    sounds = _sounds()
    chars = list(text)
    for n in (3, 2):  # a label's three characters before a word's two ("保险贵": 保险柜, not 险柜 alone)
        for i in range(len(chars) - n + 1):
            said = "".join(chars[i:i + n])
            if said in runs or any(ch in _NUMERALS for ch in said):
                continue
            # heard loosely only over three characters: 门升 is no 门神
            sound = tuple((_loose(sounds.get(ch)) if n == 3 else sounds.get(ch)) for ch in said)
            meant = {run for run in by_sound.get(sound, ()) if sum(a != b for a, b in zip(run, said, strict=True)) == 1}
            if len(meant) != 1:
                continue
            run = meant.pop()
            k = next(k for k in range(n) if run[k] != said[k])
            # a character that is a word of the home with its neighbour is as meant ("温控调" is no 恒温空调's
            # 温空调), and so is one of the words a sentence is made of ("忘关了" is no 网关)
            beside = "".join(chars[max(0, i + k - 1):i + k + 2])
            if said[k] in _FUNCTION_CHARACTERS or any(beside[j:j + 2] in runs for j in range(len(beside) - 1)):
                continue
            chars[i:i + n] = run
    return "".join(chars)


@lru_cache(maxsize=1)
def _sounds() -> dict[str, str]:
    """Each common Chinese character's usual sound, without its tone (``data/pinyin.txt``)."""
    sounds: dict[str, str] = {}
    for line in _PINYIN.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            sound, chars = line.split(" ", 1)
            sounds.update(dict.fromkeys(chars, sound))
    return sounds


_ALIKE = ((re.compile(r"^([zcs])h"), r"\1"), (re.compile(r"^n(?=[aeiouv])"), "l"), (re.compile(r"(?<=[aei]n)g$"), ""))


@lru_cache(maxsize=2048)  # a few hundred sounds, read for every character of every Chinese utterance
def _loose(sound: str | None) -> str | None:
    """A sound as an input method's fuzzy setting hears it, the pairs many speakers do not tell apart (zh/z, ch/c,
    sh/s, n/l, ang/an, eng/en, ing/in): 感因门 is the 感应门."""
    if sound is None:
        return None
    for pattern, into in _ALIKE:
        sound = pattern.sub(into, sound)
    return sound


def _runs_by_sound(index) -> dict[tuple[str | None, ...], frozenset[str]]:
    """The home's Chinese runs (``home_runs``) by how they sound."""
    return _built(index)[3]


_BUILT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # per index: (its words, its runs)


def home_words(index) -> frozenset[str]:
    """The English words of the home: of its labels, rooms and floors, and the words for kinds."""
    return _built(index)[0]


def home_runs(index) -> frozenset[str]:
    """The runs of two or three characters of the home's Chinese labels and of the words for kinds."""
    return _built(index)[1]


def home_pairs(index) -> frozenset[tuple[str, str]]:
    """The pairs of English words said one after the other in the home's labels and rooms."""
    return _built(index)[2]


def _built(index) -> tuple[frozenset[str], frozenset[str], frozenset[tuple[str, str]], dict, dict]:
    """Read once per index: its English words, its Chinese runs, its pairs of English words, its runs by sound,
    and its long English words by length (a long word misspelt is compared with those of its length only)."""
    built = _BUILT.get(index)
    if built is None:
        runs = _runs_of(index)
        sounds = _sounds()
        by_sound: dict[tuple[str | None, ...], set[str]] = {}
        # what a wrong character is read back to: three characters of a label, a label of two ("烤炉") or a word
        # for a kind ("烤箱"); any two of a longer label would take common words ("电视" is no 配电室's 电室)
        whole = {d.label.strip() for d in index.home.devices} | _chinese_kind_words()
        for run in (r for r in runs if len(r) == 3 and not r.isascii() or r in whole):
            by_sound.setdefault(tuple(sounds.get(ch) for ch in run), set()).add(run)
            if len(run) == 3:
                by_sound.setdefault(tuple(_loose(sounds.get(ch)) for ch in run), set()).add(run)
        words = _words_of(index)
        by_length: dict[int, list[str]] = {}
        for word in words:
            if len(word) >= _LONG - 1:  # a stem ("cerberu") is a letter short
                by_length.setdefault(len(word), []).append(word)
        built = _BUILT[index] = (words, runs, _pairs_of(index),
                                 {sound: frozenset(r) for sound, r in by_sound.items() if None not in sound}, by_length)
    return built


def _pairs_of(index) -> frozenset[tuple[str, str]]:
    home = index.home
    names = [d.label[:LABEL_MAX] for d in home.devices] + list(home.rooms)
    pairs = set()
    for name in names:
        words = tokens(name.lower())
        pairs.update((a, b) for a, b in zip(words, words[1:], strict=False)
                     if a.isascii() and b.isascii() and a.isalpha() and b.isalpha() and len(a) >= 3 and len(b) >= 3)
    return frozenset(pairs)


def _words_of(index) -> frozenset[str]:
    home = index.home
    said = {w for d in home.devices for w in tokens(f"{d.label[:LABEL_MAX]} {d.room}".lower())
            if w.isascii() and w.isalpha()}
    said |= {w for r in (*home.rooms, *home.floors.values()) for w in tokens(r.lower()) if w.isascii() and w.isalpha()}
    return frozenset(said | _kind_words())


@lru_cache(maxsize=1)
def _chinese_kind_words() -> frozenset[str]:
    return frozenset(w for chinese, _ in CATEGORY_WORDS.values() for w in chinese)


@lru_cache(maxsize=1)
def _kind_words() -> frozenset[str]:
    return frozenset(w for _, english in CATEGORY_WORDS.values() for phrase in english for w in phrase.split()
                     if w.isalpha())


def _runs_of(index) -> frozenset[str]:
    """The runs of two or three characters of the home's Chinese labels and of the words for kinds."""
    names = [d.label[:LABEL_MAX] for d in index.home.devices] + [w for chinese, _ in CATEGORY_WORDS.values()
                                                                  for w in chinese]
    return frozenset(name[i:i + n] for name in names for n in (2, 3) for i in range(len(name) - n + 1)
                     if not name[i:i + n].isascii())
