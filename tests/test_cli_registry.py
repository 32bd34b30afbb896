"""A sixth program is one registry entry (a builder and its workflows): the command line's run and evaluate
offer it and pass it their flags by name, with no code of their own for it."""

import json

import pytest

import optimize
from tracerag.registry import PROGRAMS, ProgramEntry
from tracerag.workflows.results import Outcome


class Echo:
    def __init__(self, times: int):
        self.times = times

    def __call__(self, text: str) -> str:
        return " ".join([text] * self.times)


def build_echo(*, artifact=None, top_n: int = 1):  # top_n: the --top-n flag, by name
    return Echo(top_n)


def run_echo(build, *, query: str) -> Outcome:
    return Outcome(build()(query), lines=["echoed once"], code=0)


def evaluate_echo(build, *, dataset: str, split: str = "test", k: int | None = None) -> Outcome:
    said = build()("x")
    metrics = {"recall@3": 1.0 if said else 0.0, "words": len(said.split()), "n": 1}
    report = {"program": "Echo", "dataset": dataset, "k": k or 3, "n": 1, "metrics": metrics,
              "breakdown": {}, "per_query": [{"id": "1", "said": said}]}
    return Outcome(report, notes=["note: echo scores itself"])


@pytest.fixture
def echo(monkeypatch):
    entry = ProgramEntry("echo", "Echo", "Say it again.", build_echo, "none", "echo_score", ("words",),
                         examples=lambda dataset, split="test": [], evaluate=evaluate_echo, compile=None,
                         run=run_echo)
    monkeypatch.setitem(PROGRAMS, "echo", entry)


def test_run_offers_a_new_entry_and_passes_its_flags_by_name(echo, capsys):
    assert optimize.main(["run", "echo", "--query", "hi", "--top-n", "3"]) == 0
    assert capsys.readouterr().out == "hi hi hi\nechoed once\n"


def test_evaluate_prints_its_report_columns_writes_the_report_and_its_notes(echo, tmp_path, capsys):
    out = tmp_path / "echo.json"
    assert optimize.main(["evaluate", "echo", "--dataset", "d", "--k", "3", "--top-n", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "Echo on d (test)" in printed.out and "words" in printed.out.splitlines()[1]
    assert printed.err.strip().endswith("note: echo scores itself")
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["split"] == "test" and report["per_query"] == [{"id": "1", "said": "x x"}]


def test_limit_is_refused_for_a_program_whose_evaluation_takes_none(echo, capsys):
    assert optimize.main(["evaluate", "echo", "--dataset", "d", "--limit", "2"]) == 2
    assert "error: --limit applies to evaluate agent only; echo scores the whole --split" in capsys.readouterr().err


def _echo_flags(parser):
    parser.add_argument("--times", type=int, default=1)


def repeat_echo(build, *, times: int = 1) -> int:
    print(" ".join(["echo"] * times))
    return 3


@pytest.fixture
def echo_with_commands(monkeypatch):
    from tracerag.program_entry import ProgramCommand

    own = (ProgramCommand("repeat", "say it several times", _echo_flags, repeat_echo),)
    entry = ProgramEntry("echo", "Echo", "Say it again.", build_echo, "none", "echo_score", ("words",),
                         examples=lambda dataset, split="test": [], evaluate=evaluate_echo, compile=None,
                         cli_commands=own)
    monkeypatch.setitem(PROGRAMS, "echo", entry)
    return entry


def test_a_program_declares_subcommands_of_its_own(echo_with_commands, capsys):
    assert optimize.main(["repeat", "echo", "--times", "2"]) == 3  # its run's exit code
    assert capsys.readouterr().out == "echo echo\n"
    with pytest.raises(SystemExit):
        optimize.main(["repeat", "commands"])
    assert "unknown program 'commands'; choose from echo" in capsys.readouterr().err


def test_programs_sharing_a_subcommand_share_its_flags(echo_with_commands, monkeypatch, capsys):
    import dataclasses

    from tracerag.program_entry import ProgramCommand

    tune = ProgramCommand("tune", "tune the echo", _echo_flags, repeat_echo)
    monkeypatch.setitem(PROGRAMS, "echo", dataclasses.replace(echo_with_commands, cli_commands=(tune,)))
    with pytest.raises(TypeError, match="commands and echo both offer `tune` with flags of their own"):
        optimize.build_parser()
    commands_tune = next(c for c in PROGRAMS["commands"].cli_commands if c.name == "tune")
    shared = dataclasses.replace(tune, arguments=commands_tune.arguments)
    monkeypatch.setitem(PROGRAMS, "echo", dataclasses.replace(echo_with_commands, cli_commands=(shared,)))
    assert optimize.main(["tune", "echo", "--dataset", "d", "--out", "x.json"]) == 3
    assert capsys.readouterr().out == "echo\n"
