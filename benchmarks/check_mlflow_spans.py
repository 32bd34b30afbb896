"""Check that the programs' retrieval and tool spans reach ``mlflow.dspy.autolog()`` traces.

Run it in an environment that has MLflow (it is not a dependency of tracerag), e.g.:

    python3 -m venv /tmp/mlflow-venv && /tmp/mlflow-venv/bin/pip install mlflow-skinny -e .
    /tmp/mlflow-venv/bin/python benchmarks/check_mlflow_spans.py

With a local file tracking store in a temporary directory and no LM (every program has a no-LM path),
it calls SelfReflectiveRAG (sync and ``await acall``), ExperienceRetrieval, TraceablePlanner (with a
template store) and SearchAgent (an in-process toolbox), then reads each call's trace back from the
store and checks that it holds the tool span of each retrieval step or tool call
(``Tool.corpus.search``, ``Tool.experience_bank.search``, ``Tool.templates.retrieve``,
``Tool.pubmed_search``), nested under the program's module span, with the step's inputs and the ids
it returned; that concurrent ``acall``s give one trace each, each holding its own search; and, when the
tests' helpers import (pytest installed), the same with an LM (the tests' stub server) next to the LM
stages' spans. Prints one line per trace and exits non-zero when a span is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")  # a trace is in the store when the call returns
os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")  # a local file store (mlflow-skinny has no SQL store)

import dspy  # noqa: E402
import mlflow  # noqa: E402

from tracerag.agent.search_agent import SearchAgent  # noqa: E402
from tracerag.documents.corpus import ingest_documents  # noqa: E402
from tracerag.documents.hybrid import HybridRetriever  # noqa: E402
from tracerag.embedding.embedders import LexicalEmbedder  # noqa: E402
from tracerag.experience.experience_retrieval import ExperienceConfig, ExperienceRetrieval  # noqa: E402
from tracerag.memory.experience_bank import build_experience_bank  # noqa: E402
from tracerag.memory.playbook import index_templates  # noqa: E402
from tracerag.planner.traceable_planner import TraceablePlanner  # noqa: E402
from tracerag.rag.self_reflective_rag import SelfReflectiveRAG  # noqa: E402
from tracerag.stores.cosine_bank import CosineBank  # noqa: E402
from tracerag.stores.stores import open_store  # noqa: E402
from tracerag.tools.mcp_client import ToolResult  # noqa: E402

ABSTRACTS = {
    "100": "Statins lower LDL cholesterol in adults with diabetes. Cardiovascular events fell by a quarter.",
    "200": "Aspirin before colonoscopy does not raise bleeding risk. Bleeding rates were similar.",
    "300": "Telephone counselling increased mammography use among women. Tailored letters helped less.",
}
TEMPLATES = [{"id": "tpl-pcr", "title": "Routine PCR", "text": "Mix master mix with primers and template."},
             {"id": "tpl-elisa", "title": "ELISA", "text": "Coat the plate, block, add samples and antibody."}]


class Tools:
    """An in-process toolbox with one search tool (what ``Toolbox`` offers the agent)."""

    def schemas(self):
        return {"pubmed_search": {"limit": int}}

    def call(self, call):
        docs = [{"id": "111", "text": "Aspirin lowered stroke risk in older adults.", "score": 0.9},
                {"id": "222", "text": "A second abstract about aspirin.", "score": 0.5}]
        return ToolResult(call.name, docs[: call.params.get("limit", 5)])


def traces_dir(root: Path) -> Path:
    """Two solved tasks in the trace layout (``tasks/<task_id>/trace.json``)."""
    for i, (question, sub_task, reasoning) in enumerate([
            ("Sum the items on my grocery receipt.", "add up a shopping receipt", "Add the line items, then tax."),
            ("Convert 3 miles to kilometres.", "convert units", "Multiply by 1.609.")]):
        trace = {"task_id": f"task-{i:04d}", "question": question, "sub_task": sub_task, "images": [],
                 "tools": ["calculator"], "steps": [{"thought": "compute", "tool": "calculator", "tool_input": "...",
                                                     "observation": "..."}],
                 "reasoning": reasoning, "final_answer": "42", "is_correct": True}
        path = root / "tasks" / trace["task_id"] / "trace.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(trace), encoding="utf-8")
    return root


def spans_of(trace) -> list[dict]:
    return [{"name": s.name, "type": s.span_type, "parent": s.parent_id, "id": s.span_id, "inputs": s.inputs,
             "outputs": s.outputs} for s in trace.data.spans]


def check(label: str, call, expected: str, id_key: str = "ids") -> bool:
    call()
    trace = mlflow.get_trace(mlflow.get_last_active_trace_id())
    spans = spans_of(trace)
    tools = [s for s in spans if s["name"] == f"Tool.{expected}"]
    root = next(s for s in spans if s["parent"] is None)
    ok = bool(tools) and all(s["type"] == "TOOL" and s["parent"] is not None and (s["outputs"] or {}).get(id_key)
                             for s in tools)
    names = {}
    for s in spans:
        names[s["name"]] = names.get(s["name"], 0) + 1
    first = tools[0] if tools else {}
    print(f"{'ok ' if ok else 'MISSING'} {label}: trace {trace.info.trace_id} root {root['name']!r}, "
          f"{len(spans)} spans {names}; Tool.{expected} inputs {first.get('inputs')} "
          f"{id_key} {(first.get('outputs') or {}).get(id_key)}")
    return ok


def check_concurrent(rag, questions: list[str]) -> bool:
    """Several ``acall`` at once: one trace per call, each with its own ``corpus.search`` span."""
    async def together():
        return await asyncio.gather(*(rag.acall(question=q) for q in questions))

    asyncio.run(together())
    traces = mlflow.search_traces(return_type="list", max_results=len(questions), order_by=["timestamp_ms DESC"])
    seen = []
    for trace in traces:
        tools = [s for s in spans_of(trace) if s["name"] == "Tool.corpus.search"]
        root = next(s for s in spans_of(trace) if s["parent"] is None)
        seen.append((root["inputs"] or {}).get("question") if len(tools) == 1 and
                    tools[0]["inputs"]["query"] == (root["inputs"] or {}).get("question") else None)
    ok = sorted(q for q in seen if q) == sorted(questions)
    print(f"{'ok ' if ok else 'MISSING'} {len(questions)} concurrent SelfReflectiveRAG.acall(): {len(traces)} traces, "
          f"each with one Tool.corpus.search of its own question: {ok}")
    return ok


def check_with_lm(rag, question: str) -> bool | None:
    """SelfReflectiveRAG with an LM: the tests' stub OpenAI-compatible server (tests/lm_server.py) answering
    from the tests' fake engine, reached through DSPy over HTTP. The retrieval span sits next to the LM
    stages' spans under the program's span. Skipped (None) without the tests' helpers (they need pytest)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    try:
        from conftest import FakeEngine
        from lm_server import StubLMServer
    except ImportError as exc:
        print(f"skipped  SelfReflectiveRAG with an LM: the tests' helpers need {exc.name}")
        return None
    with StubLMServer(FakeEngine()) as stub:
        dspy.configure(lm=stub.lm(timeout=10), adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
        try:
            return all([check("SelfReflectiveRAG() with an LM", lambda: rag(question=question), "corpus.search"),
                        check("SelfReflectiveRAG.acall() with an LM", lambda: asyncio.run(rag.acall(question=question)),
                              "corpus.search")])
        finally:
            dspy.configure(lm=None)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        mlflow.set_tracking_uri(f"file://{tmp_path / 'mlruns'}")
        mlflow.set_experiment("tracerag-spans")
        mlflow.dspy.autolog()
        dspy.configure(lm=None)
        embedder = LexicalEmbedder(512)

        docs = tmp_path / "docs.jsonl"
        docs.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in ABSTRACTS.items()),
                        encoding="utf-8")
        ingest_documents(docs, tmp_path / "chunks", embedder)
        rag = SelfReflectiveRAG(HybridRetriever(CosineBank.load(tmp_path / "chunks", embedder)))
        build_experience_bank(traces_dir(tmp_path / "traces"), tmp_path / "exp", embedder)
        experience = ExperienceRetrieval(CosineBank.load(tmp_path / "exp", embedder), ExperienceConfig(enable=True))
        store = open_store(tmp_path / "tpl", embedder_id=embedder.id, dim=embedder.dim, create=True)
        index_templates(store, embedder, TEMPLATES)
        planner = TraceablePlanner(retrieve_templates=store, embedder=embedder)
        agent = SearchAgent(Tools())

        question = "Do statins lower LDL cholesterol in diabetes?"
        results = [
            check("SelfReflectiveRAG()", lambda: rag(question=question), "corpus.search"),
            check("SelfReflectiveRAG.acall()", lambda: asyncio.run(rag.acall(question=question)), "corpus.search"),
            check("ExperienceRetrieval()", lambda: experience(question="Add up my shopping receipt."),
                  "experience_bank.search"),
            check("TraceablePlanner()", lambda: planner(requirements="Set up a PCR."), "templates.retrieve"),
            check("SearchAgent()", lambda: agent(question="Does aspirin prevent stroke?"), "pubmed_search"),
            check("SearchAgent.acall()", lambda: asyncio.run(agent.acall(question="Does aspirin prevent stroke?")),
                  "pubmed_search"),
        ]
        results.append(check_concurrent(rag, [question, "Does aspirin raise bleeding risk?",
                                              "Does telephone counselling raise mammography use?"]))
        dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)  # every LM call reaches the stub
        with_lm = check_with_lm(rag, question)
        if with_lm is not None:
            results.append(with_lm)
        print(f"mlflow {mlflow.__version__}, dspy {dspy.__version__}: "
              f"{sum(results)}/{len(results)} traces hold their retrieval/tool spans")
        return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
