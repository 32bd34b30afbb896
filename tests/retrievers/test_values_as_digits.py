"""Numbers said in words reach the commands as digits; words that are no value keep their words."""

from __future__ import annotations

import pytest

from tracerag.retrievers.plain_verbs import plain_verbs
from tracerag.retrievers.spelled_numbers import with_digits

VALUES = [
    ("the brightness to ninety-five %", "the brightness to 95 %"),
    ("increase brightness to forty-four percent", "increase brightness to 44 percent"),
    ("set it to five percent", "set it to 5 percent"),
    ("make awnings to zero", "make awnings to 0"),
    ("one hundred percent", "100 percent"),
    ("twenty two degrees", "22 degrees"),
    ("百分之六十三", "百分之63"),
    ("亮度为四十", "亮度为40"),
    ("将客厅调成三十一", "将客厅调成31"),
    ("调到二十六度", "调到26度"),
    ("风速调到三档", "风速调到3档"),
    ("开到十五", "开到15"),
    ("设置为一百", "设置为100"),
]
KEPT = ["turn on one light", "one of the lamps", "调到一半", "打开一楼的灯", "调亮一点", "下一首", "调到二十楼",
        "两个灯", "开一下空调", "上一台", "give me a minute"]


@pytest.mark.parametrize("said,read", VALUES)
def test_a_number_said_in_words_as_a_value_becomes_digits(said, read):
    assert with_digits(said) == read


@pytest.mark.parametrize("said", KEPT)
def test_words_that_are_no_value_keep_their_words(said):
    assert with_digits(said) == said


@pytest.mark.parametrize("said,read", [
    ("activate the fans", "turn on the fans"), ("deactivate our lighting", "turn off our lighting"),
    ("switch the lights out", "turn off lights"), ("lamps out", "lamps off"), ("kill the lights", "turn off lights"),
    ("unpause", "resume"), ("go back", "previous track"), ("lift up the blinds", "raise the blinds"),
    ("play the last item again", "previous track"), ("replay the last song", "previous track"),
    ("play previous in the den", "previous track in the den"), ("play the radio", "play the radio"),
    ("打开灯", "打开灯"), ("the outside light", "the outside light"),
])
def test_english_verbs_people_say_become_the_documents_words(said, read):
    assert plain_verbs(said) == read
