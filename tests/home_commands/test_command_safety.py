"""Never act on what was not asked: sensitive commands, parses checked against the utterance, safe values.

The home is the small test home plus a front-door lock in the living room whose unlatch command is
described as a SmartThings pull describes it ("lock: unlatch", next to hand-written 锁门 / 开锁), a garage
door, a water valve and an oven: the shapes in which "打开客厅的灯" once chose the lock's unlatch.
"""

import json

import pytest
from conftest import DEVICES, ROOMS, SPECS, write_home

from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.home_commands.file_fields import HomeDataError
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex
from tracerag.home_commands.safety_screen import safety_of
from tracerag.home_commands.sensitive_commands import sensitive_kind

SENSITIVE_SPECS = {
    "p-lock": [{"id": "main-lock-lock", "description": "锁门", "type": None, "value_range": None},
               {"id": "main-lock-unlock", "description": "开锁", "type": None, "value_range": None},
               {"id": "main-lock-unlatch", "description": "lock: unlatch", "type": None, "value_range": None}],
    "p-garage": [{"id": "main-garageDoorControl-open", "description": "garage door control: open", "type": None,
                  "value_range": None},
                 {"id": "main-garageDoorControl-close", "description": "garage door control: close", "type": None,
                  "value_range": None}],
    "p-valve": [{"id": "main-valve-open", "description": "valve: open", "type": None, "value_range": None},
                {"id": "main-valve-close", "description": "valve: close", "type": None, "value_range": None}],
    "p-oven": [{"id": "main-switch-on", "description": "打开", "type": None, "value_range": None},
               {"id": "main-switch-off", "description": "关闭", "type": None, "value_range": None}],
}
SENSITIVE_DEVICES = [
    ("lock-front", "前门门锁", "r-living", "Lock", "p-lock"),
    ("lock-side", "侧门门锁", "r-hall", "Lock", "p-lock"),
    ("light-hall", "玄关灯", "r-hall", "Light", "p-light"),
    ("garage", "车库门", "r-living", "GarageDoor", "p-garage"),
    ("valve", "总水阀", "r-kitchen", "WaterValve", "p-valve"),
    ("oven", "烤箱", "r-kitchen", "Oven", "p-oven"),
]
UNLOCKING = {"main-lock-unlock", "main-lock-unlatch"}
SENSITIVE = UNLOCKING | {"main-garageDoorControl-open", "main-valve-open"}


def safe_home(directory, policy: dict | None = None):
    write_home(directory, devices=DEVICES + SENSITIVE_DEVICES, specs={**SPECS, **SENSITIVE_SPECS},
               rooms={**ROOMS, "r-hall": "玄关"})
    if policy is not None:
        (directory / "policy.json").write_text(json.dumps(policy, indent=1), encoding="utf-8")
    return directory


@pytest.fixture
def program(tmp_path, embedder):
    return CommandRetrieval(CommandIndex(Home.load(safe_home(tmp_path / "safe")), embedder), ir_source="none")


def pairs(pred) -> list[tuple[str, str]]:
    return [(c.device_id, c.command_id) for c in pred.candidates]


def test_the_table_names_unlock_open_disarm_valves_and_ovens(tmp_path):
    home = Home.load(safe_home(tmp_path / "safe"))
    kinds = {(d.device_id, c.id): sensitive_kind(d, c, home.policy) for d in home.devices for c in d.commands}
    assert {k for k, v in kinds.items() if v} == {
        ("lock-front", "main-lock-unlock"), ("lock-front", "main-lock-unlatch"),
        ("lock-side", "main-lock-unlock"), ("lock-side", "main-lock-unlatch"),
        ("garage", "main-garageDoorControl-open"), ("valve", "main-valve-open"), ("oven", "main-switch-on")}
    assert kinds[("light-living-1", "main-switch-on")] is None  # the same command on a light is not


@pytest.mark.parametrize("query", ["打开客厅的灯", "开灯", "打开客厅", "开", "打开", "把前门锁上", "锁门", "关门",
                                   "打开客厅的窗帘", "开门见山", "打开车库的灯", "关闭总水阀", "烤箱关了"])
