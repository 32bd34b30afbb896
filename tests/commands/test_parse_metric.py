"""parse_recall_at_10: recall@10 with the parse checked against the gold IR (polarity, category, scopes,
quantifier), and its GEPA feedback variant."""

import dspy
import pytest

from tracerag.commands import metrics as m
from tracerag.datasets.smarthome import Target
from tracerag.home_commands.command_results import Candidate
from tracerag.signatures.query_ir import QueryIR

GOLD = {"action": "关闭", "type_hint": "Light", "name_hint": "", "scope_include": ["主卧"], "scope_exclude": [],
        "quantifier": "all"}


def example(ir=GOLD):
    return dspy.Example(expected=[Target("light-bed", ("main-switch-off",))], quantifier="all", ir=ir)


def pred(**ir):
    # both commands of the device in the top ten: recall@10 is 1 whatever the parse says
    candidates = [Candidate(device_id="light-bed", command_id=c, label="主卧台灯", room="主卧", category="Light",
                            score=1.0, channels={}) for c in ("main-switch-on", "main-switch-off")]
    return dspy.Prediction(candidates=candidates, bulk=None, ir=QueryIR(**{**GOLD, **ir}))


@pytest.mark.parametrize(("action", "polarity"), [
    ("打开", "on"), ("开启", "on"), ("开", "on"), ("turn on", "on"), ("通电", "on"),
    ("关闭", "off"), ("关掉", "off"), ("关", "off"), ("断电", "off"), ("turn off", "off"), ("暂停播放", "off"),
    ("调到制冷模式", None), ("亮度调到50%", None), ("", None), ("打开开关", "on"),
    ("锁上", "off"), ("上锁", "off"), ("lock", "off"), ("解锁", "on"), ("开锁", "on"), ("unlock", "on"),
])
def test_action_polarity(action, polarity):
    assert m.action_polarity(action) == polarity


def test_a_parse_with_the_wrong_polarity_fails_even_when_recall_is_1():
    ex, wrong = example(), pred(action="打开")  # "主卧的灯都关掉" read as 打开
    assert m.recall(ex, wrong) == 1.0 and m.recall_at_10(ex, wrong, trace=[]) is True  # what recall alone keeps
    assert m.parse_recall_at_10(ex, wrong, trace=[]) is False
    assert m.parse_recall_at_10(ex, wrong) == 0.0


def test_a_right_parse_with_full_recall_passes():
    ex, right = example(), pred(action="关掉")
    assert m.parse_recall_at_10(ex, right, trace=[]) is True
    assert m.parse_recall_at_10(ex, right) == 1.0


def test_category_scope_and_quantifier_are_checked():
    ex = example()
    p = pred(type_hint="Switch", scope_include=["客厅"], quantifier="one")
    problems = m.parse_disagreements(GOLD, p.ir)
    assert [x.split()[0] for x in problems] == ["type_hint", "scope_include", "quantifier"]
    assert m.parse_recall_at_10(ex, p, trace=[]) is False
    assert m.parse_recall_at_10(ex, p) == pytest.approx(2 / 5)  # polarity and scope_exclude agree
    assert m.parse_recall_at_10(ex, pred(scope_include=[" 主卧"])) == 1.0  # the IR strips room names


def test_without_a_gold_ir_the_metric_is_recall():
    ex, wrong = example(ir=None), pred(action="打开")
    assert m.parse_recall_at_10(ex, wrong, trace=[]) is True and m.parse_recall_at_10(ex, wrong) == 1.0


def test_metric_contract():
    ex = example()
    for p in (pred(), pred(action="打开"), pred(quantifier="one")):
        assert isinstance(m.parse_recall_at_10(ex, p, trace=[]), bool)
        assert 0.0 <= m.parse_recall_at_10(ex, p) <= 1.0


def test_feedback_names_what_disagrees():
    out = m.parse_recall_feedback(example(), pred(action="打开", quantifier="one"))
    assert out.score == 0.0
    assert "does not switch off like the gold '关闭'" in out.feedback and "quantifier one" in out.feedback
    assert "A correct parse would be" in out.feedback
    assert m.parse_recall_feedback(example(), pred()).score == 1.0
