"""Running a mutant: explore it on each config in turn until one kills it.

A config the clean run decides without a search (`baseline.py`) is skipped or passed as the clean
one; every other is searched within the budget (`search.py`). A property kills a mutant; so does a
complete search that no longer reaches a known Kafka 2.6 violation the clean model reaches on that
config (`KNOWN_LOST`): the model pins 2.6, and its Findings are behaviour to reproduce, which the
tests of the Findings' traces would also catch. With `Budget.liveness`, a mutant the safety search
leaves alive is judged by liveness too (`kcm explore --liveness` on the configs where its states
differ), so that a controller re-putting an event forever, which never reaches a state the other
properties judge, is killed by EventuallyQuiescent.

`run_local` is the sequential engine; `kcm.spark_explore.mutate` runs one mutant per Spark task
with the same `run_mutant`.
"""

from __future__ import annotations

import dataclasses
import importlib
import signal
import threading
import time
from collections.abc import Mapping
from typing import Any

from kcm.checker.mutation.baseline import Baseline, same_as_clean
from kcm.checker.mutation.generate import Mutant
from kcm.checker.mutation.loader import LoadedMutant, load, unload
from kcm.checker.mutation.outcome import CRASHED, EQUIVALENT, KILLED, SURVIVED, TIMED_OUT, Outcome
from kcm.checker.mutation.search import Budget, explore_with_budget, liveness_verdict, random_walks
from kcm.model.config import ModelConfig


def run_mutant(mutant: Mutant, configs: list[tuple[str, ModelConfig]], bases: list[Baseline], budget: Budget,
               sources: Mapping[str, str] | None = None) -> Outcome:
    """Explore one mutant on each config in turn until one kills it (`_run_mutant`), with its CPU time."""
    cpu, started = time.process_time(), time.monotonic()
    with _Alarm(None if budget.timeout_s is None else budget.timeout_s + _ALARM_GRACE_S):
        try:
            outcome = _run_mutant(mutant, configs, bases, budget, sources)
        except _Overrun:
            # A step that never returns (a negated retry condition loops forever inside one
            # event): the cooperative deadline, checked between states, cannot stop it.
            outcome = Outcome(mutant.id, mutant.file, mutant.line, mutant.operator, TIMED_OUT,
                              error="a step did not return within the timeout", seconds=time.monotonic() - started)
    return dataclasses.replace(outcome, cpu=time.process_time() - cpu)


#: Seconds past `--timeout` before the alarm interrupts a mutant stuck inside one step.
_ALARM_GRACE_S = 5.0

#: The "property" of a mutant killed because it no longer reaches a known 2.6 violation.
KNOWN_LOST = "KnownViolationReproduced"


class _Overrun(BaseException):
    """Raised by `_Alarm` in the middle of the mutant's code: a BaseException, so that the model's
    own `except Exception` clauses cannot swallow it."""


class _Alarm:
    """`signal.setitimer` for the main thread (the sequential engine, a Spark Python worker);
    elsewhere (a thread) nothing, and only the cooperative deadline applies."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.armed = (seconds is not None and hasattr(signal, "setitimer")
                      and threading.current_thread() is threading.main_thread())
        self.previous = None

    def __enter__(self):
        if self.armed:
            def ring(signum, frame):
                raise _Overrun()

            self.previous = signal.signal(signal.SIGALRM, ring)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


def _run_mutant(mutant: Mutant, configs: list[tuple[str, ModelConfig]], bases: list[Baseline], budget: Budget,
                sources: Mapping[str, str] | None = None) -> Outcome:
    """Explore one mutant on each config in turn until one kills it.

    A config where the clean run never executed the mutated lines is skipped (the mutant explores
    it exactly as the clean model did); one where the mutant's successors equal the clean ones on
    every clean state is decided without a search (`same_as_clean`): it passes, with the clean
    state count and fingerprint set. A mutant skipped on every config is an equivalent suspect,
    "unreached"; one decided without a search on every config it reaches, an equivalent suspect."""
    run = _Run(mutant, time.monotonic())
    deadline = run.started + budget.timeout_s if budget.timeout_s is not None else None
    if not any(base.reaches(mutant) for base in bases):
        return run.outcome(EQUIVALENT, note="unreached")
    try:
        loaded = load(mutant.source, mutant.file, sources)
    except Exception as exc:  # noqa: BLE001 - any failure of the mutant is its outcome
        return run.outcome(CRASHED, config=configs[0][0], error=_error(exc))
    try:
        return _explore(run, loaded, configs, bases, budget, deadline)
    finally:
        unload(loaded)


@dataclasses.dataclass
class _Run:
    """One mutant's run so far: what it explored, and how to report it."""

    mutant: Mutant
    started: float
    distinct: int = 0
    searched: int = 0
    compared: int = 0

    def outcome(self, status: str, **fields: Any) -> Outcome:
        m = self.mutant
        return Outcome(m.id, m.file, m.line, m.operator, status, distinct=self.distinct,
                       seconds=time.monotonic() - self.started, searched=self.searched, compared=self.compared,
                       **fields)


