"""`kcm trace show`: renders an ITF file without the model; bad files are one line and exit 2."""

from __future__ import annotations

import pytest
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.traces import write_counterexample

from kcm.cli import main
from tests.checker.test_traces import EPOCH_TEXT
from tests.checker.toys import EpochModel, TwoPhaseCommit


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("kcm: error: ")
    assert "Traceback" not in captured.err
    return lines[0]


def test_show_renders_a_written_trace(tmp_path, capsys):
    model = EpochModel()  # the text is the one rendered from the model, now from the file alone
    violation = explore(model).violations[0]
    paths = write_counterexample(model, violation.trace, tmp_path, invariant=violation.name, kind=violation.kind)
    assert main(["trace", "show", str(paths["itf"])]) == 0
    assert capsys.readouterr().out == EPOCH_TEXT


def test_show_a_witness_with_sets_and_variants(tmp_path, capsys):
    model = TwoPhaseCommit(3)
    goal = explore(model).goals["commit agreement"]
    paths = write_counterexample(model, goal.trace, tmp_path, invariant=goal.name, kind="sometimes")
    assert main(["trace", "show", str(paths["itf"])]) == 0
    out = capsys.readouterr().out
    assert out == paths["text"].read_text()
    assert "Step 7: TmCommit()\n  tmState: init -> committed\n" in out
    assert "(+Commit())" in out


@pytest.mark.parametrize("content, needle", [
    ("{not json", "not JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
    ('{"vars": ["x"], "states": [{"x": 1.5}]}',
     'state 0, x: the number 1.5 is not an ITF value (integers are {"#bigint": ...})'),
    ('{"vars": ["x"]}', "not an ITF trace ('states' is missing)"),
])
def test_show_a_corrupt_file_is_one_line_and_exit_2(tmp_path, capsys, content, needle):
    path = tmp_path / "bad.itf.json"
    path.write_text(content)
    assert main(["trace", "show", str(path)]) == 2
    assert _one_error_line(capsys) == f"kcm: error: {path}: {needle}"


def test_show_a_missing_file(tmp_path, capsys):
    path = tmp_path / "missing.itf.json"
    assert main(["trace", "show", str(path)]) == 2
    assert _one_error_line(capsys) == f"kcm: error: {path}: no such file"


def test_show_needs_a_file(capsys):
    assert main(["trace", "show"]) == 2
    assert "Missing argument 'FILE'" in _one_error_line(capsys)


def test_trace_is_listed_in_the_help(capsys):
    assert main(["--help"]) == 0
    assert "  trace " in capsys.readouterr().out
