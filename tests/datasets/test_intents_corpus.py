"""The intents dev corpus and the regression gate: labels a user of the gate can trust, a gate that fails."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import intents_corpus as ic
import pytest
import regression_gate as gate

from tracerag.datasets.smarthome import load_queries
from tracerag.home_commands.home import Home
from tracerag.signatures.query_ir import QueryIR

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def homes(tmp_path_factory):
    return {name: (lang, Home.load(d, log_warnings=False))
            for name, (lang, d) in ic.corpus_homes(tmp_path_factory.mktemp("homes")).items()}


def test_every_checked_in_label_names_a_device_and_command_of_its_home(homes):
    langs, intents = Counter(), set()
    for name, (lang, home) in homes.items():
        path = ic.CORPUS / name / "queries.jsonl"
        queries = load_queries(path, name, devices=home)  # raises on a target the home does not have
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert len(queries) == len(rows) > 0
        for row in rows:
            QueryIR.model_validate(row["ir"])
            assert row["lang"] == lang and row["split"] == ic.split_of(row["id"])
        langs[lang] += len(rows)
        intents.update(row["intent"] for row in rows)
    assert langs["zh"] >= 2000 and langs["en"] >= 1000
    assert intents == set(ic.INTENT_COMMANDS)  # every intent that maps to a command has sentences


def test_about_three_in_ten_rows_are_blind():
    ids = [json.loads(line)["id"] for p in ic.CORPUS.glob("*/queries.jsonl")
           for line in p.read_text(encoding="utf-8").splitlines()]
    share = sum(ic.split_of(i) == "blind" for i in ids) / len(ids)
    assert 0.25 < share < 0.35


def test_generated_gold_follows_intent_and_slots(homes):
    lang, home = homes["home_en"]
    rows = ic.generate("home_en", lang, home, ic.Sampler(lang, random.Random(7)), 2, random.Random(7), Counter())
    assert {r["intent"] for r in rows} >= {"HassTurnOn", "HassTurnOff", "HassLightSet", "HassMediaPause"}
    for row in rows:
        for target in row["expected"]:
            device = home.device(target["device_id"])
            ids = target["command_id"] if isinstance(target["command_id"], list) else [target["command_id"]]
            assert set(ids) <= {c.id for c in device.commands}
            if row["intent"] == "HassTurnOff" and device.category == "Light":
                assert ids == ["main-switch-off"]
        if row["slots"].startswith("name"):
            assert row["quantifier"] == "one" and len(row["expected"]) == 1
        if "here" in row["query"].split():
            pytest.fail(f"a sentence that needs the speaker's room was written: {row['query']}")


def test_the_gate_fails_on_a_drop_or_a_missing_slice_and_passes_within_tolerance():
    baseline = {"corpus none en HassTurnOn all home_en": {"n": 20, "recall@10": 0.9, "bulk_precision": 0.8,
                                                          "plans": 0.9},
                "test none home_small one": {"n": 30, "recall@10": 1.0, "bulk_precision": 0.5, "plans": 0.1}}
    same = json.loads(json.dumps(baseline))
    assert gate.compare(baseline, same, 0.01) == []
    within = json.loads(json.dumps(baseline))
    within["corpus none en HassTurnOn all home_en"]["recall@10"] = 0.895
    assert gate.compare(baseline, within, 0.01) == []
    dropped = json.loads(json.dumps(baseline))
    dropped["corpus none en HassTurnOn all home_en"]["bulk_precision"] = 0.75
    assert gate.compare(baseline, dropped, 0.01) == ["corpus none en HassTurnOn all home_en: bulk_precision 0.8 -> "
                                                     "0.75 (n=20)"]
    fewer_plans = json.loads(json.dumps(baseline))  # for one-device commands, fewer plans is better
    fewer_plans["test none home_small one"].update(plans=0.0, bulk_precision=None)
    assert gate.compare(baseline, fewer_plans, 0.01) == []
    more_plans = json.loads(json.dumps(baseline))
    more_plans["test none home_small one"]["plans"] = 0.2
    assert gate.compare(baseline, more_plans, 0.01) == ["test none home_small one: plans 0.1 -> 0.2 (n=30)"]
    missing = {k: v for k, v in baseline.items() if k.startswith("corpus")}
    assert gate.compare(baseline, missing, 0.01) == ["test none home_small one: missing (baseline n=30)"]


def test_the_checked_in_baseline_covers_every_corpus_home_in_both_modes():
    baseline = json.loads(gate.BASELINE.read_text(encoding="utf-8"))
    seen = {(k.split()[1], k.split()[-1]) for k in baseline if k.startswith("corpus ")}
    homes = {p.parent.name for p in ic.CORPUS.glob("*/queries.jsonl")}
    assert seen == {(mode, h) for mode in gate.MODES for h in homes}
