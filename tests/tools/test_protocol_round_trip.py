"""A call reads back as written: ``format_call`` and ``parse_reply`` are exact inverses for any
characters, so what the model sees in its trajectory, what the tool ran and what the JSONL export
holds are one call. Then the cases where models write protocol words as text (in a sentence, in
inline code, in a fenced example), and the words a call keeps when stray markup is removed."""

from __future__ import annotations

import json

import dspy
import pytest
from conftest import AgentEngine, ToolResult
from hypothesis import given, settings
from hypothesis import strategies as st

from tracerag.agent.search_agent import SearchAgent
from tracerag.tools.cite_tags import extract_citations
from tracerag.tools.protocol_writing import ToolCall, format_call, unescape
from tracerag.tools.reply_parsing import parse_reply, restore_stop
from tracerag.tools.trajectory import write_jsonl

SCHEMAS = {"pubmed_search": {"limit": int}}

# -- render -> parse is the identity ---------------------------------------------------------------

KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True).filter(lambda k: k.casefold() != "name")
AWKWARD = st.sampled_from(['"', "'", "<", ">", "&", "&amp;", "&gt;", "&quot;", "&#x20;", "`", "```", "\n", "\r\n",
                           " ", "  ", "\t", "\x85", "\xa0", "\u2028", "\x00", "</call_tool>", "<answer>", "<think>",
                           "<tool_output>", '<snippet id="1">', "</a>", "</c", "=", "name=", "é", "指南"])
ANY = st.one_of(st.text(), st.lists(st.one_of(AWKWARD, st.text(max_size=4)), max_size=12).map("".join))
CALLS = st.builds(ToolCall, name=ANY.filter(bool), params=st.dictionaries(KEYS, ANY, max_size=4), query=ANY)


def _reads_back(call: ToolCall) -> None:
    rendered = format_call(call)
    r = parse_reply(rendered)
    assert r.call == call
    assert r.clean_text == rendered and r.markup_removed == 0 and not r.unterminated
    assert restore_stop(rendered, "stop") == rendered  # closed: nothing to complete
    # the close an API strips at the stop sequence comes back and the call still reads the same
    assert parse_reply(restore_stop(rendered.removesuffix("</call_tool>"), "stop")).call == call


@settings(max_examples=50, deadline=None)
@given(CALLS)
def test_any_call_reads_back_as_written(call):
    _reads_back(call)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(CALLS)
def test_any_call_reads_back_as_written_over_many_calls(call):
    _reads_back(call)


def test_values_are_decoded_once_and_names_are_escaped():
    r = parse_reply('<call_tool name="pubmed_search" year="&gt;2020" q="a &quot;b&quot; &amp;amp;">x</call_tool>')
    assert r.call.params == {"year": ">2020", "q": 'a "b" &amp;'}
    call = ToolCall('a"b<c>', {"year": ">2020"}, "p < 0.05 & q")
    assert format_call(call) == ('<call_tool name="a&quot;b&lt;c&gt;" year="&gt;2020">p &lt; 0.05 &amp; q'
                                 "</call_tool>")
    assert parse_reply(format_call(call)).call == call
    # a typed parameter comes back typed when the tool's schema says so
    typed = ToolCall("pubmed_search", {"limit": 5}, "statins")
    assert parse_reply(format_call(typed), SCHEMAS).call == typed


def test_only_references_are_decoded():
    assert unescape("AT&T &copy 1 &lt; 2 &#x3e; &#62; &bogus; &#0; &#xD800;") == \
        "AT&T &copy 1 < 2 > > &bogus; &#0; &#xD800;"


def test_a_parameter_name_no_attribute_can_hold_is_refused():
    for key in ("name", "NAME", "a b", "1x", ""):
        with pytest.raises(ValueError, match="cannot be written as an attribute"):
            format_call(ToolCall("pubmed_search", {key: "v"}, "q"))


REPLY_PIECES = st.sampled_from([
    "<think>", "</think>", "plan ", "\n", '<call_tool name="pubmed_search">', "<call_tool name='pubmed_search'>",
    "<call_tool name=pubmed_search limit=5>", "</call_tool>", "</call>", "</call_to", "<tool_output>", "</tool_output>",
    '<snippet id="1">', "</snippet>", "<answer>", "</answer>", "</ans", '<cite id="1">', "</cite>", "`", "```\n",
    "&amp;", "&gt;", "&quot;", "&#xa;", '"', "'", "<", ">", "=", 'year=">2020"', "</a>", "<b>", "words",
])


REPLIES = st.lists(st.one_of(REPLY_PIECES, st.text(max_size=5)), max_size=30).map("".join)


