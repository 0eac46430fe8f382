"""Farming scopes out: one scope per local process, or one scope per Spark task.

Both engines share one loop (`farm`): at most `width` scopes in flight, the next one submitted as
soon as one finishes, so that a scope's start line is printed when it really starts and each
finished scope is handed to `on_done` (which writes it to the results folder) at once.

- `local`: a `ProcessPoolExecutor` of `jobs` forked processes, each exploring one scope at a time
  with the sequential explorer (`kcm.sweep.run.run_scope`, its liveness pass included when
  asked). The workers never raise KeyboardInterrupt (it could land inside the pool's own
  queues): Ctrl-C, which reaches the whole process group, and SIGTERM, which may reach the parent
  alone, set a shared `stop` event that the explorer polls, so a running scope ends at once as
  "interrupted".
- `spark`: one one-task Spark job per scope (`sc.parallelize([scope], 1).map(run_scope)`),
  submitted from a pool of driver threads as wide as the cluster's default parallelism, as `kcm
  mutate` runs one mutant per task. A job per scope, not one job over every scope, is what lets
  results come back, and be written, as scopes finish. The executors run the same `run_scope`
  (the liveness pass too: its graph stays on the executor, only the outcome, traces included,
  comes back pickled); an interruption cancels the jobs in flight.

An interruption stops the loop: the scopes in flight end as "interrupted" (not kept: a resume runs
them again), the scopes not started stay unrun, and everything finished has already been handed
over. `--fail-fast` stops it the same way, from inside: once `halt()` says so after a scope is
handed over (a violation), no scope is submitted any more and the ones in flight are stopped.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from typing import Any

from kcm.sweep.grid import Budget, Scope
from kcm.sweep.run import INTERRUPTED, ScopeOutcome, run_scope

#: Seconds the loop waits before looking for a finished scope again (an interruption is seen then too).
_POLL = 0.5

_stop_event: Any = None


def farm(scopes: Iterable[Scope], submit: Callable[[Scope], Future], width: int,
         on_start: Callable[[Scope], None], on_done: Callable[[Scope, ScopeOutcome | None, str], None],
         on_interrupt: Callable[[], None], halt: Callable[[], bool] | None = None) -> bool:
    """Run every scope through `submit`, at most `width` at once; `on_done(scope, outcome, error)`
    for each (outcome None and `error` set when the run itself failed). Returns False when an
    interruption (KeyboardInterrupt) stopped it, after `on_interrupt` and the scopes in flight.
    `halt`, asked after each scope handed over, stops it the same way (`on_interrupt`, the
    scopes in flight stopped and not handed over as failed), but it returns True: nothing was
    interrupted from outside."""
    pending = list(scopes)
    pending.reverse()
    running: dict[Future, Scope] = {}
    interrupted = halted = False
    while pending or running:
        try:
            while pending and len(running) < width and not (interrupted or halted):
                scope = pending.pop()
                on_start(scope)
                running[submit(scope)] = scope
            done, _ = wait(list(running), timeout=_POLL, return_when=FIRST_COMPLETED)
            for future in done:
                # Handed over before it leaves `running`: an interruption in the middle hands it
                # over again on the next turn (writing a record twice writes the same record).
                _hand_over(running[future], future, on_done, interrupted or halted)
                del running[future]
                if not halted and halt is not None and halt():
                    halted = True
                    pending.clear()
                    on_interrupt()
        except KeyboardInterrupt:
            if interrupted:
                raise
            interrupted = True
            pending.clear()
            on_interrupt()
    return not interrupted


def _hand_over(scope: Scope, future: Future, on_done, interrupted: bool) -> None:
    try:
        outcome = future.result()
    except Exception as exc:  # a worker that died, a lost executor: the scope is not judged
        if not interrupted:   # (a Spark job cancelled by the interruption is not a failure)
            on_done(scope, None, (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200])
        return
    on_done(scope, outcome, "")


def _init_worker(stop) -> None:
    """A local worker: interruptions set the shared `stop` event instead of raising."""
    global _stop_event
    _stop_event = stop
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: stop.set())


def _run_in_worker(scope: Scope, budget: Budget, liveness: bool) -> ScopeOutcome:
    stop = _stop_event
    return run_scope(scope, budget, stop=stop.is_set if stop is not None else None, liveness=liveness)


def run_local(scopes: list[Scope], budget: Budget, jobs: int, on_start, on_done,
              halt: Callable[[], bool] | None = None, liveness: bool = False) -> bool:
    """Every scope in its own exploration, `jobs` processes at once (see `farm`); with `liveness`,
    each judged by liveness too (`run_scope`)."""
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    executor: Executor = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                                             initargs=(stop,))
    try:
        return farm(scopes, lambda s: executor.submit(_run_in_worker, s, budget, liveness), jobs, on_start, on_done,
                    on_interrupt=stop.set, halt=halt)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def run_spark(spark, scopes: list[Scope], budget: Budget, on_start, on_done,
              halt: Callable[[], bool] | None = None, liveness: bool = False) -> bool:
    """Every scope in its own one-task Spark job (see `farm`); with `liveness`, each judged by
    liveness too (`run_scope`)."""
    sc = spark.sparkContext
    width = max(1, sc.defaultParallelism)

    def one(scope: Scope) -> ScopeOutcome:
        return sc.parallelize([scope], 1).map(lambda s: run_scope(s, budget, liveness=liveness)).collect()[0]

    threads = ThreadPoolExecutor(max_workers=width)
    try:
        return farm(scopes, lambda s: threads.submit(one, s), width, on_start, on_done,
                    on_interrupt=sc.cancelAllJobs, halt=halt)
    finally:
        threads.shutdown(wait=True, cancel_futures=True)


def is_kept(outcome: ScopeOutcome) -> bool:
    """Whether a scope's outcome is final (kept in the results folder): not an interrupted run."""
    return outcome.reason != INTERRUPTED
