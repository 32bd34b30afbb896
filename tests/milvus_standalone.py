"""A real Milvus server for the slow tests and the benchmarks: the PyPI ``milvus`` standalone (its
``milvus-server``: etcd, MinIO-less local storage and every Milvus component in one process tree).

It binds 0.0.0.0, so it only ever runs inside a network namespace that has nothing but loopback
(``unshare -n``, which needs root or user namespaces): :func:`run_inside` re-runs a command there with
the server started on 127.0.0.1, and stops it afterwards. Nothing outside the namespace can reach it.

    python tests/milvus_standalone.py -- python -m pytest tests/stores/test_milvus_standalone.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PORT = 19530
URI = f"milvus://127.0.0.1:{PORT}"
READY_S = 120


def available() -> str | None:
    """Why a real server cannot run here, or None when it can."""
    if shutil.which("milvus-server") is None and not (Path(sys.executable).parent / "milvus-server").exists():
        return 'no milvus-server (pip install -e ".[dev]" installs the PyPI milvus standalone)'
    if shutil.which("unshare") is None:
        return "no unshare (util-linux) to give the server a loopback-only network"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        return "unshare -n is not permitted here (needs root or user namespaces)"
    return None


def run_inside(command: list[str]) -> int:
    """Run ``command`` in a fresh loopback-only network namespace with a Milvus server on 127.0.0.1:19530."""
    return subprocess.call(["unshare", "-n", sys.executable, __file__, "--inside", "--", *command])


def _serve_and_run(command: list[str]) -> int:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=False, capture_output=True)
    server_bin = shutil.which("milvus-server") or str(Path(sys.executable).parent / "milvus-server")
    data = Path(tempfile.mkdtemp(prefix="milvus-standalone-"))
    log = open(data / "server.log", "wb")
    server = subprocess.Popen([server_bin, "--data", str(data), "--proxy-port", str(PORT)], stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_ready(server, data)
        return subprocess.call(command, env={**os.environ, "TRACERAG_MILVUS_STANDALONE": URI})
    finally:
        os.killpg(server.pid, 15)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
        log.close()
        shutil.rmtree(data, ignore_errors=True)


def _wait_ready(server: subprocess.Popen, data: Path) -> None:
    from pymilvus import MilvusClient

    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"milvus-server exited ({server.returncode}); see {data / 'server.log'}")
        try:
            MilvusClient(uri=f"http://127.0.0.1:{PORT}", timeout=2).list_collections()
            return
        except Exception:
            time.sleep(1)
    raise RuntimeError(f"milvus-server not ready after {READY_S} s")


if __name__ == "__main__":
    args = sys.argv[1:]
    inside = args[:1] == ["--inside"]
    args = args[1:] if inside else args
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.exit(__doc__)
    sys.exit(_serve_and_run(args) if inside else run_inside(args))
