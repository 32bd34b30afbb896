"""ExperienceRetrieval with the fake LM: rounds, the sufficiency cap, switches, and every fallback path."""

import logging

import dspy
import pytest

from tracerag.experience.experience_retrieval import (
    Candidate,
    ExperienceConfig,
    ExperienceRetrieval,
    extractive_experience,
    render_experience_section,
)
from tracerag.memory.experience_bank import build_experience_bank
from tracerag.stores.cosine_bank import CosineBank

QUESTION = "How much did I pay for the groceries on this receipt, tax included?"


@pytest.fixture
def bank(traces_dir, tmp_path, embedder):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    return CosineBank.load(tmp_path / "bank", embedder)


def program(bank, reranker=None, **config):
    return ExperienceRetrieval(bank, ExperienceConfig(enable=True, **config), reranker=reranker)


class ReversingReranker:
    def __init__(self):
        self.queries = []

    def rerank(self, query, documents, top_n=None):
        self.queries.append(query)
        return [(i, float(i)) for i in reversed(range(len(documents)))]


class BrokenReranker:
    def rerank(self, query, documents, top_n=None):
        raise ConnectionError("rerank service unreachable")


def test_disabled_builds_nothing_and_returns_no_experience():
    disabled = ExperienceRetrieval()  # no bank needed: the default is off
    assert disabled.predictors() == []
    pred = disabled(question=QUESTION)
    assert pred.experience == "" and pred.section == "" and pred.task_ids == [] and pred.lm_calls == 0


def test_enabled_without_bank_is_a_clear_error():
    with pytest.raises(ValueError, match="needs a bank"):
        ExperienceRetrieval(None, {"enable": True})


def test_no_lm_searches_the_raw_task_and_extracts_experience(bank):
    pred = program(bank)(question=QUESTION, sub_task="add up a shopping receipt")
    assert pred.queries == [[f"{QUESTION}\nTask: add up a shopping receipt"]]
    assert pred.task_ids[0][0].startswith("receipt-") and len(pred.task_ids[0]) == 5
    assert pred.used_task_ids == pred.task_ids[0][:3] and pred.lm_calls == 0
    assert pred.hint is None and pred.lm_fallbacks == []  # no LM is not a failure
    assert "ocr -> calculator" in pred.experience and pred.error is None
    assert pred.section.startswith("## Experience from Similar Tasks\n")


def test_no_lm_experience_says_a_lesson_several_tasks_teach_once():
    lesson = {"sub_task": "a receipt's total", "tools": ["ocr", "calculator"], "reasoning": "Re-add every line. Then."}
    other = {"sub_task": "a chart's peak", "tools": ["ocr"], "reasoning": "Read the axis first."}
    picked = [Candidate(task_id, 0.9, None, meta) for task_id, meta in
              [("r-1", lesson), ("c-1", other), ("r-2", lesson)]]
    experience, used = extractive_experience(picked)
    assert used == ["r-1", "c-1", "r-2"]
    assert experience.splitlines() == [
        "- For a similar task (a receipt's total), the tools used were ocr -> calculator. Re-add every line."
        " (2 solved tasks)",
        "- For a similar task (a chart's peak), the tools used were ocr. Read the axis first."]


def test_one_round_with_the_lm(bank, fake_lm):
    engine = fake_lm(summary_ids=["made-up-0001"])
    pred = program(bank, max_retrieval_rounds=1)(question=QUESTION)
    assert engine.calls == ["RewriteQuery", "SummarizeExperience"] and pred.lm_calls == 2
    assert pred.queries[0] == [QUESTION, f"how to solve: {QUESTION}"]  # the raw task stays a query
    assert pred.rounds == 1 and pred.experience.startswith("Use the tools of receipt-")
    assert pred.used_task_ids == pred.task_ids[0][:2]  # the hallucinated id is dropped
    assert "made-up-0001" not in pred.used_task_ids
    assert pred.hint is None and pred.lm_fallbacks == [] and pred.error is None


