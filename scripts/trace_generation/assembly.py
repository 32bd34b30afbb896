"""The task families in generation order, and their assembly into traces and queries: ids, image paths,
captions, the query shuffle and relevance labels."""

from __future__ import annotations

import random
from collections.abc import Callable

from . import charts, conversion, documents, identification, lookup, markets, maths, programming, travel

SEED = 20240611

# slug, image file prefix, image extension, generator(rng) -> (correct traces, incorrect traces, queries).
# The order is part of the output: the caption draws, the query ids and the README's table follow it.
FAMILIES: list[tuple[str, str, str, Callable]] = [
    ("chart-reading", "chart", "png", charts.fam_chart),
    ("table-screenshot", "screenshot", "png", charts.fam_table),
    ("landmark-id", "photo", "jpg", identification.fam_landmark),
    ("plant-id", "plant", "jpg", identification.fam_plant),
    ("bird-id", "bird", "jpg", identification.fam_bird),
    ("artwork-id", "art", "jpg", identification.fam_art),
    ("price-comparison", "product", "jpg", markets.fam_price),
    ("recipe-conversion", "recipe", "jpg", conversion.fam_recipe),
    ("currency-conversion", "invoice", "jpg", conversion.fam_currency),
    ("timetable-lookup", "timetable", "png", travel.fam_timetable),
    ("math-word-problem", "worksheet", "jpg", maths.fam_math),
    ("geometry-diagram", "diagram", "png", maths.fam_geometry),
    ("handwritten-math", "handwriting", "jpg", maths.fam_handwritten),
    ("code-bug-fix", "code", "png", programming.fam_code),
    ("regex-writing", "regex", "png", programming.fam_regex),
    ("sql-query", "sql", "png", programming.fam_sql),
    ("spreadsheet-formula", "sheet", "png", programming.fam_sheet),
    ("menu-translation", "menu", "jpg", documents.fam_menu),
    ("receipt-total", "receipt", "jpg", documents.fam_receipt),
    ("object-counting", "scene", "jpg", charts.fam_count),
    ("pubmed-question", "abstract", "png", lookup.fam_pubmed),
    ("sports-stats", "sports", "jpg", lookup.fam_sports),
    ("historical-date", "history", "jpg", lookup.fam_history),
    ("molar-mass", "chem", "jpg", conversion.fam_chem),
    ("physics-units", "physics", "png", conversion.fam_physics),
    ("city-distance", "map", "png", travel.fam_distance),
    ("weather-history", "weather", "png", travel.fam_weather),
    ("book-lookup", "cover", "jpg", lookup.fam_book),
    ("movie-cast", "poster", "jpg", lookup.fam_movie),
    ("stock-price", "stock", "png", markets.fam_stock),
    ("paper-lookup", "paper", "png", lookup.fam_paper),
    ("company-hq", "logo", "png", lookup.fam_company),
    ("nutrition-label", "label", "jpg", documents.fam_nutrition),
    ("timezone-conversion", "clock", "png", travel.fam_timezone),
    ("sign-ocr", "street", "jpg", documents.fam_sign),
    ("logic-puzzle", "puzzle", "png", maths.fam_logic),
]


def tools_used(steps: list[dict]) -> list[str]:
    """Tools in order of use, consecutive repeats collapsed."""
    out: list[str] = []
    for s in steps:
        if not out or out[-1] != s["tool"]:
            out.append(s["tool"])
    return out


def build() -> tuple[list[dict], list[dict], dict]:
    traces, queries, meta = [], [], {}
    cap_rng = random.Random(f"{SEED}:captions")
    for slug, prefix, ext, fn in FAMILIES:
        rng = random.Random(f"{SEED}:{slug}")
        good, bad, qs = fn(rng)
        items = [(t, True) for t in good] + [(t, False) for t in bad]
        rng.shuffle(items)
        fam_traces = []
        for n, (t, ok) in enumerate(items, start=1):
            k = t["images"]
            images = ([f"images/{prefix}_{n:04d}.{ext}"] if k == 1 else
                      [f"images/{prefix}_{n:04d}_{j}.{ext}" for j in range(1, k + 1)])
            rec = {"task_id": f"{slug}-{n:04d}", "question": t["question"], "sub_task": t["sub_task"],
                   "images": images}
            if k and t["caption"] and cap_rng.random() >= 0.3:
                rec["caption"] = t["caption"]
            rec.update({"tools": tools_used(t["steps"]), "steps": t["steps"], "reasoning": t["reasoning"],
                        "final_answer": t["final_answer"], "is_correct": ok, "family": slug})
            fam_traces.append(rec)
        traces += fam_traces
        relevant = sorted(r["task_id"] for r in fam_traces if r["is_correct"])
        for q in qs:
            queries.append({**q, "family": slug, "relevant_task_ids": relevant})
        meta[slug] = {"correct": len(good), "incorrect": len(bad), "queries": len(qs),
                      "sub_task": good[0]["sub_task"]}
    qrng = random.Random(f"{SEED}:queries")
    qrng.shuffle(queries)
    keep_sub = set(qrng.sample(range(len(queries)), len(queries) // 2))
    out = []
    for i, q in enumerate(queries, start=1):
        qid = f"q-{i:04d}"
        rec = {"id": qid, "question": q["question"]}
        if i - 1 in keep_sub:
            rec["sub_task"] = q["sub_task"]
        if q["images"]:
            rec["images"] = [f"images/{qid}.jpg"] if q["images"] == 1 else \
                [f"images/{qid}_{j}.jpg" for j in range(1, q["images"] + 1)]
        if q["caption"]:
            rec["caption"] = q["caption"]
        rec.update({"family": q["family"], "relevant_task_ids": q["relevant_task_ids"]})
        out.append((rec, q["lang"], q["caption_only"]))
    meta["_query_flags"] = [(r["id"], lang, co) for r, lang, co in out]
    return traces, [r for r, _, _ in out], meta
