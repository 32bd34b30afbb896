"""The bundled planner dataset and its loader: shape, splits, ids that resolve, errors naming file:line:field."""

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import dspy
import pytest

from tracerag.datasets.planner import PlannerDataError, load_planner_cases
from tracerag.datasets.smarthome import BUNDLED_ROOT, split_of
from tracerag.memory.playbook import load_playbook, template_id
from tracerag.planner.metrics import plan_cited_ids, planner_score

BUNDLED = BUNDLED_ROOT / "planner"


def test_bundled_cases_cover_several_domains_and_resolve():
    cases = load_planner_cases()
    assert len(cases) >= 60
    domains = Counter(c.domain for c in cases)
    assert set(domains) == {"lab", "cooking", "home", "events", "data"} and min(domains.values()) >= 12
    for case in cases:
        shown = {b.id for b in case.bullets} | {t.id for t in case.templates}
        assert set(case.gold_bullet_ids) | set(case.gold_template_ids) <= shown
        assert len(case.gold_bullet_ids) >= 2 and case.gold_template_ids
        assert len(shown) - len(case.gold_bullet_ids) - len(case.gold_template_ids) >= 4  # distractors
        assert all(0 <= t.score <= 1 for t in case.templates)
        assert [t.score for t in case.templates] == sorted((t.score for t in case.templates), reverse=True)


