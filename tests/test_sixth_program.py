"""A sixth program is one package plus one registry line: written here as a package of its own (a dspy.Module,
its artifact's describe and rebuild, its entry), ``tracerag.build``, ``tracerag.save`` and ``tracerag.load`` work
for it with no code of theirs changed."""

import sys
import textwrap

import pytest

import tracerag
from tracerag.registry import PROGRAMS

PACKAGE = {
    "__init__.py": '"""Shout: a sixth program, one package."""\n',
    "shout.py": '''
        import dspy

        class Say(dspy.Signature):
            """Say the text louder."""
            text: str = dspy.InputField()
            loud: str = dspy.OutputField()

        class Shout(dspy.Module):
            def __init__(self, times: int = 1):
                super().__init__()
                self.times = times
                self.say = dspy.Predict(Say)

            def forward(self, text: str):
                return dspy.Prediction(loud=" ".join([text.upper()] * self.times))
    ''',
    "artifact.py": '''
        def describe(program, where=None):
            return {"program": "Shout", "config": {"times": program.times}, "embedder": None}

        def rebuild(path, meta, **_):
            from .shout import Shout
            return Shout(**meta["config"])
    ''',
    "spec.py": '''
        from tracerag.program_entry import ProgramEntry
        from . import artifact
        from .shout import Shout

        ENTRY = ProgramEntry("shout", "Shout", "Say it louder.", lambda *, times=1: Shout(times), "none", "none",
                             (), examples=lambda dataset, split="test": [], evaluate=None, compile=None,
                             describe=artifact.describe, rebuild=artifact.rebuild)
    ''',
}


@pytest.fixture
def shout(tmp_path, monkeypatch):
    package = tmp_path / "shout_program"
    package.mkdir()
    for name, text in PACKAGE.items():
        (package / name).write_text(textwrap.dedent(text), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    from shout_program.spec import ENTRY  # the one registry line

    monkeypatch.setitem(PROGRAMS, ENTRY.name, ENTRY)
    yield ENTRY
    for name in [m for m in sys.modules if m.startswith("shout_program")]:
        del sys.modules[name]


def test_build_save_and_load_a_program_the_library_never_heard_of(shout, tmp_path):
    program = tracerag.build("shout", times=2)
    program.say.signature = program.say.signature.with_instructions("Shout, and mean it.")
    tracerag.save(program, tmp_path / "shout.json", dataset="none")
    loaded = tracerag.load(tmp_path / "shout.json")
    assert type(loaded).__name__ == "Shout" and loaded.times == 2
    assert loaded.say.signature.instructions == "Shout, and mean it."
    assert loaded(text="hi").loud == "HI HI"


def test_a_program_with_no_artifact_format_cannot_be_saved(tmp_path):
    with pytest.raises(TypeError, match="cannot save object: no artifact format for it"):
        tracerag.save(object(), tmp_path / "x.json")
