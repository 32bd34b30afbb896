import dspy
import pytest

from tracerag.agent import metrics as m


def pred(answer, cited=(), returned=()):
    return dspy.Prediction(answer=answer, ids_cited=list(cited), returned_ids=list(returned))


@pytest.mark.parametrize("answer, decision", [
    ("Yes. <cite id='1'>It works.</cite>", "yes"),
    ("<b>No</b>, it does not.", "no"),
    ("Maybe: the evidence is mixed.", "maybe"),
    ("Based on these trials, no. The effect was null.", "no"),
    ("There is no clear effect.", None),
    ("The trial found nothing. Yes, later work did.", None),
    ("", None),
    (None, None),
])
def test_answer_decision(answer, decision):
    assert m.answer_decision(answer) == decision


def test_accuracy_needs_a_gold_decision():
    ex = dspy.Example(final_decision="yes")
    assert m.decision_accuracy(ex, pred("Yes, it helps.")) == 1.0
    assert m.decision_accuracy(ex, pred("No.")) == 0.0
    assert m.decision_accuracy(dspy.Example(), pred("No.")) is None


def test_citation_validity_and_coverage():
    answer = ('Yes. <cite id="1">Aspirin lowered risk.</cite> <cite ids="2, 9">Bleeding <i>rose</i>.</cite> '
              "Nothing supports this sentence.")
    p = pred(answer, cited=["1", "2", "9"], returned=["1", "2", "3"])
    assert m.citation_validity(p) == pytest.approx(2 / 3)
    # sentences: "Yes." / "Aspirin lowered risk. [1]" / "Bleeding rose. [2, 9]" / "Nothing supports ..."
    assert m.citation_coverage(p) == pytest.approx(2 / 4)
    assert m.citation_coverage(pred(None)) == 0.0
    assert m.citation_validity(pred("no cites")) == 1.0


def test_gold_found_and_score():
    ex = dspy.Example(final_decision="yes", gold_doc_ids=["1"])
    good = pred('Yes. <cite id="1">It helps.</cite>', cited=["1"], returned=["1", "2"])
    assert m.gold_found(ex, good) == 1.0 and m.gold_found(ex, pred("x", returned=["2"])) == 0.0
    assert m.agent_score(ex, good, trace=object()) is True
    assert m.agent_score(ex, pred("Yes.", returned=["1"]), trace=object()) is False  # nothing cited
    assert m.agent_score(ex, pred('Yes <cite id="7">x</cite>', cited=["7"], returned=["1"]), trace=object()) is False
    assert 0.0 <= m.agent_score(ex, good) <= 1.0 and m.agent_score(ex, good) == pytest.approx((1 + 0.5 + 1) / 3)
