"""Playbook bullets and templates: strict parsing with file:line errors, byte-stable writing, ids, counters."""

import pytest

from tracerag.memory.playbook import (
    Bullet,
    Playbook,
    PlaybookError,
    Template,
    apply_feedback,
    as_template,
    load_playbook,
    parse_playbook,
    template_id,
)

TEXT = """# Lab playbook

## materials
[mat-00001] helpful=3 harmful=0 :: Thaw enzymes on ice; never vortex a polymerase.
[mat-00002] helpful=0 harmful=1 :: Calibrate the pH meter first.{trailing}

## data checks
[data-check-00007] helpful=12 harmful=0 :: Compare row counts per partition :: after every load.
""".format(trailing="  ")  # trailing spaces are part of a bullet's text


def test_parse_reads_bullets_and_keeps_other_lines():
    playbook = parse_playbook(TEXT)
    assert playbook.ids == ["mat-00001", "mat-00002", "data-check-00007"]
    first, _, hyphenated = playbook.bullets
    assert first == Bullet("mat-00001", "mat", 3, 0, "Thaw enzymes on ice; never vortex a polymerase.")
    assert hyphenated.slug == "data-check" and hyphenated.helpful == 12
    assert hyphenated.text == "Compare row counts per partition :: after every load."  # only the first " :: " splits
    assert playbook.lines[0] == "# Lab playbook" and playbook.lines[1] == ""
    assert playbook.get("mat-00002").text.endswith("first.  ")  # trailing spaces are text
    assert playbook.get("mat-99999") is None


@pytest.mark.parametrize("text", [TEXT, TEXT.rstrip("\n"), TEXT.replace("\n", "\r\n"), "", "\n\n# only a heading\n"])
def test_round_trip_is_byte_stable(text, tmp_path):
    assert parse_playbook(text).to_text() == text
    path = tmp_path / "playbook.txt"
    path.write_bytes(text.encode("utf-8"))
    playbook = load_playbook(path)
    playbook.save(path)
    assert path.read_bytes() == text.encode("utf-8")


@pytest.mark.parametrize("line,why", [
    ("[mat-0001] helpful=1 harmful=0 :: four digits", "not a bullet"),
    ("[mat-00001] helpful=01 harmful=0 :: leading zero", "not a bullet"),
    ("[mat-00001] helpful=1 harmful=0 ::", "not a bullet"),
    ("[MAT-00001] helpful=1 harmful=0 :: upper-case slug", "not a bullet"),
    ("[mat-00001]  helpful=1 harmful=0 :: two spaces", "not a bullet"),
    ("- [mat-00001] helpful=1 harmful=0 :: a list marker", "not a bullet"),
    ("just some prose", "not a bullet"),
    ("[mat-00001] helpful=1 harmful=0 :: the same id again", "already used on line 3"),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, why):
    path = tmp_path / "bad.txt"
    path.write_text(f"# heading\n\n[mat-00001] helpful=0 harmful=0 :: ok\n{line}\n", encoding="utf-8")
    with pytest.raises(PlaybookError, match=rf"bad.txt:4: .*{why}"):
        load_playbook(path)


def test_missing_file_and_non_utf8_are_named(tmp_path):
    with pytest.raises(PlaybookError, match="missing.txt: file is missing"):
        load_playbook(tmp_path / "missing.txt")
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"# ok\n[mat-00001] helpful=0 harmful=0 :: caf\xe9\n")
    with pytest.raises(PlaybookError, match=r"latin1.txt:2: not UTF-8"):
        load_playbook(path)


def test_mixed_line_endings_are_an_error():
    with pytest.raises(PlaybookError, match=r"<string>:2: mixed line endings"):
        parse_playbook("# a\r\n[mat-00001] helpful=0 harmful=0 :: x\n# b\r\n")


def test_next_id_is_one_past_the_highest_per_slug():
    playbook = parse_playbook("[mat-00001] helpful=0 harmful=0 :: a\n[mat-00004] helpful=0 harmful=0 :: b\n"
                              "[proc-00002] helpful=0 harmful=0 :: c\n")
    assert playbook.next_id("mat") == "mat-00005"  # a gap (a deleted bullet) is never reused
    assert playbook.next_id("proc") == "proc-00003"
    assert playbook.next_id("safety-note") == "safety-note-00001"
    with pytest.raises(PlaybookError, match="invalid slug"):
        playbook.next_id("Bad Slug")
    full = parse_playbook("[mat-99999] helpful=0 harmful=0 :: last\n")
    with pytest.raises(PlaybookError, match="no 5-digit id left"):
        full.next_id("mat")


