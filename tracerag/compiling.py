"""Compile a program's prompts with a DSPy optimizer (BootstrapFewShot, MIPROv2 or GEPA): the loop every
program's compile runs (each program's own step, with its metric, is its package's ``compiling`` module).

Train on the train split, score on dev before and after, and return the compiled program with its
scores. Each program brings its metric (a strict bool while bootstrapping) and a feedback variant
for GEPA that says in words what went wrong.

Demos are checked against the signature of the predictor that holds them: a training example is a
labelled demo only for a predictor whose input and output fields it carries with valid values (a
CommandRetrieval example carries ParseCommand's ``utterance``, ``rooms`` and gold ``ir``, nothing for
ArbitrateCapability). The teacher that bootstraps sees only such demos, MIPROv2's candidate sets hold
only such demos, and after any optimizer each predictor keeps only such demos, so the adapter never
drops one silently. A program whose examples are no predictor's demo gets no labelled demos at all;
the ones bootstrapped from its own successful traces stay.

``preflight`` fails fast, before any LM call, on an optimizer that cannot run: MIPROv2 without optuna,
a GEPA budget below one iteration, a prompt LM for BootstrapFewShot (which proposes nothing).

An optimizer's own LM calls (MIPROv2's proposals, GEPA's reflection) do not go through the program's
guarded stages. They go to ``prompt_lm`` when given (a stronger model proposing for a smaller one:
MIPROv2's ``prompt_model``, GEPA's ``reflection_lm``), else to the configured LM. Compile bounds,
counts and stops them (``lm/optimizer_calls.py``), and an LM failure that ends the optimizer (MIPROv2 raises
when a proposal fails) leaves the no-LM result, the program with its labelled demos (``"fell_back":
true`` in the scores' ``optimizer_lm``).

A compile is one run with one LM fault budget, as an evaluation is (``lm.fault_budget``): the
program's failing stage calls, in bootstrapping, the optimizer's trials and the dev scores alike, may take
``--lm-fault-budget`` seconds plus 10 % of the compile's time; then the stages take their no-LM path, and
GEPA stops (``optimizer_lm``: nothing is left to learn from). The scores say what it cost
(``lm_fault_budget``: seconds charged, failed calls, spent, the stages shut); a compile whose budget was
spent scored part of its trials without the LM, so its ``after`` is not an LM score.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import random
from collections.abc import Callable
from typing import Any

import dspy
from dspy.utils.exceptions import DSPyError
from pydantic import TypeAdapter, ValidationError

from .errors import InvalidValue
from .lm.fault_budget import lm_fault_budget
from .lm.optimizer_calls import OptimizerCalls, bounded_lm

logger = logging.getLogger(__name__)

OPTIMIZERS = ("bootstrap", "mipro", "gepa")
MAX_BOOTSTRAPPED_DEMOS = 4  # demos from the program's own successful traces, per predictor
MAX_DEMOS = 8  # all demos of a predictor: the traced ones first, then labelled ones up to this
GEPA_MINIBATCH = 3  # GEPA's reflection minibatch (its default), passed explicitly so the minimum below holds
MIPRO_INSTALL = 'pip install "tracerag[mipro]"'


# -- demos that fit their predictor ------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _adapter_for(annotation) -> TypeAdapter | None:
    try:
        return TypeAdapter(annotation)
    except Exception:  # a type pydantic cannot build a validator for: presence is all we check
        return None


def demo_problem(demo, signature: type[dspy.Signature]) -> str | None:
    """Why ``demo`` is not a well-formed demo for ``signature`` (a field missing or None, a value its type
    rejects), or None when it is one: every input and output field present with a value that validates."""
    for name, field in signature.fields.items():
        if name not in demo or demo[name] is None:
            return f"no {name!r}"
        try:
            adapter = _adapter_for(field.annotation)
        except TypeError:  # an unhashable annotation
            adapter = None
        if adapter is not None:
            try:
                adapter.validate_python(demo[name])
            except ValidationError as exc:
                return f"{name!r} does not validate: {exc.errors()[0]['msg']}"
    return None


def _as_demo(demo, signature: type[dspy.Signature]) -> dspy.Example:
    """The demo reduced to its signature's fields (and whether it was bootstrapped)."""
    fields = {name: demo[name] for name in signature.fields}
    return dspy.Example(**fields, **({"augmented": True} if demo.get("augmented") else {}))


def well_formed_demos(signature: type[dspy.Signature], demos: list) -> list[dspy.Example]:
    return [_as_demo(d, signature) for d in demos if demo_problem(d, signature) is None]


