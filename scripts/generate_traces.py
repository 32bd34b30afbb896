#!/usr/bin/env python3
"""Generate the bundled `experience` dataset for tracerag's ExperienceRetrieval program.

Writes, under tracerag/datasets/data/experience/:

* tasks/<task_id>/trace.json  solved (and some failed) multimodal agent traces, the memory bank
* queries.jsonl               held-out new tasks labelled with the relevant (same-family, correct) traces
* README.md                   what the data is, its formats and the counts

Everything is synthetic and produced from the templates and slot values in this file (stdlib only, no
network, no external data). A fixed seed makes two runs byte-identical. The script validates the data
before writing anything and exits non-zero if a check fails.

    python scripts/generate_traces.py
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import sys
from collections.abc import Callable
from datetime import date, timedelta
from itertools import permutations, product
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tracerag" / "datasets" / "data" / "experience"
SEED = 20240611

TOOLSET = {
    "web_search", "image_search", "browse_webpage", "python", "ocr", "calculator", "pubmed_search", "wikipedia",
    "map_lookup", "unit_converter", "code_interpreter", "translate", "image_crop", "object_detector",
}

# slug, image file prefix, image extension, generator(rng) -> (correct traces, incorrect traces, queries)
FAMILIES: list[tuple[str, str, str, Callable]] = []


def family(slug: str, img_prefix: str = "img", img_ext: str = "jpg"):
    def deco(fn):
        FAMILIES.append((slug, img_prefix, img_ext, fn))
        return fn
    return deco


def st(thought: str, tool: str, tool_input: str, observation: str) -> dict:
    """One agent step."""
    return {"thought": thought, "tool": tool, "tool_input": tool_input, "observation": observation}


def tr(question: str, sub_task: str, steps: list[dict], reasoning: str, answer: str,
       images: int = 0, caption: str | None = None) -> dict:
    """A trace body; ids, image paths and flags are filled in by build()."""
    return {"question": question, "sub_task": sub_task, "images": images, "caption": caption, "steps": steps,
            "reasoning": reasoning, "final_answer": answer}


def qy(question: str, sub_task: str, images: int = 0, caption: str | None = None, lang: str = "en",
       caption_only: bool = False) -> dict:
    """A held-out query body; ids and relevance labels are filled in by build()."""
    return {"question": question, "sub_task": sub_task, "images": images, "caption": caption, "lang": lang,
            "caption_only": caption_only}


def fmt(x: float, nd: int = 2) -> str:
    """Round to nd decimals and drop trailing zeros: 12.50 -> '12.5', 3.0 -> '3', 12345.6 -> '12,345.6'."""
    s = f"{x:,.{nd}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def money(x: float, cur: str = "$") -> str:
    return f"{cur}{x:,.2f}"


def pick(rng: random.Random, seq, k: int | None = None):
    return rng.choice(seq) if k is None else rng.sample(list(seq), k)


class Deck:
    """Draws templates without replacement (per key), reshuffling when a key's templates run out."""

    def __init__(self, rng: random.Random):
        self.rng, self.left = rng, {}

    def __call__(self, key: str, options: list):
        if not self.left.get(key):
            order = list(range(len(options)))
            self.rng.shuffle(order)
            self.left[key] = order
        return options[self.left[key].pop()]


def nice(x: float) -> float:
    """A 1-2-5 tick spacing >= x."""
    e = math.floor(math.log10(x))
    f = x / 10 ** e
    nf = 1 if f <= 1 else 2 if f <= 2 else 5 if f <= 5 else 10
    return nf * 10 ** e


PEOPLE = ["Ana Souza", "Ben Carter", "Chloé Martin", "Dmitri Volkov", "Emeka Obi", "Fatima Zahra", "Gao Lin",
          "Hannah Weiss", "Ivan Petrov", "Julia Nowak", "Kenji Sato", "Laura Rossi", "Mehmet Kaya", "Nina Berg",
          "Omar Haddad", "Priya Nair", "Quentin Dubois", "Rosa Jiménez", "Sven Lund", "Tara Singh", "Uma Reddy",
          "Victor Hugo Lima", "Wen Zhao", "Yara Haddad", "Zoltan Kiss"]


# ----------------------------------------------------------------------------------------------------------------
# 1. chart reading
# ----------------------------------------------------------------------------------------------------------------
CHART_TOPICS = [
    # title, category label, categories, unit, lo, hi, resolution, chart type
    ("Monthly rainfall in Bergen, 2022 (mm)", "month", ["Jan", "Feb", "Mar", "Apr", "May", "Jun"], "mm",
     80, 260, 5, "bar"),
    ("Quarterly revenue of Kestrel Foods, FY2023 (million USD)", "quarter", ["Q1", "Q2", "Q3", "Q4"],
     "million USD", 40, 120, 2, "bar"),
    ("Smartphone shipments by vendor, Q3 (million units)", "vendor", ["Samsung", "Apple", "Xiaomi", "Oppo", "vivo"],
     "million units", 10, 60, 1, "bar"),
    ("Annual visitors to Lakeview Park, 2016-2021 (thousands)", "year",
     ["2016", "2017", "2018", "2019", "2020", "2021"], "thousand visitors", 1500, 4200, 50, "line"),
    ("Electricity generation by source, 2022 (TWh)", "source", ["Hydro", "Wind", "Solar", "Gas", "Biomass"], "TWh",
     2, 15, 0.5, "bar"),
    ("Average maths score by class", "class", ["7A", "7B", "7C", "7D", "7E"], "points", 55, 92, 1, "bar"),
    ("Bike-share trips per weekday (thousands)", "weekday", ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
     "thousand trips", 20, 75, 1, "bar"),
    ("Median house price, 2015-2022 (thousand GBP)", "year", [str(y) for y in range(2015, 2023)], "thousand GBP",
     150, 260, 5, "line"),
    ("Influenza hospital admissions by week", "week", ["W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8"],
     "admissions", 100, 900, 10, "line"),
    ("Website sessions by traffic channel, May (thousands)", "channel",
     ["Organic", "Paid", "Social", "Email", "Referral"], "thousand sessions", 5, 95, 1, "bar"),
    ("Solar panel output by hour, 21 June (kW)", "hour", ["08:00", "10:00", "12:00", "14:00", "16:00", "18:00"],
     "kW", 1, 9, 0.5, "line"),
    # query-only topics
    ("Average monthly temperature in Cairo (°C)", "month", ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul"], "°C",
     13, 36, 1, "line"),
    ("Ice cream sales by flavour (litres)", "flavour", ["Vanilla", "Chocolate", "Pistachio", "Mango", "Strawberry"],
     "litres", 120, 640, 10, "bar"),
    ("EV charging points installed per year", "year", ["2018", "2019", "2020", "2021", "2022", "2023"],
     "charging points", 400, 5200, 100, "line"),
    ("Recycled glass collected by district (tonnes)", "district", ["North", "East", "South", "West", "Central"],
     "tonnes", 30, 180, 5, "bar"),
    ("Weekend box office by film (million USD)", "film", ["Film A", "Film B", "Film C", "Film D"], "million USD",
     3, 48, 1, "bar"),
]


def _chart(rng, topic):
    title, label, cats, unit, lo, hi, res, ctype = topic
    n = int(round((hi - lo) / res))
    while True:
        vals = [round(lo + res * rng.randint(0, n), 2) for _ in cats]
        if len(set(vals)) == len(vals):
            break
    t0 = nice((max(vals) - min(vals)) / 4 or 1)
    base = 0 if ctype == "bar" else math.floor(min(vals) * 0.85 / t0) * t0
    tick = nice((max(vals) - base) / 5)
    top = base + tick * math.ceil((max(vals) - base) / tick)
    ticks = []
    v = base
    while v <= top + 1e-9:
        ticks.append(fmt(v))
        v += tick
    px = {c: round(412 - (x - base) / (top - base) * 360) for c, x in zip(cats, vals, strict=True)}
    return {"title": title, "label": label, "cats": cats, "unit": unit, "res": res, "ctype": ctype, "vals": vals,
            "base": base, "top": top, "ticks": ticks, "px": px}


