"""`kcm trace show --step N`: one step of a trace with the whole state after it, through the real
command line; without `--step` the output is the whole trace as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker.engine.itf import read_itf
from kcm.checker.engine.traces import format_value, render_text
from kcm.checker.sequence import TEXT_LEGEND

from kcm.cli import main
from kcm.serve.fields import all_leaves

TITLE = "Invariant 'IsrNonEmpty' (safety) violated after 4 steps in model 'kafka-2.6-controller/V6'"


@pytest.fixture(scope="module")
def v6_trace(v6_run) -> Path:
    """`kcm explore --preset v6`'s counterexample (4 steps) (the session's `v6_run`)."""
    return v6_run / "IsrNonEmpty.itf.json"


def _show(capsys, *args: str) -> str:
    assert main(["trace", "show", *args]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def test_a_step_shows_its_action_its_changes_and_every_field_after_it(capsys, v6_trace) -> None:
    out = _show(capsys, "--step", "3", str(v6_trace))
    head, _, rest = out.partition("\nState after step 3\n")
    assert head.splitlines() == [TITLE, "", "Step 3 of 4: ZkSessionExpire(broker=0)",
                                 "  zk.session: {0, 1} -> {1}  (-0)", "  zk.controller: 0 -> -1",
                                 "  zk.broker_epochs[0]: 1 -> 0"]
    state = read_itf(v6_trace).states[3]
    fields = [f"  {path} = {format_value(value)}" for path, value in all_leaves(state).items()]
    assert rest == "\n".join(fields) + "\n\n" + TEXT_LEGEND
    # Every field, not only the changed ones: one line per leaf of every variable.
    assert "  zk.controller = -1" in fields and "  broker1[queue] = (Startup,)" in fields
    assert "  zk.partitions[0][isr] = (0,)" in fields


def test_the_last_step_is_marked_with_the_property_it_breaks(capsys, v6_trace) -> None:
    out = _show(capsys, "--step", "4", str(v6_trace))
    assert "Step 4 of 4: ControllerProcessEvent(broker=1): Startup   <-- violates 'IsrNonEmpty'\n" in out
    assert "  zk.partitions[0][isr] = ()\n" in out


def test_step_0_is_the_initial_state_in_full(capsys, v6_trace) -> None:
    out = _show(capsys, "--step", "0", str(v6_trace))
    fields = [f"  {path} = {format_value(value)}" for path, value in all_leaves(read_itf(v6_trace).states[0]).items()]
    assert out == "\n".join([TITLE, "", "State 0 (initial)", *fields]) + "\n\n" + TEXT_LEGEND


def test_without_step_the_whole_trace_is_shown_as_before(capsys, v6_trace) -> None:
    assert _show(capsys, str(v6_trace)) == render_text(read_itf(v6_trace)) + "\n" + TEXT_LEGEND


@pytest.mark.parametrize("step", ["5", "99"])
def test_a_step_beyond_the_trace_is_one_line_and_exit_2(capsys, v6_trace, step) -> None:
    assert main(["trace", "show", "--step", step, str(v6_trace)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"kcm: error: --step {step}: the trace in {v6_trace} has 4 steps (0 to 4)\n"


def test_a_negative_step_is_a_usage_error(capsys, v6_trace) -> None:
    assert main(["trace", "show", "--step", "-1", str(v6_trace)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("kcm: error: ")
