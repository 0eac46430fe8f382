"""What `kcm mutate`'s score stands on: the mutants it scored of those it ran, the ones no config
reaches, how many each config reaches (with a warning when under half), and a run cut short by
Ctrl-C saying so: on stdout, in the JSON report and in JUnit, through the real command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from kcm.checker import mutation as M

from kcm import config
from kcm.cli import main
from tests.child import sigint_default

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "mutation-schema.json").read_text())


@pytest.fixture(scope="module")
def tiny_bases():
    return M.baselines([config.load("tiny")], M.Budget())


def test_a_config_that_reaches_few_mutants_is_named_and_warned_of(tmp_path, capsys, tiny_bases) -> None:
    generated = M.generate()
    [base] = tiny_bases
    # The first seed whose sample of 8 tiny reaches under half of.
    seed, reached = next((s, n) for s in range(500)
                         if (n := sum(base.reaches(m) for m in M.sample(generated, 8, s))) < 4)
    report = tmp_path / "m.json"
    assert main(["mutate", "--preset", "tiny", "--sample", "8", "--seed", str(seed), "--json", str(report)]) == 0
    out = capsys.readouterr().out
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, SCHEMA)
    # One config: the mutants it does not reach are exactly the ones the runner found unreached.
    assert (doc["planned"], doc["total"], doc["configs"][0]["reaches"]) == (8, 8, reached)
    assert doc["unreached"] == 8 - reached
    assert doc["scored"] == 8 - doc["counts"]["equivalent"] and not doc["interrupted"]
    assert doc["warnings"] == [f"config tiny reaches only {reached} of 8 mutants (under half): the others are not "
                               "judged there; add a config that runs more of the model (a preset with more faults "
                               "and admin operations)"]
    assert f"of the {doc['scored']} mutants it stands on, of 8 run (" in out
    assert f"Not scored: {8 - reached} never reached by any config, " in out
    assert f"by config: tiny {reached} of 8." in out
    assert sum(line.startswith("warning: config tiny reaches only") for line in out.splitlines()) == 1


def test_a_config_that_reaches_half_gets_no_warning(tmp_path, capsys, tiny_bases) -> None:
    generated = M.generate()
    [base] = tiny_bases
    seed = next(s for s in range(500) if sum(base.reaches(m) for m in M.sample(generated, 4, s)) == 2)
    report = tmp_path / "m.json"
    assert main(["mutate", "--preset", "tiny", "--sample", "4", "--seed", str(seed), "--json", str(report)]) == 0
    doc = json.loads(report.read_text())
    assert (doc["configs"][0]["reaches"], doc["unreached"], doc["warnings"]) == (2, 2, [])
    assert "warning:" not in capsys.readouterr().out


def test_ctrl_c_during_mutate_says_how_far_it_got_everywhere(tmp_path) -> None:
    report, junit = tmp_path / "m.json", tmp_path / "m.xml"
    run = subprocess.Popen([sys.executable, "-m", "kcm.cli", "mutate", "--preset", "tiny", "--sample", "300",
                            "--json", str(report), "--junit", str(junit)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default,
                           env={**os.environ, "KCM_PURE": "1"})
    assert run.stderr is not None
    while not (line := run.stderr.readline()).startswith("[1/300] "):
        assert line, "the run ended before its first mutant"
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=600)
    assert run.returncode == 3, err
    assert "Traceback" not in err
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, SCHEMA)
    k = doc["total"]
    assert 1 <= k < 300 and doc["planned"] == 300 and doc["interrupted"] and not doc["complete"]
    headline = f"Interrupted after {k} of 300 mutants; mutation score so far: "
    assert headline in out and "Mutation score:" not in out
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("errors")) == (str(k + 1), "1")
    [error] = [c.find("error") for c in suite.iter("testcase") if c.get("name") == "interrupted"]
    assert error is not None and error.get("message", "").startswith(headline)
