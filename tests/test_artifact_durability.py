"""``tracerag.save`` never loses or mixes an artifact, and ``tracerag.load`` never hangs on one.

A failed save (a full disk) leaves the previous artifact; a save stopped at any point (each step of the commit,
and a real SIGKILL) leaves the previous complete save or the new complete one; a program file and a sidecar
from two saves are refused, naming the file; a FIFO, a directory, a socket or a huge file at the path is an
error at once."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import tracerag
from tracerag import artifacts
from tracerag.artifacts import CHECKSUM_KEY, meta_path, next_meta_path, read_meta
from tracerag.data_files.durable import DurableWriteError
from tracerag.embedding.embedders import LexicalEmbedder
from tracerag.planner.traceable_planner import TraceablePlanner
from tracerag.registry import PROGRAMS, load

ROOT = Path(__file__).parents[1]


def _planner(marker: str) -> TraceablePlanner:
    program = TraceablePlanner()
    program.generate.signature = program.generate.signature.with_instructions(f"save {marker}")
    return program


def _save(path: Path, marker: str) -> None:
    tracerag.save(_planner(marker), path, dataset="planner", extra={"marker": marker})


def _loaded_marker(path: Path) -> str:
    """The marker of the save ``load`` returns, checked against the metadata it loads with."""
    program = load(path, embedder=LexicalEmbedder())
    marker = read_meta(path)["marker"]
    assert program.generate.signature.instructions == f"save {marker}"
    return marker


def _files(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir())}


def test_a_save_records_the_program_checksum_and_loads(tmp_path):
    path = tmp_path / "planner.json"
    _save(path, "one")
    meta = json.loads(meta_path(path).read_text())
    assert meta[CHECKSUM_KEY] == artifacts.sha256_of(path.read_bytes())
    assert _loaded_marker(path) == "one"
    _save(path, "two")
    assert _loaded_marker(path) == "two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["planner.json", "planner.json.meta.json"]  # no temp file


def test_the_program_file_is_what_dspy_writes(tmp_path):
    """Rendered in memory, the state is byte for byte the file DSPy's own ``program.save`` writes."""
    program = _planner("dspy")
    program.save(str(tmp_path / "dspy.json"))
    assert artifacts.program_state_bytes(program) == (tmp_path / "dspy.json").read_bytes()


def test_a_full_disk_keeps_the_previous_artifact_and_says_so(tmp_path, monkeypatch):
    path = tmp_path / "planner.json"
    _save(path, "old")
    before = _files(path)

    real = os.fsync
    for failing_call in (1, 2):  # the new sidecar's write, then the program file's
        calls = {"n": 0}

        def fsync(fd, calls=calls, failing_call=failing_call):
            if stat.S_ISREG(os.fstat(fd).st_mode):  # a file's data, not a directory's entries
                calls["n"] += 1
                if calls["n"] == failing_call:
                    raise OSError(errno.ENOSPC, "No space left on device")
            return real(fd)

        monkeypatch.setattr(os, "fsync", fsync)
        with pytest.raises(DurableWriteError) as err:
            _save(path, "new")
        monkeypatch.setattr(os, "fsync", real)
        message = str(err.value)
        assert "disk full" in message and str(path) in message and "previous artifact is intact" in message
        assert "json-serializable" not in message and "\n" not in message
        assert _files(path) == before  # nothing changed, no temp or .next file left
        assert _loaded_marker(path) == "old"


def test_state_that_is_not_json_writes_nothing(tmp_path, monkeypatch):
    path = tmp_path / "planner.json"
    _save(path, "old")
    before = _files(path)
    program = _planner("new")
    program.generate.demos = [{"requirements": object()}]
    with pytest.raises(TypeError, match=r"planner\.json: the program's state is not JSON"):
        tracerag.save(program, path)
    assert _files(path) == before


