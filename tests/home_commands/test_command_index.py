"""The command index on the design's known failure cases, with the real default embedder."""

import numpy as np
import pytest
from conftest import SPECS, write_home

from tracerag.commands.rule_parser import parse_without_lm
from tracerag.datasets.smarthome import resolve_dataset
from tracerag.embedding.embedders import LexicalEmbedder
from tracerag.home_commands.command_docs import command_text, subject_phrases
from tracerag.home_commands.devices import CommandSpec, Device, ValueOption
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex
from tracerag.home_commands.index_params import IndexParams
from tracerag.signatures.query_ir import QueryIR


def top(index, query, ir=None, k=10):
    return index.search(ir or QueryIR(), query, k=k)


def test_command_documents_are_pure_semantic_text(index):
    for text in index.table.doc_texts:
        assert "main-" not in text and "Light" not in text.split() and "switchLevel" not in text
    ac_mode = next(c for d in index.home.devices for c in d.commands if c.id.endswith("setAirConditionerMode"))
    assert "制冷" in command_text(ac_mode) and "制热" in command_text(ac_mode)


def test_identical_documents_are_embedded_once(index):
    assert len(index.table.doc_texts) < len(index.table.rows)
    assert index.table.doc_vectors.shape == (len(index.table.doc_texts), index.embedder.dim)


def test_turn_on_living_room_light_does_not_land_on_the_shade(index):
    got = top(index, "打开客厅的灯", QueryIR(action="打开", type_hint="Light", scope_include=["客厅"]))
    assert {(c.device_id, c.command_id) for c in got[:2]} == {("light-living-1", "main-switch-on"),
                                                               ("light-living-2", "main-switch-on")}
    assert all(c.category == "Light" for c in got)  # gated


def test_light_to_fifty_percent_is_not_the_shade_tilt(index):
    got = top(index, "把灯光调到50%", QueryIR(action="调到", type_hint="Light"))
    assert got[0].command_id == "main-switchLevel-setLevel"
    assert all("Tilt" not in c.command_id for c in got)


def test_scope_include_is_a_bonus_not_a_filter(index):
    # the custom-named lamp lives in the study, but its name says 客厅
    got = top(index, "打开客厅老伙计", QueryIR(action="打开", name_hint="客厅老伙计", scope_include=["客厅"]))
    assert ("lamp-study", "main-switch-on") in {(c.device_id, c.command_id) for c in got[:3]}


def test_scope_exclude_is_a_hard_filter(index):
    got = top(index, "关灯", QueryIR(action="关闭", type_hint="Light", scope_exclude=["主卧"]), k=50)
    assert got and all(c.room != "主卧" for c in got)


def test_english_action_falls_back_to_the_raw_query(index):
    ir = QueryIR(action="turn on", type_hint="AirConditioner", scope_include=["主卧"])
    assert ir.search_text("打开主卧空调") == "打开主卧空调"
    assert top(index, "打开主卧空调", ir)[0].command_id == "main-switch-on"


def test_candidates_carry_explainable_channel_scores(index):
    c = top(index, "打开客厅的灯", QueryIR(action="打开", scope_include=["客厅"]))[0]
    assert set(c.channels) == {"vector", "lexical", "argument", "subject", "verb", "within_device", "name", "room"}
    p = IndexParams()
    expected = p.w_vector * c.channels["vector"] + p.w_lexical * c.channels["lexical"] + \
        p.w_argument * c.channels["argument"] + p.w_subject * c.channels["subject"] + p.w_verb * c.channels["verb"] + \
        p.w_within_device * c.channels["within_device"] + p.w_name_keyword_first * c.channels["name"] + \
        p.w_room * c.channels["room"]
    assert c.score == pytest.approx(expected, abs=2e-3)


def test_unknown_type_hint_is_keyword_first(index):
    got = top(index, "打开老伙计", QueryIR(action="打开", name_hint="老伙计"))
    assert (got[0].device_id, got[0].command_id) == ("lamp-study", "main-switch-on")


