"""`kcm diagram`'s output folder: `kcm-out/diagrams` unless `--out` says, as every other command
writes under `kcm-out`; a checkout's committed docs/diagrams change only when asked for."""

from __future__ import annotations

import pytest

from kcm.cli import main


def test_diagrams_go_to_kcm_out_by_default(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs" / "diagrams").mkdir(parents=True)
    assert main(["diagram", "tables", "--format", "dot"]) == 0
    assert sorted(p.name for p in (tmp_path / "kcm-out" / "diagrams").iterdir()) == [
        "partition_state_machine.dot", "replica_state_machine.dot"]
    assert list((tmp_path / "docs" / "diagrams").iterdir()) == []
    assert "wrote kcm-out/diagrams/replica_state_machine.dot" in capsys.readouterr().out


@pytest.mark.parametrize("sub", [["tables"], ["reachable", "--preset", "tiny"]])
def test_an_out_folder_that_is_a_file_is_refused_before_any_work(tmp_path, capsys, sub) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["diagram", *sub, "--format", "dot", "--out", str(blocker / "d")]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.startswith("kcm: error: --out ")
    assert "is not a directory" in captured.err and "Traceback" not in captured.err
    assert captured.out == ""