def test_template_ids_are_content_hashes_and_playbooks_round_trip():
    for line in (BUNDLED / "templates.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        assert row["id"] == template_id(row["text"])
    for path in sorted((BUNDLED / "playbooks").glob("*.txt")):
        assert load_playbook(path).to_text().encode("utf-8") == path.read_bytes()


def test_splits_and_examples():
    everything = load_planner_cases("planner")
    by_split = {s: load_planner_cases(split=s) for s in ("train", "dev", "test")}
    assert sum(len(v) for v in by_split.values()) == len(everything)
    assert all(c.split == split_of(c.id) == s for s, cases in by_split.items() for c in cases)
    example = everything[0].to_example()
    assert set(example.inputs().keys()) == {"requirements", "bullets", "templates"}
    assert example.gold_bullet_ids == list(everything[0].gold_bullet_ids)
    with pytest.raises(ValueError, match="unknown split"):
        load_planner_cases(split="holdout")


def test_every_reference_plan_scores_one():
    for case in load_planner_cases():
        bullet_ids, template_ids = [b.id for b in case.bullets], [t.id for t in case.templates]
        cited = plan_cited_ids(case.reference_plan)
        pred = dspy.Prediction(plan=case.reference_plan, bullets_used=[i for i in cited if i in bullet_ids],
                               templates_used=[i for i in cited if i in template_ids],
                               hallucinated_ids=[i for i in cited if i not in bullet_ids + template_ids],
                               retrieved_bullet_ids=bullet_ids, retrieved_template_ids=template_ids)
        assert planner_score(case.to_example(), pred) == 1.0, case.id


def test_the_generator_reproduces_the_bundled_files(tmp_path):
    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "scripts" / "generate_plans.py"
    script.parent.mkdir()
    shutil.copy(root / "scripts" / "generate_plans.py", script)
    subprocess.run([sys.executable, str(script)], check=True, capture_output=True)
    out = tmp_path / "tracerag" / "datasets" / "data" / "planner"
    generated = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert generated == sorted(p.relative_to(BUNDLED) for p in BUNDLED.rglob("*") if p.is_file())
    for rel in generated:
        assert (out / rel).read_bytes() == (BUNDLED / rel).read_bytes(), rel


@pytest.fixture
def dataset(tmp_path):
    target = tmp_path / "planner"
    shutil.copytree(BUNDLED, target)
    return target


def rewrite_first_case(dataset: Path, change) -> None:
    path = dataset / "cases.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    change(row)
    lines[0] = json.dumps(row, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("change,message", [
    (lambda r: r.pop("requirements"), r"cases.jsonl:1: field 'requirements' is missing"),
    (lambda r: r.update(bullet_ids=["mat-00001", "mat-09999"]), r"cases.jsonl:1: field 'bullet_ids': 'mat-09999' "
                                                               r"is not in playbooks/lab.txt"),
    (lambda r: r.update(bullet_ids=7), r"cases.jsonl:1: field 'bullet_ids' is missing or not a list"),
    (lambda r: r.update(bullet_ids=["mat-00001", "mat-00001"]), r"cases.jsonl:1: field 'bullet_ids' repeats an id"),
    (lambda r: r["templates"].append({"id": "tpl-00000000"}), r"cases.jsonl:1: field 'templates\[4\]': unknown "
                                                               r"template id"),
    (lambda r: r["templates"][0].update(score=1.5), r"cases.jsonl:1: field 'templates\[0\].score' must be a number"),
    (lambda r: r.update(gold_bullet_ids=["safe-00004"]), r"cases.jsonl:1: field 'gold_bullet_ids': \['safe-00004'\] "
                                                           r"were not handed"),
    (lambda r: r["reference_plan"].update(steps=[]), r"cases.jsonl:1: field 'reference_plan.steps': List should "
                                                       r"have at least 1 item"),
    (lambda r: r.update(playbook="playbooks/nope.txt"), r"cases.jsonl:1: field 'playbook': .*nope.txt: file is "
                                                          r"missing"),
])
def test_broken_cases_name_file_line_and_field(dataset, change, message):
    rewrite_first_case(dataset, change)
    with pytest.raises(PlannerDataError, match=message):
        load_planner_cases(dataset)


def test_broken_playbooks_and_templates_are_named(dataset):
    playbook = dataset / "playbooks" / "lab.txt"
    text = playbook.read_text(encoding="utf-8")
    playbook.write_text(text.replace("helpful=4 harmful=0 :: Thaw", "helpful=four harmful=0 :: Thaw"), encoding="utf-8")
    with pytest.raises(PlannerDataError, match=r"cases.jsonl:1: field 'playbook': .*lab.txt:4: not a bullet"):
        load_planner_cases(dataset)
    shutil.copy(BUNDLED / "playbooks" / "lab.txt", playbook)
    with open(dataset / "templates.jsonl", "a", encoding="utf-8") as f:
        f.write('{"id": "tpl-x", "title": "no text"}\n')
    with pytest.raises(PlannerDataError, match=r"templates.jsonl:40: field 'text' is missing"):
        load_planner_cases(dataset)


def test_duplicate_case_ids_are_an_error(dataset):
    path = dataset / "cases.jsonl"
    first = path.read_text(encoding="utf-8").splitlines()[0]
    with open(path, "a", encoding="utf-8") as f:
        f.write(first + "\n")
    with pytest.raises(PlannerDataError, match=r"cases.jsonl:71: field 'id' 'lab-001' appears twice"):
        load_planner_cases(dataset)


def test_common_variants_are_normalised_and_counted(dataset):
    from tracerag.data_files.read_report import ReadReport

    def change(row):
        row["id"], row["source"] = 101, "curated"
        row["gold_template_ids"] = row["gold_template_ids"][0]
        row["templates"] = [t["id"] for t in row["templates"]]

    rewrite_first_case(dataset, change)
    cases_path = dataset / "cases.jsonl"
    cases_path.write_bytes(b"\xef\xbb\xbf" + cases_path.read_bytes())
    report = ReadReport("cases")
    cases = load_planner_cases(dataset, report=report)
    assert len(cases) == report.kept == 70 and not report.skipped
    assert cases[0].id == "101" and cases[0].gold_template_ids == ("tpl-83d97b1f",)
    assert cases[0].templates[0].id == "tpl-83d97b1f" and cases[0].templates[0].score is None
    assert dict(report.normalised) == {"BOM stripped": 1, "id as a number": 1, "gold_template_ids as one string": 1,
                                       "templates as bare ids": 1}


def test_with_a_report_a_bad_case_is_skipped_and_named(dataset):
    from tracerag.data_files.read_report import DataSetShrunk, ReadReport

    rewrite_first_case(dataset, lambda r: r["bullet_ids"].append("mat-09999"))
    with open(dataset / "cases.jsonl", "a", encoding="utf-8") as f:
        f.write('{"id": "x", "requirements": "\\ud800"}\n{"id": "trunc')
    report = ReadReport("cases")
    assert len(load_planner_cases(dataset, report=report)) == 69
    assert dict(report.skipped) == {"unknown bullet": 1, "no domain": 1, "not JSON": 1}
    assert report.problems[0].endswith("cases.jsonl:1: field 'bullet_ids': 'mat-09999' is not in playbooks/lab.txt")
    with pytest.raises(DataSetShrunk, match=r"3 of 72 cases skipped"):
        report.check(0.0, "cases.jsonl")


@pytest.mark.parametrize("playbook", ["/etc/hostname", "../outside.txt", "playbooks/../../outside.txt",
                                      "playbooks/link.txt", "."])
def test_a_playbook_path_must_stay_inside_the_dataset(dataset, playbook):
    from tracerag.data_files.read_report import ReadReport

    (dataset.parent / "outside.txt").write_text("[mat-00001] helpful=0 harmful=0 :: secret words\n", encoding="utf-8")
    (dataset / "playbooks" / "link.txt").symlink_to(dataset.parent / "outside.txt")
    rewrite_first_case(dataset, lambda r: r.update(playbook=playbook))
    for report in (None, ReadReport("cases")):  # refused even when bad cases may be skipped
        with pytest.raises(PlannerDataError, match=r"cases.jsonl:1: field 'playbook': .* is not a file inside the "
                                                   r"dataset directory") as refused:
            load_planner_cases(dataset, report=report)
        assert "\n" not in str(refused.value) and "secret" not in str(refused.value)
