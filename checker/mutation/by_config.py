"""Running mutants config by config: for a grid of many scopes, whose clean baselines cannot all
be held at once.

`run_mutant` explores one mutant on every config in turn, so the clean baselines of all the
configs are in memory together (`baseline.py`: each keeps the clean exploration it traced, every
state encoded). That suits the mutation suite, twelve configs of at most fifteen thousand
states; a grid of small scopes (`kcm mutate --grid`) is hundreds of them and millions of states.
`run_by_config` turns the loop inside out: the clean model is explored on one config, every
mutant still alive is run on that config alone (`run_mutant` with one config, or one Spark task
per mutant), the clean exploration is dropped, and the next config follows. A mutant killed (or
crashed) on a config is not run on the later ones, so the caller gives the configs in the order
a mutant should meet them (`kcm mutate --grid`: the grid's own order).

A mutant's outcome over the configs is what `run_mutant` gives over the same list, config by
config (`merge`): the first kill or crash; else timed out if the budget cut any config, survived
if its states differed on any, an equivalent suspect if they never did, and "unreached" if no
config ran its lines. Two things are per config here: the time budget (`Budget.timeout_s`
bounds each config's run, as a scope's own budget does in `kcm sweep`), and the liveness
judgement (made on each config right after its safety search, where `run_mutant` makes it after
all of them). For a grid the caller also lets goals go unmet (`Budget.goals_required`): a small
scope meets only the goals its perturbations reach, and a mutant is held to those the clean model
meets there.

A config whose clean model is red is no ground for mutants (`baselines` refuses it): here it is
skipped and named, so that one red scope does not end a long run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from kcm.checker.engine.errors import UsageError
from kcm.checker.mutation.baseline import Baseline, baselines
from kcm.checker.mutation.generate import Mutant
from kcm.checker.mutation.outcome import CRASHED, EQUIVALENT, KILLED, SURVIVED, TIMED_OUT, Outcome
from kcm.checker.mutation.runner import run_mutant
from kcm.checker.mutation.search import Budget
from kcm.model.config import ModelConfig

#: Runs some mutants on one config with its baseline: the outcomes in the mutants' order.
ConfigRun = Callable[[list[Mutant], tuple[str, ModelConfig], Baseline], list[Outcome]]


@dataclasses.dataclass
class ByConfig:
    """What a config-by-config run gave: each mutant's merged outcome (in the mutants' order, only
    those that were judged when interrupted), the configs' baselines without their clean
    explorations (for the reach counts), and the configs skipped because the clean model breaks
    a property there (name, reason)."""

    outcomes: list[Outcome]
    bases: list[Baseline]
    skipped: list[tuple[str, str]]


def run_by_config(mutants: Sequence[Mutant], configs: Sequence[tuple[str, ModelConfig]], budget: Budget,
                  run_config: ConfigRun | None = None, sources=None,
                  on_config: Callable[[Baseline, int], None] | None = None,
                  on_done: Callable[[Outcome], None] | None = None,
                  result: ByConfig | None = None) -> ByConfig:
    """Explore `mutants` config by config (module docstring). `run_config` runs the live mutants
    on one config (default: `run_mutant` one after the other); `on_config(baseline, live)` is
    told each clean baseline and how many mutants are still alive; `on_done` each mutant's final
    outcome as soon as it is known. `result` is filled as the run goes, so that an interrupted run
    (KeyboardInterrupt, raised again) keeps what it did."""
    run = run_config or (lambda ms, config, base: [run_mutant(m, [config], [base], budget, sources) for m in ms])
    out = result if result is not None else ByConfig([], [], [])
    parts: dict[str, list[Outcome]] = {m.id: [] for m in mutants}
    alive = list(mutants)
    order = {m.id: i for i, m in enumerate(mutants)}
    try:
        for config in configs:
            if not alive:
                break
            try:
                (base,) = baselines([config], budget)
            except UsageError as exc:
                out.skipped.append((config[0], str(exc)))
                continue
            if on_config is not None:
                on_config(base, len(alive))
            for o in run(alive, config, base):
                parts[o.id].append(o)
            out.bases.append(dataclasses.replace(base, graph=None))
            del base  # the clean exploration, before the next config's is built
            dead = {m.id for m in alive if parts[m.id][-1].status in (KILLED, CRASHED)}
            for m in alive:
                if m.id in dead:
                    _finish(out, merge(m, parts[m.id]), on_done)
            alive = [m for m in alive if m.id not in dead]
        for m in alive:  # met every config alive (none, if the clean model broke every one: not judged)
            if parts[m.id]:
                _finish(out, merge(m, parts[m.id]), on_done)
    finally:
        # Interrupted, the mutants still alive are not judged: they met only some of the configs.
        out.outcomes.sort(key=lambda o: order[o.id])
    return out


def _finish(out: ByConfig, o: Outcome, on_done: Callable[[Outcome], None] | None) -> None:
    out.outcomes.append(o)
    if on_done is not None:
        on_done(o)


def merge(mutant: Mutant, parts: Sequence[Outcome]) -> Outcome:
    """One mutant's outcome over configs from its outcome on each (in order, stopping at the first
    kill or crash), as `run_mutant` would say it: the kill or crash, else timed out, survived,
    equivalent or unreached; the states, time and configs searched or compared summed."""
    sums: dict[str, Any] = {"distinct": sum(o.distinct for o in parts), "seconds": sum(o.seconds for o in parts),
                            "searched": sum(o.searched for o in parts), "compared": sum(o.compared for o in parts),
                            "cpu": sum(o.cpu for o in parts)}
    last = parts[-1]
    if last.status in (KILLED, CRASHED):
        return dataclasses.replace(last, **sums)
    statuses = {o.status for o in parts}
    if TIMED_OUT in statuses:
        error = next((o.error for o in parts if o.status == TIMED_OUT and o.error), None)
        return Outcome(mutant.id, mutant.file, mutant.line, mutant.operator, TIMED_OUT, error=error, **sums)
    if SURVIVED in statuses:
        return Outcome(mutant.id, mutant.file, mutant.line, mutant.operator, SURVIVED, **sums)
    unreached = all(o.note == "unreached" for o in parts)
    return Outcome(mutant.id, mutant.file, mutant.line, mutant.operator, EQUIVALENT,
                   note="unreached" if unreached else None, **sums)

