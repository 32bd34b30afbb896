"""Where the bundled datasets live, and a name or path resolved to one (no imports of the rest of tracerag,
so any reader may take a bundled name: ``Home.load("smarthome/home_small")``)."""

from __future__ import annotations

from pathlib import Path

from ..errors import FileMissing

__all__ = ["BUNDLED_ROOT", "resolve_dataset"]

BUNDLED_ROOT = Path(__file__).parents[1] / "datasets" / "data"


def resolve_dataset(name_or_path: str | Path) -> Path:
    """A path, or the name of a bundled dataset ("smarthome", "smarthome/home_large")."""
    path = Path(name_or_path)
    if path.exists():
        return path
    bundled = BUNDLED_ROOT / str(name_or_path)
    if bundled.exists():
        return bundled
    names = sorted(p.name for p in BUNDLED_ROOT.iterdir() if p.is_dir()) if BUNDLED_ROOT.exists() else []
    raise FileMissing(f"dataset {name_or_path!r} is neither a directory nor a bundled dataset {names}")
