"""Serve the programs over HTTP and call them from any language: here from Python with httpx.

    python examples/serve_and_call.py

It starts ``tracerag serve --program commands --program experience`` on a free port of 127.0.0.1 (bundled data,
no LM), waits for ``/healthz``, posts one request to each program, prints the JSON answers and stops the
server. In production you run ``tracerag serve`` yourself (see the serving docs) and keep only ``ask``.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

TRACERAG = shutil.which("tracerag") or str(Path(sys.executable).with_name("tracerag"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url: str, server: subprocess.Popen, seconds: float = 180.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"tracerag serve exited with code {server.returncode}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url}/healthz did not answer within {seconds:.0f} s")


def ask(url: str, program: str, body: dict) -> dict:
    """One call, as an app would make it: JSON in, JSON out, the Prediction's field names."""
    reply = httpx.post(f"{url}/v1/{program}", json=body, timeout=60.0)
    reply.raise_for_status()
    return reply.json()


def main(argv: list[str] | None = None) -> int:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([TRACERAG, "serve", "--port", str(port), "--program", "commands",
                               "--dataset", "smarthome/home_small", "--program", "experience"])
    try:
        wait_until_up(url, server)
        commands = ask(url, "commands", {"query": "把主卧空调调到26度"})
        best = commands["candidates"][0]
        print(json.dumps({"hint": commands["hint"], "best": [best["label"], best["command_id"]]}, ensure_ascii=False))
        experience = ask(url, "experience", {"question": "Sum the items on my receipt.",
                                             "sub_task": "add up a shopping receipt"})
        print(json.dumps({"used_task_ids": experience["used_task_ids"]}))
        print(experience["experience"][:300])         # the text an agent puts in its system prompt
    finally:
        server.terminate()                                 # SIGTERM: the server ends cleanly
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
