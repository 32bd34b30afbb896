"""The template first pass (benchmarks/template_pass.py): a Home Assistant template match becomes the QueryIR the
intents corpus derives from the same intent and slots; anything else is left to the rule parser."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("hassil")
pytest.importorskip("home_assistant_intents")
# Home Assistant's matcher compiles its templates on the first match (~0.2 s) and a match takes 5-20 ms: the
# slow step runs these, the default run stays within its budget.
pytestmark = pytest.mark.slow

from intents_corpus import BUNDLED, CORPUS  # noqa: E402 (after the skips: template_pass imports hassil)
from template_pass import TemplatePass, language_of  # noqa: E402

from tracerag.home_commands.home import Home  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def home_en():
    return Home.load(BUNDLED / "home_en", log_warnings=False)


@pytest.fixture(scope="module")
def en(home_en):
    return TemplatePass(home_en)


@pytest.fixture(scope="module")
def zh():
    return TemplatePass(Home.load(BUNDLED / "home_medium", log_warnings=False))


def ir(template_pass, utterance):
    """The parse as the corpus writes it (the pass leaves the operation to the reader of the action phrase)."""
    found = template_pass.ir(utterance)
    return None if found is None else found.model_dump(exclude={"operation"})


def test_a_named_device_is_one_device_of_its_kind(en):
    assert ir(en, "turn on the coffee maker") == {
        "action": "打开", "type_hint": "SmartPlug", "name_hint": "Coffee Maker", "scope_include": [],
        "scope_exclude": [], "quantifier": "one"}


def test_an_area_and_a_domain_are_every_device_of_that_kind_there(en):
    assert ir(en, "switch off the kitchen lights") == {
        "action": "关闭", "type_hint": "Light", "name_hint": "", "scope_include": ["Kitchen"],
        "scope_exclude": [], "quantifier": "all"}


def test_a_value_read_as_a_float_is_said_as_the_whole_number(en):
    parsed = ir(en, "set the Window AC to 22 degrees")
    assert parsed["action"] == "温度调到22度" and parsed["name_hint"] == "Window AC"
    assert ir(en, "set the Desk Lamp brightness to 40%")["action"] == "亮度调到40%"


def test_a_lock_turned_on_is_locked(en):
    parsed = ir(en, "lock the Front Door Lock")
    assert parsed["action"] == "上锁" and parsed["type_hint"] == "Lock"


def test_chinese_templates_read_chinese_names_and_rooms(zh):
    assert language_of("打开小米风扇") == "zh"
    assert ir(zh, "打开小米风扇") == {"action": "打开", "type_hint": "Fan", "name_hint": "小米风扇",
                                      "scope_include": [], "scope_exclude": [], "quantifier": "one"}
    parsed = ir(zh, "打开客厅的灯")
    assert parsed["scope_include"] == ["客厅"] and parsed["type_hint"] == "Light" and parsed["quantifier"] == "all"


def test_a_floor_the_home_records_is_the_rooms_on_it(home_en):
    floors = replace(home_en, floors={"Kitchen": "downstairs", "Living Room": "downstairs", "Office": "upstairs"})
    parsed = ir(TemplatePass(floors), "turn off the lights downstairs")
    assert parsed["scope_include"] == ["Kitchen", "Living Room"] and parsed["quantifier"] == "all"


@pytest.mark.parametrize("utterance", [
    "hello there",                          # no template
    "what time is it",                      # an intent with no SmartThings command
    "turn on the lights here",              # the speaker's room: a text command has none
    "turn on the Fridge",                   # a name no template domain takes, nothing to switch
])
def test_anything_else_is_left_to_the_rule_parser(en, utterance):
    assert en.ir(utterance) is None


def test_on_the_corpus_dev_rows_the_match_is_the_gold_parse(en):
    """The corpus and the pass derive the parse from intent + slots the same way (why a gain on the corpus is
    circular)."""
    rows = [json.loads(line) for line in (CORPUS / "home_en" / "queries.jsonl").read_text(encoding="utf-8")
            .splitlines()]
    sample = [r for r in rows if r["split"] == "dev" and r["intent"] in ("HassTurnOn", "HassTurnOff")][:15]
    same = sum(ir(en, r["query"]) == r["ir"] for r in sample)
    assert len(sample) == 15 and same >= 14
