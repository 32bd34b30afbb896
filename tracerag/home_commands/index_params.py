"""The command index's own knobs (``IndexParams``): channel weights, bulk-plan evidence and limits.

Every part of the index reads them: the scoring channels their weights, ranking the repeat penalty, bulk
planning its evidence window and target limits. ``optimize.py tune commands`` searches them without an LM,
and a compiled artifact records them (``artifacts``).
"""

from __future__ import annotations

from pydantic import BaseModel


class IndexParams(BaseModel):
    """The retriever's own knobs; `optimize.py tune commands` searches them without an LM."""

    w_vector: float = 1.0
    w_lexical: float = 0.35
    w_within_device: float = 0.5  # how much a command must beat the device's other commands
    w_argument: float = 0.8
    w_subject: float = 0.8
    w_verb: float = 0.8  # a verb command the user names by its own words beats its unnamed siblings
    w_name: float = 0.6  # with a category: the gate already did most of the work
    w_name_keyword_first: float = 1.2  # no category: custom names lead
    w_room: float = 0.8
    repeat_penalty: float = 0.05  # per earlier command of the same device in the ranking
    options_window: int = 80  # rows of evidence for bulk command choice (50-100)
    options_per_command: int = 3  # at most M hits per command, so big device groups do not win by count
    options_top_n: int = 5
    option_temperature: float = 0.03
    w_coverage: float = 0.2  # prefer a command the whole target set supports
    fallback_margin: float = 0.15  # devices lacking the chosen command take an option this close to it
    min_top1_ratio: float = 0.5
    min_margin: float = 0.15
    name_specificity: float = 4.0  # IDF weight a name match needs to count in full
    similar_subject: float = 0.6  # cosine from which an unknown word names a subject (风量 for 风速)
    kind_said_name: float = 0.7  # the least name score of a device whose kind the utterance names ("风扇": 落地扇)
    kind_word_share: float = 0.4  # a name word this common in its category names the kind (bulk hints, subjects)
    category_share: float = 0.75  # share of name evidence one category needs to be "established"
    max_targets: int = 200
    max_groups: int = 20
    batch_size: int = 20
