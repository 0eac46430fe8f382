"""`kcm sweep --fail-fast` through the real command line: it stops at the first scope that breaks
a property, reports what ran and lists the rest as not run (kcm/commands/sweep.py)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from kcm.cli import main
from kcm.commands.sweep import fail_fast_order
from kcm.sweep import grid

HERE = Path(__file__).parent
SCHEMA = json.loads((HERE.parents[1] / "docs" / "sweep-schema.json").read_text())

#: V6 (the ISR shrink removes the last member) on two brokers, replication factor 1: both scopes
#: break IsrNonEmpty, the settled one in 3 steps.
V6_GRID = ("version = 1\n[base]\nvariant = 'V6'\nbrokers = 2\nreplication_factor = 1\n"
           "[[axes]]\nkinds = ['broker_crash', 'leader_isr_shrink']\nstart = ['cold', 'settled']\n")


def test_fail_fast_runs_settled_scopes_first_in_grid_order() -> None:
    names = [s.name for s in fail_fast_order(list(grid.load("gate").scopes))]
    assert len(names) == 265
    assert names[:2] == ["b2-rf1-p1-crash+expiry-settled", "b2-rf1-p1-crash+shrink-settled"]
    assert names[131:134] == ["b2-rf2-p1-lostack+connloss-settled", "b3-rf3-p1-shrink+shutdown-settled",
                              "b2-rf1-p1-crash+expiry-cold"]
    assert all(n.endswith("-settled") for n in names[:133]) and all(n.endswith("-cold") for n in names[133:])


def test_fail_fast_stops_at_the_first_violation(tmp_path, capsys) -> None:
    grid_file = tmp_path / "v6.toml"
    grid_file.write_text(V6_GRID, encoding="utf-8")
    out = tmp_path / "sweep"
    assert main(["sweep", "--grid-file", str(grid_file), "--out", str(out), "--jobs", "1", "--fail-fast"]) == 1
    doc = json.loads((out / "sweep.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert (doc["verdict"], doc["scopes_total"], doc["scopes_finished"]) == ("violation", 4, 1)
    assert doc["stopped_at_first_violation"] is True
    assert [s["scope"] for s in doc["scopes"]] == ["b2-rf1-p1-crash-settled"]
    assert doc["not_run"] == ["b2-rf1-p1-crash-cold", "b2-rf1-p1-shrink-cold", "b2-rf1-p1-shrink-settled"]
    row = next(p for p in doc["properties"] if p["property"] == "IsrNonEmpty")
    assert [(e["scope"], e["steps"]) for e in row["broken_in"]] == [("b2-rf1-p1-crash-settled", 3)]
    captured = capsys.readouterr()
    started = [line for line in captured.err.splitlines() if line.startswith("start ")]
    assert started == ["start b2-rf1-p1-crash-settled"]
    assert "not run: 3 scope(s) (--fail-fast: stopped at the first violation)" in captured.out


def test_fail_fast_on_a_passing_grid_runs_every_scope(tmp_path) -> None:
    out = tmp_path / "sweep"
    assert main(["sweep", "--grid-file", str(HERE / "tiny-grid.toml"), "--out", str(out), "--jobs", "2",
                 "--fail-fast", "--scope", "b2-rf2-p1-crash-settled", "--scope", "b2-rf2-p1-shrink-settled"]) == 0
    doc = json.loads((out / "sweep.json").read_text())
    assert (doc["verdict"], doc["scopes_finished"], doc["not_run"]) == ("pass", 2, [])
    assert doc["stopped_at_first_violation"] is False
