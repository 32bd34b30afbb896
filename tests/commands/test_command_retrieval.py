"""CommandRetrieval end to end through DSPy's real adapter, driven by the fake LM engine."""

import dspy
import pytest

from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.home_commands.index_params import IndexParams

LIGHT_ON = {"action": "打开", "type_hint": "Light", "name_hint": "", "scope_include": ["客厅"],
            "scope_exclude": [], "quantifier": "one"}


def pairs(pred, k=10):
    return [(c.device_id, c.command_id) for c in pred.candidates[:k]]


def test_no_lm_path_runs_the_rule_parser(index):
    dspy.configure(lm=None)
    pred = CommandRetrieval(index)(query="打开客厅的灯")
    assert pred.parse_source == "rules" and pred.lm_calls == 0
    assert pred.ir.scope_include == ["客厅"] and pred.ir.type_hint == "Unknown"
    assert set(pairs(pred, 2)) == {("light-living-1", "main-switch-on"), ("light-living-2", "main-switch-on")}


def test_parse_path_makes_exactly_one_lm_call(index, fake_lm):
    engine = fake_lm(irs={"打开客厅的灯": LIGHT_ON})
    pred = CommandRetrieval(index)(query="打开客厅的灯")
    assert engine.calls == ["ParseCommand"]
    assert pred.parse_source == "lm" and pred.lm_calls == 1
    assert pred.ir.type_hint == "Light"
    assert all(c.category == "Light" for c in pred.candidates)


def test_invalid_lm_values_are_normalised(index, fake_lm):
    fake_lm(irs={"开灯": {"action": "turn on", "type_hint": "lamp", "quantifier": "ALL!", "scope_include": "客厅"}})
    pred = CommandRetrieval(index)(query="开灯")
    assert pred.ir.type_hint == "Unknown" and pred.ir.quantifier == "one"
    assert pred.lm_parse.scope_include == ["客厅"]  # a string read as a list of rooms
    assert pred.ir.scope_include == [] and "scope_include" in pred.lm_overruled  # ... that "开灯" never names
    assert pred.ir.search_text("开灯") == "开灯"  # Latin action -> raw query


def test_a_parse_narrows_and_decides_only_as_the_words_say(index, fake_lm):
    """What a real small model writes (every room as the scope, all for one device, on for a setpoint) passes the
    home's checks and loses the command; the words decide the scope, the quantifier and the operation they say."""
    fake_lm(irs={"把主卧空调调到26度": {"operation": "on", "action": "打开", "type_hint": "AirConditioner",
                                      "scope_include": ["客厅", "主卧", "书房"], "scope_exclude": ["all"],
                                      "quantifier": "all"}})
    pred = CommandRetrieval(index)(query="把主卧空调调到26度")
    assert pred.ir.scope_include == ["主卧"] and pred.ir.quantifier == "one" and pred.ir.operation == "set_temperature"
    assert {"scope_include", "quantifier", "operation"} <= set(pred.lm_overruled) and pred.bulk is None
    top = pred.candidates[0]
    assert (top.device_id, top.command_id) == ("ac-bed", "main-thermostatCoolingSetpoint-setCoolingSetpoint")
    fake_lm(irs={"关掉所有的灯": {"operation": "off", "action": "关闭", "type_hint": "Light", "quantifier": "one"}})
    assert CommandRetrieval(index)(query="关掉所有的灯").ir.quantifier == "all"  # the words say all
    # a room said in the except clause is no limit, and only what the words except is excepted
    fake_lm(irs={"除了主卧，其他空调都关了": {"operation": "off", "action": "关闭", "type_hint": "AirConditioner",
                                          "scope_include": ["主卧"], "scope_exclude": ["客厅", "主卧"],
                                          "quantifier": "except"}})
    pred = CommandRetrieval(index)(query="除了主卧，其他空调都关了")
    assert pred.ir.scope_include == [] and pred.ir.scope_exclude == ["主卧"]
    assert {"scope_include", "scope_exclude"} <= set(pred.lm_overruled)
    assert pred.bulk is not None and pred.bulk.targets == [("ac-living", "main-switch-off")]
    # the whole utterance is said, and names no device
    fake_lm(irs={"打开客厅吸顶灯": {"operation": "on", "action": "打开", "name_hint": "打开客厅吸顶灯"}})
    pred = CommandRetrieval(index)(query="打开客厅吸顶灯")
    assert pred.ir.name_hint != "打开客厅吸顶灯" and "name_hint" in pred.lm_overruled
    assert pred.candidates[0].device_id == "light-living-1"


@pytest.mark.parametrize("mode", ["garbage", "error"])
def test_malformed_or_failed_lm_takes_the_no_lm_path(index, fake_lm, mode, caplog):
    fake_lm(mode=mode)
    pred = CommandRetrieval(index)(query="打开客厅的灯")
    assert pred.parse_source == "rules_fallback"
    assert set(pairs(pred, 2)) == {("light-living-1", "main-switch-on"), ("light-living-2", "main-switch-on")}
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["parse"]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "\n" not in warnings[0] and "(ParseCommand) failed" in warnings[0]


