"""The protocol's structure: thought is prose, queries carry no markup, quoted values hold any
character, and a call is completed according to how the LM stopped. One test per case found by
running the parser side by side with DR-Tulu's, then properties over random replies."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracerag.tools.cite_tags import extract_citations
from tracerag.tools.reply_parsing import parse_reply, restore_stop

SCHEMAS = {"pubmed_search": {"limit": int}}
TAG_NAMES = ("call_tool", "call", "answer", "think", "tool_output", "cite", "snippet")


def holds_markup(value: str) -> bool:
    """``<`` or ``</`` followed by a protocol tag name, in any case."""
    at = value.find("<")
    while at != -1:
        rest = value[at + 1 :].removeprefix("/").casefold()
        if any(rest.startswith(name) for name in TAG_NAMES):
            return True
        at = value.find("<", at + 1)
    return False


# -- a closed <think> is prose ----------------------------------------------------------------

def test_an_answer_tag_mentioned_in_thought_does_not_hide_the_call():
    r = parse_reply('<think>I will put the final result in <answer> tags later.</think>\n'
                    '<call_tool name="pubmed_search">tirzepatide weight loss</call_tool>', SCHEMAS)
    assert r.call is not None and r.call.query == "tirzepatide weight loss" and r.answer is None


def test_a_call_mentioned_in_thought_does_not_run_and_the_answer_stands():
    r = parse_reply('<think>No need for another <call_tool name="pubmed_search"> call; evidence is enough.'
                    '</think>\n<answer>Yes <cite id="1">it works</cite>.</answer>', SCHEMAS)
    assert r.call is None and r.answer == 'Yes <cite id="1">it works</cite>.' and r.ignored_calls == 0


def test_a_tool_output_mentioned_in_thought_is_not_a_fake_output():
    r = parse_reply("<think>The <tool_output> above lists two trials.</think><answer>Two trials.</answer>")
    assert r.answer == "Two trials." and r.hallucinated_outputs == 0


def test_a_call_mentioned_in_thought_before_the_real_call_is_not_run():
    r = parse_reply('<think>I ran <call_tool name="pubmed_search">statins</call_tool> and will search '
                    'again.</think>\n<call_tool name="pubmed_search">statins elderly</call_tool>', SCHEMAS)
    assert r.call.query == "statins elderly" and r.ignored_calls == 0


def test_an_unclosed_think_is_prose_up_to_the_first_tag():
    r = parse_reply('<think>I should search for it\n<call_tool name="pubmed_search">aspirin stroke</call_tool>')
    assert r.call.query == "aspirin stroke"
    r = parse_reply("<think>enough evidence now <answer>Yes.</answer>")
    assert r.answer == "Yes." and r.call is None


def test_a_fake_output_after_thought_is_still_cut_and_counted():
    r = parse_reply('<think>search</think><call_tool name="pubmed_search">q</call_tool><tool_output>made up'
                    '</tool_output><think>I read <tool_output> mentions</think><answer>x</answer>')
    assert r.call.query == "q" and r.hallucinated_outputs == 1 and "made up" not in r.clean_text


def test_cites_mentioned_in_thought_are_not_citations():
    cites = extract_citations('<think>I will add <cite id="x">a cite</cite> later</think> Yes <cite id="1">y</cite>')
    assert [(c.ids, c.text) for c in cites] == [(["1"], "y")]


# -- no markup in queries or parameters --------------------------------------------------------

@pytest.mark.parametrize("reply, query", [
    ('<call_tool name="pubmed_search">metformin aging</call_to', "metformin aging"),  # a cut close tag
    ('<call_tool name="pubmed_search">metformin aging</CALL_TOOL>', "metformin aging"),  # uppercase close
    ('<CALL_TOOL NAME="pubmed_search">metformin aging</CALL_TOOL>', "metformin aging"),  # uppercase call
    ('<call_tool name="pubmed_search">metformin <snippet id="1">aging</call_tool>', "metformin aging"),  # a snippet
    ('<call_tool name="pubmed_search">metformin <snipp aging</call_tool>', "metformin aging"),  # a fragment
    ('<call_tool name="pubmed_search">metformin <Answer>aging', "metformin"),  # an uppercase answer
    ('<call_tool name="pubmed_search">metformin aging</cal', "metformin aging"),  # cut at the end
])
def test_markup_never_reaches_the_query(reply, query):
    r = parse_reply(reply, SCHEMAS)
    assert r.call is not None and r.call.query == query and not holds_markup(r.call.query)


def test_removed_markup_is_counted_and_parameters_are_clean():
    r = parse_reply('<call_tool name="pubmed_search" note="see <snipp here" limit="2">a <ansW b</call_tool>',
                    SCHEMAS)
    assert r.call.query == "a b" and r.call.params == {"note": "see here", "limit": 2}
    assert r.markup_removed == 2


# -- quoted attribute values -------------------------------------------------------------------

def test_a_gt_inside_a_quoted_value_does_not_end_the_tag():
    r = parse_reply('<call_tool name="pubmed_search" year=">2020">long covid fatigue</call_tool>', SCHEMAS)
    assert r.call.params == {"year": ">2020"} and r.call.query == "long covid fatigue"
    r = parse_reply("<call_tool name='pubmed_search' range='1<x>2'>q</call_tool>", SCHEMAS)
    assert r.call.params == {"range": "1<x>2"} and r.call.query == "q"


def test_a_quote_that_never_closes_reads_like_a_bare_value():
    r = parse_reply('<call_tool name="pubmed_search>statins</call_tool>', SCHEMAS)
    assert r.call.name == "pubmed_search" and r.call.query == "statins"
    r = parse_reply("<call_tool name='pubmed_search limit=3>statins</call_tool>", SCHEMAS)
    assert (r.call.name, r.call.params, r.call.query) == ("pubmed_search", {"limit": 3}, "statins")


# -- how the LM stopped ------------------------------------------------------------------------

MULTI = '<think>t</think><call_tool name="pubmed_search">metformin\nAND aging'


def test_restore_stop_completes_a_multi_line_call_stopped_by_the_stop_sequence():
    for finish in ("stop", "</call_tool>"):
        restored = restore_stop(MULTI, finish)
        assert restored == MULTI + "</call_tool>"
        assert parse_reply(restored).call.query == "metformin AND aging"


def test_restore_stop_never_completes_a_call_cut_by_the_token_limit():
    assert restore_stop(MULTI, "length") == MULTI
    assert restore_stop('<call_tool name="pubmed_search">metformin', "length").endswith("metformin")
    r = parse_reply(restore_stop(MULTI, "length"))
    assert r.unterminated and r.call.query == "metformin"  # the loop must not run it
    assert not parse_reply(restore_stop(MULTI, "stop")).unterminated


def test_restore_stop_at_the_models_own_end_or_unknown_keeps_the_one_line_rule():
    for finish in ("end", None):
        assert restore_stop(MULTI, finish) == MULTI
        assert restore_stop('<call_tool name="x">a b', finish) == '<call_tool name="x">a b</call_tool>'


def test_restore_stop_ignores_calls_in_thought():
    reply = '<think>maybe <call_tool name="pubmed_search">statins'
    assert restore_stop(reply, "stop") == reply + "</call_tool>"  # an unclosed think: the call is real
    closed = '<think>maybe <call_tool name="pubmed_search">statins</think>'
    assert restore_stop(closed, "stop") == closed


# -- properties --------------------------------------------------------------------------------

NOISY = st.sampled_from([
    '<call_tool name="pubmed_search">', "<call_tool name=pubmed_search limit=5>", "</call_tool>", "</call_to",
    "</call>", "<CALL_TOOL name='pubmed_search'>", "</CALL_TOOL>", "<snippet", '<snippet id="1">', "</snippet>",
    "<SNIPPET>", "<snipp", "<tool_output>", "</tool_output>", "<answer>", "<Answer>", "</answer>", "<think>",
    "</think>", '<cite id="1">', "</cite>", "<cite ", "<ans", "query words", '"', "'", "<", ">", "=", "\n",
    'year=">2020"', "/", " ",
])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(NOISY, st.text(max_size=6)), max_size=30).map("".join))
def test_no_executed_query_or_parameter_holds_protocol_markup(reply):
    for finish in (None, "stop"):
        r = parse_reply(restore_stop(reply, finish), SCHEMAS)
        if r.call:
            assert not holds_markup(r.call.query) and not holds_markup(r.call.name)
            assert not any(holds_markup(str(v)) for v in r.call.params.values())


MENTION = st.sampled_from([
    '<call_tool name="pubmed_search">', "<call_tool name=browse_webpage limit=2>other query", "</call_tool>",
    "</call>", "<answer>", "</answer>", "<tool_output>", "</tool_output>", '<snippet id="9">', '<cite id="9">',
    "</cite>", "<think>", "<CALL_TOOL name='pubmed_search'>", "</call_to", '"', "'", ">", "=", "\n", "words ",
])
WORD = st.text(alphabet="abcdefghij ", min_size=1, max_size=12).filter(str.strip)


@settings(max_examples=300, deadline=None)
@given(prose=WORD, mentions=st.lists(st.one_of(MENTION, WORD), max_size=12), query=WORD, limit=st.integers(1, 9),
       answer=WORD, cite=st.text(alphabet="0123456789", min_size=1, max_size=5), calls=st.booleans())
def test_text_inside_a_closed_think_never_changes_the_call_or_answer(prose, mentions, query, limit, answer, cite,
                                                                     calls):
    tail = (f'<call_tool name="pubmed_search" limit="{limit}">{query}</call_tool>' if calls
            else f'<answer>{answer} <cite id="{cite}">{answer}</cite></answer>')
    plain = parse_reply(f"<think>{prose}</think>\n{tail}", SCHEMAS)
    noisy = parse_reply(f"<think>{prose}{''.join(mentions)}</think>\n{tail}", SCHEMAS)
    assert (noisy.call, noisy.answer, noisy.hallucinated_outputs, noisy.ignored_calls) == \
        (plain.call, plain.answer, plain.hallucinated_outputs, plain.ignored_calls)
    assert (plain.call is not None) == calls