def test_an_ordinary_command_never_reaches_a_sensitive_one(program, query):
    pred = program(query=query)
    assert not any(c.sensitive for c in pred.candidates)
    assert not {c for _, c in pairs(pred)} & (UNLOCKING | {"main-garageDoorControl-open", "main-valve-open"})
    assert ("oven", "main-switch-on") not in pairs(pred)
    assert not (pred.bulk and any(d in {"lock-front", "garage", "valve", "oven"} for d, _ in pred.bulk.targets))


@pytest.mark.parametrize("query", [
    "别让烤箱一直开着", "don't ever unlock the front door", "never open the garage door",  # negations
    "车库门开着吗", "is the water valve open?", "前门门锁开了没有",  # questions
    "我刚才把前门门锁打开了", "open the garage door when I get home", "一会儿打开总水阀",  # narration, conditions
    "打开客厅的灯，前门门锁电量低", "打开书房的灯，车库门有点响",  # a device said in another clause
    "除了前门门锁，其他都打开",  # what is excepted
    "打开烤箱旁边的灯", "turn on the lamp next to the oven", "车库里的灯打开",  # where something is
    "打开冰箱门", "open the oven door",  # a door that is part of another device
    "解锁新技能", "开门见山地说吧", "step on the gas", "我心里的锁被你打开了",  # idioms
    "放一首《打开前门》", "烤箱打开多久了", "总水阀打开的时候提醒我",  # titles, talk about a device
    "开一下大门",  # a door the home has no device for
    "关上玄关的灯", "打开玄关灯",  # 玄关 holds 关 and names a room, not a verb
])
def test_what_only_mentions_a_sensitive_device_asks_nothing_of_it(program, query):
    pred = program(query=query)
    assert not {c for _, c in pairs(pred)[:1]} & SENSITIVE and ("oven", "main-switch-on") not in pairs(pred)[:1]
    assert not (pred.bulk and {c for _, c in pred.bulk.targets} & SENSITIVE), query


@pytest.mark.parametrize(("query", "device", "commands"), [
    ("帮我把玄关的门锁打开", "lock-side", UNLOCKING), ("玄关的门开一下", "lock-side", UNLOCKING),
    ("把总水阀开一下", "valve", {"main-valve-open"}), ("烤箱开起来", "oven", {"main-switch-on"}),
    ("侧门开一下", "lock-side", UNLOCKING), ("把总水阀门打开", "valve", {"main-valve-open"}),
])
def test_plain_requests_in_other_words_still_reach_the_command(program, query, device, commands):
    top = program(query=query).candidates[0]
    assert (top.device_id, top.command_id in commands) == (device, True), query


def test_a_lock_the_utterance_excepts_is_never_unlocked(program):
    pred = program(query="除了前门门锁，其他门锁都打开")
    assert "lock-front" not in {d for d, c in pairs(pred) if c in UNLOCKING}
    assert pred.bulk is not None and pred.bulk.targets == [("lock-side", "main-lock-unlock")]


def test_unlock_said_with_the_noun_lock_unlocks(program):
    """"Please unlock the front door lock": its "lock" is a noun, not the opposite verb."""
    top = program(query="please unlock the front door lock").candidates[0]
    assert top.category == "Lock" and top.command_id in UNLOCKING


def test_an_utterance_that_switches_one_way_never_ranks_the_other_way_first(program):
    """"关上玄关的灯" must not answer with the light's on, nor with the lock (玄关 holds 关 and 开 is not said)."""
    top = program(query="关上玄关的灯").candidates[0]
    assert (top.device_id, top.command_id) == ("light-hall", "main-switch-off")
    top = program(query="把前门门锁锁上").candidates[0]
    assert (top.device_id, top.command_id) == ("lock-front", "main-lock-lock")


def test_a_room_plan_never_opens_every_sensitive_device_there(program):
    """Naming a room is no "all": "打开玄关的门锁" is one unlock, not a plan over the room's locks."""
    pred = program(query="打开玄关的门锁")
    assert pred.bulk is None or not pred.bulk.targets
    assert pred.candidates[0].command_id in UNLOCKING


