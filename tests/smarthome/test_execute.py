"""Executing CommandRetrieval's results against the SmartThings and Home Assistant stand-ins."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest
from smarthome_fakes import TOKEN, FakeHomeAssistant, FakeSmartThings

from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.home_commands.command_results import BulkGroup, BulkPlan
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex
from tracerag.smarthome.cli import add_execute_arguments, add_home_commands, execute_from_args, run_home_command
from tracerag.smarthome.execute import HomeAssistantTarget, SmartThingsTarget, execute, retry, target_for_home
from tracerag.smarthome.homeassistant import pull_homeassistant
from tracerag.smarthome.smartthings import pull_smartthings

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def st_home(tmp_path_factory):
    out = tmp_path_factory.mktemp("st")
    with FakeSmartThings("home_medium", flaky=False) as fake:
        pull_smartthings(fake.location_id, out, token=TOKEN, base_url=fake.url, locale="zh-CN")
    return out


@pytest.fixture(scope="module")
def ha_home(tmp_path_factory):
    out = tmp_path_factory.mktemp("ha")
    with FakeHomeAssistant("home_en") as fake:
        pull_homeassistant(fake.url, out, token=TOKEN)
    return out


@pytest.fixture
def st_program(st_home, embedder):
    return CommandRetrieval(CommandIndex(Home.load(st_home), embedder), ir_source="none")


def _commands_sent(fake) -> list[tuple[str, dict]]:
    return [(path, body) for path, body in fake.posts()]


def test_dry_run_lists_the_planned_calls_and_sends_nothing(st_home, st_program):
    pred = st_program(query="把所有的灯都关掉")
    assert pred.bulk is not None and pred.bulk.hint is None
    with FakeSmartThings("home_medium") as fake:
        report = execute(pred, SmartThingsTarget(TOKEN, fake.url, home_dir=st_home))
        assert fake.posts() == []
    planned = [d for batch in pred.bulk.batches for d in batch]
    assert report.dry_run and [r.device_id for r in report.planned] == planned
    assert [c.path for c in report.calls] == [f"/v1/devices/{d}/commands" for d in planned]
    assert report.calls[0].body == {"commands": [{"component": "main", "capability": "switch", "command": "off",
                                                  "arguments": []}]}
    assert report.summary().startswith(f"dry run (smartthings): would send {len(planned)} call(s)")
    assert any(line.strip().startswith("POST /v1/devices/") for line in report.lines())


def test_execution_sends_exactly_the_plan_reports_per_device_and_retries_only_the_failed(st_home, st_program):
    pred = st_program(query="把所有的灯都关掉")
    planned = [d for batch in pred.bulk.batches for d in batch]
    vanished, failing, rejecting = planned[0], planned[1], planned[2]
    with FakeSmartThings("home_medium") as fake:
        fake.vanished, fake.failing, fake.rejecting = {vanished}, {failing}, {rejecting}
        target = SmartThingsTarget(TOKEN, fake.url, home_dir=st_home, retries=1)
        report = execute(pred, target, dry_run=False)
        sent = _commands_sent(fake)
        # every planned call, once; the 500 retried once (switch off is safe to repeat)
        assert sorted({path for path, _ in sent}) == sorted(c.path for c in report.calls)
        assert [path for path, _ in sent].count(f"/v1/devices/{failing}/commands") == 2
        assert all(body == report.calls[0].body for _, body in sent)
        assert len(report.sent) == len(planned) and len(report.accepted) == len(planned) - 3
        reasons = {r.device_id: r.reason for r in report.failed}
        assert set(reasons) == {vanished, failing, rejecting}
        assert "404" in reasons[vanished] and "500" in reasons[failing] and "FAILED" in reasons[rejecting]
        assert f"{len(planned) - 3} accepted, 3 failed" in report.summary()
        # the device that failed for a while works again; the vanished one is still gone
        fake.requests.clear()
        fake.failing, fake.rejecting = set(), set()
        again = retry(report)
        assert sorted(path for path, _ in _commands_sent(fake)) == sorted(
            f"/v1/devices/{d}/commands" for d in (vanished, failing, rejecting))
    assert len(again.accepted) == len(planned) - 1 and [r.device_id for r in again.failed] == [vanished]
    assert len(again.calls) == 3


@pytest.mark.parametrize("hint", ["need_clarification", "too_many_targets", "no_target"])
def test_unsafe_plans_are_refused_and_nothing_is_sent(st_home, hint):
    plan = BulkPlan(command_id="main-switch-off", hint=hint, reason="low confidence",
                    groups=[BulkGroup(command_id="main-switch-off", signature="x", device_ids=["a"])],
                    batches=[["a"]])
    with FakeSmartThings("home_medium") as fake:
        report = execute(plan, SmartThingsTarget(TOKEN, fake.url, home_dir=st_home), dry_run=False)
        assert fake.posts() == [] and report.calls == [] and report.results == []
    assert report.refused.startswith(f"the bulk plan's hint is {hint!r}") and "\n" not in report.refused


@pytest.mark.parametrize(("query", "hint"), [("你好", "no_intent"), ("打开客厅的灯。" * 200, "too_long")])
def test_no_intent_and_too_long_are_refused(st_home, st_program, query, hint):
    pred = st_program(query=query)
    assert pred.hint == hint
    with FakeSmartThings("home_medium") as fake:
        report = execute(pred, SmartThingsTarget(TOKEN, fake.url, home_dir=st_home), dry_run=False)
        assert fake.posts() == []
    assert report.refused == f"the prediction's hint is {hint!r}: nothing is sent"
    assert report.summary().startswith("refused:")


def test_argument_comes_from_the_utterance_or_the_command_is_not_sent(st_home, st_program):
    pred = st_program(query="把客厅所有的灯调到50%")
    assert pred.bulk.command_id == "main-switchLevel-setLevel"
    with FakeSmartThings("home_medium") as fake:
        target = SmartThingsTarget(TOKEN, fake.url, home_dir=st_home)
        report = execute(pred, target, dry_run=False, query="把客厅所有的灯调到50%")
        bodies = [body for _, body in fake.posts()]
        assert bodies and all(b["commands"][0]["arguments"] == [50] for b in bodies)
        assert len(report.accepted) == len(bodies)
        fake.requests.clear()
        # the same plan for an utterance that sets no value: skipped, with the reason, nothing sent
        report = execute(pred, target, dry_run=False, query="把客厅所有的灯调亮")
        assert fake.posts() == [] and report.calls == [] and not report.ok
        assert all("needs a value (0..100%)" in r.reason for r in report.skipped)


def test_a_sensitive_command_is_sent_only_when_confirmed(st_home, st_program):
    pred = st_program(query="把门锁打开")
    top = pred.candidates[0]
    assert (top.command_id, top.sensitive) == ("main-lock-unlock", True)
    with FakeSmartThings("home_medium") as fake:
        target = SmartThingsTarget(TOKEN, fake.url, home_dir=st_home)
        report = execute(pred, target, dry_run=False, query="把门锁打开")
        assert fake.posts() == [] and report.calls == [] and not report.ok
        assert [(r.device_id, r.status) for r in report.results] == [(top.device_id, "needs_confirmation")]
        assert "confirm_sensitive=True" in report.results[0].reason and "1 need confirmation" in report.summary()
        report = st_program.execute(pred, target, dry_run=False, query="把门锁打开", confirm_sensitive=True)
        assert [body["commands"][0]["command"] for _, body in fake.posts()] == ["unlock"]
        assert [r.status for r in report.results] == ["accepted"]


def test_a_value_in_another_unit_or_outside_the_range_is_never_sent(st_home):
    light = next(d for d in Home.load(st_home).devices if d.command("main-switchLevel-setLevel"))
    plan = BulkPlan(command_id="main-switchLevel-setLevel", batches=[[light.device_id]], groups=[BulkGroup(
        command_id="main-switchLevel-setLevel", signature="s", device_ids=[light.device_id])])
    for query, reason in (("把客厅所有的灯调到26度", "takes values in % (0..100%); the utterance says 26 degrees"),
                          ("把客厅所有的灯调到400", "400 is outside 0..100%"),
                          ("把客厅所有的灯调到1e3%", "1000% is outside 0..100%"),
                          ("把客厅所有的灯调到百分之一万", "10000% is outside 0..100%"),
                          ("set the lights to NaN percent", "NaN")):
        report = execute(plan, SmartThingsTarget(TOKEN, "http://127.0.0.1:9", home_dir=st_home), query=query)
        assert report.calls == [] and len(report.skipped) == 1 and reason in report.skipped[0].reason, query


def test_command_retrieval_execute_is_the_same_call(st_home, st_program):
    pred = st_program(query="把所有的灯都关掉")
    with FakeSmartThings("home_medium") as fake:
        report = st_program.execute(pred, SmartThingsTarget(TOKEN, fake.url))  # dry run, no home_dir needed
        assert fake.posts() == []
    assert len(report.planned) == sum(len(b) for b in pred.bulk.batches)
    single = st_program(query="打开主卧的台灯")
    report = st_program.execute(single, SmartThingsTarget(TOKEN, "http://127.0.0.1:9"))
    assert [r.device_id for r in report.planned] == [single.candidates[0].device_id]


def test_home_assistant_sends_one_service_call_per_batch_and_isolates_a_missing_entity(ha_home, embedder):
    program = CommandRetrieval(CommandIndex(Home.load(ha_home), embedder), ir_source="none")
    pred = program(query="turn off all the lights")
    lights = [d for batch in pred.bulk.batches for d in batch]
    assert pred.bulk.command_id == "main-light-turn_off" and len(lights) > 5
    with FakeHomeAssistant("home_en") as fake:
        target = HomeAssistantTarget(fake.url, TOKEN, home_dir=ha_home)
        dry = execute(pred, target)
        assert fake.posts() == []
        assert [c.to_dict() for c in dry.calls] == [{"method": "POST", "path": "/api/services/light/turn_off",
                                                     "json": {"entity_id": lights}}]
        fake.vanished = {lights[1]}
        report = execute(pred, target, dry_run=False)
        sent = fake.posts()
        # the batch (400 names a missing entity), then each entity alone to find which one
        assert sent[0] == ("/api/services/light/turn_off", {"entity_id": lights})
        assert sorted(body["entity_id"][0] for _, body in sent[1:]) == sorted(lights)
        assert [r.device_id for r in report.failed] == [lights[1]] and len(report.accepted) == len(lights) - 1
        # arguments: brightness in %, for the lights that can dim
        fake.requests.clear()
        fake.vanished = set()
        dim = program(query="dim all the lights in the living room to 30%")
        report = execute(dim, target, dry_run=False, query="dim all the lights in the living room to 30%")
        assert fake.posts() and all(body["brightness_pct"] == 30 for _, body in fake.posts())
        assert {p for p, _ in fake.posts()} == {"/api/services/light/turn_on"} and report.ok


def test_target_from_the_pulled_home(st_home, ha_home):
    st = target_for_home(st_home, token="t")
    assert isinstance(st, SmartThingsTarget) and st.base_url.startswith("http://127.0.0.1:")
    ha = target_for_home(ha_home, token="t", base_url="http://ha.local:8123")
    assert isinstance(ha, HomeAssistantTarget) and ha.url == "http://ha.local:8123"


def test_cli_pieces(st_home, capsys, monkeypatch):
    parser = argparse.ArgumentParser(prog="tracerag")
    sub = parser.add_subparsers(dest="verb", required=True)
    add_home_commands(sub)
    run = sub.add_parser("run")
    run.add_argument("--query")
    run.add_argument("--dataset")
    add_execute_arguments(run)
    with FakeSmartThings("home_medium", flaky=False) as fake:
        monkeypatch.setenv("SMARTTHINGS_TOKEN", TOKEN)
        out = st_home.parent / "cli-home"
        args = parser.parse_args(["home", "pull", "smartthings", "--location", fake.location_id, "--out", str(out),
                                  "--base-url", fake.url])
        assert run_home_command(args) == 0
        assert capsys.readouterr().out.startswith(f"wrote {out}: 61 devices, 11 rooms")
        args = parser.parse_args(["run", "--query", "把所有的灯都关掉", "--dataset", str(out), "--execute",
                                  "--dry-run"])
        home = Home.load(out)
        device_id = next(d.device_id for d in home.devices if d.command("main-switch-off"))
        pred = argparse.Namespace(hint=None, bulk=BulkPlan(
            command_id="main-switch-off", groups=[BulkGroup(command_id="main-switch-off", signature="s",
                                                            device_ids=[device_id])],
            batches=[[device_id]]), candidates=[])
        report, code = execute_from_args(args, pred, home=home)
        assert code == 0 and report["dry_run"] and len(report["calls"]) == 1 and fake.posts() == []
        assert "would send 1 call(s)" in capsys.readouterr().err
        args = parser.parse_args(["run", "--query", "q", "--dataset", str(out), "--execute"])
        report, code = execute_from_args(args, pred, home=home)
        assert code == 0 and report["accepted"] == 1 and len(fake.posts()) == 1
        assert execute_from_args(parser.parse_args(["run", "--query", "q"]), pred) == (None, 0)
        lock = next(d for d in home.devices if d.category == "Lock")
        unlock = argparse.Namespace(hint=None, bulk=None, candidates=[argparse.Namespace(
            device_id=lock.device_id, command_id="main-lock-unlock")])
        fake.requests.clear()
        report, code = execute_from_args(args, unlock, home=home)  # not confirmed: nothing sent, exit code 1
        assert code == 1 and report["needs_confirmation"] == 1 and fake.posts() == []
        assert "needs_confirmation" in capsys.readouterr().err
        confirmed = parser.parse_args(["run", "--query", "q", "--dataset", str(out), "--execute",
                                       "--confirm-sensitive"])
        report, code = execute_from_args(confirmed, unlock, home=home)
        assert code == 0 and report["accepted"] == 1 and len(fake.posts()) == 1
        monkeypatch.delenv("SMARTTHINGS_TOKEN")
        _, code = execute_from_args(args, pred, home=home)
        assert code == 2 and "SMARTTHINGS_TOKEN" in capsys.readouterr().err
    args = parser.parse_args(["home", "pull", "homeassistant", "--url", "http://127.0.0.1:9", "--out", str(out)])
    monkeypatch.delenv("HA_TOKEN", raising=False)
    assert run_home_command(args) == 2 and "HA_TOKEN" in capsys.readouterr().err


def test_cli_module_imports_no_http_or_model_stack():
    code = ("import sys, json, tracerag.smarthome.cli; "
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'httpx', 'dspy', 'numpy', 'pydantic'})))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
