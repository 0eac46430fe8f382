"""The command line: commands, exit codes, and one clear line for every kind of bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema

import pytest

from kcm.cli import main

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "report-schema.json"


def test_help_lists_only_working_commands(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("check", "diagram"):
        assert f"  {name} " in out


def test_check_passes_on_tiny_and_writes_its_reports(tmp_path, capsys) -> None:
    assert main(["check", "--preset", "tiny", "--engine", "local", "--out", str(tmp_path), "--proof-brokers", "3"]) == 0
    out = capsys.readouterr().out
    assert "preset tiny" in out and "PASS" in out
    assert (tmp_path / "diagrams" / "replica_state_machine.dot").exists()
    report = json.loads((tmp_path / "report.json").read_text())
    jsonschema.validate(report, json.loads(SCHEMA.read_text()))
    assert (report["verdict"], report["distinct_states"], report["preset"]) == ("pass", 10_294, "tiny")
    assert len(report["proofs"]) == 42 * 3 and all(p["result"] == "proved" for p in report["proofs"])
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    assert {s.get("name") for s in junit} == {"properties", "goals", "coverage", "proofs"}
    assert junit.find("testsuite[@name='coverage']/testcase/failure") is not None  # tiny leaves edges untaken


def test_check_on_a_variant_exits_1_with_its_counterexample(tmp_path, capsys) -> None:
    assert main(["check", "--preset", "v6", "--engine", "local", "--out", str(tmp_path), "--proof-brokers", "2"]) == 1
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["verdict"] == "violation"
    assert [v["invariant"] for v in report["violations"]][0] == "IsrNonEmpty"
    assert Path(report["violations"][0]["trace_file"]).exists()


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("kcm: error: ")
    assert "Traceback" not in captured.err
    return lines[0]


@pytest.mark.parametrize(("args", "needle"), [
    (["check", "--preset", "nope"], "unknown preset 'nope'; choose one of default, l1, large, tiny, v1, v10, v2, v3, v4, v5, v6, v7, v8, v9, zkfaults"),
    (["check", "--bogus"], "No such option '--bogus'"),
    (["check", "--config", "/does/not/exist.toml"], "config file '/does/not/exist.toml' does not exist"),
    (["nosuchcommand"], "No such command 'nosuchcommand'"),
    (["diagram", "tables", "--format", "jpg"], "'jpg' is not one of"),
    (["explore", "--preset", "tiny", "--out", "/etc/passwd/x"], "--out /etc/passwd/x: /etc/passwd is not a directory"),
    (["check", "--preset", "tiny", "--out", "/etc/passwd/x"], "--out /etc/passwd/x: /etc/passwd is not a directory"),
])
def test_bad_usage_is_one_line_and_exit_2(args, needle, capsys) -> None:
    assert main(args) == 2
    assert needle in _one_error_line(capsys)


@pytest.mark.parametrize(("text", "needle"), [
    ("brokers = [", "not valid TOML"),
    ("brokers = 9", "field `brokers` = 9 is out of range; allowed 1..5"),
    ("brokers = 2\nreplication_factor = 3", "field `replication_factor` = 3 is out of range; allowed 1..2"),
    ("brokerz = 2", "unknown field `brokerz`"),
    ("brokers = true", "field `brokers` = True must be a whole number"),
    ("data = true", "field `max_offset` = 0 with `data` = true"),
    ('overlapping = [["broker_crash", "meteor"]]', "field `overlapping` names unknown kind 'meteor'"),
])
def test_bad_config_file_is_one_line_and_exit_2(tmp_path, text, needle, capsys) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    assert main(["check", "--config", str(path), "--diagrams", str(tmp_path)]) == 2
    line = _one_error_line(capsys)
    assert needle in line and str(path) in line


def test_console_script_exit_code() -> None:
    proc = subprocess.run([sys.executable, "-m", "kcm.cli", "check", "--preset", "nope"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("kcm: error: unknown preset 'nope'; choose one of default, l1, large, tiny, "
                                   "v1, v10, v2, v3, v4, v5, v6, v7, v8, v9, zkfaults")
