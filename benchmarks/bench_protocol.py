"""Parser worst-case time vs input size, the reader before and after the linear-time rewrite, what
each reads from random interleavings of tag fragments, and whether calls read back as written.

    python benchmarks/bench_protocol.py [--repeats 3] [--old-budget 20] [--random 2000] [--baseline REV]

Part 1: for each size (1 KB, 10 KB, 100 KB, 1 MB), every adversarial input family (long unbroken tokens
inside tags, thousands of open tags, unclosed quotes, ``<think>`` * N, ``<answer>`` * N) is read by
the old reader (its functions copied below from the commit before the rewrite, run in this same process)
and by this reader (``tracerag.tools.reply_parsing``, ``cite_tags``); the table gives the worst family's
time (median of ``--repeats``). An old run predicted (from its time at the size before, growing with the
square) to take more than ``--old-budget`` seconds is not run and its estimate is printed instead.

Part 2: ``--random`` replies drawn (seed 17) from protocol tags, fragments (``</call_to``, ``<snipp``),
uppercase tags, quotes, think blocks that mention tags, and words; counts the executed queries and
parameters that hold protocol markup (goal 0), and the replies whose think prose changed the reading.

Part 3: ``--random`` calls drawn (seed 23) from any characters (markup, quotes, references such as
``&gt;``, backticks, line breaks and other whitespace, non-ASCII) in the tool name, parameters and
query: how many read back different from what was written (``parse_reply(format_call(call)).call !=
call``); and ``--random`` replies drawn (seed 29) from part 2's pieces plus references, code, stray
HTML and a mention in a sentence: how many the trajectory text (``clean_text``) reads as a different
call or answer than the reply itself. Both are counted for this reader and for the reader at git
revision ``--baseline`` (default: the commit before calls read back exactly), loaded in this process;
part 1's table at 1 MB gives that reader's time per family too (CPU time, median of ``--repeats``).
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from tracerag.tools.cite_tags import Citation, extract_citations
from tracerag.tools.protocol_writing import ToolCall, format_call
from tracerag.tools.reply_parsing import ParsedReply, cast_parameter, parse_reply, restore_stop

# this reader, under the names of the reader at a git revision (one module then: tracerag/tools/protocol.py)
new = SimpleNamespace(parse_reply=parse_reply, format_call=format_call, extract_citations=extract_citations,
                      restore_stop=restore_stop)

# -- the reader before the rewrite (tracerag/tools/protocol.py at 1241d3b), for the baseline ---------

_OUTPUT = re.compile(r"<tool_output\b")
_STRAY_OUTPUT_CLOSE = re.compile(r"</tool_output\s*>")
_CALL_OPEN = re.compile(r"<call_tool\b([^<>]*)>")
_CALL_CLOSE = re.compile(r"</call(?:_tool)?\s*>")
_NEXT_TAG = re.compile(r"<(?:/?(?:call_tool|call|answer|think|tool_output|cite)\b)")
_ANSWER_OPEN = re.compile(r"<answer\b[^<>]*>")
_ANSWER_CLOSE = re.compile(r"</answer\s*>")
_ATTR = re.compile(r"""([A-Za-z_][\w-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>]+))""")
_CITE = re.compile(r"<cite\b([^<>]*)>(.*?)(?:</cite\s*>|(?=<cite\b)|$)", re.S)
_TAG = re.compile(r"<[^<>]*>")
_ID_SPLIT = re.compile(r"[\s,;]+")


def _attributes(raw: str) -> dict[str, str]:
    return {m.group(1): next(g for g in m.groups()[1:] if g is not None) for m in _ATTR.finditer(raw)}


def _cast(value: str, kind: type) -> Any:
    try:
        return cast_parameter(value, kind)
    except ValueError:
        return value  # the parser never raises; the tool call reports the bad value to the model


def _first_call(text: str, schemas: Mapping[str, Mapping[str, type]] | None) -> tuple[ToolCall, int, int] | None:
    """(call, start, end) of the first call that names a tool; end is where its text stops."""
    for match in _CALL_OPEN.finditer(text):
        attrs = _attributes(match.group(1))
        name = attrs.pop("name", "").strip()
        if not name:
            continue
        body_start = match.end()
        close = _CALL_CLOSE.search(text, body_start)
        next_tag = _NEXT_TAG.search(text, body_start)
        if close and (next_tag is None or close.start() <= next_tag.start()):
            query, end = text[body_start : close.start()], close.end()
        else:  # unclosed: up to the next tag or the end of the line
            stop = next_tag.start() if next_tag else len(text)
            line_end = text.find("\n", body_start)
            first_line = text[body_start:stop].strip().split("\n")[0] if text[body_start:stop].strip() else ""
            query = first_line
            end = stop if line_end == -1 or line_end > stop else line_end
        schema = (schemas or {}).get(name, {})
        params = {k: _cast(v, schema[k]) if k in schema else v for k, v in attrs.items()}
        return ToolCall(name, params, " ".join(query.split())), match.start(), end
    return None


def _without_calls(text: str) -> str:
    """Text around the executed call or the answer keeps no other call tags (nameless or not)."""
    return _CALL_CLOSE.sub("", _CALL_OPEN.sub("", text)).strip()


def old_restore_stop(text: str) -> str:
    """Re-append the close tag an LM API strips when it halts on the ``</call_tool>`` stop sequence.

    Only a reply whose last named call is still open at the very end, on one line (no close, no tag,
    no line break after it), is completed; anything else is returned as it is: a call that runs on
    over several lines was never closed by the model, and the parser takes its first line.
    """
    text = text if isinstance(text, str) else ""
    opens = [m for m in _CALL_OPEN.finditer(text) if _attributes(m.group(1)).get("name")]
    if not opens or "\n" in text[opens[-1].end():].strip() or _NEXT_TAG.search(text, opens[-1].end()):
        return text
    return text.rstrip() + "</call_tool>"


def old_parse_reply(text: str, schemas: Mapping[str, Mapping[str, type]] | None = None) -> ParsedReply:
    """Read one model reply: the first tool call (if it comes before any answer), or the answer.

    ``schemas`` maps a tool name to {parameter: type} for casting attributes (``limit="5"`` → 5).
    """
    text = text if isinstance(text, str) else ""
    hallucinated = len(_OUTPUT.findall(text))
    first_output = _OUTPUT.search(text)
    if first_output:  # the model invented a tool's answer: drop it and all that follows
        text = text[: first_output.start()]
    text = _STRAY_OUTPUT_CLOSE.sub("", text)

    answer_open = _ANSWER_OPEN.search(text)
    found = _first_call(text, schemas)
    if found and (answer_open is None or found[1] < answer_open.start()):
        call, start, end = found
        later = sum(1 for m in _CALL_OPEN.finditer(text, end) if _attributes(m.group(1)).get("name"))
        prefix = _without_calls(text[:start])
        clean = (prefix + "\n" if prefix else "") + format_call(call)
        return ParsedReply(call, None, hallucinated, clean, later)

    if answer_open is None:
        return ParsedReply(None, None, hallucinated, _without_calls(text), 0)
    close = _ANSWER_CLOSE.search(text, answer_open.end())
    answer = _without_calls(text[answer_open.end() : close.start() if close else len(text)])
    prefix = _without_calls(text[: answer_open.start()])
    clean = (prefix + "\n" if prefix else "") + f"<answer>{answer}</answer>"
    ignored = sum(1 for m in _CALL_OPEN.finditer(text) if _attributes(m.group(1)).get("name"))
    return ParsedReply(None, answer, hallucinated, clean, ignored)


def old_extract_citations(answer_text: str) -> list[Citation]:
    """Every ``<cite id="…">`` / ``<cite ids="a, b">`` in an answer, with its text (inner markup removed)."""
    citations = []
    for match in _CITE.finditer(answer_text or ""):
        attrs = _attributes(match.group(1))
        raw = attrs.get("id") or attrs.get("ids") or ""
        ids = [i for i in _ID_SPLIT.split(raw.strip()) if i]
        inner = _TAG.sub("", match.group(2))
        citations.append(Citation(list(dict.fromkeys(ids)), " ".join(html.unescape(inner).split())))
    return citations


# -- part 1: worst-case time vs input size -----------------------------------------------------------

def _fill(piece: str, size: int, head: str = "", tail: str = "") -> str:
    return head + piece * max(0, (size - len(head) - len(tail)) // len(piece)) + tail


FAMILIES = {  # name: (which reader function, input of about ``size`` characters)
    "long token in a call tag": ("parse_reply", lambda n: _fill("a", n, "<call_tool ", ">q")),
    "long token in a cite tag": ("extract_citations", lambda n: _fill("a", n, "<answer><cite ", ">x</cite></answer>")),
    "'<cite ' * N": ("extract_citations", lambda n: _fill("<cite ", n)),
    "'<cite id=\"1\">' * N": ("extract_citations", lambda n: _fill('<cite id="1">', n)),
    "'<call_tool ' * N": ("parse_reply", lambda n: _fill("<call_tool ", n)),
    "named calls, never closed": ("parse_reply", lambda n: _fill('<call_tool name="x">q ', n)),
    "unclosed quote": ("parse_reply", lambda n: _fill("a", n, '<call_tool name="pubmed_search" limit="')),
    "unclosed quotes * N": ("parse_reply", lambda n: _fill('<call_tool name="x', n)),
    "'<think>' * N": ("parse_reply", lambda n: _fill("<think>", n)),
    "'<answer>' * N": ("parse_reply", lambda n: _fill("<answer>", n)),
    "long call body": ("restore_stop", lambda n: _fill("a\n", n, '<call_tool name="x">')),
    # cut closes, markup inside a call, mentions and code
    "'</c' * N": ("parse_reply", lambda n: _fill("</c", n)),
    "'</call' * N": ("parse_reply", lambda n: _fill("</call", n)),
    "call + '</a>' * N": ("parse_reply", lambda n: _fill("</a>", n, '<call_tool name="x">')),
    "call + '<snippet id=\"1\">' * N": ("parse_reply", lambda n: _fill('<snippet id="1">', n, '<call_tool name="x">')),
    "'<call_tool name=\"x\">' * N": ("parse_reply", lambda n: _fill('<call_tool name="x">', n)),
    "'`<answer>` ' * N": ("parse_reply", lambda n: _fill("`<answer>` ", n)),
    "'<answer> ' * N, then a call": ("parse_reply",
                                     lambda n: _fill("<answer> ", n, "", '<call_tool name="x">q</call>')),
    "'<tool_output> ' * N, then a call": ("parse_reply",
                                          lambda n: _fill("<tool_output> ", n, "", '<call_tool name="x">q</call>')),
    "'```\\n<answer>\\n' * N": ("parse_reply", lambda n: _fill("```\n<answer>\n", n)),
    "call + '&#x20;' * N": ("parse_reply", lambda n: _fill("&#x20;", n, '<call_tool name="x">', "</call_tool>")),
}
OLD = {"parse_reply": old_parse_reply, "extract_citations": old_extract_citations, "restore_stop": old_restore_stop}
NEW = {"parse_reply": new.parse_reply, "extract_citations": new.extract_citations,
       "restore_stop": lambda t: new.restore_stop(t, "stop")}
SIZES = (1_000, 10_000, 100_000, 1_000_000)
BASELINE = "7f15a18~1"  # the reader before calls read back exactly


def load_reader(rev: str) -> ModuleType:
    """``tracerag/tools/protocol.py`` as it was at git revision ``rev``, as a module of its own."""
    root = Path(__file__).resolve().parent.parent
    source = subprocess.run(["git", "show", f"{rev}:tracerag/tools/protocol.py"], cwd=root, check=True,
                            capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader(f"protocol_at_{rev}", loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    exec(compile(source, f"{rev}:tracerag/tools/protocol.py", "exec"), module.__dict__)
    return module


def _median_time(fn, text: str, repeats: int) -> float:
    """Median CPU time of ``repeats`` calls (CPU, not wall clock: a busy machine does not add to it)."""
    times = []
    for _ in range(repeats):
        started = time.process_time()
        fn(text)
        times.append(time.process_time() - started)
    return statistics.median(times)


def timing_table(repeats: int, budget: float, baseline: ModuleType | None = None, rev: str = "") -> list[str]:
    rows = ["| input size | old worst family | old s | new worst family | new s | new µs / KB |",
            "|---:|---|---:|---|---:|---:|"]
    previous: dict[str, float] = {}
    new_at_1mb = {}
    for size in SIZES:
        old_times, new_times, skipped = {}, {}, {}
        for name, (which, make) in FAMILIES.items():
            text = make(size)
            new_times[name] = _median_time(NEW[which], text, repeats)
            estimate = previous.get(name, 0.0) * (size / (size // 10)) ** 2
            if estimate > budget:
                skipped[name] = estimate
                previous[name] = estimate
            else:
                old_times[name] = _median_time(OLD[which], text, 1 if size >= 100_000 else repeats)
                previous[name] = old_times[name]
        if size == SIZES[-1]:
            new_at_1mb = new_times
        worst_new = max(new_times, key=new_times.get)
        if skipped:
            worst_old = max(skipped, key=skipped.get)
            old_cell = f"not run, est. {skipped[worst_old]:,.0f}"
        else:
            worst_old = max(old_times, key=old_times.get)
            old_cell = f"{old_times[worst_old]:.4f}"
        rows.append(f"| {size // 1000:,} KB | {worst_old} | {old_cell} | {worst_new} | {new_times[worst_new]:.4f} | "
                    f"{new_times[worst_new] / (size / 1000) * 1e6:,.0f} |")
        print(rows[-1], file=sys.stderr, flush=True)
    if baseline is None:
        rows += ["", "| family at 1 MB (new reader) | CPU s |", "|---|---:|"]
        rows += [f"| {name} | {t:.3f} |" for name, t in sorted(new_at_1mb.items(), key=lambda kv: -kv[1])]
        return rows
    before = {"parse_reply": baseline.parse_reply, "extract_citations": baseline.extract_citations,
              "restore_stop": lambda t: baseline.restore_stop(t, "stop")}
    rows += ["", f"| family at 1 MB | reader at {rev}, CPU s | this reader, CPU s |", "|---|---:|---:|"]
    for name, t in sorted(new_at_1mb.items(), key=lambda kv: -kv[1]):
        which, make = FAMILIES[name]
        rows.append(f"| {name} | {_median_time(before[which], make(SIZES[-1]), repeats):.3f} | {t:.3f} |")
    return rows


# -- part 2: random interleavings ---------------------------------------------------------------------

TAG_NAMES = ("call_tool", "call", "answer", "think", "tool_output", "cite", "snippet")
PIECES = ['<call_tool name="pubmed_search">', "<call_tool name=pubmed_search limit=5>", "</call_tool>", "</call_to",
          "</call>", "<CALL_TOOL name='pubmed_search'>", "</CALL_TOOL>", "<snippet", '<snippet id="1">', "</snippet>",
          "<SNIPPET>", "<snipp", "<tool_output>", "</tool_output>", "<answer>", "<Answer>", "</answer>", "<think>",
          "</think>", '<cite id="1">', "</cite>", "<ans", '"', "'", "<", ">", "=", "\n", 'year=">2020"', " ",
          "metformin", "aging", "long covid", "AND", "fatigue"]
MENTIONS = ['<call_tool name="pubmed_search">', "</call_tool>", "<answer>", "</answer>", "<tool_output>",
            '<cite id="9">', "<CALL_TOOL name='pubmed_search'>", " the ", " tags ", "\n"]


def holds_markup(value: str) -> bool:
    at = value.find("<")
    while at != -1:
        rest = value[at + 1 :].removeprefix("/").casefold()
        if any(rest.startswith(name) for name in TAG_NAMES):
            return True
        at = value.find("<", at + 1)
    return False


def random_run(n: int) -> list[str]:
    rng = random.Random(17)
    counts = {"old": [0, 0, 0], "new": [0, 0, 0]}  # executed calls, holding markup, changed by think prose
    for _ in range(n):
        reply = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 25)))
        tail = (f'<call_tool name="pubmed_search" limit="{rng.randint(1, 9)}">metformin aging</call_tool>'
                if rng.random() < 0.5 else '<answer>Yes <cite id="1">it helps</cite></answer>')
        prose = "".join(rng.choice(MENTIONS) for _ in range(rng.randint(1, 6)))
        for label, parse in (("old", old_parse_reply), ("new", new.parse_reply)):
            r = parse(reply, {"pubmed_search": {"limit": int}})
            if r.call is not None:
                counts[label][0] += 1
                values = [r.call.query, r.call.name, *map(str, r.call.params.values())]
                counts[label][1] += any(holds_markup(v) for v in values)
            plain, noisy = parse(f"<think>plan</think>\n{tail}"), parse(f"<think>plan{prose}</think>\n{tail}")
            counts[label][2] += (plain.call, plain.answer) != (noisy.call, noisy.answer)
    rows = [f"| reader | random replies | executed calls | holding markup (goal 0) | valid replies whose "
            f"think mentions changed the call or answer (of {n}; goal 0) |", "|---|---:|---:|---:|---:|"]
    for label in ("old", "new"):
        calls, marked, changed = counts[label]
        rows.append(f"| {label} | {n:,} | {calls:,} | {marked:,} | {changed:,} |")
    return rows


# -- part 3: calls read back as written ----------------------------------------------------------------

AWKWARD = ['"', "'", "<", ">", "&", "&amp;", "&gt;", "&quot;", "&#x20;", "`", "```", "\n", "\r\n", " ", "  ", "\t",
           "\x85", "\xa0", "</call_tool>", "<answer>", '<snippet id="1">', "</a>", "=", "é", "指南", "metformin",
           "aging", "pubmed_search", ">2020"]
# part 2's pieces and these: references, code, stray HTML, a value with ``>``, a mention in a sentence
REREAD_PIECES = ["&amp;", "&gt;", "&quot;", "&#xa;", "`", "```\n", "</a>", "<b>", "Before I write the <answer>, ",
                 '<call_tool name="pubmed_search" year=">2020">', "<call_tool name='pubmed_search' q=\"a&amp;b\">"]


def _random_text(rng: random.Random) -> str:
    pieces = []
    for _ in range(rng.randint(0, 8)):
        pieces.append(rng.choice(AWKWARD) if rng.random() < 0.6 else
                      "".join(chr(rng.choice((rng.randint(32, 126), rng.randint(0, 0x2FFF)))) for _ in range(3)))
    return "".join(pieces)


def random_call(rng: random.Random) -> ToolCall:
    params = {}
    for _ in range(rng.randint(0, 3)):
        key = rng.choice(("limit", "year", "q", "_x", "a-b", "Note"))
        params[key] = _random_text(rng)
    return ToolCall(_random_text(rng) or "pubmed_search", params, _random_text(rng))


def _fields(call) -> tuple | None:
    return None if call is None else (call.name, call.params, call.query)


def round_trip_run(n: int, baseline: ModuleType, rev: str) -> list[str]:
    rng = random.Random(23)
    calls = [random_call(rng) for _ in range(n)]
    rng = random.Random(29)
    pieces = PIECES + REREAD_PIECES
    replies = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 25))) for _ in range(n)]
    rows = ["| reader | random calls | read back different (goal 0) | random replies | trajectory text read as "
            "another call or answer (goal 0) |", "|---|---:|---:|---:|---:|"]
    for label, reader in ((f"at {rev}", baseline), ("this one", new)):
        differ = 0
        for call in calls:
            try:
                back = reader.parse_reply(reader.format_call(call)).call
                differ += back is None or (back.name, back.params, back.query) != (call.name, call.params, call.query)
            except ValueError:  # a call that reader refuses to write
                differ += 1
        reread = 0
        for reply in replies:
            r = reader.parse_reply(reply, {"pubmed_search": {"limit": int}})
            again = reader.parse_reply(r.clean_text, {"pubmed_search": {"limit": int}})
            reread += (_fields(again.call), again.answer) != (_fields(r.call), r.answer)
        rows.append(f"| {label} | {n:,} | {differ:,} | {n:,} | {reread:,} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--old-budget", type=float, default=20.0, help="skip an old run predicted to take longer")
    parser.add_argument("--random", type=int, default=2000)
    parser.add_argument("--baseline", default=BASELINE, help="git revision of the reader to compare with")
    args = parser.parse_args()
    baseline = load_reader(args.baseline)
    print("\n".join(timing_table(args.repeats, args.old_budget, baseline, args.baseline)))
    print()
    print("\n".join(random_run(args.random)))
    print()
    print("\n".join(round_trip_run(args.random, baseline, args.baseline)))


if __name__ == "__main__":
    main()
