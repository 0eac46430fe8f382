"""`kcm mutate --engine spark`: one mutant per task gives the sequential engine's table."""

from __future__ import annotations

from kcm.checker import mutation as M
from kcm.spark_explore.mutate import run_spark

from kcm import config


def _pick(mutants, operator, *snippets):
    return next(m for m in mutants if m.operator == operator and all(s in m.description for s in snippets))


def test_spark_and_sequential_give_the_same_table(spark):
    cfgs = [config.load("tiny")]
    budget = M.Budget()
    bases = M.baselines(cfgs, budget)
    sources = M.read_sources()
    every = M.generate(sources)
    mutants = [
        _pick(every, "negate-guard", "stale_broker_epoch or stale_controller"),
        _pick(every, "drop-guard", "run the block guarded by `target is P.OnlinePartition` always"),
        _pick(every, "swap-effects", "self.adding = list(zk.adding)", "self.removing = list(zk.removing)"),
        _pick(every, "delete-effect", "self.update_replica_assignment(p)"),
    ]
    local = M.run_local(mutants, cfgs, bases, budget, sources)
    seen = []
    remote = run_spark(spark, mutants, cfgs, bases, budget, sources, None, None, seen.append)
    assert [o.row() for o in remote] == [o.row() for o in local]
    assert sorted(o.id for o in seen) == sorted(m.id for m in mutants)
    assert [o.status for o in local] == [M.KILLED, M.CRASHED, M.EQUIVALENT, M.EQUIVALENT]
