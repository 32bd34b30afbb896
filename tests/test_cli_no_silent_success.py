"""The command line says what happened: a run that changed or measured nothing says so in one line, a flag
that does not apply and a mistyped name exit 2 with one line, and ``--version`` answers."""

from __future__ import annotations

import json

import dspy
import pytest

import optimize
import tracerag


@pytest.fixture
def dataset(home_dir, embedder, monkeypatch, tmp_path):
    rows = [{"id": f"q{n}", "query": "打开老伙计", "expected": [{"device_id": "lamp-study",
                                                              "command_id": "main-switch-on"}]} for n in range(12)]
    (home_dir / "queries.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                            encoding="utf-8")
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)
    monkeypatch.chdir(tmp_path)
    return home_dir


def test_version_is_the_package_version(capsys):
    with pytest.raises(SystemExit) as info:
        optimize.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"tracerag {tracerag.__version__}\n"


@pytest.mark.parametrize("argv, line", [
    (["evaluate", "comands", "--dataset", "x"], "tracerag evaluate: error: unknown program 'comands'; "
                                                "did you mean 'commands'?"),
    (["evalute", "commands"], "tracerag: error: unknown command 'evalute'; did you mean 'evaluate'?"),
    (["run", "planner", "--query", "x"], "tracerag run: error: unknown program 'planner'; "
                                         "choose from commands, experience, rag, agent"),
    (["evaluate", "rag", "--dataset", "x", "--split", "tset"], "tracerag evaluate: error: unknown --split value "
                                                               "'tset'; did you mean 'test'?"),
])
def test_a_mistyped_name_is_one_line_with_the_closest_match(argv, line, capsys):
    with pytest.raises(SystemExit) as info:
        optimize.main(argv)
    assert info.value.code == 2
    assert capsys.readouterr().err == line + "\n"


def test_other_usage_errors_keep_argparse_usage(capsys):
    with pytest.raises(SystemExit) as info:
        optimize.main(["evaluate", "commands"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: tracerag evaluate") and "--dataset" in err.splitlines()[-1]


@pytest.mark.parametrize("program", ["commands", "experience", "rag", "planner"])
def test_limit_for_a_program_that_does_not_take_it_exits_2(program, capsys):
    assert optimize.main(["evaluate", program, "--dataset", "no-such-dataset", "--limit", "5"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: --limit applies to evaluate agent only; {program} scores the whole --split\n"


def test_tune_that_changes_nothing_says_so(dataset, capsys):
    assert optimize.main(["tune", "commands", "--dataset", str(dataset), "--trials", "0", "--out", "t.json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out[: out.out.rindex("}") + 1])["changed"] is False
    assert "no change: none of 0 trials beat the starting parameters on train" in out.err


def test_evaluate_planner_without_an_lm_says_its_metrics_need_one(capsys):
    assert optimize.main(["evaluate", "planner", "--dataset", "planner", "--split", "dev"]) == 0
    err = capsys.readouterr().err
    assert ("note: no plan was made (no LM configured), so every planner metric is 0: the planner needs an LM "
            "(--lm or TRACERAG_LM)") in err


def test_image_files_not_shipped_are_one_line_not_one_warning_each(tmp_path, capsys):
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "here.jpg").write_bytes(b"\xff\xd8")
    examples = [dspy.Example(images=[str(tmp_path / "images" / "here.jpg"), str(tmp_path / "images" / f"gone{n}.jpg"),
                                     "https://example.org/a.png"]) for n in range(3)]
    kept = optimize._without_missing_images(examples, tmp_path)
    assert [ex.images for ex in kept] == [[str(tmp_path / "images" / "here.jpg"), "https://example.org/a.png"]] * 3
    assert capsys.readouterr().err == (f"{tmp_path}: 3 image file(s) named in queries.jsonl are not on disk; those "
                                       "queries run on their question and caption\n")


def test_a_run_whose_lm_never_answered_exits_1_after_its_answer(dataset, cli_lm, capsys):
    from conftest import FakeEngine

    cli_lm(FakeEngine, mode="error")
    base = ["run", "commands", "--dataset", str(dataset), "--query", "打开老伙计", "--lm", "fake/model"]
    assert optimize.main(base) == 1
    printed = capsys.readouterr()
    assert json.loads(printed.out)["lm_fallbacks"] == ["parse"]  # the no-LM answer is still shown
    assert printed.err.strip().endswith("--allow-no-lm accepts such a run)")
    assert optimize.main([*base, "--allow-no-lm"]) == 0


def test_ctrl_c_is_one_line_saying_nothing_was_written(dataset, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(optimize, "_run_workflow", interrupted)
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--out", "r.json"]) == 130
    assert capsys.readouterr().err == "interrupted (Ctrl-C) during evaluate: nothing was written\n"
    assert not (dataset.parent / "r.json").exists()
