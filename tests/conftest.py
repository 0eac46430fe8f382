"""Explorations shared by the whole test session, each run once however many modules read it.

The `default` preset (the CI gate) explored whole takes most of a minute on a quiet machine and
several on a loaded one: `default_whole` runs it once, for the pinned counts, goals and coverage
(tests/model/test_default_preset.py). The Spark explorer is compared with the sequential one on
`default` cut at `DEFAULT_DEPTH` (`default_to_depth`): every level's distinct count, the generated
count, the verdict, goals and coverage equal, which is a stronger check than the pinned totals of
a second whole run, in a fraction of its time. Whole-preset runs on Spark belong to `make run` and
`bench/`.
Liveness explorations of the presets are cached the same way (`liveness_of`): the liveness
tests, the CLI tests and the reachable-graph diagram read the same ones.
"""

from __future__ import annotations

import functools
import gc
import subprocess
import sys
from pathlib import Path

import pytest
from kcm.checker.engine.bfs import CheckOptions, explore
from kcm.model.checking.kafka_model import KafkaModel

from kcm import compiled, config

#: Test files that need the model run from source: mutation testing traces its lines
#: (kcm/compiled.py). Their tests are marked `pure_only`; run compiled, the session leaves them out
#: and says so, and `make test` runs them in a second, pure-Python pass (`KCM_PURE=1 pytest -m
#: pure_only`). A session run with KCM_PURE=1 and no `-m` runs everything.
PURE_ONLY = ("tests/checker/test_mutate.py", "tests/checker/test_mutation_triage.py",
             "tests/spark/test_mutate_spark.py", "tests/model/catches/test_catches.py",
             "tests/cli/test_mutate_reach.py", "tests/checker/test_mutation_grid.py")


@pytest.hookimpl(tryfirst=True)  # before `-m` selects on the marker
def pytest_collection_modifyitems(config, items):
    left = [item for item in items if any(str(item.path).endswith(f) for f in PURE_ONLY)]
    for item in left:
        item.add_marker(pytest.mark.pure_only)
    if left and compiled.status() == "compiled":
        config.hook.pytest_deselected(items=left)
        items[:] = [item for item in items if "pure_only" not in item.keywords]
        config._kcm_pure_only = len(left)


def pytest_terminal_summary(terminalreporter, config):
    left = getattr(config, "_kcm_pure_only", 0)
    if left:
        terminalreporter.write_line(f"{left} tests need the model from source and were left for the "
                                    f"pure-Python pass: {compiled.PURE_ENV}=1 pytest -m pure_only")


@pytest.fixture(autouse=True)
def _collector_left_as_found():
    """Every test leaves Python's cyclic collector on or off as it found it. The explorers pause it
    (kcm/checker/collector.py), and a test that left it off would make every later test run without
    it: tests of the pause itself would then pass for the wrong reason, and memory would grow
    through the session. (One fixture did: `collector_on` turned it back on only if it had been
    off.)"""
    was_on = gc.isenabled()
    yield
    assert gc.isenabled() == was_on, f"the test left the cyclic collector {'off' if was_on else 'on'}"


#: Deep enough for a controller failover, a controlled shutdown and a reassignment (goals met at
#: 3, 5 and 7 steps) and the first overlapping runs; about 41,000 states.
DEFAULT_DEPTH = 9


@pytest.fixture(scope="session")
def default_whole():
    """The sequential explorer's complete run of `default`. It is the very run the liveness check
    of `default` reads (`liveness_run`): symmetry off from one initial state per orbit (the
    topic on the default spread), with no violation to stop at, so keeping the graph changes no
    count, and the session explores the CI gate's preset once instead of twice. Its verdict, goals
    and coverage are those of the symmetry-reduced run `kcm check` makes (every other initial
    state is a renaming); its counts are its own (docs/benchmarks.md has both)."""
    _, result, _ = liveness_run("default")
    assert not result.violations, "default_whole relies on it"
    return result


@pytest.fixture(scope="session")
def default_to_depth():
    """The sequential explorer on `default`, cut at `DEFAULT_DEPTH` (verdict incomplete)."""
    return explore(KafkaModel(config.load_preset("default")), CheckOptions(max_depth=DEFAULT_DEPTH))


@functools.cache
def liveness_run(preset: str):
    """`(model, exploration result with its kept graph, liveness result)` for a preset, as
    `kcm explore --liveness` runs it (symmetry off, not stopping at a safety violation)."""
    from kcm.checker.engine.bfs import explore
    from kcm.checker.engine.liveness import check_liveness
    from kcm.model.checking.kafka_model import KafkaModel

    from kcm import config

    model = KafkaModel(config.load_preset(preset), symmetry=False, initial_orbits=True)
    result = explore(model, keep_graph=True, symmetry=False, stop_on_violation=False)
    return model, result, check_liveness(model, result.extra["graph"])


@pytest.fixture(scope="session")
def liveness_of():
    """`liveness_of(preset)`: the cached `liveness_run`."""
    return liveness_run


@pytest.fixture(scope="session")
def v6_run(tmp_path_factory) -> Path:
    """`kcm explore --preset v6` through the real command line, once per session: its 4-step
    counterexample (`IsrNonEmpty.itf.json`), report.json and report.html. Read it, do not write
    into it: the report, trace and explorer tests share it."""
    out = tmp_path_factory.mktemp("v6")
    proc = subprocess.run([sys.executable, "-m", "kcm.cli", "explore", "--preset", "v6", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    return out