def test_add_inserts_after_its_slug_and_returns_a_new_playbook():
    playbook = parse_playbook(TEXT)
    updated, bullet = playbook.add("mat", "  Label every tube\n with the date. ")
    assert bullet == Bullet("mat-00003", "mat", 0, 0, "Label every tube with the date.")
    assert updated.ids == ["mat-00001", "mat-00002", "mat-00003", "data-check-00007"]
    assert playbook.ids == ["mat-00001", "mat-00002", "data-check-00007"]  # the original is untouched
    assert "[mat-00003] helpful=0 harmful=0 :: Label every tube with the date.\n\n## data checks" in updated.to_text()
    fresh, new = updated.add("safe", "Wear gloves.")
    assert fresh.bullets[-1] == new and fresh.to_text().endswith("[safe-00001] helpful=0 harmful=0 :: Wear gloves.\n")
    with pytest.raises(PlaybookError, match="needs some text"):
        playbook.add("mat", "   ")


def test_add_to_an_empty_playbook():
    playbook, bullet = Playbook().add("mat", "First bullet.")
    assert playbook.to_text() == "[mat-00001] helpful=0 harmful=0 :: First bullet.\n"
    assert parse_playbook(playbook.to_text()) == playbook


def test_feedback_updates_counters_and_keeps_everything_else():
    playbook = parse_playbook(TEXT)
    updated = apply_feedback(playbook, {"mat-00001": "helpful", "mat-00002": "harmful", "data-check-00007": "neutral"})
    assert [(b.helpful, b.harmful) for b in updated.bullets] == [(4, 0), (0, 2), (12, 0)]
    assert [(b.helpful, b.harmful) for b in playbook.bullets] == [(3, 0), (0, 1), (12, 0)]
    expected = TEXT.replace("[mat-00001] helpful=3", "[mat-00001] helpful=4").replace(
        "[mat-00002] helpful=0 harmful=1", "[mat-00002] helpful=0 harmful=2")
    assert updated.to_text() == expected
    twice = apply_feedback(playbook, [("mat-00001", "helpful"), ("mat-00001", "helpful")])
    assert twice.get("mat-00001").helpful == 5


def test_feedback_about_unknown_ids_or_tags_is_an_error():
    playbook = parse_playbook(TEXT)
    with pytest.raises(PlaybookError, match="no bullet with id mat-99999"):
        apply_feedback(playbook, {"mat-00001": "helpful", "mat-99999": "helpful"})
    with pytest.raises(PlaybookError, match="feedback tags must be one of"):
        apply_feedback(playbook, {"mat-00001": "great"})


def test_template_ids_come_from_the_text_only():
    a = Template(None, "Document 1: PCR", "  Mix 25 µL master mix.\n")
    b = Template("", "Document 3: PCR (another rank)", "Mix 25 µL master mix.", score=0.4)
    assert a.id == b.id == template_id("Mix 25 µL master mix.")
    assert a.id.startswith("tpl-") and len(a.id) == 12
    assert Template("template-001", "given", "text").id == "template-001"
    assert Template(None, "other", "Mix 50 µL.").id != a.id


def test_template_preview_and_coercion():
    long = Template("t", "title", "word " * 100)
    assert len(long.preview()) == 120 and long.preview().endswith("…") and "\n" not in long.preview()
    assert Template("t", "", "short\ntext").preview() == "short text"
    from_dict = as_template({"title": "Doc 1", "content": "Use a fume hood.", "score": "0.25"})
    assert from_dict == Template(template_id("Use a fume hood."), "Doc 1", "Use a fume hood.", 0.25)
    assert as_template(from_dict) is from_dict
    with pytest.raises(ValueError, match="non-empty 'text'"):
        as_template({"title": "no text"})


def test_only_a_regular_file_is_read_and_a_bom_is_stripped(tmp_path):
    import os

    os.mkfifo(tmp_path / "pipe.txt")
    with pytest.raises(PlaybookError, match="pipe.txt: is a FIFO, not a regular file"):  # never blocks
        load_playbook(tmp_path / "pipe.txt")
    with pytest.raises(PlaybookError, match="is a directory"):
        load_playbook(tmp_path)
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf[mat-00001] helpful=1 harmful=0 :: Thaw on ice.\n")
    assert load_playbook(path).ids == ["mat-00001"]
    with pytest.raises(PlaybookError, match=r"bom.txt: \d+ bytes is over the 10-byte limit"):
        load_playbook(path, max_bytes=10)
