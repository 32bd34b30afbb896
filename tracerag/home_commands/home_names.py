"""The names in one home as an utterance says them: device labels and name words, landmarks, rooms said.

A device is named by its label said whole ("Office Blinds kab"), by the words of its name ("风扇" of 小米风扇,
its ``name_key``: no room words, fillers or ordinals), or by a run of them; a name said only to say where
something is ("the blinds by the patio door") is a landmark and names nothing itself. The rooms an utterance
names are read here too, because a room word inside a device name said is no room (卧室 of 卧室小夜灯); the
rooms' own vocabulary is ``room_words``. ``HomeNames`` is built once per index; what it reads of an
utterance is remembered for the utterances asked most recently.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from functools import cached_property, lru_cache
from itertools import islice

import numpy as np

from ..signatures.query_ir import QueryIR
from .category_words import category_name_words, is_kind_word, locative, normalised
from .command_docs import VERB_RUNS
from .command_table import CommandTable
from .home import Home
from .index_params import IndexParams
from .name_index import NameIndex, PhraseIndex
from .numerals import numbered_in_digits
from .room_words import ROOM_KINDS, RoomWords
from .text_match import contains, join_tokens, phrase_mask, phrase_pattern, remove_phrases, tokens

# Function characters/words that carry no name information ("把客厅的灯打开" -> 客厅, 灯).
FILLER_TOKENS = frozenset("的 了 把 将 给 帮 我 请 一 下 都 吧 呢 啊 个 些 所 有 全 部 其 他 除 外 以".split()) | {
    "the", "a", "an", "please", "all", "every", "each", "my", "in", "of", "to", "and", "except", "but",
}

_MASKED = "|"  # stands in for a masked phrase: tokens() never yields it, so no name run spans it
# The name index reads at most NAME_TOKENS_MAX words of a label and keeps runs of at most NAME_RUN_MAX of
# them (plus each whole name), so it grows linearly with the labels, not with the cube of their length.
# Real names are far shorter: the bundled homes' longest has 6 words.
NAME_TOKENS_MAX = 64
NAME_RUN_MAX = 8
LABEL_SAID_CHARS = 200  # longer labels are not looked for whole in an utterance
ROOMS_SAID_CACHE = 256  # utterances whose rooms an index remembers
_IN_AT = re.compile(r"\bin\s+(?:at|by)\s+(?:the\s+)?$")


# words after which an English label says where its device is ("Light over the Fryer", "Shades by the Door")
_LABEL_PLACE_WORDS = frozenset({"over", "above", "beside", "by", "near", "next", "under", "below", "behind",
                                "opposite", "facing", "outside", "at"})


def _before_place(key: tuple[str, ...]) -> tuple[str, ...]:
    """A name's words up to where it starts to say where the device is (all of them where it does not)."""
    for i, word in enumerate(key):
        if i and word in _LABEL_PLACE_WORDS:
            return key[:i]
    return key


_RELATIVE_FLOORS = frozenset(tokens(w) for w in ("upstairs", "downstairs", "楼上", "楼下"))
# what is done to an appliance and never to a room
_DEVICE_ONLY_VERB = re.compile(r"\b(?:pre-?\s?heat\w*|bake|roast|broil)\b|预热", re.I)


