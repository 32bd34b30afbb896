"""How many tool calls one SearchAgent run may make: a cap per tool and a cap in total.

Without caps a model that never feels it has enough evidence searches forever; PubMed queries also
cost quota. Over a cap the model is not silently ignored: it gets an error tool output telling it to
answer now (the loop in ``agent.search_agent`` decides what happens if it calls again).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

__all__ = ["TOOL_DESCRIPTIONS", "ToolBudget"]

# What the step policy is told each protocol tool does; any other tool is "an MCP tool".
TOOL_DESCRIPTIONS = {
    "pubmed_search": "search PubMed abstracts; the text is 3 to 6 keywords, snippet ids are PMIDs",
    "browse_webpage": "read one web page or local file; the text is its URL",
    "google_search": "search the web; the text is the query, snippet ids are URLs",
}


class ToolBudget:
    def __init__(self, per_tool: Mapping[str, int], default_per_tool: int, total: int) -> None:
        self.per_tool = dict(per_tool)
        self.default_per_tool = default_per_tool
        self.total = total
        self.used: Counter[str] = Counter()

    def cap(self, tool: str) -> int:
        return self.per_tool.get(tool, self.default_per_tool)

    def refusal(self, tool: str) -> str | None:
        """The error the model gets when ``tool`` may not be called any more; None when it may."""
        if sum(self.used.values()) >= self.total:
            return f"all {self.total} tool calls are used; answer now with the evidence you have"
        if self.used[tool] >= self.cap(tool):
            return f"{tool} may be called at most {self.cap(tool)} times; answer now with the evidence you have"
        return None

    def spend(self, tool: str) -> None:
        self.used[tool] += 1

    def describe(self, tools: Iterable[str]) -> str:
        """The policy's view of the tools: what each does and how many calls it has left."""
        left_total = max(self.total - sum(self.used.values()), 0)
        lines = []
        for tool in tools:
            left = min(max(self.cap(tool) - self.used[tool], 0), left_total)
            what = TOOL_DESCRIPTIONS.get(tool, "an MCP tool")
            lines.append(f"- {tool}: {what} ({left} of {self.cap(tool)} calls left)")
        lines.append(f"Calls left in total: {left_total}.")
        return "\n".join(lines)
