"""Mutation testing of the model: seed one small fault into the controller or the brokers, explore
the faulty model, and see whether a property notices.

Why: a green verdict only means something if it would have been red had the controller been
wrong. Hardware verification grades its checks by seeding faults into the design (mutation
coverage); this package does that for the model's properties. Surviving mutants are the
properties' blind spots.

By concern, in the order a run uses them:

- `operators`: where in a source file each operator seeds a fault (`OPERATORS`);
- `generate`: the mutants of the model's own sources (`Mutant`, `generate`, `sample`, ids);
- `loader`: a mutant imported as its own copy of `kcm.model`, beside the installed one;
- `search`: exploring within a budget (`Budget`), by search, random walks or liveness;
- `baseline`: the clean model on each config, traced, and deciding a mutant without a search;
- `outcome`, `runner`: what a mutant's run gave, and the run itself (`run_mutant`, `run_local`);
- `by_config`: the same, config by config, for a grid of many scopes (`run_by_config`);
- `score`: the mutation score, tallies and hints; `report`: JSON, text and JUnit XML;
- `triage`: the hand-written explanations of survivors, joined to a report and carried over to
  new line numbers.

The names a caller needs are importable from the package itself.
"""

from kcm.checker.mutation.baseline import Baseline, CleanGraph, baselines, same_as_clean
from kcm.checker.mutation.by_config import ByConfig, merge, run_by_config
from kcm.checker.mutation.generate import (
    MUTABLE_FILES,
    Mutant,
    generate,
    model_dir,
    mutant_by_id,
    mutants_of,
    read_sources,
    sample,
)
from kcm.checker.mutation.loader import LoadedMutant, load, unload
from kcm.checker.mutation.operators import OPERATORS
from kcm.checker.mutation.outcome import CRASHED, EQUIVALENT, KILLED, STATUSES, SURVIVED, TIMED_OUT, Outcome
from kcm.checker.mutation.runner import KNOWN_LOST, run_local, run_mutant
from kcm.checker.mutation.score import hint, score, tally
from kcm.checker.mutation.search import Budget, explore_with_budget, liveness_verdict, random_walks

__all__ = [
    "CRASHED", "EQUIVALENT", "KILLED", "KNOWN_LOST", "MUTABLE_FILES", "OPERATORS", "STATUSES", "SURVIVED",
    "TIMED_OUT", "Baseline", "Budget", "ByConfig", "CleanGraph", "LoadedMutant", "Mutant", "Outcome", "baselines",
    "explore_with_budget", "generate", "hint", "liveness_verdict", "load", "merge", "model_dir", "mutant_by_id",
    "mutants_of", "random_walks", "read_sources", "run_by_config", "run_local", "run_mutant", "same_as_clean",
    "sample", "score", "tally", "unload",
]