class HomeNames:
    """Device names and labels of one home, and what an utterance says of them and of its rooms."""

    def __init__(self, home: Home, table: CommandTable, rooms: RoomWords, params: IndexParams,
                 memo: Callable[[tuple, Callable], object]):
        self.home, self.table, self.rooms, self.params = home, table, rooms, params
        self._memo = memo  # the index's memory of what one utterance was asked (``CommandIndex.memo``)
        self._rooms_said: dict[str, list[str]] = {}
        self._landmarks_said: dict[str, tuple[str, list[tuple[str, ...]]]] = {}
        self._name_ends: dict[int, dict[tuple[str, ...], list[int]]] = {}  # per run length: a name's last words
        self.label_ordinals = [frozenset(t for t in tokens(d.label) if t.isdigit()) for d in home.devices]
        self.name_keys = [self.name_key(d.label) for d in home.devices]
        # every run of two to NAME_RUN_MAX tokens inside a name, and each whole name: "风扇" of 小米风扇 is
        # a device word too
        self.name_runs = {key[i:j] for key in set(self.name_keys) for i in range(len(key))
                          for j in range(i + 2, min(i + NAME_RUN_MAX, len(key)) + 1)}
        self.name_runs.update(key for key in self.name_keys if len(key) >= 2)
        self.name_index = NameIndex(self.name_keys, self.label_ordinals)
        self.carrying = self.name_index.carrying  # (word) -> per device: whether its name contains the word
        self._whole_names = frozenset(key for key in self.name_keys if key)
        labelled: dict[tuple[str, ...], list[int]] = defaultdict(list)  # a label's words -> its devices
        for i, d in enumerate(home.devices):
            labelled[content(tokens(d.label))].append(i)
        self._labelled = dict(labelled)
        self._labels = frozenset(self._labelled)
        self._pieces: dict[tuple[str, int], frozenset[str]] = {}  # (kind, size) -> ``_label_pieces``
        self.name_phrases = PhraseIndex(self.name_keys)
        self.run_phrases = PhraseIndex(self.name_runs)

    def name_key(self, label: str) -> tuple[str, ...]:
        """The words of a label that name the device: no room words, fillers or ordinal numbers (the first
        ``NAME_TOKENS_MAX`` of them)."""
        # room words found before fillers go: the room "Suite A" of "Suite A Door" holds a filler word
        said = tuple(islice(tokens(label), 4 * NAME_TOKENS_MAX))  # a name is its first words: a 1 MB label is too
        full = tuple(islice((t for t in content(said) if not t.isdigit()), NAME_TOKENS_MAX))
        key = tuple(islice((t for t in content(remove_phrases(said, self.rooms.phrases.possible_in(said)))
                            if not t.isdigit()), NAME_TOKENS_MAX))
        return remove_phrases(key, self.rooms.phrases.possible_in(key)) or full

    # ----- rooms said -------------------------------------------------------------------------

    def mentioned_rooms(self, utterance: str) -> list[str]:
        """Rooms named in the utterance (``_read_rooms``), read once per utterance: the parse, the screen and the
        ranking each ask (the list is shared: not to be changed)."""
        found = self._rooms_said.get(utterance)
        if found is None:
            if len(self._rooms_said) >= ROOMS_SAID_CACHE:
                self._rooms_said.clear()
            found = self._rooms_said[utterance] = self._read_rooms(utterance)
        return found

    def _read_rooms(self, utterance: str) -> list[str]:
        """Rooms named in the utterance, by full name or short form (餐厅 for 一楼餐厅).

        A short form means every room of its kind: "所有卫生间" is 一楼卫生间, 二楼卫生间 and 主卫. So does
        a word for a kind of room where no room is called so ("卫生间", "洗手间" where the bathrooms are
        主卫 and 客卫), unless it is part of a device name said (卧室 of the lamp 卧室小夜灯)."""
        utterance = numbered_in_digits(utterance)  # "room fourteen": Room 14
        rooms = self.rooms
        full_names = rooms.full_names
        found: dict[str, None] = {}  # in order, each once
        said_rooms = self._outside_labels(rooms.words_said(utterance), utterance)
        meant_by = [rooms.aliases[alias] if alias in full_names else
                    (*rooms.aliases[alias], *rooms.meant_by(alias)) for alias in said_rooms]
        for meant in meant_by:
            # a floor said with a room on it ("the Living Room blinds downstairs", "一楼客厅"): the room
            if not any(set(other) < set(meant) for other in meant_by):
                found.update(dict.fromkeys(meant))
        said = tokens(utterance)
        kinds = [(word, kind) for word, kind in ROOM_KINDS if contains(said, word)]
        if kinds:
            inside = [*said_rooms, *self.name_phrases.found_in(said)]  # whole names only: 卧室 of 卧室的灯 is a room
            for word, kind in kinds:
                if not any(contains(other, word) for other in inside):
                    found.update(dict.fromkeys(rooms.meant_by(kind)))
        return list(found)

    def _outside_labels(self, aliases: list[tuple[str, ...]], utterance: str) -> list[tuple[str, ...]]:
        """The room words said, less one said inside a label said whole beside another room word of that label
        whose room its device is in ("the wren lounge light": Wren Cottage, not the Living Room that "lounge" also
        names; "打开客厅老伙计" keeps 客厅, its only room word)."""
        if not aliases:
            return aliases
        said = tokens(utterance)
        aliases = [alias for alias in aliases if not self._label_more_than_room(alias, said, utterance)]
        meant = {alias: set(self.rooms.aliases.get(alias, ())) for alias in aliases}
        dropped = []
        for label in self.label_phrases.found_in(said):
            rooms = {self.home.devices[d].room for d in self.devices_labelled[label]}
            inside = [alias for alias in aliases if contains(label, alias) and len(alias) < len(label)]
            if any(rooms & meant[alias] for alias in inside):
                dropped += [alias for alias in inside if not rooms & meant[alias]]
            elif len(aliases) == 1:  # a floor said only inside a label, where its device is not: "unlock the
                # upstairs door" of the Upstairs Door in the ground-floor stairwell names the door, not the floor
                dropped += [alias for alias in inside if self._a_floor(alias) and not rooms & meant[alias]]
        return [alias for alias in aliases if alias not in dropped]

    @cached_property
    def _floor_words(self) -> frozenset[tuple[str, ...]]:
        """The floors the home records, as said (tokens), and those said relatively (upstairs, 楼下)."""
        return _RELATIVE_FLOORS | {tokens(floor) for floor in set(self.home.floors.values())}

    def _a_floor(self, alias: tuple[str, ...]) -> bool:
        """Whether a room word said is a floor."""
        return alias in self._floor_words

    def _label_more_than_room(self, alias: tuple[str, ...], said: tuple[str, ...], utterance: str) -> bool:
        """Whether a room word said is the whole label of a device of another room, with no word for another kind
        said beside it and a verb no room takes: "preheat the oven" is the Oven, not the rehearsal room called The
        Oven ("the lights in the oven" are that room's; "fire up the oven" may be either)."""
        if not _DEVICE_ONLY_VERB.search(utterance):
            return False
        label = tuple(w for w in alias if w != "the")  # the room The Oven, the label Oven
        labelled = self.devices_labelled.get(label)
        if labelled is None or label not in set(self.label_phrases.found_in(said)):
            return False
        rooms = set(self.rooms.aliases.get(alias, ()))
        if any(self.home.devices[d].room in rooms for d in labelled):
            return False
        return not any(is_kind_word(w) for w in remove_phrases(said, [label]))

    def excepted_devices(self, ir: QueryIR) -> list[str]:
        """The scope_exclude entries that name no room of the home: names of single devices excepted, whole or a
        run of one ("the workshop one": the Workshop Garage Door)."""
        # a room first: 卧室 is the bedrooms, not part of the lamp 卧室小夜灯
        rooms = self.rooms
        return [name for name in ir.scope_exclude if name not in rooms.code
                and (rooms.tokens.get(name) or tokens(name)) not in rooms.aliases
                and (self.name_key(name) in self._whole_names or content(tokens(name)) in self._labels
                     or (not rooms.names_a_room(name) and bool(self.name_key(name))
                         and self.carrying(self.name_key(name)).any()))]

    def said_rooms(self, ir: QueryIR, utterance: str) -> list[str]:
        """The rooms the utterance names, outside the names of devices it excepts ("书房台灯除外")."""
        return self.mentioned_rooms(_without_excluded(self.excepted_devices(ir), utterance))

    def name_spans(self, utterance: str) -> tuple[tuple[int, int], ...]:
        """Where the utterance says a device label or a room name that holds a number ("Curtain 1A", 筒灯3,
        "Bedroom 2"): never a value."""
        return self._memo(("name_spans", utterance), lambda: self._name_spans(utterance))

    def _name_spans(self, utterance: str) -> tuple[tuple[int, int], ...]:
        said = tokens(utterance)
        found = [p for p in (*self.label_phrases.found_in(said), *self.rooms.phrases.found_in(said))
                 if any(ch.isdigit() for t in p for ch in t)]
        return tuple((m.start(), m.end()) for phrase in found for m in phrase_pattern(phrase).finditer(utterance))

    # ----- names said -------------------------------------------------------------------------

    @staticmethod
    def _without_verbs(said: tuple[str, ...]) -> tuple[str, ...]:
        """The tokens with verb phrases masked: 调 of "调到" names no 空调."""
        return tuple(_MASKED if verb else t for t, verb in zip(said, phrase_mask(said, VERB_RUNS), strict=True))

    def without_landmarks(self, utterance: str) -> str:
        """The utterance (lower case) with each device name it says only to say where something is masked: "open
        the blinds by the patio door" refers to the blinds, "门锁旁的灯" to a light (``category_words.locative``);
        never inside a label said whole (the lamp labelled 门锁旁的灯 is named so)."""
        return self._landmarks(utterance)[0]

    def landmarks(self, utterance: str) -> list[tuple[str, ...]]:
        """The device names the utterance says only to say where something is ("the patio door" of "the blinds by
        the patio door"): they say which of the devices referred to is meant, and name nothing themselves."""
        return self._landmarks(utterance)[1]

    def _landmarks(self, utterance: str) -> tuple[str, list[tuple[str, ...]]]:
        found = self._landmarks_said.get(utterance)
        if found is None:
            if len(self._landmarks_said) >= ROOMS_SAID_CACHE:
                self._landmarks_said.clear()
            found = self._landmarks_said[utterance] = self._read_landmarks(utterance)
        return found

    def _read_landmarks(self, utterance: str) -> tuple[str, list[tuple[str, ...]]]:
        text = normalised(utterance)
        masked: list[tuple[str, ...]] = []
        said = tokens(text)
        labels = [m.span() for label in self.label_phrases.found_in(said)
                  for m in phrase_pattern(label).finditer(text)]
        words = {(t,) for t in said if t.isascii() and len(t) >= 3 and self.carrying((t,)).any()}
        phrases = {*self.label_phrases.found_in(said), *self.name_phrases.found_in(said),
                   *self.run_phrases.found_in(said), *words}
        for phrase in sorted(phrases, key=lambda p: (-len(p), p)):
            for m in phrase_pattern(phrase).finditer(text):
                inside = any(s <= m.start() and m.end() <= e and (s, e) != m.span() for s, e in labels)
                # a door's label said where someone is let in by it is no landmark ("buzz me in at the street door")
                by_it = phrase in self._labels and _IN_AT.search(text, 0, m.start()) is not None
                if locative(text, m.start(), m.end()) and not inside and not by_it:
                    text = text[:m.start()] + " " * (m.end() - m.start()) + text[m.end():]
                    masked.append(phrase)
        return text, masked

    def without_names(self, utterance: str) -> str:
        """The utterance with its landmarks and the labels it says whole masked: what is left says kinds of device
        and rooms, never a word of a name ("turn on the gas fireplace" says no gas, "后门灯" no door)."""
        text = self.without_landmarks(utterance)
        for label in sorted(self.label_phrases.found_in(tokens(text)), key=lambda p: (-len(p), p)):
            if label in self._naming_labels:
                text = phrase_pattern(label).sub(" · ", text)
        return text

    def name_scores(self, utterance: str, name_hint: str = "") -> np.ndarray:
        """Per device: how much of its name the utterance (or the name hint) contains, landmarks aside.

        An ordinal in the label ("筒灯3") that the utterance repeats adds a little, so the numbered
        device wins over its siblings without numbers deciding anything on their own.
        """
        spoken = content(self._without_verbs(tokens(self.without_landmarks(utterance))))
        queries = [remove_phrases(spoken, self.rooms.phrases.possible_in(spoken))]
        if name_hint:
            queries.append(content(tokens(name_hint)))
        return self.name_index.scores(queries, set(tokens(utterance)) | set(tokens(name_hint)),
                                      self.params.name_specificity)

    def devices_named(self, name: str) -> np.ndarray:
        """Per device: whether ``name`` refers to it: its full label ("Living Room Lamp", wherever it
        stands), else its name words in the rooms the name says ("书房台灯": the 台灯 of 书房), else its
        name words anywhere ("the desk lamp")."""
        said = content(tokens(name))
        if not said:
            return np.zeros(len(self.home.devices), dtype=bool)
        if said in self._labelled:  # read from the labels' words, not device by device
            labelled = np.zeros(len(self.home.devices), dtype=bool)
            labelled[self._labelled[said]] = True
            return labelled
        carriers = self.carrying(self.name_key(name))
        rooms = self.mentioned_rooms(name)
        in_rooms = carriers & self.rooms.devices_in(rooms) if rooms else carriers
        return in_rooms if in_rooms.any() else carriers

    def device_word(self, utterance: str, name_hint: str = "") -> tuple[str, ...]:
        """The name hint, else the longest device name or run of one the utterance says (verbs aside)."""
        if name_hint:
            return content(tokens(name_hint))
        spoken = self._without_verbs(tokens(utterance))
        said = self.run_phrases.found_in(spoken)
        return max(said, key=lambda run: (len("".join(run)), run)) if said else ()

    def category_words_said(self, said: tuple[str, ...]) -> set[str]:
        """The words of the said tokens that name one of the home's categories of two or more words
        in full ("air conditioners" of AirConditioner: tokens are singular already)."""
        found: set[str] = set()
        for category in self.table.categories:
            words = category_name_words(category)
            if len(words) > 1 and set(words) <= set(said):
                found.update(words)
        return found

    def carrying_before_place(self, run: tuple[str, ...]) -> np.ndarray:
        """Per device: its name carries ``run`` before any words that say where the device is ("key" of the Key
        Cabinet; not of the Lamp by the Key Cabinet)."""
        out = self.carrying(run).copy()
        for d in np.flatnonzero(out).tolist():
            out[d] = contains(_before_place(self.name_keys[d]), run)
        return out

    def name_ends_with(self, run: tuple[str, ...]) -> np.ndarray:
        """Per device: whether its name ends in ``run`` (the run is its head noun: "safe" of Office Safe, not of Safe
        Room Lamp), among the devices carrying it; a name that goes on to say where ends before it: the head of
        "Light over the Fryer" is the light, never the fryer."""
        ends = self._name_ends.get(len(run))
        if ends is None:
            ends = self._name_ends[len(run)] = defaultdict(list)
            for d, key in enumerate(self.name_keys):
                key = _before_place(key)
                if len(key) >= len(run):
                    ends[key[-len(run):]].append(d)
        out = np.zeros(len(self.home.devices), dtype=bool)
        out[ends.get(run, [])] = True
        return out

    def label_ends_with(self, run: tuple[str, ...]) -> np.ndarray:
        """Per device: whether its whole label, room words kept, ends in ``run`` and says more ("bay door" of the
        Loading Bay Door in the Loading Bay, whose name without its room is the door alone)."""
        return self._memo(("label ends", run), lambda: np.asarray(
            [len(key := _before_place(content(tokens(d.label)))) > len(run) and key[-len(run):] == run
             for d in self.home.devices], dtype=bool))

    # ----- labels said whole ------------------------------------------------------------------

    def labels_said(self, utterance: str) -> np.ndarray:
        """Per device (float, 0 or 1): its label is said whole, the label names one device (``_naming_labels``),
        no longer label said holds it ("台灯" is not said by "打开阳台灯", "儿童房窗帘" not by "儿童房窗帘 kab"), and
        it does not only say where ("the blinds by the patio door")."""
        found = self.label_phrases.found_in(tokens(utterance))
        said = np.zeros(len(self.home.devices), dtype=np.float32)
        for label in found:
            if label in self._naming_labels and not any(other != label and contains(other, label) for other in found):
                devices = self.devices_labelled[label]
                if not _said_where(utterance, self.home.devices[devices[0]].label):
                    said[devices] = 1.0
        return said

    def labels_named(self, utterance: str) -> np.ndarray:
        """Per device: its whole label is said (one device's or several's: "Garage Door" on each floor), not
        inside a longer label said."""
        found = self.label_phrases.found_in(tokens(utterance))
        out = np.zeros(len(self.home.devices), dtype=bool)
        for label in found:
            if not any(other != label and contains(other, label) for other in found):
                out[self.devices_labelled[label]] = True
        return out

    @cached_property
    def devices_labelled(self) -> dict[tuple[str, ...], list[int]]:
        """Each label's words -> its devices; a label of more than LABEL_SAID_CHARS characters is never said whole.
        A two-word English label whose last word is no word for a kind is said in either order ("the main water
        valve": Water Main), where the other order is no label itself."""
        out: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for i, device in enumerate(self.home.devices):
            if len(device.label) <= LABEL_SAID_CHARS and (words := tokens(device.label)):
                out[words].append(i)
        for words, devices in list(out.items()):
            if len(words) == 2 and all(w.isascii() and w.isalpha() for w in words) and not is_kind_word(words[1]) \
                    and words[::-1] not in out:
                out[words[::-1]] = devices
        return out

    @cached_property
    def label_phrases(self) -> PhraseIndex:
        return PhraseIndex(self.devices_labelled)

    @cached_property
    def _naming_labels(self) -> frozenset[tuple[str, ...]]:
        """The labels that name one device: one device's alone ("吸顶灯" of six is a kind of light), not a word for
        a kind, not a room and a kind ("阳台灯": what anyone says for the lights there) unless it is the only one
        of its kind there ("露台门", the terrace's one door)."""
        rooms, categories = self.table.device_rooms, self.table.device_categories
        alone = Counter(zip(rooms.tolist(), categories.tolist(), strict=True))
        return frozenset(words for words, devices in self.devices_labelled.items()
                         if len(devices) == 1 and not is_kind_word(join_tokens(words))
                         and (not self.generic(self.home.devices[devices[0]].label)
                              or alone[rooms[devices[0]], categories[devices[0]]] == 1))

    def says_a_narrower_kind(self, utterance: str, word: str, kind: str) -> bool:
        """Whether the utterance says a Chinese kind ``word`` inside a longer word some label of the kind holds:
        the word with the character before or after it ("台灯" of 台灯 and 卧室台灯, "灯带")."""
        said, w = compact(utterance), re.escape(word)
        pieces = self._label_pieces(kind, len(word) + 1)
        return any(m.group(1) in pieces for m in re.finditer(rf"(?=(\S{w}|{w}\S))", said))

    def _label_pieces(self, kind: str, size: int) -> frozenset[str]:
        """Every run of ``size`` characters in the labels of the kind's devices (spaces removed, lower case), read
        once per kind and size: a building's labels of one kind are hundreds of kilobytes to scan."""
        key = (kind, size)
        if key not in self._pieces:
            self._pieces[key] = frozenset(label[i:i + size] for label in self._labels_of_kind.get(kind, ())
                                          for i in range(len(label) - size + 1))
        return self._pieces[key]

    @cached_property
    def _labels_of_kind(self) -> dict[str, set[str]]:
        """Per category, its devices' labels (spaces removed, lower case)."""
        labels: dict[str, set[str]] = defaultdict(set)
        for device in self.home.devices:
            labels[device.category].add(compact(device.label))
        return dict(labels)

    def generic(self, label: str) -> bool:
        """A label that is a room and a word for its kind ("客厅空调", "Kitchen Light"): what anyone says for
        the devices of that kind there, whatever they are called, so it names no single one."""
        said = tokens(label)
        rooms = list(self.rooms.phrases.possible_in(said))
        return bool(rooms) and is_kind_word(join_tokens(remove_phrases(said, rooms)))

    def rooms_of_label(self, label: str) -> set[str]:
        """The rooms a generic label's room word names: "主卧电视" in a building whose three copies each have a
        二楼主卧 names three rooms, so the label (one device's alone) is that device's name, not an area."""
        rooms = self.rooms.phrases.possible_in(tokens(label))
        return {room for alias in rooms for room in self.rooms.aliases.get(alias, ())}

    @cached_property
    def compact_rooms(self) -> frozenset[str]:
        """The home's room names, ``compact``: read once, a building has thousands."""
        return frozenset(compact(r) for r in self.home.rooms)

    @cached_property
    def devices_by_label(self) -> dict:
        """Each label (``compact``) -> its devices."""
        out = defaultdict(list)
        for device in self.home.devices:
            out[compact(device.label)].append(device)
        return out


