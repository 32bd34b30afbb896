"""What the service asks of a program beyond calling it comes from the program's own service hooks: the embedders
to warm, and what to release when it stops. The service knows no program's attributes."""

from __future__ import annotations

from types import SimpleNamespace


class Embedder:
    id, dim = "e", 4

    def embed(self, texts):
        return [[0.0] * self.dim for _ in texts]


def _served(name, program):
    from tracerag.serving.programs import ENDPOINTS, ServedProgram

    return ServedProgram(ENDPOINTS[name], program)


def test_each_program_names_the_embedders_it_embeds_queries_with():
    from tracerag.serving.programs import embedders_of

    one, two = Embedder(), Embedder()
    cached = SimpleNamespace(inner=two, embed=two.embed)  # a cache in front of a model: the model is warmed
    programs = {"commands": _served("commands", SimpleNamespace(indexes={"a": SimpleNamespace(embedder=one),
                                                                         "b": SimpleNamespace(embedder=one)})),
                "experience": _served("experience", SimpleNamespace(embedder=cached)),
                "rag": _served("rag", SimpleNamespace(retriever=SimpleNamespace(embedder=one))),
                "planner": _served("planner", SimpleNamespace(retrieve_templates=None)),
                "agent": _served("agent", SimpleNamespace())}
    assert embedders_of(programs) == [one, two]
    assert _served("rag", object()).embedders() == []  # a program built otherwise: nothing found, no error


def test_the_agent_closes_its_tool_servers_and_starts_none_to_close():
    from tracerag.agent.search_agent import SearchAgent

    closed = []
    _served("agent", SearchAgent(SimpleNamespace(close=lambda: closed.append(True)))).close()
    assert closed == [True]
    never_opened = SearchAgent()
    _served("agent", never_opened).close()
    assert never_opened._toolbox is None
    _served("rag", SimpleNamespace()).close()  # nothing held beyond memory: nothing to do