def test_unknown_category_devices_are_findable_but_never_gated(index):
    got = top(index, "打开香薰机", QueryIR(action="打开"))
    assert got[0].device_id == "aroma-bed"
    gated = top(index, "打开香薰机", QueryIR(action="打开", type_hint="Light"))
    assert all(c.category == "Light" for c in gated)


def test_a_category_the_home_lacks_does_not_empty_the_result(index):
    assert top(index, "打开电视", QueryIR(action="打开", type_hint="Television"))


def test_deepcopy_shares_the_index(index):
    import copy

    assert copy.deepcopy(index) is index


@pytest.mark.slow  # a wall-clock figure: benchmarks/bench_query_cpu.py measures a query's cost
def test_query_latency_is_milliseconds(index):
    import time

    ir = QueryIR(action="打开", scope_include=["客厅"])
    top(index, "打开客厅的灯", ir)
    started = time.perf_counter()
    for _ in range(20):
        top(index, "打开客厅的灯", ir)
    assert (time.perf_counter() - started) / 20 < 0.05


def test_empty_home(tmp_path, embedder):
    index = CommandIndex(Home.load(write_home(tmp_path / "empty", devices=[])), embedder)
    assert index.search(QueryIR(), "打开灯") == []
    assert np.asarray(index.table.doc_vectors).shape[0] == 0


def test_rooms_are_found_by_short_form(tmp_path, embedder):
    rooms = {"r1": "一楼餐厅", "r2": "一楼卫生间", "r3": "二楼卫生间", "r4": "二楼主卧"}
    devices = [("a", "餐厅吊灯", "r1", "Light", "p-light"), ("b", "镜前灯", "r2", "Light", "p-light"),
               ("c", "镜前灯", "r3", "Light", "p-light"), ("d", "床头灯", "r4", "Light", "p-light")]
    index = CommandIndex(Home.load(write_home(tmp_path / "floors", devices=devices, rooms=rooms)), embedder)
    assert index.names.mentioned_rooms("打开餐厅的灯") == ["一楼餐厅"]
    assert sorted(index.names.mentioned_rooms("关掉所有卫生间的灯")) == ["一楼卫生间", "二楼卫生间"]
    assert index.names.mentioned_rooms("打开二楼主卧的灯") == ["二楼主卧"]
    # a label's room words are not part of its name
    assert index.names.name_key("餐厅吊灯") == ("吊", "灯")


def test_one_shared_character_is_weak_name_evidence(index):
    scores = dict(zip([d.device_id for d in index.home.devices], index.names.name_scores("把灯光调到50%"), strict=True))
    # "调" of 空调 inside 调到 must not make the air conditioners the named devices
    assert scores["ac-bed"] < 0.3 and scores["ac-bed"] <= max(scores["light-bed"], scores["light-living-1"])
    assert index.names.name_scores("打开老伙计")[[d.device_id for d in index.home.devices].index("lamp-study")] == 1.0


def test_english_utterance_is_also_searched_as_said():
    ir = QueryIR(action="打开", scope_include=["Kitchen"])
    assert ir.search_texts("turn on the kitchen light") == ["打开", "turn on the kitchen light"]
    assert QueryIR(action="打开").search_texts("打开厨房灯") == ["打开"]


def test_value_in_the_utterance_prefers_commands_that_take_one(index):
    got = top(index, "主卧空调调到26度", QueryIR(action="调到26度", type_hint="AirConditioner", scope_include=["主卧"]))
    assert got[0].command_id == "main-thermostatCoolingSetpoint-setCoolingSetpoint"
    assert got[0].channels["argument"] > 0
    ir = QueryIR(action="调到制冷", type_hint="AirConditioner", scope_include=["主卧"])
    mode = top(index, "主卧空调调到制冷", ir)
    assert mode[0].command_id == "main-airConditionerMode-setAirConditionerMode" and mode[0].channels["argument"] == 1.0