def test_what_was_held_back_is_reported_with_the_reason(program):
    pred = program(query="打开客厅的灯")
    assert pred.candidates[0].category == "Light"
    held = {(w.device_id, w.command_id): w.reason for w in pred.withheld}
    # the commands that would switch on what was not asked: the oven's on, the water valve's and garage's open
    assert ("oven", "main-switch-on") in held and ("valve", "main-valve-open") in held
    assert all("does not ask for it" in reason for reason in held.values())


@pytest.mark.parametrize(("query", "device", "commands"), [
    ("开锁", "lock-front", UNLOCKING), ("把前门门锁打开", "lock-front", UNLOCKING), ("解锁", "lock-front", UNLOCKING),
    ("打开车库门", "garage", {"main-garageDoorControl-open"}), ("打开总水阀", "valve", {"main-valve-open"}),
    ("打开烤箱", "oven", {"main-switch-on"}),
])
def test_a_sensitive_command_the_utterance_asks_for_is_found_and_marked(program, query, device, commands):
    top = program(query=query).candidates[0]
    assert (top.device_id, top.command_id in commands, top.sensitive) == (device, True, True)


def test_locking_never_yields_unlock_or_unlatch(program):
    for query in ("把前门锁上", "锁上前门门锁", "把门锁上", "前门门锁锁好"):
        assert not {c for _, c in pairs(program(query=query))} & UNLOCKING, query


def test_a_temperature_is_never_a_colour_temperature_and_a_setpoint_never_off(program):
    pred = program(query="把主卧空调设为26摄氏度")
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == \
        ("ac-bed", "main-thermostatCoolingSetpoint-setCoolingSetpoint")
    pred = program(query="把温度调到26度")
    commands = [c.command_id for c in pred.candidates]
    assert "main-colorTemperature-setColorTemperature" not in commands
    assert commands[0] == "main-thermostatCoolingSetpoint-setCoolingSetpoint"


# -- an LM's parse, checked against the utterance and the home --------------------------------------------

LIGHT_ON = {"action": "打开", "type_hint": "Light", "name_hint": "", "scope_include": ["客厅"], "scope_exclude": [],
            "quantifier": "one"}


@pytest.fixture
def lm_program(tmp_path, embedder):
    return CommandRetrieval(CommandIndex(Home.load(safe_home(tmp_path / "safe")), embedder))


@pytest.mark.parametrize(("parse", "check"), [
    ({**LIGHT_ON, "type_hint": "Lock"}, "type_hint"),
    ({**LIGHT_ON, "action": "关闭"}, "polarity"),
    ({**LIGHT_ON, "scope_include": ["地下室"]}, "scope_include"),
    ({**LIGHT_ON, "name_hint": "前门门锁", "type_hint": "Unknown"}, "name_hint"),
])
def test_a_parse_that_contradicts_the_utterance_is_overruled_field_by_field(lm_program, fake_lm, parse, check):
    fake_lm(irs={"打开客厅的灯": parse})
    pred = lm_program(query="打开客厅的灯")
    assert pred.hint == "lm_overruled" and pred.lm_overruled == [check] and pred.parse_source == "lm"
    assert pred.candidates[0].category == "Light" and pred.candidates[0].command_id == "main-switch-on"
    assert not (pred.bulk and pred.bulk.command_id != "main-switch-on")  # no plan switching anything off


def test_a_parse_the_utterance_agrees_with_stands(lm_program, fake_lm):
    fake_lm(irs={"打开客厅的灯": LIGHT_ON})
    pred = lm_program(query="打开客厅的灯")
    assert pred.hint is None and pred.lm_overruled == [] and pred.ir.type_hint == "Light"


def test_a_lock_parse_of_a_light_command_never_unlocks(lm_program, fake_lm):
    fake_lm(irs={"打开客厅的灯": {"action": "解锁", "type_hint": "Lock", "name_hint": "前门门锁",
                                  "scope_include": ["客厅"], "scope_exclude": [], "quantifier": "all"}})
    pred = lm_program(query="打开客厅的灯")
    assert not {c for _, c in pairs(pred)} & UNLOCKING
    assert not (pred.bulk and {c for _, c in pred.bulk.targets} & UNLOCKING)