def _explore(run: _Run, loaded: LoadedMutant, configs: list[tuple[str, ModelConfig]], bases: list[Baseline],
             budget: Budget, deadline: float | None) -> Outcome:
    same, cut_any = True, False
    differs: list[int] = []  # the configs where the mutant's states are not the clean model's
    for i, ((name, cfg), base) in enumerate(zip(configs, bases)):
        if not base.reaches(run.mutant):
            continue  # the mutated lines never run here: the exploration is the clean one
        if not budget.walks and same_as_clean(loaded, cfg, base, run.mutant, deadline):
            run.distinct += base.distinct  # what the search would have found: the clean graph
            run.compared += 1
            continue
        run.searched += 1
        try:
            result, digest, cut = _search(loaded, cfg, budget, deadline)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001
            return run.outcome(CRASHED, config=name, error=_error(exc))
        run.distinct += result.stats.distinct
        if result.verdict == "violation":
            v = result.violations[0]
            return run.outcome(KILLED, property=v.name, trace_length=v.trace_length, config=name)
        if cut:
            cut_any = True
            if deadline is not None and time.monotonic() > deadline:
                break
            continue
        # The model pins Kafka 2.6, whose known violations (the model's Findings) are behaviour to
        # reproduce, not only to excuse: a mutant whose complete search no longer reaches one
        # the clean model reaches on this config has lost a documented 2.6 behaviour (e.g. a
        # StopReplica fenced at the equal leader epoch, Findings 8). Random walks are no complete
        # search: a walk that missed a Finding says nothing about the mutant.
        lost = [] if budget.walks else sorted((base.known or frozenset()) - {v.name for v in result.known_violations})
        if lost:
            return run.outcome(KILLED, property=f"{KNOWN_LOST}({lost[0]})", config=name)
        # Goals not required (a grid's scope): a goal the clean model meets here and the mutant
        # no longer does is the violation a required goal would have been.
        unmet = [] if budget.walks or not base.goals_met else sorted(
            base.goals_met - {n for n, g in result.goals.items() if g.met})
        if unmet:
            return run.outcome(KILLED, property=unmet[0], config=name)
        if base.digest is None or (result.stats.distinct, digest) != (base.distinct, base.digest):
            same = False
            differs.append(i)
    if budget.liveness and not cut_any and not same:
        killed, cut_any = _judge_liveness(run, loaded, [(configs[i], bases[i]) for i in differs], budget, deadline)
        if killed is not None:
            return killed
    return run.outcome(TIMED_OUT if cut_any else (EQUIVALENT if same else SURVIVED))


def _search(loaded: LoadedMutant, cfg: ModelConfig, budget: Budget,
            deadline: float | None) -> tuple[Any, str | None, bool]:
    """The mutant's search of one config: (result, digest of its fingerprint set, cut short?)."""
    model = loaded.spec.KafkaModel(cfg)
    if budget.walks:
        result = random_walks(model, budget, deadline)
        return result, None, result.verdict == "incomplete"
    return explore_with_budget(model, budget, deadline)


def _judge_liveness(run: _Run, loaded: LoadedMutant, differing: list[tuple[tuple[str, ModelConfig], Baseline]],
                    budget: Budget, deadline: float | None) -> tuple[Outcome | None, bool]:
    """Safety found nothing: a mutant that makes the controller re-put an event forever (a znode
    never deleted, its own write firing its own watch) never reaches a state a settled or
    quiescence property judges, and only liveness sees it. Judged on the configs where the
    mutant's states differ and the clean model's liveness is known; a livelock the clean model
    has too is no kill. Returns (the kill or crash, if any; whether the deadline cut the pass)."""
    for (name, cfg), base in differing:
        if base.live is None:
            continue
        try:
            quotient = importlib.import_module(f"{loaded.package}.checking.epoch_quotient")
            live = liveness_verdict(quotient.EpochQuotientModel(cfg), budget, deadline)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001
            return run.outcome(CRASHED, config=name, error=_error(exc)), False
        if live is None:
            if deadline is not None and time.monotonic() > deadline:
                return None, True
            continue  # undecided here (the bound cut its graph): the safety verdict stands
        new = [v for v in live.violations if v.name not in base.live]
        if new:
            return run.outcome(KILLED, property=new[0].name, trace_length=new[0].trace_length, config=name), False
    return None, False


def _error(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"[:200] if first else type(exc).__name__


def run_local(mutants: list[Mutant], configs, bases, budget: Budget, sources=None, on_done=None,
              collect: list | None = None) -> list[Outcome]:
    """The sequential engine: one mutant after the other, in order (appended to `collect`, so
    that an interrupted run keeps what it did)."""
    out = collect if collect is not None else []
    for m in mutants:
        o = run_mutant(m, configs, bases, budget, sources)
        out.append(o)
        if on_done is not None:
            on_done(o)
    return out
