"""The value an utterance sets, read from every way people say and write numbers (English and Chinese), and the
check that a command can take it: never a misread prefix ("1e2%" as 1 %), never a value clamped into range."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracerag.home_commands.devices import CommandSpec, ValueOption
from tracerag.home_commands.value_ranges import (
    DEFAULT_RANGES,
    check_value,
    command_range,
)
from tracerag.home_commands.values import SaidValue, Unreadable, read_value


def _read(text: str, ignore=()) -> tuple | None:
    """(number, unit, relative) of a value read, "max"/"min" for an extreme, None for none."""
    value = read_value(text, ignore)
    if value is None:
        return None
    assert isinstance(value, SaidValue), value
    if value.extreme:
        assert value.number is None and value.relative == 0
        return value.extreme
    assert math.isfinite(value.number)
    return value.number, value.unit, value.relative


def _spec(command_id: str, type_: str | None = "integer", values: tuple[str, ...] = (), **bounds) -> CommandSpec:
    return CommandSpec(command_id, "", type_, tuple(sorted(bounds.items())) or None,
                       tuple(ValueOption(v, v) for v in values))


LEVEL = _spec("main-switchLevel-setLevel", min=0, max=100, unit="%")
VOLUME = _spec("main-audioVolume-setVolume", min=0, max=100, unit="%")
HUE = _spec("main-colorControl-setHue", "number", min=0, max=100, unit="%")
STEP = _spec("main-statelessSwitchLevelStep-stepLevel", min=-100, max=100, unit="%")
FAN = _spec("main-fanSpeed-setFanSpeed", min=0, max=3, unit=None)
FAN_UNBOUNDED = _spec("main-fanSpeed-setFanSpeed")
COOL_C = _spec("main-thermostatCoolingSetpoint-setCoolingSetpoint", "number", min=16, max=30, unit="C")
HEAT_C_INT = _spec("main-thermostatHeatingSetpoint-setHeatingSetpoint", "integer", min=16, max=30, unit="C")
COOL_F = _spec("main-thermostatCoolingSetpoint-setCoolingSetpoint", "number", min=60, max=86, unit="F")
COOL_F_INT = _spec("main-thermostatCoolingSetpoint-setCoolingSetpoint", "integer", min=60, max=86, unit="F")
OVEN = _spec("main-ovenSetpoint-setOvenSetpoint", "number")
OVEN_F = _spec("main-ovenSetpoint-setOvenSetpoint", "number", unit="F")
KELVIN = _spec("main-colorTemperature-setColorTemperature", min=2700, max=6500, unit="K")
EVSE_MA = _spec("main-evseChargingSession-setMaxCurrent", min=6000, max=32000, unit="mA")
EVSE_A = _spec("main-evseChargingSession-setMaxCurrent", "number", min=6, max=32, unit="A")
NO_RANGE = _spec("main-customThing-setAmount", "number")


# ---------------------------------------------------------------------------------------------
# read_value: numbers as people write them

PLAIN = [
    ("set to 50%", 50, "percent"), ("50 %", 50, "percent"), ("50 percent", 50, "percent"),
    ("50 per cent", 50, "percent"), ("50 pct", 50, "percent"), ("亮度50%", 50, "percent"), ("50％", 50, "percent"),
    ("to 26 degrees", 26, "degrees"), ("26 degree", 26, "degrees"), ("26°", 26, "degrees"), ("26°C", 26, "celsius"),
    ("26 ° C", 26, "celsius"), ("26℃", 26, "celsius"), ("26 degrees celsius", 26, "celsius"),
    ("26C", 26, "celsius"), ("72 °F", 72, "fahrenheit"), ("72F", 72, "fahrenheit"), ("72℉", 72, "fahrenheit"),
    ("72 degrees fahrenheit", 72, "fahrenheit"), ("26度", 26, "degrees"), ("调到26度", 26, "degrees"),
    ("26摄氏度", 26, "celsius"), ("摄氏26度", 26, "celsius"), ("72华氏度", 72, "fahrenheit"),
    ("华氏72度", 72, "fahrenheit"), ("2700K", 2700, "kelvin"), ("2700k", 2700, "kelvin"),
    ("2700 kelvin", 2700, "kelvin"), ("色温调到4000开尔文", 4000, "kelvin"), ("16 amps", 16, "ampere"),
    ("16A", 16, "ampere"), ("16 amperes", 16, "ampere"), ("16安培", 16, "ampere"), ("6000 mA", 6000, "milliampere"),
    ("6000mA", 6000, "milliampere"), ("6000毫安", 6000, "milliampere"),
    ("调到30", 30, None), ("set the volume to 30", 30, None), ("音量调到30", 30, None), ("设为30", 30, None),
    ("亮度调成80", 80, None), ("set it at 30", 30, None), ("turn the lamp into 40", 40, None),
    ("22.5 degrees", 22.5, "degrees"), ("调到22.5度", 22.5, "degrees"), ("set to .5", 0.5, None),
    ("-5 degrees", -5, "degrees"), ("to -5 degrees", -5, "degrees"), ("调到-5度", -5, "degrees"),
    ("+5 degrees", 5, "degrees"), ("minus five degrees", -5, "degrees"), ("negative 3 degrees", -3, "degrees"),
    ("零下五度", -5, "degrees"), ("零下5度", -5, "degrees"), ("负五度", -5, "degrees"), ("负5度", -5, "degrees"),
    ("风速调到3档", 3, None), ("风扇三档", 3, None),
]


@pytest.mark.parametrize("text,number,unit", PLAIN)
def test_a_plain_number_is_read_with_its_unit(text, number, unit):
    assert _read(text) == (number, unit, 0)


NOTATIONS = [
    ("1e2%", 100, "percent"), ("set the lamp to 1e2%", 100, "percent"), ("1E2 %", 100, "percent"),
    ("5e1 percent", 50, "percent"), ("set the oven to 4e2 degrees", 400, "degrees"), ("7e1 degrees", 70, "degrees"),
    ("1.5e3 K", 1500, "kelvin"), ("2.7e+3K", 2700, "kelvin"), ("5e-1 percent", 0.5, "percent"),
    ("10^2", 100, None), ("10 ^ 2 percent", 100, "percent"), ("10^100", 1e100, None), ("10**3", 1000, None),
    ("10²", 100, None), ("1.5×10^3 K", 1500, "kelvin"), ("2*10^3", 2000, None), ("1.5 x 10³ kelvin", 1500, "kelvin"),
    ("set to 1,000", 1000, None), ("1,000,000", 1_000_000, None), ("2,700 K", 2700, "kelvin"),
    ("1,000.5 degrees", 1000.5, "degrees"), ("0x190", 400, None), ("0x190 degrees", 400, "degrees"),
    ("0b101", 5, None), ("1_000", 1000, None), ("1_000 K", 1000, "kelvin"),
    ("５０％", 50, "percent"), ("调到２６度", 26, "degrees"), ("set to ٥٠%", 50, "percent"), ("3万", 30_000, None),
    ("1.5万", 15_000, None),
]


@pytest.mark.parametrize("text,number,unit", NOTATIONS)
def test_scientific_and_other_notations_are_read_whole_never_cut_to_a_prefix(text, number, unit):
    assert _read(text) == (number, unit, 0)


SHARES = [
    ("half", 50), ("set the blinds to half", 50), ("halfway", 50), ("open it half way", 50), ("½", 50),
    ("set the blinds to ½", 50), ("set the blinds to 1/2", 50), ("3/4", 75), ("一半", 50), ("窗帘开到一半", 50),
    ("开一半", 50), ("半开", 50), ("百分之百", 100), ("百分百", 100), ("四分之三", 75), ("¼", 25),
    ("前台灯开到三成", 30), ("调到十成", 100),  # 成: tenths
]


@pytest.mark.parametrize("text,percent", SHARES)
def test_a_share_is_a_percent(text, percent):
    assert _read(text) == (percent, "percent", 0)


def test_a_third_is_read_exactly_as_a_share():
    assert _read("三分之一")[0] == pytest.approx(100 / 3)


@pytest.mark.parametrize("text", ["12/25", "24/7", "on 3/4/2025", "half an hour", "half past seven", "in half an hour"])
def test_dates_ratios_and_half_hours_are_no_share(text):
    assert read_value(text) is None


NOT_FINITE = [
    ("NaN", "NaN"), ("nan%", "nan%"), ("set the lamp to NaN", "NaN"), ("set to nan percent", "nan percent"),
    ("inf", "inf"), ("infinity", "infinity"), ("-inf", "-inf"), ("set to inf%", "inf%"), ("∞", "∞"),
    ("调到infinity度", "infinity度"), ("1e400", "1e400"), ("set the oven to 1e400 degrees", "1e400 degrees"),
    ("10^100000", "10^100000"), ("10**999999", "10**999999"), ("1e9999999999", "1e9999999999"),
    ("0x" + "f" * 300, "0x" + "f" * 300), ("1" * 400, "1" * 400), ("set to 1e-400 percent", "1e-400 percent"),
    ("0^-1", "0^-1"), ("set to 22,5 degrees", "22,5 degrees"),
]


@pytest.mark.parametrize("text,said", NOT_FINITE)
def test_what_is_no_finite_number_is_unreadable_with_a_reason(text, said):
    value = read_value(text)
    assert isinstance(value, Unreadable)
    assert value.text == said
    assert value.reason and "\n" not in value.reason and len(value.reason) < 200


def test_an_absurd_exponent_is_judged_not_computed():
    value = read_value("10^999999")  # 10 ** 999999 would take a while and a lot of memory
    assert isinstance(value, Unreadable) and "1e999999" in value.reason


@pytest.mark.parametrize("text", ["turn on Nan's lamp", "the infinity pool lights", "turn on the lamp in Nan's room"])
def test_nan_and_inf_as_words_in_a_sentence_are_no_value(text):
    assert read_value(text) is None


# ---------------------------------------------------------------------------------------------
# read_value: numbers said in words

SPELLED_EN = [
    ("fifty", 50, None), ("set it to fifty", 50, None), ("fifty-nine percent", 59, "percent"),
    ("fifty nine percent", 59, "percent"), ("twenty six degrees", 26, "degrees"), ("twenty-six degrees", 26, "degrees"),
    ("one hundred", 100, None), ("a hundred percent", 100, "percent"), ("to a hundred percent", 100, "percent"),
    ("hundred percent", 100, "percent"), ("one hundred and five", 105, None), ("two hundred", 200, None),
    ("two thousand seven hundred kelvin", 2700, "kelvin"), ("three thousand", 3000, None),
    ("twelve hundred", 1200, None), ("set the fan to three", 3, None), ("set it to four", 4, None),
    ("set the fan to speed three", 3, None), ("five percent", 5, "percent"), ("set it to zero", 0, None),
    ("zero", 0, None), ("zero percent", 0, "percent"), ("fifteen", 15, None), ("Seventy Two F", 72, "fahrenheit"),
    ("twenty two point five degrees", 22.5, "degrees"), ("one", 1, None), ("three", 3, None),
    ("the brightness to ninety-five %", 95, "percent"), ("increase brightness to forty-four percent", 44, "percent"),
    ("make awnings to zero", 0, None), ("twenty two degrees", 22, "degrees"),
    # a fraction said after the whole number is part of it, never a share of 50 %
    ("log burner to twenty-one and a half", 21.5, None), ("heating to nineteen and three quarters", 19.75, None),
    ("set it to 2 and a quarter", 2.25, None), ("twenty two and a half degrees", 22.5, "degrees"),
]


@pytest.mark.parametrize("text,number,unit", SPELLED_EN)
def test_an_english_number_in_words_is_read(text, number, unit):
    assert _read(text) == (number, unit, 0)


NOT_NUMBERS_EN = ["one light", "turn on one light", "turn on the one in the kitchen", "someone", "often", "tone",
                  "turn on two lights", "anyone home", "the lonely lamp", "phone", "seventh heaven", "one of the lamps",
                  "turn on the first light"]


@pytest.mark.parametrize("text", NOT_NUMBERS_EN)
def test_ordinary_words_are_no_numbers(text):
    assert read_value(text) is None


SPELLED_ZH = [
    ("二十六度", 26, "degrees"), ("调到二十六度", 26, "degrees"), ("空调调到二十六度", 26, "degrees"),
    ("百分之五十", 50, "percent"), ("亮度调到百分之八十", 80, "percent"), ("百分之一万", 10_000, "percent"),
    ("百分之零点五", 0.5, "percent"), ("百分之50", 50, "percent"), ("百分之二点五", 2.5, "percent"),
    ("两百", 200, None), ("调到两百", 200, None), ("一千五", 1500, None), ("两百五", 250, None),
    ("一百零五", 105, None), ("一万五", 15_000, None), ("一千零五十", 1050, None), ("调成三十一", 31, None),
    ("调到三十一", 31, None), ("设为三十一", 31, None), ("设置为三十一", 31, None), ("将客厅调成三十一", 31, None),
    ("调成三", 3, None), ("七十度", 70, "degrees"), ("十度", 10, "degrees"), ("十五度", 15, "degrees"),
    ("零下十度", -10, "degrees"), ("二十二点五度", 22.5, "degrees"), ("零点五", 0.5, None),
    ("三十一", 31, None), ("两千七百开尔文", 2700, "kelvin"), ("开到十五", 15, None), ("设置为一百", 100, None),
    ("亮度为四十", 40, None), ("百分之六十三", 63, "percent"), ("风速调到三档", 3, None),
]


@pytest.mark.parametrize("text,number,unit", SPELLED_ZH)
def test_a_chinese_number_in_words_is_read(text, number, unit):
    assert _read(text) == (number, unit, 0)


NOT_VALUES_ZH = ["一楼", "二楼", "打开一楼的灯", "一下", "开一下空调", "一点", "调亮一点", "下一首", "上一台", "第一个",
                 "一盏灯", "两个灯", "打开两个灯", "三号", "一起打开", "打开百叶窗", "千万别开", "万一下雨",
                 "二十多度", "调到二十多度", "八成", "三星电视", "六三", "调到二十楼", "give me a minute"]


@pytest.mark.parametrize("text", NOT_VALUES_ZH)
def test_chinese_ordinals_measure_words_and_idioms_are_no_values(text):
    assert read_value(text) is None


# ---------------------------------------------------------------------------------------------
# read_value: times, durations, names and channels are no values

TIMES = ["at 7 pm", "at 7pm", "at 7 PM", "at 7 p.m.", "at 7", "at 7:30", "at 7.30", "at seven", "at seven pm",
         "at seven thirty", "7 o'clock", "turn on the lights at 7", "wake me at 6", "7点", "七点", "七点半", "晚上八点",
         "八点钟", "七点三十", "调到七点三十", "7点30分", "in 10 minutes", "in 10 min", "turn off in 5 min",
         "turn off in a min", "for 2 hours", "for two hours", "after 30 seconds", "in 10", "10分钟后", "两小时",
         "半小时", "三天", "5秒", "两个小时后关灯", "turn it off in ten minutes", "for 2h"]


@pytest.mark.parametrize("text", TIMES)
def test_a_time_of_day_or_a_duration_is_no_value(text):
    assert read_value(text) is None


TIME_AND_VALUE = [
    ("set the heat to 21 degrees at 7 pm", 21, "degrees"), ("at 7 pm set the heat to 21 degrees", 21, "degrees"),
    ("set the volume to 30 in 10 minutes", 30, None), ("in 10 minutes set the light to 50%", 50, "percent"),
    ("晚上八点把空调调到26度", 26, "degrees"), ("10分钟后调到30", 30, None), ("keep the volume at 30", 30, None),
    ("set the light to 50% for 10 minutes", 50, "percent"), ("两小时后亮度调到百分之二十", 20, "percent"),
]


@pytest.mark.parametrize("text,number,unit", TIME_AND_VALUE)
def test_the_value_beside_a_time_is_still_read(text, number, unit):
    assert _read(text) == (number, unit, 0)


NAMES = ["HDMI 2", "switch to HDMI 2", "channel 5", "go to channel 5", "第5频道", "换到第5频道", "input 3",
         "scene 2", "turn on lamp 2", "turn on the bedroom 2 light", "#3", "mp3", "PS5", "2nd floor", "3D mode",
         "version 1.2.3", "lights 3,5", "turn on 3,5"]


@pytest.mark.parametrize("text", NAMES)
def test_names_channels_and_identifiers_are_no_values(text):
    assert read_value(text) is None


IGNORED = [
    ("turn on Pendant 2", [(8, 17)], None), ("set Bedroom 2 to 20", [(4, 13)], (20, None, 0)),
    ("筒灯3调到50", [(0, 3)], (50, None, 0)), ("筒灯3", [(0, 3)], None),
    ("Max's lamp to 40%", [(0, 5)], (40, "percent", 0)),
    ("turn on Max", [(8, 11)], None), ("set Fan 2 to 3", [(4, 9)], (3, None, 0)), ("Lamp 7 on", [(0, 6)], None),
]


@pytest.mark.parametrize("text,ignore,expected", IGNORED)
def test_spans_the_caller_knows_are_names_are_skipped(text, ignore, expected):
    assert _read(text, ignore) == expected


@pytest.mark.parametrize("text", ["筒灯3", "关掉车库灯3", "关闭二楼卧室2的灯", "打开2栋客厅的灯"])
def test_a_number_right_after_a_chinese_device_or_room_word_is_its_name(text):
    assert _read(text) is None


def test_a_number_after_a_subject_or_a_setting_word_is_a_value():
    assert _read("音量30") == (30, None, 0) and _read("把灯调到3") == (3, None, 0)


# ---------------------------------------------------------------------------------------------
# read_value: which number, when several

WHICH = [
    ("set lamp 2 to 40%", (40, "percent", 0)), ("set lights to 50% and the fan to 30%", (50, "percent", 0)),
    ("set to 50% and the fan to 3", (50, "percent", 0)), ("set lights 3,5 to 20 degrees", (20, "degrees", 0)),
    ("调到26度, 风速3档", (26, "degrees", 0)), ("set Bedroom 2 to 20", (20, None, 0)), ("筒灯3调到50", (50, None, 0)),
    ("set the max current 16", (16, None, 0)), ("turn the 2 lamps to 30", (30, None, 0)),
    ("lamps 1 and 2", None), ("3 and 4", None), ("turn on 2 lamps", (2, None, 0)),
    ("set it to 50%, then after 5 minutes to 20%", (50, "percent", 0)),
    ("lamp 2 to max", "max"), ("开到最大", "max"), ("set to 30 or max", (30, None, 0)),
]


@pytest.mark.parametrize("text,expected", WHICH)
def test_the_first_with_a_unit_else_after_a_setting_word_else_the_only_one(text, expected):
    assert _read(text) == expected


SPANS = [("set to 50%", "50%"), ("调低百分之十", "百分之十"), ("零下五度", "零下五度"), ("to -5 degrees", "-5 degrees"),
         ("set it to fifty-nine percent", "fifty-nine percent"), ("开到最大", "最大"),
         ("set the blinds to half", "half"), ("５０％", "５０％"), ("turn it all the way up", "all the way up")]


@pytest.mark.parametrize("text,span", SPANS)
def test_the_span_is_the_value_as_said(text, span):
    value = read_value(text)
    assert text[value.start:value.end] == span


# ---------------------------------------------------------------------------------------------
# read_value: a change, not a target

RELATIVE = [
    ("increase the brightness by 10%", 10, "percent", 1), ("up 5 degrees", 5, "degrees", 1),
    ("turn it up 5 degrees", 5, "degrees", 1), ("调高5度", 5, "degrees", 1), ("把温度调高两度", 2, "degrees", 1),
    ("调低百分之十", 10, "percent", -1), ("亮度降低10%", 10, "percent", -1), ("音量加5", 5, None, 1),
    ("音量减5", 5, None, -1), ("再高一度", 1, "degrees", 1), ("turn it down 3", 3, None, -1),
    ("raise it 2", 2, None, 1), ("lower by 3 degrees", 3, "degrees", -1), ("volume down by 5%", 5, "percent", -1),
    ("volume up 5", 5, None, 1), ("dim by 10 percent", 10, "percent", -1), ("brighten by 10%", 10, "percent", 1),
    ("make it 2 degrees warmer", 2, "degrees", 1), ("set the temperature 2 degrees lower", 2, "degrees", -1),
    ("make it 10% brighter", 10, "percent", 1), ("decrease the volume by twenty", 20, None, -1),
    ("set to 50%", 50, "percent", 0), ("调到26度", 26, "degrees", 0), ("turn up the heat to 21", 21, None, 0),
    ("调高到26度", 26, "degrees", 0), ("lower the blinds to 30%", 30, "percent", 0),
    ("increase the brightness to 80%", 80, "percent", 0), ("最高26度", 26, "degrees", 0),
]


@pytest.mark.parametrize("text,number,unit,relative", RELATIVE)
def test_a_change_by_an_amount_is_relative_and_a_target_is_not(text, number, unit, relative):
    assert _read(text) == (number, unit, relative)


def test_a_change_that_says_no_direction_is_unreadable():
    value = read_value("change the temperature by 2 degrees")
    assert isinstance(value, Unreadable) and "up or down" in value.reason


EXTREMES = [
    ("最亮", "max"), ("最大", "max"), ("开到最大", "max"), ("调到最亮", "max"), ("音量最大", "max"), ("开满", "max"),
    ("set it to max", "max"), ("maximum", "max"), ("full brightness", "max"), ("turn it all the way up", "max"),
    ("brightest", "max"), ("最暗", "min"), ("最小", "min"), ("调到最暗", "min"), ("最低", "min"),
    ("turn the fan to min", "min"), ("minimum", "min"), ("lowest", "min"), ("all the way down", "min"),
    ("dimmest", "min"),
]


@pytest.mark.parametrize("text,extreme", EXTREMES)
def test_an_extreme_word_is_the_top_or_bottom_of_the_range(text, extreme):
    assert _read(text) == extreme


@pytest.mark.parametrize("text", ["", "turn on the lights", "打开灯", "turn up the volume", "what time is it", "关灯",
                                  "  ", "set the scene", "fully open the blinds"])
def test_an_utterance_without_a_number_sets_none(text):
    assert read_value(text) is None


# ---------------------------------------------------------------------------------------------
# check_value: what is sent, or why not

def _check(spec: CommandSpec, text: str):
    value = read_value(text)
    assert isinstance(value, SaidValue), value
    return check_value(value, spec)


SENT = [
    (LEVEL, "set to 50%", 50), (LEVEL, "1e2%", 100), (LEVEL, "5e1 percent", 50), (LEVEL, "fifty-nine percent", 59),
    (LEVEL, "百分之六十三", 63), (LEVEL, "set to 50", 50), (LEVEL, "half", 50), (LEVEL, "一半", 50),
    (LEVEL, "max", 100), (LEVEL, "最亮", 100), (LEVEL, "最暗", 0), (LEVEL, "min", 0), (LEVEL, "0%", 0),
    (VOLUME, "音量调到30", 30), (VOLUME, "set the volume to thirty", 30), (HUE, "set hue to 22.5%", 22.5),
    (STEP, "-50%", -50), (STEP, "max", 100),
    (FAN, "set the fan to three", 3), (FAN, "84%", 3), (FAN, "1%", 1), (FAN, "33%", 1), (FAN, "34%", 2),
    (FAN, "67%", 3), (FAN, "100%", 3), (FAN, "0%", 0), (FAN, "half", 2), (FAN, "max", 3), (FAN, "min", 0),
    (COOL_C, "26 degrees", 26), (COOL_C, "26°C", 26), (COOL_C, "22.5 degrees", 22.5), (COOL_C, "72 °F", 22.2),
    (COOL_C, "调到二十六度", 26), (COOL_C, "set to 26", 26), (COOL_F, "72 degrees", 72), (COOL_F, "26 °C", 78.8),
    (COOL_F_INT, "26 °C", 79), (HEAT_C_INT, "72F", 22), (COOL_F, "72F", 72),
    (OVEN, "set the oven to 200 degrees", 200), (OVEN, "set the oven to 350 F", 176.7), (OVEN_F, "400 degrees", 400),
    (KELVIN, "2700K", 2700), (KELVIN, "two thousand seven hundred kelvin", 2700), (KELVIN, "4.5e3 K", 4500),
    (EVSE_MA, "16 amps", 16000), (EVSE_MA, "6000 mA", 6000), (EVSE_MA, "16.5 A", 16500), (EVSE_A, "16000 mA", 16),
    (EVSE_A, "1.65e4 mA", 16.5), (FAN_UNBOUNDED, "set the fan to 3", 3),
    (LEVEL, "increase the brightness by 10%", 10), (LEVEL, "调低百分之十", -10), (COOL_C, "lower by 2 degrees", -2),
    (COOL_F, "raise it 2 °C", 3.6), (FAN, "turn the fan up by 10%", 1), (HEAT_C_INT, "调高两度", 2),
]


@pytest.mark.parametrize("spec,text,sent", SENT)
def test_check_value_sends_the_value_in_the_commands_unit(spec, text, sent):
    value, reason = _check(spec, text)
    assert (value, reason) == (sent, "")
    assert type(value) is int if spec.type == "integer" else isinstance(value, int | float)


REFUSED = [
    (LEVEL, "百分之一万", "10000% is outside 0..100%"), (LEVEL, "10^100", "1e+100 is outside 0..100%"),
    (LEVEL, "26 degrees", "takes values in %"), (LEVEL, "2700K", "takes values in %"),
    (LEVEL, "22.5%", "whole numbers"), (LEVEL, "0.5%", "whole numbers"), (LEVEL, "-5%", "outside 0..100%"),
    (LEVEL, "up by 1000%", "a change of 1000% is more than the whole of 0..100%"),
    (OVEN, "set the oven to 4e2 degrees", "400 degrees is outside 0..300 °C (the default for ovenSetpoint"),
    (OVEN, "set the oven to 9999999 degrees", "outside 0..300 °C"), (OVEN_F, "set the oven to 9999999 F", "572 °F"),
    (FAN_UNBOUNDED, "set fan speed to 99999999999999991611392", "1e+23 is outside 0..10"),
    (FAN, "150%", "no share"), (FAN, "5", "outside 0..3"), (FAN, "1.5", "whole numbers"),
    (COOL_C, "26 °F", "26 °F (-3.3 °C) is outside 16..30 °C"), (COOL_C, "35 degrees", "outside 16..30 °C"),
    (COOL_F, "50 °C", "50 °C (122 °F) is outside 60..86 °F"), (COOL_C, "50%", "takes values in °C"),
    (COOL_C, "2700 kelvin", "takes values in °C"), (KELVIN, "26 degrees", "takes values in K"),
    (KELVIN, "50%", "takes values in K"), (KELVIN, "1000K", "outside 2700..6500 K"),
    (EVSE_MA, "1.5 A", "1.5 A (1500 mA) is outside 6000..32000 mA"), (EVSE_MA, "50%", "takes values in mA"),
    (EVSE_MA, "16 degrees", "takes values in mA"), (NO_RANGE, "set to 5", "no value is safe to send it unbounded"),
    (NO_RANGE, "max", "no value is safe"), (COOL_C, "raise it 20 degrees", "more than the whole of 16..30 °C"),
]


@pytest.mark.parametrize("spec,text,why", REFUSED)
def test_check_value_refuses_and_never_clamps(spec, text, why):
    value, reason = _check(spec, text)
    assert value is None
    assert why in reason and spec.id in reason and "\n" not in reason


def test_a_value_that_is_not_finite_is_refused_even_when_built_by_hand():
    for number in (math.nan, math.inf, -math.inf):
        value, reason = check_value(SaidValue(number, "percent", None, 0, 0, 0), LEVEL)
        assert value is None and "not a finite number" in reason


def test_a_command_that_takes_no_number_refuses_one():
    said = read_value("50%")
    assert check_value(said, _spec("main-switch-on", None)) == (None, "main-switch-on takes no value, not a number")
    assert check_value(said, _spec("main-mode-setMode", "string", values=("eco", "turbo")))[0] is None


def test_a_numeric_list_bounds_the_values_it_lists():
    fan = _spec("main-airConditionerFanMode-setSpeed", "integer", values=("1", "2", "4"))
    assert _check(fan, "set to 2") == (2, "")
    assert _check(fan, "set to 3")[0] is None
    assert _check(fan, "max") == (4, "")


DEFAULT_RANGE_CASES = [
    (_spec("main-switchLevel-setLevel"), "0..100%"), (_spec("main-windowShadeLevel-setShadeLevel"), "0..100%"),
    (_spec("main-windowShadeTiltLevel-setShadeTiltLevel"), "0..100%"), (_spec("main-audioVolume-setVolume"), "0..100%"),
    (_spec("main-fanSpeedPercent-setPercent"), "0..100%"), (_spec("main-fanSpeed-setFanSpeed"), "0..10"),
    (_spec("main-thermostatCoolingSetpoint-setCoolingSetpoint"), "5..35 °C"),
    (_spec("main-thermostatHeatingSetpoint-setHeatingSetpoint", unit="F"), "41..95 °F"),
    (_spec("main-ovenSetpoint-setOvenSetpoint"), "0..300 °C"), (_spec("main-ovenSetpoint-setOvenSetpoint", unit="F"),
                                                                "32..572 °F"),
    (_spec("main-samsungce.ovenSetpoint-setOvenSetpoint"), "0..300 °C"),
    (_spec("main-colorTemperature-setColorTemperature"), "1000..10000 K"),
    (_spec("main-colorControl-setHue", min=0), "0..100%"), (_spec("main-colorControl-setSaturation"), "0..100%"),
    (_spec("main-tvChannel-setTvChannel"), "1..9999"),
    (_spec("main-evseChargingSession-setMaxCurrent"), "6..80 A"),
    (_spec("main-evseChargingSession-setMaxCurrent", unit="mA"), "6000..80000 mA"),
    (_spec("main-switchLevel-setLevel", min=10), "10..100%"), (_spec("main-anything-setPercent", unit="%"), "0..100%"),
    (_spec("main-anything-setPercent", unit="%", max=50), "0..50%"),
]


@pytest.mark.parametrize("spec,shown", DEFAULT_RANGE_CASES)
def test_a_spec_without_a_range_takes_the_documented_default(spec, shown):
    assert str(command_range(spec)) == shown


@pytest.mark.parametrize("spec", [NO_RANGE, _spec("main-customThing-setAmount", min=0),
                                  _spec("main-customThing-setAmount", unit="W"),
                                  _spec("main-thermostatCoolingSetpoint-setCoolingSetpoint", unit="K")])
def test_a_command_with_no_range_and_no_default_has_none(spec):
    assert command_range(spec) is None


def test_every_default_is_a_finite_ordered_range():
    for low, high, _ in DEFAULT_RANGES.values():
        assert math.isfinite(low) and math.isfinite(high) and low < high


# ---------------------------------------------------------------------------------------------
# Properties: whatever is written, nothing out of range or not finite is ever sent

RANGED = [LEVEL, STEP, HUE, FAN, COOL_C, COOL_F, HEAT_C_INT, KELVIN, EVSE_MA, EVSE_A, OVEN, OVEN_F]
_FORMS = [
    lambda x, u: f"set it to {x!r}{u}", lambda x, u: f"{x!r} {u}", lambda x, u: f"{x:e}{u}",
    lambda x, u: f"set to {x:.3E} {u}", lambda x, u: f"{x:.12g}{u}", lambda x, u: f"调到{x!r}{u}",
    lambda x, u: f"up by {abs(x)!r}{u}", lambda x, u: f"lower it {abs(x):e} {u}",
]
_UNITS = ["", "%", " percent", " degrees", "°C", "°F", "K", " mA", " A", "度"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(RANGED), st.floats(allow_nan=False, allow_infinity=False, width=64),
       st.sampled_from(_FORMS), st.sampled_from(_UNITS))
def test_any_number_written_any_way_is_sent_in_range_or_refused(spec, x, form, unit):
    rng = command_range(spec)
    said = read_value(form(x, unit))
    assert said is None or isinstance(said, SaidValue | Unreadable)
    if not isinstance(said, SaidValue):
        return
    value, reason = check_value(said, spec)
    if value is None:
        assert reason
        return
    assert reason == "" and math.isfinite(value)
    if said.relative:
        assert abs(value) <= rng.high - rng.low
    else:
        assert rng.low <= value <= rng.high
    if spec.type == "integer":
        assert type(value) is int


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([LEVEL, HUE, STEP]), st.floats(min_value=-100, max_value=100))
def test_a_number_in_range_written_plainly_or_with_percent_reads_back_exactly(spec, x):
    rng = command_range(spec)
    for text in (f"set it to {x!r}%", f"{x!r} percent", f"set to {x!r}"):
        said = read_value(text)
        assert isinstance(said, SaidValue) and said.number == x and said.relative == 0
        value, _ = check_value(said, spec)
        if rng.low <= x <= rng.high and (spec.type == "number" or x.is_integer()):
            assert value == x
        else:
            assert value is None


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_read_value_never_raises_on_any_text(text):
    said = read_value(text)
    assert said is None or isinstance(said, Unreadable) or said.extreme or math.isfinite(said.number)


_PIECES = ["0", "1", "2", "5", "9", ".", ",", "e", "E", "^", "**", "x", "×", "%", "°", "C", "F", "K", "mA", " ",
           "-", "+", "to ", "at ", "by ", "up ", "one ", "hundred ", "nan", "inf", "度", "百分之", "一", "二", "十",
           "百", "万", "点", "零下", "负", "调到", "调高", "最大", "max ", "half ", "½", "/", ":", "pm ", "分钟", "个",
           "第"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join), st.sampled_from(RANGED))
def test_read_then_check_never_raises_and_never_sends_out_of_range(text, spec):
    said = read_value(text)
    if not isinstance(said, SaidValue):
        return
    assert said.extreme or math.isfinite(said.number)
    value, reason = check_value(said, spec)
    if value is not None:
        rng = command_range(spec)
        assert math.isfinite(value) and reason == ""
        assert (abs(value) <= rng.high - rng.low) if said.relative else (rng.low <= value <= rng.high)


def test_a_temperature_without_a_unit_is_in_the_homes_scale():
    """A US home (its thermostats say °F) sets its oven, whose spec gives no range, to 350 °F; a metric home
    refuses 350 as more than an oven's 300 °C; a value said in the other scale is converted."""
    said = read_value("set the oven to 350")
    assert check_value(said, OVEN, "fahrenheit") == (350, "")
    assert "outside 0..300 °C" in check_value(said, OVEN, "celsius")[1]
    assert check_value(read_value("set the oven to 180 °C"), OVEN, "fahrenheit") == (356, "")
    assert "outside 32..572 °F" in check_value(read_value("set the oven to 600"), OVEN, "fahrenheit")[1]
    assert check_value(said, _spec("main-fanSpeed-setFanSpeed"), "fahrenheit")[0] is None  # no temperature


@pytest.mark.parametrize("text, number", [("次卧空调二十四度半", 24.5), ("调到24度半", 24.5), ("调高两度半", 2.5)])
def test_a_half_said_after_the_degrees_is_part_of_the_value(text, number):
    assert read_value(text).number == number  # never 24, which nobody said


def test_a_water_heater_without_a_range_takes_a_water_heaters():
    heater = _spec("main-thermostatHeatingSetpoint-setHeatingSetpoint", "number")
    said = read_value("热水器水温调到50度")
    assert check_value(said, heater, "celsius", "WaterHeater") == (50, "")
    assert "outside 5..35 °C" in check_value(said, heater, "celsius", "Thermostat")[1]  # a room's is not
    assert check_value(read_value("water heater to 125"), heater, "fahrenheit", "WaterHeater") == (125, "")
    assert "outside 35..75 °C" in check_value(read_value("调到90度"), heater, "celsius", "WaterHeater")[1]
