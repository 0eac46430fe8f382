"""`kcm explore --por`: the header and the summary say traces may be longer; the counterexample it
writes replays; the options it does not combine with are refused."""

from __future__ import annotations

from kcm.checker.engine.replay import replay_itf

from kcm.cli import main


def test_explore_por_catches_v6_and_writes_a_replayable_trace(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["explore", "--variant", "V6", "--por", "--invariant", "IsrNonEmpty", "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "partial-order reduction on (traces may be longer than the shortest)" in text
    assert "'IsrNonEmpty' violated" in text and "ample set" in text
    replay_itf(next(out.glob("IsrNonEmpty*.itf.json")))


def test_explore_por_is_refused_with_spark_or_liveness(tmp_path) -> None:
    assert main(["explore", "--preset", "tiny", "--por", "--engine", "spark", "--out", str(tmp_path)]) == 2
    assert main(["explore", "--preset", "tiny", "--por", "--liveness", "--out", str(tmp_path)]) == 2
