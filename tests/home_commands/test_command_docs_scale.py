"""A command's document is joined in linear time with the same result as before, and a value_list over
the cap is read up to it, with a warning naming the line, the command and what was skipped."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracerag.home_commands.command_docs import _join_new_phrases, _JoinedText, command_texts
from tracerag.home_commands.home import Home
from tracerag.home_commands.spec_file import MAX_VALUES_PER_COMMAND


def _quadratic_join(parts: list[str], chinese: bool) -> str:
    """The joining as it was (the text re-joined for every phrase): the reference for the result."""
    out: list[str] = []
    for part in parts:
        phrases = part.split() if chinese else [p.strip() for p in part.split(",")]
        for phrase in phrases:
            if phrase and phrase not in " ".join(out):
                out.append(phrase)
    return " ".join(out)


# few letters, so phrases often hold one another or span a join; lengths on both sides of the window
_phrase = st.text(alphabet="ab开关 ", min_size=0, max_size=30)


def _same_join(parts, chinese, scan_chars):
    """Both joins agree, with the text scanned up to ``scan_chars`` and looked up by runs past it."""
    texts = [(" " if chinese else ", ").join(phrases) for phrases in parts]
    before, _JoinedText.SCAN_CHARS = _JoinedText.SCAN_CHARS, scan_chars
    try:
        assert _join_new_phrases(texts, chinese) == _quadratic_join(texts, chinese)
    finally:
        _JoinedText.SCAN_CHARS = before


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_phrase, max_size=6), max_size=6), st.booleans(), st.sampled_from([0, 7, 16_384]))
def test_the_linear_join_gives_what_the_quadratic_one_gave(parts, chinese, scan_chars):
    _same_join(parts, chinese, scan_chars)


@pytest.mark.slow
@settings(max_examples=2_000, deadline=None)
@given(st.lists(st.lists(_phrase, max_size=8), max_size=8), st.booleans(), st.integers(0, 60))
def test_the_linear_join_matches_on_many_more_inputs(parts, chinese, scan_chars):
    _same_join(parts, chinese, scan_chars)


def test_a_long_text_is_joined_like_a_short_one():
    values = [f"Channel {i} (HD)" for i in range(600)] + ["Channel 12 (HD)", "nnel 599 (HD)", "(HD) Channel 7"]
    parts = ["Set the TV channel", ", ".join(values)]
    assert len(_quadratic_join(parts, False)) > _JoinedText.SCAN_CHARS / 4
    for scan_chars in (_JoinedText.SCAN_CHARS, 100):  # scanned whole, and looked up by runs past 100 characters
        _same_join([["Set the TV channel"], values], False, scan_chars)
    assert _join_new_phrases(parts, False).count("Channel 12 (HD)") == 1


def test_synonyms_a_document_already_holds_are_skipped():
    assert _join_new_phrases(["打开电源", "打开 开启 开 启动"], True) == "打开电源 开启 启动"
    assert _join_new_phrases(["Turn on the light", "turn on, switch on, on"], False) == \
        "Turn on the light turn on switch on"
    long_value = "a very long value description"
    assert _join_new_phrases([f"{long_value}, very long value, {long_value} again"], False) == \
        f"{long_value} {long_value} again"


def _home_with_values(home_dir, n: int):
    values = [{"value": f"v{i}", "description": f"频道{i}"} for i in range(n)]
    spec = {"profileId": "p-tv", "capabilities": [{"id": "main-tvChannel-setTvChannel", "description": "切换频道",
                                                   "value_list": values}]}
    path = home_dir / "spec.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + json.dumps(spec, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    devices = json.loads((home_dir / "devices.json").read_text(encoding="utf-8"))
    devices["items"].append({"deviceId": "tv-1", "label": "客厅电视", "roomId": "r-living", "profile": {"id": "p-tv"},
                             "components": [{"id": "main", "categories": [{"name": "Television"}],
                                             "capabilities": [{"id": "tvChannel"}]}]})
    (home_dir / "devices.json").write_text(json.dumps(devices, ensure_ascii=False), encoding="utf-8")
    return path.read_text(encoding="utf-8").count("\n")  # the spec line


def test_a_value_list_over_the_cap_is_cut_with_a_warning(home_dir):
    line = _home_with_values(home_dir, MAX_VALUES_PER_COMMAND + 500)
    home = Home.load(home_dir, log_warnings=False)
    spec = home.device("tv-1").command("main-tvChannel-setTvChannel")
    assert len(spec.value_list) == MAX_VALUES_PER_COMMAND and spec.value_list[-1].value == "v999"
    assert home.report.normalised["spec.jsonl: value_list over 1,000 values cut"] == 1
    assert f"spec.jsonl:{line}: capabilities[0] (main-tvChannel-setTvChannel): value_list has 1,500 values; " \
           "the first 1,000 are read, the other 500 skipped" in "\n".join(home.warnings)
    assert "频道999" in command_texts(spec)[0] and "频道1000" not in command_texts(spec)[0]


def test_a_value_list_at_the_cap_is_read_whole_without_a_warning(home_dir):
    _home_with_values(home_dir, MAX_VALUES_PER_COMMAND)
    home = Home.load(home_dir, log_warnings=False)
    assert len(home.device("tv-1").command("main-tvChannel-setTvChannel").value_list) == MAX_VALUES_PER_COMMAND
    assert not any("value_list has" in w for w in home.warnings) and not home.report.normalised
