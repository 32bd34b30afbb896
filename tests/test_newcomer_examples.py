"""What README's examples rely on: the Python API takes the names the CLI takes, and a missing piece is
one line saying what to do."""

from __future__ import annotations

import pytest

from tracerag.home_commands.file_fields import HomeDataError
from tracerag.home_commands.home import Home


def test_home_load_takes_a_bundled_name_as_the_cli_does():
    from tracerag.datasets.smarthome import resolve_dataset

    home = Home.load("smarthome/home_small")
    assert home.name == "home_small"
    bundled = Home.load(resolve_dataset("smarthome/home_small"))
    assert {d.device_id for d in home.devices} == {d.device_id for d in bundled.devices}


def test_home_load_of_a_directory_of_homes_names_them(tmp_path):
    with pytest.raises(HomeDataError, match="load one of them: home_en, home_large, home_medium, home_small"):
        Home.load("smarthome")


def test_home_load_of_nothing_says_neither_a_directory_nor_bundled(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(HomeDataError, match="'my_home/' is neither a directory nor a bundled dataset"):
        Home.load("my_home/")


def test_a_directory_on_disk_wins_over_a_bundled_name(tmp_path, monkeypatch, home_dir):
    tiny = {d.device_id for d in Home.load(home_dir).devices}
    (tmp_path / "smarthome").mkdir()
    home_dir.rename(tmp_path / "smarthome" / "home_small")
    monkeypatch.chdir(tmp_path)
    assert {d.device_id for d in Home.load("smarthome/home_small").devices} == tiny


def test_experience_retrieval_on_a_bank_not_built_says_how_to_build_it(tmp_path, monkeypatch):
    from tracerag import ExperienceConfig, ExperienceRetrieval
    from tracerag.stores.vector_store import StoreError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError) as info:
        ExperienceRetrieval("bank/", ExperienceConfig(enable=True))
    assert "tracerag build-bank --traces runs/ --bank bank/" in str(info.value)
    assert "create=True" not in str(info.value)
    assert not (tmp_path / "bank").exists()  # nothing written


def test_load_playbook_takes_a_bundled_name(tmp_path, monkeypatch):
    from tracerag.memory.playbook import PlaybookError, load_playbook

    monkeypatch.chdir(tmp_path)
    assert load_playbook("planner/playbooks/lab.txt").bullets
    with pytest.raises(PlaybookError, match="playbooks/nope.txt"):
        load_playbook("playbooks/nope.txt")


def test_a_bundled_home_dry_runs_without_source_json_and_refuses_to_send(embedder, monkeypatch):
    from tracerag import CommandIndex, CommandRetrieval
    from tracerag.smarthome import ExecutionError, target_for_home

    monkeypatch.setenv("SMARTTHINGS_TOKEN", "a-token")  # even with a token, nothing may be sent
    program = CommandRetrieval(CommandIndex(Home.load("smarthome/home_small"), embedder))
    pred = program(query="turn off all the lights")
    target = target_for_home("smarthome/home_small")
    report = program.execute(pred, target, query="turn off all the lights")
    assert report.dry_run and report.calls and report.planned
    assert report.summary().startswith("dry run (smartthings)")
    with pytest.raises(ExecutionError, match="no source.json .*give a target"):
        program.execute(pred, target, dry_run=False, query="turn off all the lights")


def test_run_commands_dry_run_on_a_bundled_home(capsys):
    import json

    import optimize

    argv = ["run", "commands", "--dataset", "smarthome/home_small", "--query", "turn off all the lights",
            "--execute"]
    assert optimize.main(argv + ["--dry-run"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["execution"]["dry_run"] is True
    assert "dry run (smartthings)" in out.err
    assert optimize.main(argv) == 2  # no source.json: where to send is not known
    assert "no source.json" in capsys.readouterr().err


def test_the_license_file_is_the_one_pyproject_declares():
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    assert tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"] == "MIT"
    text = (root / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "tracerag authors" in text
