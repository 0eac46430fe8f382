"""`kcm list`: each subcommand names everything it must, from the code; docs/config.md is its output."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest
from kcm.model.catalogue import LISTED
from kcm.model.catalogue.findings import FINDINGS, LOST_CREATE_REPLY
from kcm.model.config import ModelConfig
from kcm.model.variants import ALL_VARIANTS

from kcm import config, reference
from kcm.cli import main
from kcm.reference import field_comments
from tests.cli.test_rough_edges import kcm, one_error_line

CONFIG_DOC = Path(__file__).resolve().parents[2] / "docs" / "config.md"


def run(capsys, *args: str) -> str:
    assert main(["list", *args]) == 0
    return capsys.readouterr().out


def test_properties_of_tiny_each_with_its_meaning(capsys) -> None:
    cfg = config.load_preset("tiny")
    expected = [d for d in LISTED if d.listed(cfg)]
    rows = json.loads(run(capsys, "properties", "--preset", "tiny", "--json"))
    assert [r["name"] for r in rows] == [d.name for d in expected]
    assert [r["meaning"] for r in rows] == [d.meaning for d in expected]
    assert all(r["kind"] and r["judged"] for r in rows)
    table = run(capsys, "properties", "--preset", "tiny")
    assert all(d.name in table for d in expected)


def test_properties_say_which_finding_breaks_them_and_when(capsys, tmp_path) -> None:
    """On a config with lost ZooKeeper replies, Findings 7 applies, and the table says so."""
    path = tmp_path / "c.toml"
    path.write_text("brokers = 2\nmax_lost_acks = 1\n")
    rows = {r["name"]: r for r in json.loads(run(capsys, "properties", "--config", str(path), "--json"))}
    assert rows["CacheMatchesZk"]["broken_here"] and rows["CacheMatchesZk"]["finding"].startswith("Findings 7")
    assert "max_lost_acks" in rows["CacheMatchesZk"]["condition"]
    # What a violation must look like to be excused: Findings 7's own, not any violation of it.
    assert rows["CacheMatchesZk"]["looks_like"] == LOST_CREATE_REPLY.looks_like
    assert not rows["IsrNonEmpty"]["finding"] and rows["IsrNonEmpty"]["looks_like"] is None
    table = " ".join(run(capsys, "properties", "--config", str(path)).split())
    assert "excused only if after ZooKeeper lost a reply in the run" in table.replace("│ ", "")


def test_presets_lists_every_preset_with_its_description(capsys) -> None:
    out = run(capsys, "presets")
    for name in config.preset_names():
        assert f"│ {name} " in out
    assert "RF 2" in out and "broker_crashes=1" in out
    assert "Tests: two brokers" in out   # tiny's description


def test_grids_lists_every_shipped_grid_with_its_scope_count(capsys) -> None:
    from kcm.sweep.grid import grid_names, load
    out = run(capsys, "grids")
    assert grid_names() == ("deep", "gate", "nightly")
    for name in grid_names():
        assert f"│ {name} " in out and f"│ {len(load(name).scopes)}" in out
    assert "500,000 states or 300 s" in out   # gate's budget per scope


def test_known_lists_every_finding_its_properties_and_trace(capsys) -> None:
    out = run(capsys, "known")
    for finding in FINDINGS:
        assert f"Findings {finding.number} " in out and finding.trace in out
        for d in LISTED:
            if any(f == finding for f, _ in d.findings):
                assert d.name in out
    assert "every config" in out and "max_lost_acks" in out
    # The title says which violations are excused, and each Finding says what its own look like.
    assert "a violation that looks like its Finding is reported as known" in " ".join(out.split())
    assert "never failing the verdict" not in out
    assert out.count("Excused only if") == sum(len(reference.by_condition(ds)) for _, ds in reference.known())


def test_variants_prints_what_kcm_variants_prints(capsys) -> None:
    listed = run(capsys, "variants")
    assert main(["variants"]) == 0
    assert capsys.readouterr().out == listed and "V6" in listed


def test_config_names_every_key_with_meaning_range_and_default(capsys) -> None:
    comments = field_comments()
    names = [f.name for f in fields(ModelConfig)]
    assert all(comments[name] for name in names), [n for n in names if not comments[n]]
    out = run(capsys, "config")
    assert all(name in out for name in names)
    markdown = run(capsys, "config", "--markdown")
    rows = {line.split(" | ")[0].strip("| `"): line for line in markdown.splitlines() if line.startswith("| `")}
    assert list(rows) == names
    assert "| `brokers` | `3` | 1..5 |" in rows["brokers"]
    assert "1..brokers" in rows["replication_factor"] and '"kip-841"' in rows["isr_admission"]
    assert all(v in rows["variant"] for v in ALL_VARIANTS)


def test_config_doc_is_the_command_output(capsys) -> None:
    """docs/config.md is `kcm list config --markdown`: regenerate it with that command."""
    assert CONFIG_DOC.read_text(encoding="utf-8") == run(capsys, "config", "--markdown"), (
        "docs/config.md is out of date: run `kcm list config --markdown > docs/config.md`")


@pytest.mark.parametrize(("args", "needle"), [
    (["list", "nonsense"], "No such command 'nonsense'"),
    (["list", "properties", "--preset", "nope"], "unknown preset 'nope'"),
    (["list", "properties", "--config", "/nonexistent.toml"], "does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle) -> None:
    proc = kcm(*args)
    assert proc.returncode == 2, proc.stderr
    assert needle in one_error_line(proc)
    assert proc.stdout == ""
