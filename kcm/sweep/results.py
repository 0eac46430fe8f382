"""The results folder of a sweep: one small JSON per finished scope, and the traces it found.

Layout of `--out` (default `kcm-out/sweep-<grid>`):

- `scopes/<scope>.json`: one finished scope (`record`), written atomically (a temporary file in
  the same folder, then `os.replace`), so an interruption leaves a scope's record whole or absent;
- `traces/<scope>/<property>.itf.json` (with `.txt`, `.dot` and `replay_<property>.py`): the
  shortest trace of each property the scope breaks, and `known_<property>.*` for each known Kafka
  2.6 behaviour, written by the engine's `write_counterexample` before the record, so a record
  never names a trace that is not there;
- `sweep.json` and `junit.xml`: the report over the whole grid (`kcm.sweep.report`).

Resume. `--resume` keeps a record whose grid, grid version, config and budget are the scope's
own, and runs only the other scopes; without it every scope runs and its record is overwritten.
A scope cut by its budget is finished (its record says so); an interrupted one is not recorded.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from kcm.checker.engine.traces import file_stem, write_counterexample
from kcm.exploration import trace_spec
from kcm.model.checking.kafka_model import KafkaModel, config_fields
from kcm.sweep.grid import Grid, Scope
from kcm.sweep.run import Broken, ScopeOutcome


def default_out(grid: str) -> Path:
    return Path("kcm-out") / f"sweep-{grid}"


def record_path(out: Path, scope: str) -> Path:
    return out / "scopes" / f"{file_stem(scope)}.json"


def key_of(grid: Grid, scope: Scope) -> dict[str, Any]:
    """What a record must match to stand for `scope` on resume."""
    return {"grid": grid.name, "grid_version": grid.version, "config": scope.fields,
            "budget": {"max_states": grid.budget.max_states, "seconds": grid.budget.seconds}}


def finished(out: Path, grid: Grid) -> dict[str, dict]:
    """The records in `out` that stand for scopes of `grid` (`key_of`), by scope name."""
    kept = {}
    for scope in grid.scopes:
        path = record_path(out, scope.name)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        key = key_of(grid, scope)
        if isinstance(record, dict) and all(record.get(k) == _plain(v) for k, v in key.items()):
            kept[scope.name] = record
    return kept


def save(out: Path, grid: Grid, scope: Scope, outcome: ScopeOutcome) -> dict:
    """Write `outcome`'s traces, then its record (atomically); returns the record."""
    cfg = scope.config()
    model = KafkaModel(cfg)
    folder = out / "traces" / file_stem(scope.name)

    def entry(b: Broken, known: bool) -> dict:
        item: dict[str, Any] = {"property": b.name, "kind": b.kind, "steps": b.steps}
        if known:
            item["finding"] = b.finding
        if b.trace is not None:
            stem = f"known_{b.name}" if known else b.name
            paths = write_counterexample(model, b.trace, folder, invariant=b.name, kind=b.kind, stem=stem,
                                         config={"preset": scope.name, **config_fields(cfg)},
                                         model_spec=trace_spec(cfg),
                                         source=f"kcm sweep {grid.name} {scope.name}")
            item["trace"] = str(paths["itf"])
        return item

    record = {**_plain(key_of(grid, scope)), "scope": scope.name, "verdict": outcome.verdict,
              "reason": outcome.reason, "distinct": outcome.distinct, "generated": outcome.generated,
              "depth": outcome.depth, "seconds": outcome.seconds,
              "cpu_seconds": outcome.cpu_seconds, "checked": list(outcome.checked),
              "goals": outcome.goals,
              "violations": [entry(b, False) for b in outcome.violations],
              "known": [entry(b, True) for b in outcome.known]}
    _write_atomically(record_path(out, scope.name), json.dumps(record, indent=1) + "\n")
    return record


def _plain(value: Any) -> Any:
    """`value` as JSON gives it back (tuples as lists), for comparing with a record read."""
    return json.loads(json.dumps(value))


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
