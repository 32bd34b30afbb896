"""The terminal report table: at most 100 characters wide, whatever the program's columns, with nothing lost."""

from __future__ import annotations

from tracerag.cli.reports import TABLE_WIDTH, print_report, table_lines
from tracerag.registry import PROGRAMS


def _report(program: str) -> dict:
    """A report with every column the program's table shows, at their widest (a value of 0.1234)."""
    columns = ("recall@10", "hit@10", "mrr", *PROGRAMS[program].report_columns)
    scores = {column: 0.1234 for column in columns} | {"n": 12345} | {
        key: 12.3456 for key in ("lm_calls_per_query", "lm_calls_per_question", "lm_calls_max", "lm_call_budget",
                                 "latency_ms_p50", "latency_ms_p95")}
    return {"program": program, "dataset": "d", "k": 10, "n": 12345, "metrics": scores,
            "breakdown": {"category": {"a-category-name-longer-than-the-name-column": scores, "b": scores}}}


def test_every_programs_table_fits_100_columns_and_keeps_every_column(capsys):
    for program in PROGRAMS:
        print_report(_report(program), PROGRAMS[program].report_columns)
        lines = capsys.readouterr().out.splitlines()[1:]         # the title is prose
        assert max(map(len, lines)) <= TABLE_WIDTH, program
        headers = " ".join(line for line in lines if line.startswith(" "))
        for column in ("recall@10", *PROGRAMS[program].report_columns, "n"):
            assert f" {column}" in headers, (program, column)


def test_columns_that_do_not_fit_continue_below_with_the_row_names_again():
    scores = {f"metric_number_{n}": n / 10 for n in range(8)}
    lines = table_lines([("ALL", scores), ("home=a", scores)], list(scores), width=60)
    assert max(map(len, lines)) <= 60
    blocks = "\n".join(lines).split("\n\n")
    assert len(blocks) > 1 and all(block.splitlines()[1].startswith("ALL ") for block in blocks)
    assert sum(block.splitlines()[0].count("metric_number_") for block in blocks) == 8