def test_a_parse_naming_another_sensitive_kind_than_the_utterance_is_overruled(tmp_path, embedder, fake_lm):
    """"Open the main valve" (the water valve): an LM saying GasValve, whose valve's name also holds the word
    said, is overruled, never opening the gas."""
    directory = tmp_path / "gas"
    gas = ("gas", "燃气总阀", "r-kitchen", "GasValve", "p-valve")
    write_home(directory, devices=DEVICES + SENSITIVE_DEVICES + [gas], specs={**SPECS, **SENSITIVE_SPECS},
               rooms={**ROOMS, "r-hall": "玄关"})
    program = CommandRetrieval(CommandIndex(Home.load(directory), embedder))
    fake_lm(irs={"把总水阀打开": {"action": "打开", "type_hint": "GasValve", "name_hint": "", "scope_include": [],
                                  "scope_exclude": [], "quantifier": "one"}})
    pred = program(query="把总水阀打开")
    assert "type_hint" in pred.lm_overruled and pred.ir.type_hint != "GasValve"
    assert ("gas", "main-valve-open") not in pairs(pred)[:1] and pairs(pred)[0] == ("valve", "main-valve-open")


def test_a_device_that_only_locates_another_asks_nothing_of_it():
    """"the spotlight by the alarm panel": a name before a word for where (安防主机边上的射灯) qualifies the
    lamp; it asks nothing of the panel, and an LM may not make it the kind."""
    from tracerag.home_commands.category_words import categories_said

    assert set(categories_said("安防主机边上的射灯关掉")) == {"Light"}
    assert set(categories_said("烤箱旁边的射灯打开")) == {"Light"}
    assert set(categories_said("关闭警报器，打开客厅灯")) == {"Siren", "Light"}


def test_a_plan_whose_command_is_held_back_asks_instead_of_running_another(lm_program, fake_lm):
    """"Open everything in the living room", parsed as the locks: the words point to unlock, which was not
    asked for; the plan asks the user rather than locking the door instead. Given as the parse (gold), the plan
    holds the unlock back; from an LM, the lock reading is refused first (no lock here can do what 打开 asks)."""
    locks = {"action": "打开", "type_hint": "Lock", "name_hint": "", "scope_include": ["客厅"], "scope_exclude": [],
             "quantifier": "all"}
    gold = CommandRetrieval(lm_program.indexes, ir_source="gold")(query="把客厅的都打开", ir=locks)
    assert gold.bulk is not None and gold.bulk.hint == "need_clarification" and gold.bulk.targets == []
    assert "held back" in gold.bulk.reason and all(o.command_id not in UNLOCKING for o in gold.bulk.options)
    fake_lm(irs={"把客厅的都打开": locks})
    pred = lm_program(query="把客厅的都打开")
    assert pred.bulk is not None and pred.bulk.hint == "need_clarification" and pred.bulk.targets == []
    assert "type_hint" in pred.lm_overruled and all(o.command_id not in UNLOCKING for o in pred.bulk.options)


@pytest.mark.parametrize("query", ["hello", "今天天气怎么样", "", "。。。", "?!"])
def test_what_asks_the_home_for_nothing_costs_no_lm_call_whatever_it_would_say(lm_program, fake_lm, query):
    engine = fake_lm(irs={query: {**LIGHT_ON, "scope_include": [], "quantifier": "all"}})
    pred = lm_program(query=query)
    assert engine.calls == [] and pred.lm_calls == 0
    assert pred.hint == "no_intent" and pred.candidates == [] and pred.bulk is None


# -- policy.json ---------------------------------------------------------------------------------------


def test_a_device_the_policy_never_acts_on_is_never_a_candidate(tmp_path, embedder):
    home = Home.load(safe_home(tmp_path / "safe", {"never": ["light-living-1"]}))
    pred = CommandRetrieval(CommandIndex(home, embedder), ir_source="none")(query="打开客厅吸顶灯")
    assert "light-living-1" not in {d for d, _ in pairs(pred)}
    assert any(w.device_id == "light-living-1" and "never" in w.reason for w in pred.withheld)


def test_a_plan_leaves_out_a_device_the_policy_never_acts_on(tmp_path, embedder):
    home = Home.load(safe_home(tmp_path / "safe", {"never": ["light-living-1"]}))
    pred = CommandRetrieval(CommandIndex(home, embedder), ir_source="none")(query="关掉所有的灯")
    assert pred.bulk.hint is None and pred.bulk.command_id == "main-switch-off"
    assert {d for d, _ in pred.bulk.targets} == {"light-living-2", "light-bed", "lamp-study", "light-hall"}


