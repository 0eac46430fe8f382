"""What a new user hit, through the real command line (`python -m kcm.cli`, the console script's
code path): each case is one line on stderr and the documented exit code (2 bad input, 3
incomplete), checked before any work starts where it can be, and never a traceback."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.child import sigint_default

#: The JVM prints this on start-up whatever its logging says (docs/spark.md); it is not ours.
JVM_NOISE = "WARNING: Using incubator modules"


def kcm(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kcm.cli", *args], capture_output=True, text=True, timeout=timeout)


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if not line.startswith(JVM_NOISE)]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("kcm: error: ")
    return lines[0]


@pytest.mark.parametrize(("args", "needle"), [
    (["explore", "--preset", "tiny", "--out", "/proc/x"], "--out /proc/x: cannot write there"),
    (["explore", "--preset", "tiny", "--json", "/proc/x/r.json"], "--json /proc/x/r.json: cannot write there"),
    (["explore", "--preset", "tiny", "--junit", "/proc/x/j.xml"], "--junit /proc/x/j.xml: cannot write there"),
    (["check", "--preset", "tiny", "--engine", "local", "--out", "/proc/x"], "--out /proc/x: cannot write there"),
    (["check", "--preset", "tiny", "--engine", "local", "--json", "/proc/x/r.json"], "--json /proc/x/r.json"),
    (["check", "--preset", "tiny", "--engine", "local", "--junit", "/proc/x/j.xml"], "--junit /proc/x/j.xml"),
    (["check", "--preset", "tiny", "--engine", "local", "--diagrams", "/proc/x"], "--diagrams /proc/x"),
    (["explore", "--preset", "tiny", "--engine", "spark", "--master", "garbage"],
     "--master 'garbage': not a Spark master URL"),
    (["check", "--preset", "tiny", "--master", "spark://127.0.0.1:1"],
     "--master spark://127.0.0.1:1: no Spark master answers (127.0.0.1:1: Connection refused)"),
    (["explore", "--preset", "tiny", "--checkpoint", "/tmp/x"], "--checkpoint and --resume need --engine spark"),
    (["explore", "--preset", "tiny", "--engine", "spark", "--resume", "/nonexistent/ck"],
     "--resume: '/nonexistent/ck' is not a checkpoint folder"),
    (["explore", "--variant", "V99"], "unknown variant 'V99'"),
    (["explore", "--preset", "tiny", "--depth", "5"], "--depth needs --simulate"),
    (["explore", "--preset", "tiny", "--simulate", "--max-depth", "5"], "--max-depth bounds an exhaustive search"),
    (["explore", "--preset", "tiny", "--simulate", "--engine", "local"], "--simulate runs on Spark only"),
])
def test_bad_input_is_one_line_and_exit_2_before_any_work(tmp_path, args, needle) -> None:
    started = time.monotonic()
    proc = kcm(*args)
    assert proc.returncode == 2, proc.stderr
    assert needle in one_error_line(proc)
    # Before any work: no Spark started (it prints its version), no exploration summary.
    assert "Spark " not in proc.stdout and "states generated" not in proc.stdout
    assert time.monotonic() - started < 60   # no 82 s wait for an unresponsive master


@pytest.mark.parametrize("group", [[], ["diagram"], ["trace"]])
def test_a_group_without_its_command_is_one_line_and_exit_2(group) -> None:
    proc = kcm(*group)
    assert proc.returncode == 2 and proc.stdout == ""
    line = one_error_line(proc)
    assert "missing command; choose one of" in line and f"(see '{' '.join(['kcm', *group])} --help')" in line


def test_two_reports_in_one_file_are_refused_before_the_run(tmp_path) -> None:
    same = tmp_path / "o" / "same"
    proc = kcm("explore", "--preset", "tiny", "--out", str(tmp_path), "--json", str(same), "--junit", str(same))
    assert proc.returncode == 2
    assert f"the JSON report (--json {same}) and the JUnit XML (--junit {same}) are one file" in one_error_line(proc)
    assert not same.exists() and "states generated" not in proc.stdout
    # The report page goes beside the JSON report: JUnit XML cannot take its place either.
    proc = kcm("explore", "--preset", "tiny", "--out", str(tmp_path), "--junit", str(tmp_path / "report.html"))
    assert proc.returncode == 2 and "and the report page" in one_error_line(proc)


@pytest.mark.parametrize(("args", "folder", "needle"), [
    (["--preset", "v6"], "IsrNonEmpty.txt", "IsrNonEmpty.txt is a directory, where the run writes a file"),
    (["--preset", "tiny"], "report.json", "report.json is a directory, where the run writes a file"),
    (["--preset", "tiny", "--json", "/dev/full"], None, "--json /dev/full: cannot write there (No space left"),
])
def test_every_file_a_run_writes_is_checked_before_it_starts(tmp_path, args, folder, needle) -> None:
    if folder is not None:
        (tmp_path / folder).mkdir()
    proc = kcm("explore", *args, "--out", str(tmp_path))
    assert proc.returncode == 2
    assert needle in one_error_line(proc)
    assert "states generated" not in proc.stdout and not (tmp_path / "junit.xml").exists()


def test_trace_show_refuses_a_loop_outside_the_trace(tmp_path) -> None:
    itf = tmp_path / "lasso.itf.json"
    itf.write_text(json.dumps({"#meta": {"loop": 999}, "vars": ["x"], "states": [{"x": i} for i in range(5)]}))
    proc = kcm("trace", "show", str(itf))
    assert proc.returncode == 2 and proc.stdout == ""
    assert "'loop' 999 is not a state a cycle of this trace can start at (0 to 3)" in one_error_line(proc)


def test_a_config_file_is_labelled_as_such_and_the_variant_selects_its_preset(tmp_path) -> None:
    config = tmp_path / "four.toml"
    config.write_text("brokers = 1\ntopics = 1\npartitions = 1\nreplication_factor = 1\n")
    proc = kcm("explore", "--config", str(config), "--max-depth", "2", "--out", str(tmp_path))
    assert proc.returncode == 3
    assert f"kcm explore · config {config}" in proc.stdout and "preset" not in proc.stdout.splitlines()[0]
    # Cut short: no claim about a complete graph, and goals are not reached rather than not met.
    assert "complete state graph" not in proc.stdout
    assert "The search stopped at depth" in proc.stdout and "not reached (incomplete)" in proc.stdout
    assert "Finished in" not in proc.stdout and proc.stdout.count("Explored in") == 1
    # --variant alone runs on the variant's own preset, in explore as in fuzz.
    proc = kcm("explore", "--variant", "V6", "--out", str(tmp_path))
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0].startswith("kcm explore · preset v6 · variant V6")
    assert "--preset or --config" in kcm("explore", "--help").stdout.replace("\n", " ").replace("  ", " ")


def test_a_passing_run_lists_the_properties_it_checked(tmp_path) -> None:
    proc = kcm("explore", "--preset", "tiny", "--out", str(tmp_path))
    assert proc.returncode == 0
    report = json.loads((tmp_path / "report.json").read_text())   # written by default, as by kcm check
    # The names, wrapped on lines of at most 100 characters under "held:".
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  held: "))
    block = [lines[start]] + list(itertools.takewhile(lambda line: line.startswith("    "), lines[start + 1:]))
    held = " ".join(block).replace("held:", "").replace(",", " ").split()
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    checked = [c.get("name") for c in junit.find("testsuite[@name='properties']")]
    assert report["verdict"] == "pass" and checked and held == checked
    assert max(len(line) for line in block) <= 100
    assert "The depth of the complete state graph search is" in proc.stdout


def test_sigterm_during_explore_ends_like_ctrl_c(tmp_path) -> None:
    run = subprocess.Popen([sys.executable, "-m", "kcm.cli", "explore", "--preset", "default", "--out", str(tmp_path)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = run.stderr.readline()   # the first progress line: the search is under way
    assert line.startswith("Progress("), line
    run.send_signal(signal.SIGTERM)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 3, err
    assert "Traceback" not in err and "Model checking is incomplete (interrupted)" in out
    assert json.loads((tmp_path / "report.json").read_text())["verdict"] == "incomplete"
    assert ET.parse(tmp_path / "junit.xml").getroot().tag == "testsuites"
    assert "not reached (incomplete)" in (tmp_path / "report.html").read_text()


def test_variants_table_keeps_every_invariant_name_whole_at_80_columns() -> None:
    from kcm.model.variants import VARIANTS

    proc = subprocess.run([sys.executable, "-m", "kcm.cli", "variants"], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "80"})
    assert proc.returncode == 0
    assert max(len(line) for line in proc.stdout.splitlines()) <= 80
    for v in VARIANTS.values():
        assert v.breaks in proc.stdout, v.breaks


# ---- Spark: corrupted checkpoints and Ctrl-C ----------------------------------------------------


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> Path:
    """A real checkpoint folder of `tiny`, cut at depth 5 (one snapshot, level 4)."""
    root = tmp_path_factory.mktemp("checkpoint")
    proc = kcm("explore", "--preset", "tiny", "--engine", "spark", "--checkpoint", str(root / "ck"),
               "--max-depth", "5", "--out", str(root / "out"))
    assert proc.returncode == 3, proc.stderr
    assert sorted(p.name for p in (root / "ck").glob("level-*")) == ["level-00004"]
    return root / "ck"


def _garbage(part: Path) -> None:
    part.write_bytes(os.urandom(200))


def _truncated(part: Path) -> None:
    with part.open("r+b") as f:
        f.truncate(40)


def _truncated_without_crc(part: Path) -> None:
    _truncated(part)
    (part.parent / f".{part.name}.crc").unlink()


@pytest.mark.parametrize(("damage", "cause"), [(_garbage, "ChecksumException"), (_truncated, "ChecksumException"),
                                               (_truncated_without_crc, "EOFException")])
def test_resume_from_a_corrupted_checkpoint_is_one_line_and_exit_2(snapshot, tmp_path, damage, cause) -> None:
    copy = tmp_path / "ck"
    shutil.copytree(snapshot, copy)
    damage(copy / "level-00004" / "records" / "part-00000")
    proc = kcm("explore", "--preset", "tiny", "--engine", "spark", "--resume", str(copy), "--out", str(tmp_path))
    assert proc.returncode == 2
    line = one_error_line(proc)
    assert f"--resume: the snapshot in '{copy}/level-00004' cannot be read ({cause}" in line


def test_resume_from_an_intact_checkpoint_finishes_the_run(snapshot, tmp_path) -> None:
    proc = kcm("explore", "--preset", "tiny", "--engine", "spark", "--resume", str(snapshot), "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "report.json").read_text())["distinct_states"] == 10_294


def test_ctrl_c_during_a_spark_exploration_prints_no_py4j_traceback(tmp_path) -> None:
    run = subprocess.Popen([sys.executable, "-m", "kcm.cli", "explore", "--preset", "default", "--engine", "spark",
                            "--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=sigint_default)
    # Progress lines come at most every 5 s, so wait for the first at level 5 or deeper (a
    # snapshot is written every 4 levels).
    while not ((line := run.stderr.readline()).startswith("Progress(") and int(line[9:line.index(")")]) >= 5):
        assert line, "the run ended before level 5"
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=180)
    assert run.returncode == 3, err
    assert "Traceback" not in err and "py4j" not in err and "ERROR" not in err, err
    assert "Model checking is incomplete (interrupted)" in out
    assert json.loads((tmp_path / "report.json").read_text())["verdict"] == "incomplete"
    assert list((tmp_path / "ck").glob("level-*/driver/_SUCCESS"))   # a snapshot it can resume from
