"""`kcm mutate --grid`: mutants explored on a grid's scopes, config by config.

Mutants are pinned by their operator and the code they change (never by a line number), as in
test_mutate.py. The grid here is written by the test: two settled-cluster scopes of two brokers,
a crash and a reassignment, which the clean model passes (it meets ReassignmentCompletes on the
second and no goal of a controller move on either: goals are judged as the clean model meets them).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from kcm.checker import mutation as M
from kcm.checker.engine.errors import UsageError
from kcm.checker.mutation import by_config
from kcm.checker.mutation.baseline import Baseline, CleanGraph

from kcm.cli import main

GRID = """\
version = 1
description = "two settled-cluster scopes: a crash, a reassignment"

[base]
brokers = 2
topics = 1
partitions = 1
replication_factor = 2

[budget]
max_states = 20000

[[axes]]
kinds = ["broker_crash", "reassignment"]
combine = [1]
start = ["settled"]
"""


@pytest.fixture(scope="module")
def mutants():
    return M.generate()


def pick(mutants, file: str, operator: str, *snippets: str) -> M.Mutant:
    found = [m for m in mutants
             if (m.file, m.operator) == (file, operator) and all(s in m.description for s in snippets)]
    assert len(found) == 1, f"{len(found)} {operator} mutants with {snippets}"
    return found[0]


def test_grid_scopes_kill_mutants_config_by_config(tmp_path: Path, mutants, capsys):
    grid = tmp_path / "two.toml"
    grid.write_text(GRID, encoding="utf-8")
    dropped = pick(mutants, "reassignment.py", "delete-effect", "self.on_partition_reassignment(p, reassign_to(",
                   "process_zk_partition_reassignment")
    negated = pick(mutants, "reassignment.py", "negate-guard", "negate the filter `r not in self.removing[p]`")
    idle = pick(mutants, "controller.py", "delete-effect", "self.initialize_partition_reassignments()",
                "on_controller_failover")
    report = tmp_path / "m.json"
    code = main(["mutate", "--grid-file", str(grid), "--json", str(report),
                 *(a for m in (dropped, negated, idle) for a in ("--mutant", m.id))])
    assert code == 0
    doc = json.loads(report.read_text(encoding="utf-8"))
    by_id = {e["id"]: e for e in doc["mutants"]}
    scope = "b2-rf2-p1-reassign-settled"
    # Neither is reached by the crash scope's clean run: both die on the second scope.
    assert (by_id[dropped.id]["status"], by_id[dropped.id]["property"], by_id[dropped.id]["config"],
            by_id[dropped.id]["trace_length"]) == ("killed", "ReassignmentEventuallyCompletes", scope, 2)
    assert (by_id[negated.id]["status"], by_id[negated.id]["property"], by_id[negated.id]["config"],
            by_id[negated.id]["trace_length"]) == ("killed", "DeletedTopicLeavesNoReplica", scope, 2)
    # A controller failover never happens in a settled-cluster scope without a controller move.
    assert (by_id[idle.id]["status"], by_id[idle.id]["note"]) == ("equivalent", None)
    assert doc["grid"] == {"name": "two", "version": 1, "scopes": 2, "explored": 2, "skipped": []}
    jsonschema.validate(doc, json.loads((Path(__file__).resolve().parents[2] / "docs" / "mutation-schema.json")
                                        .read_text(encoding="utf-8")))
    assert [(c["name"], c["distinct_states"], c["reaches"]) for c in doc["configs"]] == [
        ("b2-rf2-p1-crash-settled", 610, 1), (scope, 222, 3)]
    assert doc["budget"]["max_states"] == 20000  # the grid's per-scope bound
    assert doc["warnings"] == []  # a small scope reaching few mutants is the point of a grid
    out = capsys.readouterr().out
    assert "Grid two (version 1): 2 of its 2 scopes explored" in out


def test_scope_runs_only_the_scopes_named_in_their_order(tmp_path: Path, mutants):
    grid = tmp_path / "two.toml"
    grid.write_text(GRID, encoding="utf-8")
    dropped = pick(mutants, "reassignment.py", "delete-effect", "self.on_partition_reassignment(p, reassign_to(",
                   "process_zk_partition_reassignment")
    report = tmp_path / "m.json"
    names = ["b2-rf2-p1-reassign-settled", "b2-rf2-p1-crash-settled"]
    assert main(["mutate", "--grid-file", str(grid), "--json", str(report), "--mutant", dropped.id,
                 *(a for n in names for a in ("--scope", n))]) == 0
    doc = json.loads(report.read_text(encoding="utf-8"))
    # killed on the first scope named, so the second is never explored
    assert [(e["status"], e["config"]) for e in doc["mutants"]] == [("killed", names[0])]
    assert [c["name"] for c in doc["configs"]] == names[:1]
    assert doc["grid"]["scopes"] == 2


@pytest.mark.parametrize("args, message", [
    (["--grid", "gate", "--scope", "b9-nope"], "--scope: grid 'gate' has no scope 'b9-nope'"),
    (["--scope", "b2-rf1-p1-crash+expiry-cold"], "--scope names scopes of a grid: give --grid or --grid-file"),
    (["--grid", "nope"], "unknown grid 'nope'"),
    (["--grid", "gate", "--preset", "tiny"], "--grid and --grid-file replace --preset and --config"),
    (["--grid", "gate", "--grid-file", "x.toml"], "give either --grid or --grid-file, not both"),
])
def test_bad_grid_input_is_one_line_and_exit_2(args, message, capsys):
    assert main(["mutate", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# ---- config by config, without exploring ------------------------------------------------------


def _outcome(m: M.Mutant, status: str, config: str, **fields) -> M.Outcome:
    return M.Outcome(m.id, m.file, m.line, m.operator, status, config=config, **fields)


def test_run_by_config_stops_at_the_kill_drops_each_clean_graph_and_skips_a_red_scope(monkeypatch, mutants):
    a, b, c = mutants[:3]
    graph = CleanGraph((), (), {}, (), frozenset(), frozenset())

    def fake_baselines(configs, budget):
        (name, _), = configs
        if name == "red":
            raise UsageError("the clean model violates X on 'red': mutants need a config it passes")
        return [Baseline(name, 10, "digest", {}, graph)]

    met: list[tuple[str, list[str]]] = []

    def run_config(ms, config, base):
        met.append((config[0], [m.id for m in ms]))
        verdicts = {("s1", a.id): "killed", ("s2", b.id): "crashed"}
        return [_outcome(m, verdicts.get((config[0], m.id), "survived" if m is c else "equivalent"), config[0],
                         distinct=5, seconds=1.0, searched=1) for m in ms]

    monkeypatch.setattr(by_config, "baselines", fake_baselines)
    seen: list[str] = []
    run = M.run_by_config([a, b, c], [("s1", None), ("red", None), ("s2", None), ("s3", None)], M.Budget(),
                          run_config, on_done=lambda o: seen.append(o.id))
    assert met == [("s1", [a.id, b.id, c.id]), ("s2", [b.id, c.id]), ("s3", [c.id])]
    assert [(o.id, o.status, o.config, o.distinct, o.searched) for o in run.outcomes] == [
        (a.id, "killed", "s1", 5, 1), (b.id, "crashed", "s2", 10, 2), (c.id, "survived", None, 15, 3)]
    assert seen == [a.id, b.id, c.id]  # each as soon as it is decided
    assert [x.config for x in run.bases] == ["s1", "s2", "s3"] and all(x.graph is None for x in run.bases)
    assert [name for name, _ in run.skipped] == ["red"]


def test_merge_says_what_run_mutant_says_over_the_same_configs(mutants):
    m = mutants[0]
    unreached = _outcome(m, "equivalent", None, note="unreached")
    same = _outcome(m, "equivalent", None, distinct=7, compared=1)
    differs = _outcome(m, "survived", None, distinct=9, searched=1)
    cut = _outcome(m, "timed_out", None, distinct=20, searched=1)
    assert (M.merge(m, [unreached, unreached]).status, M.merge(m, [unreached, unreached]).note) == (
        "equivalent", "unreached")
    assert (M.merge(m, [unreached, same]).status, M.merge(m, [unreached, same]).note) == ("equivalent", None)
    assert M.merge(m, [same, differs, same]).status == "survived"
    merged = M.merge(m, [differs, cut, same])
    assert (merged.status, merged.distinct, merged.searched, merged.compared) == ("timed_out", 36, 2, 1)
