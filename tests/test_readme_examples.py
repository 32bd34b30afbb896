"""README.md is one screen with an example per program, and keeps the two commands a newcomer pastes.

Every code block of the README (and of docs/) runs as pasted, or says what it needs that a test may not
have, in tests/docs/test_code_blocks.py.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_the_readme_is_one_screen_with_an_example_per_program():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    for program in ("CommandRetrieval", "ExperienceRetrieval", "SelfReflectiveRAG", "TraceablePlanner",
                    "SearchAgent"):
        assert f"**{program}**" in text
    assert 'pip install -e . && tracerag evaluate commands --dataset smarthome --split test' in text
    assert 'pip install -e ".[dev]" && python -m pytest' in text