def test_a_sidecar_from_another_save_is_refused_naming_the_file(tmp_path):
    first, second = tmp_path / "a" / "planner.json", tmp_path / "b" / "planner.json"
    _save(first, "first")
    _save(second, "second")
    meta_path(first).write_bytes(meta_path(second).read_bytes())  # the campaign's "mixed" artifact
    with pytest.raises(ValueError) as err:
        load(first, embedder=LexicalEmbedder())
    message = str(err.value)
    assert message.startswith(f"{first}: its content does not match the checksum") and str(meta_path(first)) in message
    assert "\n" not in message and "different saves" in message


def test_a_hand_edited_program_file_is_refused_until_the_checksum_is_dropped(tmp_path):
    path = tmp_path / "planner.json"
    _save(path, "orig")
    path.write_text(path.read_text().replace("save orig", "save edited"))
    with pytest.raises(ValueError, match="delete 'program_sha256' from the sidecar"):
        load(path, embedder=LexicalEmbedder())
    meta = json.loads(meta_path(path).read_text())
    del meta[CHECKSUM_KEY]
    meta_path(path).write_text(json.dumps(meta))
    assert load(path, embedder=LexicalEmbedder()).generate.signature.instructions == "save edited"


def test_an_artifact_saved_before_checksums_still_loads(tmp_path):
    """The files the previous ``save`` wrote: DSPy's ``program.save`` and a sidecar without a checksum."""
    path = tmp_path / "planner.json"
    program = _planner("legacy")
    program.save(str(path))
    described = PROGRAMS["planner"].describe(program, tmp_path)
    meta = {"format_version": 1, **described, "dataset": "planner", "metric": None, "scores": {},
            "created": "2025-01-01T00:00:00Z", "marker": "legacy"}
    meta_path(path).write_text(json.dumps(meta, indent=2))
    assert _loaded_marker(path) == "legacy"


class _Killed(BaseException):
    """Stands for SIGKILL at one step of a save: no ``except Exception`` and no cleanup sees it."""


@pytest.mark.parametrize("step,expected", [(0, "old"), (1, "old"), (2, "new"), (3, "new")])
def test_a_save_stopped_at_any_step_leaves_one_complete_save(tmp_path, monkeypatch, step, expected):
    """Steps: before the new sidecar's write, before the program file's, before the commit rename, after it."""
    path = tmp_path / "planner.json"
    _save(path, "old")
    real_write, real_replace = artifacts.write_durably, os.replace
    counter = {"n": 0}

    def tick():
        if counter["n"] == step:
            raise _Killed
        counter["n"] += 1

    def write(target, data):
        tick()
        return real_write(target, data)

    def replace(src, dst):  # os.replace: the commit's rename (write_durably's own renames pass through)
        commit = Path(dst) == meta_path(path)
        if commit:
            tick()
        real_replace(src, dst)
        if commit:
            tick()

    monkeypatch.setattr(artifacts, "write_durably", write)
    monkeypatch.setattr(artifacts.os, "replace", replace)
    with pytest.raises(_Killed):
        _save(path, "new")
    monkeypatch.setattr(artifacts, "write_durably", real_write)
    monkeypatch.setattr(artifacts.os, "replace", real_replace)
    assert _loaded_marker(path) == expected
    if expected == "new":  # load finished the commit: the sidecar in place, no .next file left
        assert not next_meta_path(path).exists()
    _save(path, "next")  # and the next save is whole again
    assert _loaded_marker(path) == "next" and not next_meta_path(path).exists()


def test_a_legacy_artifact_resaved_and_stopped_before_the_commit_loads_the_new_save(tmp_path, monkeypatch):
    path = tmp_path / "planner.json"
    test_an_artifact_saved_before_checksums_still_loads(tmp_path)
    real_replace = os.replace

    def killed(src, dst):  # killed at the commit's rename; write_durably's own renames go through
        if Path(dst) == meta_path(path):
            raise _Killed
        real_replace(src, dst)

    monkeypatch.setattr(artifacts.os, "replace", killed)
    with pytest.raises(_Killed):
        _save(path, "new")
    monkeypatch.setattr(artifacts.os, "replace", real_replace)
    assert _loaded_marker(path) == "new"  # never the new program with the old sidecar


