"""The JSON report counts the states a bound of the model cut (`states_cut_by_bound`), the same on
both engines: through the real command line, on a gate scope whose controller-move loop runs into
`controller_epoch_bound` (one state with no successor only because the next election is beyond
the bound: not a deadlock)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from kcm.cli import main
from kcm.sweep import grid

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "report-schema.json").read_text())
SCOPE = "b2-rf1-p1-crash+preferred-cold"


def _config(tmp_path: Path) -> Path:
    fields = next(s for s in grid.load("gate").scopes if s.name == SCOPE).fields
    path = tmp_path / "scope.toml"
    path.write_text("".join(f"{k} = {json.dumps(v) if not isinstance(v, bool) else str(v).lower()}\n"
                            for k, v in fields.items()), encoding="utf-8")
    return path


def _report(tmp_path: Path, *engine: str) -> dict:
    out = tmp_path / engine[1]
    main(["explore", "--config", str(_config(tmp_path)), "--out", str(out), *engine])
    doc = json.loads((out / "report.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    return doc


def test_the_local_engine_reports_the_states_cut_by_a_bound(tmp_path) -> None:
    doc = _report(tmp_path, "--engine", "local")
    assert doc["states_cut_by_bound"] == 1
    assert not any(v["kind"] == "deadlock" for v in doc["violations"])


def test_the_spark_engine_counts_them_as_the_local_engine_does(tmp_path) -> None:
    local = _report(tmp_path, "--engine", "local")
    spark = _report(tmp_path, "--engine", "spark", "--master", "local[2]")
    assert (spark["states_cut_by_bound"], spark["distinct_states"]) == (1, local["distinct_states"])
