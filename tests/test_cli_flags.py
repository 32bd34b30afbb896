"""One spelling a flag: the same idea has the same name on every subcommand, and an older spelling still
parses (hidden from --help) into the same option, so no command line that worked breaks."""

import pytest

import optimize

RENAMED = [  # (subcommand argv, older spelling, newer spelling, value, dest, parsed)
    (["run", "experience", "--query", "q"], "--rounds", "--max-rounds", "3", "max_rounds", 3),
    (["evaluate", "rag", "--dataset", "pubmedqa"], "--rounds", "--max-rounds", "1", "max_rounds", 1),
    (["run", "agent", "--question", "q"], "--tools", "--tool", "local", "tools", ["local"]),
    (["build-bank", "--traces", "t", "--bank", "b"], "--caption-concurrency", "--num-threads", "3", "num_threads", 3),
]


@pytest.mark.parametrize(("argv", "old", "new", "value", "dest", "parsed"), RENAMED)
def test_an_older_spelling_parses_as_the_flag_it_became(argv, old, new, value, dest, parsed):
    parser = optimize.build_parser()
    assert getattr(parser.parse_args([*argv, new, value]), dest) == parsed
    assert getattr(parser.parse_args([*argv, old, value]), dest) == parsed


@pytest.mark.parametrize(("argv", "old", "new"), [(r[0][:2] if r[0][0] in ("run", "evaluate") else r[0][:1], r[1], r[2])
                                                  for r in RENAMED])
def test_help_shows_only_the_current_spelling(argv, old, new, capsys):
    with pytest.raises(SystemExit):
        optimize.build_parser().parse_args([*argv, "--help"])
    shown = capsys.readouterr().out
    assert new in shown and f"{old} " not in shown and f"{old}\n" not in shown


def test_a_repeated_tool_flag_collects_both_spellings_in_order():
    args = optimize.build_parser().parse_args(["run", "agent", "--question", "q", "--tool", "local",
                                                "--tools", "http://127.0.0.1:9/mcp"])
    assert args.tools == ["local", "http://127.0.0.1:9/mcp"]


def test_without_the_flag_each_program_keeps_its_own_default_rounds():
    args = optimize.build_parser().parse_args(["run", "rag", "--query", "q"])
    assert args.max_rounds is None  # the builder's default: experience 1, rag 2
    import inspect

    from tracerag.building import build_experience, build_rag

    assert inspect.signature(build_experience).parameters["max_rounds"].default == 1
    assert inspect.signature(build_rag).parameters["max_rounds"].default == 2