def _in_time(call, seconds: float = 30.0):
    """``call()``'s exception; the test fails if the call blocks (a FIFO opened for reading waits for a writer,
    for ever: ``seconds`` is a hang guard)."""
    outcome: dict = {}

    def run():
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"blocked for more than {seconds:g}s")
    return outcome.get("error")


def _unblock_fifo(path: Path) -> None:
    """Open the FIFO for writing (non-blocking), so a reader stuck on it gets EOF and the test can end."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    except OSError:
        pass


@pytest.mark.parametrize("kind", ["fifo", "directory", "socket", "huge"])
@pytest.mark.parametrize("which", ["program", "sidecar"])
def test_a_path_that_is_no_regular_file_is_an_error_at_once(tmp_path, monkeypatch, kind, which):
    path = tmp_path / "planner.json"
    _save(path, "one")
    target = path if which == "program" else meta_path(path)
    target.unlink()
    server = None
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    elif kind == "socket":
        monkeypatch.chdir(target.parent)  # a socket's path is limited to ~100 bytes: bind it by its name
        server = socket.socket(socket.AF_UNIX)
        server.bind(target.name)
    else:
        monkeypatch.setattr(artifacts, "PROGRAM_MAX_BYTES", 1000)
        monkeypatch.setattr(artifacts, "META_MAX_BYTES", 1000)
        target.write_bytes(b" " * 2000)
    try:
        error = _in_time(lambda: load(path, embedder=LexicalEmbedder()))  # refused before any read blocks
    finally:
        if kind == "fifo":
            _unblock_fifo(target)
        if server is not None:
            server.close()
    assert isinstance(error, ValueError), error
    words = {"fifo": "is a FIFO, not a regular file", "directory": "is a directory",
             "socket": "cannot be opened", "huge": "over the 1,000-byte limit"}[kind]
    assert str(error).startswith(f"{target}: ") and words in str(error) and "\n" not in str(error)


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_an_artifact_path_alone_that_is_no_file_is_named(tmp_path, kind):
    """No sidecar at all: a FIFO or a directory given as the artifact says so, not only "sidecar missing"."""
    path = tmp_path / "planner.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    try:
        error = _in_time(lambda: load(path, embedder=LexicalEmbedder()))
    finally:
        if kind == "fifo":
            _unblock_fifo(path)
    assert isinstance(error, ValueError) and str(error).startswith(f"{path}: is a ")


_SAVER = """
import sys
import tracerag
from tracerag.planner.traceable_planner import TraceablePlanner

path = sys.argv[1]
program = TraceablePlanner()
i = int(sys.argv[2])
while True:
    i += 1
    program.generate.signature = program.generate.signature.with_instructions(f"save {i}")
    program.generate.demos = [{"requirements": "x" * (i % 5000), "bullets": str(i)}]  # sizes differ between saves
    tracerag.save(program, path, dataset="planner", extra={"marker": str(i)})
    if i % 20 == 0:
        print(i, flush=True)
"""


@pytest.mark.slow
def test_saves_killed_at_random_moments_leave_one_complete_save(tmp_path):
    """A process saving in a loop, SIGKILLed at a random moment, several times: each time the artifact loads
    and is one complete save (its program file and its metadata from the same save), never an older one."""
    path = tmp_path / "planner.json"
    rng = random.Random(int(os.environ.get("TRACERAG_TEST_SEED", "7")))
    last = 0
    for _ in range(8):
        proc = subprocess.Popen([sys.executable, "-c", _SAVER, str(path), str(last * 1000)], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip(), "the saver printed nothing"  # it is saving
            time.sleep(rng.uniform(0.0, 0.5))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        marker = int(_loaded_marker(path))
        assert marker > last * 1000  # a save of this round: the previous rounds' never come back
        leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert len(leftovers) <= 1  # at most the temp file of the write the kill interrupted
        last += 1
