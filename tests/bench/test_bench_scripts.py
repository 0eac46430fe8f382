"""The benchmarks in `bench/` are scripts, run by hand or by `make bench`, never by the suite: these
tests keep them runnable. Every script answers `--help` with its own description and does no work
(an import broken by a rename, or a script that starts measuring on `--help`, fails here), and the
pure helpers of `bench/mutate_gate.py`, which decide the order of a long run, are checked on the
shipped gate grid."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py"))


def test_the_scripts_are_the_ones_listed() -> None:
    # a new script gets its smoke test by being here; a deleted one leaves the list
    assert SCRIPTS == ["carry_triage.py", "compiled.py", "cores.py", "explore.py", "fuzz.py", "gate_variants.py",
                       "liveness.py", "mutate.py", "mutate_gate.py", "proofs.py", "reach.py", "run_all.py",
                       "runs.py", "spark_explore.py", "sweep.py", "versus.py"]


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_describes_the_script_and_does_no_work(script: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(BENCH / script), "--help"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ") and "Traceback" not in done.stderr
    first = (BENCH / script).read_text(encoding="utf-8").split('"""')[1].splitlines()[0]
    assert first.split(":")[0] in done.stdout.replace("\n", " ")
    assert list(tmp_path.iterdir()) == []  # nothing written where it ran


def test_mutate_gate_meets_each_mutants_home_scopes_first() -> None:
    sys.path.insert(0, str(BENCH))
    try:
        from mutate_gate import home_first
    finally:
        sys.path.remove(str(BENCH))
    from kcm.sweep import grid

    everything = [s.name for s in grid.load("gate").scopes]
    order = home_first("gate", {"m-shutdown", "tiny"})
    assert sorted(order) == sorted(everything)  # the whole grid, reordered
    # m-shutdown: a controlled shutdown and an auto rebalance; tiny: a crash and a leader-side shrink
    assert order[:4] == ["b2-rf1-p1-crash+shrink-cold", "b2-rf1-p1-crash+shrink-settled",
                         "b2-rf1-p1-shutdown+rebalance-cold", "b2-rf1-p1-shutdown+rebalance-settled"]
    first = order[:order.index(everything[0])] if order[0] != everything[0] else []
    assert len(first) == 8 and all("shrink" in n or "shutdown+rebalance" in n for n in first)
    # the rest keeps the grid's order
    rest = order[len(first):]
    assert rest == [n for n in everything if n in rest]
