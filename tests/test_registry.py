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