@family("chart-reading", "chart", "png")
def fam_chart(rng):
    good, bad, queries = [], [], []
    kinds = ["value", "diff", "max", "value", "growth", "diff", "max", "growth", "value", "diff", "value"]
    for i, topic in enumerate(CHART_TOPICS[:11]):
        c = _chart(rng, topic)
        mark = "bar" if c["ctype"] == "bar" else "point"
        val = dict(zip(c["cats"], c["vals"], strict=True))
        kind = kinds[i]
        if kind == "growth" and c["ctype"] == "bar":
            kind = "diff"
        a, b = pick(rng, c["cats"], 2)
        if kind == "growth":
            ia, ib = sorted(pick(rng, range(len(c["cats"])), 2))
            a, b = c["cats"][ia], c["cats"][ib]
        labels_printed = rng.random() < 0.3
        cap = (f"A {c['ctype']} chart titled '{c['title']}' with {c['label']}s {', '.join(c['cats'])} on the x-axis "
               f"and {c['unit']} on the y-axis; " + ("values are printed above the bars." if labels_printed
                                                      else "no data labels."))
        steps = [st("Get the scale and labels first so heights can be turned into numbers.", "ocr",
                    "image_1: title, y-axis tick labels, x-axis category labels, any data labels",
                    f"Title: '{c['title']}'. Y-axis ticks: {', '.join(c['ticks'])}. X-axis: {', '.join(c['cats'])}. "
                    + ("Small numbers printed above each bar." if labels_printed else "No data labels."))]
        est = "; ".join(f"{k}: {fmt(x)}" for k, x in val.items())
        if labels_printed:
            steps.append(st("Labels exist but OCR can pair a number with the neighbouring bar; read them strictly "
                            "left to right and check the order against the bar heights.", "ocr",
                            "image_1: crop the band above the bars, read left to right", est))
        else:
            steps.append(st(f"No labels, so measure: find each {mark} top in pixels and interpolate between the "
                            "nearest gridlines.", "python",
                            f"detect {mark}s, map pixel y to value with {c['ticks'][0]} at y=412 and "
                            f"{fmt(c['top'])} at y=52",
                            "pixel tops: " + ", ".join(f"{k}={p}" for k, p in c["px"].items())
                            + f" -> estimated values (rounded to {fmt(c['res'])}): {est}"))
        basenote = (f" The y-axis starts at {c['ticks'][0]}, not 0, so bar lengths are not proportional to values."
                    if c["base"] else "")
        if kind == "value":
            q = pick(rng, [f"According to the {c['ctype']} chart in the image, what is the value for {a}?",
                           f"What does this chart report for {a}? Give the number in {c['unit']}.",
                           f"Read the {a} {mark} off the chart '{c['title']}'. What is its value?"])
            sub = "read a value from a bar chart" if c["ctype"] == "bar" else "read a data point from a line chart"
            ans = f"{fmt(val[a])} {c['unit']}"
            if not labels_printed:
                steps.append(st(f"Zoom on the {a} {mark} to refine where its top sits between two gridlines.",
                                "image_crop", f"image_1: {a} {mark} with the two nearest gridlines",
                                f"top lies between {fmt(val[a] - c['res'])} and {fmt(val[a] + c['res'])}, closest to "
                                f"{fmt(val[a])}"))
            reas = ("Reading the number by eye is error-prone, so the axis ticks were OCR'd first to fix the scale"
                    f"{' and the non-zero baseline' if c['base'] else ''}. The {mark} top for {a} was mapped to a "
                    "value "
                    "by interpolating between the two nearest gridlines and rounded to the chart's resolution. "
                    f"Checking that the label {a} sits directly under the measured {mark} avoided an off-by-one "
                    "category read." + basenote)
        elif kind == "diff":
            q = pick(rng, [f"Using the chart, how much larger is {a} than {b}?",
                           f"In the attached graph, what's the difference between {a} and {b} in {c['unit']}?",
                           f"By how many {c['unit']} does {a} differ from {b} according to this figure?"])
            sub = "compare two values in a chart"
            d = round(val[a] - val[b], 2)
            steps.append(st("Subtract the two readings (same source, same scale).", "calculator",
                            f"{fmt(val[a])} - {fmt(val[b])}", fmt(d)))
            ans = f"{a} is {fmt(abs(d))} {c['unit']} {'higher' if d > 0 else 'lower'} than {b} " \
                  f"({fmt(val[a])} vs {fmt(val[b])})"
            reas = ("Both values were read with one pixel-to-value mapping derived from the OCR'd ticks, so any "
                    "constant reading bias cancels in the difference. The sign was kept explicit (which one is "
                    "larger) because questions phrased 'how much larger' can hide a negative answer." + basenote)
        elif kind == "max":
            q = pick(rng, [f"Which {c['label']} has the highest value in this chart, and what is that value?",
                           f"Looking at the figure, which {c['label']} comes out on top, and by how much does it "
                           "beat the runner-up?"])
            sub = "find the largest category in a chart"
            srt = sorted(val.items(), key=lambda kv: -kv[1])
            steps.append(st("Rank the measured heights; compare pixels rather than eyeballing similar bars.",
                            "python", "sorted(values.items(), key=lambda kv: -kv[1])[:2]",
                            f"[('{srt[0][0]}', {fmt(srt[0][1])}), ('{srt[1][0]}', {fmt(srt[1][1])})]"))
            ans = (f"{srt[0][0]}, at about {fmt(srt[0][1])} {c['unit']} ({fmt(srt[0][1] - srt[1][1])} above "
                   f"{srt[1][0]})")
            reas = ("Comparing pixel heights is more reliable than comparing printed labels or eyeballing two similar "
                    "bars. The top two were reported so the margin is visible; when the margin is below the chart "
                    "resolution the answer should say the two are effectively tied." + basenote)
        else:
            q = pick(rng, [f"Based on the line chart, by what percentage did the value change from {a} to {b}?",
                           f"What was the percent change between {a} and {b} in this graph?"])
            sub = "compute percentage change from a line chart"
            pct = (val[b] - val[a]) / val[a] * 100
            steps.append(st("Percentage change uses the earlier point as the base.", "calculator",
                            f"({fmt(val[b])} - {fmt(val[a])}) / {fmt(val[a])} * 100", fmt(pct, 1)))
            ans = f"{'+' if pct >= 0 else ''}{fmt(pct, 1)}% ({fmt(val[a])} -> {fmt(val[b])} {c['unit']})"
            reas = ("The two points were read numerically, then (new - old) / old x 100 was computed with the "
                    f"earlier {c['label']} as base. The y-axis does not start at zero, so the visual slope "
                    "exaggerates the change; only the read values were used." if c["base"] else
                    "The two points were read numerically, then (new - old) / old x 100 was computed with the "
                    f"earlier {c['label']} as base rather than the later one.")
        if labels_printed:
            reas = ("The chart prints data labels, so the values came from OCR of the labels rather than from bar "
                    "heights; they were read strictly left to right and matched to the bar order, because OCR can "
                    "attach a number to the neighbouring bar. " + {
                        "value": f"The label sitting on the {a} {mark} was double-checked before answering.",
                        "diff": "The difference keeps its sign explicit, since 'how much larger' can hide a "
                                "negative answer.",
                        "max": "The top two were reported so the margin is visible.",
                        "growth": "Percentage change used the earlier value as the base."}[kind] + basenote)
        good.append(tr(q, sub, steps, reas, ans, images=1, caption=cap))
    # failures: baseline assumed at zero; off-by-one category
    c = _chart(rng, CHART_TOPICS[7])
    a = c["cats"][3]
    true = dict(zip(c["cats"], c["vals"], strict=True))[a]
    wrong = round((412 - c["px"][a]) / 360 * c["top"], 0)
    bad.append(tr(f"What was the median house price in {a} according to this line chart?",
                  "read a data point from a line chart",
                  [st("Read the axis maximum to get the scale.", "ocr", "image_1: y-axis top label",
                      f"Top tick: {fmt(c['top'])}"),
                   st("Map the point height assuming the axis starts at 0.", "python",
                      f"value = (412 - y) / 360 * {fmt(c['top'])} for the {a} point",
                      f"{a}: y={c['px'][a]} -> {fmt(wrong)}")],
                  "Read the top tick and scaled the point height proportionally from the bottom of the plot.",
                  f"About {fmt(wrong)} thousand GBP", images=1,
                  caption=f"A line chart titled '{c['title']}' with years on the x-axis."))
    assert abs(wrong - true) > c["res"]
    c = _chart(rng, CHART_TOPICS[2])
    cats = c["cats"]
    bad.append(tr(f"According to the chart, how many units did {cats[2]} ship?", "read a value from a bar chart",
                  [st("Read the data labels above the bars.", "ocr", "image_1: numbers above bars",
                      ", ".join(fmt(x) for x in c["vals"][1:]) + " (first label cut off)"),
                   st("Assign the labels to vendors in order.", "python", "dict(zip(vendors, labels))",
                      f"{{'{cats[0]}': {fmt(c['vals'][1])}, '{cats[1]}': {fmt(c['vals'][2])}, "
                      f"'{cats[2]}': {fmt(c['vals'][3])}}}")],
                  "Paired the OCR'd labels with vendor names in order.", f"{fmt(c['vals'][3])} million units",
                  images=1))
    # held-out queries
    qc = [_chart(rng, t) for t in CHART_TOPICS[11:]]
    c = qc[0]
    queries.append(qy(f"In this plot of Cairo temperatures, what reading is shown for {c['cats'][4]}?",
                      "read a value off a plotted line", images=1,
                      caption="Line plot of average monthly temperature in Cairo, January to July, in °C."))
    c = qc[1]
    queries.append(qy(f"hey, how many more litres of {c['cats'][0].lower()} than {c['cats'][3].lower()} got sold? "
                      "it's the graph i attached", "compare two bars", images=1))
    c = qc[2]
    queries.append(qy(f"请看这张折线图：从{c['cats'][1]}年到{c['cats'][4]}年，新装充电桩的数量增长了百分之多少？",
                      "计算折线图中的增长率", images=1, lang="zh",
                      caption="折线图，标题为每年新安装的电动车充电桩数量，横轴为2018至2023年。"))
    queries.append(qy("Please answer the question written under the figure.", "answer a question about a chart",
                      images=1, caption_only=True,
                      caption="A bar chart of recycled glass collected per district (North, East, South, West, "
                              "Central) in tonnes, without data labels. Handwritten below it: 'Which district "
                              "collected the least, and how many tonnes?'"))
    c = qc[4]
    queries.append(qy("Which movie had the weakest weekend takings in this box-office graphic, and roughly how "
                      "much did it earn?", "find the smallest category in a chart", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 2. table lookup from a screenshot
# ----------------------------------------------------------------------------------------------------------------
DEPTS = ["Finance", "Marketing", "Engineering", "Sales", "Legal", "Operations"]
TEAMS = ["Riverside FC", "Northgate United", "Harbour Athletic", "Old Mill Rovers", "Castle Town", "Westbrook City",
         "Kingsport Wanderers", "Elmfield Albion"]
ITEMS = [("Desk lamp", 24.9), ("USB-C hub", 39.0), ("Office chair", 189.0), ("Monitor arm", 64.5),
         ("Notebook A5", 3.2), ("Whiteboard", 79.0), ("Stapler", 8.75), ("Keyboard", 49.99), ("Webcam", 59.0)]


def _tbl_employees(rng):
    names = pick(rng, PEOPLE, 7)
    rows = [(n, pick(rng, DEPTS), rng.randint(2009, 2023), rng.randrange(42000, 118000, 500)) for n in names]
    return ["Name", "Department", "Start year", "Salary (EUR)"], rows


def _tbl_league(rng):
    rows = []
    for t in pick(rng, TEAMS, 6):
        w = rng.randint(3, 14)
        d = rng.randint(0, 6)
        lo = 20 - w - d
        rows.append((t, 20, w, d, lo, 3 * w + d))
    rows.sort(key=lambda r: -r[5])
    return ["Team", "P", "W", "D", "L", "Pts"], rows


def _tbl_inventory(rng):
    rows = [(f"SKU-{rng.randint(1000, 9999)}", n, rng.randint(0, 240), p) for n, p in pick(rng, ITEMS, 7)]
    return ["SKU", "Item", "Stock", "Unit price (USD)"], rows


def _tbl_exam(rng):
    rows = [(n.split()[0], rng.randint(48, 99), rng.randint(45, 99), rng.randint(40, 99)) for n in pick(rng, PEOPLE, 6)]
    return ["Student", "Maths", "Physics", "Chemistry"], rows


def _tbl_board(rng):
    dests = ["Lisbon", "Oslo", "Dubai", "Warsaw", "Nice", "Athens", "Dublin", "Istanbul"]
    rows = []
    for dst in pick(rng, dests, 6):
        rows.append((f"{pick(rng, ['LX', 'SK', 'EK', 'LO', 'AF', 'A3', 'EI', 'TK'])}{rng.randint(100, 999)}", dst,
                     f"{rng.randint(6, 21):02d}:{pick(rng, ['05', '15', '25', '40', '50'])}",
                     f"{pick(rng, 'ABCD')}{rng.randint(1, 40)}", pick(rng, ["On time", "Delayed", "Boarding"])))
    rows.sort(key=lambda r: r[2])
    return ["Flight", "Destination", "Departs", "Gate", "Status"], rows


def _table_text(header, rows):
    return " | ".join(header) + " / " + " / ".join(" | ".join(fmt(x) if isinstance(x, float) else str(x) for x in r)
                                                   for r in rows)


@family("table-screenshot", "screenshot", "png")
def fam_table(rng):
    good, bad, queries = [], [], []
    plan = [("employees", "lookup"), ("league", "argmax"), ("inventory", "sum"), ("exam", "avg"),
            ("board", "lookup"), ("employees", "count"), ("league", "lookup"), ("inventory", "count"),
            ("exam", "argmax"), ("board", "count"), ("employees", "avg")]
    makers = {"employees": _tbl_employees, "league": _tbl_league, "inventory": _tbl_inventory, "exam": _tbl_exam,
              "board": _tbl_board}
    desc = {"employees": "a spreadsheet of staff records", "league": "a football league standings table",
            "inventory": "an inventory sheet", "exam": "a table of exam marks", "board": "a departures board"}
    for kind, op in plan:
        header, rows = makers[kind](rng)
        r = pick(rng, rows)
        ocr_obs = _table_text(header, rows)
        if kind == "employees":
            dept = max(DEPTS, key=lambda x: (sum(1 for y in rows if y[1] == x), x))
            if op == "lookup":
                q, a = f"In this screenshot of the staff sheet, what is {r[0]}'s salary?", f"{r[3]:,} EUR"
                code = f"df.loc[df.Name == '{r[0]}', 'Salary (EUR)']"
            elif op == "count":
                yr = 2016
                n = sum(1 for x in rows if x[2] >= yr)
                q, a = f"How many people in the table started in {yr} or later?", str(n)
                code = f"(df['Start year'] >= {yr}).sum()"
            else:
                sel = [x[3] for x in rows if x[1] == dept]
                q = f"What's the average salary of the {dept} department in this table?"
                a = f"{fmt(sum(sel) / len(sel))} EUR (over {len(sel)} employee{'s' if len(sel) > 1 else ''})"
                code = f"df[df.Department == '{dept}']['Salary (EUR)'].mean()"
        elif kind == "league":
            if op == "argmax":
                gd = [(x[0], x[2]) for x in rows]
                best = max(gd, key=lambda x: x[1])
                ties = [t for t, w in gd if w == best[1]]
                q = "Which team in the standings screenshot has won the most matches?"
                a = " and ".join(ties) + f" ({best[1]} wins)"
                code = "df[df.W == df.W.max()][['Team', 'W']]"
            else:
                q = f"From the league table image, how many points does {r[0]} have and how many games did they draw?"
                a = f"{r[5]} points, {r[3]} draws"
                code = f"df.loc[df.Team == '{r[0]}', ['Pts', 'D']]"
        elif kind == "inventory":
            if op == "sum":
                val = sum(x[2] * x[3] for x in rows)
                q = "What is the total stock value (stock x unit price) of everything in this inventory screenshot?"
                a = money(val)
                code = "(df.Stock * df['Unit price (USD)']).sum()"
            else:
                n = sum(1 for x in rows if x[2] < 20)
                q = "How many items in this inventory have fewer than 20 units in stock?"
                a = str(n)
                code = "(df.Stock < 20).sum()"
        elif kind == "exam":
            subj = pick(rng, ["Maths", "Physics", "Chemistry"])
            j = header.index(subj)
            if op == "avg":
                avg = sum(x[j] for x in rows) / len(rows)
                q, a = f"What is the class average in {subj} according to the marks table?", fmt(avg)
                code = f"df['{subj}'].mean()"
            else:
                tot = max(rows, key=lambda x: x[1] + x[2] + x[3])
                q = "Who has the highest total across the three subjects in this table?"
                a = f"{tot[0]} ({tot[1] + tot[2] + tot[3]} points)"
                code = "df.assign(total=df[['Maths','Physics','Chemistry']].sum(axis=1)).nlargest(1, 'total')"
        else:
            if op == "lookup":
                q = f"What gate does the flight to {r[1]} leave from, and at what time? (screenshot of the board)"
                a = f"Gate {r[3]}, departing {r[2]} ({r[0]}, {r[4].lower()})"
                code = f"df[df.Destination == '{r[1]}']"
            else:
                n = sum(1 for x in rows if x[4] == "Delayed")
                q = "How many departures on this board are shown as delayed?"
                a = str(n)
                code = "(df.Status == 'Delayed').sum()"
        steps = [st("Extract the table as text, keeping the row and column structure.", "ocr",
                    "image_1: table mode, preserve rows", ocr_obs),
                 st("Load the rows into a dataframe so the answer comes from a query, not from scanning by eye; check "
                    "every row has the same number of cells.", "python",
                    f"df = pd.DataFrame(rows, columns={header}); assert df.shape == ({len(rows)}, {len(header)})",
                    f"shape ({len(rows)}, {len(header)}) OK"),
                 st("Run the lookup.", "python", code, a)]
        reas = pick(rng, [
            "OCR in table mode kept the row structure; loading it into a dataframe and asserting the shape caught "
            "any row where a blank or merged cell would have shifted the columns. The answer came from a filter "
            "on the exact column name rather than from reading across the screenshot by eye.",
            "The screenshot was turned into structured rows first and the column count was verified for every row "
            "(OCR likes to merge adjacent numeric cells). Numbers were parsed without thousands separators before "
            "any arithmetic, and the question's condition was applied as a dataframe filter.",
            "Read the whole table, not only the row that looked relevant, because ties and duplicates matter for "
            "'which/how many' questions. The computation was done in pandas on parsed numbers, then cross-checked "
            "against the screenshot for the rows involved."])
        good.append(tr(q, f"look up a value in a table screenshot ({desc[kind]})", steps, reas, a, images=1,
                       caption=f"Screenshot of {desc[kind]} with columns {', '.join(header)} and {len(rows)} rows."))
    header, rows = _tbl_employees(rng)
    r = rows[2]
    shifted = rows[3][3]
    bad.append(tr(f"What salary does {r[0]} earn according to this spreadsheet screenshot?",
                  "look up a value in a table screenshot",
                  [st("Read the screenshot.", "ocr", "image_1", _table_text(header, rows).replace(str(r[3]), "", 1)),
                   st("Take the next number after the name.", "python", f"next salary after '{r[0]}'", str(shifted))],
                  "Found the name in the OCR text and took the following salary value.", f"{shifted:,} EUR",
                  images=1))
    queries.append(qy("Looking at this hotel bookings sheet, which guest is staying the most nights?",
                      "find the max row in a tabular screenshot", images=1,
                      caption="Screenshot of a bookings table with columns Guest, Room, Check-in, Nights, Rate."))
    queries.append(qy("whats the ph of sample S-4 in the lab results pic?", "read one cell from a results table",
                      images=1))
    queries.append(qy("这张截图里的销售表中，华东区两个季度的销售额合计是多少？", "从表格截图中求和", images=1,
                      lang="zh", caption="销售业绩表截图，列为：销售员、区域、第一季度、第二季度。"))
    queries.append(qy("Answer using the picture.", "count rows in a table image", images=1, caption_only=True,
                      caption="Photo of a library loans list with columns Title, Borrower, Due date; a sticky note "
                              "asks how many books are due before 15 March."))
    queries.append(qy("From the attached standings, how many matches has Lakeshore Town lost this season?",
                      "look up a cell in a standings screenshot", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 3. landmark identification
# ----------------------------------------------------------------------------------------------------------------
LANDMARKS = [
    # name, place, caption, when, designer, look-alike, distinguishing feature
    ("Eiffel Tower", "Paris, France",
     "A tall wrought-iron lattice tower seen from a long lawn, tourists in the foreground, a river on the left.",
     "completed in 1889 for the Exposition Universelle",
     "Gustave Eiffel's company (engineers Maurice Koechlin and Émile Nouguier, architect Stephen Sauvestre)",
     "Tokyo Tower", "brown-grey paint and the Champ de Mars lawn instead of Tokyo Tower's orange-and-white bands"),
    ("Sydney Opera House", "Sydney, Australia",
     "White sail-like shell roofs on a harbour promontory, a steel arch bridge in the background.",
     "opened in 1973", "Jørn Utzon", "Auditorio de Tenerife",
     "the cluster of several shells and the Harbour Bridge behind it"),
    ("Basílica de la Sagrada Família", "Barcelona, Spain",
     "A basilica with many tall perforated spires, construction cranes and an intricately sculpted facade.",
     "under construction since 1882", "Antoni Gaudí (who took over the project in 1883)", "Cologne Cathedral",
     "organic, honeycomb-like spires and the cranes; Cologne's twin Gothic spires are dark and pointed"),
    ("Taj Mahal", "Agra, India",
     "A white marble domed mausoleum with four minarets, reflected in a long rectangular pool.",
     "built between 1632 and 1653", "commissioned by Shah Jahan; chief architect usually credited as Ustad Ahmad "
     "Lahauri", "Bibi Ka Maqbara (Aurangabad)", "the full white-marble facing and the slimmer, taller minarets"),
    ("Golden Gate Bridge", "San Francisco, USA",
     "A red-orange suspension bridge with art-deco towers over a strait, partly covered by fog.",
     "opened in 1937", "chief engineer Joseph Strauss, with Charles Ellis, Leon Moisseiff and architect Irving Morrow",
     "Ponte 25 de Abril (Lisbon)", "the stepped art-deco towers and the Marin headlands; Lisbon's bridge carries a "
     "lower railway deck"),
    ("Colosseum", "Rome, Italy",
     "An elliptical ancient stone amphitheatre with tiers of arches, part of the outer ring missing.",
     "completed in 80 AD under Emperor Titus", "commissioned by Vespasian; the architect is unknown",
     "Arena of Nîmes", "four storeys with the partly collapsed outer ring; Nîmes has two storeys and is intact"),
    ("Petronas Towers", "Kuala Lumpur, Malaysia",
     "Twin steel-clad skyscrapers connected by a skybridge at mid-height, lit up at night.",
     "completed in 1998 and opened in 1999", "César Pelli", "Jin Mao Tower",
     "two identical towers joined by a skybridge"),
    ("Christ the Redeemer", "Rio de Janeiro, Brazil",
     "A large statue with outstretched arms on a mountain summit above a bay city.",
     "completed in 1931", "sculptor Paul Landowski with engineer Heitor da Silva Costa",
     "Cristo Rei (Almada, Portugal)", "the arms held horizontally and Sugarloaf Mountain in the bay"),
    ("Angkor Wat", "Siem Reap, Cambodia",
     "A sandstone temple with five lotus-bud towers behind a moat, reflected in a pond at sunrise.",
     "built in the early 12th century under King Suryavarman II", "built for Suryavarman II; architects unknown",
     "Bayon temple", "the five-tower quincunx silhouette; Bayon is covered with carved faces"),
    ("Atomium", "Brussels, Belgium",
     "A shiny metal structure of nine large spheres connected by tubes, like a magnified crystal cell.",
     "built for the Expo 58 world's fair in 1958", "engineer André Waterkeyn, architects André and Jean Polak",
     "a science-museum sculpture", "the nine-sphere iron-crystal arrangement"),
    ("Tower Bridge", "London, UK",
     "A bascule bridge with two Gothic-style stone towers joined by high walkways over a river.",
     "opened in 1894", "architect Horace Jones and engineer John Wolfe Barry", "London Bridge",
     "the Gothic towers and walkways; London Bridge is a plain concrete span"),
    ("Brandenburg Gate", "Berlin, Germany",
     "A neoclassical sandstone gate with twelve Doric columns topped by a chariot drawn by four horses.",
     "completed in 1791", "Carl Gotthard Langhans", "Siegestor (Munich)",
     "Doric columns and the Quadriga; Munich's Siegestor is a Roman-style triumphal arch"),
]


@family("landmark-id", "photo", "jpg")
def fam_landmark(rng):
    good, bad, queries = [], [], []
    kinds = ["where", "when", "designer"]
    deck = Deck(rng)
    for i, (name, place, cap, when, designer, alike, feature) in enumerate(LANDMARKS):
        kind = kinds[i % 3]
        if kind == "where":
            q = deck(kind, ["Where was this photo taken? Name the landmark and the city.",
                            "I found this picture in an old album. What is this place and which city is it in?",
                            "Identify the landmark in the image and tell me the country.",
                            "A friend sent me this travel photo without saying where she is. Which landmark is it?"])
            ans, sub = f"{name}, {place}", "identify a landmark from a photo"
        elif kind == "when":
            q = deck(kind, ["What is this structure, and when was it built?",
                            "Name the building in the picture and the year it was completed or opened.",
                            "How old is the monument in my photo? Please name it too.",
                            "Which landmark is this, and in what year was it finished?"])
            ans, sub = f"{name} ({place}), {when}", "identify a landmark and its construction date"
        else:
            q = deck(kind, ["Who designed the building shown in this photo?",
                            "Who was the architect or engineer behind the structure in this image?",
                            "Whose design is the landmark in this picture?",
                            "I'm writing a caption for this photo - what is the structure and who designed it?"])
            ans, sub = f"{name} ({place}) - {designer}", "identify a landmark and its designer"
        others = pick(rng, [x[0] for x in LANDMARKS if x[0] != name], 1)[0]
        steps = [st("Start with a reverse image search on the whole photo.", "image_search", "image_1 (reverse search)",
                    f"Visually similar: '{name}' (38 matches), '{alike}' (6 matches), '{others}' (1 match)"),
                 st(f"Rule out the look-alike {alike}: check {feature}.", "image_crop",
                    "image_1: crop the most distinctive part of the structure",
                    f"Crop shows {feature.split(';')[0]} - consistent with {name}.")]
        if kind == "where":
            steps.append(st("Confirm the location from an encyclopedic source.", "wikipedia", name,
                            f"{name} is a landmark in {place}; {when}."))
        elif kind == "when":
            steps.append(st("Take the date from the infobox, distinguishing start of construction from completion.",
                            "wikipedia", name, f"{name} ({place}): {when}."))
        else:
            steps.append(st("Get the design credits; the most famous name is not always the designer.",
                            "wikipedia", f"{name} design and construction", f"Design credits: {designer}."))
            steps.append(st("Cross-check the credit on a second source.", "web_search", f"{name} architect designer",
                            f"Official site and heritage listing agree: {designer}."))
        reas = (f"Reverse image search put {name} first but also surfaced {alike}; cropping to the distinctive "
                f"detail ({feature}) settled it before any fact lookup. Facts were taken from the Wikipedia article "
                "rather than search snippets, and for date questions construction start, completion and opening "
                "were kept apart.")
        good.append(tr(q, sub, steps, reas, ans, images=1, caption=cap))
    bad.append(tr("What is this tower and in which city is it?", "identify a landmark from a photo",
                  [st("Reverse image search.", "image_search", "image_1", "Similar: 'Eiffel Tower' (21), "
                      "'Tokyo Tower' (17)"),
                   st("Take the top hit.", "wikipedia", "Eiffel Tower", "Eiffel Tower is in Paris, France.")],
                  "Used the top reverse-image-search hit.", "Eiffel Tower, Paris", images=1,
                  caption="A red-and-white lattice tower lit up at dusk among city office blocks."))
    bad.append(tr("Which building is this, and when was it completed?", "identify a landmark and its construction date",
                  [st("Reverse image search.", "image_search", "image_1", "Similar: 'Taj Mahal' (14), "
                      "'Bibi Ka Maqbara' (12)"),
                   st("Look up the top hit.", "wikipedia", "Taj Mahal", "Taj Mahal, Agra: built 1632-1653.")],
                  "Took the first search result.", "Taj Mahal, completed in 1653", images=1,
                  caption="A domed mausoleum with four minarets; the lower walls are plaster rather than marble, "
                          "dry garden channels in front."))
    queries.append(qy("Which landmark is this and what city am I looking at?", "recognise a famous building",
                      images=1, caption="A slender observation tower with a flying-saucer-shaped top; a snowy "
                                        "volcano is faintly visible in the distance."))
    queries.append(qy("saw this huge domed building w/ 4 minarets on my trip, pinkish walls. what is it and how "
                      "old is it??", "name a monument and its age", images=1))
    queries.append(qy("这张照片里的城堡叫什么名字？是谁下令修建的？", "识别照片中的建筑及其建造者", images=1,
                      lang="zh", caption="白色的童话风格城堡，建在山崖上，周围是森林，远处有雪山。"))
    queries.append(qy("Tell me about this.", "identify a building in a photo", images=1, caption_only=True,
                      caption="Photo of an extremely tall stepped glass skyscraper tapering to a spire, towering over "
                              "a desert city; the sender asks what it is and how tall it is."))
    queries.append(qy("What's the name of the pyramid in this holiday snap, and which civilisation built it?",
                      "recognise an archaeological site from a picture", images=1,
                      caption="A stepped stone pyramid with a staircase on each side and a small temple on top, "
                              "standing on a flat grassy plain."))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 4. plant identification
# ----------------------------------------------------------------------------------------------------------------
PLANTS = [
    # common, scientific, family, toxic to cats, caption, look-alike, distinguishing feature
    ("Swiss cheese plant", "Monstera deliciosa", "Araceae", True,
     "A large glossy leaf with deep splits and oval holes, in a white pot next to a window.",
     "split-leaf philodendron (Philodendron bipinnatifidum)", "holes (fenestrations) inside the blade, not only lobes"),
    ("Fiddle-leaf fig", "Ficus lyrata", "Moraceae", True,
     "A tall indoor plant with big violin-shaped, leathery leaves with prominent pale veins.",
     "rubber plant (Ficus elastica)", "wavy violin-shaped leaves rather than smooth oval ones"),
    ("Snake plant", "Dracaena trifasciata (syn. Sansevieria trifasciata)", "Asparagaceae", True,
     "Stiff upright sword-shaped leaves with dark green horizontal banding and yellow edges.",
     "Aloe", "flat, non-succulent banded blades without spines"),
    ("Golden pothos", "Epipremnum aureum", "Araceae", True,
     "A trailing vine with heart-shaped leaves marbled green and yellow, hanging from a shelf.",
     "heartleaf philodendron (Philodendron hederaceum)", "thicker, slightly textured leaves with yellow marbling"),
    ("Spider plant", "Chlorophytum comosum", "Asparagaceae", False,
     "Arching narrow leaves with a white central stripe and small plantlets dangling on long stems.",
     "variegated lilyturf", "plantlets hanging from long stolons"),
    ("Oleander", "Nerium oleander", "Apocynaceae", True,
     "A shrub with narrow leathery leaves and clusters of pink five-petalled flowers beside a road.",
     "pink laurel / azalea", "whorls of three lance-shaped leaves and five twisted petals"),
    ("Foxglove", "Digitalis purpurea", "Plantaginaceae", True,
     "A tall spike of tubular purple flowers with spotted throats in a woodland clearing.",
     "comfrey", "one-sided spike of thimble-shaped flowers with spotted throats"),
    ("Calathea orbifolia", "Goeppertia orbifolia (formerly Calathea orbifolia)", "Marantaceae", False,
     "Broad round leaves with pale silver-green stripes between the veins.",
     "peacock plant (Goeppertia makoyana)", "very round leaves with broad silver bands"),
    ("English ivy", "Hedera helix", "Araliaceae", True,
     "A climbing vine with dark green lobed leaves covering a brick wall.",
     "Boston ivy (Parthenocissus tricuspidata)", "evergreen leaves and aerial rootlets instead of tendrils"),
    ("Easter lily", "Lilium longiflorum", "Liliaceae", True,
     "White trumpet-shaped flowers with yellow anthers on a leafy stem in a gift wrap.",
     "peace lily (Spathiphyllum)", "true trumpet flowers with six tepals, not a single white spathe"),
    ("ZZ plant", "Zamioculcas zamiifolia", "Araceae", True,
     "Glossy, waxy, dark-green oval leaflets arranged along upright stems.",
     "jade plant", "pinnate compound leaves from thick rhizomes"),
    ("African violet", "Streptocarpus ionanthus (formerly Saintpaulia ionantha)", "Gesneriaceae", False,
     "Fuzzy rounded leaves in a rosette with small violet flowers in the middle.",
     "Cape primrose", "velvety round leaves in a tight rosette"),
]


@family("plant-id", "plant", "jpg")
def fam_plant(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for i, (common, sci, fam, toxic, cap, alike, feature) in enumerate(PLANTS):
        kind = ["toxic", "sci", "family"][i % 3]
        tox = "toxic to cats" if toxic else "non-toxic to cats"
        if kind == "toxic":
            q = deck(kind, ["What plant is this, and is it safe to keep around my cat?",
                            "My cat keeps chewing this houseplant. What is it, and is it poisonous to cats?",
                            "We're adopting a kitten. Is the plant in this photo a problem? What is it?",
                            "Identify this plant and tell me if it's toxic to cats."])
            ans, sub = f"{common} ({sci}); {tox} according to the ASPCA list", "identify a plant and its pet toxicity"
        elif kind == "sci":
            q = deck(kind, ["Identify the plant in the photo and give its scientific name.",
                            "What species is this plant? I need the Latin name for a label.",
                            "Bought this at a market without a tag - what's the botanical name?",
                            "What is this plant called, scientifically?"])
            ans, sub = f"{common}, {sci}", "identify a plant species from a photo"
        else:
            q = deck(kind, ["Which plant family does this plant belong to?",
                            "Can you tell me what this is and what botanical family it is in?",
                            "For my herbarium sheet: species and family of the plant in this photo?",
                            "What plant is this and which family is it classified in?"])
            ans, sub = f"{common} ({sci}), family {fam}", "identify a plant and its family"
        steps = [st("Reverse image search the leaf/flower close-up.", "image_search", "image_1 (plant photo)",
                    f"Top matches: {common} ({sci}) 0.81; {alike} 0.64"),
                 st(f"Separate it from {alike} using a diagnostic trait: {feature}.", "image_crop",
                    "image_1: crop leaf attachment and blade", f"Visible: {feature}. Matches {common}.")]
        if kind == "toxic":
            steps.append(st("Check toxicity on the ASPCA toxic/non-toxic plant list, not on a blog.",
                            "browse_webpage", f"aspca.org toxic and non-toxic plants: {common}",
                            f"{common} ({sci}): {'Toxic' if toxic else 'Non-Toxic'} to cats."))
        elif kind == "sci":
            steps.append(st("Confirm the accepted scientific name; houseplant names are often outdated.",
                            "web_search", f"{sci.split(' (')[0]} accepted name POWO",
                            f"Plants of the World Online: accepted name {sci}."))
        else:
            steps.append(st("Look up the family.", "wikipedia", common, f"{common}: {sci}, family {fam}."))
        reas = (f"Reverse image search proposed {common} but {alike} scored close, so a diagnostic trait ({feature}) "
                "was checked on a crop before answering. " +
                ("Toxicity came from the ASPCA list, which is the standard reference for pets."
                 if kind == "toxic" else "The name was checked against a current taxonomic source because many "
                 "houseplants were recently reclassified."))
        good.append(tr(q, sub, steps, reas, ans, images=1, caption=cap))
    bad.append(tr("What is this plant and is it toxic to cats?", "identify a plant and its pet toxicity",
                  [st("Reverse image search.", "image_search", "image_1", "Peace lily (Spathiphyllum) 0.72; "
                      "Easter lily (Lilium longiflorum) 0.70"),
                   st("Check toxicity.", "web_search", "peace lily cats", "Peace lily: mildly toxic, mouth "
                      "irritation.")],
                  "Took the top match and looked up its toxicity.",
                  "Peace lily - only mildly irritating to cats", images=1,
                  caption="White trumpet-shaped flowers with six tepals and orange pollen on a leafy stem."))
    queries.append(qy("Is this plant dangerous for dogs and cats? What is it?", "plant ID plus pet safety",
                      images=1, caption="Feathery arching fronds divided into many small leaflets, in a hanging "
                                        "basket."))
    queries.append(qy("found this growing in my garden, purple spiky flowers, smells nice. what is it?",
                      "name a garden plant", images=1))
    queries.append(qy("这盆植物叫什么？学名是什么？", "识别植物并给出学名", images=1, lang="zh",
                      caption="粗厚肉质的灰绿色叶片呈莲座状排列，叶缘有小锯齿，种在陶土盆里。"))
    queries.append(qy("Help me with this one.", "identify a plant", images=1, caption_only=True,
                      caption="A tall yellow flower head with a dark brown centre on a hairy stem in a field; the "
                              "note asks for the species and plant family."))
    queries.append(qy("What's this shrub with magenta funnel flowers by my porch, and should I worry about my "
                      "kitten?", "identify a shrub and check pet toxicity", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 5. bird identification
# ----------------------------------------------------------------------------------------------------------------
BIRDS = [
    # common, scientific, IUCN status, caption, where seen, look-alike, field mark
    ("Northern cardinal", "Cardinalis cardinalis", "Least Concern",
     "A bright red songbird with a pointed crest and black face mask perched on a snowy branch.", "Ohio",
     "summer tanager", "the crest and black mask around a thick red bill"),
    ("Blue jay", "Cyanocitta cristata", "Least Concern",
     "A crested bird with blue upperparts, white underparts and a black necklace at a seed feeder.", "Ontario",
     "Steller's jay", "white face and underparts with a black necklace"),
    ("European robin", "Erithacus rubecula", "Least Concern",
     "A small round bird with an orange-red face and breast and an olive-brown back on a garden fork handle.",
     "Kent, England", "American robin", "small size and orange face (not only breast), seen in Europe"),
    ("American robin", "Turdus migratorius", "Least Concern",
     "A thrush-sized bird with grey-brown back and brick-orange breast pulling a worm out of a lawn.", "Minnesota",
     "European robin", "larger thrush shape, dark head and broken white eye-ring, seen in North America"),
    ("Atlantic puffin", "Fratercula arctica", "Vulnerable",
     "A black-and-white seabird with a large triangular orange, blue and yellow bill on a grassy cliff.",
     "the Faroe Islands", "horned puffin", "grey cheek patch and no fleshy 'horn' above the eye"),
    ("Common kingfisher", "Alcedo atthis", "Least Concern",
     "A small bird with an electric-blue back, orange belly and long dagger bill on a reed over water.",
     "Bavaria", "belted kingfisher", "tiny size, orange underparts and blue back"),
    ("Barn owl", "Tyto alba", "Least Concern",
     "A pale owl with a white heart-shaped face and dark eyes flying low over a field at dusk.", "Norfolk",
     "snowy owl", "heart-shaped facial disc and golden-buff upperparts"),
    ("Bald eagle", "Haliaeetus leucocephalus", "Least Concern",
     "A large raptor with a white head and tail, dark brown body and a hooked yellow bill.", "Alaska",
     "white-tailed eagle", "entirely white head, not just a pale one"),
    ("Great blue heron", "Ardea herodias", "Least Concern",
     "A tall grey-blue wading bird with long legs and an S-curved neck standing in shallow water.", "Florida",
     "grey heron", "rufous thighs and larger size, seen in the Americas"),
    ("Ruby-throated hummingbird", "Archilochus colubris", "Least Concern",
     "A tiny bird with a green back and iridescent red throat hovering at a sugar-water feeder.", "Virginia",
     "rufous hummingbird", "green back and ruby gorget on an eastern-US bird"),
    ("Eurasian hoopoe", "Upupa epops", "Least Concern",
     "A pinkish-brown bird with a black-tipped fan crest and black-and-white barred wings probing the ground.",
     "Andalusia", "African hoopoe", "white bands in the primaries and European location"),
    ("Red-winged blackbird", "Agelaius phoeniceus", "Least Concern",
     "A glossy black bird with red and yellow shoulder patches singing on a cattail.", "Wisconsin",
     "tricolored blackbird", "yellow (not white) lower border on the red epaulet"),
]


@family("bird-id", "bird", "jpg")
def fam_bird(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for i, (common, sci, status, cap, where, alike, mark) in enumerate(BIRDS):
        kind = ["names", "status", "where"][i % 3]
        if kind == "names":
            q = deck(kind, ["What bird is this? Please give the common and scientific name.",
                            "Can you identify this bird species for my photo caption (common + Latin name)?",
                            "Which species is the bird in my picture?",
                            "Name this bird, please - English and scientific names."])
            ans, sub = f"{common} ({sci})", "identify a bird species from a photo"
        elif kind == "status":
            q = deck(kind, ["Which species is this bird, and what is its IUCN conservation status?",
                            "Identify the bird and tell me whether it is threatened.",
                            "Is the bird in this photo an endangered species? What is it?",
                            "What's this bird and how is it listed on the IUCN Red List?"])
            ans, sub = f"{common} ({sci}); IUCN status: {status}", "identify a bird and its conservation status"
        else:
            q = f"I photographed this bird in {where}. What is it?"
            ans, sub = f"{common} ({sci})", "identify a bird seen at a given location"
        steps = [st("Reverse image search the bird.", "image_search", "image_1 (bird photo)",
                    f"Best matches: {common} ({sci}); {alike}"),
                 st(f"Separate from {alike} using field marks and range: {mark}.", "browse_webpage",
                    f"allaboutbirds.org / ebird species account: {common}",
                    f"Field marks: {mark}. Range includes {where}.")]
        if kind == "status":
            steps.append(st("Read the status from the IUCN Red List entry.", "web_search",
                            f"{sci} IUCN Red List status", f"IUCN Red List: {sci} - {status}."))
        reas = (f"Image search gave {common} with {alike} as the runner-up; the decision rested on field marks "
                f"({mark}) and on whether the sighting location is inside the species' range. The scientific name "
                "and status came from reference sites (eBird / IUCN), not from the image-search captions.")
        good.append(tr(q, sub, steps, reas, ans, images=1, caption=cap))
    bad.append(tr("I took this photo of a bird in my garden in Kent. What is it?",
                  "identify a bird seen at a given location",
                  [st("Reverse image search.", "image_search", "image_1", "American robin; European robin"),
                   st("Look up the top result.", "wikipedia", "American robin", "American robin, Turdus migratorius: "
                      "a thrush of North America.")],
                  "Took the top image match.", "American robin (Turdus migratorius)", images=1,
                  caption="A small round bird with orange face and breast on a fence post."))
    queries.append(qy("What species of bird is in this picture? Common name and scientific name please.",
                      "name a bird from a photograph", images=1,
                      caption="A large parrot with a red body, yellow and blue wing feathers and a long red tail."))
    queries.append(qy("this white owl was sitting on the snow near the airport, what kind is it? is it rare?",
                      "bird ID and rarity", images=1))
    queries.append(qy("我在公园池塘拍到这只鸭子，请问是什么品种？", "识别鸟类", images=1, lang="zh",
                      caption="一只雄鸭，头部是亮绿色，脖子有白色环，胸部栗色，在池塘里游。"))
    queries.append(qy("What's this?", "identify a bird", images=1, caption_only=True,
                      caption="Pale pink wading birds with long legs and bent bills with black tips standing in a "
                              "salt lagoon; the photographer wants the species name and scientific name."))
    queries.append(qy("Spotted a bird with a black-and-white barred back and red cap drumming on an oak in "
                      "Massachusetts - which species?", "identify a woodpecker-like bird seen in a region",
                      images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 6. artwork identification
# ----------------------------------------------------------------------------------------------------------------
ARTWORKS = [
    # title, artist, date, museum, caption
    ("Mona Lisa", "Leonardo da Vinci", "c. 1503-1519", "the Louvre, Paris",
     "A half-length portrait of a woman with folded hands and a faint smile, a hazy landscape behind her."),
    ("The Starry Night", "Vincent van Gogh", "1889", "the Museum of Modern Art, New York",
     "A swirling night sky with bright stars and a crescent moon over a village, a dark cypress in front."),
    ("Girl with a Pearl Earring", "Johannes Vermeer", "c. 1665", "the Mauritshuis, The Hague",
     "A girl in a blue and yellow turban looking over her shoulder, wearing a large pearl earring."),
    ("The Great Wave off Kanagawa", "Katsushika Hokusai", "c. 1831",
     "several collections (impressions of the woodblock print are held by e.g. the Met and the British Museum)",
     "A woodblock print of a huge clawed wave over three boats, a small snow-capped mountain in the distance."),
    ("The Persistence of Memory", "Salvador Dalí", "1931", "the Museum of Modern Art, New York",
     "Melting pocket watches draped over a branch and a strange sleeping figure in a barren coastal landscape."),
    ("The Night Watch", "Rembrandt van Rijn", "1642", "the Rijksmuseum, Amsterdam",
     "A large dark group portrait of militiamen, a captain in black and a lieutenant in yellow, a girl lit up."),
    ("The Birth of Venus", "Sandro Botticelli", "c. 1484-1486", "the Uffizi Gallery, Florence",
     "A nude woman standing on a giant scallop shell at the shore, wind gods blowing from the left."),
    ("Las Meninas", "Diego Velázquez", "1656", "the Museo del Prado, Madrid",
     "A large room with a young princess and her maids, a painter at a big canvas and a mirror on the back wall."),
    ("The Scream", "Edvard Munch", "1893 (painted version)", "the National Museum, Oslo",
     "A figure with an agonised face holding its head on a bridge under a swirling orange sky."),
    ("American Gothic", "Grant Wood", "1930", "the Art Institute of Chicago",
     "A stern farmer holding a pitchfork beside a woman in front of a white house with a pointed window."),
    ("Guernica", "Pablo Picasso", "1937", "the Museo Reina Sofía, Madrid",
     "A huge black, white and grey cubist scene of screaming people, a bull and a wounded horse."),
    ("The Kiss", "Gustav Klimt", "1907-1908", "the Belvedere, Vienna",
     "A couple embracing, wrapped in golden robes with geometric patterns, kneeling on a flower meadow."),
]


@family("artwork-id", "art", "jpg")
def fam_art(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for i, (title, artist, when, museum, cap) in enumerate(ARTWORKS):
        kind = ["who_where", "title_year", "museum"][i % 3]
        if kind == "who_where":
            q = deck(kind, ["Who painted this, and where can I see the original?",
                            "Which artist made this picture and which museum holds it?",
                            "Who is the artist of this painting, and is the original on display somewhere?",
                            "Tell me the painter and the current location of this work."])
            ans = f"{title} by {artist} ({when}); original in {museum}"
            sub = "identify an artwork's artist and museum"
        elif kind == "title_year":
            q = deck(kind, ["What is the name of this artwork and when was it made?",
                            "Name this painting and its date.",
                            "What's the title of this picture and roughly what year is it from?",
                            "Which famous artwork is this, and when was it created?"])
            ans, sub = f"{title}, {artist}, {when}", "identify an artwork and its date"
        else:
            q = deck(kind, ["I saw a print of this on a poster. In which museum is the original, and who made it?",
                            "Which museum has the original of this artwork, and who is the artist?",
                            "Where does the original of this picture hang, and who created it?",
                            "I'd like to see this in person - which collection owns it, and who's the artist?"])
            ans, sub = f"{title} by {artist}; held by {museum}", "identify an artwork and where it hangs"
        steps = [st("Reverse image search the artwork; crop away the poster frame first.", "image_search",
                    "image_1 (cropped to the picture area)", f"Matches: '{title}' - {artist} (many results), "
                    "plus parodies and reproductions"),
                 st("Confirm title, artist, date and holding institution from a reference page.", "wikipedia",
                    title, f"{title}, {artist}, {when}. Collection: {museum}.")]
        if "version" in when or "impressions" in museum:
            steps.append(st("The work exists in several versions/impressions; state which one is meant.",
                            "web_search", f"{title} versions which museum",
                            f"Multiple versions exist; the best-known is in {museum.split(' (')[0]}."))
        elif kind != "title_year":
            steps.append(st("Check the holding museum's own collection page (works move or go on loan).",
                            "browse_webpage", f"{museum} - online collection: {title}",
                            f"Object record: {title}, {artist}, {when}; on permanent display."))
        reas = ("Reverse image search on the cropped picture immediately pointed to the work, but results mix "
                "parodies and reproductions, so title, date and location were confirmed on a reference page. For "
                "works with several versions or print impressions the answer names which one is meant.")
        good.append(tr(q, sub, steps, reas, ans, images=1, caption=cap))
    bad.append(tr("Where is the original of this painting displayed?", "identify an artwork and where it hangs",
                  [st("Reverse image search.", "image_search", "image_1", "Matches: 'The Scream' - Edvard Munch"),
                   st("Search museum.", "web_search", "The Scream museum", "Munch Museum, Oslo (snippet)")],
                  "Found the painting and took the museum from the search snippet.", "The Munch Museum, Oslo",
                  images=1, caption="A figure holding its head on a bridge under a red sky, painted in tempera and "
                                    "oil on cardboard."))
    queries.append(qy("Who is the painter of this one and which gallery owns it?", "recognise a painting", images=1,
                      caption="A late-night diner seen through a large window on an empty street corner; three "
                              "customers and a server in white."))
    queries.append(qy("whats the name of this painting w/ all the tiny dots, people in a park by the river?",
                      "name a painting", images=1))
    queries.append(qy("这幅画是谁画的？原作现在收藏在哪里？", "识别画作的作者和收藏地", images=1, lang="zh",
                      caption="一名女子一手举着三色旗、一手持带刺刀的步枪，带领人群越过街垒，地上有倒下的人。"))
    queries.append(qy("Can you identify this for me?", "identify an artwork", images=1, caption_only=True,
                      caption="Photo of a triptych crowded with tiny nude figures, fantastical creatures and giant "
                              "fruit; the user asks for the artist and the museum where it hangs."))
    queries.append(qy("Got a fridge magnet of this painting of water lilies on a pond - who painted it and roughly "
                      "when?", "identify a famous painting and its date", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 7. product price comparison
# ----------------------------------------------------------------------------------------------------------------
PRODUCTS = [("Sony WH-1000XM5 headphones", 399), ("Kindle Paperwhite (16 GB)", 150), ("Nintendo Switch OLED", 350),
            ("Logitech MX Master 3S mouse", 100), ("Samsung T7 1TB portable SSD", 110),
            ("Instant Pot Duo 6-quart", 100), ("LEGO Titanic set 10294", 680), ("Garmin Forerunner 265", 450),
            ("Anker 737 power bank", 110), ("De'Longhi Dedica EC685 espresso machine", 250),
            ("Philips Hue White and Color starter kit", 200)]
REGIONS = {"US": ("$", ["Amazon", "Best Buy", "Walmart", "Target", "B&H Photo", "Newegg"], "Chicago"),
           "UK": ("£", ["Amazon UK", "Currys", "Argos", "John Lewis", "Very"], "Manchester"),
           "DE": ("€", ["Amazon.de", "MediaMarkt", "Saturn", "Otto", "Cyberport"], "Köln")}
CATCHES = ["a renewed (refurbished) listing", "a member-only price", "a marketplace seller shipping from abroad in "
           "3-4 weeks", "a bundle without the charger", "an out-of-stock listing"]


@family("price-comparison", "product", "jpg")
def fam_price(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for i, (prod, base) in enumerate(PRODUCTS):
        reg = ["US", "UK", "DE"][i % 3]
        cur, stores, city = REGIONS[reg]
        sel = pick(rng, stores, 3)
        while True:
            offers = []
            for s in sel:
                p = round(base * rng.uniform(0.82, 1.04)) - 0.01
                ship = pick(rng, [0.0, 0.0, 4.99, 6.99, 9.99])
                offers.append((s, p, ship))
            if len({round(p + sh, 2) for _, p, sh in offers}) == len(offers):
                break
        catch = pick(rng, CATCHES)
        trap = (pick(rng, ["eBay", "a marketplace seller"]), round(min(o[1] for o in offers) * 0.9) - 0.01)
        tot = [(s, round(p + sh, 2)) for s, p, sh in offers]
        best = min(tot, key=lambda x: x[1])
        with_img = i % 3 == 1
        t = pick(rng, [f"Where is the {prod} cheapest right now among {sel[0]}, {sel[1]} and {sel[2]}, shipping "
                       "included?",
                       f"Compare the price of the {prod} at {', '.join(sel)} with delivery to {city}. Which is the "
                       "best deal?",
                       f"I want to buy a new {prod}. Which of {', '.join(sel)} gives the lowest total cost?"])
        q = deck("img", ["I'd like to buy the product in this photo. Which shop has it cheapest, delivery included?",
                         f"Where can I order the item in the picture for the lowest total price ({city} delivery)?",
                         "Saw this gadget at a friend's place (photo attached). Which online store sells it "
                         "cheapest?",
                         f"Find the best price for the product shown, comparing {', '.join(sel)}."]) if with_img else t
        steps = []
        if with_img:
            steps.append(st("Identify the exact model first - similar models differ a lot in price.", "image_search",
                            "image_1 (product photo)", f"Matches: {prod} (box and logo visible)"))
        steps.append(st("Get current listings for the exact model.", "web_search", f"{prod} price {reg}",
                        "; ".join(f"{s} {money(p, cur)}" for s, p, _ in offers)
                        + f"; {trap[0]} {money(trap[1], cur)} ({catch})"))
        steps.append(st(f"Open the store pages to get delivery cost to {city} and check condition/seller.",
                        "browse_webpage", " | ".join(f"{s} product page" for s in sel),
                        "; ".join(f"{s}: new, sold by {s}, delivery {money(sh, cur) if sh else 'free'}"
                                  for s, _, sh in offers)))
        steps.append(st("Add delivery to each new, first-party offer and compare.", "calculator",
                        "; ".join(f"{fmt(p)} + {fmt(sh)}" for _, p, sh in offers),
                        "; ".join(f"{s}: {money(v, cur)}" for s, v in tot)))
        if i % 2 == 0:
            steps.append(st(f"Before recommending {best[0]}, check for coupons or price-match offers that could "
                            "change the ranking.", "web_search", f"{prod} coupon code {' '.join(sel)}",
                            "No public coupon codes for this model; price-match only against the retailers' own "
                            "listings"))
        ans = (f"{best[0]} at {money(best[1], cur)} including delivery (" +
               ", ".join(f"{s} {money(v, cur)}" for s, v in tot if s != best[0]) + ")")
        reas = (f"Compared like for like: the exact model, new condition, sold by the retailer, with delivery to "
                f"{city} added. The cheapest headline price in the search results was {catch} and was excluded. "
                "Prices were taken from the product pages, not the search snippets, since snippets are often stale.")
        good.append(tr(q, "compare product prices across online stores", steps, reas, ans,
                       images=1 if with_img else 0,
                       caption=f"Product photo of the {prod} in its retail box." if with_img else None))
    cur, stores, city = REGIONS["US"]
    bad.append(tr("Which store has the Kindle Paperwhite (16 GB) cheapest right now?",
                  "compare product prices across online stores",
                  [st("Search prices.", "web_search", "Kindle Paperwhite 16GB price",
                      "Amazon $149.99; Best Buy $139.99; eBay $96.00 (renewed)"),
                   st("Pick the lowest.", "calculator", "min(149.99, 139.99, 96.00)", "96.00")],
                  "Chose the lowest listed price.", "eBay at $96.00"))
    queries.append(qy("Where can I get Bose QuietComfort Ultra Earbuds for the least money in the US, counting "
                      "shipping?", "find the cheapest retailer for a gadget"))
    queries.append(qy("is the kobo clara 2e cheaper at fnac or amazon.fr rn? incl delivery pls", "compare two shops"))
    queries.append(qy("我想买照片里这款吸尘器，哪家网店含运费最便宜？", "比较不同网店的价格", images=1, lang="zh",
                      caption="一台戴森V15 Detect无线吸尘器的产品照片，带激光吸头。"))
    queries.append(qy("Find me the best deal.", "price comparison", images=1, caption_only=True,
                      caption="Screenshot of a shopping list with 'AirPods Pro (2nd generation) - check Currys, "
                              "Argos, John Lewis, delivery to Leeds' circled."))
    queries.append(qy("Before I order an Instax Mini 12 camera, which of Target, Walmart or B&H works out "
                      "cheapest once delivery is added?", "compare total prices including delivery"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 8. recipe unit conversion / scaling
# ----------------------------------------------------------------------------------------------------------------
CUP = {"all-purpose flour": (120, "g"), "granulated sugar": (198, "g"), "brown sugar (packed)": (213, "g"),
       "butter": (227, "g"), "rolled oats": (89, "g"), "honey": (336, "g"), "cocoa powder": (84, "g"),
       "whole milk": (240, "ml"), "water": (240, "ml"), "vegetable oil": (240, "ml"), "chocolate chips": (170, "g"),
       "powdered sugar": (113, "g")}
RECIPES = [("banana bread", ["all-purpose flour", "granulated sugar", "butter"], 8, 350),
           ("chocolate chip cookies", ["all-purpose flour", "brown sugar (packed)", "chocolate chips"], 24, 375),
           ("brownies", ["cocoa powder", "granulated sugar", "butter"], 16, 350),
           ("pancakes", ["all-purpose flour", "whole milk", "granulated sugar"], 4, None),
           ("oatmeal cookies", ["rolled oats", "all-purpose flour", "brown sugar (packed)"], 18, 350),
           ("cornbread", ["all-purpose flour", "whole milk", "vegetable oil"], 9, 400),
           ("honey cake", ["honey", "all-purpose flour", "vegetable oil"], 12, 325),
           ("scones", ["all-purpose flour", "butter", "whole milk"], 8, 425),
           ("crêpes", ["all-purpose flour", "whole milk", "water"], 6, None),
           ("lemon drizzle cake", ["all-purpose flour", "granulated sugar", "powdered sugar"], 10, 350)]


def frac(x: float) -> str:
    """1.25 -> '1 1/4', 0.333 -> '1/3', 2.0 -> '2'."""
    whole = int(x + 1e-9)
    rest = x - whole
    parts = {0: "", 1 / 4: "1/4", 1 / 3: "1/3", 1 / 2: "1/2", 2 / 3: "2/3", 3 / 4: "3/4"}
    best = min(parts, key=lambda p: abs(p - rest))
    if abs(best - rest) > 0.02:
        return fmt(x)
    if not parts[best]:
        return str(whole)
    return f"{whole} {parts[best]}" if whole else parts[best]


def f_to_c(f: float) -> float:
    return (f - 32) * 5 / 9


@family("recipe-conversion", "recipe", "jpg")
def fam_recipe(rng):
    good, bad, queries = [], [], []
    for i, (name, ingr, serves, oven) in enumerate(RECIPES):
        amounts = [pick(rng, [0.25, 0.5, 0.75, 1, 1.5, 2, 2.25, 2.5, 3]) for _ in ingr]
        factor = pick(rng, [0.5, 1.5, 2, 2.5, 3])
        new_serves = serves * factor
        scaled = [a * factor for a in amounts]
        lines = "; ".join(f"{frac(a)} cup{'s' if a > 1 else ''} {n}" for a, n in zip(amounts, ingr, strict=True))
        conv = []
        for a, n in zip(scaled, ingr, strict=True):
            per, unit = CUP[n]
            conv.append((n, a, round(a * per / 5) * 5 if unit == "g" else round(a * per), unit))
        with_img = i % 3 == 0
        if with_img:
            q = (f"Here's a photo of a handwritten {name} recipe card (serves {serves}). Please scale it to "
                 f"{fmt(new_serves)} servings and give me the amounts in grams/ml"
                 + (" and the oven temperature in Celsius." if oven else "."))
        else:
            q = pick(rng, [f"My {name} recipe serves {serves} and uses {lines}. I need {fmt(new_serves)} servings - "
                           "what are the metric amounts?",
                           f"Convert this US {name} recipe to metric and multiply it by {fmt(factor)}: {lines}."
                           + (f" Oven at {oven}°F." if oven else ""),
                           f"Scale {lines} (a {name} recipe for {serves}) to feed {fmt(new_serves)}, in grams or "
                           "millilitres."])
        steps = []
        if with_img:
            steps.append(st("Read the ingredient list from the card.", "ocr", "image_1 (handwritten recipe card)",
                            f"{name.title()} - serves {serves}: {lines}" + (f"; bake at {oven}F" if oven else "")))
        steps.append(st(f"Scale every amount by {fmt(new_serves)}/{serves} = {fmt(factor)} before converting.",
                        "calculator", "; ".join(f"{fmt(a, 3)} * {fmt(factor)}" for a in amounts),
                        "; ".join(f"{fmt(a, 3)} cups" for a in scaled)))
        steps.append(st("Convert cups by ingredient density (a cup of flour is not a cup of sugar).",
                        "unit_converter", "; ".join(f"{fmt(a, 3)} US cup {n} -> {u}" for n, a, _, u in conv),
                        "; ".join(f"{n}: {fmt(a * CUP[n][0], 1)} {u}" for n, a, _, u in conv)))
        if oven:
            c = f_to_c(oven)
            steps.append(st("Convert the oven temperature.", "unit_converter", f"{oven} °F -> °C", f"{fmt(c, 1)} °C"))
        ans = "; ".join(f"{n}: {g} {u}" for n, _, g, u in conv)
        if with_img or factor > 2:
            steps.append(st("Round to amounts a kitchen scale / jug can measure.", "python",
                            "round(g / 5) * 5 for grams; round(ml) for liquids",
                            "; ".join(f"{n}: {g} {u}" for n, _, g, u in conv)))
        if oven:
            ans += f"; oven {round(f_to_c(oven) / 5) * 5} °C (fan oven about 20 °C lower)"
        reas = ("Scaled in cups first, then converted each ingredient with its own grams-per-cup figure "
                "(flour 120 g, sugar 198 g, butter 227 g per US cup) instead of a single volume factor; liquids were "
                "converted to millilitres (1 US cup = 240 ml). Results were rounded to practical kitchen amounts"
                + (" and the Fahrenheit oven setting was converted with (F - 32) x 5/9, rounded to the nearest 5 °C."
                   if oven else "."))
        good.append(tr(q, "convert and scale recipe quantities", steps, reas, ans, images=1 if with_img else 0,
                       caption=(f"A handwritten recipe card titled '{name.title()}' listing ingredients in cups"
                                + (f" and '{oven}F'." if oven else ".")) if with_img else None))
    bad.append(tr("How many grams is 2 1/2 cups of granulated sugar?", "convert recipe quantities",
                  [st("Convert cups to millilitres.", "unit_converter", "2.5 US cup -> ml", "591.5 ml"),
                   st("Assume 1 ml = 1 g.", "calculator", "591.5 * 1", "591.5")],
                  "Converted volume to millilitres and treated it as grams.", "About 590 g"))
    queries.append(qy("Need my mum's muffin recipe (makes 12) for 30 people. It says 2 cups flour, 3/4 cup sugar, "
                      "1 cup milk. Metric please!", "scale a recipe and convert to metric"))
    queries.append(qy("how many grams is 1 1/3 cups of cocoa?? and 3/4 cup honey", "cups to grams for baking"))
    queries.append(qy("这张食谱照片是美制单位，帮我把用量换算成克和毫升，并把烤箱温度换成摄氏度。", "换算食谱单位",
                      images=1, lang="zh", caption="食谱卡片：燕麦饼干，2杯燕麦、1杯红糖、1/2杯黄油，烤箱350F。"))
    queries.append(qy("Please convert this.", "recipe conversion", images=1, caption_only=True,
                      caption="Photo of a cookbook page: 'Pizza dough - 3 1/2 cups flour, 1 1/4 cups warm water, "
                              "2 tbsp olive oil; bake at 475F'. A note says 'metric, half batch'."))
    queries.append(qy("What is 425 degrees Fahrenheit in Celsius for my oven, and how much is 1.5 cups of "
                      "powdered sugar in grams?", "convert baking units"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 9. currency conversion on a date
# ----------------------------------------------------------------------------------------------------------------
USD_PER = {"EUR": 1.09, "GBP": 1.26, "JPY": 0.0071, "CHF": 1.11, "CNY": 0.14, "SEK": 0.095, "CAD": 0.74,
           "AUD": 0.67, "INR": 0.0121, "KRW": 0.00076, "BRL": 0.2, "MXN": 0.056, "THB": 0.0285, "PLN": 0.245,
           "NOK": 0.094, "SGD": 0.74, "HKD": 0.128, "CZK": 0.044, "ZAR": 0.054, "DKK": 0.146, "USD": 1.0}
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _rate_per_eur(rng, cur):
    if cur == "EUR":
        return 1.0
    r = USD_PER["EUR"] / USD_PER[cur] * rng.uniform(0.96, 1.04)
    return round(r, 4 if r < 10 else 2)


def _longdate(d: date) -> str:
    return f"{d.day} {d.strftime('%B')} {d.year}"


@family("currency-conversion", "invoice", "jpg")
def fam_currency(rng):
    good, bad, queries = [], [], []
    pairs = [("EUR", "JPY"), ("GBP", "USD"), ("SEK", "GBP"), ("USD", "CHF"), ("CNY", "EUR"), ("AUD", "CAD"),
             ("EUR", "PLN"), ("INR", "USD"), ("KRW", "EUR"), ("BRL", "USD"), ("THB", "EUR")]
    for i, (a, b) in enumerate(pairs):
        d = date(2019, 1, 1) + timedelta(days=rng.randint(0, 5 * 365))
        if i % 4 == 2:
            while d.weekday() < 5:
                d += timedelta(days=1)
        fix = d
        while fix.weekday() >= 5:
            fix -= timedelta(days=1)
        amt = pick(rng, [45, 120, 250, 1890, 3500, 72.5, 640, 15000, 980])
        if a in ("KRW", "INR", "JPY"):
            amt *= 100
        ra, rb = _rate_per_eur(rng, a), _rate_per_eur(rng, b)
        res = amt / ra * rb
        cross = rb / ra
        with_img = i % 4 == 1
        if with_img:
            q = (f"This invoice is in {a}. What is the total in {b} at the reference rate on the invoice date?")
        else:
            q = pick(rng, [f"How much was {fmt(amt)} {a} worth in {b} on {d.isoformat()}?",
                           f"I was charged {fmt(amt)} {a} on {_longdate(d)}. What was that in {b} at that day's "
                           "ECB reference rate?",
                           f"Convert {fmt(amt)} {a} to {b} using the exchange rate of {_longdate(d)}."])
        steps = []
        if with_img:
            steps.append(st("Read amount, currency and date from the invoice.", "ocr", "image_1 (invoice)",
                            f"Invoice date {d.strftime('%d.%m.%Y')}; Total {fmt(amt)} {a} (incl. VAT)"))
        if fix != d:
            steps.append(st(f"{_longdate(d)} is a {WEEKDAYS[d.weekday()]}; there is no fixing on weekends.",
                            "web_search", f"ECB reference rate {a} {b} {d.isoformat()}",
                            f"No reference rates published on {d.isoformat()} (weekend). Last fixing: "
                            f"{fix.isoformat()} ({WEEKDAYS[fix.weekday()]})."))
        legs = [c for c in (a, b) if c != "EUR"]
        steps.append(st("The ECB publishes rates against the euro; get both legs for the same fixing date."
                        if len(legs) == 2 else "Get the ECB euro reference rate for the fixing date.",
                        "browse_webpage", f"ECB euro foreign exchange reference rates, {fix.isoformat()}",
                        "; ".join(f"1 EUR = {fmt(ra if c == a else rb, 4)} {c}" for c in legs)))
        expr = (f"{fmt(amt)} / {fmt(ra, 4)} * {fmt(rb, 4)}" if len(legs) == 2 else
                f"{fmt(amt)} * {fmt(rb, 4)}" if a == "EUR" else f"{fmt(amt)} / {fmt(ra, 4)}")
        steps.append(st("Convert via the euro cross rate; keep the direction straight (divide by the rate of the "
                        "source currency).", "calculator", expr, fmt(res, 2)))
        ans = (f"About {fmt(res, 2)} {b} (1 {a} = {fmt(cross, 6 if cross < 0.01 else 4)} {b}, ECB reference rate "
               f"of {fix.isoformat()})")
        reas = ("Used the historical reference rate for the stated date rather than today's rate" +
                (", falling back to the previous business day's fixing because the date was a weekend" if fix != d
                 else "") + (". Because the ECB quotes everything per euro, the cross rate was built from two legs "
                             "of the same fixing" if len(legs) == 2 else ". The ECB quotes rates per euro") +
                ", and the direction was checked (divide by the per-euro rate of the source currency, multiply by "
                "that of the target). The answer states the rate and date used so it can be audited.")
        good.append(tr(q, "convert currency at a historical exchange rate", steps, reas, ans,
                       images=1 if with_img else 0,
                       caption=f"A scanned invoice with a total in {a} and an invoice date." if with_img else None))
    ra = _rate_per_eur(rng, "GBP")
    bad.append(tr("What was 500 EUR in GBP on 2021-06-15?", "convert currency at a historical exchange rate",
                  [st("Get the rate.", "web_search", "EUR GBP rate", f"1 EUR = {fmt(ra * 0.97, 4)} GBP (live)"),
                   st("Convert.", "calculator", f"500 / {fmt(ra * 0.97, 4)}", fmt(500 / (ra * 0.97), 2))],
                  "Looked up the rate and converted.", f"{fmt(500 / (ra * 0.97), 2)} GBP"))
    queries.append(qy("Back on 3 March 2022 I paid 2,400 Norwegian kroner for a cabin. Roughly how many US "
                      "dollars was that at the time?", "historical FX conversion"))
    queries.append(qy("quick one: 15k yen -> euros on sat 14 oct 2023?", "convert money using a past rate"))
    queries.append(qy("2021年8月20日的汇率下，3000港币相当于多少人民币？", "按历史汇率换算货币", lang="zh"))
    queries.append(qy("What does this come to in my currency?", "currency conversion", images=1, caption_only=True,
                      caption="Photo of a hotel bill from Prague dated 11.09.2020, total 8 450 CZK; a sticky note "
                              "says 'in Danish kroner please'."))
    queries.append(qy("My Singapore client paid an invoice of SGD 6,300 on 30 November 2023; how much is that "
                      "in Swiss francs at that day's reference rate?", "convert an invoice amount at the rate on "
                      "its date"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 10. train / flight timetable lookup
# ----------------------------------------------------------------------------------------------------------------
ROUTES = [
    # origin, destination, operator, duration (min), first dep (min after midnight), interval, time-zone shift (h)
    ("Zürich HB", "Milano Centrale", "SBB/Trenitalia EuroCity", 197, 6 * 60 + 33, 120, 0),
    ("Paris Gare de Lyon", "Lyon Part-Dieu", "SNCF TGV INOUI", 117, 6 * 60 + 4, 60, 0),
    ("Tokyo", "Kyoto", "JR Central Nozomi", 135, 6 * 60, 20, 0),
    ("London King's Cross", "Edinburgh Waverley", "LNER", 260, 6 * 60 + 30, 60, 0),
    ("Amsterdam Centraal", "Berlin Hbf", "NS/DB InterCity", 370, 6 * 60 + 4, 120, 0),
    ("Madrid Puerta de Atocha", "Barcelona Sants", "Renfe AVE", 150, 6 * 60 + 30, 60, 0),
    ("Wien Hbf", "Budapest-Keleti", "ÖBB Railjet", 160, 6 * 60 + 10, 120, 0),
    ("Frankfurt (Main) Hbf", "München Hbf", "DB ICE", 190, 5 * 60 + 50, 60, 0),
    ("New York Penn Station", "Washington Union Station", "Amtrak Acela", 175, 5 * 60 + 30, 60, 0),
    ("Beijing South", "Shanghai Hongqiao", "China Railway G-train", 268, 7 * 60, 30, 0),
    ("Helsinki (HEL)", "Stockholm Arlanda (ARN)", "Finnair", 60, 7 * 60 + 25, 150, -1),
]


def hm(m: int) -> str:
    return f"{(m // 60) % 24:02d}:{m % 60:02d}"


@family("timetable-lookup", "timetable", "png")
def fam_timetable(rng):
    good, bad, queries = [], [], []
    for i, (orig, dest, op, dur, first, step, tz) in enumerate(ROUTES):
        d = date(2024, 1, 8) + timedelta(days=rng.randint(0, 300))
        sunday = i % 4 == 3
        if sunday:
            while d.weekday() != 6:
                d += timedelta(days=1)
        elif d.weekday() >= 5:
            d -= timedelta(days=2)
        start = first + (90 if sunday else 0)
        deps = []
        m = start
        while m < 21 * 60:
            direct = rng.random() > 0.25
            deps.append((m, m + dur + (0 if direct else rng.choice([25, 40])) + tz * 60, direct))
            m += step + rng.choice([0, 0, 5, -5])
        kind = ["arrive_by", "first_after", "count"][i % 3]
        shown = [x for x in deps if x[0] < 12 * 60 + 30] or deps[:8]
        listing = "; ".join(f"{hm(a)} -> {hm(b)}{'' if dr else ' (1 change)'}" for a, b, dr in shown)
        flight = orig.endswith(")")
        mode = "flight" if flight else "train"
        if kind == "arrive_by":
            target = deps[min(len(deps) - 1, 4)][1] + rng.choice([5, 15, 20])
            ok = [x for x in deps if x[2] and x[1] <= target]
            best = ok[-1]
            q = pick(rng, [f"I need to be in {dest} by {hm(target)} on {WEEKDAYS[d.weekday()]} {d.isoformat()}. "
                           f"What's the latest direct {mode} from {orig} I can take?",
                           f"Which is the last direct {op} {mode} from {orig} that still gets to {dest} before "
                           f"{hm(target)} on {_longdate(d)}?"])
            ans = f"The {hm(best[0])} departure, arriving {hm(best[1])} (local time)"
            code = f"[d for d in deps if d.direct and d.arr <= '{hm(target)}'][-1]"
            obs = f"({hm(best[0])}, {hm(best[1])}, direct)"
        elif kind == "first_after":
            t0 = deps[2][0] + rng.choice([3, 10, 20])
            nxt = next(x for x in deps if x[0] >= t0 and x[2])
            q = pick(rng, [f"What's the first direct {mode} from {orig} to {dest} after {hm(t0)} on {d.isoformat()}, "
                           "and how long does it take?",
                           f"On {_longdate(d)}, when does the next direct {op} service leave {orig} for {dest} after "
                           f"{hm(t0)}, and when does it arrive?"])
            travel = nxt[1] - nxt[0] - tz * 60
            ans = (f"{hm(nxt[0])} from {orig}, arriving {hm(nxt[1])} local time ({travel // 60} h {travel % 60:02d} "
                   "min)")
            code = f"next(d for d in deps if d.dep >= '{hm(t0)}' and d.direct)"
            obs = f"({hm(nxt[0])}, {hm(nxt[1])}, direct), duration {travel} min"
        else:
            lo, hi = 8 * 60, 12 * 60
            n = sum(1 for x in deps if lo <= x[0] < hi and x[2])
            q = f"How many direct {mode}s are there from {orig} to {dest} between 08:00 and 12:00 on {d.isoformat()}?"
            ans = f"{n} direct departures between 08:00 and 12:00"
            code = "sum(1 for d in deps if '08:00' <= d.dep < '12:00' and d.direct)"
            obs = str(n)
        steps = [st("Find the operator's journey planner for the exact date (timetables differ by weekday).",
                    "web_search", f"{op} timetable {orig} to {dest} {d.isoformat()}",
                    f"Official journey planner of {op} found; {'Sunday' if sunday else 'weekday'} timetable applies."),
                 st("List all departures for that date, including whether they are direct.", "browse_webpage",
                    f"journey planner: {orig} -> {dest}, {d.isoformat()}, from 05:00",
                    f"Departures -> arrivals{' (arrival times local, 1 h behind)' if tz else ''}: {listing}"),
                 st("Filter in code so the arrival/departure and direct-only conditions are applied exactly.",
                    "python", code, obs)]
        if kind == "arrive_by":
            steps.append(st("Check the margin: a delay on a tight connection would make the traveller late.",
                            "calculator", f"{hm(target)} - {hm(best[1])}", f"{target - best[1]} min"))
        reas = ("Used the operator's planner for the specific date, because Sunday and holiday timetables start "
                "later and have fewer direct services. The conditions were applied in code: direct services only, "
                "and for 'be there by' questions the constraint is on arrival, not departure." +
                (" Arrival times are in the destination's time zone (one hour behind), so the duration was computed "
                 "after correcting for the offset." if tz else ""))
        good.append(tr(q, f"look up a {mode} timetable", steps, reas, ans))
    bad.append(tr("What's the latest direct train from Paris Gare de Lyon that gets to Lyon Part-Dieu by 12:00 on "
                  "Sunday 14 April 2024?", "look up a train timetable",
                  [st("Search timetable.", "web_search", "TGV Paris Lyon timetable",
                      "Weekday timetable: 09:04, 10:04 -> 12:01, 11:04"),
                   st("Pick a train departing before 12:00 minus two hours.", "calculator", "12:00 - 1:57", "10:03")],
                  "Subtracted the journey time from the deadline and chose the nearest departure.",
                  "The 10:04 departure"))
    queries.append(qy("Which KTX leaves Seoul latest but still gets me into Busan before 14:30 on Friday 7 June "
                      "2024? Direct only.", "find a train that arrives before a deadline"))
    queries.append(qy("eurostar brussels -> london on sunday 22 sept 2024, first one after 10am? what time does "
                      "it get in (london time)?", "next departure and arrival time across time zones"))
    queries.append(qy("2024年5月15日上午9点以后，哥本哈根到汉堡的第一班直达火车是几点？几点到？", "查询火车时刻表",
                      lang="zh"))
    queries.append(qy("Can you check this for me?", "timetable question", images=1, caption_only=True,
                      caption="Screenshot of a chat: 'How many direct Frecciarossa trains go from Milano Centrale "
                              "to Roma Termini between 7 and 10 in the morning on Tuesday 9 July 2024?'"))
    queries.append(qy("Osaka to Hiroshima by shinkansen on 3 March 2024: what's the last Nozomi I can catch to "
                      "arrive before 19:00?", "latest train meeting an arrival deadline"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 11. math word problems
# ----------------------------------------------------------------------------------------------------------------
def _wp(rng, kind):
    if kind == "pipes":
        a, b = pick(rng, [(3, 6), (4, 12), (6, 9), (5, 20), (10, 15), (8, 24)])
        r = a * b / (a + b)
        q = pick(rng, [f"A tap fills a tank in {a} hours and a second tap fills it in {b} hours. How long do they "
                       "take together?",
                       f"Pipe A can fill a pool in {a} h, pipe B in {b} h. Both are opened at once - how long until "
                       "the pool is full?"])
        code = f"1 / (1/{a} + 1/{b})"
        return q, code, f"{fmt(r)} hours", "add rates, not times", "work-rate"
    if kind == "trains":
        d, v1, v2 = pick(rng, [300, 420, 540, 600]), pick(rng, [60, 80, 90]), pick(rng, [100, 120, 150])
        t = d / (v1 + v2)
        q = (f"Two trains start {d} km apart and travel toward each other at {v1} km/h and {v2} km/h. After how "
             "long do they meet, and how far has the slower one travelled?")
        code = f"t = {d} / ({v1} + {v2}); (t, {v1} * t)"
        return q, code, f"after {fmt(t)} h; the slower train has covered {fmt(v1 * t)} km", \
            "closing speed is the sum of speeds", "relative motion"
    if kind == "discount":
        p, x, y = pick(rng, [80, 120, 249, 360, 75]), pick(rng, [10, 20, 25, 30]), pick(rng, [10, 15, 20])
        final = p * (1 - x / 100) * (1 - y / 100)
        q = pick(rng, [f"A jacket costs ${p}. It's reduced by {x}% and then a further {y}% at checkout. What do I "
                       "pay, and what is the total discount in percent?",
                       f"A shop takes {x}% off a ${p} item, then another {y}% off the reduced price. Final price?"])
        code = f"f = {p} * (1 - {x}/100) * (1 - {y}/100); (f, 100 * (1 - f/{p}))"
        return q, code, f"${fmt(final)} (total discount {fmt(100 * (1 - final / p), 1)}%, not {x + y}%)", \
            "successive discounts multiply", "percentages"
    if kind == "interest":
        p, r, n = pick(rng, [1000, 2500, 5000, 12000]), pick(rng, [2, 3.5, 4, 5]), pick(rng, [3, 5, 8, 10])
        amt = p * (1 + r / 100) ** n
        q = (f"If I invest ${p:,} at {fmt(r)}% interest compounded annually, how much will I have after {n} years?")
        code = f"{p} * (1 + {r}/100) ** {n}"
        return q, code, f"${fmt(amt)}", "compound, not simple interest", "compound interest"
    if kind == "avgspeed":
        v1, v2 = pick(rng, [(40, 60), (30, 70), (50, 75), (60, 90), (45, 55)])
        avg = 2 * v1 * v2 / (v1 + v2)
        q = pick(rng, [f"I drove to the coast at {v1} km/h and came back on the same road at {v2} km/h. What was my "
                       "average speed for the round trip?",
                       f"A car goes out at {v1} km/h and returns at {v2} km/h over the same distance. What is "
                       "its average speed overall?"])
        code = f"2 * {v1} * {v2} / ({v1} + {v2})"
        return q, code, f"{fmt(avg)} km/h (harmonic mean, not {fmt((v1 + v2) / 2)})", \
            "average speed is total distance over total time", "average speed"
    # mixture
    v1, c1, c2, target = pick(rng, [(2, 10, 40, 25), (3, 5, 20, 15), (4, 12, 30, 18), (5, 8, 20, 12)])
    x = v1 * (target - c1) / (c2 - target)
    q = (f"How many litres of a {c2}% salt solution must be added to {v1} L of a {c1}% solution to get a {target}% "
         "solution?")
    code = f"solve({c1}/100*{v1} + {c2}/100*x - {target}/100*({v1}+x), x)"
    return q, code, f"{fmt(x)} L", "balance the amount of solute", "mixtures"


@family("math-word-problem", "worksheet", "jpg")
def fam_math(rng):
    good, bad, queries = [], [], []
    kinds = ["pipes", "trains", "discount", "interest", "avgspeed", "mixture", "pipes", "discount", "avgspeed",
             "interest", "trains"]
    seen = set()
    deck = Deck(rng)
    for i, kind in enumerate(kinds):
        while True:
            q, code, ans, trap, topic = _wp(rng, kind)
            if q not in seen:
                seen.add(q)
                break
        with_img = i % 4 == 3
        steps = [st(f"Set up the model: {trap}.", "python", f"# sympy / plain arithmetic\n{code}",
                    ans.split(" (")[0].replace("$", "")),
                 st("Sanity-check with a quick estimate / substitution.", "calculator",
                    "plug the result back into the original conditions", "consistent")]
        if with_img:
            steps.insert(0, st("Read the problem text from the worksheet photo.", "ocr", "image_1", q))
        reas = (f"This is a {topic} problem; the key is that {trap}. The equation was written explicitly and solved "
                "in code rather than by intuition, then the answer was substituted back to check it satisfies the "
                "conditions. The common wrong shortcut (adding times/percentages or averaging speeds) was avoided.")
        photo_q = deck("img", ["Solve the word problem in the photo.", "Can you work out the exercise on this "
                               "worksheet?", "Please help with the homework question in the picture.",
                               f"How do I solve this {topic} problem from my textbook (photo)?"])
        good.append(tr(photo_q if with_img else q, f"solve a {topic} word problem",
                       steps, reas, ans, images=1 if with_img else 0,
                       caption=f"A photo of a maths worksheet: '{q}'" if with_img else None))
    bad.append(tr("I cycled to work at 12 km/h and back at 18 km/h. What was my average speed?",
                  "solve an average speed word problem",
                  [st("Average the two speeds.", "calculator", "(12 + 18) / 2", "15"),
                   st("Done.", "python", "print(15)", "15")],
                  "Took the mean of the two speeds.", "15 km/h"))
    bad.append(tr("A $200 coat is discounted 20% and then another 20%. What's the price?",
                  "solve a percentages word problem",
                  [st("Total discount is 40%.", "calculator", "200 * (1 - 0.40)", "120"),
                   st("Check.", "python", "200*0.6", "120.0")],
                  "Added the discounts.", "$120"))
    queries.append(qy("Hose 1 fills the paddling pool in 45 minutes, hose 2 takes 90 minutes. With both running, "
                      "how many minutes?", "combined work rate problem"))
    queries.append(qy("ok so sneakers were 140 bucks, 35% off then an extra 10% coupon on top. what do i actually "
                      "pay", "stacked discount calculation"))
    queries.append(qy("小明以每小时4公里的速度上山，再以每小时6公里的速度沿原路下山，全程平均速度是多少？",
                      "求往返平均速度", lang="zh"))
    queries.append(qy("Solve it.", "word problem", images=1, caption_only=True,
                      caption="Photo of a textbook exercise: 'Two cyclists start 90 km apart and ride towards each "
                              "other at 14 km/h and 16 km/h. When do they meet?'"))
    queries.append(qy("If my grandmother put 8,000 euros into a savings account paying 2.75% a year, compounded "
                      "yearly, what's it worth after 12 years?", "compound growth problem"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 12. geometry from a diagram
# ----------------------------------------------------------------------------------------------------------------
def _geo(rng, kind):
    if kind == "altitude":
        a, b = pick(rng, [(6, 8), (5, 12), (9, 12), (8, 15), (7, 24)])
        c = math.hypot(a, b)
        h = a * b / c
        return (f"Right triangle ABC with the right angle at C, AC = {a}, BC = {b}; a dashed altitude from C to AB "
                "is marked h.", "Find the length h of the altitude from C.", f"AB = hypot({a}, {b}); h = {a}*{b}/AB",
                f"h = {fmt(h)} (AB = {fmt(c)})", "the area can be written two ways: AC*BC/2 = AB*h/2")
    if kind == "sector":
        r, ang = pick(rng, [4, 5, 6, 9, 10]), pick(rng, [40, 60, 72, 120, 135])
        area = math.pi * r * r * ang / 360
        arc = 2 * math.pi * r * ang / 360
        return (f"A circle with centre O and radius {r} cm; a shaded sector with central angle {ang}°.",
                "What are the area of the shaded sector and the length of its arc?",
                f"area = pi*{r}**2*{ang}/360; arc = 2*pi*{r}*{ang}/360",
                f"area = {fmt(area)} cm^2, arc = {fmt(arc)} cm", "the angle is in degrees, so use the fraction "
                "angle/360 (or convert to radians)")
    if kind == "inscribed":
        x = pick(rng, [38, 52, 64, 70, 81])
        return (f"Points A, B, C on a circle with centre O; the central angle AOB is marked {2 * x}°, and angle ACB "
                "is marked x.", "Find x.", f"x = {2 * x} / 2", f"x = {x}°",
                "an inscribed angle is half the central angle on the same arc")
    if kind == "trapezoid":
        a, b, h = pick(rng, [8, 10, 12]), pick(rng, [14, 18, 20]), pick(rng, [5, 6, 7])
        return (f"Trapezoid with parallel sides {a} m and {b} m and a height of {h} m (dashed perpendicular).",
                "What is the area of the trapezoid?", f"({a} + {b}) / 2 * {h}", f"{fmt((a + b) / 2 * h)} m^2",
                "use the perpendicular height, not the slanted side")
    if kind == "cylinder":
        d, h = pick(rng, [6, 8, 10, 14]), pick(rng, [10, 12, 20])
        v = math.pi * (d / 2) ** 2 * h
        return (f"A cylinder drawn with a diameter of {d} cm across the top and height {h} cm.",
                "What is its volume in litres?", f"pi * ({d}/2)**2 * {h} / 1000",
                f"{fmt(v)} cm^3 = {fmt(v / 1000, 3)} L", "the label is the diameter, so halve it for the radius")
    if kind == "shadow":
        pole, shadow, bshadow = pick(rng, [1.5, 1.8, 2]), pick(rng, [1.2, 2.4, 3]), pick(rng, [18, 24, 30])
        hgt = pole * bshadow / shadow
        return (f"A person {pole} m tall casts a {shadow} m shadow; at the same time a tree casts a {bshadow} m "
                "shadow. Two similar right triangles are drawn.", "How tall is the tree?",
                f"{pole} * {bshadow} / {shadow}", f"{fmt(hgt)} m", "similar triangles: corresponding sides in "
                "the same ratio")
    n = pick(rng, [5, 6, 8, 9, 10, 12])
    return (f"A regular polygon with {n} sides, one interior angle marked with a question mark.",
            "Find the interior angle.", f"(n - 2) * 180 / n with n = {n}", f"{fmt((n - 2) * 180 / n)}°",
            "interior-angle sum is (n - 2) x 180°")


@family("geometry-diagram", "diagram", "png")
def fam_geometry(rng):
    good, bad, queries = [], [], []
    kinds = ["altitude", "sector", "inscribed", "trapezoid", "cylinder", "shadow", "polygon", "altitude", "sector",
             "cylinder", "shadow"]
    deck = Deck(rng)
    for kind in kinds:
        cap, ask, code, ans, key = _geo(rng, kind)
        q = deck(kind, [f"{ask} (see the diagram)", f"Using the figure attached: {ask[0].lower()}{ask[1:]}",
                        f"Geometry homework - {ask[0].lower()}{ask[1:]} The diagram has all the measurements.",
                        f"From the labelled drawing: {ask[0].lower()}{ask[1:]}"])
        steps = [st("Read the labelled measurements from the diagram; the drawing may not be to scale.", "ocr",
                    "image_1: all labels and marked values", cap),
                 st(f"Apply the right relation: {key}.", "python", code, ans),
                 st("Check units and plausibility against the picture.", "calculator", "sanity check", "plausible")]
        reas = (f"Measurements came from the labels (OCR), never from measuring the drawing, which is not to scale. "
                f"The governing fact was that {key}; computing in code and checking units (cm vs m, cm^3 vs L, "
                "degrees vs radians) avoided the usual slips.")
        good.append(tr(q, f"solve a geometry problem from a diagram ({kind})", steps, reas, ans, images=1,
                       caption=cap))
    bad.append(tr("Find the volume of the cylinder in the diagram, in cm^3.", "solve a geometry problem from a "
                  "diagram", [st("Read labels.", "ocr", "image_1", "cylinder, 10 cm across the top, height 12 cm"),
                              st("Volume.", "python", "pi * 10**2 * 12", "3769.91")],
                  "Used V = pi r^2 h with the labelled value.", "3769.91 cm^3", images=1,
                  caption="A cylinder with its diameter (10 cm) marked across the top and height 12 cm."))
    queries.append(qy("What is the hypotenuse and the height onto it in this right-angled triangle?",
                      "right triangle calculation from a figure", images=1,
                      caption="Right triangle PQR, right angle at R, legs PR = 20 and QR = 21, altitude from R "
                              "dashed."))
    queries.append(qy("pls help, need the angle x in the circle pic for hw. central angle is 110",
                      "circle angle from a diagram", images=1))
    queries.append(qy("图中梯形的上底6厘米、下底11厘米、高4厘米，面积是多少？", "根据图形求梯形面积", images=1,
                      lang="zh", caption="一个梯形，上底6 cm，下底11 cm，虚线标出的高为4 cm。"))
    queries.append(qy("Work this out from the sketch.", "geometry problem", images=1, caption_only=True,
                      caption="Sketch: a flagpole casts a 15 m shadow while a 1.6 m student casts a 2 m shadow; "
                              "'how tall is the flagpole?' written beside two similar triangles."))
    queries.append(qy("The drawing shows a pizza slice with a 50-degree angle cut from a 16 cm radius pizza. How "
                      "much area does the slice have?", "sector area from a drawing", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 13. handwritten equation (photo) -> solve
# ----------------------------------------------------------------------------------------------------------------
def poly(coefs: list[int], var: str = "x") -> str:
    """[2, -3, 1] -> '2x^2 - 3x + 1'."""
    deg = len(coefs) - 1
    out = []
    for k, c in enumerate(coefs):
        p = deg - k
        if c == 0:
            continue
        mag = abs(c)
        term = ("" if mag == 1 and p else str(mag)) + (var if p else "") + (f"^{p}" if p > 1 else "")
        out.append(("- " if c < 0 else "+ ") + term)
    s = " ".join(out)
    return s[2:] if s.startswith("+ ") else "-" + s[2:]


@family("handwritten-math", "handwriting", "jpg")
def fam_handwritten(rng):
    from fractions import Fraction as F
    good, bad, queries = [], [], []
    kinds = ["quadratic", "system", "integral", "derivative", "quadratic", "system", "integral", "derivative",
             "quadratic", "system"]
    deck = Deck(rng)
    for kind in kinds:
        if kind == "quadratic":
            r1, r2 = pick(rng, [-5, -4, -3, -2, -1, 1, 2, 3, 4, 6, 7], 2)
            a = pick(rng, [1, 2, 3])
            co = [a, -a * (r1 + r2), a * r1 * r2]
            eq = f"{poly(co)} = 0"
            garbled = eq.replace("^2", "2", 1)
            code = f"solve({poly(co).replace('^', '**')}, x)"
            ans = f"x = {min(r1, r2)} or x = {max(r1, r2)}"
            ask = deck(kind, ["Solve the equation in this photo of my notes.", "What are the solutions of the "
                              "quadratic I wrote on the board?", "Find x in the handwritten equation."])
            sub = "solve a handwritten quadratic equation"
            check = f"substituting {r1} and {r2} gives 0 and 0"
        elif kind == "system":
            x, y = rng.randint(-4, 6), rng.randint(-3, 7)
            a1, b1, a2, b2 = rng.randint(1, 5), rng.randint(-4, 4) or 1, rng.randint(1, 4), rng.randint(-5, 5) or -2
            if a1 * b2 - a2 * b1 == 0:
                b2 += 1
            e1 = f"{poly([a1, 0])} {'+' if b1 > 0 else '-'} {abs(b1) if abs(b1) != 1 else ''}y = {a1 * x + b1 * y}"
            e2 = f"{poly([a2, 0])} {'+' if b2 > 0 else '-'} {abs(b2) if abs(b2) != 1 else ''}y = {a2 * x + b2 * y}"
            eq = f"{e1}; {e2}"
            garbled = eq.replace("y", "v", 1)
            code = (f"linsolve([Eq({a1}*x + ({b1})*y, {a1 * x + b1 * y}), Eq({a2}*x + ({b2})*y, "
                    f"{a2 * x + b2 * y})], x, y)")
            ans = f"x = {x}, y = {y}"
            ask = deck(kind, ["Can you solve the system of equations I wrote down?", "Find x and y from the two "
                              "equations in my photo.", "Solve the simultaneous equations on this page."])
            sub = "solve a handwritten linear system"
            check = "both equations hold for the solution"
        elif kind == "integral":
            p, q, r = rng.randint(1, 6), rng.randint(-5, 5), rng.randint(-4, 8)
            lo, hi = pick(rng, [(0, 1), (0, 2), (1, 3), (-1, 2), (0, 3)])
            val = F(p, 3) * (hi ** 3 - lo ** 3) + F(q, 2) * (hi ** 2 - lo ** 2) + r * (hi - lo)
            eq = f"∫ from {lo} to {hi} of ({poly([p, q, r])}) dx"
            garbled = eq.replace("^2", "2", 1)
            code = f"integrate({poly([p, q, r]).replace('^', '**')}, (x, {lo}, {hi}))"
            ans = f"{val}" + (f" ≈ {fmt(float(val), 4)}" if val.denominator != 1 else "")
            ask = deck(kind, ["What's the value of the integral on this whiteboard photo?", "Evaluate the "
                              "definite integral in my handwritten notes.", "Compute the integral shown in the "
                              "picture."])
            sub = "evaluate a handwritten integral"
            check = "numerical quad() agrees to 1e-9"
        else:
            c3, c2, c1 = rng.randint(1, 3), rng.randint(-6, 6), rng.randint(-9, 9)
            k = rng.randint(-2, 4)
            val = 3 * c3 * k * k + 2 * c2 * k + c1
            eq = f"f(x) = {poly([c3, c2, c1, 0])}; find f'({k})"
            garbled = eq.replace("^3", "3", 1)
            code = f"diff({poly([c3, c2, c1, 0]).replace('^', '**')}, x).subs(x, {k})"
            ans = f"f'({k}) = {val}"
            ask = deck(kind, ["Please evaluate the derivative asked for in the picture.", "What is the derivative "
                              "value requested in my notes?", "Differentiate the function on the page and evaluate "
                              "it where indicated."])
            sub = "evaluate a handwritten derivative"
            check = "finite difference (f(k+h)-f(k-h))/2h with h=1e-5 matches"
        steps = [st("Transcribe the handwriting.", "ocr", "image_1 (handwriting mode)", f"raw: '{garbled}'"),
                 st("The transcript looks off (superscripts and similar-looking letters are often lost); re-read a "
                    "zoomed crop of the suspicious part.", "image_crop", "image_1: zoom on the exponent / variable",
                    f"Confirmed: '{eq}'"),
                 st("Solve symbolically.", "python", code, ans),
                 st("Verify independently.", "python", "check by substitution / numerics", check)]
        reas = ("Handwriting OCR tends to drop superscripts (x² -> x2) and confuse y/v, 5/s or - and ~, so the raw "
                "transcript was checked against a zoomed crop before solving. The problem was then solved with a "
                "CAS (sympy) and verified independently instead of trusting one computation.")
        good.append(tr(ask, sub, steps, reas, ans, images=1, caption=f"Handwritten on paper: {eq}"))
    bad.append(tr("Solve what's written in the photo.", "solve a handwritten quadratic equation",
                  [st("Transcribe.", "ocr", "image_1", "raw: 'x2 - 5x + 6 = 0'"),
                   st("Solve as written.", "python", "solve(x*2 - 5*x + 6, x)", "[2]")],
                  "Solved the transcribed equation.", "x = 2", images=1,
                  caption="Handwritten: x^2 - 5x + 6 = 0"))
    queries.append(qy("Can you find the roots of the equation on my whiteboard?", "roots of a handwritten "
                      "quadratic", images=1, caption="Whiteboard photo with '3x^2 + 3x - 18 = 0' in blue marker."))
    queries.append(qy("my kid's homework pic - 2 equations 2 unknowns, what are x and y?", "solve a simultaneous "
                      "system from a photo", images=1))
    queries.append(qy("照片里手写的定积分等于多少？", "计算手写的定积分", images=1, lang="zh",
                      caption="纸上手写：∫ 从1到2 (4x^3 - x) dx"))
    queries.append(qy("Answer this.", "handwritten calculus", images=1, caption_only=True,
                      caption="A notebook page with g(t) = t^4 - 2t^2 + 7t handwritten and \"g'(2) = ?\" "
                              "underlined."))
    queries.append(qy("I scribbled an equation on a napkin, can you solve it? The photo's blurry around the "
                      "exponent.", "solve an equation from a blurry handwritten photo", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 14. code bug fixing
# ----------------------------------------------------------------------------------------------------------------
BUGS = [
    ("Python", "should return the last n items of a list but returns one too many",
     "def last_n(xs, n):\n    return xs[len(xs) - n - 1:]", "last_n([1, 2, 3, 4], 2) -> [2, 3, 4]",
     "def last_n(xs, n):\n    return xs[len(xs) - n:] if n > 0 else []",
     "off-by-one in the slice start; also guard n == 0 (xs[-0:] would return the whole list)"),
    ("Python", "keeps remembering tags from previous calls",
     "def add_tag(tag, tags=[]):\n    tags.append(tag)\n    return tags",
     "add_tag('a') -> ['a']; add_tag('b') -> ['a', 'b']",
     "def add_tag(tag, tags=None):\n    tags = [] if tags is None else tags\n    tags.append(tag)\n    return tags",
     "mutable default argument is created once at definition time"),
    ("Python", "builds a list of callbacks but every callback returns 2",
     "callbacks = [lambda: i for i in range(3)]", "[f() for f in callbacks] -> [2, 2, 2]",
     "callbacks = [lambda i=i: i for i in range(3)]", "closures bind the variable late; bind the value as a default"),
    ("Python", "should remove even numbers but leaves some behind",
     "def drop_even(nums):\n    for x in nums:\n        if x % 2 == 0:\n            nums.remove(x)\n    return nums",
     "drop_even([2, 4, 5, 6]) -> [4, 5]", "def drop_even(nums):\n    return [x for x in nums if x % 2 != 0]",
     "removing from a list while iterating over it skips elements"),
    ("Python", "prints None instead of the sorted names",
     "names = ['bo', 'al', 'cy']\nsorted_names = names.sort()\nprint(sorted_names)", "None",
     "names = ['bo', 'al', 'cy']\nsorted_names = sorted(names)\nprint(sorted_names)",
     "list.sort() sorts in place and returns None"),
    ("Python", "a float comparison in a unit test fails although the numbers look equal",
     "assert total(0.1, 0.2) == 0.3", "AssertionError: 0.30000000000000004 != 0.3",
     "import math\nassert math.isclose(total(0.1, 0.2), 0.3, rel_tol=1e-9)",
     "binary floating point cannot represent 0.1 exactly; compare with a tolerance"),
    ("Python", "a recursive factorial returns None and then crashes",
     "def fact(n):\n    if n <= 1:\n        return 1\n    n * fact(n - 1)",
     "TypeError: unsupported operand type(s) for *: 'int' and 'NoneType'",
     "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)",
     "the recursive branch forgot to return"),
    ("JavaScript", "turns ['1', '2', '3'] into numbers but gets NaN",
     "const nums = ['1', '2', '3'].map(parseInt);", "[1, NaN, NaN]",
     "const nums = ['1', '2', '3'].map(s => parseInt(s, 10));",
     "map passes (value, index) and parseInt treats the index as the radix"),
    ("JavaScript", "fails with 'json is not a function' when loading data",
     "async function load(url) {\n  const data = fetch(url).json();\n  return data;\n}",
     "TypeError: fetch(...).json is not a function",
     "async function load(url) {\n  const res = await fetch(url);\n  return await res.json();\n}",
     "fetch returns a Promise; await the response before calling .json()"),
    ("Python", "crashes with KeyError when counting words",
     "counts = {}\nfor w in words:\n    counts[w] += 1", "KeyError: 'the'",
     "from collections import Counter\ncounts = Counter(words)", "the key does not exist before the first += 1"),
    ("Python", "computes an average that is always a whole number",
     "def mean(xs):\n    return sum(xs) // len(xs)", "mean([1, 2]) -> 1",
     "def mean(xs):\n    return sum(xs) / len(xs) if xs else float('nan')", "// is floor division"),
]


@family("code-bug-fix", "code", "png")
def fam_code(rng):
    good, bad, queries = [], [], []
    for i, (lang, symptom, code, obs, fixed, cause) in enumerate(BUGS):
        with_img = i % 4 == 2
        body = "the code in the screenshot" if with_img else f"this {lang} code:\n```\n{code}\n```"
        q = pick(rng, [f"Why does {body} misbehave? It {symptom}. Please fix it.",
                       f"Bug: my function {symptom}. Here's {body}. What's wrong?",
                       f"Fix {body} - it {symptom}."])
        runner = "code_interpreter"
        steps = []
        if with_img:
            steps.append(st("Transcribe the screenshot exactly, keeping indentation.", "ocr", "image_1 (code "
                            "screenshot)", code.replace("\n", "\\n")))
        steps += [st("Reproduce the bug with a minimal call before changing anything.", runner,
                     f"{code}\n# minimal reproduction", obs),
                  st(f"Root cause: {cause}. Apply the smallest fix and rerun the same reproduction plus an edge "
                     "case.", runner, f"{fixed}\n# rerun reproduction + edge case", "output now as expected; edge "
                     "case passes"),
                  st("Run the existing test suite to make sure nothing relied on the old behaviour.", runner,
                     "python -m pytest -q" if lang == "Python" else "npx jest", f"{12 + len(code) % 23} passed")]
        reas = (f"Reproduced the symptom first, which pointed straight at the cause: {cause}. The fix is minimal and "
                "targets the cause instead of masking it (no try/except around the symptom), and it was verified by "
                "rerunning the same reproduction plus an edge case.")
        good.append(tr(q, f"fix a bug in {lang} code", steps, reas, f"Cause: {cause}. Fixed code:\n{fixed}",
                       images=1 if with_img else 0,
                       caption=f"Screenshot of an editor with this {lang} snippet: {code}" if with_img else None))
    bad.append(tr("My factorial function returns None for n=5. Fix it:\n```\ndef fact(n):\n    if n <= 1:\n"
                  "        return 1\n    n * fact(n - 1)\n```", "fix a bug in Python code",
                  [st("Run it.", "code_interpreter", "fact(5)", "TypeError: unsupported operand type(s)"),
                   st("Catch the error.", "code_interpreter", "try: ... except TypeError: return 1", "fact(5) -> 1")],
                  "Wrapped the failing call so it no longer crashes.", "Wrap the body in try/except and return 1 "
                  "on TypeError."))
    queries.append(qy("Why does this print 3, 3, 3 instead of 0, 1, 2?\n```js\nfor (var i = 0; i < 3; i++) {\n  "
                      "setTimeout(() => console.log(i), 0);\n}\n```", "debug a JavaScript loop"))
    queries.append(qy("my log function always stamps the same time?? `def log(msg, ts=datetime.now()): ...` wtf",
                      "python default argument bug"))
    queries.append(qy("这段Python代码报错 TypeError: 'str' object does not support item assignment，怎么改？\n"
                      "s = 'hello'\ns[0] = 'H'", "修复Python代码错误", lang="zh"))
    queries.append(qy("What's wrong here?", "debug code from a screenshot", images=1, caption_only=True,
                      caption="Screenshot of a Python REPL: 'list = [3, 1, 2]' on one line, later "
                              "'list(range(3))' raising TypeError: 'list' object is not callable."))
    queries.append(qy("The sum function below never adds the final element of the array, can you spot the bug?\n"
                      "def total(xs):\n    s = 0\n    for i in range(len(xs) - 1):\n        s += xs[i]\n    return s",
                      "find an off-by-one error"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 15. regex writing (every regex is checked against its examples at generation time)
# ----------------------------------------------------------------------------------------------------------------
REGEXES = [
    # task, final pattern, must match, must not match, flags, re function, first (too loose) draft
    ("match ISO dates like 2024-03-15 with a valid month and day range",
     r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$", ["2024-03-15", "1999-12-31"],
     ["2024-13-01", "2024-3-5", "2024-00-10"], 0, "fullmatch", r"^\d{4}-\d{2}-\d{2}$"),
    ("extract the domain part of email addresses", r"@([A-Za-z0-9.-]+\.[A-Za-z]{2,})",
     ["ana@mail.example.com", "bo@uni.edu"], ["not-an-email", "x@localhost"], 0, "search", r"@(.+)"),
    ("validate US phone numbers written as (555) 123-4567", r"^\(\d{3}\) \d{3}-\d{4}$",
     ["(555) 123-4567", "(212) 000-9999"], ["555-123-4567", "(555)123-4567"], 0, "fullmatch",
     r"^\(?\d{3}\)?[ -]?\d{3}-\d{4}$"),
    ("match CSS hex colours such as #fff or #1a2b3c", r"^#(?:[0-9a-fA-F]{3}){1,2}$",
     ["#fff", "#1A2b3C"], ["#ffff", "1a2b3c", "#12345g"], 0, "fullmatch", r"^#[0-9a-fA-F]+$"),
    ("validate IPv4 addresses with every octet between 0 and 255",
     r"^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$",
     ["192.168.0.1", "255.255.255.0"], ["256.1.1.1", "1.2.3", "01.2.3.4"], 0, "fullmatch", r"^(\d{1,3}\.){3}\d{1,3}$"),
    ("find hashtags in a tweet but not the '#' inside URLs like page#section", r"(?<![\w/])#(\w+)",
     ["loving #python today", "#ai rocks"], ["see site.com/page#section", "no tags here"], 0, "search", r"#(\w+)"),
    ("extract dollar prices like $1,234.56 or $40 from text", r"\$\d{1,3}(?:,\d{3})*(?:\.\d{2})?(?!\d)",
     ["total $1,234.56 due", "only $40"], ["price 40 USD", "EUR 5.00"], 0, "search", r"\d+\.\d{2}"),
    ("validate 24-hour times HH:MM", r"^([01]\d|2[0-3]):[0-5]\d$", ["00:00", "23:59", "09:30"],
     ["24:00", "9:30", "12:60"], 0, "fullmatch", r"^\d{2}:\d{2}$"),
    ("validate semantic version strings like 1.12.0 (no leading zeros)",
     r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$", ["1.12.0", "0.0.1"], ["1.2", "01.2.3", "1.2.3-beta"], 0,
     "fullmatch", r"^\d+\.\d+\.\d+$"),
    ("find accidentally repeated words such as 'the the'", r"\b(\w+)\s+\1\b", ["I saw the the cat", "It is is ok"],
     ["the theme park", "no repeats"], re.IGNORECASE, "search", r"(\w+) \1"),
    ("find lines that end with trailing spaces or tabs", r"[ \t]+$", ["code  \nnext", "end\t"],
     ["clean\nlines", "blank\n\nline"], re.MULTILINE, "search", r"\s+$"),
]


@family("regex-writing", "regex", "png")
def fam_regex(rng):
    good, bad, queries = [], [], []
    for desc, pat, pos, neg, flags, mode, draft in REGEXES:
        def ok(p, s, mode=mode, flags=flags):
            rx = re.compile(p, flags)
            return bool(rx.fullmatch(s) if mode == "fullmatch" else rx.search(s))
        assert all(ok(pat, s) for s in pos) and not any(ok(pat, s) for s in neg), desc
        fails = [s for s in pos if not ok(draft, s)] + [s for s in neg if ok(draft, s)]
        assert fails, desc
        q = pick(rng, [f"Write a regular expression to {desc}.", f"I need a regex that will {desc}. Can you help?",
                       f"What regex pattern would {desc}? It's for Python's re module."])
        flag_txt = {0: "", re.IGNORECASE: " with re.IGNORECASE", re.MULTILINE: " with re.MULTILINE"}[flags]
        steps = [st("Write test cases first: strings that must match and strings that must not.", "python",
                    f"pos = {pos}\nneg = {neg}", f"{len(pos)} positive, {len(neg)} negative cases"),
                 st("Try the obvious pattern first.", "python", f"check(r'{draft}')",
                    f"FAIL on {', '.join(repr(x) for x in fails)}"),
                 st("Tighten it (anchors, explicit numeric ranges, lookarounds) and rerun every case.", "python",
                    f"check(r'{pat}'{', ' + flag_txt.split()[-1] if flags else ''})",
                    "PASS: all positives match, all negatives rejected")]
        reas = ("Built a small test set of must-match and must-not-match strings before writing the pattern. The "
                f"obvious draft r'{draft}' was too loose (it got {fails[0]!r} wrong), which showed where anchors, "
                f"explicit ranges or lookarounds were needed. The final pattern passed every case{flag_txt}; re.{mode} "
                "is stated because search and fullmatch behave differently.")
        good.append(tr(q, "write a regular expression", steps, reas, f"r'{pat}'{flag_txt} (use re.{mode})"))
    bad.append(tr("Write a regex that accepts only valid dates in YYYY-MM-DD format (real months 01-12).",
                  "write a regular expression",
                  [st("Pattern.", "python", r"re.fullmatch(r'\d{4}-\d{2}-\d{2}', '2024-03-15')", "match"),
                   st("Another check.", "python", r"re.fullmatch(r'\d{4}-\d{2}-\d{2}', '1999-12-31')", "match")],
                  "Tested on valid dates only.", r"r'\d{4}-\d{2}-\d{2}'"))
    queries.append(qy("Give me a Python regex for simplified UK postcodes like SW1A 1AA or M1 1AE.",
                      "regex for postcodes"))
    queries.append(qy("regex to pull every http/https url out of a chunk of text?", "extract URLs with a regex"))
    queries.append(qy("写一个正则表达式，匹配中国大陆的11位手机号码（以1开头，第二位是3到9）。", "编写正则表达式",
                      lang="zh"))
    queries.append(qy("Regex help please", "write a pattern", images=1, caption_only=True,
                      caption="Screenshot of a ticket: 'Password must be 8+ chars with at least one digit and one "
                              "uppercase letter - need a single regex for the form validator.'"))
    queries.append(qy("How do I match text inside double quotes, e.g. get name and value from say \"name\" = "
                      "\"value\"?", "capture quoted strings with regex"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 16. SQL query writing (every query is executed on a small sqlite database at generation time)
# ----------------------------------------------------------------------------------------------------------------
SCHEMA = """
CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT, dept TEXT, salary INTEGER, manager_id INTEGER,
                        hired DATE);
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, country TEXT, signup_date DATE, email TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, order_date DATE, amount REAL, due_date DATE,
                     shipped_date DATE);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, category TEXT, price REAL);
CREATE TABLE order_items (order_id INTEGER, product_id INTEGER, qty INTEGER);
"""

SQL_TASKS = [
    ("List the top 3 customers by total order amount in 2023.", "customers, orders",
     "SELECT c.name, ROUND(SUM(o.amount), 2) AS total\nFROM customers c JOIN orders o ON o.customer_id = c.id\n"
     "WHERE o.order_date >= '2023-01-01' AND o.order_date < '2024-01-01'\nGROUP BY c.id, c.name\n"
     "ORDER BY total DESC\nLIMIT 3;", "filter the year with a half-open date range so 31 December is included"),
    ("Which departments have an average salary above 60,000?", "employees",
     "SELECT dept, ROUND(AVG(salary)) AS avg_salary\nFROM employees\nGROUP BY dept\nHAVING AVG(salary) > 60000\n"
     "ORDER BY avg_salary DESC;", "conditions on aggregates belong in HAVING, not WHERE"),
    ("Find products that have never been ordered.", "products, order_items",
     "SELECT p.name\nFROM products p LEFT JOIN order_items oi ON oi.product_id = p.id\nWHERE oi.product_id IS NULL\n"
     "ORDER BY p.name;", "anti-join with LEFT JOIN ... IS NULL (NOT IN breaks if the subquery returns NULL)"),
    ("What is the second-highest distinct salary?", "employees",
     "SELECT MAX(salary) AS second_highest\nFROM employees\nWHERE salary < (SELECT MAX(salary) FROM employees);",
     "ties at the top must not be returned as 'second'"),
    ("Show monthly revenue for 2023 with a running total.", "orders",
     "SELECT strftime('%Y-%m', order_date) AS month, ROUND(SUM(amount), 2) AS revenue,\n"
     "       ROUND(SUM(SUM(amount)) OVER (ORDER BY strftime('%Y-%m', order_date)), 2) AS running_total\n"
     "FROM orders\nWHERE order_date >= '2023-01-01' AND order_date < '2024-01-01'\nGROUP BY month\nORDER BY month;",
     "a window over the grouped sum gives the running total"),
    ("Which employees earn more than their manager?", "employees",
     "SELECT e.name, e.salary, m.name AS manager, m.salary AS manager_salary\n"
     "FROM employees e JOIN employees m ON e.manager_id = m.id\nWHERE e.salary > m.salary\nORDER BY e.name;",
     "self-join the table to itself on manager_id"),
    ("Find email addresses used by more than one customer.", "customers",
     "SELECT LOWER(email) AS email, COUNT(*) AS n\nFROM customers\nGROUP BY LOWER(email)\nHAVING COUNT(*) > 1\n"
     "ORDER BY n DESC, email;", "normalise case before grouping duplicates"),
    ("What percentage of orders shipped after their due date?", "orders",
     "SELECT ROUND(100.0 * SUM(CASE WHEN shipped_date > due_date THEN 1 ELSE 0 END) / COUNT(*), 1) AS pct_late\n"
     "FROM orders\nWHERE shipped_date IS NOT NULL;", "multiply by 100.0 to avoid integer division; exclude unshipped"),
    ("Get each customer's most recent order (date and amount).", "customers, orders",
     "SELECT name, order_date, amount FROM (\n  SELECT c.name, o.order_date, o.amount,\n"
     "         ROW_NUMBER() OVER (PARTITION BY c.id ORDER BY o.order_date DESC, o.id DESC) AS rn\n"
     "  FROM customers c JOIN orders o ON o.customer_id = c.id\n) WHERE rn = 1\nORDER BY name;",
     "ROW_NUMBER per customer avoids the GROUP BY + non-aggregated column trap"),
    ("Which customers signed up in 2023 but have never placed an order?", "customers, orders",
     "SELECT c.name, c.signup_date\nFROM customers c\nWHERE c.signup_date >= '2023-01-01' AND c.signup_date < "
     "'2024-01-01'\n  AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)\nORDER BY c.signup_date;",
     "NOT EXISTS is NULL-safe"),
    ("Total revenue per product category, highest first.", "products, order_items",
     "SELECT p.category, ROUND(SUM(oi.qty * p.price), 2) AS revenue\nFROM order_items oi JOIN products p ON p.id = "
     "oi.product_id\nGROUP BY p.category\nORDER BY revenue DESC;", "revenue is qty x price per line, summed"),
]


def _sql_db(rng):
    import sqlite3
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    depts = ["Engineering", "Sales", "Finance", "Support"]
    emps = []
    for i, n in enumerate(PEOPLE[:16], start=1):
        mgr = None if i <= 4 else (i - 1) % 4 + 1
        sal = 90000 if i <= 2 else rng.randrange(42000, 98000, 1000)
        emps.append((i, n, depts[(i - 1) % 4], sal, mgr, f"20{rng.randint(15, 23)}-{rng.randint(1, 12):02d}-01"))
    db.executemany("INSERT INTO employees VALUES (?,?,?,?,?,?)", emps)
    countries = ["DE", "FR", "US", "JP", "BR"]
    custs = []
    for i, n in enumerate(PEOPLE[5:20], start=1):
        user = n.split()[0].lower()
        email = f"{user}@example.com" if i % 6 else f"{PEOPLE[5 + i % 5].split()[0]}@Example.com"
        signup = f"202{rng.randint(1, 3)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        custs.append((i, n, countries[i % 5], signup, email))
    db.executemany("INSERT INTO customers VALUES (?,?,?,?,?)", custs)
    orders = []
    for i in range(1, 61):
        d = date(2022, 6, 1) + timedelta(days=rng.randint(0, 640))
        due = d + timedelta(days=5)
        shipped = None if rng.random() < 0.08 else d + timedelta(days=rng.randint(1, 8))
        orders.append((i, rng.randint(1, 12), d.isoformat(), round(rng.uniform(15, 480), 2), due.isoformat(),
                       shipped.isoformat() if shipped else None))
    db.executemany("INSERT INTO orders VALUES (?,?,?,?,?,?)", orders)
    prods = [(i, n, c, p) for i, (n, c, p) in enumerate(
        [("Desk lamp", "Home", 24.9), ("USB-C hub", "Electronics", 39.0), ("Chair", "Furniture", 189.0),
         ("Monitor arm", "Furniture", 64.5), ("Notebook", "Stationery", 3.2), ("Webcam", "Electronics", 59.0),
         ("Stapler", "Stationery", 8.75), ("Rug", "Home", 99.0)], start=1)]
    db.executemany("INSERT INTO products VALUES (?,?,?,?)", prods)
    items = [(o, rng.randint(1, 6), rng.randint(1, 4)) for o in range(1, 61)]
    db.executemany("INSERT INTO order_items VALUES (?,?,?)", items)
    return db


@family("sql-query", "sql", "png")
def fam_sql(rng):
    good, bad, queries = [], [], []
    db = _sql_db(rng)
    for i, (ask, tables, sql, key) in enumerate(SQL_TASKS):
        rows = db.execute(sql).fetchall()
        cols = [d[0] for d in db.execute(sql).description]
        shown = "; ".join(str(tuple(r)) for r in rows[:4]) + (f"; ... ({len(rows)} rows)" if len(rows) > 4 else "")
        cols_txt = {"employees": "employees(id, name, dept, salary, manager_id, hired)",
                    "customers": "customers(id, name, country, signup_date, email)",
                    "orders": "orders(id, customer_id, order_date, amount, due_date, shipped_date)",
                    "products": "products(id, name, category, price)",
                    "order_items": "order_items(order_id, product_id, qty)"}
        schema = "; ".join(cols_txt[t.strip()] for t in tables.split(","))
        with_img = i % 4 == 1
        q = pick(rng, [f"Write a SQL query: {ask[0].lower()}{ask[1:]} Tables: {schema}.",
                       f"{ask} I'm on SQLite; the schema is {schema}.",
                       f"Help me with SQL - {ask[0].lower()}{ask[1:]} ({schema})"])
        if with_img:
            q = f"{ask} The table definitions are in the screenshot."
        steps = []
        if with_img:
            steps.append(st("Read the schema from the screenshot.", "ocr", "image_1 (schema diagram)", schema))
        steps += [st("Build a small sqlite database with sample rows, including edge cases (ties, NULLs, duplicates "
                     "differing only in case).", "code_interpreter", f"create tables {tables}; insert sample rows",
                     "tables created; sample rows inserted"),
                  st(f"Write the query; key point: {key}.", "code_interpreter", sql, f"columns {cols}: {shown}"),
                  st("Check the result against a hand count on the sample data.", "code_interpreter",
                     "compare with a plain Python computation over the same rows", "matches")]
        reas = (f"Wrote the query against a throwaway sqlite database seeded with edge cases, so mistakes show up as "
                f"wrong rows rather than as review comments. The key point was that {key}. The result was checked "
                "against an independent Python computation on the same sample rows.")
        good.append(tr(q, "write a SQL query", steps, reas, f"```sql\n{sql}\n```", images=1 if with_img else 0,
                       caption=f"Screenshot of a database schema diagram: {schema}." if with_img else None))
    wrong_sql = "SELECT salary FROM employees ORDER BY salary DESC LIMIT 1 OFFSET 1;"
    got = db.execute(wrong_sql).fetchall()
    bad.append(tr("Write a SQL query for the second highest salary in employees(id, name, dept, salary).",
                  "write a SQL query",
                  [st("Sort and skip one.", "code_interpreter", wrong_sql, str(got)),
                   st("Looks fine.", "code_interpreter", "SELECT COUNT(*) FROM employees", "16")],
                  "Sorted by salary descending and took the second row.", f"```sql\n{wrong_sql}\n```"))
    db.close()
    queries.append(qy("SQL: average order value per country, only countries with at least 5 orders. Tables "
                      "customers(id, country) and orders(customer_id, amount).", "aggregate query with HAVING"))
    queries.append(qy("how do i get customers with more than 3 orders in postgres? orders(customer_id, ...)",
                      "count per group query"))
    queries.append(qy("写一条SQL：查询每个部门工资最高的员工（表 employees(id, name, dept, salary)），"
                      "并列第一都要返回。",
                      "编写SQL查询", lang="zh"))
    queries.append(qy("Need the query for this.", "SQL from a screenshot", images=1, caption_only=True,
                      caption="Screenshot of a Jira ticket: 'Report: orders whose amount is above the overall "
                              "average order amount, newest first. Table orders(id, order_date, amount).'"))
    queries.append(qy("Could you write SQL that returns, for each month of 2024, how many new users signed up? "
                      "Table users(id, created_at).", "monthly counts in SQL"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 17. spreadsheet formulas
# ----------------------------------------------------------------------------------------------------------------
SHEET_TASKS = [
    ("look up each product's price from the 'Products' sheet (codes in column A there, prices in column C)",
     "Orders!A2 holds a product code", '=XLOOKUP(A2, Products!A:A, Products!C:C, "not found")',
     "XLOOKUP with an explicit not-found value; exact match is the default", "A2=P-104 -> 12.90; A3=P-999 -> not "
     "found"),
    ("total the March 2024 sales for the North region",
     "B = region, C = date, D = amount",
     '=SUMIFS(D:D, B:B, "North", C:C, ">="&DATE(2024,3,1), C:C, "<"&DATE(2024,4,1))',
     "dates must be real dates, compared with a half-open range", "North/March: 18,420.50"),
    ("count the scores that are at least 50 but below 100", "scores in E2:E200",
     '=COUNTIFS(E2:E200, ">=50", E2:E200, "<100")', "two criteria on the same range in COUNTIFS", "137"),
    ("return the value at the intersection of a chosen row label (H2) and column label (I2)",
     "row labels in A2:A10, column labels in B1:F1, values in B2:F10",
     "=INDEX(B2:F10, MATCH(H2, A2:A10, 0), MATCH(I2, B1:F1, 0))", "two MATCHes with match type 0 (exact)",
     "H2=Berlin, I2=Q3 -> 412"),
    ("fetch the exchange rate for a currency code and show 0 instead of #N/A when the code is missing",
     "codes in A, Rates sheet has code/rate in A:B", "=IFERROR(VLOOKUP(A2, Rates!A:B, 2, FALSE), 0)",
     "FALSE forces exact match; IFERROR only wraps the lookup", "A2=CHF -> 0.96; A3=XYZ -> 0"),
    ("extract the first name from a full name like 'Ana Souza'", "full names in A2",
     '=LEFT(A2, FIND(" ", A2 & " ") - 1)', "append a space so single-word names don't error",
     "'Ana Souza' -> Ana; 'Madonna' -> Madonna"),
    ("count working days between a start date and an end date, excluding public holidays",
     "B = start, C = end, holidays listed in Holidays!A2:A20", "=NETWORKDAYS(B2, C2, Holidays!$A$2:$A$20)",
     "absolute reference to the holiday list so it survives fill-down", "2024-04-01..2024-04-30 -> 21"),
    ("show the percentage change from last year (B) to this year (C)", "B = 2023 value, C = 2024 value",
     '=IF(B2=0, "", (C2-B2)/B2)', "divide by the old value; guard against division by zero; format as %",
     "B2=80, C2=92 -> 15.0%"),
    ("rank each salesperson by revenue, highest = 1", "revenues in D2:D50", "=RANK.EQ(D2, $D$2:$D$50, 0)",
     "lock the range with $ before filling down", "D2=58,200 -> 4"),
    ("count how many different customers appear in a column with repeats", "customer names in A2:A200",
     "=COUNTA(UNIQUE(FILTER(A2:A200, A2:A200<>\"\")))", "filter blanks first, otherwise the blank counts as a value",
     "-> 37"),
    ("display the weekday name for a date", "dates in A2", '=TEXT(A2, "dddd")',
     "the date must be a real date value, not text", "2024-07-04 -> Thursday"),
]


@family("spreadsheet-formula", "sheet", "png")
def fam_sheet(rng):
    good, bad, queries = [], [], []
    for i, (ask, layout, formula, key, check) in enumerate(SHEET_TASKS):
        app = pick(rng, ["Excel", "Google Sheets", "Excel 365"])
        with_img = i % 3 == 0
        q = pick(rng, [f"What {app} formula would {ask}? Layout: {layout}.",
                       f"In {app}, I want to {ask}. My sheet: {layout}. Which formula?",
                       f"Spreadsheet question ({app}): how do I {ask}? ({layout})"])
        if with_img:
            q = f"Looking at my sheet in the screenshot, which {app} formula will {ask}?"
        steps = []
        if with_img:
            steps.append(st("Work out the layout (which columns hold what, header row, sheet names).", "ocr",
                            "image_1 (spreadsheet screenshot)", f"Layout: {layout}; header in row 1"))
        steps += [st(f"Draft the formula; key point: {key}.", "python",
                     f"# emulate {formula} on a copy of the data with pandas", check),
                  st("Test edge cases (missing value, blank cell, fill-down) in the emulation.", "python",
                     "edge cases: blank row, missing key, copied to row 50", "behaves as intended")]
        newfn = [f for f in ("XLOOKUP", "UNIQUE", "FILTER") if f in formula]
        if newfn:
            steps.append(st(f"{'/'.join(newfn)} is not available in every version; check it exists in {app}.",
                            "web_search", f"{newfn[0]} function availability Excel Google Sheets",
                            f"{newfn[0]}: available in Excel 365 / Excel 2021 and Google Sheets; not in Excel 2019 "
                            "or earlier"))
        reas = (f"Identified the exact layout first, then chose the function that matches the intent. Key detail: "
                f"{key}. The formula's logic was emulated on sample data, including blanks and a "
                "missing key, before giving it.")
        good.append(tr(q, f"write a spreadsheet formula ({app})", steps, reas, formula, images=1 if with_img else 0,
                       caption=f"Spreadsheet screenshot; {layout}." if with_img else None))
    bad.append(tr("In Excel, look up the price for the code in A2 from Products!A:C (price in column C).",
                  "write a spreadsheet formula (Excel)",
                  [st("Use VLOOKUP.", "python", "emulate =VLOOKUP(A2, Products!A:C, 3)", "A2=P-104 -> 12.90"),
                   st("Done.", "python", "emulate on A3=P-105", "P-105 -> 12.90")],
                  "VLOOKUP with column index 3.", "=VLOOKUP(A2, Products!A:C, 3)"))
    queries.append(qy("Google Sheets: highlight rows where the due date in column D has passed and the status in E "
                      "isn't 'Done'. What custom formula do I use in conditional formatting?",
                      "conditional formatting formula"))
    queries.append(qy("excel - avg of column F but only for rows where B says 'Online' and C is 2024. formula?",
                      "conditional average formula"))
    queries.append(qy("Excel里怎么用公式统计A列中不重复的值有多少个？A列有空单元格。", "编写Excel公式", lang="zh"))
    queries.append(qy("What formula goes in the highlighted cell?", "spreadsheet formula from a screenshot",
                      images=1, caption_only=True,
                      caption="Screenshot of a sheet with first names in A and last names in B; the highlighted "
                              "cell C2 should show 'Last, First' for every row."))
    queries.append(qy("Is there a formula to grab the last non-empty value in column B of my Excel sheet?",
                      "lookup the last filled cell"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 18. menu translation from a photo
# ----------------------------------------------------------------------------------------------------------------
MENUS = [
    # language, OCR language code, currency, dishes (original, English, vegetarian?)
    ("Japanese", "ja", "¥", [("親子丼", "oyakodon - chicken and egg simmered over rice", False),
                            ("天ぷらそば", "tempura soba - buckwheat noodles with shrimp tempura", False),
                            ("きつねうどん", "kitsune udon - udon with sweet fried tofu (dashi is usually fish-based)",
                             False),
                            ("野菜カレー", "vegetable curry with rice", True)]),
    ("Italian", "it", "€", [("Cacio e pepe", "spaghetti with pecorino cheese and black pepper", True),
                           ("Saltimbocca alla romana", "veal escalopes with prosciutto and sage", False),
                           ("Carciofi alla giudia", "deep-fried whole artichokes", True),
                           ("Tiramisù", "coffee-soaked ladyfingers with mascarpone cream", True)]),
    ("French", "fr", "€", [("Blanquette de veau", "veal stew in a creamy white sauce", False),
                          ("Œufs en meurette", "eggs poached in red wine sauce, usually with lardons", False),
                          ("Gratin dauphinois", "sliced potatoes baked in cream", True),
                          ("Île flottante", "poached meringue floating on custard", True)]),
    ("Thai", "th", "฿", [("ผัดกะเพราหมู", "pad kra pao moo - stir-fried pork with holy basil", False),
                        ("ต้มยำกุ้ง", "tom yum goong - hot and sour shrimp soup", False),
                        ("ส้มตำ", "som tam - green papaya salad (usually with fish sauce and dried shrimp)", False),
                        ("ข้าวเหนียวมะม่วง", "mango sticky rice", True)]),
    ("Chinese", "zh", "¥", [("鱼香肉丝", "yu xiang shredded pork - 'fish-fragrant' sauce, contains no fish", False),
                           ("地三鲜", "stir-fried potato, aubergine and green pepper", True),
                           ("麻婆豆腐", "mapo tofu - tofu in chilli bean sauce, usually with minced meat", False),
                           ("夫妻肺片", "sliced beef and offal in chilli oil", False)]),
    ("Spanish", "es", "€", [("Pulpo a la gallega", "Galician-style octopus with paprika and potatoes", False),
                           ("Pimientos de Padrón", "blistered small green peppers with sea salt", True),
                           ("Rabo de toro", "braised oxtail stew", False),
                           ("Crema catalana", "custard with a caramelised sugar crust", True)]),
    ("German", "de", "€", [("Schweinshaxe", "roast pork knuckle", False),
                          ("Käsespätzle", "egg noodles with melted cheese and fried onions", True),
                          ("Maultaschen", "Swabian pasta pockets, usually filled with meat and spinach", False),
                          ("Rote Grütze", "red berry pudding with vanilla sauce", True)]),
    ("Korean", "ko", "₩", [("비빔밥", "bibimbap - rice with vegetables, egg and chilli paste (often beef)", False),
                          ("순두부찌개", "sundubu jjigae - soft tofu stew (usually with seafood or pork)", False),
                          ("김치볶음밥", "kimchi fried rice", False),
                          ("잡채", "japchae - stir-fried glass noodles with vegetables (often beef)", False)]),
    ("Vietnamese", "vi", "₫", [("Phở bò", "beef noodle soup", False),
                              ("Bánh xèo", "crispy rice-flour pancake with shrimp and pork", False),
                              ("Bún chả", "grilled pork with rice noodles and dipping sauce", False),
                              ("Đậu hũ sốt cà chua", "tofu in tomato sauce", True)]),
    ("Turkish", "tr", "₺", [("İskender kebap", "sliced döner over bread with tomato sauce and yoghurt", False),
                           ("Mercimek çorbası", "red lentil soup", True),
                           ("İmam bayıldı", "aubergine stuffed with onion, garlic and tomato in olive oil", True),
                           ("Künefe", "shredded pastry with melted cheese in syrup", True)]),
]


@family("menu-translation", "menu", "jpg")
def fam_menu(rng):
    good, bad, queries = [], [], []
    for i, (lang, code, cur, dishes) in enumerate(MENUS):
        prices = [rng.randint(6, 19) * (100 if cur in "¥₩₫" else 1) * (10 if cur == "₫" else 1) for _ in dishes]
        if cur == "¥" and lang == "Chinese":
            prices = [rng.randint(18, 68) for _ in dishes]
        if cur == "฿":
            prices = [rng.randint(60, 180) for _ in dishes]
        if cur == "₺":
            prices = [rng.randint(12, 42) * 10 for _ in dishes]
        kind = ["veg", "price", "all"][i % 3]
        menu_txt = "; ".join(f"{o} {cur}{p:,}" for (o, _, _), p in zip(dishes, prices, strict=True))
        tr_txt = "; ".join(f"{o} = {e}" for o, e, _ in dishes)
        target = pick(rng, range(len(dishes)))
        if kind == "veg":
            q = pick(rng, [f"I'm vegetarian. Which dishes on this {lang} menu can I eat?",
                           f"Translate this {lang} menu for me and tell me which dishes have no meat or fish."])
            veg = [f"{o} ({e.split(' - ')[-1] if ' - ' in e else e})" for o, e, v in dishes if v]
            ans = ("Vegetarian: " + "; ".join(veg)) if veg else "None of the dishes is reliably vegetarian"
            sub = "translate a menu photo and find vegetarian dishes"
        elif kind == "price":
            o, e, _ = dishes[target]
            q = pick(rng, [f"What is '{o}' on this menu, and how much does it cost?",
                           f"Can you tell me what the dish {o} is and its price from the photo?"])
            ans = f"{o}: {e}; {cur}{prices[target]:,}"
            sub = "translate a dish name from a menu photo"
        else:
            q = pick(rng, [f"Please translate this {lang} menu into English.",
                           f"I can't read {lang}. What's on this menu?"])
            ans = "; ".join(f"{o} - {e} ({cur}{p:,})" for (o, e, _), p in zip(dishes, prices, strict=True))
            sub = "translate a restaurant menu from a photo"
        steps = [st(f"OCR the menu in {lang}.", "ocr", f"image_1 (lang={code})", menu_txt),
                 st("Translate dish names; literal machine translation of dish names is often misleading.",
                    "translate", f"{code} -> en: " + " | ".join(o for o, _, _ in dishes), tr_txt)]
        if kind != "price":
            tricky = next((d for d in dishes if "usually" in d[1] or "no fish" in d[1] or "often" in d[1]), dishes[0])
            steps.append(st(f"Check what '{tricky[0]}' really contains before calling it (non-)vegetarian.",
                            "web_search", f"{tricky[0]} ingredients", f"{tricky[0]}: {tricky[1]}."))
        reas = ("OCR with the right language setting, then dish-level translation. Literal translations mislead "
                "(names can mention fish that isn't there, or hide meat, fish sauce or broth), so ambiguous dishes "
                "were checked against a description of the dish before answering" +
                (" the vegetarian question; anything usually made with meat or fish stock was excluded."
                 if kind == "veg" else "; prices were copied from the OCR line of the same dish."))
        good.append(tr(q, sub, steps, reas, ans, images=1,
                       caption=f"A photo of a printed {lang} restaurant menu with {len(dishes)} dishes and prices."))
    bad.append(tr("I'm vegetarian - which of these dishes on the Chinese menu can I order?",
                  "translate a menu photo and find vegetarian dishes",
                  [st("OCR.", "ocr", "image_1 (lang=zh)", "鱼香肉丝 ¥32; 麻婆豆腐 ¥26; 地三鲜 ¥24"),
                   st("Translate.", "translate", "zh -> en", "fish-flavoured shredded pork; mapo tofu; three "
                      "fresh vegetables")],
                  "Translated literally and kept the tofu and vegetable dishes.", "麻婆豆腐 (mapo tofu) and 地三鲜",
                  images=1))
    queries.append(qy("Can you tell me what these dishes are? The menu in the photo is in Greek.",
                      "translate a Greek menu", images=1,
                      caption="Greek taverna menu: Μουσακάς, Χωριάτικη σαλάτα, Σουβλάκι χοιρινό, Γαλακτομπούρεκο, "
                              "with prices in euros."))
    queries.append(qy("at a tasca in porto, whats on this menu and is anything veggie??", "menu translation and "
                      "dietary check", images=1))
    queries.append(qy("帮我翻译一下这张日本拉面店的菜单，哪些是素食？", "翻译菜单并找出素食", images=1, lang="zh",
                      caption="日文菜单照片：豚骨ラーメン、味噌ラーメン、餃子、枝豆、野菜ラーメン，带价格。"))
    queries.append(qy("What does this say?", "read a menu in a foreign language", images=1, caption_only=True,
                      caption="Chalkboard outside an Italian trattoria: 'Ossobuco alla milanese 22, Risotto allo "
                              "zafferano 14, Panna cotta 6'; the tourist wants to know what the dishes are."))
    queries.append(qy("I have a shellfish allergy - looking at this Korean menu photo, which items should I avoid "
                      "and what are they?", "translate a menu and flag allergens", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 19. receipt totals
# ----------------------------------------------------------------------------------------------------------------
SHOPS = [
    ("FreshMart", "US", [("Bananas 1.2 lb", 0.82), ("Greek yogurt", 5.49), ("Sourdough loaf", 6.25),
                         ("Eggs 12ct", 4.19), ("Olive oil 500ml", 9.99), ("Spinach", 3.49), ("Cheddar 8oz", 4.79)]),
    ("Trattoria Da Sergio", "US-rest", [("Margherita pizza", 16.0), ("Lasagna", 21.0), ("Caesar salad", 12.5),
                                        ("Tiramisu", 9.0), ("House red (glass)", 11.0), ("Sparkling water", 4.5)]),
    ("Café Lumen", "EU", [("Cappuccino", 3.6), ("Croissant", 2.4), ("Avocado toast", 8.9), ("Orange juice", 4.2),
                          ("Cheesecake", 5.5)]),
    ("Hardware Haus", "EU", [("Screws 4x40 (100)", 6.99), ("Drill bit set", 19.95), ("Wood glue", 5.49),
                             ("Sandpaper P120", 3.29), ("Tape measure 5m", 8.99)]),
    ("City Pharmacy", "US", [("Ibuprofen 200mg", 7.99), ("Band-aids", 4.49), ("Sunscreen SPF50", 12.99),
                             ("Toothpaste", 3.79), ("Vitamin C", 9.49)]),
    ("Sakura Sushi Bar", "US-rest", [("Salmon nigiri (2)", 7.5), ("Dragon roll", 15.0), ("Miso soup", 4.0),
                                     ("Edamame", 5.5), ("Green tea", 3.0), ("Tempura udon", 14.0)]),
]


@family("receipt-total", "receipt", "jpg")
def fam_receipt(rng):
    good, bad, queries = [], [], []
    kinds = ["total", "pretax", "split", "vat", "total", "split", "vat", "discount", "pretax", "total", "split"]
    for i, kind in enumerate(kinds):
        shop, reg, items = SHOPS[i % len(SHOPS)]
        if kind == "vat" and reg != "EU":
            shop, reg, items = SHOPS[2 + (i % 2)]
        if kind == "split" and reg != "US-rest":
            shop, reg, items = pick(rng, [SHOPS[1], SHOPS[5]])
        if kind in ("total", "pretax", "discount") and reg == "EU":
            shop, reg, items = pick(rng, [SHOPS[0], SHOPS[4]])
        lines = [(n, p, rng.randint(1, 3)) for n, p in pick(rng, items, rng.randint(3, min(5, len(items))))]
        sub = round(sum(p * q for _, p, q in lines), 2)
        lines_txt = "; ".join(f"{q} x {n} {p * q:.2f}" for n, p, q in lines)
        cur = "€" if reg == "EU" else "$"
        steps = [st("OCR the receipt, one line per item, keeping quantities.", "ocr", "image_1 (receipt)",
                    f"{shop} | {lines_txt} | SUBTOTAL {sub:.2f}")]
        steps.append(st("Re-add the item lines and compare with the printed subtotal to catch OCR digit errors.",
                        "python", "sum(qty * price for each line)", f"{sub:.2f} (matches printed subtotal)"))
        if kind in ("total", "pretax", "discount"):
            rate = pick(rng, [0.0625, 0.07, 0.08, 0.08875, 0.095])
            disc = round(sub * 0.1, 2) if kind == "discount" else 0.0
            tax = round((sub - disc) * rate, 2)
            total = round(sub - disc + tax, 2)
            steps.append(st("Apply the discount line (negative) before tax, then the sales tax.", "calculator",
                            f"({sub:.2f} - {disc:.2f}) * {rate} = tax; + tax", f"tax {tax:.2f}; total {total:.2f}"))
            if kind == "total":
                q = pick(rng, [f"What's the total on this {shop} receipt?", "How much did I pay in total "
                               f"at {shop}, according to this receipt?"])
                ans = f"{money(total, cur)} (subtotal {money(sub, cur)} + tax {money(tax, cur)})"
            elif kind == "pretax":
                q = pick(rng, [f"How much did I spend at {shop} before tax?",
                               f"What's the pre-tax amount on the {shop} receipt in the photo?"])
                ans = f"{money(sub, cur)} before tax (tax {money(tax, cur)}, total {money(total, cur)})"
            else:
                q = "The receipt shows a 10% member discount. What did I pay in the end?"
                ans = f"{money(total, cur)} (subtotal {money(sub, cur)} - discount {money(disc, cur)} + tax " \
                      f"{money(tax, cur)})"
        elif kind == "split":
            tip_pct, people = pick(rng, [15, 18, 20]), pick(rng, [2, 3, 4, 5])
            tax = round(sub * 0.08875, 2)
            tip = round(sub * tip_pct / 100, 2)
            each = round((sub + tax + tip) / people, 2)
            steps.append(st("Check the footer: some restaurants already add a service charge.", "ocr",
                            "image_1: bottom of the receipt", "'Gratuity not included' - no service charge line"))
            steps.append(st(f"Tip {tip_pct}% on the pre-tax subtotal, add tax, divide by {people}.", "calculator",
                            f"({sub:.2f} + {tax:.2f} + {sub:.2f} * {tip_pct / 100}) / {people}", f"{each:.2f}"))
            q = pick(rng, [f"We're {people} people. Split this restaurant bill evenly with a {tip_pct}% tip.",
                           f"How much does each of us ({people}) owe if we add {tip_pct}% tip to this bill?"])
            ans = f"{money(each, cur)} each (subtotal {money(sub, cur)}, tax {money(tax, cur)}, tip {money(tip, cur)})"
        else:
            rate = pick(rng, [0.19, 0.2, 0.21])
            vat = round(sub * rate / (1 + rate), 2)
            steps.append(st(f"Prices already include {int(rate * 100)}% VAT: the VAT share is total x r/(1+r), not "
                            "total x r.", "calculator", f"{sub:.2f} * {rate} / {1 + rate}", f"{vat:.2f}"))
            q = pick(rng, [f"How much VAT did I pay on this {shop} receipt?",
                           f"For my expense report: what's the VAT amount included in this {shop} receipt?"])
            ans = f"{money(vat, cur)} VAT included in the {money(sub, cur)} total ({int(rate * 100)}%)"
        reas = ("Every item line was OCR'd and re-added, and the sum was checked against the printed subtotal "
                "before anything else, which catches misread digits (3/8, 1/7) and missed quantity multipliers. "
                + {"total": "Tax was applied to the subtotal after any discount.",
                   "pretax": "The pre-tax amount is the subtotal; tax and total were reported for context.",
                   "discount": "The discount line is negative and comes before tax.",
                   "split": "Tip was computed on the pre-tax subtotal as is customary, then everything was divided "
                            "evenly.",
                   "vat": "European receipts show VAT-inclusive prices, so the VAT share is extracted with "
                          "r/(1+r)."}[kind])
        good.append(tr(q, "compute amounts from a receipt photo", steps, reas, ans, images=1,
                       caption=f"A photographed till receipt from {shop} with {len(lines)} item lines."))
    bad.append(tr("How much VAT is included in this café receipt (total €24.30, 19% VAT)?",
                  "compute amounts from a receipt photo",
                  [st("OCR.", "ocr", "image_1", "TOTAL 24.30 incl. 19% MwSt"),
                   st("VAT.", "calculator", "24.30 * 0.19", "4.62")],
                  "Multiplied the total by the VAT rate.", "€4.62", images=1))
    queries.append(qy("What did this grocery run cost me all in, tax included?", "add up a shopping receipt",
                      images=1, caption="Supermarket receipt: milk 3.29, coffee beans 11.99, apples 4.12, bread "
                                        "3.50; NY sales tax shown at the bottom."))
    queries.append(qy("4 of us had dinner, pls split this evenly w/ 20% tip", "split a restaurant check", images=1))
    queries.append(qy("这张德国超市小票里包含了多少增值税？", "计算小票中包含的增值税", images=1, lang="zh",
                      caption="德国超市收据，合计 € 37,85，注明含7%和19%增值税。"))
    queries.append(qy("Check this for me.", "receipt arithmetic", images=1, caption_only=True,
                      caption="Crumpled pharmacy receipt; the customer wrote 'did they charge me right? what should "
                              "the total be before tax?' next to five item lines."))
    queries.append(qy("Can you read the hardware store receipt and tell me the amount I was charged after the "
                      "coupon?", "compute a total after a coupon from a receipt", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 20. counting objects in an image
# ----------------------------------------------------------------------------------------------------------------
SCENES = [
    ("apples", "a wicker basket full of red apples, some half hidden under others", "occluded", "apple"),
    ("people", "people waiting in a queue at a bus stop, with a glass shelter reflecting some of them", "reflection",
     "person"),
    ("cars", "an aerial photo of a supermarket parking lot", "edge", "car"),
    ("birds", "small birds perched close together on a power line against the sky", "merged", "bird"),
    ("sheep", "a flock of sheep grazing on a hillside, a sheepdog among them", "other_class", "sheep"),
    ("windows", "the facade of an apartment block with a regular grid of windows, some in shadow", "grid", "window"),
    ("bottles", "a supermarket shelf with rows of identical water bottles", "grid", "bottle"),
    ("coins", "coins scattered on a wooden table, two partly stacked", "merged", "coin"),
    ("cupcakes", "a baking tray of cupcakes with a few empty slots", "grid", "cupcake"),
    ("penguins", "a colony of penguins standing on a rocky beach", "occluded", "penguin"),
    ("chairs", "a classroom with rows of chairs, a few stacked in the corner", "occluded", "chair"),
]


@family("object-counting", "scene", "jpg")
def fam_count(rng):
    good, bad, queries = [], [], []
    for obj, scene, issue, cls in SCENES:
        if issue == "grid":
            r, c = rng.randint(3, 7), rng.randint(4, 9)
            missing = rng.randint(0, 4)
            true = r * c - missing
            det = true - rng.randint(1, 3)
            fix = (st(f"The {obj} form a regular grid; count rows and columns on a crop and subtract gaps.",
                      "image_crop", "image_1: full grid, gridlines overlaid",
                      f"{r} rows x {c} columns, {missing} empty position{'s' if missing != 1 else ''}"),
                   st("Compute from the grid.", "python", f"{r} * {c} - {missing}", str(true)))
            note = "the regular layout allows an exact count from rows x columns minus gaps"
        else:
            true = rng.randint(9, 48)
            extra = rng.randint(1, 3)
            if issue in ("occluded", "merged"):
                det = true - extra
                fix = (st("Look at clusters where boxes overlap or objects are partly hidden.", "image_crop",
                          "image_1: zoom on dense clusters", f"{extra} additional {obj} found partly hidden or "
                          "merged into one box"),
                       st("Combine.", "python", f"{det} + {extra}", str(true)))
                note = f"{extra} {obj} were hidden or merged and only visible on zoomed crops"
            elif issue == "reflection":
                det = true + extra
                fix = (st("Some detections are reflections in the glass; check each box near the shelter.",
                          "image_crop", "image_1: zoom on the glass shelter", f"{extra} detections are reflections"),
                       st("Remove the duplicates.", "python", f"{det} - {extra}", str(true)))
                note = f"{extra} detections were reflections of real people"
            elif issue == "edge":
                det = true + extra
                fix = (st("Check boxes at the image border.", "image_crop", "image_1: borders",
                          f"{extra} boxes are fragments of cars cut off at the image edge, outside the lot"),
                       st("Recount.", "python", f"{det} - {extra}", str(true)))
                note = f"{extra} boxes at the border were fragments"
            else:
                det = true + 1
                fix = (st("The detector's 'sheep' class includes a low-confidence box; inspect it.", "image_crop",
                          "image_1: lowest-confidence box", "It is the sheepdog, not a sheep"),
                       st("Exclude it.", "python", f"{det} - 1", str(true)))
                note = "one detection was the dog"
        q = pick(rng, [f"How many {obj} are in this photo?", f"Count the {obj} in the picture, please.",
                       f"Can you tell me exactly how many {obj} there are in this image?"])
        steps = [st("Run an object detector for a first count.", "object_detector", f"image_1, class='{cls}', "
                    "conf>=0.3", f"{det} detections (confidence 0.31-0.97)")] + list(fix)
        reas = ("A detector gives a quick first count but is unreliable for overlapping, occluded, reflected or "
                f"truncated objects, so suspicious regions were inspected on zoomed crops; here {note}. The final "
                "number was computed explicitly rather than estimated.")
        good.append(tr(q, "count objects in an image", steps, reas, str(true), images=1,
                       caption=f"A photo of {scene}."))
    bad.append(tr("How many birds are sitting on the wire?", "count objects in an image",
                  [st("Detect birds.", "object_detector", "image_1, class='bird'", "17 detections"),
                   st("Report.", "python", "len(boxes)", "17")],
                  "Counted detector boxes.", "17", images=1,
                  caption="A long row of swallows on a wire, several overlapping each other."))
    queries.append(qy("How many bikes are locked to the rack here?", "count items in a photo", images=1,
                      caption="A crowded bicycle rack outside a station, bikes overlapping each other."))
    queries.append(qy("quick count of the ducks in this pic?", "count animals in a picture", images=1))
    queries.append(qy("照片里有多少个学生举手了？", "统计图片中的人数", images=1, lang="zh",
                      caption="教室照片，学生坐成几排，部分学生举手，后排被前排遮挡。"))
    queries.append(qy("Number?", "object count", images=1, caption_only=True,
                      caption="An egg carton photographed from above with some eggs missing; the question is how "
                              "many eggs are left."))
    queries.append(qy("I need the exact number of tulips in the vase shown - some are behind others.",
                      "count partially hidden objects", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 21. medical abstract question (PubMed) - all studies are fictional
# ----------------------------------------------------------------------------------------------------------------
TRIALS = [
    ("vitamin D3 supplementation", "fracture risk", "adults aged 70 or older", "fracture incidence"),
    ("time-restricted eating", "weight loss", "adults with obesity", "change in body weight at 12 months"),
    ("mindfulness-based stress reduction", "generalised anxiety disorder", "adults with GAD",
     "change in anxiety score (GAD-7) at 8 weeks"),
    ("low-dose aspirin", "preterm preeclampsia", "high-risk pregnancies", "preterm preeclampsia incidence"),
    ("high-intensity interval training", "glycaemic control", "adults with type 2 diabetes",
     "change in HbA1c at 16 weeks"),
    ("probiotic supplementation", "antibiotic-associated diarrhoea", "children receiving antibiotics",
     "incidence of diarrhoea"),
    ("tranexamic acid", "blood loss", "patients undergoing total knee arthroplasty", "total blood loss"),
    ("digital cognitive behavioural therapy", "insomnia", "adults with chronic insomnia",
     "Insomnia Severity Index at 10 weeks"),
    ("omega-3 fatty acids", "atrial fibrillation", "older adults", "incident atrial fibrillation"),
    ("early mobilisation", "delirium", "mechanically ventilated ICU patients", "days with delirium"),
    ("oral iron every other day", "iron-deficiency anaemia", "women of reproductive age",
     "haemoglobin change at 12 weeks"),
]
TRIAL_MEASURES = [("RR", "", 0), ("MD", "kg", 3), ("MD", "points", 3), ("RR", "", 0), ("MD", "percentage points", 0.5),
                  ("RR", "", 0), ("MD", "mL", 300), ("MD", "points", 5), ("HR", "", 0), ("MD", "days", 2),
                  ("MD+", "g/dL", 1)]
JOURNALS = ["BMJ Open", "JAMA Network Open", "BMC Public Health", "Annals of Internal Medicine",
            "PLOS Medicine", "Trials", "BMC Medicine"]


@family("pubmed-question", "abstract", "png")
def fam_pubmed(rng):
    good, bad, queries = [], [], []
    for i, (interv, cond, pop, outcome) in enumerate(TRIALS):
        year = rng.randint(2019, 2023)
        n = rng.randrange(120, 2400, 2)
        analyzed = n - rng.randint(4, n // 10)
        j = pick(rng, JOURNALS)
        pmid, dist1, dist2 = (rng.randint(30000000, 37999999) for _ in range(3))
        measure, unit, scale = TRIAL_MEASURES[i]
        up = measure == "MD+"
        effect = pick(rng, ["increased" if up else "reduced", "did not significantly change",
                            "modestly increased" if up else "modestly reduced"])
        null = "not" in effect
        if measure in ("RR", "HR"):
            lo_, hi_ = ((rng.uniform(0.55, 0.85), rng.uniform(1.02, 1.2)) if null else
                        (rng.uniform(0.45, 0.7), rng.uniform(0.75, 0.95)))
            est = math.sqrt(lo_ * hi_)
            stat = (f"{'risk' if measure == 'RR' else 'hazard'} ratio {fmt(est, 2)}, 95% CI {fmt(lo_, 2)} to "
                    f"{fmt(hi_, 2)}")
        else:
            sign = 1 if up else -1
            lo_, hi_ = ((-rng.uniform(0.1, 0.4) * scale, rng.uniform(0.1, 0.4) * scale) if null else
                        sorted([sign * rng.uniform(0.6, 1.2) * scale, sign * rng.uniform(0.1, 0.5) * scale]))
            est = (lo_ + hi_) / 2
            stat = f"mean difference {fmt(est, 2)} {unit}, 95% CI {fmt(lo_, 2)} to {fmt(hi_, 2)}"
        result = (f"{outcome}: {stat} versus control - " +
                  ("no significant difference" if null else f"in favour of {interv}"))
        kind = ["n", "outcome", "effect"][i % 3]
        title = f"{interv[0].upper()}{interv[1:]} for {cond} in {pop}: a randomised controlled trial"
        if kind == "n":
            q = pick(rng, [f"How many participants were randomised in the {year} RCT of {interv} for {cond} in {pop} "
                           f"published in {j}?",
                           f"In the randomised trial on {interv} and {cond} ({j}, {year}), what was the sample size?"])
            ans = f"{n} randomised ({analyzed} included in the primary analysis); PMID {pmid}"
        elif kind == "outcome":
            q = f"What was the primary outcome of the {year} trial of {interv} in {pop}, and what did it find?"
            ans = f"Primary outcome: {outcome}. Result: {result.split(': ', 1)[1]} (PMID {pmid})"
        else:
            q = pick(rng, [f"Did {interv} help with {cond} in the randomised trial published in {j} in {year}?",
                           f"According to PubMed, does {interv} work for {cond} in {pop}? Use the {year} RCT."])
            ans = f"{'No clear benefit' if 'not' in effect else 'Yes'}: {result} (PMID {pmid}, {j} {year})"
        steps = [st("Search PubMed with intervention, condition and design terms.", "pubmed_search",
                    f"({interv}) AND ({cond}) AND randomized controlled trial[pt] AND {year}[dp]",
                    f"PMID {pmid}: '{title}' ({j}, {year}); PMID {dist1}: '{title.split(':')[0]}: protocol' "
                    f"({year - 2}); PMID {dist2}: 'Secondary analysis of ...' ({year + 1})"),
                 st("Open the main results paper, not the protocol or secondary analysis.", "browse_webpage",
                    f"pubmed.ncbi.nlm.nih.gov/{pmid}",
                    f"Abstract: {n} participants were randomised; {analyzed} were analysed. Primary outcome: "
                    f"{outcome}. Results: {result}.")]
        if kind == "n":
            steps.append(st("Separate 'randomised' from 'analysed' numbers.", "calculator", f"{n} - {analyzed}",
                            f"{n - analyzed} lost to follow-up or excluded"))
        reas = ("The search returned the protocol and a secondary analysis alongside the main trial report; only "
                "the main results abstract was used. Numbers were quoted precisely (randomised vs analysed) and the "
                "answer keeps the trial's own hedging: a confidence interval that includes no effect (ratio 1, "
                "difference 0) means no clear benefit.")
        good.append(tr(q, "answer a question from a PubMed abstract", steps, reas, ans))
    bad.append(tr("How many patients were enrolled in the 2020 trial of tranexamic acid for blood loss in knee "
                  "arthroplasty?", "answer a question from a PubMed abstract",
                  [st("Search.", "pubmed_search", "tranexamic acid knee arthroplasty trial",
                      "PMID 31234567: '... : protocol' (2018)"),
                   st("Read.", "browse_webpage", "pubmed 31234567", "We plan to enrol 600 patients.")],
                  "Used the first PubMed hit.", "600 patients"))
    queries.append(qy("Is there RCT evidence that acupuncture relieves chronic low back pain in older adults? Find "
                      "the main trial and summarise its primary result.", "summarise a clinical trial from PubMed"))
    queries.append(qy("how many ppl were in that tai chi falls prevention trial from 2019? randomized not "
                      "analyzed", "find a trial's sample size"))
    queries.append(qy("请在PubMed上查一下：锌含片能缩短普通感冒病程吗？主要结局指标和结果是什么？",
                      "根据PubMed摘要回答医学问题", lang="zh"))
    queries.append(qy("What does this study conclude?", "read a medical abstract", images=1, caption_only=True,
                      caption="Screenshot of a PubMed search result titled 'Music therapy for preoperative anxiety: "
                              "a randomised controlled trial'; the user asks for the primary outcome and result."))
    queries.append(qy("Find the randomised trial on virtual-reality distraction during paediatric blood draws and "
                      "tell me whether it reduced pain scores.", "look up a trial result on PubMed"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 22. sports statistics lookup
# ----------------------------------------------------------------------------------------------------------------
SPORTS = [
    ("Who scored the winning goal in the 2014 FIFA World Cup final, and in which minute?",
     "2014 FIFA World Cup final", "Germany 1-0 Argentina after extra time; goal: Mario Götze, 113th minute",
     "Mario Götze, in the 113th minute (extra time), Germany 1-0 Argentina", "extra time vs regular time"),
    ("Who got the winner in the 2010 World Cup final?", "2010 FIFA World Cup final",
     "Netherlands 0-1 Spain (a.e.t.); goal: Andrés Iniesta 116'", "Andrés Iniesta, 116th minute, Spain 1-0 Netherlands",
     "extra time vs regular time"),
    ("Who won the Golden Boot at the 2018 World Cup, and with how many goals?", "2018 FIFA World Cup top scorers",
     "Golden Boot: Harry Kane (England), 6 goals; Antoine Griezmann, Romelu Lukaku 4", "Harry Kane, 6 goals",
     "award winner vs joint top scorers"),
    ("What is Usain Bolt's 100 m world record time, and where was it set?", "men's 100 metres world record",
     "9.58 s, Usain Bolt, 16 August 2009, World Championships, Berlin", "9.58 s, Berlin (2009 World Championships)",
     "Olympic record (9.63) vs world record"),
    ("How many Olympic medals did Michael Phelps win in total?", "Michael Phelps Olympic medals",
     "28 medals: 23 gold, 3 silver, 2 bronze (2004-2016)", "28 (23 gold, 3 silver, 2 bronze)",
     "total medals vs gold medals"),
    ("Against which team did Wilt Chamberlain score 100 points, and when?", "Wilt Chamberlain 100-point game",
     "2 March 1962, Philadelphia Warriors 169-147 New York Knicks, Hershey, Pennsylvania",
     "The New York Knicks, on 2 March 1962", "venue (Hershey) vs opponent"),
    ("How many French Open singles titles has Rafael Nadal won?", "Rafael Nadal French Open titles",
     "14 titles: 2005-2008, 2010-2014, 2017-2020, 2022", "14", "singles vs all events"),
    ("How many Grand Slam singles titles did Serena Williams win?", "Serena Williams Grand Slam singles titles",
     "23 Grand Slam singles titles (Open Era record)", "23", "singles vs doubles titles"),
    ("How many times did Roger Federer win Wimbledon in singles?", "Roger Federer Wimbledon titles",
     "8 singles titles: 2003-2007, 2009, 2012, 2017", "8", "singles vs total finals"),
    ("How many regular-season goals did Wayne Gretzky score in the NHL?", "Wayne Gretzky career goals",
     "894 regular-season goals, 122 playoff goals", "894 (plus 122 in the playoffs)", "regular season vs playoffs"),
    ("How far did Bob Beamon jump at the 1968 Olympics?", "Bob Beamon 1968 long jump",
     "8.90 m, Mexico City, 18 October 1968 (world record until 1991)", "8.90 m", "metric vs imperial (29 ft 2.5 in)"),
]


@family("sports-stats", "sports", "jpg")
def fam_sports(rng):
    good, bad, queries = [], [], []
    for i, (q, topic, fact, ans, trap) in enumerate(SPORTS):
        src = pick(rng, ["Wikipedia", "the official federation site", "a statistics database (e.g. Olympedia, "
                         "Basketball-Reference)"])
        q2 = q if i % 2 == 0 else pick(rng, [f"Sports trivia: {q[0].lower()}{q[1:]}", f"Quick stats check - {q}"])
        steps = [st("Search for the record / match report.", "web_search", topic, f"Top results: {topic} - "
                    f"{src}, news reports"),
                 st("Read the fact from a primary or reference page, not a snippet.", "browse_webpage",
                    f"{topic} page on {src}", fact),
                 st(f"Cross-check with a second source; mind {trap}.", "web_search", f"{topic} {trap.split(' vs ')[0]}",
                    f"Second source agrees: {ans}")]
        reas = (f"Found the reference page for the {topic} and read the figure there, then confirmed it with an "
                f"independent source. The usual confusion here is {trap}, so the answer states exactly which figure "
                "it is.")
        good.append(tr(q2, "look up a sports statistic", steps, reas, ans))
    bad.append(tr("How many Olympic medals did Michael Phelps win?", "look up a sports statistic",
                  [st("Search.", "web_search", "Michael Phelps Olympic golds", "23 Olympic gold medals"),
                   st("Answer.", "browse_webpage", "news article", "Phelps, winner of 23 golds, ...")],
                  "Took the headline number.", "23"))
    queries.append(qy("What was Kobe Bryant's career-high points in a single NBA game, and who was the opponent?",
                      "single-game scoring record"))
    queries.append(qy("who won the golden boot in qatar 2022 and how many goals did he get", "top scorer of a "
                      "tournament"))
    queries.append(qy("2018年世界杯决赛的比分是多少？谁赢了？", "查询体育比赛结果", lang="zh"))
    queries.append(qy("Answer the trivia card.", "sports trivia", images=1, caption_only=True,
                      caption="A trivia card: 'How many gold medals did Jesse Owens win at the 1936 Berlin "
                              "Olympics?'"))
    queries.append(qy("In which Olympics did Nadia Comăneci score the first perfect 10 in gymnastics?",
                      "look up a historic sports record"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 23. historical dates
# ----------------------------------------------------------------------------------------------------------------
EVENTS = [
    ("storming of the Bastille", date(1789, 7, 14)), ("Battle of Waterloo", date(1815, 6, 18)),
    ("signing of the Treaty of Versailles", date(1919, 6, 28)), ("launch of Sputnik 1", date(1957, 10, 4)),
    ("fall of the Berlin Wall", date(1989, 11, 9)), ("Chernobyl disaster", date(1986, 4, 26)),
    ("Wuchang Uprising", date(1911, 10, 10)), ("independence of India", date(1947, 8, 15)),
]
SPANS = [("the sealing of Magna Carta", 1215, "the Peace of Westphalia", 1648),
         ("the fall of Constantinople", 1453, "Columbus's first voyage to the Americas", 1492),
         ("the Meiji Restoration", 1868, "the start of the Russo-Japanese War", 1904)]


@family("historical-date", "history", "jpg")
def fam_history(rng):
    good, bad, queries = [], [], []
    for i, (ev, d) in enumerate(EVENTS):
        wd = WEEKDAYS[d.weekday()]
        if i % 3 == 2:
            q = pick(rng, [f"On what date did the {ev} happen?", f"When exactly was the {ev}?"])
            ans = f"{_longdate(d)} (a {wd})"
            sub = "look up the date of a historical event"
        else:
            q = pick(rng, [f"What day of the week was the {ev}?", f"The {ev} - which weekday did it fall on?",
                           f"Find the date of the {ev} and tell me the day of the week."])
            ans = f"{wd}, {_longdate(d)}"
            sub = "find the weekday of a historical date"
        steps = [st("Get the exact date from a reference source.", "wikipedia", ev, f"The {ev} took place on "
                    f"{_longdate(d)}."),
                 st("Compute the weekday in code instead of from memory (proleptic Gregorian is fine after 1582; "
                    "check the calendar in use for Russia/Greece).", "python",
                    f"datetime.date({d.year}, {d.month}, {d.day}).strftime('%A')", wd)]
        if i % 2 == 0 and ev != "Wuchang Uprising":
            steps.append(st("Cross-check the weekday with a calendar page.", "web_search",
                            f"calendar {d.strftime('%B')} {d.year}",
                            f"{d.strftime('%B')} {d.year}: the {d.day}th is a {wd}."))
        if ev == "Wuchang Uprising":
            steps.append(st("Confirm the date is Gregorian (China used the lunar calendar officially in 1911).",
                            "web_search", "Wuchang Uprising date Gregorian lunar",
                            "10 October 1911 (Gregorian) = 19th day of the 8th lunar month; celebrated as Double "
                            "Ten Day."))
        reas = ("Took the date from a reference page and computed the weekday with datetime rather than recalling "
                "it. For dates with competing calendars or several candidate events (signing vs entry into force) "
                "the answer states which date was used.")
        good.append(tr(q, sub, steps, reas, ans))
    for a, ya, b, yb in SPANS:
        q = pick(rng, [f"How many years passed between {a} and {b}?", f"How long after {a} did {b} happen?"])
        steps = [st("Look up both years.", "wikipedia", f"{a}; {b}", f"{a}: {ya}; {b}: {yb}"),
                 st("Subtract (both AD, so no year-zero issue).", "calculator", f"{yb} - {ya}", str(yb - ya))]
        good.append(tr(q, "compute the time between historical events", steps,
                       "Looked up both dates separately and subtracted; when one date is BC there is no year 0, "
                       "so an extra year must be removed - not needed here.", f"{yb - ya} years ({ya} to {yb})"))
    bad.append(tr("What day of the week was the Battle of Waterloo?", "find the weekday of a historical date",
                  [st("Look up the date.", "wikipedia", "Battle of Waterloo", "18 June 1815"),
                   st("Recall the weekday.", "web_search", "18 June 1815 day", "snippet: 'on a rainy Saturday "
                      "night before the battle...'")],
                  "Used the weekday mentioned in a search snippet.", "Saturday, 18 June 1815"))
    queries.append(qy("Apollo 11 landed on the Moon on which day of the week?", "weekday of a historic event"))
    queries.append(qy("how many yrs between the battle of hastings and magna carta", "years between two events"))
    queries.append(qy("《联合国宪章》是哪一天生效的？那天是星期几？", "查询历史日期及星期", lang="zh"))
    queries.append(qy("What weekday was it?", "date question from a photo", images=1, caption_only=True,
                      caption="Photo of a memorial plaque reading 'D-Day - 6 June 1944 - Normandy landings'; the "
                              "visitor asks which day of the week that was."))
    queries.append(qy("Count the years from the start of the French Revolution to the Russian October Revolution.",
                      "elapsed time between historical events"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 24. chemistry: molar mass and solutions
# ----------------------------------------------------------------------------------------------------------------
ATOMIC = {"H": 1.008, "C": 12.011, "N": 14.007, "O": 15.999, "Na": 22.990, "Mg": 24.305, "P": 30.974, "S": 32.06,
          "Cl": 35.45, "K": 39.098, "Ca": 40.078, "Mn": 54.938, "Fe": 55.845, "Cu": 63.546}
COMPOUNDS = [
    ("glucose", "C6H12O6", {"C": 6, "H": 12, "O": 6}), ("caffeine", "C8H10N4O2", {"C": 8, "H": 10, "N": 4, "O": 2}),
    ("aspirin (acetylsalicylic acid)", "C9H8O4", {"C": 9, "H": 8, "O": 4}),
    ("sodium bicarbonate", "NaHCO3", {"Na": 1, "H": 1, "C": 1, "O": 3}),
    ("calcium carbonate", "CaCO3", {"Ca": 1, "C": 1, "O": 3}), ("sulfuric acid", "H2SO4", {"H": 2, "S": 1, "O": 4}),
    ("potassium permanganate", "KMnO4", {"K": 1, "Mn": 1, "O": 4}),
    ("copper(II) sulfate pentahydrate", "CuSO4·5H2O", {"Cu": 1, "S": 1, "O": 9, "H": 10}),
    ("ammonium nitrate", "NH4NO3", {"N": 2, "H": 4, "O": 3}),
    ("magnesium sulfate heptahydrate (Epsom salt)", "MgSO4·7H2O", {"Mg": 1, "S": 1, "O": 11, "H": 14}),
    ("iron(III) oxide", "Fe2O3", {"Fe": 2, "O": 3}), ("sucrose", "C12H22O11", {"C": 12, "H": 22, "O": 11}),
]


def molar_mass(comp: dict) -> float:
    return sum(ATOMIC[e] * n for e, n in comp.items())


@family("molar-mass", "chem", "jpg")
def fam_chem(rng):
    good, bad, queries = [], [], []
    for i, (name, formula, comp) in enumerate(COMPOUNDS):
        mm = molar_mass(comp)
        expr = " + ".join(f"{n}*{ATOMIC[e]}" for e, n in comp.items())
        kind = ["mm", "solution", "moles", "mm"][i % 4]
        with_img = i % 5 == 4
        steps = [st("Get the correct formula (watch for hydrates and charges).", "web_search",
                    f"{name} chemical formula PubChem", f"{name}: {formula}")]
        if with_img:
            steps.insert(0, st("Read the label on the reagent bottle.", "ocr", "image_1 (bottle label)",
                               f"{name.upper()} {formula}  ACS reagent  500 g"))
        steps.append(st("Sum standard atomic weights in code.", "python", expr, f"{fmt(mm, 3)} g/mol"))
        if kind == "mm":
            q = pick(rng, [f"What is the molar mass of {name}?", f"Calculate the molecular weight of {formula}.",
                           f"Molar mass of {name} ({formula}) in g/mol?"])
            ans = f"{fmt(mm, 2)} g/mol"
            sub = "compute a molar mass"
        elif kind == "solution":
            vol, conc = pick(rng, [100, 250, 500, 1000]), pick(rng, [0.05, 0.1, 0.2, 0.5, 1.0])
            grams = mm * conc * vol / 1000
            q = f"How many grams of {name} do I need to make {vol} mL of a {fmt(conc)} M solution?"
            steps.append(st("mass = M x c x V, with V in litres.", "calculator", f"{fmt(mm, 3)} * {fmt(conc)} * "
                            f"{vol}/1000", fmt(grams, 3)))
            ans = f"{fmt(grams, 2)} g (molar mass {fmt(mm, 2)} g/mol)"
            sub = "compute mass needed for a molar solution"
        else:
            g = pick(rng, [2.5, 5, 10, 25, 50])
            q = f"How many moles are in {fmt(g)} g of {name}?"
            steps.append(st("n = m / M.", "calculator", f"{fmt(g)} / {fmt(mm, 3)}", fmt(g / mm, 5)))
            ans = f"{fmt(g / mm, 4)} mol (M = {fmt(mm, 2)} g/mol)"
            sub = "convert mass to moles"
        if with_img:
            q = "Using the compound on this bottle: " + q[0].lower() + q[1:]
        reas = ("Confirmed the exact formula first - hydrates such as ·5H2O add a lot of mass and are easy to miss - "
                "then summed IUPAC standard atomic weights in code instead of by hand. Volumes were converted from "
                "mL to L before multiplying, and the result was rounded to sensible significant figures.")
        good.append(tr(q, sub, steps, reas, ans, images=1 if with_img else 0,
                       caption=f"A brown reagent bottle labelled '{name}, {formula}'." if with_img else None))
    bad_mm = molar_mass({"Cu": 1, "S": 1, "O": 4})
    bad.append(tr("How many grams of copper(II) sulfate pentahydrate for 250 mL of 0.1 M solution?",
                  "compute mass needed for a molar solution",
                  [st("Molar mass of CuSO4.", "python", "63.546 + 32.06 + 4*15.999", fmt(bad_mm, 3)),
                   st("Mass.", "calculator", f"{fmt(bad_mm, 3)} * 0.1 * 0.25", fmt(bad_mm * 0.025, 3))],
                  "Computed the molar mass of copper sulfate and multiplied by c and V.",
                  f"{fmt(bad_mm * 0.025, 2)} g"))
    queries.append(qy("What's the molecular weight of ibuprofen (C13H18O2)?", "molecular weight calculation"))
    queries.append(qy("need to make 500ml of 0.25M NaCl, how many grams do i weigh out", "mass for a solution"))
    queries.append(qy("10克柠檬酸（C6H8O7）是多少摩尔？", "质量换算为物质的量", lang="zh"))
    queries.append(qy("Work this out please.", "chemistry calculation", images=1, caption_only=True,
                      caption="Photo of a lab notebook: 'Urea CH4N2O - need 2 L of 0.3 M - mass?'"))
    queries.append(qy("Calculate the formula mass of the hydrated salt sodium carbonate decahydrate, "
                      "Na2CO3·10H2O.", "molar mass of a hydrate"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 25. physics problems with unit conversion
# ----------------------------------------------------------------------------------------------------------------
def _phys(rng, kind):
    if kind == "speed":
        v = pick(rng, [90, 144, 216, 288, 320])
        return (pick(rng, [f"A high-speed train runs at {v} km/h. What is that in metres per second?",
                           f"Convert {v} km/h to m/s for my physics homework."]),
                f"{v} km/h -> m/s", f"{fmt(v / 3.6, 3)} m/s", f"{v} / 3.6", f"{fmt(v / 3.6, 2)} m/s",
                "1 km/h = 1/3.6 m/s")
    if kind == "ke":
        m_g, v = pick(rng, [(145, 150), (58, 200), (430, 110), (160, 140)])
        ke = 0.5 * m_g / 1000 * (v / 3.6) ** 2
        return (f"A {m_g} g ball travels at {v} km/h. What is its kinetic energy in joules?",
                f"{m_g} g -> kg; {v} km/h -> m/s", f"{m_g / 1000} kg; {fmt(v / 3.6, 4)} m/s",
                f"0.5 * {m_g / 1000} * ({fmt(v / 3.6, 4)})**2", f"{fmt(ke, 1)} J",
                "SI units first: grams to kg and km/h to m/s, and the speed is squared")
    if kind == "kettle":
        p, vol, t0 = pick(rng, [1.5, 2.0, 2.2, 3.0]), pick(rng, [0.5, 1.0, 1.5, 1.7]), pick(rng, [10, 15, 20])
        q = vol * 4186 * (100 - t0)
        return (f"How long does a {fmt(p)} kW kettle take to heat {fmt(vol)} L of water from {t0} °C to boiling, "
                "ignoring losses?", f"{fmt(vol)} L water -> kg; {fmt(p)} kW -> W", f"{fmt(vol)} kg; {fmt(p * 1000)} W",
                f"{fmt(vol)} * 4186 * (100 - {t0}) / {fmt(p * 1000)}",
                f"{fmt(q / (p * 1000), 0)} s (about {fmt(q / (p * 1000) / 60, 1)} min)",
                "Q = m c dT with c = 4186 J/(kg K), and kW must become W")
    if kind == "pressure":
        psi = pick(rng, [30, 32, 35, 42, 100])
        return (f"My tyre gauge says {psi} psi. What is that in kPa and in bar?", f"{psi} psi -> kPa",
                f"{fmt(psi * 6.894757, 2)} kPa", f"{fmt(psi * 6.894757, 2)} / 100", f"{fmt(psi * 6.894757, 1)} kPa = "
                f"{fmt(psi * 0.06894757, 2)} bar", "1 psi = 6.894757 kPa and 1 bar = 100 kPa")
    if kind == "torque":
        t = pick(rng, [25, 40, 80, 100, 150])
        return (f"The manual says to tighten the wheel nuts to {t} ft-lb. What is that in newton-metres?",
                f"{t} lbf*ft -> N*m", f"{fmt(t * 1.355818, 2)} N*m", f"{t} * 1.355818", f"{fmt(t * 1.355818, 1)} N*m",
                "ft-lb here means pound-force feet")
    if kind == "energy":
        kwh, price = pick(rng, [2.5, 7.2, 12, 30]), pick(rng, [0.28, 0.32, 0.4])
        return (f"An appliance used {fmt(kwh)} kWh. How many megajoules is that, and what does it cost at "
                f"€{price}/kWh?", f"{fmt(kwh)} kWh -> MJ", f"{fmt(kwh * 3.6, 2)} MJ", f"{fmt(kwh)} * {price}",
                f"{fmt(kwh * 3.6, 2)} MJ; €{fmt(kwh * price, 2)}", "1 kWh = 3.6 MJ")
    if kind == "weight":
        lb = pick(rng, [120, 150, 180, 220])
        n = lb * 0.45359237 * 9.80665
        return (f"What is the weight in newtons of a person whose mass is {lb} lb?", f"{lb} lb -> kg",
                f"{fmt(lb * 0.45359237, 3)} kg", f"{fmt(lb * 0.45359237, 4)} * 9.80665", f"{fmt(n, 0)} N",
                "lb is a mass unit here; weight = m g in SI")
    ly = pick(rng, [4.24, 8.6, 25, 640])
    return (f"A star is {fmt(ly)} light-years away. How far is that in kilometres?", f"{fmt(ly)} ly -> km",
            f"{ly * 9.4607e12:.4e} km", f"{fmt(ly)} * 9.4607e12", f"{ly * 9.4607e12:.3e} km",
            "1 light-year = 9.4607e12 km (a distance, not a time)")


@family("physics-units", "physics", "png")
def fam_physics(rng):
    good, bad, queries = [], [], []
    kinds = ["speed", "ke", "kettle", "pressure", "torque", "energy", "weight", "lightyear", "ke", "kettle", "speed"]
    seen = set()
    for kind in kinds:
        while True:
            q, conv_in, conv_out, expr, ans, key = _phys(rng, kind)
            if q not in seen:
                seen.add(q)
                break
        steps = [st(f"Convert to SI first: {key}.", "unit_converter", conv_in, conv_out),
                 st("Compute with consistent units.", "calculator", expr, ans),
                 st("Dimensional/order-of-magnitude check.", "python", "check units and magnitude", "consistent")]
        reas = (f"Converted every quantity to SI before using any formula ({key}), then computed and checked the "
                "result's units and order of magnitude. Mixing non-SI units inside a formula is the usual source of "
                "errors in these problems.")
        good.append(tr(q, "solve a physics problem with unit conversion", steps, reas, ans))
    bad.append(tr("A 145 g baseball moves at 150 km/h. Kinetic energy?", "solve a physics problem with unit "
                  "conversion", [st("Plug in.", "calculator", "0.5 * 145 * 150**2", "1631250"),
                                 st("Done.", "python", "print(1631250)", "1631250")],
                  "Applied KE = 1/2 m v^2.", "1,631,250 J"))
    queries.append(qy("A sprinter hits 37 km/h. How many m/s is that?", "speed unit conversion"))
    queries.append(qy("bike pump says 6.5 bar, whats that in psi", "pressure conversion"))
    queries.append(qy("功率为800瓦的微波炉把0.3升水从20°C加热到80°C至少需要多少秒？", "物理计算与单位换算",
                      lang="zh"))
    queries.append(qy("Solve the exercise shown.", "physics homework", images=1, caption_only=True,
                      caption="Photo of a physics exercise: 'A car engine delivers 150 hp. Express the power in "
                              "kilowatts.'"))
    queries.append(qy("If I lift a 20 kg box up 10 feet, how much work do I do in joules?", "work/energy with "
                      "imperial units"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 26. distance between cities
# ----------------------------------------------------------------------------------------------------------------
CITIES = {"Paris": (48.8566, 2.3522), "Lyon": (45.7640, 4.8357), "Marseille": (43.2965, 5.3698),
          "Berlin": (52.5200, 13.4050), "Munich": (48.1351, 11.5820), "Hamburg": (53.5511, 9.9937),
          "Madrid": (40.4168, -3.7038), "Barcelona": (41.3874, 2.1686), "Rome": (41.9028, 12.4964),
          "Milan": (45.4642, 9.1900), "Vienna": (48.2082, 16.3738), "Prague": (50.0755, 14.4378),
          "Amsterdam": (52.3676, 4.9041), "Brussels": (50.8503, 4.3517), "London": (51.5074, -0.1278),
          "Edinburgh": (55.9533, -3.1883), "Tokyo": (35.6762, 139.6503), "Osaka": (34.6937, 135.5023),
          "Boston": (42.3601, -71.0589), "New York": (40.7128, -74.0060), "Chicago": (41.8781, -87.6298),
          "Toronto": (43.6532, -79.3832), "Montreal": (45.5017, -73.5673), "Sydney": (-33.8688, 151.2093),
          "Melbourne": (-37.8136, 144.9631), "Lisbon": (38.7223, -9.1393), "Porto": (41.1579, -8.6291)}


def haversine(a: str, b: str) -> float:
    (la1, lo1), (la2, lo2) = CITIES[a], CITIES[b]
    p1, p2 = math.radians(la1), math.radians(la2)
    dp, dl = p2 - p1, math.radians(lo2 - lo1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


@family("city-distance", "map", "png")
def fam_distance(rng):
    good, bad, queries = [], [], []
    pairs = [("Paris", "Lyon"), ("Berlin", "Munich"), ("Madrid", "Barcelona"), ("Rome", "Milan"),
             ("Vienna", "Prague"), ("Amsterdam", "Brussels"), ("London", "Edinburgh"), ("Tokyo", "Osaka"),
             ("Boston", "New York"), ("Toronto", "Montreal"), ("Sydney", "Melbourne")]
    for i, (a, b) in enumerate(pairs):
        gc = haversine(a, b)
        road = gc * rng.uniform(1.15, 1.35)
        hours = road / rng.uniform(78, 92)
        kind = ["crow", "drive", "miles"][i % 3]
        with_img = i % 4 == 3
        steps = [st("Geocode both city centres.", "map_lookup", f"geocode '{a}'; geocode '{b}'",
                    f"{a}: {CITIES[a][0]}, {CITIES[a][1]}; {b}: {CITIES[b][0]}, {CITIES[b][1]}")]
        if with_img:
            steps.insert(0, st("Read the two pinned places on the map screenshot.", "ocr", "image_1 (map)",
                               f"Pins labelled '{a}' and '{b}'"))
        if kind in ("crow", "miles"):
            steps.append(st("Great-circle (haversine) distance, R = 6371 km.", "python",
                            f"haversine(({CITIES[a][0]}, {CITIES[a][1]}), ({CITIES[b][0]}, {CITIES[b][1]}))",
                            f"{fmt(gc, 1)} km"))
            if kind == "miles":
                steps.append(st("Convert to miles.", "unit_converter", f"{fmt(gc, 1)} km -> mi",
                                f"{fmt(gc / 1.609344, 1)} mi"))
                q = pick(rng, [f"How many miles is it from {a} to {b} in a straight line?",
                               f"Straight-line distance between {a} and {b} in miles?"])
                ans = f"About {fmt(gc / 1.609344, 0)} miles ({fmt(gc, 0)} km) as the crow flies"
            else:
                q = pick(rng, [f"How far is {a} from {b} as the crow flies?",
                               f"What's the straight-line distance between {a} and {b} in km?"])
                ans = f"About {fmt(gc, 0)} km (great-circle distance between city centres)"
        else:
            steps.append(st("Driving distance needs a route, not the straight line.", "map_lookup",
                            f"route {a} -> {b}, mode=driving",
                            f"Fastest route: {fmt(road, 0)} km, {int(hours)} h {int(hours % 1 * 60):02d} min"))
            q = pick(rng, [f"How long is the drive from {a} to {b}, and how many kilometres?",
                           f"What's the road distance between {a} and {b} by car, and the driving time?"])
            ans = (f"About {fmt(road, 0)} km by road, roughly {int(hours)} h {int(hours % 1 * 60):02d} min without "
                   f"stops (straight line {fmt(gc, 0)} km)")
        if with_img:
            q = "Using the two pins on this map: " + q[0].lower() + q[1:]
        reas = ("Geocoded both cities to their centres and used the haversine formula for straight-line distance; "
                "for driving questions the routing service was used instead, because road distance is typically "
                "15-35% longer. Units (km vs miles) were converted only at the end.")
        good.append(tr(q, "compute the distance between two cities", steps, reas, ans, images=1 if with_img else 0,
                       caption=f"A map screenshot with pins on {a} and {b}." if with_img else None))
    gc = haversine("Lisbon", "Porto")
    bad.append(tr("How long is the drive from Lisbon to Porto?", "compute the distance between two cities",
                  [st("Geocode.", "map_lookup", "Lisbon; Porto", "38.72,-9.14; 41.16,-8.63"),
                   st("Distance.", "python", "haversine(...)", f"{fmt(gc, 1)} km")],
                  "Computed the distance between the two cities.", f"{fmt(gc, 0)} km, about 3 hours"))
    queries.append(qy("What's the great-circle distance from Hamburg to Munich?", "straight-line distance between "
                      "two cities"))
    queries.append(qy("driving marseille to barcelona, how many km and hours roughly?", "road trip distance and "
                      "time"))
    queries.append(qy("芝加哥到纽约的直线距离是多少公里？合多少英里？", "计算两城市之间的距离", lang="zh"))
    queries.append(qy("How far apart are these?", "distance from a map", images=1, caption_only=True,
                      caption="Map screenshot with two pins labelled 'Bristol' and 'Newcastle'; the user wants the "
                              "straight-line distance in miles."))
    queries.append(qy("I'm planning to drive from Porto down to Lisbon - what distance and time should I expect?",
                      "estimate driving distance and time"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 27. weather history - all observations are synthetic
# ----------------------------------------------------------------------------------------------------------------
WEATHER_CITIES = [("Oslo", "Oslo-Blindern", -4, 22), ("Madrid", "Madrid-Barajas", 6, 34),
                  ("Chicago", "Chicago O'Hare", -6, 29), ("Tokyo", "Tokyo (JMA)", 5, 32),
                  ("Melbourne", "Melbourne Olympic Park", 10, 30), ("Cairo", "Cairo Intl", 14, 38),
                  ("Vancouver", "Vancouver Intl", 2, 24), ("Mumbai", "Mumbai Santacruz", 24, 34),
                  ("Berlin", "Berlin-Tempelhof", -2, 28), ("Buenos Aires", "Aeroparque", 9, 31),
                  ("Seoul", "Seoul (KMA 108)", -5, 31)]


@family("weather-history", "weather", "png")
def fam_weather(rng):
    good, bad, queries = [], [], []
    for i, (city, station, lo, hi) in enumerate(WEATHER_CITIES):
        d = date(2018, 1, 1) + timedelta(days=rng.randint(0, 5 * 365))
        kind = ["max", "rain_week", "snow", "avg"][i % 4]
        days = [d + timedelta(days=k) for k in range(7)]
        peak = 15 if city in ("Melbourne", "Buenos Aires") else 200  # day of year of the warmest weather
        season = lo + (hi - lo) * (0.5 + 0.5 * math.cos(2 * math.pi * (d.timetuple().tm_yday - peak) / 365))
        tmax = [round(season + rng.gauss(0, 1.8), 1) for _ in days]
        wet = {"Cairo": 0.05, "Madrid": 0.5, "Mumbai": 2.0}.get(city, 1.0)
        rain = [round(max(0.0, rng.gauss(1.5, 4)) * wet, 1) for _ in days]
        table = "; ".join(f"{x.isoformat()}: max {t} °C, precip {r} mm" for x, t, r in zip(days, tmax, rain,
                                                                                              strict=True))
        steps = [st("Find a historical weather archive with station data.", "web_search",
                    f"{city} weather history {d.isoformat()}", f"meteostat.net and timeanddate.com archives; "
                    f"station {station}"),
                 st(f"Open the daily records for {station} (the airport/official station, local days).",
                    "browse_webpage", f"meteostat daily data, {station}, {days[0].isoformat()} to "
                    f"{days[-1].isoformat()}", table)]
        if kind == "max":
            q = pick(rng, [f"What was the maximum temperature in {city} on {_longdate(d)}?",
                           f"How hot did it get in {city} on {d.isoformat()}?"])
            ans = f"{tmax[0]} °C ({fmt(tmax[0] * 9 / 5 + 32, 1)} °F) at {station}"
        elif kind == "rain_week":
            tot = round(sum(rain), 1)
            steps.append(st("Sum the daily precipitation in code.", "python", f"sum({rain})", fmt(tot, 1)))
            q = f"How much rain fell in {city} in the week starting {_longdate(d)}?"
            ans = f"{fmt(tot, 1)} mm over {days[0].isoformat()} - {days[-1].isoformat()} ({station})"
        elif kind == "snow":
            snowed = tmax[0] < 2 and rain[0] > 0
            q = f"Did it snow in {city} on {_longdate(d)}?"
            steps.append(st("Check the present-weather codes, not just temperature.", "browse_webpage",
                            f"timeanddate hourly observations {city} {d.isoformat()}",
                            "Observed: light snow 06:00-11:00" if snowed else
                            f"No snow reported; {'rain' if rain[0] else 'dry'}, max {tmax[0]} °C"))
            ans = (f"Yes - light snow in the morning (max {tmax[0]} °C, {rain[0]} mm precipitation)" if snowed else
                   f"No - {'rain' if rain[0] else 'no precipitation'}, max {tmax[0]} °C")
        else:
            avg = round(sum(tmax) / len(tmax), 1)
            steps.append(st("Average the daily maxima.", "python", f"mean({tmax})", fmt(avg, 1)))
            q = pick(rng, [f"What was the average daily high in {city} during the week of {_longdate(d)}?",
                           f"Average maximum temperature in {city} for {days[0].isoformat()} to "
                           f"{days[-1].isoformat()}?"])
            ans = f"{fmt(avg, 1)} °C (mean of 7 daily maxima at {station})"
        reas = ("Used station data from a historical archive rather than a forecast site, naming the station "
                "(usually the airport) because city-centre and airport readings differ. Daily values were "
                "aggregated in code, and units were reported in °C with °F or mm where useful.")
        good.append(tr(q, "look up historical weather", steps, reas, ans))
    bad.append(tr("What was the high temperature in Chicago on 3 July 2021?", "look up historical weather",
                  [st("Search.", "web_search", "Chicago weather July 3", "Chicago 10-day forecast: Sat 3 Jul high "
                      "84°F"),
                   st("Convert.", "unit_converter", "84 F -> C", "28.9 C")],
                  "Used the weather page result for that date.", "28.9 °C"))
    queries.append(qy("What was the high in Lisbon on 14 August 2022?", "past daily maximum temperature"))
    queries.append(qy("was it raining in dublin on my wedding day (june 10 2023)? how much?", "historical "
                      "rainfall on a date"))
    queries.append(qy("2021年2月13日北京下雪了吗？当天最高气温是多少？", "查询历史天气", lang="zh"))
    queries.append(qy("Can you look this up?", "weather lookup", images=1, caption_only=True,
                      caption="Photo of an old diary entry 'Sydney, 1 Jan 2020 - so hot!' with the question 'how "
                              "hot was it that day really?'"))
    queries.append(qy("Total precipitation in Paris for the week starting 5 March 2019, please.",
                      "weekly rainfall total"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 28. book author / year lookup
# ----------------------------------------------------------------------------------------------------------------
BOOKS = [
    ("One Hundred Years of Solitude", "Gabriel García Márquez", "1967", "Cien años de soledad", "Spanish"),
    ("Things Fall Apart", "Chinua Achebe", "1958", None, "English"),
    ("The Remains of the Day", "Kazuo Ishiguro", "1989", None, "English"),
    ("Beloved", "Toni Morrison", "1987", None, "English"),
    ("The Master and Margarita", "Mikhail Bulgakov", "1966-1967 (serialised in the magazine Moskva; written "
     "1928-1940, published posthumously)",
     "Мастер и Маргарита", "Russian"),
    ("Norwegian Wood", "Haruki Murakami", "1987", "ノルウェイの森", "Japanese"),
    ("Frankenstein", "Mary Shelley", "1818", None, "English"),
    ("The Name of the Rose", "Umberto Eco", "1980", "Il nome della rosa", "Italian"),
    ("Brave New World", "Aldous Huxley", "1932", None, "English"),
    ("The Three-Body Problem", "Liu Cixin", "2008 in book form (serialised 2006)", "三体", "Chinese"),
    ("Pedro Páramo", "Juan Rulfo", "1955", None, "Spanish"),
    ("The Left Hand of Darkness", "Ursula K. Le Guin", "1969", None, "English"),
]


@family("book-lookup", "cover", "jpg")
def fam_book(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for i, (title, author, year, orig, lang) in enumerate(BOOKS):
        with_img = i % 3 == 1
        if with_img:
            q = deck("img", ["Who wrote the book in this photo and when was it first published?",
                             "What's this book, who is the author, and what year did it come out?",
                             "Found this paperback on a train - author and original publication year?",
                             "For my book club list: who wrote the novel on this cover, and when was it first out?"])
        else:
            q = pick(rng, [f"Who wrote '{title}' and in what year was it first published?",
                           f"When was {title} first published, and by whom?",
                           f"I need the author and original publication year of {title} for a bibliography."])
        steps = []
        if with_img:
            steps.append(st("Read title and author from the cover.", "ocr", "image_1 (book cover)",
                            f"'{orig or title}' ... {author.upper()}" + (" (translated edition)" if orig else "")))
        steps.append(st("Look up the first publication (original language), not this edition's date.", "wikipedia",
                        title, f"{title}{f' ({orig})' if orig else ''}: novel by {author}, first published {year}"
                        + (f" in {lang}." if orig else ".")))
        steps.append(st("Cross-check with a library catalogue.", "web_search", f"{title} {author} first edition",
                        f"WorldCat/Open Library: first edition {year.split(' ')[0]}."))
        reas = ("Took the first publication date of the original work (not the date printed in a translation or "
                "reprint) from a reference page and confirmed it in a library catalogue. For translated books the "
                "original title and language are given too, since the cover may show only the translation.")
        ans = f"{author}; first published {year}" + (f" (original title: {orig})" if orig else "")
        good.append(tr(q, "look up a book's author and publication year", steps, reas, ans,
                       images=1 if with_img else 0,
                       caption=f"Photo of a paperback cover of '{title}' by {author}." if with_img else None))
    bad.append(tr("When was 'The Master and Margarita' first published?", "look up a book's author and publication "
                  "year", [st("Search.", "web_search", "The Master and Margarita published", "Penguin Classics "
                              "edition, 2016"),
                           st("Check author.", "wikipedia", "Mikhail Bulgakov", "Bulgakov (1891-1940)")],
                  "Took the publication date from the bookshop listing.", "2016, by Mikhail Bulgakov"))
    queries.append(qy("Who is the author of Dune and when did it first come out?", "book author and year"))
    queries.append(qy("who wrote the bell jar?? and what year", "find a novel's author"))
    queries.append(qy("小说《蝴蝶梦》（Rebecca）的作者是谁？哪一年首次出版？", "查询书籍作者和出版年份",
                      lang="zh"))
    queries.append(qy("Tell me about this book.", "identify a book from its cover", images=1, caption_only=True,
                      caption="Photo of a worn paperback cover showing 'NEUROMANCER' and a neon cityscape; the user "
                              "asks who wrote it and its first publication year."))
    queries.append(qy("For my reading list I need the original publication year and author of 'Invisible Man' "
                      "(the novel, not the H.G. Wells one).", "disambiguate and look up a book"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 29. movie cast lookup
# ----------------------------------------------------------------------------------------------------------------
MOVIES = [
    ("Inception", "2010", "Christopher Nolan", "Dom Cobb", "Leonardo DiCaprio"),
    ("Parasite", "2019", "Bong Joon-ho", "Kim Ki-taek", "Song Kang-ho"),
    ("The Godfather", "1972", "Francis Ford Coppola", "Vito Corleone", "Marlon Brando"),
    ("Amélie", "2001", "Jean-Pierre Jeunet", "Amélie Poulain", "Audrey Tautou"),
    ("Pan's Labyrinth", "2006", "Guillermo del Toro", "Ofelia", "Ivana Baquero"),
    ("Arrival", "2016", "Denis Villeneuve", "Louise Banks", "Amy Adams"),
    ("Mad Max: Fury Road", "2015", "George Miller", "Imperator Furiosa", "Charlize Theron"),
    ("Casablanca", "1942", "Michael Curtiz", "Rick Blaine", "Humphrey Bogart"),
    ("Crouching Tiger, Hidden Dragon", "2000", "Ang Lee", "Li Mu Bai", "Chow Yun-fat"),
    ("Everything Everywhere All at Once", "2022", "Daniel Kwan and Daniel Scheinert", "Evelyn Quan Wang",
     "Michelle Yeoh"),
    ("The Grand Budapest Hotel", "2014", "Wes Anderson", "M. Gustave", "Ralph Fiennes"),
    ("Get Out", "2017", "Jordan Peele", "Chris Washington", "Daniel Kaluuya"),
]


@family("movie-cast", "poster", "jpg")
def fam_movie(rng):
    good, bad, queries = [], [], []
    for i, (film, year, director, role, actor) in enumerate(MOVIES):
        kind = ["role", "director", "role"][i % 3]
        with_img = i % 4 == 2
        if kind == "role":
            q = pick(rng, [f"Who played {role} in {film}?", f"Which actor portrays {role} in the {year} film {film}?"])
            if with_img:
                q = f"Who plays {role} in the film on this poster?"
            ans = f"{actor} ({film}, {year}, dir. {director})"
        else:
            q = pick(rng, [f"Who directed {film} and who is the lead actor?",
                           f"{film}: director and star?"])
            if with_img:
                q = "Which film is this poster for, who directed it and who stars in it?"
            ans = f"Directed by {director}; lead: {actor} as {role} ({year})"
        steps = []
        if with_img:
            steps.append(st("Identify the film from the poster text/art.", "image_search", "image_1 (movie poster)",
                            f"Poster matches '{film}' ({year})"))
        steps.append(st("Disambiguate remakes/same-title films by year, then open the cast list.", "web_search",
                        f"{film} {year} cast", f"{film} ({year}) - full cast & crew (IMDb, Wikipedia)"))
        steps.append(st("Read the credited cast and director.", "browse_webpage", f"{film} ({year}) full credits",
                        f"Director: {director}. Cast: {actor} ... {role}; ..."))
        reas = ("Pinned down the exact film by title and year first (remakes and same-title films are common), then "
                "read the role from the credited cast list rather than from a plot summary, which often names "
                "characters without actors.")
        good.append(tr(q, "look up a film's cast or director", steps, reas, ans, images=1 if with_img else 0,
                       caption=f"A movie poster for '{film}' ({year})." if with_img else None))
    bad.append(tr("Who played Vito Corleone in The Godfather?", "look up a film's cast or director",
                  [st("Search.", "web_search", "Vito Corleone actor", "Robert De Niro won an Oscar for playing young "
                      "Vito Corleone in The Godfather Part II"),
                   st("Answer.", "browse_webpage", "news snippet", "De Niro as Vito Corleone")],
                  "Took the actor from the search snippet.", "Robert De Niro"))
    queries.append(qy("Which actress was Clarice Starling in The Silence of the Lambs?", "actor for a character"))
    queries.append(qy("who directed oldboy (the korean one) and who's the main guy", "director and lead actor"))
    queries.append(qy("电影《黑天鹅》里妮娜·塞耶斯是谁演的？导演是谁？", "查询电影演员和导演", lang="zh"))
    queries.append(qy("Who's in this?", "identify a film and its cast", images=1, caption_only=True,
                      caption="A poster showing a young woman in a white Mexican-style dress with the title 'ROMA' "
                              "and '2018'; the user asks for the director and lead actress."))
    queries.append(qy("In the 1994 film Léon: The Professional, which actress played Mathilda?",
                      "find the actor for a role"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 30. stock price on a date - fictional companies, synthetic prices
# ----------------------------------------------------------------------------------------------------------------
STOCKS = [("Harborline Logistics", "HBLN"), ("Quillfeather Software", "QFS"), ("Mirador Mining", "MRDM"),
          ("Brightwell Energy", "BRWE"), ("Tessaly Pharma", "TSLP"), ("Oakhurst Retail", "OAKR"),
          ("Cobalt Peak Semiconductors", "CPKS"), ("Verdant Foods", "VRDF"), ("Northwind Robotics", "NWRB"),
          ("Silverline Telecom", "SLTC"), ("Aurelia Airlines", "AURA")]


@family("stock-price", "stock", "png")
def fam_stock(rng):
    good, bad, queries = [], [], []
    for i, (name, tick) in enumerate(STOCKS):
        d1 = date(2020, 1, 6) + timedelta(days=rng.randint(0, 1200))
        while d1.weekday() >= 5:
            d1 += timedelta(days=1)
        d2 = d1 + timedelta(days=rng.randint(30, 400))
        while d2.weekday() >= 5:
            d2 += timedelta(days=1)
        p1 = round(rng.uniform(12, 240), 2)
        p2 = round(p1 * rng.uniform(0.6, 1.7), 2)
        kind = ["close", "change", "split"][i % 3]
        steps = [st("Confirm the ticker and exchange.", "web_search", f"{name} stock ticker",
                    f"{name} trades as {tick} (NASDAQ)")]
        if kind == "close":
            q = pick(rng, [f"What was {name}'s closing share price on {d1.isoformat()}?",
                           f"How much did one {tick} share close at on {_longdate(d1)}?"])
            adj = round(p1 * rng.uniform(0.93, 0.99), 2)
            steps.append(st("Open the historical prices table for that date.", "browse_webpage",
                            f"historical prices {tick}, {d1.isoformat()}",
                            f"{d1.isoformat()}: open {fmt(p1 * 0.99)} high {fmt(p1 * 1.01)} low {fmt(p1 * 0.98)} "
                            f"close {fmt(p1)} adj close {fmt(adj)}"))
            ans = f"${fmt(p1)} (raw close; dividend-adjusted close ${fmt(adj)})"
        elif kind == "change":
            pct = (p2 - p1) / p1 * 100
            q = f"By what percentage did {tick} stock change between {d1.isoformat()} and {d2.isoformat()}?"
            steps.append(st("Get closes for both dates from the same source.", "browse_webpage",
                            f"historical prices {tick} {d1.isoformat()}, {d2.isoformat()}",
                            f"{d1.isoformat()} close {fmt(p1)}; {d2.isoformat()} close {fmt(p2)} (adjusted)"))
            steps.append(st("Percent change with the earlier close as base.", "python",
                            f"({fmt(p2)} - {fmt(p1)}) / {fmt(p1)} * 100", fmt(pct, 2)))
            ans = f"{'+' if pct >= 0 else ''}{fmt(pct, 1)}% (${fmt(p1)} -> ${fmt(p2)}, adjusted closes)"
        else:
            ratio = pick(rng, [2, 3, 4])
            split_d = d1 + timedelta(days=(d2 - d1).days // 2)
            p2s = round(p2 / ratio, 2)
            pct = (p2s * ratio - p1) / p1 * 100
            q = (f"{name} ({tick}) closed at ${fmt(p1)} on {d1.isoformat()} and around ${fmt(p2s)} on "
                 f"{d2.isoformat()}. Did the stock really fall that much?")
            steps.append(st("A big drop may be a split; check corporate actions.", "web_search",
                            f"{tick} stock split", f"{ratio}-for-1 split effective {split_d.isoformat()}"))
            steps.append(st("Compare split-adjusted prices.", "python", f"({fmt(p2s)} * {ratio} - {fmt(p1)}) / "
                            f"{fmt(p1)} * 100", fmt(pct, 2)))
            ans = (f"No - there was a {ratio}-for-1 split on {split_d.isoformat()}. Split-adjusted, the change is "
                   f"{'+' if pct >= 0 else ''}{fmt(pct, 1)}%")
        reas = ("Confirmed the ticker, then took prices from a historical-data table for the exact dates (trading "
                "days only). Raw vs adjusted closes were kept apart, and any large jump was checked against "
                "corporate actions (splits, dividends) before interpreting it.")
        good.append(tr(q, "look up a stock price on a date", steps, reas, ans))
    bad.append(tr("What was Verdant Foods (VRDF) closing price on Saturday 2022-03-12?", "look up a stock price on "
                  "a date", [st("Open history.", "browse_webpage", "VRDF history", "2022-03-11 close 48.20; "
                                "2022-03-14 close 47.05"),
                             st("Pick nearest.", "python", "next trading day", "2022-03-14: 47.05")],
                  "Took the next available close.", "$47.05 on 2022-03-12"))
    queries.append(qy("What did Redfern Shipping shares close at on 2023-05-17? (ticker RDFS)", "closing price "
                      "lookup"))
    queries.append(qy("how much did pinecrest biotech stock go up from jan 3 2022 to jan 3 2023 in %?",
                      "stock percent change"))
    queries.append(qy("坦马林酒店集团（TMRH）2021年9月1日的收盘价是多少？", "查询某日股票收盘价", lang="zh"))
    queries.append(qy("Explain the drop.", "stock price question", images=1, caption_only=True,
                      caption="Screenshot of a price chart for Kestrel Analytics (KSTA) that halves overnight in "
                              "June 2022; the user asks whether the company lost half its value."))
    queries.append(qy("Find Lumen Ridge Capital's (LMRC) closing share price on the last trading day of 2021.",
                      "price on a specific trading day"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 31. research paper lookup
# ----------------------------------------------------------------------------------------------------------------
PAPERS = [
    ("Attention Is All You Need", "Ashish Vaswani", "NeurIPS (NIPS) 2017", "2017 (arXiv June 2017)", 8),
    ("BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding", "Jacob Devlin",
     "NAACL 2019", "arXiv October 2018", 4),
    ("Deep Residual Learning for Image Recognition", "Kaiming He", "CVPR 2016", "arXiv December 2015", 4),
    ("ImageNet Classification with Deep Convolutional Neural Networks", "Alex Krizhevsky", "NIPS 2012",
     "no arXiv version; NIPS proceedings 2012", 3),
    ("Adam: A Method for Stochastic Optimization", "Diederik P. Kingma", "ICLR 2015", "arXiv December 2014", 2),
    ("Generative Adversarial Nets", "Ian Goodfellow", "NIPS 2014", "arXiv June 2014", 8),
    ("Batch Normalization: Accelerating Deep Network Training by Reducing Internal Covariate Shift", "Sergey Ioffe",
     "ICML 2015", "arXiv February 2015", 2),
    ("U-Net: Convolutional Networks for Biomedical Image Segmentation", "Olaf Ronneberger", "MICCAI 2015",
     "arXiv May 2015", 3),
    ("Mastering the game of Go with deep neural networks and tree search", "David Silver", "Nature, 2016",
     "Nature, January 2016", 20),
    ("Long Short-Term Memory", "Sepp Hochreiter", "Neural Computation, 1997", "Neural Computation 9(8), 1997", 2),
    ("Highly accurate protein structure prediction with AlphaFold", "John Jumper", "Nature, 2021",
     "Nature, July 2021 (online)", 34),
]


@family("paper-lookup", "paper", "png")
def fam_paper(rng):
    good, bad, queries = [], [], []
    for i, (title, first, venue, pre, n_auth) in enumerate(PAPERS):
        kind = ["venue", "first", "count"][i % 3]
        short = title.split(":")[0]
        if kind == "venue":
            q = pick(rng, [f"Where and when was the paper '{title}' published?",
                           f"Which conference or journal published '{short}', and in what year?"])
            ans = f"{venue} (first author {first}; preprint: {pre})"
        elif kind == "first":
            q = pick(rng, [f"Who is the first author of '{short}'?", f"First author and year of the '{short}' paper?"])
            ans = f"{first}; published at {venue}"
        else:
            q = f"How many authors does '{short}' have, and who is listed first?"
            ans = f"{n_auth} authors, first author {first} ({venue})"
        steps = [st("Find the paper's bibliographic record.", "web_search", f"\"{title}\"",
                    f"dblp / Semantic Scholar / publisher page for '{title}'; also an arXiv preprint ({pre})"),
                 st("Read venue, year and author list from dblp or the publisher, not from the preprint.",
                    "browse_webpage", f"dblp record: {short}",
                    f"Authors ({n_auth}): {first}, ...; Venue: {venue}")]
        if kind == "venue":
            steps.append(st("Confirm on the proceedings/DOI page that the peer-reviewed version carries this year.",
                            "browse_webpage", f"publisher or proceedings page for '{short}'",
                            f"Published in {venue}."))
        elif kind == "count":
            steps.append(st("Count the authors from the record rather than the 'et al.' citation.", "python",
                            "len(record['authors'])", str(n_auth)))
        reas = ("Used the bibliographic record (dblp/publisher) for venue, year and author order, because the "
                "arXiv preprint often has a different year than the peer-reviewed version and citation aggregators "
                "sometimes reorder or truncate author lists.")
        good.append(tr(q, "look up a paper's venue, year or authors", steps, reas, ans))
    bad.append(tr("In which year was the BERT paper published, and at which venue?", "look up a paper's venue, year "
                  "or authors", [st("Search.", "web_search", "BERT paper", "arXiv:1810.04805 (Oct 2018)"),
                                 st("Open.", "browse_webpage", "arxiv.org/abs/1810.04805", "Submitted 11 Oct 2018")],
                  "Used the arXiv listing.", "2018, arXiv"))
    queries.append(qy("Which venue published 'Denoising Diffusion Probabilistic Models' and when?",
                      "find a paper's venue and year"))
    queries.append(qy("the vision transformer paper (16x16 words) - first author + where was it published?",
                      "first author and venue of a paper"))
    queries.append(qy("论文《Sequence to Sequence Learning with Neural Networks》发表在哪个会议？"
                      "哪一年？第一作者是谁？",
                      "查询论文的发表信息", lang="zh"))
    queries.append(qy("Reference details please.", "paper citation details", images=1, caption_only=True,
                      caption="Screenshot of a slide citing 'You Only Look Once: Unified, Real-Time Object "
                              "Detection'; the user needs the venue, year and number of authors for the bibliography."))
    queries.append(qy("I want to cite the dropout paper by Srivastava et al. properly - which journal and year?",
                      "bibliographic lookup for a paper"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 32. company headquarters lookup
# ----------------------------------------------------------------------------------------------------------------
COMPANIES = [
    ("Nestlé", "Vevey, Switzerland", "food and beverages", "a bird's nest logo"),
    ("Samsung Electronics", "Suwon, South Korea", "electronics", "a blue oval wordmark"),
    ("Toyota Motor Corporation", "Toyota City, Aichi, Japan", "automobiles", "three overlapping ellipses"),
    ("Siemens", "Munich, Germany", "industrial technology", "a teal wordmark"),
    ("Philips", "Amsterdam, the Netherlands", "health technology", "a shield with stars and waves"),
    ("Novo Nordisk", "Bagsværd, Denmark", "pharmaceuticals", "a blue Apis bull"),
    ("The LEGO Group", "Billund, Denmark", "toys", "white letters in a red square"),
    ("Nokia", "Espoo, Finland", "telecommunications equipment", "a blue wordmark"),
    ("Adidas", "Herzogenaurach, Germany", "sportswear", "three stripes forming a mountain"),
    ("Ferrari", "Maranello, Italy", "sports cars", "a prancing horse on yellow"),
    ("Michelin", "Clermont-Ferrand, France", "tyres", "the Michelin Man (Bibendum)"),
    ("Nintendo", "Kyoto, Japan", "video games", "a red rounded wordmark"),
]


@family("company-hq", "logo", "png")
def fam_company(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for i, (co, hq, ind, logo) in enumerate(COMPANIES):
        with_img = i % 3 == 2
        if with_img:
            q = deck("img", ["Whose logo is this, and where is the company headquartered?",
                             "Which company uses this logo and in which city is its head office?",
                             "I keep seeing this logo - which company is it and where is it based?",
                             "Identify the brand in the image and give its headquarters city."])
        else:
            q = pick(rng, [f"Where is {co} headquartered?", f"In which city is the head office of {co}?",
                           f"What city and country is {co}'s global headquarters in?"])
        steps = []
        if with_img:
            steps.append(st("Identify the brand from the logo.", "image_search", "image_1 (logo)",
                            f"Logo matches {co} ({logo})"))
        steps.append(st("Get the registered/global headquarters, not the largest office or a regional HQ.",
                        "wikipedia", co, f"{co} - {ind}; headquarters: {hq}"))
        steps.append(st("Confirm on the company's own site (about / contact / annual report).", "browse_webpage",
                        f"{co} investor relations - company address", f"Head office: {hq}"))
        reas = ("Took the headquarters from the infobox and confirmed it with the company's own annual report or "
                "contact page, to avoid confusing the global HQ with big regional offices or subsidiaries (and "
                "with similarly named companies). The answer gives city and country.")
        good.append(tr(q, "look up a company's headquarters", steps, reas, f"{co}: {hq}",
                       images=1 if with_img else 0, caption=f"A company logo: {logo}." if with_img else None))
    bad.append(tr("Where is Samsung Electronics headquartered?", "look up a company's headquarters",
                  [st("Search.", "web_search", "Samsung headquarters", "Samsung Town, Seoul (Samsung Group "
                      "offices)"),
                   st("Answer.", "browse_webpage", "news snippet", "Samsung's Seoul headquarters...")],
                  "Used the news snippet.", "Seoul, South Korea"))
    queries.append(qy("Where's the head office of Volvo Cars?", "company head office location"))
    queries.append(qy("infosys hq is in which city?", "find where a company is based"))
    queries.append(qy("华为的总部在哪个城市？", "查询公司总部所在地", lang="zh"))
    queries.append(qy("Which company is this?", "identify a company from its logo", images=1, caption_only=True,
                      caption="A green bottle label with a red star and the wordmark of a Dutch brewery; the user "
                              "asks which company it is and where its headquarters are."))
    queries.append(qy("Aircraft maker Embraer - what city is it headquartered in?", "company headquarters lookup"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 33. nutrition label reading
# ----------------------------------------------------------------------------------------------------------------
FOODS = [  # food, serving size (g), servings per container options
    ("granola", 45, [8, 10, 12]), ("peanut butter", 32, [14, 15]), ("tortilla chips", 28, [8, 10, 11]),
    ("oat milk", 240, [4, 4.5]), ("greek yogurt", 170, [1, 4, 5]), ("dark chocolate bar", 40, [2, 2.5]),
    ("frozen pizza", 125, [3, 3.5]), ("protein bar", 60, [1]), ("breakfast cereal", 40, [9, 12, 14]),
    ("hummus", 30, [6, 8, 10]), ("instant noodles", 85, [1, 2])]


@family("nutrition-label", "label", "jpg")
def fam_nutrition(rng):
    good, bad, queries = [], [], []
    for i, (food, serving, options) in enumerate(FOODS):
        servings = pick(rng, options)
        kcal = rng.randint(90, 290)
        sugar = round(rng.uniform(0.5, 18), 1)
        protein = round(rng.uniform(1, 20), 1)
        sodium = rng.randint(40, 820)
        label = (f"Serving size {serving} g; servings per container about {fmt(servings)}; per serving: {kcal} kcal, "
                 f"sugars {sugar} g, protein {protein} g, sodium {sodium} mg")
        kind = ["package", "portion", "per100", "dv", "package", "portion"][i % 6]
        if kind == "package":
            q = pick(rng, [f"How many calories are in the whole package of this {food}?",
                           f"If I eat the entire container of {food}, how many calories is that?"])
            calc, res = f"{kcal} * {fmt(servings)}", kcal * servings
            ans = f"About {fmt(res, 0)} kcal ({kcal} kcal x {fmt(servings)} servings)"
        elif kind == "portion":
            g = pick(rng, [50, 60, 75, 100, 200])
            res = sugar * g / serving
            q = f"How much sugar is in {g} g of this {food}, according to the label?"
            calc = f"{sugar} * {g} / {serving}"
            ans = f"{fmt(res, 1)} g of sugar in {g} g ({sugar} g per {serving} g serving)"
        elif kind == "per100":
            res = protein * 100 / serving
            q = f"What's the protein content per 100 g of this {food}?"
            calc = f"{protein} * 100 / {serving}"
            ans = f"{fmt(res, 1)} g protein per 100 g"
        else:
            res = sodium / 2300 * 100
            q = f"What percentage of the daily sodium limit is one serving of this {food}?"
            calc = f"{sodium} / 2300 * 100"
            ans = f"{fmt(res, 0)}% of the 2,300 mg daily value ({sodium} mg per serving)"
        steps = [st("Read the nutrition facts panel, including serving size and servings per container.", "ocr",
                    "image_1 (nutrition label)", label),
                 st("Scale from the per-serving values; the label is not per package.", "calculator", calc,
                    fmt(res, 2))]
        if kind == "dv":
            steps.insert(1, st("Check the reference daily value for sodium.", "web_search", "FDA daily value sodium",
                               "Daily Value for sodium: 2,300 mg"))
        reas = ("Read serving size and servings per container before any number: label values are per serving, "
                "and 'about N servings' means the package total is approximate. Quantities were scaled "
                "proportionally by grams, and daily-value percentages used the FDA reference amount.")
        good.append(tr(q, "read and scale values from a nutrition label", steps, reas, ans, images=1,
                       caption=f"Photo of the nutrition facts panel on a {food} package."))
    bad.append(tr("How many calories are in this whole bag of chips?", "read and scale values from a nutrition label",
                  [st("Read label.", "ocr", "image_1", "Serving size 28 g; servings per container 8; 150 kcal per "
                      "serving"),
                   st("Answer.", "calculator", "150", "150")],
                  "Read the calories from the label.", "150 kcal", images=1))
    queries.append(qy("How many grams of protein per 100 g does this yogurt cup have?", "protein per 100 g from a "
                      "label", images=1, caption="Nutrition panel: serving 170 g, 15 g protein, 6 g sugars."))
    queries.append(qy("if i eat the whole box of crackers how many cals is that lol", "total calories in a "
                      "package", images=1))
    queries.append(qy("根据这张营养成分表，吃80克这个麦片会摄入多少糖？", "根据营养标签换算", images=1, lang="zh",
                      caption="营养成分表：每份40克，糖9克，热量150千卡。"))
    queries.append(qy("Is this a lot?", "nutrition label question", images=1, caption_only=True,
                      caption="Close-up of a soup can label: sodium 890 mg per serving, 2 servings per can; the user "
                              "wants the share of the daily sodium limit for the whole can."))
    queries.append(qy("From the label in my photo, how many calories would 3 of these cookies be?",
                      "calories for a number of servings", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 34. time-zone conversion (dates chosen well away from DST switch days)
# ----------------------------------------------------------------------------------------------------------------
TZ = {  # city: (standard offset, DST offset, hemisphere of DST or None, zone name)
    "New York": (-5, -4, "N", "America/New_York"), "Los Angeles": (-8, -7, "N", "America/Los_Angeles"),
    "London": (0, 1, "N", "Europe/London"), "Paris": (1, 2, "N", "Europe/Paris"),
    "Berlin": (1, 2, "N", "Europe/Berlin"), "Tokyo": (9, 9, None, "Asia/Tokyo"),
    "Sydney": (10, 11, "S", "Australia/Sydney"), "Mumbai": (5.5, 5.5, None, "Asia/Kolkata"),
    "Beijing": (8, 8, None, "Asia/Shanghai"), "São Paulo": (-3, -3, None, "America/Sao_Paulo"),
    "Phoenix": (-7, -7, None, "America/Phoenix"), "Kathmandu": (5.75, 5.75, None, "Asia/Kathmandu"),
    "Auckland": (12, 13, "S", "Pacific/Auckland"), "Dubai": (4, 4, None, "Asia/Dubai"),
}


def tz_offset(city: str, d: date) -> float:
    std, dst, hemi, _ = TZ[city]
    if hemi is None:
        return std
    northern_summer = 4 <= d.month <= 9
    return dst if (northern_summer if hemi == "N" else not northern_summer) else std


def _utc(h: float) -> str:
    sign = "+" if h >= 0 else "-"
    h = abs(h)
    return f"UTC{sign}{int(h):02d}:{int(round(h % 1 * 60)):02d}"


@family("timezone-conversion", "clock", "png")
def fam_timezone(rng):
    good, bad, queries = [], [], []
    pairs = [("New York", "Sydney"), ("London", "Mumbai"), ("Los Angeles", "Tokyo"), ("Paris", "New York"),
             ("Beijing", "Berlin"), ("Phoenix", "London"), ("Kathmandu", "Paris"), ("Auckland", "Los Angeles"),
             ("Dubai", "São Paulo"), ("Sydney", "London"), ("Tokyo", "Mumbai")]
    for a, b in pairs:
        d = date(2024, pick(rng, [1, 2, 7, 8, 11, 12]), rng.randint(5, 25))
        if d.month == 11 or d.month == 2:
            d = d.replace(month=pick(rng, [1, 7]))
        hh, mm = rng.randint(6, 22), pick(rng, [0, 15, 30, 45])
        oa, ob = tz_offset(a, d), tz_offset(b, d)
        start = hh * 60 + mm
        tgt = start + int(round((ob - oa) * 60))
        day_shift = tgt // (24 * 60)
        tgt %= 24 * 60
        new_d = d + timedelta(days=day_shift)
        q = pick(rng, [f"A call is scheduled for {hh:02d}:{mm:02d} in {a} on {d.isoformat()}. What time is that in "
                       f"{b}?",
                       f"If it's {hh:02d}:{mm:02d} on {_longdate(d)} in {a}, what's the local time and date in {b}?",
                       f"Our webinar starts {hh:02d}:{mm:02d} {a} time on {_longdate(d)} - when is that for "
                       f"attendees in {b}?"])
        steps = [st("Get both UTC offsets valid on that date (DST differs by hemisphere and country).",
                    "web_search", f"UTC offset {a} {b} {d.isoformat()}",
                    f"{a} ({TZ[a][3]}): {_utc(oa)}; {b} ({TZ[b][3]}): {_utc(ob)} on {d.isoformat()}"),
                 st("Convert with the IANA zone database rather than mental arithmetic.", "python",
                    f"datetime({d.year}, {d.month}, {d.day}, {hh}, {mm}, tzinfo=ZoneInfo('{TZ[a][3]}'))"
                    f".astimezone(ZoneInfo('{TZ[b][3]}'))", f"{new_d.isoformat()} {hm(tgt)} {_utc(ob)}")]
        dst_rules = {"N-US": "DST 10 March - 3 November 2024", "N-EU": "summer time 31 March - 27 October 2024",
                     "Sydney": "DST ends 7 April 2024, starts 6 October 2024",
                     "Auckland": "DST ends 7 April 2024, starts 29 September 2024"}
        dst_cities = [c for c in (a, b) if TZ[c][2]]
        if dst_cities:
            c0 = dst_cities[0]
            rule = dst_rules.get(c0) or dst_rules["N-US" if TZ[c0][3].startswith("America") else "N-EU"]
            steps.insert(1, st(f"Make sure the date is not near a daylight-saving switch in {c0}.", "web_search",
                               f"{c0} daylight saving time 2024 dates", f"{c0}: {rule}"))
        ans = f"{hm(tgt)} on {_longdate(new_d)} in {b}" + (" (next day)" if day_shift > 0 else
                                                           " (previous day)" if day_shift < 0 else "")
        dst_note = [c for c in (a, b) if TZ[c][2]]
        reas = ("Looked up the offsets in force on that specific date"
                + (f" ({' and '.join(dst_note)} observe daylight saving time, and the southern hemisphere's summer "
                   "is the northern winter)" if dst_note else "")
                + ", then converted with ZoneInfo, which also handles half- and quarter-hour offsets. The answer "
                "states the date too, because large offsets move the meeting to another day.")
        good.append(tr(q, "convert a time between time zones", steps, reas, ans))
    bad.append(tr("A meeting is at 09:00 in New York on 2024-07-10. What time is that in London?",
                  "convert a time between time zones",
                  [st("Offsets.", "web_search", "New York London time difference", "New York is UTC-5; London is "
                      "UTC+0"),
                   st("Add 5 hours.", "calculator", "9 + 5", "14")],
                  "Added the standard-time difference.", "14:00 in London"))
    queries.append(qy("I'm in Chicago and my colleague is in Singapore. If I set a meeting for 8:30am my time on "
                      "15 July 2024, what time is it for her?", "time zone difference for a meeting"))
    queries.append(qy("5pm berlin time on jan 20 2024 = what time in auckland?", "convert local time"))
    queries.append(qy("北京时间2024年8月3日晚上9点，对应的纽约时间是几点？", "时区换算", lang="zh"))
    queries.append(qy("When should I join?", "time zone question", images=1, caption_only=True,
                      caption="Screenshot of an invitation: 'Launch livestream - 19:00 IST, 12 December 2024'; the "
                              "viewer is in Kathmandu and asks what local time that is."))
    queries.append(qy("Convert 07:15 Singapore time on 2 February 2024 into Denver local time.",
                      "convert a clock time across zones"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 35. sign / licence plate OCR
# ----------------------------------------------------------------------------------------------------------------
L_UK = "ABCDEFGHJKLMNOPRSTUVWXY"


def _plate(rng, fmt_: str) -> str:
    if fmt_ == "UK":
        return (f"{pick(rng, L_UK)}{pick(rng, L_UK)}{rng.randint(10, 74)} "
                + "".join(pick(rng, "ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(3)))
    if fmt_ == "FR":
        return (f"{pick(rng, L_UK)}{pick(rng, L_UK)}-{rng.randint(100, 999)}-{pick(rng, L_UK)}{pick(rng, L_UK)}")
    if fmt_ == "CA":
        return f"{rng.randint(4, 9)}{''.join(pick(rng, L_UK) for _ in range(3))}{rng.randint(100, 999)}"
    return f"{pick(rng, ['M', 'B', 'HH', 'K'])} {pick(rng, L_UK)}{pick(rng, L_UK)} {rng.randint(100, 9999)}"


PLATE_RULES = {"UK": "two letters, two digits, space, three letters", "FR": "AA-123-AA",
               "CA": "one digit, three letters, three digits (California)",
               "DE": "district code, letters, up to four digits"}
SIGNS = [
    ("parking", "Parken Mo-Fr 8-18 h nur mit Parkschein, max. 2 Std.; Sa, So frei", "de",
     "Parking Mon-Fri 8:00-18:00 only with a ticket, max. 2 hours; free on Saturday and Sunday",
     "Can I park here for free on Sunday?", "Yes - parking is free on Saturdays and Sundays; on weekdays 8-18 you "
     "need a ticket (max 2 h)"),
    ("shop", "営業時間 10:00～20:00 定休日 水曜日", "ja", "Opening hours 10:00-20:00, closed on Wednesdays",
     "What are the opening hours on this shop sign, and which day is it closed?", "10:00-20:00; closed on "
     "Wednesdays"),
    ("street", "Rue du Faubourg Saint-Honoré - 8e Arrondissement", "fr",
     "Rue du Faubourg Saint-Honoré, 8th arrondissement", "Which street is this, and which district?",
     "Rue du Faubourg Saint-Honoré, in Paris's 8th arrondissement"),
    ("warning", "ATENCIÓN: Zona de desprendimientos. Prohibido el paso", "es",
     "CAUTION: rockfall zone. No entry", "What does this warning sign say?", "Caution - rockfall zone, no entry"),
    ("van", "Blue Lake Plumbing - 24/7 emergency - 0161 496 0732", "en", "",
     "What's the phone number written on the side of the van?", "0161 496 0732"),
]


@family("sign-ocr", "street", "jpg")
def fam_sign(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for fmt_ in ["UK", "FR", "CA", "DE", "UK", "CA"]:
        plate = _plate(rng, fmt_)
        amb = plate.replace("O", "0", 1) if "O" in plate else plate.replace("1", "I", 1) if "1" in plate else \
            plate.replace("B", "8", 1) if "B" in plate else plate.replace("5", "S", 1)
        q = deck("plate", ["What is the licence plate number of the car in this photo?",
                           "Can you read the number plate of the parked car?",
                           "I need the registration number from this dashcam still.",
                           "A car blocked my driveway - what's its plate? (photo attached)",
                           "Transcribe the registration plate visible in this picture.",
                           "Which plate number is on the vehicle in the image?"])
        steps = [st("Crop and deskew the plate region.", "image_crop", "image_1: plate, perspective-corrected",
                    "plate region 412x96 px, sharpened"),
                 st("OCR the plate.", "ocr", "crop_1 (single line, uppercase)", f"'{amb}' (confidence 0.71)"),
                 st(f"Resolve look-alike characters with the {fmt_} plate format ({PLATE_RULES[fmt_]}).", "python",
                    f"validate_plate('{amb}', fmt='{fmt_}')",
                    f"'{plate}' - position-based fix of 0/O, 1/I, 8/B, 5/S" if amb != plate else f"'{plate}' valid")]
        reas = ("Cropped and deskewed the plate before OCR, then validated the string against the country's plate "
                "format, which decides between look-alike characters (0/O, 1/I, 8/B, 5/S) by position instead of "
                "guessing.")
        good.append(tr(q, "read a licence plate from a photo", steps, reas, plate, images=1,
                       caption=f"A photo of a car with a {fmt_} registration plate, taken at an angle."))
    for kind, text, lang, eng, q, ans in SIGNS:
        steps = [st("Crop the sign to reduce background clutter.", "image_crop", "image_1: sign", "sign cropped"),
                 st("OCR with the right language.", "ocr", f"crop_1 (lang={lang})", text)]
        if lang != "en":
            steps.append(st("Translate, keeping abbreviations (days, hours) exact.", "translate", f"{lang} -> en",
                            eng))
        else:
            steps.append(st("Check the number format (UK landline: 0 + area code + number).", "python",
                            "re.fullmatch(r'0\\d{3} \\d{3} \\d{4}', number)", "valid UK format"))
        reas = ("Cropped to the sign, OCR'd with the sign's language, then translated. Names, time ranges, "
                "weekday abbreviations and numbers were carried over exactly rather than paraphrased, since they "
                "are the point of the question.")
        good.append(tr(q, f"read and interpret a {kind} sign from a photo", steps, reas, ans, images=1,
                       caption=f"A photo of a {kind} sign" + (f" in {lang}." if lang != "en" else ".")))
    bad.append(tr("What's the number plate of the white car?", "read a licence plate from a photo",
                  [st("OCR the full image.", "ocr", "image_1", "'AB51 0KE' ... 'STOP'"),
                   st("Report.", "python", "print(text[0])", "AB51 0KE")],
                  "Read the plate with OCR.", "AB51 0KE", images=1,
                  caption="A white car with a UK plate photographed from the side."))
    queries.append(qy("Read the plate on the motorbike please.", "read a registration plate", images=1,
                      caption="A motorbike with a French plate photographed at night under a streetlight."))
    queries.append(qy("whats the phone number on that food truck sign?", "read a number from a sign", images=1))
    queries.append(qy("这块意大利语的牌子上写的是什么？周日可以停车吗？", "识别并翻译路牌", images=1, lang="zh",
                      caption="意大利路边停车标志：'Divieto di sosta 8-20 feriali'。"))
    queries.append(qy("Help me read this.", "sign OCR", images=1, caption_only=True,
                      caption="A blurry photo of a Dutch street sign 'Prinsengracht' with a house-number range "
                              "below; the user wants the street name and which numbers it covers."))
    queries.append(qy("My dashcam caught a car that hit mine; the plate is at an angle. Can you make out the "
                      "registration?", "read a number plate from an angled photo", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# 36. logic puzzles (solutions found by brute force at generation time, uniqueness checked)
# ----------------------------------------------------------------------------------------------------------------
NAMES5 = ["Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea", "Max", "Nia", "Otto"]


def _seating(rng, names):
    truth = list(names)
    rng.shuffle(truth)
    pos = {n: i for i, n in enumerate(truth)}
    pool = []
    for a, b in permutations(names, 2):
        if pos[a] + 1 == pos[b]:
            pool.append((f"{a} sits immediately to the left of {b}", lambda p, a=a, b=b: p[a] + 1 == p[b]))
        if abs(pos[a] - pos[b]) > 1 and a < b:
            pool.append((f"{a} does not sit next to {b}", lambda p, a=a, b=b: abs(p[a] - p[b]) > 1))
        if pos[a] < pos[b] and rng.random() < 0.3:
            pool.append((f"{a} sits somewhere to the left of {b}", lambda p, a=a, b=b: p[a] < p[b]))
    for n in names:
        if pos[n] in (0, len(names) - 1):
            pool.append((f"{n} sits at one end", lambda p, n=n: p[n] in (0, len(names) - 1)))
        else:
            pool.append((f"{n} does not sit at either end", lambda p, n=n: p[n] not in (0, len(names) - 1)))
    rng.shuffle(pool)
    chosen = []
    for clue in pool:
        chosen.append(clue)
        sols = [perm for perm in permutations(names)
                if all(f({x: i for i, x in enumerate(perm)}) for _, f in chosen)]
        if len(sols) == 1:
            break
    # drop clues that are not needed
    for clue in list(chosen):
        rest = [c for c in chosen if c is not clue]
        sols = [perm for perm in permutations(names) if all(f({x: i for i, x in enumerate(perm)}) for _, f in rest)]
        if len(sols) == 1:
            chosen = rest
    assert len([perm for perm in permutations(names)
                if all(f({x: i for i, x in enumerate(perm)}) for _, f in chosen)]) == 1
    return [c for c, _ in chosen], truth


def _knights(rng, names):
    while True:
        stmts = []
        for sp in names:
            o = [n for n in names if n != sp]
            kind = rng.randint(0, 3)
            if kind == 0:
                t = pick(rng, o)
                stmts.append((sp, f"{t} is a knave", lambda w, t=t: not w[t]))
            elif kind == 1:
                t, u = o
                stmts.append((sp, f"{t} and {u} are both knights", lambda w, t=t, u=u: w[t] and w[u]))
            elif kind == 2:
                stmts.append((sp, "exactly one of us is a knight", lambda w: sum(w.values()) == 1))
            else:
                t = pick(rng, o)
                stmts.append((sp, f"{t} and I are the same kind", lambda w, t=t, sp=sp: w[t] == w[sp]))
        sols = []
        for vals in product([True, False], repeat=len(names)):
            w = dict(zip(names, vals, strict=True))
            if all(f(w) == w[sp] for sp, _, f in stmts):
                sols.append(w)
        if len(sols) == 1:
            return [f"{sp} says: '{s}'" for sp, s, _ in stmts], sols[0]


@family("logic-puzzle", "puzzle", "png")
def fam_logic(rng):
    good, bad, queries = [], [], []
    for i in range(10):
        if i % 2 == 0:
            names = pick(rng, NAMES5, 5 if i % 4 == 0 else 4)
            clues, truth = _seating(rng, names)
            ask = pick(rng, ["Who sits in the middle?" if len(names) % 2 else "Who sits second from the left?",
                             "What is the seating order from left to right?"])
            q = (f"{len(names)} friends - {', '.join(names)} - sit in a row. " + ". ".join(clues) + f". {ask}")
            if ask.startswith("What"):
                ans = " - ".join(truth)
            elif len(names) % 2:
                ans = truth[len(names) // 2]
            else:
                ans = truth[1]
            steps = [st("Encode each clue as a predicate over positions.", "python",
                        f"clues = [...{len(clues)} lambdas...]; names = {names}", f"{len(clues)} constraints"),
                     st("Brute-force all permutations and keep those satisfying every clue.", "python",
                        "[p for p in permutations(names) if all(c(p) for c in clues)]",
                        f"1 solution: {truth}"),
                     st("Uniqueness confirmed, read off the answer.", "python", "sols[0]", ans)]
            sub = "solve a seating-arrangement logic puzzle"
            reas = ("Rather than reasoning clue by clue (easy to drop a case), every clue was encoded as a predicate "
                    f"and all {math.factorial(len(names))} orders were enumerated. Exactly one order survived, which "
                    "both answers the question and confirms the puzzle is well-posed; 'left of' was read as "
                    "'somewhere left', 'immediately left' as adjacent.")
        else:
            names = pick(rng, NAMES5, 3)
            stmts, sol = _knights(rng, names)
            q = (f"On an island, knights always tell the truth and knaves always lie. {', '.join(names[:-1])} and "
                 f"{names[-1]} are islanders. " + " ".join(s + "." for s in stmts) + " Who is a knight and who is "
                 "a knave?")
            ans = ", ".join(f"{n}: {'knight' if sol[n] else 'knave'}" for n in names)
            steps = [st("Model: each statement is true iff its speaker is a knight.", "python",
                        "for w in product([True, False], repeat=3): check statement(w) == w[speaker]",
                        "8 assignments checked"),
                     st("Keep consistent assignments.", "python", "solutions", f"1 consistent assignment: {ans}")]
            sub = "solve a knights-and-knaves puzzle"
            reas = ("Encoded 'speaker is a knight <=> statement is true' for every speaker and enumerated all 8 "
                    "assignments. Exactly one was consistent; enumerating avoids the classic slip of assuming one "
                    "speaker's type and forgetting to test the alternative.")
        with_img = i % 5 == 4
        photo_q = ("Solve the seating puzzle in the screenshot." if i % 2 == 0 else
                   "Who is a knight and who is a knave in the puzzle shown in the picture?")
        good.append(tr(photo_q if with_img else q, sub,
                       ([st("Read the puzzle text.", "ocr", "image_1", q)] if with_img else []) + steps, reas, ans,
                       images=1 if with_img else 0, caption=f"Screenshot of a puzzle: {q}" if with_img else None))
    bad.append(tr("Ada, Ben and Cleo sit in a row. Ben is not at an end. Ada sits somewhere left of Cleo. Who is on "
                  "the far left?", "solve a seating-arrangement logic puzzle",
                  [st("Ben is in the middle.", "python", "order = ['Ada', 'Ben', 'Cleo']", "['Ada', 'Ben', 'Cleo']"),
                   st("Answer.", "python", "order[0]", "Ada")],
                  "Placed Ben in the middle and Ada left of Cleo.", "Ada"))
    queries.append(qy("Four runners - Pia, Quinn, Rafa, Sol - finished a race. Quinn beat Sol, Pia was not first or "
                      "last, Rafa finished right after Pia, and Sol was not last. What was the finishing order?",
                      "order-deduction puzzle"))
    queries.append(qy("knights always tell truth, knaves lie. Mo says 'we are both knaves'. what are Mo and Lu?",
                      "knights and knaves riddle"))
    queries.append(qy("甲、乙、丙、丁四人排成一排。甲不在两端，乙紧挨在丙的左边，丁在甲的右边某处。从左到右的顺序是什么？",
                      "排列逻辑推理题", lang="zh"))
    queries.append(qy("Can you solve this?", "logic puzzle", images=1, caption_only=True,
                      caption="A puzzle-book page: 'Three boxes are labelled Apples, Oranges and Mixed, and every "
                              "label is wrong. You may take one fruit from one box. Which box do you pick from?'"))
    queries.append(qy("Five people sit around a table... actually in a straight line: Tom is at the left end, "
                      "Uma sits right next to Tom, Vic isn't beside Uma, Wes sits to the right of Vic. Where does "
                      "Xia sit?", "seating deduction"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# assembly, validation, output
# ----------------------------------------------------------------------------------------------------------------
def _tools(steps: list[dict]) -> list[str]:
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
            rec.update({"tools": _tools(t["steps"]), "steps": t["steps"], "reasoning": t["reasoning"],
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
        if t["tools"] != _tools(t["steps"]):
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


def dump(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"


def readme(traces: list[dict], queries: list[dict], meta: dict) -> str:
    n_ok = sum(t["is_correct"] for t in traces)
    n_img = sum(1 for t in traces if t["images"])
    n_cap = sum(1 for t in traces if "caption" in t)
    flags = meta["_query_flags"]
    n_zh = sum(1 for _, lang, _ in flags if lang == "zh")
    n_co = sum(1 for _, _, co in flags if co)
    n_qimg = sum(1 for q in queries if q.get("images"))
    n_qsub = sum(1 for q in queries if "sub_task" in q)
    rows = "\n".join(f"| `{slug}` | {m['correct']} | {m['incorrect']} | {m['queries']} | {m['sub_task']} |"
                     for slug, m in meta.items() if not slug.startswith("_"))
    tools = sorted({x for t in traces for x in t["tools"]})
    return f"""# `experience` - bundled evaluation data for ExperienceRetrieval

A memory bank of solved multimodal agent tasks ("traces") and a set of held-out new tasks labelled with the
traces that are relevant to them. It is the evaluation set for tracerag's `ExperienceRetrieval` program, which,
before an agent starts a task, retrieves similar previously solved traces and distils short actionable experience
from them.

The data was written for tracerag. It is **synthetic**: every question, step, observation and answer comes from
templates and slot values in `scripts/generate_traces.py` (Python stdlib only, fixed seed, no network, no external
datasets). Regenerate it with

```bash
python scripts/generate_traces.py
```

Two runs give byte-identical files. The script validates everything before writing (unique ids; each relevant id
exists, is a correct trace and is in the query's family; every family has at least 8 correct traces and 4 queries;
no query repeats a trace question) and exits non-zero if a check fails.

Facts in well-known families (landmarks, plants, birds, artworks, books, films, papers, company headquarters,
sports records, historical dates) are meant to be correct, and computed answers (molar masses, conversions,
distances, regexes, SQL results, puzzle solutions) are computed or checked by the generator. The following are
invented and must not be used as facts: exchange rates, product prices, timetables, weather observations, the
companies and prices in `stock-price`, the trials in `pubmed-question`, receipts, labels and tables. Image files are
not included: `images` holds relative paths only, and `caption` describes what the image shows.

## Contents

- `tasks/<task_id>/trace.json` - {len(traces)} traces: {n_ok} correct (`is_correct: true`) and {len(traces) - n_ok}
  incorrect (`is_correct: false`, which a bank builder must filter out); {n_img} have images, {n_cap} of those a
  caption.
- `queries.jsonl` - {len(queries)} held-out tasks: new entities, numbers and phrasings, some casual, {n_zh} in
  Chinese, {n_co} given only as an image caption; {n_qimg} have images, {n_qsub} carry a `sub_task`.

Families are groups of tasks that share a solution strategy; some are deliberately confusable (chart reading vs
table lookup, currency vs recipe vs physics unit conversion, landmark vs plant vs bird vs artwork identification,
receipt vs nutrition label, regex vs SQL vs spreadsheet formula, book vs film vs paper lookup).

| family | correct traces | incorrect traces | queries | example sub_task |
|---|---|---|---|---|
{rows}
| **total** | **{n_ok}** | **{len(traces) - n_ok}** | **{len(queries)}** | |

## Trace format (`tasks/<task_id>/trace.json`)

| field | type | meaning |
|---|---|---|
| `task_id` | str | `<family>-NNNN`, also the directory name |
| `question` | str | the task as the user asked it |
| `sub_task` | str | short task-type phrase, e.g. "read a value from a bar chart" |
| `images` | list[str] | relative image paths such as `images/chart_0007.png` (files not included); may be empty |
| `caption` | str, optional | precomputed description of the image(s); on about 70% of traces with images |
| `tools` | list[str] | tools in the order used (consecutive repeats collapsed): {", ".join(tools)} |
| `steps` | list[object] | 2-6 steps, each `{{"thought", "tool", "tool_input", "observation"}}` |
| `reasoning` | str | summary of the solution strategy: what worked, which pitfalls were avoided |
| `final_answer` | str | the answer given |
| `is_correct` | bool | whether the answer was right; only correct traces belong in the bank |
| `family` | str | the task family; metadata for evaluation only, not for retrieval |

## Query format (`queries.jsonl`, one JSON object per line)

| field | type | meaning |
|---|---|---|
| `id` | str | `q-NNNN` (does not reveal the family) |
| `question` | str | the new task |
| `sub_task` | str, optional | task-type phrase; present on about half of the queries |
| `images` | list[str], optional | relative image paths (files not included) |
| `caption` | str, optional | description of the image; for caption-only queries it carries the actual task |
| `family` | str | gold family, for evaluation only |
| `relevant_task_ids` | list[str] | every correct trace of the same family; incorrect traces are never listed |
"""


def main() -> int:
    traces, queries, meta = build()
    errs = validate(traces, queries, meta)
    files = {f"tasks/{t['task_id']}/trace.json": dump(t) for t in traces}
    files["queries.jsonl"] = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries)
    files["README.md"] = readme(traces, queries, meta)
    size = sum(len(v.encode("utf-8")) for v in files.values())
    if size > 3_200_000:
        errs.append(f"output is {size / 1e6:.2f} MB (> 3.2 MB)")
    if errs:
        print(f"validation failed ({len(errs)} problems):", file=sys.stderr)
        for e in errs:
            print("  -", e, file=sys.stderr)
        return 1
    if (OUT / "tasks").exists():
        shutil.rmtree(OUT / "tasks")
    for rel, text in files.items():
        path = OUT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    n_ok = sum(t["is_correct"] for t in traces)
    print(f"families: {len(FAMILIES)}; traces: {len(traces)} ({n_ok} correct, {len(traces) - n_ok} incorrect); "
          f"queries: {len(queries)}; size {size / 1e6:.2f} MB -> {OUT.relative_to(ROOT)}")
    for slug, m in meta.items():
        if not slug.startswith("_"):
            print(f"  {slug:22s} correct {m['correct']:3d}  incorrect {m['incorrect']}  queries {m['queries']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