AC_WITH_FAN = [
    *SPECS["p-ac"],
    {"id": "main-airConditionerFanMode-setFanMode", "description": "设置空调风速", "type": "string",
     "value_range": None, "value_list": [{"value": "auto", "description": "自动风"},
                                         {"value": "low", "description": "低风"}]},
    {"id": "main-fanOscillationMode-setFanOscillationMode", "description": "设置扫风", "type": "string",
     "value_range": None, "value_list": [{"value": "vertical", "description": "上下扫风"}]},
]


def test_subject_words_come_from_the_description_and_no_sibling():
    ac = [CommandSpec(c["id"], c["description"], c.get("type"), None,
                      tuple(ValueOption(**v) for v in c.get("value_list", ()))) for c in AC_WITH_FAN]
    subjects = {c.command: subject_phrases(c, tuple(ac)) for c in ac}
    assert ("风", "速") in subjects["setFanMode"] and ("扫", "风") in subjects["setFanOscillationMode"]
    assert subjects["on"] == subjects["off"] == ()  # a verb command acts on the device itself
    # 制冷 is a value of the mode command: the cooling setpoint cannot claim it
    assert not any(run == ("制", "冷") for run in subjects["setCoolingSetpoint"])


def test_the_subject_never_ranks_one_device_over_another(tmp_path, embedder):
    # the same light twice, once described in Chinese and once in English: "亮度" can only name the first
    english = ("turn on", "turn off", "set level", "set color temperature")
    specs = {**SPECS, "p-light-en": [{**c, "description": d} for c, d in zip(SPECS["p-light"], english, strict=True)]}
    devices = [("zh", "吸顶灯", "r-living", "Light", "p-light"), ("en", "吊灯", "r-living", "Light", "p-light-en")]
    index = CommandIndex(Home.load(write_home(tmp_path / "mixed", devices=devices, specs=specs)), embedder)
    got = top(index, "把灯亮度调到50%", QueryIR(action="亮度调到50%", type_hint="Light"))
    level = {c.device_id: c for c in got if c.command_id == "main-switchLevel-setLevel"}
    assert level["zh"].channels["subject"] == level["en"].channels["subject"] == 0.0
    assert next(c for c in got if c.device_id == "zh" and c.command_id == "main-switch-on").channels["subject"] == -1.0


def test_a_word_for_the_kind_of_device_is_no_subject(tmp_path, embedder):
    # "调节灯光颜色" sets the colour; every "灯光" a user says is not a request for it
    color = {"id": "main-colorControl-setColor", "description": "调节灯光颜色", "type": "string", "value_range": None}
    specs = {**SPECS, "p-color": [*SPECS["p-light"], color]}
    devices = [("c", "客厅吸顶灯", "r-living", "Light", "p-color"), ("d", "主卧台灯", "r-bed", "Light", "p-light")]
    index = CommandIndex(Home.load(write_home(tmp_path / "color", devices=devices, specs=specs)), embedder)
    got = top(index, "把客厅灯光调到50%", QueryIR(action="灯光调到50%", type_hint="Light", scope_include=["客厅"]))
    assert (got[0].device_id, got[0].command_id) == ("c", "main-switchLevel-setLevel")


