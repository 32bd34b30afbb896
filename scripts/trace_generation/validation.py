"""The checks the data must pass before anything is written; each problem is one line of the returned list."""

from __future__ import annotations

import re

from .assembly import FAMILIES, tools_used
from .common import TOOLSET


def _norm(s: str) -> str:
    return re.sub(r"[\W_]+", " ", s.lower()).strip()


def _jaccard(a: str, b: str) -> float:
    x, y = set(_norm(a).split()), set(_norm(b).split())
    return len(x & y) / max(1, len(x | y))


def validate(traces: list[dict], queries: list[dict], meta: dict) -> list[str]:
    errs: list[str] = []
    slugs = [f[0] for f in FAMILIES]
    if len(set(slugs)) != len(slugs):
        errs.append("duplicate family slugs")
    if len(slugs) < 32:
        errs.append(f"only {len(slugs)} families (< 32)")
    by_id = {}
    for t in traces:
        if t["task_id"] in by_id:
            errs.append(f"duplicate task_id {t['task_id']}")
        by_id[t["task_id"]] = t
        where = t["task_id"]
        for key in ("question", "sub_task", "reasoning", "final_answer", "family"):
            if not isinstance(t.get(key), str) or not t[key].strip():
                errs.append(f"{where}: empty {key}")
        if not isinstance(t["is_correct"], bool):
            errs.append(f"{where}: is_correct not bool")
        if not 2 <= len(t["steps"]) <= 6:
            errs.append(f"{where}: {len(t['steps'])} steps")
        for s in t["steps"]:
            if set(s) != {"thought", "tool", "tool_input", "observation"} or not all(str(v).strip()
                                                                                   for v in s.values()):
                errs.append(f"{where}: malformed step {s}")
            if s["tool"] not in TOOLSET:
                errs.append(f"{where}: unknown tool {s['tool']}")
        if t["tools"] != tools_used(t["steps"]):
            errs.append(f"{where}: tools do not match steps")
        if "caption" in t and not t["images"]:
            errs.append(f"{where}: caption without images")
    seen = {}
    for t in traces:
        key = (_norm(t["question"]), t.get("caption", ""), t["final_answer"])
        if key in seen:
            errs.append(f"{t['task_id']}: duplicates {seen[key]}")
        seen[key] = t["task_id"]
    n_ok = sum(t["is_correct"] for t in traces)
    n_bad = len(traces) - n_ok
    if n_ok < 330:
        errs.append(f"only {n_ok} correct traces (< 330)")
    if n_bad < 30:
        errs.append(f"only {n_bad} incorrect traces (< 30)")
    for slug in slugs:
        c = sum(1 for t in traces if t["family"] == slug and t["is_correct"])
        if not 8 <= c <= 14:
            errs.append(f"{slug}: {c} correct traces (want 8-14)")
        nq = sum(1 for q in queries if q["family"] == slug)
        if nq < 4:
            errs.append(f"{slug}: {nq} queries (< 4)")
    if len(queries) < 160:
        errs.append(f"only {len(queries)} queries (< 160)")
    qids = [q["id"] for q in queries]
    if len(set(qids)) != len(qids):
        errs.append("duplicate query ids")
    trace_q = {_norm(t["question"]) for t in traces}
    for q in queries:
        fam_ok = sorted(t["task_id"] for t in traces if t["family"] == q["family"] and t["is_correct"])
        for rid in q["relevant_task_ids"]:
            t = by_id.get(rid)
            if t is None:
                errs.append(f"{q['id']}: relevant id {rid} does not exist")
            elif not t["is_correct"]:
                errs.append(f"{q['id']}: relevant id {rid} is an incorrect trace")
            elif t["family"] != q["family"]:
                errs.append(f"{q['id']}: relevant id {rid} is from family {t['family']}")
        if sorted(q["relevant_task_ids"]) != fam_ok:
            errs.append(f"{q['id']}: relevant ids are not exactly the correct traces of {q['family']}")
        if _norm(q["question"]) in trace_q:
            errs.append(f"{q['id']}: question identical to a trace question")
        sim = max(_jaccard(q["question"], t["question"]) for t in traces if t["family"] == q["family"])
        if sim >= 0.8:
            errs.append(f"{q['id']}: question too close to a trace question (jaccard {sim:.2f})")
        blob = q["id"] + " ".join(q.get("images", []))
        if any(s in blob for s in slugs):
            errs.append(f"{q['id']}: id or image path reveals the family")
    flags = meta["_query_flags"]
    zh = [i for i, lang, _ in flags if lang == "zh"]
    for qid, lang, _ in flags:
        q = next(x for x in queries if x["id"] == qid)
        if (lang == "zh") != bool(re.search(r"[\u4e00-\u9fff]", q["question"])):
            errs.append(f"{qid}: language flag does not match the text")
    if not 0.15 <= len(zh) / len(queries) <= 0.3:
        errs.append(f"Chinese queries are {len(zh) / len(queries):.0%} of all (want about 20%)")
    with_img = [t for t in traces if t["images"]]
    cap = sum(1 for t in with_img if "caption" in t) / max(1, len(with_img))
    if not 0.6 <= cap <= 0.8:
        errs.append(f"captions on {cap:.0%} of image traces (want about 70%)")
    return errs
