"""Bulk mode: choose the command first, then expand to every target; group, batch and cap."""

from conftest import ROOMS, SPECS, write_home

from tracerag.commands.rule_parser import parse_without_lm
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex
from tracerag.home_commands.index_params import IndexParams
from tracerag.signatures.query_ir import QueryIR


def test_all_lights_off_expands_to_every_light_and_nothing_else(index):
    plan = index.plan_bulk(QueryIR(action="关闭", type_hint="Light", quantifier="all"), "关掉所有的灯")
    assert plan.hint is None and plan.command_id == "main-switch-off"
    assert {d for d, _ in plan.targets} == {"light-living-1", "light-living-2", "light-bed", "lamp-study"}
    assert plan.coverage == 1.0 and plan.top1_ratio >= 0.5


def test_except_removes_the_excluded_room(index):
    ir = QueryIR(action="关闭", type_hint="Light", scope_exclude=["主卧"], quantifier="except")
    plan = index.plan_bulk(ir, "除了主卧，其他灯都关掉")
    assert {d for d, _ in plan.targets} == {"light-living-1", "light-living-2", "lamp-study"}


def test_bulk_acts_on_devices_physically_in_the_included_room(index):
    # the study lamp named "客厅老伙计" is not switched off with the living room
    ir = QueryIR(action="关闭", type_hint="Light", scope_include=["客厅"], quantifier="all")
    plan = index.plan_bulk(ir, "把客厅的灯全部关掉")
    assert {d for d, _ in plan.targets} == {"light-living-1", "light-living-2"}


def test_name_hint_narrows_bulk_targets(index):
    ir = QueryIR(action="关闭", type_hint="Light", name_hint="台灯", quantifier="all")
    assert {d for d, _ in index.plan_bulk(ir, "关掉所有台灯").targets} == {"light-bed"}


def test_without_lm_the_category_comes_from_the_homes_labels(index):
    ir = QueryIR(action="关掉", quantifier="all")  # no type_hint: the no-LM parse
    plan = index.plan_bulk(ir, "关掉所有的灯")
    assert plan.category == "Light" and "plug-fridge" not in {d for d, _ in plan.targets}


def test_unestablished_category_asks_instead_of_expanding(index):
    plan = index.plan_bulk(QueryIR(action="关掉", quantifier="all"), "关掉所有设备")
    assert plan.hint == "need_clarification" and plan.targets == []


def test_low_confidence_returns_the_top_options(index):
    index.params = IndexParams(min_top1_ratio=0.99, min_margin=0.99)
    plan = index.plan_bulk(QueryIR(action="调", type_hint="Light", quantifier="all"), "所有灯调一下")
    assert plan.hint == "need_clarification"
    assert 2 <= len(plan.options) <= 3
    assert all(o.supported_devices == 4 and o.sample_devices for o in plan.options)
    assert sum(o.p for o in plan.options) <= 1.0001


def test_groups_by_argument_shape_and_batches_of_twenty(tmp_path, embedder):
    devices = [(f"l{i}", f"灯{i}", "r-living", "Light", "p-light") for i in range(45)]
    specs = dict(SPECS)
    # a second light profile whose setLevel has another range: a separate compatibility group
    specs["p-light2"] = [dict(c) for c in SPECS["p-light"]]
    specs["p-light2"][2] = {**specs["p-light2"][2], "value_range": {"min": 1, "max": 254, "unit": "%"}}
    devices += [(f"m{i}", f"筒灯{i}", "r-living", "Light", "p-light2") for i in range(5)]
    index = CommandIndex(Home.load(write_home(tmp_path / "big", devices=devices, specs=specs)), embedder)
    plan = index.plan_bulk(QueryIR(action="调到", type_hint="Light", quantifier="all"), "所有灯亮度调到50%")
    assert plan.command_id == "main-switchLevel-setLevel" and plan.hint is None
    assert sorted(len(g.device_ids) for g in plan.groups) == [5, 45]
    assert sorted(len(b) for b in plan.batches) == [5, 5, 20, 20]
    assert len(plan.targets) == 50


def test_too_many_targets(tmp_path, embedder):
    devices = [(f"l{i}", f"灯{i}", "r-living", "Light", "p-light") for i in range(30)]
    index = CommandIndex(Home.load(write_home(tmp_path / "many", devices=devices)), embedder,
                         IndexParams(max_targets=25))
    plan = index.plan_bulk(QueryIR(action="关闭", type_hint="Light", quantifier="all"), "关掉所有灯")
    assert plan.hint == "too_many_targets" and plan.targets == [] and "25" in plan.reason
    assert sum(len(b) for b in plan.batches) == 30  # the plan is still there for a confirmed run


def test_a_name_in_a_carrier_category_always_narrows(tmp_path, embedder):
    devices = [("f1", "排气扇", "r-bed", "Switch", "p-plug"), ("f2", "厨房排气扇", "r-kitchen", "Switch", "p-plug"),
               ("h", "浴霸", "r-bed", "Switch", "p-plug")]
    index = CommandIndex(Home.load(write_home(tmp_path / "sw", devices=devices)), embedder)
    plan = index.plan_bulk(QueryIR(action="关", name_hint="排气扇", quantifier="all"), "所有排气扇都关了")
    assert {d for d, _ in plan.targets} == {"f1", "f2"}


