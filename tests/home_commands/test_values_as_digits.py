"""The value said reaches the commands written as digits and a unit; words that are no value keep their words."""

from __future__ import annotations

import pytest

from tracerag.home_commands.plain_verbs import plain_verbs
from tracerag.home_commands.values import with_digits

VALUES = [
    ("the brightness to ninety-five %", "the brightness to 95%"),
    ("increase brightness to forty-four percent", "increase brightness to 44%"),
    ("set it to five percent", "set it to 5%"),
    ("make awnings to zero", "make awnings to 0"),
    ("one hundred percent", "100%"),
    ("twenty two degrees", "22 degrees"),
    ("one hundred and five degrees", "105 degrees"),
    ("百分之六十三", "63%"),
    ("亮度为四十", "亮度为40"),
    ("将客厅调成三十一", "将客厅调成31"),
    ("调到二十六度", "调到26度"),
    ("风速调到三档", "风速调到3档"),
    ("开到十五", "开到15"),
    ("设置为一百", "设置为100"),
    ("色温调到一千五百K", "色温调到1500K"),
    ("set the lamp to 1e2%", "set the lamp to 100%"),
    ("百分之一万", "10000%"),
]
KEPT = ["turn on one light", "one of the lamps", "打开一楼的灯", "调亮一点", "下一首", "调到二十楼",
        "两个灯", "开一下空调", "上一台", "give me a minute", "turn the lamp on at 7 pm", "七点半打开灯",
        "increase the brightness by 10%"]


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
    ("un lock the stern hatch", "unlock the stern hatch"), ("un-latch the gate", "unlatch the gate"),
    ("a fun lockbox", "a fun lockbox"),
])
def test_english_verbs_people_say_become_the_documents_words(said, read):
    assert plain_verbs(said) == read
