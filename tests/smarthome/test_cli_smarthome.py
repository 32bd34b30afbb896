"""The command line end to end: pull a home from the SmartThings stand-in, then run and execute a
command on it, as a user would."""

from __future__ import annotations

import json

from smarthome_fakes import TOKEN, FakeSmartThings

import optimize


def test_pull_then_run_with_execute(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SMARTTHINGS_TOKEN", TOKEN)
    home = tmp_path / "home"
    with FakeSmartThings("home_medium", flaky=False) as fake:
        assert optimize.main(["home", "pull", "smartthings", "--location", fake.location_id, "--out", str(home),
                              "--base-url", fake.url]) == 0
        capsys.readouterr()
        run = ["run", "commands", "--dataset", str(home), "--query", "把所有的灯都关掉", "--embedder", "lexical"]
        assert optimize.main([*run, "--execute", "--dry-run"]) == 0
        dry = json.loads(capsys.readouterr().out)
        assert dry["bulk"]["command_id"] == "main-switch-off" and dry["execution"]["dry_run"]
        assert fake.posts() == []  # a dry run sends nothing

        assert optimize.main([*run, "--execute"]) == 0
        sent = json.loads(capsys.readouterr().out)["execution"]
        targets = {d for batch in dry["bulk"]["batches"] for d in batch}
        assert sent["accepted"] == len(targets) and not sent["failed"]
        assert {path.split("/")[3] for path, _ in fake.posts()} == targets  # /v1/devices/{id}/commands