def test_a_kind_word_without_type_hint_does_not_narrow(tmp_path, embedder):
    devices = [("s1", "客厅窗帘", "r-living", "Blind", "p-shade"), ("s2", "主卧窗帘", "r-bed", "Blind", "p-shade"),
               ("s3", "书房纱帘", "r-study", "Blind", "p-shade")]
    index = CommandIndex(Home.load(write_home(tmp_path / "bl", devices=devices)), embedder)
    plan = index.plan_bulk(QueryIR(action="关上", name_hint="窗帘", quantifier="all"), "把所有窗帘都关上")
    assert {d for d, _ in plan.targets} == {"s1", "s2", "s3"}


def test_a_word_the_categorys_spec_uses_names_the_kind(tmp_path, embedder):
    # only one blind in four is labelled 窗帘, but the blinds' spec says "打开窗帘": 窗帘 is every blind
    devices = [("s1", "客厅窗帘", "r-living", "Blind", "p-shade"), ("s2", "客厅纱帘", "r-living", "Blind", "p-shade"),
               ("s3", "主卧布帘", "r-bed", "Blind", "p-shade"), ("s4", "书房百叶帘", "r-study", "Blind", "p-shade")]
    index = CommandIndex(Home.load(write_home(tmp_path / "bl", devices=devices)), embedder)
    plan = index.plan_bulk(QueryIR(action="关上", name_hint="窗帘", quantifier="all"), "把所有窗帘都关上")
    assert {d for d, _ in plan.targets} == {"s1", "s2", "s3", "s4"}
    sheer = index.plan_bulk(QueryIR(action="关上", name_hint="纱帘", quantifier="all"), "把所有纱帘都关上")
    assert {d for d, _ in sheer.targets} == {"s2"}  # a word the spec never uses is a name


def test_devices_lacking_the_chosen_command_take_a_close_equivalent(tmp_path, embedder):
    specs = dict(SPECS)
    step = {"id": "main-statelessSwitchLevelStep-stepLevel", "description": "逐级调节亮度", "type": "integer",
            "value_range": {"min": -100, "max": 100, "unit": "%"}}
    specs["p-light-step"] = [*SPECS["p-light"], step]
    devices = [("s1", "台灯", "r-bed", "Light", "p-light-step"), ("s2", "落地灯", "r-living", "Light", "p-light-step"),
               ("l1", "吸顶灯", "r-living", "Light", "p-light")]
    index = CommandIndex(Home.load(write_home(tmp_path / "step", devices=devices, specs=specs)), embedder,
                         IndexParams(fallback_margin=0.3))
    plan = index.plan_bulk(QueryIR(action="调暗一点", type_hint="Light", quantifier="all"), "把所有的灯调暗一点")
    assert plan.hint is None
    targets = dict(plan.targets)
    assert set(targets) == {"s1", "s2", "l1"}  # nobody dropped for want of the step command
    assert targets["l1"] == "main-switchLevel-setLevel"
    assert {targets["s1"], targets["s2"]} <= {"main-statelessSwitchLevelStep-stepLevel", "main-switchLevel-setLevel"}
    assert len({g.command_id for g in plan.groups}) == len({targets["s1"], targets["l1"]})


def test_no_equivalent_means_no_fallback(index):
    # only the ACs set a cooling temperature: lights are never given some other command instead
    ir = QueryIR(action="调到26度", type_hint="AirConditioner", quantifier="all")
    plan = index.plan_bulk(ir, "所有空调调到26度")
    assert {c for _, c in plan.targets} == {"main-thermostatCoolingSetpoint-setCoolingSetpoint"}


def test_the_command_whose_subject_is_named_wins_over_a_shared_value(tmp_path, embedder):
    from test_command_index import AC_WITH_FAN

    devices = [("ac1", "客厅空调", "r-living", "AirConditioner", "p-ac-fan"),
               ("ac2", "主卧空调", "r-bed", "AirConditioner", "p-ac-fan"),
               ("ac3", "书房空调", "r-study", "AirConditioner", "p-ac")]
    index = CommandIndex(Home.load(write_home(tmp_path / "fan", devices=devices,
                                              specs={**SPECS, "p-ac-fan": AC_WITH_FAN})), embedder)
    # 自动 is a value of the mode command too; 风速 names the fan-speed command
    plan = index.plan_bulk(QueryIR(action="风速调到自动", quantifier="all"), "所有空调风速调到自动")
    assert plan.command_id == "main-airConditionerFanMode-setFanMode"
    assert dict(plan.targets) == {"ac1": "main-airConditionerFanMode-setFanMode",
                                  "ac2": "main-airConditionerFanMode-setFanMode"}  # ac3 has no fan speed
    swing = index.plan_bulk(QueryIR(action="打开扫风", quantifier="all"), "打开所有空调的扫风")
    assert swing.command_id == "main-fanOscillationMode-setFanOscillationMode"


