"""The triage of survivors (`checker/mutation/triage.py`, `kcm mutate --triage`): files read or
refused in one line, entries joined to their survivors, stale entries caught by their description,
the score after triage counted exactly; and the suite's own triage covers every survivor of the
recorded full run, which is a run of the current sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kcm.checker import mutation as M
from kcm.checker.engine.errors import UsageError
from kcm.checker.mutation import triage as T

from kcm.cli import main

REPO = Path(__file__).resolve().parents[2]
SURVIVOR = "controller:161:delete-effect:0"   # survives on m-reassign in a few seconds


@pytest.fixture(scope="module")
def generated() -> list[M.Mutant]:
    return M.generate()


def described(generated, mutant_id: str) -> str:
    return next(m.description for m in generated if m.id == mutant_id)


def entry(mutant_id: str, description: str, verdict: str = "beyond-suite", reason: str = "two ops of a kind") -> str:
    return (f'[[mutant]]\nid = "{mutant_id}"\ndescription = """{description}"""\n'
            f'verdict = "{verdict}"\nreason = """{reason}"""\n')


def folder_with(tmp_path: Path, *entries: str, name: str = "controller.toml") -> Path:
    folder = tmp_path / "triage"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text("\n".join(entries), encoding="utf-8")
    return folder


@pytest.mark.parametrize("text, message", [
    ('[[mutant]]\nid = "a:1:x:0"\n', "has no description"),
    (entry("a:1:x:0", "d", verdict="maybe"), "unknown verdict 'maybe'"),
    (entry("a:1:x:0", "d") + entry("a:1:x:0", "e"), "'a:1:x:0' is triaged twice"),
    ("[[mutant]\n", "is not valid TOML"),
])
def test_a_malformed_triage_file_is_one_usage_line(tmp_path, text, message):
    with pytest.raises(UsageError, match=message):
        T.load(folder_with(tmp_path, text))
    with pytest.raises(UsageError, match="is not a folder"):
        T.load(tmp_path / "nowhere")


def doc_of(*rows: tuple[str, str]) -> dict:
    return {"mutants": [{"id": i, "status": s} for i, s in rows]}


def test_entries_join_their_survivors_and_the_score_after_triage_counts_argued_equivalents(tmp_path, generated):
    ids = [m.id for m in generated[:6]]
    entries = T.load(folder_with(
        tmp_path,
        entry(ids[0], described(generated, ids[0]), "equivalent", "redone on every path"),
        entry(ids[1], described(generated, ids[1]), "out-of-scope"),
        entry(ids[2], "a statement that moved away", "equivalent"),       # stale: not applied
        entry(ids[3], described(generated, ids[3]), "open", "not read"),  # open: still unexplained
        entry(ids[4], described(generated, ids[4])),                      # its mutant is killed now
        entry("controller:99999:delete-effect:0", "gone"),               # stale: no such mutant
    ))
    doc = T.apply(doc_of((ids[0], M.SURVIVED), (ids[1], M.TIMED_OUT), (ids[2], M.SURVIVED), (ids[3], M.SURVIVED),
                         (ids[4], M.KILLED), (ids[5], M.EQUIVALENT), ("x:1:y:0", M.KILLED), ("x:2:y:0", M.SURVIVED)),
                  entries, generated)
    by_id = {e["id"]: e for e in doc["mutants"]}
    assert by_id[ids[0]]["triage"] == {"verdict": "equivalent", "reason": "redone on every path"}
    assert by_id[ids[1]]["triage"]["verdict"] == "out-of-scope"
    assert "triage" not in by_id[ids[2]]
    t = doc["triage"]
    assert t["explained"] == {"equivalent": 1, "out-of-scope": 1}
    assert t["unexplained"] == [ids[2], ids[3], "x:2:y:0"]
    assert t["stale"] == sorted([ids[2], "controller:99999:delete-effect:0"])
    assert t["no_longer_needed"] == [ids[4]]
    # 8 mutants, 1 equivalent suspect, 1 survivor argued equivalent: 2 killed of 6.
    assert t["score_after_triage"] == round(2 / 6, 4)
    assert T.text(doc)[0].startswith(
        "Triage: 2 survivors or timeouts explained (equivalent 1, out-of-scope 1); 3 unexplained")


def test_the_command_prints_the_triage_and_junit_skips_an_explained_survivor(tmp_path, generated):
    import jsonschema  # a declared dependency: its absence is an error, not a skip
    folder = folder_with(tmp_path, entry(SURVIVOR, described(generated, SURVIVOR), "beyond-suite",
                                         "the suite makes one controller move per run"))
    report, junit = tmp_path / "m.json", tmp_path / "m.xml"
    args = ["mutate", "--config", str(REPO / "bench/mutation/m-reassign.toml"), "--mutant", SURVIVOR,
            "--json", str(report), "--junit", str(junit)]
    assert main([*args, "--triage", str(folder)]) == 0
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, json.loads((REPO / "docs" / "mutation-schema.json").read_text()))
    assert doc["counts"]["survived"] == 1
    assert doc["mutants"][0]["triage"]["verdict"] == "beyond-suite"
    assert doc["triage"]["explained"] == {"beyond-suite": 1} and doc["triage"]["unexplained"] == []
    assert 'failures="0"' in junit.read_text() and "triaged beyond-suite" in junit.read_text()
    assert main(args) == 0   # without the triage the survivor fails the JUnit case
    assert 'failures="1"' in junit.read_text() and "triage" not in json.loads(report.read_text())


# ---- the suite's own triage --------------------------------------------------------------------


def _suite() -> tuple[str, ...]:
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_mutate", REPO / "bench" / "mutate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SUITE


def _config(name: str):
    from kcm import config

    if name == "tiny":
        return config.load_preset(name)
    return config.load_config_file(REPO / "bench/mutation" / f"{name}.toml")


@pytest.mark.parametrize("name", _suite())
def test_every_config_of_the_mutation_suite_passes_on_the_clean_model(name):
    """A config the clean model fails would kill every mutant that reaches the failure."""
    from kcm.checker.engine.bfs import explore
    from kcm.model.checking.kafka_model import KafkaModel

    result = explore(KafkaModel(_config(name)))
    assert result.verdict == "pass", result.summary_lines()


def test_the_recorded_full_run_is_a_run_of_the_current_sources(generated):
    """bench/mutation/full-run.json is re-recorded whenever the model changes: its mutants are
    exactly the current sources' (id and statement), and its clean baselines the current model's
    (distinct states and fingerprint digest per config), so its survivors are today's."""
    from kcm.model.checking.kafka_model import KafkaModel

    doc = json.loads((REPO / "bench/mutation/full-run.json").read_text())
    assert {e["id"]: e["description"] for e in doc["mutants"]} == {m.id: m.description for m in generated}
    assert doc["configs"] and [c["name"] for c in doc["configs"]] == list(_suite())
    budget = M.Budget(max_states=doc["budget"]["max_states"])
    current = {}
    for name in _suite():
        result, digest, _ = M.explore_with_budget(KafkaModel(_config(name)), budget)
        current[name] = (result.stats.distinct, digest)
    assert current == {c["name"]: (c["distinct_states"], c["fingerprint_digest"]) for c in doc["configs"]}


def test_every_survivor_of_the_recorded_full_run_is_explained(generated):
    doc = json.loads((REPO / "bench/mutation/full-run.json").read_text())
    T.apply(doc, T.load(REPO / "bench/mutation/triage"), generated)
    assert doc["triage"]["stale"] == [] and doc["triage"]["no_longer_needed"] == []
    assert doc["triage"]["unexplained"] == []


def test_carry_over_moves_a_stale_entry_to_its_statement_s_new_line(tmp_path, generated):
    description = described(generated, SURVIVOR)
    file, line, operator, ordinal = SURVIVOR.split(":")
    moved = f"{file}:{int(line) - 3}:{operator}:{ordinal}"   # as if three lines above it had gone since
    folder = folder_with(tmp_path, entry(moved, description), entry("controller:1:negate-guard:0", "gone"))
    assert T.stale(T.load(folder), generated) == sorted(["controller:1:negate-guard:0", moved])
    assert T.carry_over(folder, generated) == [("controller.toml", moved, SURVIVOR)]
    assert T.stale(T.load(folder), generated) == ["controller:1:negate-guard:0"]
    assert T.load(folder)[SURVIVOR].description == description