def test_an_utterance_of_negated_verbs_only_asks_for_nothing_without_an_lm_call(index, fake_lm):
    engine = fake_lm(irs={"客厅的灯别关": {**LIGHT_ON, "action": "关闭"}})
    pred = CommandRetrieval(index)(query="客厅的灯别关")
    assert engine.calls == [] and pred.lm_calls == 0
    assert pred.candidates == [] and pred.bulk is None and pred.hint == "no_intent"


def test_the_lm_reads_a_negation_as_said_and_the_search_as_read(index, fake_lm):
    engine = fake_lm(irs={"客厅的灯不用开了": {**LIGHT_ON, "action": "关闭"}})
    pred = CommandRetrieval(index)(query="客厅的灯不用开了")
    assert engine.calls == ["ParseCommand"] and pred.parse_source == "lm"
    assert set(pairs(pred, 2)) == {("light-living-1", "main-switch-off"), ("light-living-2", "main-switch-off")}


def test_an_utterance_past_the_length_cap_is_no_command_and_costs_nothing(index, fake_lm, monkeypatch):
    """A pasted page is not a command: refused at once, never searched (the search's cost grows with the
    length) nor sent to the LM, while an utterance of exactly the cap is still read."""
    from tracerag.commands.command_retrieval import MAX_UTTERANCE_CHARS

    engine = fake_lm(irs={})
    searched = []
    rank = index.rank
    monkeypatch.setattr(index, "rank", lambda *a, **kw: searched.append(a) or rank(*a, **kw))
    pred = CommandRetrieval(index)(query="打开客厅的灯。" * 200_000)
    assert searched == [] and engine.calls == [] and pred.lm_calls == 0 and pred.parse_source == "none"
    assert pred.candidates == [] and pred.bulk is None and pred.hint == "too_long"
    at_cap = "打开客厅的灯" + " " * (MAX_UTTERANCE_CHARS - 6)
    pred = CommandRetrieval(index, ir_source="none")(query=at_cap)
    assert searched and pred.hint is None and ("light-living-1", "main-switch-on") in pairs(pred, 2)


def test_gold_ir_skips_the_lm(index, fake_lm):
    engine = fake_lm()
    pred = CommandRetrieval(index, ir_source="gold")(query="打开客厅的灯", ir=LIGHT_ON)
    assert engine.calls == [] and pred.parse_source == "gold"


def _ambiguous(index):
    index.params = IndexParams(min_top1_ratio=0.99, min_margin=0.99)  # force low confidence
    return {"所有灯都调一下": {"action": "调节", "type_hint": "Light", "quantifier": "all"}}


def test_low_confidence_without_arbitration_asks_the_user(index, fake_lm):
    engine = fake_lm(irs=_ambiguous(index))
    pred = CommandRetrieval(index)(query="所有灯都调一下")
    assert pred.bulk.hint == "need_clarification" and 2 <= len(pred.bulk.options) <= 3
    assert engine.calls == ["ParseCommand"]  # default: no extra LM call


def test_arbitration_choice_expands_the_chosen_command(index, fake_lm):
    irs = _ambiguous(index)
    probe = CommandRetrieval(index, ir_source="gold")(query="所有灯都调一下", ir=irs["所有灯都调一下"])
    wanted = probe.bulk.options[1].command_id
    engine = fake_lm(irs=irs, arbitration={"choice_index": 1})
    pred = CommandRetrieval(index, arbitration=True)(query="所有灯都调一下")
    assert engine.calls == ["ParseCommand", "ArbitrateCapability"] and pred.lm_calls == 2
    assert pred.bulk.hint is None and pred.bulk.command_id == wanted
    assert {d for d, _ in pred.bulk.targets} == {"light-living-1", "light-living-2", "light-bed", "lamp-study"}


def test_arbitration_question_is_passed_to_the_user(index, fake_lm):
    fake_lm(irs=_ambiguous(index), arbitration={"question": "要调亮度还是色温？"})
    pred = CommandRetrieval(index, arbitration=True)(query="所有灯都调一下")
    assert pred.bulk.hint == "need_clarification" and pred.bulk.question == "要调亮度还是色温？"
    assert pred.bulk.targets == []


def test_arbitration_out_of_range_index_does_not_execute(index, fake_lm):
    fake_lm(irs=_ambiguous(index), arbitration={"choice_index": 7})
    pred = CommandRetrieval(index, arbitration=True)(query="所有灯都调一下")
    assert pred.bulk.hint == "need_clarification" and pred.bulk.targets == []


def test_unknown_home_is_a_clear_error(index):
    with pytest.raises(KeyError, match="unknown home 'elsewhere'"):
        CommandRetrieval({"a": index, "b": index})(query="开灯", home="elsewhere")


def test_deepcopy_keeps_one_index(index):
    program = CommandRetrieval(index)
    assert program.deepcopy().indexes["tiny"] is index