def test_a_rewrite_adds_tasks_after_the_raw_tasks_own_and_never_displaces_them(bank, fake_lm):
    # the rewrite finds another family, and the reranker prefers whatever comes last: without tiers the
    # plant tasks would take the selection; with them it is the no-LM selection, the plant tasks after it
    limits = {"top_k": 4, "top_n": 4}
    without_lm = program(bank, reranker=ReversingReranker(), **limits)(question=QUESTION)
    fake_lm(rewrites=["Is this plant safe for my cat? Reverse image search the leaves."])
    pred = program(bank, reranker=ReversingReranker(), **limits)(question=QUESTION)
    assert pred.task_ids[0] == without_lm.task_ids[0] and all(t.startswith("receipt-") for t in pred.task_ids[0])
    added = pred.retrieved_task_ids[0][4:]
    assert added and all(t.startswith("plant-") for t in added)  # found, and listed after the raw task's


def test_rounds_stop_at_the_cap_when_never_sufficient(bank, fake_lm):
    engine = fake_lm(sufficiency=[False])
    pred = program(bank, max_retrieval_rounds=3)(question=QUESTION)
    assert pred.rounds == 3 and len(pred.task_ids) == 3
    assert engine.calls.count("CheckSufficiency") == 2  # never after the last round
    assert pred.lm_calls == 8 == len(engine.calls)
    rewrites = [user for name, user in engine.inputs if name == "RewriteQuery"]
    assert "how to verify the answer" not in rewrites[0] and "Gap: how to verify the answer" in rewrites[1]
    assert pred.queries[1][-1] == "gap: Gap: how to verify the answer"


def test_sufficient_first_round_stops_early(bank, fake_lm):
    engine = fake_lm(sufficiency=[True])
    pred = program(bank, max_retrieval_rounds=3)(question=QUESTION)
    assert pred.rounds == 1 and engine.calls == ["RewriteQuery", "SummarizeExperience", "CheckSufficiency"]


def test_rewrite_switch_off_uses_the_raw_question(bank, fake_lm):
    engine = fake_lm()
    pred = program(bank, enable_query_rewrite=False)(question=QUESTION)
    assert pred.queries == [[QUESTION]] and engine.calls == ["SummarizeExperience"]


def test_rerank_switch(bank):
    reranker = ReversingReranker()
    on = program(bank, reranker=reranker, top_n=12)(question=QUESTION, caption="a supermarket receipt")
    off = program(bank, reranker=reranker, top_n=12, enable_rerank=False)(question=QUESTION,
                                                                         caption="a supermarket receipt")
    assert on.task_ids[0] == list(reversed(off.task_ids[0]))
    assert reranker.queries == [f"{QUESTION}\na supermarket receipt"]  # question + caption; off never calls


def test_default_reranker_is_the_local_fallback(bank):
    from tracerag.documents.rerankers import LocalReranker

    assert isinstance(program(bank).reranker, LocalReranker)
    assert program(bank, enable_rerank=False).reranker is None


@pytest.mark.parametrize("stage,how", [("RewriteQuery", "error"), ("RewriteQuery", "garbage")])
def test_failed_rewrite_falls_back_to_the_raw_task(bank, fake_lm, stage, how, caplog):
    fake_lm(fail={stage: how})
    pred = program(bank)(question=QUESTION)
    assert pred.queries == [[QUESTION]] and pred.experience and pred.error is None
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["rewrite"] and pred.lm_calls == 2
    assert pred.experience.startswith("Use the tools of")  # the summary still ran
    assert "LM stage rewrite (RewriteQuery) failed" in caplog.text and "searching with the raw task" in caplog.text


def test_failed_reranker_keeps_retrieval_order(bank, caplog):
    broken = program(bank, reranker=BrokenReranker())(question=QUESTION)
    plain = program(bank, enable_rerank=False)(question=QUESTION)
    assert broken.task_ids == plain.task_ids and "reranker failed" in caplog.text


@pytest.mark.parametrize("how", ["error", "garbage"])
def test_failed_summary_gives_the_extractive_experience(bank, fake_lm, how, caplog):
    caplog.set_level(logging.WARNING)
    fake_lm(fail={"SummarizeExperience": how})
    pred = program(bank)(question=QUESTION)
    extractive = program(bank, enable_summary=False)(question=QUESTION)  # the same rewrite, no summary
    assert pred.task_ids == extractive.task_ids and pred.experience.startswith("- For a similar task")
    assert (pred.experience, pred.used_task_ids) == (extractive.experience, extractive.used_task_ids)
    assert pred.section and pred.error is None  # an LM failure is not an error: it is marked
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["summarize"] and pred.lm_calls == 2
    assert "LM stage summarize (SummarizeExperience) failed" in caplog.text


