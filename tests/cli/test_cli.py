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
    """Every command registered is listed, and every command listed (and every subcommand of a
    group) answers --help with exit 0."""
    from kcm.cli import cli

    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()]
    assert sorted(listed) == sorted(cli.commands) and len(listed) >= 8
    for name in listed:
        assert main([name, "--help"]) == 0, name
        assert capsys.readouterr().out.startswith(f"Usage: kcm {name}")
        for sub in getattr(cli.commands[name], "commands", {}):
            assert main([name, sub, "--help"]) == 0, (name, sub)
            assert capsys.readouterr().out.startswith(f"Usage: kcm {name} {sub}")


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
    page = (tmp_path / "report.html").read_text()   # the reviewer's page, beside report.json
    assert "PASS" in page and "Proofs of the election rules" in page and page.count("<svg") == 2


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
    (["check", "--preset", "nope"], "unknown preset 'nope'; choose one of addparts, deep, default, elect, four, l1, "
                                    "large, logdir, tiny, v1, v10, v11, v12, v13, v2, v3, v4, v5, v6, v7, v8, v9, "
                                    "zkfaults"),
    (["check", "--bogus"], "No such option '--bogus'"),
    (["check", "--config", "/does/not/exist.toml"], "config file '/does/not/exist.toml' does not exist"),
    (["nosuchcommand"], "No such command 'nosuchcommand'"),
    (["diagram", "tables", "--format", "jpg"], "'jpg' is not one of"),
    (["explore", "--preset", "tiny", "--out", "/etc/passwd/x"], "--out /etc/passwd/x: /etc/passwd is not a directory"),
    (["check", "--preset", "tiny", "--out", "/etc/passwd/x"], "--out /etc/passwd/x: /etc/passwd is not a directory"),
    (["check", "--preset", "tiny", "--jobs", "2"], "--jobs is for the sequential explorer (--engine local)"),
    (["explore", "--preset", "tiny", "--jobs", "0"], "Invalid value for '--jobs'"),
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
    ("data = true", "field `data` does nothing yet (the model has no log offsets); leave it out"),
    ("max_offset = 2", "field `max_offset` does nothing yet"),
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
    assert proc.stderr.strip() == ("kcm: error: unknown preset 'nope'; choose one of addparts, deep, default, elect, "
                                   "four, l1, large, logdir, tiny, v1, v10, v11, v12, v13, v2, v3, v4, v5, v6, v7, "
                                   "v8, v9, zkfaults")


_EXITING = """
import atexit, sys, threading, time
import kcm.cli

class TornDown:
    def __del__(self):
        sys.stderr.write("torn down\\n")

KEEP = TornDown()  # freed only when the interpreter is torn down
BASE = sys.argv[1]
atexit.register(lambda: open(BASE + ".atexit", "w").close())
if sys.argv[2] == "thread":
    def late():
        time.sleep(0.5)
        open(BASE + ".thread", "w").close()
    threading.Thread(target=late).start()
sys.stdout.write("unflushed " * 1000)  # no newline: still in the buffer when main returns
sys.argv[1:] = ["check", "--preset", "nope"]
kcm.cli.entry()
"""


@pytest.mark.parametrize("thread", ["none", "thread"])
def test_the_console_script_exits_without_teardown(tmp_path, thread) -> None:
    """`entry` skips the interpreter's teardown (nothing is freed one by one: no `__del__` runs),
    but keeps what a normal exit does that matters: the exit code, the exit handlers, the buffered
    output. A non-daemon thread still running gets the normal exit, which waits for it."""
    base = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-c", _EXITING, str(base), thread], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stdout == "unflushed " * 1000
    assert "unknown preset 'nope'" in proc.stderr
    assert Path(f"{base}.atexit").exists()
    if thread == "thread":
        assert Path(f"{base}.thread").exists() and "torn down" in proc.stderr
    else:
        assert "torn down" not in proc.stderr


# ---- the paths a user takes first, through the real command line ---------------------------------


def _kcm(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kcm.cli", *args], capture_output=True, text=True, timeout=900,
                          cwd=cwd)


def test_check_on_its_default_engine_spark_passes_on_tiny(tmp_path) -> None:
    """`kcm check` explores on Spark unless told otherwise (what `make run` runs): no --engine."""
    proc = _kcm("check", "--preset", "tiny", "--out", str(tmp_path), "--proof-brokers", "2")
    assert proc.returncode == 0, proc.stderr
    assert "Spark " in proc.stdout and "master local[*]" in proc.stdout and "PASS" in proc.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert (report["verdict"], report["engine"], report["distinct_states"]) == ("pass", "spark", 10_294)


def test_explore_simulate_finds_a_variant_with_random_walks(tmp_path) -> None:
    proc = _kcm("explore", "--variant", "V6", "--simulate", "--runs", "200", "--depth", "20", "--out", str(tmp_path))
    assert proc.returncode == 1, proc.stderr
    assert "'IsrNonEmpty' violated by run" in proc.stdout
    assert list(tmp_path.glob("IsrNonEmpty*.itf.json"))


def test_diagram_tables_writes_dot_svg_and_png(tmp_path) -> None:
    proc = _kcm("diagram", "tables", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(f"{m}_state_machine.{ext}" for m in ("partition", "replica")
                           for ext in ("dot", "png", "svg"))
    assert (tmp_path / "replica_state_machine.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "partition_state_machine.png").read_bytes()[:4] == b"\x89PNG"


def test_explore_writes_the_trace_of_a_known_2_6_violation_and_passes(tmp_path) -> None:
    """A listed Kafka 2.6 behaviour does not fail the run, and its shortest trace is written as
    `known_<Property>.*` beside the other outputs, replayable to the same violation."""
    from kcm.checker.engine.replay import replay_itf

    config = tmp_path / "shutdown.toml"
    config.write_text("brokers = 2\nreplication_factor = 2\nmax_broker_crashes = 0\nmax_session_expiries = 0\n"
                      "max_controlled_shutdowns = 1\n")
    out = tmp_path / "out"
    assert main(["explore", "--config", str(config), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"] == "pass"
    assert [(k["invariant"], k["trace_length"]) for k in report["known_violations"]] == [("NoShuttingDownJoinsIsr", 14)]
    replay_itf(out / "known_NoShuttingDownJoinsIsr.itf.json")   # raises unless it reaches the violation again


def test_explore_spreads_the_disjoint_runs_over_processes(tmp_path, capsys) -> None:
    """`zkfaults` has a cold start and four overlapping runs: explored in two processes, the report
    has the single explorer's counts, and the output names each run."""
    assert main(["explore", "--preset", "zkfaults", "--jobs", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "5 disjoint runs, explored apart in 2 processes: run 0 8,539 distinct in" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert (report["verdict"], report["distinct_states"], report["generated_states"]) == ("pass", 13_016, 40_574)