def test_a_target_value_is_never_a_step_by_that_amount(tmp_path, embedder):
    step = {"id": "main-statelessColorTemperatureStep-stepColorTemperatureByPercent",
            "description": "step color temperature", "type": "integer",
            "value_range": {"min": -100, "max": 100, "unit": "%"}}
    specs = {**SPECS, "p-light-step": [*SPECS["p-light"], step]}
    devices = [("s1", "床头灯左", "r-bed", "Light", "p-light-step"),
               ("s2", "床头灯右", "r-bed", "Light", "p-light-step"),
               ("l1", "吸顶灯", "r-living", "Light", "p-light"), ("l2", "筒灯", "r-living", "Light", "p-light")]
    index = CommandIndex(Home.load(write_home(tmp_path / "step", devices=devices, specs=specs)), embedder)
    for utterance, action in (("所有灯调到百分之四十", "调到百分之四十"), ("set all the lights to 40%", "set 40")):
        plan = index.plan_bulk(QueryIR(action=action, quantifier="all"), utterance)
        assert dict(plan.targets) == dict.fromkeys(("s1", "s2", "l1", "l2"), "main-switchLevel-setLevel")


def test_the_quantifier_word_is_no_value(tmp_path, embedder):
    speaker = [{"id": "main-mediaPlayback-play", "description": "start playback", "type": None, "value_range": None},
               {"id": "main-mediaPlayback-stop", "description": "stop playback", "type": None, "value_range": None},
               {"id": "main-mediaPlaybackRepeat-setPlaybackRepeatMode", "description": "set repeat mode",
                "type": "string", "value_range": None, "value_list": [{"value": "one", "description": "repeat one"},
                                                                      {"value": "all", "description": "repeat all"}]}]
    devices = [("a", "Sonos One", "r1", "NetworkAudio", "p-speaker"),
               ("b", "Office Speaker", "r2", "NetworkAudio", "p-speaker")]
    home = write_home(tmp_path / "speakers", devices=devices, specs={"p-speaker": speaker},
                      rooms={"r1": "Living Room", "r2": "Office"})
    index = CommandIndex(Home.load(home), embedder)
    plan = index.plan_bulk(QueryIR(action="stop", quantifier="all"), "stop all speakers")
    assert dict(plan.targets) == {"a": "main-mediaPlayback-stop", "b": "main-mediaPlayback-stop"}


def test_a_device_word_the_user_says_establishes_the_category(tmp_path, embedder):
    # "风扇" is part of one fan's name only; the single character 扇 of both exhaust fans is no evidence
    on_off = [{"id": "main-switch-on", "description": "打开", "type": None, "value_range": None},
              {"id": "main-switch-off", "description": "关闭", "type": None, "value_range": None}]
    specs = {"p-fan": on_off, "p-plug": SPECS["p-plug"]}
    rooms = {"r1": "客厅", "r2": "次卧", "r3": "主卫", "r4": "客卫"}
    devices = [("f1", "小米风扇", "r1", "Fan", "p-fan"), ("f2", "落地扇", "r2", "Fan", "p-fan"),
               ("x1", "排气扇", "r3", "Switch", "p-plug"), ("x2", "排气扇", "r4", "Switch", "p-plug")]
    index = CommandIndex(Home.load(write_home(tmp_path / "fan", devices=devices, specs=specs, rooms=rooms)), embedder)
    plan = index.plan_bulk(parse_without_lm("所有风扇都打开", index), "所有风扇都打开")
    assert plan.category == "Fan" and {d for d, _ in plan.targets} == {"f1", "f2"}


def test_a_verb_is_no_device_name(tmp_path, embedder):
    # 调 of "调到" is no evidence for the 空调s: the floor heating is what the user names
    specs = {"p-heat": [{"id": "main-thermostatHeatingSetpoint-setHeatingSetpoint", "description": "设置温度",
                         "type": "number", "value_range": {"min": 5, "max": 35, "unit": "C"}}],
             "p-ac": SPECS["p-ac"], "p-light": SPECS["p-light"]}
    devices = [("h1", "主卧地暖", "r-bed", "Thermostat", "p-heat"),
               ("h2", "书房地暖", "r-study", "Thermostat", "p-heat"),
               *((f"ac{i}", f"{room}空调", rid, "AirConditioner", "p-ac")
                 for i, (rid, room) in enumerate(ROOMS.items())),
               ("l1", "落地灯", "r-living", "Light", "p-light")]
    index = CommandIndex(Home.load(write_home(tmp_path / "heat", devices=devices, specs=specs)), embedder)
    plan = index.plan_bulk(parse_without_lm("所有地暖调到22度", index), "所有地暖调到22度")
    assert plan.category == "Thermostat" and {d for d, _ in plan.targets} == {"h1", "h2"}


def test_a_category_is_named_by_its_head_word(index):
    """"turn off all plugs": no label says plug, the category SmartPlug does (its last word)."""
    plan = index.plan_bulk(parse_without_lm("turn off all plugs", index), "turn off all plugs")
    assert plan.category == "SmartPlug" and plan.targets == [("plug-fridge", "main-switch-off")]
