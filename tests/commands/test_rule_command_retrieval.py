"""RuleCommandRetrieval: the program a command-line run without an LM answers with, in plain Python. Its answer
must be CommandRetrieval's on the rule parse, field for field, or a run would say something the library does not."""

from __future__ import annotations

import pytest

from tracerag.commands.answering import MAX_UTTERANCE_CHARS, RuleCommandRetrieval, build_indexes
from tracerag.commands.building import build_commands
from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.commands.result import CommandsResult
from tracerag.datasets.smarthome import (
    HELDOUT_FILE,
    NEGATED_FILE,
    QUERIES_FILE,
    home_dirs,
    load_dataset,
    resolve_dataset,
)

# what no labelled query holds: nothing said, chit-chat, several requests, a room the home lacks, too long
ODD_UTTERANCES = ["", "   ", "?!", "hello", "今天天气怎么样", "打开客厅的灯然后关掉卧室的空调", "打开车库的灯",
                  "别锁门", "打开客厅的灯" + " " * MAX_UTTERANCE_CHARS, "turn off every light but the hall"]


@pytest.fixture(scope="module")
def indexes(embedder):
    return build_indexes(home_dirs(resolve_dataset("smarthome/home_small"))
                         + home_dirs(resolve_dataset("smarthome/home_en")), embedder)


def _utterances(name: str) -> list[str]:
    said = [q.query for file in (QUERIES_FILE, HELDOUT_FILE, NEGATED_FILE)
            for queries in load_dataset(f"smarthome/{name}", queries_file=file).values() for q in queries]
    return said + ODD_UTTERANCES


@pytest.mark.parametrize("home", ["home_small", "home_en"])
def test_its_answer_is_command_retrievals_on_the_rule_parse_field_for_field(indexes, home):
    module = CommandRetrieval(indexes, ir_source="none")
    plain = RuleCommandRetrieval(indexes)
    utterances = _utterances(home)
    assert len(utterances) > 50
    for query in utterances:
        expected = CommandsResult.of(module(query=query, home=home)).model_dump()
        answer = plain(query=query, home=home)
        assert isinstance(answer, CommandsResult)
        assert answer.model_dump() == expected, query


def test_an_unknown_home_is_refused_as_by_the_module(indexes):
    with pytest.raises(KeyError, match="unknown home 'nowhere'"):
        RuleCommandRetrieval(indexes)(query="打开客厅的灯", home="nowhere")


def test_the_builder_gives_it_only_where_no_lm_takes_part(embedder, fake_lm):
    plain = build_commands(homes="smarthome/home_small", embedder=embedder, plain=True)
    assert isinstance(plain, RuleCommandRetrieval)
    assert plain(query="打开客厅的灯").candidates[0].command_id == "main-switch-on"
    assert isinstance(build_commands(homes="smarthome/home_small", embedder=embedder), CommandRetrieval)
    assert isinstance(build_commands(homes="smarthome/home_small", embedder=embedder, plain=True, ir_source="gold"),
                      CommandRetrieval)
    fake_lm(irs={})  # an LM configured: its parse takes part, so the program is the module
    program = build_commands(homes="smarthome/home_small", embedder=embedder, plain=True)
    assert isinstance(program, CommandRetrieval) and program.ir_source == "lm"
