"""Reading an utterance as a request to act now: what the safety rules trust to ask for a sensitive command."""

import pytest

from tracerag.home_commands.door_words import door_qualifiers
from tracerag.home_commands.request_reading import read_request


@pytest.mark.parametrize("utterance", [
    "解锁", "打开前门门锁", "open the garage door", "can you unlock the back door?", "车库门打开好吗",
    "please disarm the alarm", "把总水阀打开",
    "把蒸箱开了", "快把后门开了",  # 把 … 了: an order
    "let's open the garage", "we're locked out of suite B",  # "let's" asks; "locked out" asks to be let in
    "让他们进去",  # let in (进去 is no errand)
    "洗衣房那个门给我开了",  # 给我 … 了 said last: done for the speaker, now
])
def test_a_plain_request_is_one(utterance):
    assert read_request(utterance).is_request


@pytest.mark.parametrize("utterance", [
    "别让烤箱开着", "不要开锁", "don't ever unlock the door", "there is no reason to open the gas valve",  # negations
    "门锁开着吗", "车库门是不是开的", "is the garage open?", "what is the oven set to",  # questions
    "我刚才开了后门", "open the garage when I get home", "一会儿打开总水阀", "my alarm goes off at 6",  # narration
    "把开锁记录给我看看", "门锁电量多少",  # talk about a lock
    "我把门开了", "后门开了", "他给我开了门",  # what was done
    "the drug cabinet's been left open", "the gate's open", "they're unlocked",  # "is" / "has" said short
    "the van's backing up to the door",  # what is going on
    "ask the drummer to open the roller door himself", "the plumber will turn the water back on himself",
    "让小王去把院门打开", "通道门她自己开", "跟我妈说一声",  # asked of someone else
    "I heard the shop siren go off in the night",
    "the pizza oven takes ages to heat up",  # how it goes
    "preheat the oven at 7 pm", "on Monday the delivery hatch will need to open, just a heads up",  # set ahead
])
def test_negations_questions_and_narrations_are_no_request(utterance):
    assert not read_request(utterance).is_request


@pytest.mark.parametrize(("clause", "doors"), [
    ("开一下大门", [("大",)]), ("打开二楼的门", [("二", "楼")]), ("open the side gate", [("side",)]),
    ("开门", [()]), ("打开门锁", []), ("open the garage door", []), ("我在门口,开门", [()]),
    ("unlock sweet a door", [("sweet", "a")]), ("unlock a door", [()]),  # the A of Suite A, misheard
])
def test_the_words_that_say_which_door(clause, doors):
    assert door_qualifiers(clause) == doors


def test_titles_and_quotations_are_names_not_requests():
    assert "后门" not in read_request("放一首《后门开着》").text


def test_idioms_are_read_out():
    assert "开门" not in read_request("开门见山地说").text


@pytest.mark.parametrize(("utterance", "kept", "excepted"), [
    ("除了前门门锁，其他门锁都打开", ",其他门锁都打开", "前门门锁"),  # NFKC: ，is ,
    ("烤箱和燃气阀除外，厨房的都打开", ",厨房的都打开", "烤箱和燃气阀"),
    ("把安防以外的设备都关了", "的设备都关了", "把安防"),
    ("unlock everything but the back door", "unlock everything ", " the back door"),
    ("turn off all lights except the porch light", "turn off all lights ", " the porch light"),
])
def test_what_is_excepted_is_set_apart(utterance, kept, excepted):
    reading = read_request(utterance)
    assert (reading.text, reading.excepted) == (kept, excepted)


def test_clauses_split_on_punctuation_and_conjunctions():
    assert read_request("打开客厅的灯，前门门锁电量低").clauses == ["打开客厅的灯", "前门门锁电量低"]
    assert read_request("open the blinds and close the patio door").clauses == ["open the blinds ",
                                                                                  " close the patio door"]


@pytest.mark.parametrize(("said", "plain"), [
    ("百宝箱解个锁", "百宝箱解锁"), ("撤个防", "撤防"), ("集成灶点个火，熬个粥", "集成灶点火，熬个粥"),
    ("开个门", "开门"), ("开一下门", "开一下门"), ("下个月", "下个月")])
def test_a_chinese_verb_said_apart_is_read_whole(said, plain):
    from tracerag.home_commands.plain_verbs import plain_verbs

    assert plain_verbs(said) == plain


@pytest.mark.parametrize(("said", "plain"), [
    ("light the burners", "turn on the burners"),
    ("light a burner on the stovetop", "turn on a burner on the stovetop"),
    ("light the porch", "light the porch"), ("lights out", "lights off")])
def test_a_fire_lit_is_a_heater_switched_on_and_no_word_for_a_light(said, plain):
    from tracerag.home_commands.plain_verbs import plain_verbs

    assert plain_verbs(said) == plain


def test_at_once_is_now_and_once_a_condition():
    assert read_request("open the gate at once").requests
    assert not read_request("once you are in, lock the door").requests


def test_a_time_ahead_then_zai_defers_the_request():
    # "明天早上再开": open it tomorrow morning, not now (再 alone is "then": "开一下，再把灯打开" asks now)
    assert read_request("明天早上再开卷闸门，现在把招牌灯关了").requests == []
    assert read_request("卷闸门开一下，再把灯打开").requests


@pytest.mark.parametrize(("said", "plain"), [
    ("lower the horsebox ramp", "open the horsebox ramp"),
    ("get the ramp down, he's ready", "open the ramp, he's ready"),
    ("raise the ramp", "close the ramp"), ("lower the blinds", "lower the blinds"),  # only a ramp opens going down
    ("厨房的气打开", "厨房的燃气打开"), ("厨房的气温有点高", "厨房的气温有点高"),  # 气 said alone of a place is its gas
])
def test_a_ramp_opens_going_down_and_a_places_qi_is_its_gas(said, plain):
    from tracerag.home_commands.plain_verbs import plain_verbs

    assert plain_verbs(said) == plain


@pytest.mark.parametrize(("said", "requests"), [
    ("玻璃门我自己开，你把店面灯调亮一点", ["你把店面灯调亮一点"]),  # the speaker opens it themselves
    ("仓库门开着，排风扇开一下", ["排风扇开一下"]),  # a door left open is a state reported
    ("scarecrow gets set off by the birds, turn the shop camera off", [" turn the shop camera off"]),
    ("the key cabinet beeps every time it opens, is that normal", []),
    ("get the oven going", ["get the oven going"]),
])
def test_what_happens_to_a_device_or_what_the_speaker_does_is_no_request(said, requests):
    assert read_request(said).requests == requests


@pytest.mark.parametrize(("said", "plain"), [("dis arm the scare crow", "disarm the scare crow"),
                                             ("pre heat the oven", "preheat the oven"),
                                             ("un lock the frunt door", "unlock the frunt door")])
def test_a_verb_said_apart_is_said_whole(said, plain):
    from tracerag.home_commands.plain_verbs import plain_verbs

    assert plain_verbs(said) == plain


@pytest.mark.parametrize(("said", "requests"), [
    ("烤箱，开了它", ["烤箱", "开了它"]),  # 开了它: open it (我开了它 says what was done)
    ("我开了它", []),
])
def test_open_it_is_a_request_and_what_was_done_is_none(said, requests):
    assert read_request(said).requests == requests
