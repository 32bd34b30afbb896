"""The program registry: every front end and an app build the same program from one entry."""

import pytest

import tracerag
from tracerag.registry import PROGRAMS, build
from tracerag.serving.programs import ENDPOINTS


def test_every_front_end_offers_the_registrys_programs():
    assert list(ENDPOINTS) == list(PROGRAMS)
    assert all(ENDPOINTS[name].program_class == entry.program_class for name, entry in PROGRAMS.items())


def test_an_app_builds_a_program_on_its_defaults_in_one_call(embedder):
    planner = tracerag.build("planner")
    assert type(planner).__name__ == "TraceablePlanner"
    commands = tracerag.build("commands", homes="smarthome/home_small", embedder=embedder)
    assert commands.ir_source == "none"  # no LM configured: the rule parser
    pred = commands(query="打开客厅的灯")
    assert pred.candidates and pred.candidates[0].device_id


def test_an_unknown_program_or_option_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown program 'poetry'; choose from commands, experience"):
        build("poetry")
    with pytest.raises(TypeError, match="colour"):
        build("planner", colour="blue")



def test_every_entry_carries_the_workflows_the_command_line_calls(capsys):
    import optimize

    for entry in PROGRAMS.values():
        assert callable(entry.examples) and callable(entry.evaluate) and callable(entry.compile)
    assert [name for name, entry in PROGRAMS.items() if entry.run is None] == ["planner"]
    parser = optimize.build_parser()
    for name in PROGRAMS:  # the command line's choices are the registry's names
        assert parser.parse_args(["evaluate", name, "--dataset", "d"]).program == name
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "planner", "--query", "q"])  # no run workflow, so no run command
    assert "unknown program 'planner'" in capsys.readouterr().err


def test_an_app_reads_a_programs_labelled_examples_from_its_entry(capsys):
    cases = PROGRAMS["planner"].examples("planner", "dev")
    assert cases and set(cases[0].inputs().keys()) >= {"requirements", "bullets"}
    questions = PROGRAMS["rag"].examples("pubmedqa", "dev")
    assert questions and questions[0].question and "questions" in capsys.readouterr().err  # what reading did
    assert PROGRAMS["agent"].examples("pubmedqa", "dev", limit=3) == questions[:3]


@pytest.mark.slow  # starts the bundled MCP search server, a child process (~2 s)
def test_the_agent_builds_on_its_defaults_with_no_option():
    """`tracerag.build("agent")` is the bundled local search server, as `tracerag run agent` is without --pubmed."""
    agent = tracerag.build("agent")
    try:
        assert type(agent).__name__ == "SearchAgent"
        assert "pubmed_search" in agent.toolbox.names
    finally:
        agent.toolbox.close()
