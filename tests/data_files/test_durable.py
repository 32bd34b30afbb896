"""write_durably: a reader sees the old file or the new one; a failed write leaves the old one and no temp file."""

import errno

import pytest

from tracerag.data_files import durable
from tracerag.data_files.durable import DurableWriteError, sha256_of, verify_sha256, write_durably


def test_a_write_replaces_the_file_and_leaves_nothing_else(tmp_path):
    target = tmp_path / "a.json"
    target.write_text("old")
    write_durably(target, '{"new": "é"}')
    assert target.read_text(encoding="utf-8") == '{"new": "é"}'
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_a_full_disk_keeps_the_previous_version_and_says_so(tmp_path, monkeypatch):
    target = tmp_path / "a.json"
    target.write_text("previous")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(durable.os, "fsync", full)
    with pytest.raises(DurableWriteError, match=r"a\.json: not written \(disk full\); the previous version is intact"):
        write_durably(target, "x" * 10_000)
    assert target.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_a_symlinked_file_is_written_through_its_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_durably(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_missing_directory_is_an_error_naming_the_file(tmp_path):
    with pytest.raises(DurableWriteError, match="nowhere/a.json: not written"):
        write_durably(tmp_path / "nowhere" / "a.json", "x")


def test_the_recorded_checksum_is_verified():
    digest = sha256_of("content")
    verify_sha256(b"content", digest, "f.json")
    verify_sha256("anything", None, "f.json")  # written before checksums: accepted
    with pytest.raises(ValueError, match="f.json: its content does not match the checksum"):
        verify_sha256("c0ntent", digest, "f.json")