def _same_reading(reply: str) -> None:
    """What the model sees next (``clean_text``) is read as the same call or answer as its reply."""
    r = parse_reply(reply, SCHEMAS)
    again = parse_reply(r.clean_text, SCHEMAS)
    assert (again.call, again.answer) == (r.call, r.answer)
    if r.call is not None:
        assert r.clean_text.endswith(format_call(r.call))


@settings(max_examples=50, deadline=None)
@given(REPLIES)
def test_the_trajectory_reads_back_as_the_call_or_answer_that_was_taken(reply):
    _same_reading(reply)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(REPLIES)
def test_the_trajectory_reads_back_as_the_call_or_answer_that_was_taken_over_many_replies(reply):
    _same_reading(reply)


# -- the same call in the trajectory, the tool and the export -------------------------------------------

class Tools:
    def __init__(self):
        self.calls = []

    def schemas(self):
        return {"pubmed_search": {"limit": int}}

    def call(self, call):
        self.calls.append(call)
        return ToolResult(call.name, [{"id": "111", "title": "T", "text": "Statins lower LDL."}])


class ScriptedEngine(AgentEngine):
    """Replies with ``reply`` first, then answers as the conftest agent does."""

    def __init__(self, reply, **kwargs):
        super().__init__(**kwargs)
        self.reply = reply

    def _reply(self, question, trajectory):
        return self.reply if self.calls.count("AgentStep") == 1 else super()._reply(question, trajectory)


