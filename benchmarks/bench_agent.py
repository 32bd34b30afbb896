"""SearchAgent on the bundled PubMedQA test split, through the real local MCP server (stdio, default
embedder), without an LM and with a scripted chat LM that breaks the protocol in each known way.

    python benchmarks/bench_agent.py [--limit N]

No LM is reachable on the build machines, so the LM rows use the test suite's fake chat model
(tests/conftest.py AgentEngine: it searches with the question's first five long words, then answers
"Yes." citing the first snippet it was shown; each mode adds one failure). They measure what the
loop does with broken replies (are outputs stripped, caps enforced, citations kept valid, runs
ended with a reason), not answer quality, which needs a real LM. The "no LM" row is the program's
own fallback: one search with the question, the top snippets cited.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import dspy

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from conftest import AgentEngine  # noqa: E402

from tracerag.agent.evaluation import evaluate_agent  # noqa: E402
from tracerag.agent.search_agent import SearchAgent  # noqa: E402
from tracerag.datasets.pubmedqa import load_pubmedqa_questions  # noqa: E402
from tracerag.tools.mcp_client import Toolbox  # noqa: E402

MODES = [  # (label, AgentEngine kwargs)
    ("well-formed", {}),
    ("unclosed call", {"agent": "unclosed"}),
    ("fake <tool_output>, stops ignored", {"agent": "hallucinate", "ignore_stop": True}),
    ("three calls in a reply, stops ignored", {"agent": "multi", "ignore_stop": True}),
    ("no adapter header", {"agent": "no_header"}),
    ("cites an invented id", {"agent": "cite_fake"}),
    ("never calls nor answers", {"agent": "chatty"}),
    ("never stops calling", {"agent": "greedy"}),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0, help="first N test questions (0 = all)")
    args = parser.parse_args()
    examples = [q.to_example() for q in load_pubmedqa_questions("pubmedqa", "test")]
    examples = examples[: args.limit] if args.limit else examples
    print(f"{len(examples)} questions; local MCP server over stdio, default embedder\n")
    print("| LM | answered | stop reasons | tool calls / q | hallucinated outputs / q | citation validity | "
          "own abstract returned | LM calls / q | p50 ms / q |")
    print("|---|---|---|---|---|---|---|---|---|")
    with Toolbox.open() as tools:
        for label, kwargs in [("no LM", None), *MODES]:
            dspy.configure(lm=None if kwargs is None else dspy.LM(
                "fake/model", engine=AgentEngine(**kwargs), cache=False, num_retries=0),
                adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
            report = evaluate_agent(SearchAgent(tools), examples, dataset="pubmedqa", progress=False)
            m = report["metrics"]
            reasons = ", ".join(f"{name} {s['n']}" for name, s in report["breakdown"]["stop_reason"].items())
            print(f"| {label} | {m['answered_rate']:.3f} | {reasons} | {m['tool_calls']:.2f} | "
                  f"{m['hallucinated_outputs']:.2f} | {m['citation_validity']:.3f} | {m['gold_found']:.3f} | "
                  f"{m['lm_calls']:.2f} | {m['latency_ms_p50']:.1f} |")


if __name__ == "__main__":
    main()
