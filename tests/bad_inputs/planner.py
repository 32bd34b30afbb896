"""Bad inputs for the planner data: cases.jsonl, the playbooks the cases name, templates.jsonl.

Each variant edits a copy of the bundled dataset and calls what ``evaluate planner`` calls,
``load_planner_cases`` with a report, checked as when any share may be skipped (nothing usable left
still fails)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from tracerag.data_files.read_report import ReadReport
from tracerag.datasets.planner import load_planner_cases
from tracerag.datasets.smarthome import BUNDLED_ROOT

from .harness import Variant

FORMAT = "planner"
BUNDLED = BUNDLED_ROOT / "planner"


def _rows(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "cases.jsonl").read_text(encoding="utf-8").splitlines()]


def _write_rows(root: Path, rows: list[dict]) -> None:
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows),
                                      encoding="utf-8")


def _first(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        rows = _rows(root)
        change(rows[0])
        _write_rows(root, rows)
    return edit


def _replace(name: str, content) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / name
        path.unlink()
        if content == "fifo":
            os.mkfifo(path)
        elif content == "dir":
            path.mkdir()
        elif callable(content):
            path.write_bytes(content(BUNDLED / name))
        else:
            path.write_bytes(content)
    return edit


def load(edit: Callable[[Path], None], *, expect: int | None = None, check: Callable | None = None):
    def run(tmp: Path):
        root = tmp / "planner"
        shutil.copytree(BUNDLED, root)
        edit(root)
        report = ReadReport("cases")
        cases = load_planner_cases(root, report=report)
        report.check(1.0, str(root / "cases.jsonl"))
        if expect is not None:
            assert len(cases) == expect, report.summary()
        if check is not None:
            check(cases)
        return "skipped" if report.skipped else None
    return run


def _gold_as_string(row: dict) -> None:
    row["gold_template_ids"] = row["gold_template_ids"][0]


def _bare_template_ids(row: dict) -> None:
    row["templates"] = [t["id"] for t in row["templates"]]


def _escaping_symlink(root: Path) -> None:
    outside = root.parent / "outside.txt"
    outside.write_text("[mat-00001] helpful=0 harmful=0 :: not yours\n", encoding="utf-8")
    (root / "playbooks" / "link.txt").symlink_to(outside)
    _first(lambda r: r.update(playbook="playbooks/link.txt"))(root)


def _templates_text_as_list(root: Path) -> None:
    path = root / "templates.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[0]["text"] = rows[0]["text"].split("\n")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


ALL = 70
LAB = sum(1 for r in _rows(BUNDLED) if r["playbook"] == "playbooks/lab.txt")

VARIANTS = [
    Variant("the bundled dataset", "accepted", load(lambda root: None, expect=ALL)),
    Variant("cases: UTF-8 BOM", "accepted", load(_replace("cases.jsonl", lambda p: b"\xef\xbb\xbf" + p.read_bytes()),
                                                 expect=ALL)),
    Variant("cases: CRLF line ends", "accepted",
            load(_replace("cases.jsonl", lambda p: p.read_bytes().replace(b"\n", b"\r\n")), expect=ALL)),
    Variant("cases: a JSON array instead of JSON Lines", "accepted",
            load(lambda root: (root / "cases.jsonl").write_text(json.dumps(_rows(root)), encoding="utf-8"),
                 expect=ALL)),
    Variant("cases: gold ids as one string", "accepted", load(_first(_gold_as_string), expect=ALL)),
    Variant("cases: templates as bare ids", "accepted",
            load(_first(_bare_template_ids), expect=ALL, check=lambda cs: cs[0].templates[0].score is None)),
    Variant("cases: extra fields", "accepted", load(_first(lambda r: r.update(source="curated", rev=3)), expect=ALL)),
    Variant("templates: text as a list of lines", "accepted", load(_templates_text_as_list, expect=ALL)),
    Variant("playbook: BOM and CRLF", "accepted",
            load(_replace("playbooks/lab.txt", lambda p: b"\xef\xbb\xbf" + p.read_bytes().replace(b"\n", b"\r\n")),
                 expect=ALL)),
    Variant("cases: a lone surrogate in one case", "skipped",
            load(_first(lambda r: r.update(requirements="Set up \ud800 a PCR")), expect=ALL - 1)),
    Variant("cases: requirements of a wrong type", "skipped",
            load(_first(lambda r: r.update(requirements=["a", 5])), expect=ALL - 1)),
    Variant("cases: an unknown bullet id", "skipped",
            load(_first(lambda r: r["bullet_ids"].append("mat-09999")), expect=ALL - 1)),
    Variant("cases: one truncated line", "skipped",
            load(lambda root: open(root / "cases.jsonl", "a", encoding="utf-8").write('{"id": "x", "dom'),
                 expect=ALL)),
    Variant("cases: a null line", "skipped",
            load(lambda root: open(root / "cases.jsonl", "a", encoding="utf-8").write("null\n"), expect=ALL)),
    Variant("playbook: a FIFO (its cases skipped)", "skipped", load(_replace("playbooks/lab.txt", "fifo"),
                                                                      expect=ALL - LAB)),
    Variant("playbook: a directory (its cases skipped)", "skipped", load(_replace("playbooks/lab.txt", "dir"),
                                                                           expect=ALL - LAB)),
    Variant("playbook: path leaving the dataset (../x)", "rejected",
            load(_first(lambda r: r.update(playbook="../outside.txt")))),
    Variant("playbook: absolute path (/etc/hostname)", "rejected",
            load(_first(lambda r: r.update(playbook="/etc/hostname")))),
    Variant("playbook: a symlink out of the dataset", "rejected", load(_escaping_symlink)),
    Variant("cases: empty file", "rejected", load(_replace("cases.jsonl", b""))),
    Variant("cases: null", "rejected", load(_replace("cases.jsonl", b"null\n"))),
    Variant("cases: binary garbage", "rejected", load(_replace("cases.jsonl", bytes(range(256)) * 8))),
    Variant("cases: a FIFO", "rejected", load(_replace("cases.jsonl", "fifo"))),
    Variant("cases: a directory", "rejected", load(_replace("cases.jsonl", "dir"))),
    Variant("templates: a FIFO", "rejected", load(_replace("templates.jsonl", "fifo"))),
]
