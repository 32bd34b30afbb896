"""A benchmark's measurement run on another commit: checked out into a temporary worktree, measured there.

Why: figures are compared against a baseline measured in the same window; the script measuring is this tree's
(so both sides are measured the same way), the code measured the baseline's (``PYTHONPATH``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measured_on(ref: str, script: str, args: list[str]) -> dict:
    """``python script *args --json OUT`` run on ``ref``'s code; what it wrote to OUT."""
    tree = Path(tempfile.mkdtemp(prefix="baseline-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref], check=True,
                   capture_output=True)
    try:
        out = tree.parent / "baseline.json"
        # its own temporary files (an embedding cache): an older tree may not read this tree's formats
        env = {**os.environ, "PYTHONPATH": str(tree), "TMPDIR": str(tree.parent)}
        subprocess.run([sys.executable, script, *args, "--json", str(out)], check=True, cwd=tree, env=env)
        return json.loads(out.read_text(encoding="utf-8"))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)