def test_a_device_the_policy_marks_is_chosen_only_when_named(tmp_path, embedder):
    home = Home.load(safe_home(tmp_path / "safe", {"sensitive_devices": ["plug-fridge"]}))
    program = CommandRetrieval(CommandIndex(home, embedder), ir_source="none")
    top = program(query="打开冰箱插座").candidates[0]
    assert (top.device_id, top.command_id, top.sensitive) == ("plug-fridge", "main-switch-on", True)
    assert "plug-fridge" not in {d for d, _ in pairs(program(query="打开"))}


@pytest.mark.parametrize(("text", "message"), [
    ('{"never": "lock-front"}', "policy.json:1: field 'never': expected a list of device ids"),
    ('{\n  "sensitive_commands": [1]\n}', "policy.json:2: field 'sensitive_commands': expected a list of command ids"),
    ('{"never": [', "policy.json:1: invalid JSON"),
])
def test_a_policy_that_cannot_be_read_is_one_clear_line(tmp_path, text, message):
    directory = safe_home(tmp_path / "safe")
    (directory / "policy.json").write_text(text, encoding="utf-8")
    with pytest.raises(HomeDataError) as err:
        Home.load(directory)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_unknown_keys_and_devices_in_a_policy_are_warnings(tmp_path):
    home = Home.load(safe_home(tmp_path / "safe", {"never": ["nope"], "nevr": []}))
    assert any("'nevr'" in w for w in home.warnings) and any("'nope' is no device" in w for w in home.warnings)


# -- values --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bound", ["NaN", "Infinity", "-Infinity", "1e400", '"NaN"', "1" + "0" * 40])
def test_a_range_bound_that_bounds_nothing_is_refused_at_load(tmp_path, bound):
    directory = safe_home(tmp_path / "safe")
    spec = directory / "spec.jsonl"
    spec.write_text(spec.read_text(encoding="utf-8").replace('"min": 0', f'"min": {bound}', 1), encoding="utf-8")
    with pytest.raises(HomeDataError) as err:
        Home.load(directory)
    assert f"{spec}:1: capabilities[2] (main-switchLevel-setLevel): field 'value_range.min': expected a finite " \
           "number" in str(err.value)


def test_a_range_whose_min_is_above_its_max_is_refused(tmp_path):
    directory = safe_home(tmp_path / "safe")
    spec = directory / "spec.jsonl"
    spec.write_text(spec.read_text(encoding="utf-8").replace('"min": 0, "max": 100', '"min": 100, "max": 0', 1),
                    encoding="utf-8")
    with pytest.raises(HomeDataError, match="field 'value_range': min 100 is above max 0"):
        Home.load(directory)


def test_screens_are_built_once_per_index(program):
    index = program.index_for(None)
    assert safety_of(index) is safety_of(index)


def test_a_parse_whose_operation_misses_the_command_asked_for_is_overruled(tmp_path, embedder, fake_lm):
    """"preheat the oven" parsed as "on" where the words ask the oven's start: a clear ask gets what it asks."""
    oven = [{"id": "main-switch-on", "description": "turn on", "type": None, "value_range": None},
            {"id": "main-switch-off", "description": "turn off", "type": None, "value_range": None},
            {"id": "main-ovenOperatingState-start", "description": "start", "type": None, "value_range": None}]
    home = write_home(tmp_path / "oven", devices=DEVICES + [("oven", "Oven", "r-kitchen", "Oven", "p-oven")],
                      specs={**SPECS, "p-oven": oven}, rooms=ROOMS)
    program = CommandRetrieval(CommandIndex(Home.load(home), embedder))
    fake_lm(irs={"preheat the oven": {"operation": "on", "action": "预热", "type_hint": "Oven", "name_hint": "oven",
                                      "scope_include": [], "scope_exclude": [], "quantifier": "one"}})
    pred = program(query="preheat the oven")
    assert pred.lm_overruled == ["asked"] and pred.ir.operation == "start"
    top = pred.candidates[0]
    assert (top.device_id, top.command_id, top.asked) == ("oven", "main-ovenOperatingState-start", True)
