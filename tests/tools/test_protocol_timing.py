"""The protocol reader runs in time linear in its input: 1 MB adversarial replies (long unbroken tokens
inside tags, thousands of open tags, unclosed quotes, cut closes, mentions, code) each parse well within
a second of CPU time, and ten times the input takes about ten times as long, not a hundred
(``benchmarks/bench_protocol.py`` measures it). The families added with the mention and code rules
run in the slow step, except the cheap ``'</c' * N``."""

import time

import pytest

from tracerag.tools.cite_tags import extract_citations
from tracerag.tools.reply_parsing import parse_reply, restore_stop

MB = 1_000_000


def _fill(piece: str, size: int, head: str = "", tail: str = "") -> str:
    return head + piece * ((size - len(head) - len(tail)) // len(piece)) + tail


ADVERSARIAL = {  # name: (function, input of about ``size`` characters)
    "long token in a call tag": (parse_reply, lambda n: _fill("a", n, "<call_tool ", ">q")),
    "long token in a cite tag": (extract_citations, lambda n: _fill("a", n, "<answer><cite ", ">x</cite></answer>")),
    "'<cite ' * N": (extract_citations, lambda n: _fill("<cite ", n)),
    "'<cite id=\"1\">' * N": (extract_citations, lambda n: _fill('<cite id="1">', n)),
    "'<call_tool ' * N": (parse_reply, lambda n: _fill("<call_tool ", n)),
    "named calls, never closed": (parse_reply, lambda n: _fill('<call_tool name="x">q ', n)),
    "unclosed quote": (parse_reply, lambda n: _fill("a", n, '<call_tool name="pubmed_search" limit="')),
    "unclosed quotes * N": (parse_reply, lambda n: _fill('<call_tool name="x', n)),
    "'<think>' * N": (parse_reply, lambda n: _fill("<think>", n)),
    "'<answer>' * N": (parse_reply, lambda n: _fill("<answer>", n)),
    "long call body (restore_stop)": (lambda t: restore_stop(t, "stop"),
                                      lambda n: _fill("a\n", n, '<call_tool name="x">')),
}
CALL = '<call_tool name="pubmed_search">'
THEN_CALL = CALL + "q</call_tool>"
MORE = {  # families of cut closes, markup inside a call, mentions and code
    "'</c' * N": (parse_reply, lambda n: _fill("</c", n)),
    "'</call' * N": (parse_reply, lambda n: _fill("</call", n)),
    "call + '</a>' * N": (parse_reply, lambda n: _fill("</a>", n, CALL)),
    "call + '<snippet id=\"1\">' * N": (parse_reply, lambda n: _fill('<snippet id="1">', n, CALL)),
    "'<call_tool name=\"x\">' * N (doubled opens)": (parse_reply, lambda n: _fill('<call_tool name="x">', n)),
    "'`<answer>` ' * N (code)": (parse_reply, lambda n: _fill("`<answer>` ", n)),
    "'<answer> ' * N, then a call (mentions)": (parse_reply, lambda n: _fill("<answer> ", n, "", THEN_CALL)),
    "'<tool_output> ' * N, then a call": (parse_reply, lambda n: _fill("<tool_output> ", n, "", THEN_CALL)),
    "'```\\n<answer>\\n' * N (fences)": (parse_reply, lambda n: _fill("```\n<answer>\n", n)),
    "call + '&#x20;' * N": (parse_reply, lambda n: _fill("&#x20;", n, CALL, "</call_tool>")),
    "'</c' * N (restore_stop)": (lambda t: restore_stop(t, "stop"), lambda n: _fill("</c", n, CALL)),
}


def _best_of(fn, text: str, runs: int = 3) -> float:
    """The least CPU time of ``runs`` calls (CPU, not wall clock: other work on the machine does not count)."""
    best = float("inf")
    for _ in range(runs):
        started = time.process_time()
        fn(text)
        best = min(best, time.process_time() - started)
    return best


CASES = {**ADVERSARIAL, **MORE}


CHEAP = "'</c' * N"


DEFAULT_RUN = ("'<cite id=\"1\">' * N", CHEAP)  # the others with the long sweeps (CI's slow step)


@pytest.mark.parametrize("name", [pytest.param(name, marks=[] if name in DEFAULT_RUN else [pytest.mark.slow])
                                  for name in dict.fromkeys([*ADVERSARIAL, *MORE])])
def test_one_megabyte_of_adversarial_text_parses_in_linear_time(name):
    fn, make = CASES[name]
    small, large = _best_of(fn, make(MB // 10)), _best_of(fn, make(MB))
    assert large < 1.0, f"{name}: {large:.3f} s for 1 MB"
    assert large < 30 * small + 0.05, f"{name}: 10x the input took {large / small:.0f}x the time"