def _export(tmp_path, trajectory) -> dict:
    write_jsonl([("q1", trajectory)], tmp_path / "out.jsonl")
    return json.loads((tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()[0])


def _calls_in(interleaved: str) -> list[ToolCall]:
    """Every call the trajectory shows, read with the protocol's own reader, one call block at a time."""
    blocks = [b for b in interleaved.split("<tool_output>") if "<call_tool" in b]
    return [parse_reply(b[b.rindex("<call_tool") :], SCHEMAS).call for b in blocks]


@pytest.mark.parametrize("reply", [
    '<think>Go.</think>\n<call_tool name="pubmed_search" limit="2" year=">2020">statins &amp; LDL "high"</call_tool>',
    "<think>Go.</think>\n<call_tool name='pubmed_search' limit=2 year=\"&gt;2020\">statins &amp; LDL \"high\"",
])
def test_what_the_model_sees_what_ran_and_the_export_are_one_call(reply, tmp_path):
    dspy.configure(lm=dspy.LM("fake/model", engine=ScriptedEngine(reply), cache=False, num_retries=0),
                   adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
    tools = Tools()
    t = SearchAgent(tools)(question="Do statins lower LDL?").trajectory
    ran = ToolCall("pubmed_search", {"limit": 2, "year": ">2020"}, 'statins & LDL "high"')
    assert tools.calls == [ran] and t.stop_reason == "answered"
    row = _export(tmp_path, t)
    assert _calls_in(row["interleaved_text"]) == [ran]
    exported = row["tool_calls"][0]
    assert ToolCall(exported["tool"], exported["parameters"], exported["query"]) == ran == t.tool_calls[0].call


def test_the_question_search_without_an_lm_reads_back_as_the_search_that_ran(tmp_path):
    dspy.configure(lm=None, adapter=None)
    tools = Tools()
    question = "  Is p < 0.05 & <b>LDL</b>\nlower?  "
    t = SearchAgent(tools)(question=question).trajectory
    assert tools.calls[0].query == question
    assert _calls_in(_export(tmp_path, t)["interleaved_text"]) == tools.calls


# -- protocol words written as text --------------------------------------------------------------------

CALL = '<call_tool name="pubmed_search">statins LDL</call_tool>'


@pytest.mark.parametrize("prose", [
    "Before I write the <answer>, let me search.",
    "I will put the result in <answer> tags once I have evidence.",
    "The `<answer>` block comes last.",
    "The <tool_output> above lists two trials; one more search.",
    "I must not write `<tool_output>` myself.",
    "Format reminder:\n```\n<call_tool name=\"pubmed_search\">keywords</call_tool>\n```",
    "Example: `<call_tool name=\"pubmed_search\">keywords</call_tool>`, now the real one:",
    "```xml\n<answer>draft</answer>\n```",
])
def test_protocol_words_in_prose_or_code_are_text_and_the_call_runs(prose):
    r = parse_reply(f"{prose}\n{CALL}", SCHEMAS)
    assert r.call == ToolCall("pubmed_search", {}, "statins LDL") and r.answer is None
    assert r.hallucinated_outputs == 0 and r.ignored_calls == 0
    assert r.clean_text.count("<call_tool") == 1 and "<answer" not in r.clean_text
    assert "<tool_output" not in r.clean_text  # the mention is written as text in the trajectory


def test_an_answer_mentioned_before_a_call_runs_the_tool_in_the_loop():
    reply = 'Before I write the <answer>, let me search.\n<call_tool name="pubmed_search" limit="1">statins LDL'
    dspy.configure(lm=dspy.LM("fake/model", engine=ScriptedEngine(reply), cache=False, num_retries=0),
                   adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
    tools = Tools()
    t = SearchAgent(tools)(question="Do statins lower LDL?").trajectory
    assert tools.calls == [ToolCall("pubmed_search", {"limit": 1}, "statins LDL")]
    assert t.stop_reason == "answered" and t.ids_cited == ["111"] and t.final_answer.startswith("Yes.")
    assert t.interleaved_text.startswith("Before I write the &lt;answer>, let me search.\n<call_tool")
    assert t.interleaved_text.count("<answer>") == 1


def test_a_mentioned_tag_in_an_answer_is_text_and_a_real_one_still_counts():
    r = parse_reply('I read the `<tool_output>` block.\n<answer>Yes <cite id="1">LDL fell</cite></answer>')
    assert r.answer == 'Yes <cite id="1">LDL fell</cite>' and r.hallucinated_outputs == 0
    r = parse_reply('<answer>No.</answer>\n' + CALL)  # a closed answer before a call is the answer
    assert r.answer == "No." and r.call is None and r.ignored_calls == 1
    r = parse_reply('<answer>Yes <cite id="1">x</cite>. ' + CALL)  # an answer with a cite is an answer
    assert r.answer is not None and r.call is None
    fake = parse_reply("<tool_output><snippet id=\"9\">made up</snippet> " + CALL)  # a fake output, not a mention
    assert fake.call is None and fake.hallucinated_outputs == 1


def test_backticks_in_cited_text_never_hide_a_citation():
    answer = '<answer>Yes <cite id="1">set `x</cite> and <cite id="2">then y` works</cite>.</answer>'
    r = parse_reply(answer)
    assert r.answer == answer[len("<answer>") : -len("</answer>")]
    assert [c.ids for c in extract_citations(r.answer)] == [["1"], ["2"]]


def test_a_call_shown_only_in_code_still_runs():
    r = parse_reply(f"```xml\n{CALL}\n```", SCHEMAS)
    assert r.call == ToolCall("pubmed_search", {}, "statins LDL")
    assert parse_reply(f"`{CALL}`", SCHEMAS).call == r.call


# -- a call keeps its words -------------------------------------------------------------------------------

@pytest.mark.parametrize("body, query, removed", [
    ('statins <snippet id="1">LDL', "statins LDL", 1),
    ("anchor </a> tag", "anchor tag", 1),
    ("statins <b>LDL</b> elderly", "statins LDL elderly", 2),
    ('statins</snippet><cite id="2">LDL</cite>', "statins LDL", 3),
    ("statins </answer> LDL", "statins LDL", 1),
    ("statins &lt;b&gt; LDL", "statins <b> LDL", 0),  # escaped text is text
])
def test_stray_markup_is_removed_and_the_words_around_it_stay(body, query, removed):
    for close in ("</call_tool>", ""):
        r = parse_reply(f'<call_tool name="pubmed_search">{body}{close}', SCHEMAS)
        assert (r.call.query, r.markup_removed) == (query, removed)


def test_a_line_break_inside_a_quoted_value_is_part_of_the_value():
    r = parse_reply('<call_tool name="pubmed_search" note="first line\nsecond line" limit="3">statins</call_tool>',
                    SCHEMAS)
    assert r.call == ToolCall("pubmed_search", {"note": "first line\nsecond line", "limit": 3}, "statins")
    assert parse_reply(r.clean_text, SCHEMAS).call == r.call


@pytest.mark.parametrize("reply", [
    '<call_tool name="pubmed_search"><call_tool name="pubmed_search">statins LDL</call_tool>',
    '<call_tool name="pubmed_search">\n<call_tool name="pubmed_search">statins LDL</call_tool>',
    "<call_tool name='pubmed_search'> <CALL_TOOL name=\"pubmed_search\">statins LDL",
])
def test_a_call_tag_written_twice_runs_once_with_its_words(reply):
    r = parse_reply(reply, SCHEMAS)
    assert r.call == ToolCall("pubmed_search", {}, "statins LDL") and r.ignored_calls == 0