def content(toks: tuple[str, ...]) -> tuple[str, ...]:
    """The tokens that may name something: no ``FILLER_TOKENS``."""
    return tuple(t for t in toks if t not in FILLER_TOKENS)


def _without_excluded(names: list[str], utterance: str) -> str:
    """The utterance without the names of the devices it excepts: the room of "书房台灯除外" is no scope."""
    for name in names:
        utterance = re.sub(re.escape(name), " ", utterance, flags=re.IGNORECASE)
    return utterance


def _said_where(utterance: str, label: str) -> bool:
    """Whether the label stands in the utterance only to say where ("the blinds by the patio door", "门旁边的灯")."""
    text = normalised(utterance)
    found = re.search(r"\s*".join(map(re.escape, compact(label))), text)
    return found is not None and locative(text, found.start(), found.end())


def compact(text: str) -> str:
    """Lower case without spaces: how a label is found in an utterance whatever its spacing."""
    return re.sub(r"\s+", "", text).lower()


def says_label(utterance: str, label: str) -> bool:
    """``label`` occurs in ``utterance`` as a whole, whatever its spacing: "筒灯1" is not said by "筒灯10",
    "bed" not by "bedroom"; "Pendant 2" is by "the pendant 2 in the kitchen". A label longer than the
    utterance is never compiled (a 1 MB label would take minutes)."""
    if compact(label) not in compact(utterance):
        return False
    return _label_pattern(label).search(utterance.lower()) is not None


@lru_cache(maxsize=4096)
def _label_pattern(label: str) -> re.Pattern:
    body = r"\s*".join(re.escape(ch) for ch in label if not ch.isspace())
    before = r"(?<![a-z0-9])" if label[:1].isascii() and label[:1].isalnum() else ""
    after = r"(?![a-z0-9])" if label[-1:].isascii() and label[-1:].isalnum() else ""
    return re.compile(before + body + after)
