"""docs/deployment.md is tested as written: each ``bash`` block runs in bash against a real ``tracerag serve``.

A block runs with ``HOME`` in a temporary directory (shared by the blocks, in page order: the first writes the
token file the others read), ``tracerag`` on ``PATH``, the lexical embedder (``TRACERAG_EMBEDDER``, so it
starts in seconds) and the ports 8700 and 4318 replaced by free ones; 4318 (the OTLP collector) is a stand-in
collector. A service a block starts in the background is stopped with SIGTERM when the block is done, as
systemd stops it. The ``ini`` block's ``ExecStart`` goes through the real argument parser.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from otlp_stub import OTLPStub
from serve_helpers import free_port

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "deployment.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def blocks(lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall(DOC.read_text(encoding="utf-8")) if kind == lang]


def _stop_group(pgid: int, timeout: float = 30.0) -> None:
    """SIGTERM to the block's process group (its background service), then wait until the group is gone."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.killpg(pgid, signal.SIGKILL)
    raise AssertionError("the service did not stop within 30 s of SIGTERM")


def run_block(block: str, env: dict[str, str], log: Path) -> subprocess.CompletedProcess:
    with open(log, "wb") as out:
        proc = subprocess.Popen(["bash", "-euo", "pipefail", "-c", block], env=env, cwd=env["HOME"], stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=180)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        finally:
            _stop_group(proc.pid)
    return subprocess.CompletedProcess(proc.args, proc.returncode, log.read_text(errors="replace"))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("curl") is None, reason="the documented checks use curl")
def test_every_bash_block_of_the_deployment_note_runs_as_written(tmp_path):
    scripts = blocks("bash")
    assert len(scripts) >= 3 and any("--metrics" in s for s in scripts) and any("--trace otel" in s for s in scripts)
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "tracerag").exists(), "the tracerag command is installed (pip install -e .)"
    env = {**os.environ, "HOME": str(home), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "TRACERAG_EMBEDDER": "lexical", "TRACERAG_CACHE_DIR": str(tmp_path / "cache"),
           "OTEL_BSP_SCHEDULE_DELAY": "200"}
    for key in ("TRACERAG_SERVE_TOKEN", "TRACERAG_LM", "TRACERAG_API_BASE", "TRACERAG_API_KEY",
                "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME"):
        env.pop(key, None)
    with OTLPStub() as collector:
        collector_port = collector.url.rsplit(":", 1)[1]
        for i, script in enumerate(scripts):
            script = re.sub(r"\b4318\b", collector_port, re.sub(r"\b8700\b", str(free_port()), script))
            done = run_block(script, env, tmp_path / f"block{i}.log")
            assert done.returncode == 0, f"block {i} of {DOC.name} failed:\n{script}\n--- output ---\n" \
                                         f"{done.stdout[-4000:]}"
            if "tracerag serve" in script:
                assert "tracerag serve: http://" in done.stdout  # its startup line: the service really ran
            if "--metrics" in script:
                assert 'tracerag_requests_total{route="/v1/rag",method="POST",status="200"} 1' in done.stdout
                assert 'route="/v1/rag",method="POST",status="401"} 1' in done.stdout
        spans = collector.spans()  # the tracing block's service flushed its spans as it stopped
    token_file = home / ".config" / "tracerag" / "serve.env"
    assert oct(token_file.stat().st_mode & 0o777) == "0o600"
    roots = [s for s in spans if not s["parent"]]
    assert [s["name"] for s in roots] == ["POST /v1/rag"]
    assert {s["service"] for s in spans} == {"tracerag-prod"}
    assert {"SelfReflectiveRAG.forward", "Tool.corpus.search"} <= {s["name"] for s in spans}


def test_the_systemd_units_command_line_parses():
    import optimize

    (unit,) = blocks("ini")
    (line,) = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    argv = shlex.split(line.removeprefix("ExecStart="))
    assert Path(argv[0]).name == "tracerag" and argv[1] == "serve"
    args = optimize.build_parser().parse_args(argv[1:])
    assert args.metrics and args.port == 8700 and args.allowed_host == ["tracerag.example.com"]
    assert args.program == ["commands=/var/lib/tracerag/commands.json", "rag"]
