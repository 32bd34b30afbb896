"""Fuzzy matching of device names and room names inside an utterance, for any language.

Chinese is compared character by character, other scripts word by word (lower-cased, plural "s"
dropped), so "打开老伙计" finds "客厅老伙计" and "kitchen lights" finds "Kitchen light" without a
synonym table. Used by the keyword channel of the command index and by the no-LM parser.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[a-z0-9]+")


@lru_cache(maxsize=8192)
def tokens(text: str) -> tuple[str, ...]:
    """CJK characters and normalised Latin words/numbers, in order (remembered: one utterance's parse, screen,
    search and plan read the same texts again and again)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return tuple(_stem(t) for t in _TOKEN.findall(text))


def join_tokens(toks: Sequence[str]) -> str:
    """Tokens back to text: no space between CJK characters, one between words."""
    return re.sub(r"(?<=[\u3400-\u9fff]) (?=[\u3400-\u9fff])", "", " ".join(toks))


def _stem(token: str) -> str:
    if len(token) >= 3 and token.isalpha() and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(tuple(haystack[i:i + n]) == tuple(needle) for i in range(len(haystack) - n + 1))


def contains_words_in_order(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """Whether the needle's words all occur in the haystack, in order, others allowed between them: "hue
    spot" in "hue ambiance spot". For Latin words only; a Chinese character in order means nothing."""
    rest = iter(haystack)
    return bool(needle) and all(w.isascii() for w in needle) and all(w in rest for w in needle)


def remove_phrases(toks: Sequence[str], phrases: Iterable[Sequence[str]]) -> tuple[str, ...]:
    """Drop every occurrence of each phrase (longest phrases first)."""
    out = list(toks)
    for phrase in sorted((tuple(p) for p in phrases if p), key=len, reverse=True):
        n, i = len(phrase), 0
        while i + n <= len(out):
            if tuple(out[i:i + n]) == phrase:
                del out[i:i + n]
            else:
                i += 1
    return tuple(out)


def phrase_mask(toks: Sequence[str], phrases: Iterable[Sequence[str]]) -> list[bool]:
    """Per token: whether it lies inside an occurrence of one of the phrases."""
    covered = [False] * len(toks)
    starting = _by_first_token(phrases) if isinstance(phrases, tuple) else _by_first_token.__wrapped__(phrases)
    for i, tok in enumerate(toks):  # only the phrases a token starts are tried there
        for phrase in starting.get(tok, ()):
            n = len(phrase)
            if tuple(toks[i:i + n]) == phrase:
                covered[i:i + n] = [True] * n
    return covered


@lru_cache(maxsize=16)
def _by_first_token(phrases: Iterable[Sequence[str]]) -> dict[str, tuple[tuple[str, ...], ...]]:
    """The phrases (each once) by their first token: a fixed list of phrases (the verb runs) is indexed once."""
    starting: dict[str, dict[tuple[str, ...], None]] = {}
    for p in phrases:
        if p:
            starting.setdefault(p[0], {})[tuple(p)] = None
    return {first: tuple(found) for first, found in starting.items()}


def split_on_phrases(toks: Sequence[str], phrases: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
    """The runs of tokens left between occurrences of the phrases ("卧室的灯" without 的, 灯: 卧室)."""
    runs: list[tuple[str, ...]] = []
    current: list[str] = []
    for tok, cut in zip(toks, phrase_mask(toks, phrases), strict=True):
        if not cut:
            current.append(tok)
        elif current:
            runs.append(tuple(current))
            current = []
    if current:
        runs.append(tuple(current))
    return runs


def heaviest_common_run(a: Sequence[str], b: Sequence[str], weight: Mapping[str, float],
                        single_cap: float = float("inf")) -> float:
    """Total weight of the heaviest contiguous token run shared by a and b.

    A run of one Chinese character counts at most `single_cap`: one shared character ("调" of 空调
    in "调到") is weak evidence however rare it is among labels. A whole word ("Sunny") is not.
    """
    best = 0.0
    prev = [(0.0, 0)] * (len(b) + 1)
    for x in a:
        cur = [(0.0, 0)] * (len(b) + 1)
        wx = weight.get(x, 1.0)
        for j, y in enumerate(b, start=1):
            if x == y:
                total, length = prev[j - 1][0] + wx, prev[j - 1][1] + 1
                cur[j] = (total, length)
                single_char = length == 1 and not x.isascii()
                best = max(best, min(total, single_cap) if single_char else total)
        prev = cur
    return best


def name_similarity(label: Sequence[str], utterance: Sequence[str], weight: Mapping[str, float] | None = None,
                    specificity: float = 0.0) -> float:
    """How well the utterance names this label (0..1).

    The share of the label's weight covered by its heaviest run found in the utterance; a label
    lighter than `specificity` counts as that heavy: with IDF weights, "灯" (in half the labels)
    fully covers the label "车库灯" once its room is removed, yet names nothing specific.
    """
    if not label or not utterance:
        return 0.0
    weight = weight or {}
    total = sum(weight.get(t, 1.0) for t in label)
    return heaviest_common_run(label, utterance, weight, single_cap=1.0) / max(total, specificity)


@lru_cache(maxsize=4096)
def phrase_pattern(phrase: tuple[str, ...]) -> re.Pattern:
    """A token phrase as it stands in text: CJK characters with any spacing between them, Latin words with any
    separator and an optional plural, never inside a longer word."""
    parts = [re.escape(t) if not t.isascii() else rf"(?<![a-z0-9]){re.escape(t)}(?:e?s)?(?![a-z0-9])" for t in phrase]
    return re.compile(r"[\s\W_]*".join(parts), re.IGNORECASE)