def test_failed_sufficiency_check_accepts_the_experience(bank, fake_lm):
    fake_lm(fail={"CheckSufficiency": "error"})
    pred = program(bank, max_retrieval_rounds=3)(question=QUESTION)
    assert pred.rounds == 1 and pred.experience.startswith("Use the tools of") and pred.error is None
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["check"] and pred.lm_calls == 3


def test_dead_lm_everywhere_gives_the_no_lm_result(bank, fake_lm):
    prog = program(bank, max_retrieval_rounds=2)
    no_lm = prog(question=QUESTION)
    fake_lm(mode="error")
    pred = prog(question=QUESTION)
    for key in ("experience", "task_ids", "retrieved_task_ids", "used_task_ids", "queries", "rounds"):
        assert pred[key] == no_lm[key], key
    assert pred.experience and pred.error is None and pred.hint == "lm_failed"
    assert pred.lm_fallbacks == ["rewrite", "summarize", "check"] and pred.lm_calls == 3


def test_failing_embedder_gives_empty_experience(bank, monkeypatch):
    def boom(texts):
        raise TimeoutError("embedding endpoint timed out")

    monkeypatch.setattr(bank.embedder, "embed", boom)
    pred = program(bank)(question=QUESTION)
    assert pred.experience == "" and "TimeoutError" in pred.error


def test_min_score_filters_everything(bank):
    pred = program(bank, min_score=0.99)(question="completely unrelated: sing me a lullaby")
    assert pred.task_ids == [[]] and pred.experience == "" and pred.error is None


def test_images_reach_the_rewrite_and_unreadable_ones_are_dropped(bank, fake_lm, tmp_path, caplog):
    png = tmp_path / "receipt.png"
    png.write_bytes(bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                                  "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"))
    engine = fake_lm()
    pred = program(bank)(question=QUESTION, images=[str(png), str(tmp_path / "missing.png")])
    assert pred.experience and engine.calls[0] == "RewriteQuery"
    assert "cannot read image" in caplog.text


def test_render_experience_section():
    assert render_experience_section("") == "" and render_experience_section("  \n") == ""
    section = render_experience_section("Use OCR, then add up.")
    assert section == ("## Experience from Similar Tasks\n"
                       "The following experience is derived from similar previously solved tasks.\n"
                       "Use it as reference, not as strict rules.\n\nUse OCR, then add up.\n")


def test_deepcopy_shares_the_bank(bank):
    prog = program(bank)
    clone = prog.deepcopy()
    assert clone.store is prog.store and clone.rewrite is not prog.rewrite


def test_save_and_load_round_trip(bank, tmp_path, fake_lm):
    import tracerag

    prog = program(bank, max_retrieval_rounds=2, top_n=3)
    prog.summarize.demos = [dspy.Example(question="q", image_caption="", candidates="[x] q",
                                         experience="Use OCR.", task_ids=["x"])]
    tracerag.save(prog, tmp_path / "exp.json", dataset="traces")
    loaded = tracerag.load(tmp_path / "exp.json", embedder=bank.embedder)
    assert loaded.config == prog.config and len(loaded.summarize.demos) == 1
    assert loaded.store.bank.directory.resolve() == bank.directory.resolve()
    fake_lm(sufficiency=[True])
    assert loaded(question=QUESTION).experience


def test_rewrite_caption_feeds_rerank_and_summary(bank, fake_lm):
    engine = fake_lm()
    reranker = ReversingReranker()
    program(bank, reranker=reranker)(question=QUESTION)
    assert reranker.queries == [f"{QUESTION}\na picture"]  # the caption RewriteQuery wrote
    summary_prompt = next(user for name, user in engine.inputs if name == "SummarizeExperience")
    assert "[[ ## image_caption ## ]]\na picture" in summary_prompt