def test_a_value_that_is_the_word_for_a_verb_command_names_the_command(tmp_path, embedder):
    fan = [{"id": "main-switch-on", "description": "turn on", "type": None, "value_range": None},
           {"id": "main-switch-off", "description": "power off", "type": None, "value_range": None},
           {"id": "main-fanOscillationMode-setFanOscillationMode", "description": "set oscillation", "type": "string",
            "value_range": None, "value_list": [{"value": "swing", "description": "swing"},
                                                {"value": "off", "description": "stop swinging"}]}]
    rooms = {"r1": "Office", "r2": "Bedroom"}
    devices = [("f1", "Desk Fan", "r1", "Fan", "p-fan"), ("f2", "Ceiling Fan", "r2", "Fan", "p-fan")]
    index = CommandIndex(Home.load(write_home(tmp_path / "fans", devices=devices, specs={"p-fan": fan}, rooms=rooms)),
                         embedder)
    assert top(index, "turn off the desk fan", QueryIR(action="turn off"))[0].command_id == "main-switch-off"
    plan = index.plan_bulk(QueryIR(action="turn off", quantifier="all"), "turn off all fans")
    assert {c for _, c in plan.targets} == {"main-switch-off"}
    assert top(index, "set the desk fan to swing", QueryIR(action="set swing"))[0].command_id == \
        "main-fanOscillationMode-setFanOscillationMode"


def test_half_is_a_value_in_english_as_in_chinese(index):
    ir = QueryIR(action="open halfway", type_hint="Blind", scope_include=["客厅"])
    got = top(index, "open the living room curtains halfway", ir)
    assert got[0].command_id == "main-windowShadeLevel-setShadeLevel" and got[0].channels["argument"] > 0


def test_a_chinese_query_meets_the_documents_in_chinese(tmp_path, embedder):
    # the TV's stop command also has the one-word English verb document "stop", which the sentence
    # embedder puts nearest a lone "关": a Chinese query must weigh the Chinese documents
    specs = {"p-tv": [
        {"id": "main-switch-off", "description": "关闭电源", "type": None, "value_range": None},
        {"id": "main-mediaPlayback-stop", "description": "停止播放", "type": None, "value_range": None},
        {"id": "main-audioMute-unmute", "description": "取消静音", "type": None, "value_range": None},
    ]}
    devices = [("tv1", "客厅电视", "r-living", "Television", "p-tv"),
               ("tv2", "主卧电视", "r-bed", "Television", "p-tv")]
    index = CommandIndex(Home.load(write_home(tmp_path / "tv", devices=devices, specs=specs)), embedder)
    plan = index.plan_bulk(QueryIR(action="关", quantifier="all"), "所有电视都关了")
    assert plan.command_id == "main-switch-off" and {d for d, _ in plan.targets} == {"tv1", "tv2"}


def _audio_home(tmp_path, embedder, lang):
    words = {"en": ("switch on", "power off", "mute", "unmute", "set mute state"),
             "zh": ("打开电源", "关闭电源", "静音", "取消静音", "设置静音状态")}[lang]
    ids = ("switch-on", "switch-off", "audioMute-mute", "audioMute-unmute", "audioMute-setMute")
    specs = {"p-tv": [{"id": f"main-{i}", "description": w, "type": "string" if i.endswith("setMute") else None,
                       "value_range": None} for i, w in zip(ids, words, strict=True)]}
    labels = ("Living Room TV", "Bedroom TV") if lang == "en" else ("客厅电视", "主卧电视")
    devices = [("tv1", labels[0], "r-living", "Television", "p-tv"), ("tv2", labels[1], "r-bed", "Television", "p-tv")]
    return CommandIndex(Home.load(write_home(tmp_path / lang, devices=devices, specs=specs)), embedder)


@pytest.mark.parametrize("lang, utterance, command", [
    ("en", "mute all the tvs", "main-audioMute-mute"),
    ("en", "unmute all the tvs", "main-audioMute-unmute"),
    ("zh", "所有电视都静音", "main-audioMute-mute"),
    ("zh", "所有电视都取消静音", "main-audioMute-unmute"),  # 静音 inside 取消静音 names nothing
])
def test_a_verb_command_named_by_its_own_words_wins(tmp_path, embedder, lang, utterance, command):
    index = _audio_home(tmp_path, embedder, lang)
    ir = parse_without_lm(utterance, index)
    assert index.plan_bulk(ir, utterance).command_id == command
    assert index.search(ir.model_copy(update={"quantifier": "one"}), utterance)[0].command_id == command


