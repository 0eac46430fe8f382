"""The command line: commands, exit codes, and one clear line for every kind of bad input."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kcm.cli import main


def test_help_lists_only_working_commands(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("check", "diagram"):
        assert f"  {name} " in out


def test_check_passes_on_the_default_preset(tmp_path, capsys) -> None:
    assert main(["check", "--diagrams", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "preset default" in out and "PASS" in out
    assert (tmp_path / "replica_state_machine.dot").exists()


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("kcm: error: ")
    assert "Traceback" not in captured.err
    return lines[0]


@pytest.mark.parametrize(("args", "needle"), [
    (["check", "--preset", "nope"], "unknown preset 'nope'; choose one of default, large, tiny"),
    (["check", "--bogus"], "No such option '--bogus'"),
    (["check", "--config", "/does/not/exist.toml"], "config file '/does/not/exist.toml' does not exist"),
    (["nosuchcommand"], "No such command 'nosuchcommand'"),
    (["diagram", "tables", "--format", "jpg"], "'jpg' is not one of"),
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
    assert proc.stderr.strip() == "kcm: error: unknown preset 'nope'; choose one of default, large, tiny"
