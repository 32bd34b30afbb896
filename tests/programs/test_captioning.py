"""Captioning trace images with a (fake) vision LM while building the bank."""

import threading

import dspy
from conftest import FakeEngine, make_trace, write_traces
from overlap import Together

from tracerag.memory.experience_bank import build_experience_bank
from tracerag.memory.traces import load_traces
from tracerag.programs.captioning import make_captioner
from tracerag.stores.cosine_bank import CosineBank

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


class SlowEngine(FakeEngine):
    """Records how many calls are in flight at once; with ``together``, its first calls answer only once that
    many are in."""

    def __init__(self, together: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.lock, self.active, self.peak = threading.Lock(), 0, 0
        self.together = Together(together) if together else None

    def complete(self, request):
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        if self.together is not None:
            self.together.arrive()
        try:
            return super().complete(request)
        finally:
            with self.lock:
                self.active -= 1


def traces_with_images(directory, n):
    traces = [make_trace("plant", i, images=["images/leaf.png"]) for i in range(1, n + 1)]
    write_traces(directory, traces)
    for t in traces:
        image = directory / "tasks" / t["task_id"] / "images" / "leaf.png"
        image.parent.mkdir(exist_ok=True)
        image.write_bytes(PNG)
    return directory


def test_no_lm_means_no_captioner():
    dspy.configure(lm=None)
    assert make_captioner() is None


def test_captions_eight_at_a_time_and_skips_unreadable_images(tmp_path, embedder, caplog):
    directory = traces_with_images(tmp_path / "traces", 12)
    (directory / "tasks" / "plant-0012" / "images" / "leaf.png").unlink()  # this one cannot be read
    engine = SlowEngine(together=8)  # eight at once, and never a ninth while they are held
    dspy.configure(lm=dspy.LM("fake/vision", engine=engine, cache=False, num_retries=0),
                   adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
    try:
        captions = make_captioner(concurrency=8)(load_traces(directory).traces)
        assert len(captions) == 11 and "plant-0012" not in captions
        assert captions["plant-0001"].startswith("an image for: ")
        assert engine.together.met and engine.peak == 8
        assert "plant-0012: cannot read its images" in caplog.text

        report = build_experience_bank(directory, tmp_path / "bank", embedder, captioner=make_captioner())
        bank = CosineBank.load(tmp_path / "bank", embedder)
        assert report.captioned == 11
        assert bank.metadata(bank.row_of("plant-0003"))["index_text"].startswith("Image description: an image for")
        assert bank.metadata(bank.row_of("plant-0012"))["caption"] is None
    finally:
        dspy.configure(lm=None)


def test_failed_caption_calls_leave_traces_uncaptioned(tmp_path, embedder):
    directory = traces_with_images(tmp_path / "traces", 3)
    dspy.configure(lm=dspy.LM("fake/vision", engine=FakeEngine(mode="error"), cache=False, num_retries=0),
                   adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
    try:
        report = build_experience_bank(directory, tmp_path / "bank", embedder, captioner=make_captioner())
        assert report.added == 3 and report.captioned == 0
    finally:
        dspy.configure(lm=None)


def test_a_dead_lm_costs_a_few_calls_and_one_line_each(tmp_path, caplog):
    from tracerag.lm.policy import policy

    directory = traces_with_images(tmp_path / "traces", 8)
    engine = SlowEngine(mode="error")
    dspy.configure(lm=dspy.LM("fake/vision", engine=engine, cache=False, num_retries=0),
                   adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
    try:
        assert make_captioner(concurrency=1)(load_traces(directory).traces) == {}
    finally:
        dspy.configure(lm=None)
    failed = [r.getMessage() for r in caplog.records if "captioning failed" in r.getMessage()]
    assert len(failed) == policy().breaker_failures  # then the breaker skips the LM
    assert all("\n" not in line and "ServerError" in line for line in failed)
    assert "3 traces indexed without a caption: the LM failed repeatedly" in caplog.text
