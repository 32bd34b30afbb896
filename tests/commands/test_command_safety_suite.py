"""The safety suite: no sensitive command is ever a top candidate, in a plan, or sent unless the utterance
asked for it, and no value outside its range is ever planned — on every bundled home and on the generated
homes of ``benchmarks/safety_homes.py`` (locks, doors, a garage door, valves, an oven, an alarm panel and a
siren sharing rooms and verbs with lights, air conditioners, media and covers), without an LM and with an LM
that returns adversarial parses (wrong polarity, a sensitive category, invented rooms, a lock's name, a
confident bulk parse of chit-chat).

"Sensitive" and "asked" are judged by the benchmark's own oracle (its list of command ids and each
utterance's label), never by the library's rules. The default run sends every utterance without an LM and
every seventh one through each adversarial parse; ``-m slow`` sends all of them (``bench_safety.py`` measures
the same and records the figures).
"""

from __future__ import annotations

import dspy
import pytest
from safety_homes import (
    ScriptedParser,
    adversarial_parses,
    generated_cases,
    labelled_cases,
    probe_cases,
    unsafe,
    values_wrong,
    write_safety_homes,
)

from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.datasets.smarthome import resolve_dataset
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex

HOMES = ("home_small", "home_medium", "home_large", "home_en")


@pytest.fixture(scope="module")
def homes(tmp_path_factory, embedder):
    """(home, index, cases) for each generated safety home and each bundled home."""
    generated = write_safety_homes(tmp_path_factory.mktemp("safety"))
    out = []
    for directory, cases in [*((d, generated_cases) for d in generated),
                             *((resolve_dataset(f"smarthome/{h}"), labelled_cases) for h in HOMES)]:
        home = Home.load(directory, log_warnings=False)
        out.append((home, CommandIndex(home, embedder), cases(directory, home)))
    return out


def test_without_an_lm_nothing_sensitive_is_chosen_unasked_and_no_value_leaves_its_range(homes):
    problems, runs, asks, found = [], 0, 0, 0
    for home, index, cases in homes:
        program = CommandRetrieval(index, ir_source="none")
        for utterance, asked, kind in cases:
            pred = program(query=utterance)
            runs += 1
            if any(unsafe(home, pred, asked)):
                problems.append(f"{home.name}: {utterance!r} -> {pred.candidates[:1]} {pred.bulk}")
            if values_wrong(home, pred, utterance):
                problems.append(f"{home.name}: {utterance!r} plans a value outside its range or unit")
            if kind == "asked":
                top = pred.candidates[:1]
                asks += 1
                found += bool(top) and (top[0].device_id, top[0].command_id) in asked
    assert runs > 1500 and not problems, "\n".join(problems[:20])
    assert found / asks >= 0.95  # what is asked for is still found: safety is not refusing everything


def _adversarial(homes, every: int) -> list[str]:
    engine = ScriptedParser()
    lm = dspy.LM("scripted/model", engine=engine, cache=False, num_retries=0)
    problems = []
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False)):
        for home, index, cases in homes:
            program = CommandRetrieval(index, ir_source="lm")
            for utterance, asked, _ in cases[::every]:
                for parse in adversarial_parses(utterance, home):
                    engine.ir = parse
                    pred = program(query=utterance)
                    if any(unsafe(home, pred, asked)):
                        problems.append(f"{home.name}: {utterance!r} parsed {parse} -> {pred.candidates[:1]} "
                                        f"{pred.bulk}")
    return problems


def test_adversarial_parses_never_reach_a_sensitive_command_unasked(homes):
    problems = _adversarial(homes, every=7)
    assert not problems, "\n".join(problems[:20])


@pytest.mark.slow
def test_adversarial_parses_of_every_utterance(homes):
    problems = _adversarial(homes, every=1)
    assert not problems, "\n".join(problems[:20])



@pytest.mark.parametrize("home_name, utterance", [("safety_home_small", "把天然气阀门开开"),
                                                  ("safety_home_large", "把卷帘门拉起来"),
                                                  ("safety_home_en", "open the blinds by the patio door")])
def test_a_word_for_a_sensitive_kind_names_no_device_by_its_kind(homes, home_name, utterance):
    """A word for a kind names every device of it for ranking ("风扇": 落地扇 too), but never a device with a
    sensitive command, which only its own words name: "天然气阀门" never ranks the water main's open first
    (the probe's asks for these utterances, ``safety_homes.probe_cases``). A door's label said to say where
    ("the blinds by the patio door") names no door either."""
    home, index, _ = next(h for h in homes if h[0].name == home_name)
    asked = next(a for u, a, _, _ in probe_cases(home) if u == utterance)
    pred = CommandRetrieval(index, ir_source="none")(query=utterance)
    assert not any(unsafe(home, pred, asked)), pred.candidates[:1]