@pytest.mark.parametrize("utterance, command", [
    ("mute the living room tv", "main-audioMute-mute"),  # the embedder alone puts "mute" nearer unmute
    ("mute all the tvs", "main-audioMute-mute"),
    ("unmute the bedroom tv", "main-audioMute-unmute"),
])
def test_mute_is_not_unmute_in_the_bundled_english_home(embedder, utterance, command):
    index = CommandIndex(Home.load(resolve_dataset("smarthome/home_en")), embedder)
    ir = parse_without_lm(utterance, index)
    if ir.quantifier == "all":
        assert index.plan_bulk(ir, utterance).command_id == command
    else:
        assert index.search(ir, utterance)[0].command_id == command


def test_a_negated_verb_names_nothing(tmp_path, embedder):
    index = _audio_home(tmp_path, embedder, "zh")
    assert not index.verbs.scores("电视不用静音了").any()
    assert index.verbs.scores("电视静音").min() == -1.0


def test_the_name_index_grows_linearly_a_1_mb_label_indexes_in_seconds_with_bounded_memory(home_dir, embedder):
    import dataclasses
    import time
    import tracemalloc

    from tracerag.commands.command_retrieval import CommandRetrieval
    from tracerag.home_commands.home_names import NAME_RUN_MAX, NAME_TOKENS_MAX

    CommandRetrieval(CommandIndex(Home.load(home_dir), embedder))(query="打开客厅的灯")  # the embedder warm
    home = Home.load(home_dir)
    label = "".join(chr(0x4E00 + i % 20_000) for i in range(1_000_000))  # 1M distinct-ish words, no load cap
    home.devices[0] = dataclasses.replace(home.devices[0], label=label)
    tracemalloc.start()
    started = time.process_time()  # CPU time: a busy machine must not fail it
    try:
        index = CommandIndex(home, embedder)
        pred = CommandRetrieval(index)(query="打开客厅的灯")
        elapsed = time.process_time() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert pred.candidates and elapsed < 10.0, elapsed
    assert peak < 200_000_000, peak  # the transient token list of the label; the index itself is bounded
    assert max(map(len, index.names.name_keys)) == NAME_TOKENS_MAX
    assert len(index.names.name_runs) <= len(home.devices) * (NAME_TOKENS_MAX * (NAME_RUN_MAX - 1) + 1)


def test_runs_of_short_names_are_all_indexed():
    home = Home("h", [Device("d1", "小米风扇", "", "Fan", "p", ())], [])
    index = CommandIndex(home, LexicalEmbedder())
    assert index.names.name_runs == {("小", "米"), ("米", "风"), ("风", "扇"), ("小", "米", "风"), ("米", "风", "扇"),
                               ("小", "米", "风", "扇")}


def test_a_floor_said_with_a_room_on_it_is_that_room():
    """"the Living Room blinds downstairs", "一楼客厅": the room narrows the floor; two rooms said stay both."""
    rooms = ["Living Room", "Office", "Wing 1 Living Room", "客厅", "书房"]
    floors = {"Living Room": "downstairs", "Office": "downstairs", "Wing 1 Living Room": "upstairs",
              "客厅": "一楼", "书房": "一楼"}
    home = Home("h", [Device("d1", "Living Room Blinds", "Living Room", "Blind", "p", ())], rooms, floors=floors)
    index = CommandIndex(home, LexicalEmbedder())
    assert index.names.mentioned_rooms("open the Living Room Blinds downstairs") == ["Living Room"]
    assert index.names.mentioned_rooms("给一楼客厅空调打开") == ["客厅"]
    assert sorted(index.names.mentioned_rooms("lights off downstairs")) == ["Living Room", "Office"]
    assert sorted(index.names.mentioned_rooms("客厅和书房的灯关掉")) == ["书房", "客厅"]
