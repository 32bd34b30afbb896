"""The no-LM parser fills only what the home's own data and a closed word list can justify."""

import pytest

from tracerag.programs.rule_parser import parse_without_lm


@pytest.mark.parametrize("utterance, quantifier, include, exclude", [
    ("打开客厅的灯", "one", ["客厅"], []),
    ("关掉所有的灯", "all", [], []),
    ("把主卧的灯全部关掉", "all", ["主卧"], []),
    ("除了主卧，其他灯都关掉", "except", [], ["主卧"]),
    ("除了书房以外客厅的灯都关了", "except", ["客厅"], ["书房"]),
    ("turn off every light", "all", [], []),
    ("turn off all lights except the 主卧", "except", [], ["主卧"]),
])
def test_quantifier_and_rooms(index, utterance, quantifier, include, exclude):
    ir = parse_without_lm(utterance, index)
    assert (ir.quantifier, ir.scope_include, ir.scope_exclude) == (quantifier, include, exclude)
    assert ir.type_hint == "Unknown"  # categories stay the LM's job


def test_device_name_becomes_the_name_hint(index):
    assert parse_without_lm("打开客厅老伙计", index).name_hint == "老伙计"
    assert parse_without_lm("打开冰箱插座", index).name_hint == "冰箱插座"
    assert parse_without_lm("打开客厅的灯", index).name_hint == ""  # "灯" names a kind, not a device


def test_action_drops_rooms_device_names_and_quantifier_words(index):
    assert parse_without_lm("关掉所有客厅的灯", index).action == "关掉灯"
    assert parse_without_lm("把所有空调都关了", index).action == "关"