def keep_well_formed_demos(program) -> dict[str, int]:
    """Drop every demo that is not well-formed for its predictor's signature; the demos left per predictor."""
    kept = {}
    for name, predictor in program.named_predictors():
        demos = list(predictor.demos or [])
        predictor.demos = well_formed_demos(predictor.signature, demos)
        kept[name] = len(predictor.demos)
        if len(demos) > kept[name]:
            why = demo_problem(next(d for d in demos if demo_problem(d, predictor.signature)), predictor.signature)
            logger.info("%s: dropped %d of %d demos not well-formed for %s (e.g. %s)", name, len(demos) - kept[name],
                        len(demos), predictor.signature.__name__, why)
    return kept


def demos_from_lm(program) -> dict[str, int]:
    """Per predictor, how many of its demos the LM wrote: bootstrapped from its own replies that parsed and
    passed the metric (DSPy marks them ``augmented``; the program file keeps the mark on each demo). The rest
    are labelled examples."""
    return {name: sum(1 for demo in predictor.demos or [] if demo.get("augmented"))
            for name, predictor in program.named_predictors()}


def labelled_demos(program, trainset: list) -> dict[str, list]:
    """Per predictor, the training examples that are well-formed demos for it."""
    return {name: [ex for ex in trainset if demo_problem(ex, predictor.signature) is None]
            for name, predictor in program.named_predictors()}


def _labelled_teacher(program, labelled: dict[str, list], k: int):
    """What BootstrapFewShot's LabeledFewShot step makes of the teacher (k sampled examples per predictor),
    but each predictor samples only examples well-formed for it. The examples stay whole, so bootstrapping
    still leaves an example out of its own prompt."""
    teacher = program.reset_copy()
    for name, predictor in teacher.named_predictors():
        pool = labelled.get(name, [])
        predictor.demos = random.Random(0).sample(pool, min(k, len(pool)))
    teacher._compiled = True
    return teacher


class _WellFormedBootstrap(dspy.BootstrapFewShot):
    """BootstrapFewShot whose labelled demos for a predictor are sampled only among the training examples
    well-formed for it (DSPy samples the same examples for every predictor)."""

    def _train(self):
        rng = random.Random(0)
        for name, predictor in self.student.named_predictors():
            traced = self.name2traces[name][: self.max_bootstrapped_demos]
            pool = [ex for ex in self.validation if demo_problem(ex, predictor.signature) is None]
            predictor.demos = traced + rng.sample(pool, max(0, min(self.max_labeled_demos - len(traced), len(pool))))
        return self.student


class _WellFormedMIPROv2(dspy.MIPROv2):
    """MIPROv2 whose few-shot candidate sets hold only demos well-formed for their predictor."""

    def _bootstrap_fewshot_examples(self, program, *args, **kwargs):
        candidates = super()._bootstrap_fewshot_examples(program, *args, **kwargs)
        for i, predictor in enumerate(program.predictors()):
            if candidates and i in candidates:
                candidates[i] = [well_formed_demos(predictor.signature, demos) for demos in candidates[i]]
        return candidates


# -- preflight -------------------------------------------------------------------------------------


def gepa_minimum_metric_calls(dev_size: int, minibatch: int = GEPA_MINIBATCH) -> int:
    """Metric calls one GEPA iteration needs: the seed on the dev set, the reflection minibatch before and
    after the proposal, and the proposal on the dev set (GEPA checks its budget only between iterations)."""
    return 2 * dev_size + 2 * minibatch


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails to import, or a module set to None
        return False


def preflight(optimizer: str, devset: list | None = None, max_metric_calls: int | None = None,
              prompt_lm=None) -> None:
    """Raise ValueError (one line) when ``optimizer`` cannot run: unknown, MIPROv2 without optuna, a GEPA
    ``max_metric_calls`` below one iteration on ``devset``, or a ``prompt_lm`` that BootstrapFewShot would
    ignore. Makes no LM call."""
    if optimizer not in OPTIMIZERS:
        raise InvalidValue(f"unknown optimizer {optimizer!r}; choose from {list(OPTIMIZERS)}")
    if optimizer == "bootstrap" and prompt_lm is not None:
        raise InvalidValue("--prompt-lm (prompt_lm) is for mipro and gepa; bootstrap proposes no instructions")
    if optimizer == "mipro" and not _installed("optuna"):
        raise InvalidValue(f"the mipro optimizer needs optuna: {MIPRO_INSTALL} (from a checkout: "
                           f"pip install -e \".[mipro]\")")
    if optimizer == "gepa" and max_metric_calls is not None and devset is not None:
        need = gepa_minimum_metric_calls(len(devset))
        if max_metric_calls < need:
            raise InvalidValue(f"gepa: --max-metric-calls {max_metric_calls} is below one iteration on this dev set; "
                               f"use at least {need} (2 x {len(devset)} dev examples + 2 x {GEPA_MINIBATCH} "
                               "reflection minibatch)")


