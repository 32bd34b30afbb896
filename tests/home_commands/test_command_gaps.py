"""CommandRetrieval on the bundled homes, for readings the retriever once got wrong: each test names the
utterance and what it must act on (the held-out queries, heldout.jsonl, measure the same gaps)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_home

from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
from tracerag.datasets.smarthome import resolve_dataset
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex

HOMES = ("home_en", "home_small", "home_medium", "home_large")


@pytest.fixture(scope="module")
def indexes(embedder):
    root = resolve_dataset("smarthome")
    return build_indexes([root / h for h in HOMES], embedder)


def ask(indexes, home, query, ir=None):
    return CommandRetrieval(indexes, ir_source="gold" if ir else "none")(query=query, home=home, ir=ir)


def label(indexes, home, device_id):
    return indexes[home].home.device(device_id).label


def test_a_set_verb_without_a_value_is_the_set_command_not_a_step(indexes):
    for ir in ({"action": "设置音量", "type_hint": "NetworkAudio"}, None):
        top = ask(indexes, "home_en", "set the volume", ir).candidates[0]
        assert top.command_id == "main-audioVolume-setVolume"


def test_a_position_set_to_a_number_is_the_level_not_the_preset(indexes):
    # 位置 is a word of the preset command's description ("窗帘到预设位置"), yet a preset takes no value
    for ir in ({"action": "设置位置", "type_hint": "Blind"}, None):
        top = ask(indexes, "home_medium", "主卧窗帘位置设到30", ir).candidates[0]
        assert (label(indexes, "home_medium", top.device_id), top.command_id) == \
            ("主卧窗帘", "main-windowShadeLevel-setShadeLevel")


def test_a_value_named_in_one_language_reaches_a_profile_described_in_the_other(indexes):
    # 次卧空调's oscillation command is described in English ("vertical swing"); another air conditioner
    # of the home calls the same value 上下扫风. The gold parse's 开启 must not make it switch-on.
    ir = {"action": "开启上下扫风", "type_hint": "AirConditioner", "scope_include": ["二楼次卧"]}
    top = ask(indexes, "home_large", "次卧空调上下扫风", ir).candidates[0]
    assert (label(indexes, "home_large", top.device_id), top.command_id) == \
        ("次卧空调", "main-fanOscillationMode-setFanOscillationMode")


def test_a_mode_word_qualifying_a_number_set_is_the_setpoint_not_the_mode(indexes):
    for ir in ({"action": "制热温度设成27度", "type_hint": "AirConditioner", "scope_include": ["主卧"]}, None):
        top = ask(indexes, "home_medium", "把主卧空调制热温度设成27度", ir).candidates[0]
        assert top.command_id == "main-thermostatHeatingSetpoint-setHeatingSetpoint"


@pytest.mark.parametrize("home, query, locks", [
    ("home_en", "lock all the doors", {"Front Door Lock"}),  # "door" names the lock and the garage door
    ("home_large", "把所有门都锁上", {"前门门锁", "花园门锁"}),  # no device word at all: 门 names nothing alone
])
def test_the_verb_settles_which_doors_all_means(indexes, home, query, locks):
    plan = ask(indexes, home, query).bulk
    assert plan.hint is None and plan.category == "Lock" and plan.command_id == "main-lock-lock"
    assert {label(indexes, home, d) for d, _ in plan.targets} == locks


@pytest.mark.parametrize("query, command", [("turn off all air conditioners", "main-switch-off"),
                                            ("set all air conditioners to cool mode",
                                             "main-airConditionerMode-setAirConditionerMode")])
def test_all_air_conditioners_are_the_air_conditioners_not_the_air_purifier(indexes, query, command):
    plan = ask(indexes, "home_en", query).bulk
    assert plan.hint is None and plan.category == "AirConditioner" and plan.command_id == command
    assert [label(indexes, "home_en", d) for d, _ in plan.targets] == ["Window AC"]


@pytest.mark.parametrize("home, query, device, command", [
    ("home_en", "set the bedside lamp to 2700 K", "Bedside Lamp", "main-colorTemperature-setColorTemperature"),
    ("home_large", "书桌台灯调到4000K", "书桌台灯", "main-colorTemperature-setColorTemperature"),
    ("home_en", "desk lamp to 4000K please", "Desk Lamp", "main-colorTemperature-setColorTemperature"),
    ("home_en", "set the charger to 16 amps", "EV Charger", "main-evseChargingSession-setMaxCurrent"),
])
def test_the_unit_of_the_number_picks_the_command(indexes, home, query, device, command):
    top = ask(indexes, home, query).candidates[0]
    assert (label(indexes, home, top.device_id), top.command_id) == (device, command)


def test_degrees_are_a_setpoint_in_either_scale_and_never_a_setting_out_of_range(indexes):
    # a Fahrenheit thermostat told "22 degrees" (Celsius) still gets a setpoint, not its mode
    top = ask(indexes, "home_en", "make it 22 degrees on the thermostat").candidates[:2]
    assert {c.command_id for c in top} == {"main-thermostatCoolingSetpoint-setCoolingSetpoint",
                                           "main-thermostatHeatingSetpoint-setHeatingSetpoint"}
    # 26度 is no fridge temperature (1-7 °C): the fridge's setting takes no argument credit
    fridge = [c for c in ask(indexes, "home_medium", "温度调到26度").candidates if c.category == "Refrigerator"]
    assert all(c.channels["argument"] == 0 for c in fridge)


@pytest.mark.parametrize("home, query, left_out", [
    ("home_en", "turn off all lights except the desk lamp", "Desk Lamp"),
    ("home_en", "switch on every light but the porch light", "Porch Light"),
    ("home_small", "关掉除了床头灯以外的所有灯", "床头灯"),
    ("home_large", "关掉茶室的所有灯，茶台射灯除外", "茶台射灯"),
])
def test_a_single_device_can_be_excepted(indexes, home, query, left_out):
    pred = ask(indexes, home, query)
    plan = pred.bulk
    assert pred.ir.scope_exclude and plan.hint is None and plan.category == "Light"
    labels = [label(indexes, home, d) for d, _ in plan.targets]
    assert left_out not in labels and len(labels) >= 3


def test_a_device_excepted_with_its_room_leaves_the_rest_of_that_room_in(indexes):
    # "书房台灯除外" excepts the study's desk lamp, not every study light
    pred = ask(indexes, "home_medium", "关闭所有灯，书房台灯除外")
    assert pred.ir.scope_exclude == ["书房台灯"] and pred.ir.scope_include == []
    targets = {label(indexes, "home_medium", d) for d, _ in pred.bulk.targets}
    assert "台灯" not in targets and {"客厅老伙计", "吸顶灯", "玄关灯"} <= targets
    assert len(pred.bulk.targets) == 23


def test_a_gold_parse_can_except_a_device_by_name(indexes):
    ir = {"action": "关闭", "type_hint": "Light", "scope_exclude": ["Desk Lamp"], "quantifier": "except"}
    plan = ask(indexes, "home_en", "turn off all lights except the desk lamp", ir).bulk
    assert "Desk Lamp" not in {label(indexes, "home_en", d) for d, _ in plan.targets}
    assert len(plan.targets) == 11


def _lights_in(indexes, home, rooms):
    h = indexes[home].home
    return {d.device_id for d in h.devices if d.category == "Light" and d.room in rooms}


def test_a_floor_named_without_a_quantifier_means_every_device_of_the_kind_there(indexes):
    # 一楼 is no room of home_large: it is the word its first-floor rooms start with
    pred = ask(indexes, "home_large", "一楼的亮度调到50%")
    assert pred.ir.quantifier == "one" and pred.bulk is not None and pred.bulk.hint is None
    first_floor = {d for d in _lights_in(indexes, "home_large", {"一楼客厅", "一楼餐厅", "一楼卫生间"})
                   if indexes["home_large"].home.device(d).command("main-switchLevel-setLevel")}
    assert {d for d, _ in pred.bulk.targets} == first_floor and len(first_floor) > 10
    assert {c for _, c in pred.bulk.targets} == {"main-switchLevel-setLevel"}
    plan = ask(indexes, "home_large", "二楼的灯全部关掉").bulk
    assert {d for d, _ in plan.targets} == _lights_in(indexes, "home_large", {"二楼主卧", "二楼次卧", "二楼卫生间"})


def test_a_room_named_without_a_quantifier_means_every_device_of_the_kind_in_it(indexes):
    ir = {"action": "set to 50%", "type_hint": "Light", "scope_include": ["Living Room"], "quantifier": "one"}
    pred = ask(indexes, "home_en", "set the living room lights to 50%", ir)
    assert {d for d, _ in pred.bulk.targets} == _lights_in(indexes, "home_en", {"Living Room"})
    assert len(pred.bulk.targets) == 2


def test_a_device_named_in_a_room_stays_one_device(indexes):
    # 小夜灯 is part of one lamp's name (卧室小夜灯): that lamp, not every light of the children's room
    pred = ask(indexes, "home_medium", "关掉儿童房的小夜灯")
    assert pred.bulk is None and label(indexes, "home_medium", pred.candidates[0].device_id) == "卧室小夜灯"


def test_part_of_several_names_narrows_a_bulk_plan_to_them(indexes):
    # 床头灯 is no whole label (床头灯左, 床头灯右): "all bedside lamps" is those two, not every light
    pred = ask(indexes, "home_medium", "所有床头灯调暗一点")
    assert pred.ir.name_hint == "床头灯"
    assert sorted(label(indexes, "home_medium", d) for d, _ in pred.bulk.targets) == ["床头灯右", "床头灯左"]


def test_an_unseen_word_for_a_subject_is_read_through_the_command_documents(indexes):
    # home_large's documents say 风速 (fan speed), never 风量; 自动 is also a value of the mode command
    top = ask(indexes, "home_large", "主卧空调风量调到自动").candidates[0]
    assert (label(indexes, "home_large", top.device_id), top.command_id) == \
        ("主卧空调", "main-airConditionerFanMode-setFanMode")
    # without a value set, a word near a subject ("照明" near 亮度) is still no subject: it means on
    assert ask(indexes, "home_large", "开启茶室的照明").candidates[0].command_id == "main-switch-on"


@pytest.fixture(scope="module")
def sample_home(embedder):
    """The SmartThings sample account (benchmarks/data/smarthome_untuned): generated English
    descriptions ("set level", "set hue"), labels such as "Bureau" and "Sink", two lights named "Bed"."""
    root = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "smarthome_untuned"
    return build_indexes([root / "home_st_sample"], embedder)


def test_english_verbs_are_no_subjects_in_an_untuned_home(sample_home):
    # "dim" and "brighten" sit next to "hue" for the embedder, but share no word with it
    for query, name in (("dim the bureau to 20%", "Bureau"), ("brighten the sink to 70 percent", "Sink")):
        top = ask(sample_home, "home_st_sample", query).candidates[0]
        assert (label(sample_home, "home_st_sample", top.device_id), top.command_id) == \
            (name, "main-switchLevel-setLevel")


def test_a_name_two_devices_share_is_excepted_for_both(sample_home):
    pred = ask(sample_home, "home_st_sample", "switch off every light except the bed lights")
    assert pred.ir.scope_exclude == ["bed"]
    labels = [label(sample_home, "home_st_sample", d) for d, _ in pred.bulk.targets]
    assert "Bed" not in labels and len(labels) == 12


def test_latin_name_words_in_order_name_the_devices_that_hold_them(sample_home):
    # "hue spots": Hue ambiance spot 1-5, not the command setHue and not every light
    for query, command in (("set all hue spots to 40%", "main-switchLevel-setLevel"),
                           ("turn off all the hue spots", "main-switch-off")):
        pred = ask(sample_home, "home_st_sample", query)
        assert pred.ir.name_hint == "hue spot" and {c for _, c in pred.bulk.targets} == {command}
        assert sorted(label(sample_home, "home_st_sample", d) for d, _ in pred.bulk.targets) == \
            [f"Hue ambiance spot {i}" for i in range(1, 6)]


def test_a_room_named_in_a_home_without_commands_gives_no_plan_and_no_error(tmp_path, embedder):
    index = CommandIndex(Home.load(write_home(tmp_path / "home", specs={})), embedder)  # no commands
    pred = CommandRetrieval(index, ir_source="none")(query="打开客厅的灯")
    assert pred.candidates == [] and pred.bulk is None


def test_a_negated_on_verb_turns_the_room_off(indexes):
    # "the lights of 老人房 need not be on any more": off, over every light of that room, never on
    pred = ask(indexes, "home_large", "老人房的灯不用开了")
    assert pred.ir.scope_include == ["老人房"] and pred.candidates[0].command_id == "main-switch-off"
    lights = [d.device_id for d in indexes["home_large"].home.devices
              if d.room == "老人房" and d.category == "Light"]
    assert len(lights) == 5 and sorted(pred.bulk.targets) == sorted((d, "main-switch-off") for d in lights)


@pytest.mark.parametrize(("home", "query"), [("home_en", "don't turn on the kitchen lights"),
                                             ("home_large", "别把客厅的灯打开")])
def test_a_negated_on_verb_is_never_on(indexes, home, query):
    commands = {c.command_id for c in ask(indexes, home, query).candidates[:3]}
    assert commands == {"main-switch-off"}


@pytest.mark.parametrize(("home", "query"), [("home_large", "别锁门"), ("home_large", "客厅灯别关"),
                                             ("home_en", "don't turn off the living room lights")])
def test_a_negated_verb_that_starts_nothing_asks_for_nothing(indexes, home, query):
    pred = ask(indexes, home, query)
    assert pred.candidates == [] and pred.bulk is None and pred.hint == "no_intent"


def test_a_negation_word_before_no_verb_leaves_the_plan(indexes):
    # 没 of 没人 (nobody is in the kitchen) negates no verb: the plan over the kitchen's lights stands
    pred = ask(indexes, "home_large", "厨房没人了，灯关掉吧")
    assert pred.bulk is not None and {c for _, c in pred.bulk.targets} == {"main-switch-off"}
    assert len(pred.bulk.targets) == 6


@pytest.mark.parametrize(("query", "rooms", "command"), [("卫生间的灯都关了", {"主卫", "客卫"}, "main-switch-off"),
                                                         ("洗手间的灯关了", {"主卫", "客卫"}, "main-switch-off"),
                                                         ("卧室的灯都打开", {"主卧", "次卧"}, "main-switch-on")])
def test_a_word_for_a_kind_of_room_means_the_rooms_of_that_kind(indexes, query, rooms, command):
    # home_medium has no room called 卫生间 or 卧室: its bathrooms are 主卫 and 客卫, its bedrooms 主卧 and 次卧
    pred = ask(indexes, "home_medium", query)
    home = indexes["home_medium"].home
    lights = {d.device_id for d in home.devices if d.room in rooms and d.category == "Light"}
    assert set(pred.ir.scope_include) == rooms
    assert set(pred.bulk.targets) == {(d, command) for d in lights}


def test_a_room_word_inside_a_device_name_said_stays_that_device(indexes):
    # 卧室小夜灯 is a lamp in 儿童房: naming it is no request for every bedroom light
    pred = ask(indexes, "home_medium", "打开卧室小夜灯")
    assert pred.ir.scope_include == [] and pred.bulk is None
    assert label(indexes, "home_medium", pred.candidates[0].device_id) == "卧室小夜灯"
