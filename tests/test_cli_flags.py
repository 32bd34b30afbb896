"""One spelling per flag: the same idea has the same name on every subcommand, and no second spelling parses."""

import pytest

import optimize

FLAGS = [  # (subcommand argv, the flag, a spelling it no longer has, value, dest, parsed)
    (["run", "experience", "--query", "q"], "--max-rounds", "--rounds", "3", "max_rounds", 3),
    (["evaluate", "rag", "--dataset", "pubmedqa"], "--max-rounds", "--rounds", "1", "max_rounds", 1),
    (["run", "agent", "--question", "q"], "--tool", "--tools", "local", "tools", ["local"]),
    (["build-bank", "--traces", "t", "--bank", "b"], "--num-threads", "--caption-concurrency", "3", "num_threads", 3),
]


@pytest.mark.parametrize(("argv", "flag", "other", "value", "dest", "parsed"), FLAGS)
def test_a_flag_has_one_spelling(argv, flag, other, value, dest, parsed, capsys):
    parser = optimize.build_parser()
    assert getattr(parser.parse_args([*argv, flag, value]), dest) == parsed
    with pytest.raises(SystemExit) as stop:
        parser.parse_args([*argv, other, value])
    assert stop.value.code == 2 and f"unrecognized arguments: {other}" in capsys.readouterr().err


def test_a_repeated_tool_flag_collects_each_in_order():
    args = optimize.build_parser().parse_args(["run", "agent", "--question", "q", "--tool", "local",
                                                "--tool", "http://127.0.0.1:9/mcp"])
    assert args.tools == ["local", "http://127.0.0.1:9/mcp"]


def test_without_the_flag_each_program_keeps_its_own_default_rounds():
    args = optimize.build_parser().parse_args(["run", "rag", "--query", "q"])
    assert args.max_rounds is None  # the builder's default: experience 1, rag 2
    import inspect

    from tracerag.experience.building import build_experience
    from tracerag.rag.building import build_rag

    assert inspect.signature(build_experience).parameters["max_rounds"].default == 1
    assert inspect.signature(build_rag).parameters["max_rounds"].default == 2