# -- compile ---------------------------------------------------------------------------------------


def _score(program, examples, metric, num_threads: int = 1) -> float:
    evaluator = dspy.Evaluate(devset=examples, metric=metric, num_threads=num_threads, display_progress=False)
    return round(evaluator(program).score / 100, 4)


def compile_program(program, trainset: list, devset: list, optimizer: str, metric: Callable,
                    feedback: Callable, metric_name: str, max_metric_calls: int | None = None,
                    num_threads: int = 1, prompt_lm: dspy.BaseLM | None = None) -> dict[str, Any]:
    """``max_metric_calls`` bounds GEPA's budget (default: its "light" preset, often 1,000+ rollouts);
    ``num_threads`` runs the dev scoring and MIPROv2's / GEPA's evaluations on that many threads;
    ``prompt_lm`` proposes MIPROv2's instructions and GEPA's reflections (default: the configured LM,
    which always runs the program), bounded like it.

    Returns the compiled program, ``lm``: the model that ran it, the dev scores before and after,
    ``demos``: the demos each predictor kept (all well-formed for its signature), ``demos_from_lm``: how many
    of them the LM wrote (bootstrapped from its own successful replies), and ``optimizer_lm``:
    the model the optimizer proposed with and its calls, and ``lm_fault_budget``: what the program's failing
    LM calls cost the compile (``FaultBudget.report``)."""
    preflight(optimizer, devset, max_metric_calls, prompt_lm)
    lm = bounded_lm(dspy.settings.lm)
    own_calls = OptimizerCalls(lm if prompt_lm is None else bounded_lm(prompt_lm))
    with lm_fault_budget() as budget, dspy.context(lm=lm, callbacks=[*dspy.settings.callbacks, own_calls]):
        before = _score(program, devset, metric, num_threads)
        labelled = labelled_demos(program, trainset)
        max_labeled = MAX_DEMOS if any(labelled.values()) else 0  # no slots for examples that are no demo
        teacher = _labelled_teacher(program, labelled, MAX_DEMOS - MAX_BOOTSTRAPPED_DEMOS) if max_labeled else None
        try:
            compiled = _optimize(program, trainset, devset, optimizer, metric, feedback, teacher, max_labeled,
                                 max_metric_calls, num_threads, own_calls)
        except DSPyError as exc:  # the LM failed or answered unusably where the optimizer does not recover
            own_calls.fell_back(exc)
            compiled = _labelled_teacher(program, labelled, MAX_DEMOS) if max_labeled else program.deepcopy()
        after = _score(compiled, devset, metric, num_threads)
    own_calls.warn(optimizer)
    demos = keep_well_formed_demos(compiled)
    return {"program": compiled, "optimizer": optimizer, "lm": getattr(lm, "model", None),
            f"dev_{metric_name}_before": before, f"dev_{metric_name}_after": after,
            "train_examples": len(trainset), "demos": demos, "demos_from_lm": demos_from_lm(compiled),
            "optimizer_lm": own_calls.report(),
            "lm_fault_budget": budget.report()}


def _optimize(program, trainset, devset, optimizer, metric, feedback, teacher, max_labeled, max_metric_calls,
              num_threads, own_calls: OptimizerCalls):
    if optimizer == "bootstrap":
        opt = _WellFormedBootstrap(metric=metric, max_bootstrapped_demos=MAX_BOOTSTRAPPED_DEMOS,
                                   max_labeled_demos=max_labeled)
        return opt.compile(program, teacher=teacher, trainset=trainset)
    if optimizer == "mipro":
        opt = _WellFormedMIPROv2(metric=metric, auto="light", num_threads=num_threads, prompt_model=own_calls.lm,
                                 max_bootstrapped_demos=MAX_BOOTSTRAPPED_DEMOS, max_labeled_demos=max_labeled)
        return opt.compile(program, trainset=trainset, valset=devset, teacher=teacher)
    budget = {"max_metric_calls": max_metric_calls} if max_metric_calls else {"auto": "light"}
    opt = dspy.GEPA(metric=feedback, reflection_lm=own_calls.lm, num_threads=num_threads,
                    reflection_minibatch_size=GEPA_MINIBATCH, gepa_kwargs={"stop_callbacks": own_calls}, **budget)
    return opt.compile(program, trainset=trainset, valset=devset)
