"""The Cython build of the model and the explorer (kcm/compiled.py): used while fresh, never stale,
and exploring exactly as the pure-Python source does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.machinery import ExtensionFileLoader
from pathlib import Path

import kcm.checker.engine.bfs
import kcm.model.spec
import pytest

from kcm import compiled, config

#: Explores a few presets and prints what a run found, as JSON (run in this process and in a
#: pure-Python one).
SUMMARY = textwrap.dedent("""
    import json
    import kcm.model.spec
    from kcm import compiled
    from kcm.checker.engine.bfs import explore
    from kcm.config import load_preset
    from kcm.model.checking.kafka_model import KafkaModel

    out = {"status": compiled.status(), "spec": kcm.model.spec.__file__}
    for name, depth in (("tiny", None), ("zkfaults", None), ("v4", None), ("default", 9)):
        r = explore(KafkaModel(load_preset(name)), max_depth=depth)
        out[name] = {
            "verdict": r.verdict, "distinct": r.stats.distinct, "generated": r.stats.generated,
            "depth": r.stats.depth, "frontier": list(r.stats.frontier_sizes),
            "violations": [(v.name, len(v.trace) if v.trace else None,
                            [type(a).__name__ for a, _ in v.trace[1:]] if v.trace else None) for v in r.violations],
            "known": [(v.name, len(v.trace)) for v in r.known_violations],
            "goals": {g.name: len(g.trace) if g.trace else None for g in r.goals.values()},
        }
    print(json.dumps(out, sort_keys=True))
""")


def _summary(pure: bool) -> dict:
    env = dict(os.environ)
    env.pop(compiled.PURE_ENV, None)
    if pure:
        env[compiled.PURE_ENV] = "1"
    done = subprocess.run([sys.executable, "-c", SUMMARY], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_the_suite_runs_what_the_environment_asks_for():
    # `make test` builds first, so the suite runs compiled unless KCM_PURE is set: a missing or
    # stale build fails here instead of silently testing the other thing.
    if os.environ.get(compiled.PURE_ENV):
        assert kcm.model.spec.__file__.endswith(".py") and compiled.status() == "pure Python"
    else:
        assert compiled.status() == "compiled", "no up-to-date build: run `make test` (it calls kcm.compiled.build())"
        assert isinstance(kcm.model.spec.__loader__, ExtensionFileLoader)
        assert isinstance(kcm.checker.engine.bfs.__loader__, ExtensionFileLoader)


def test_compiled_and_pure_explore_alike():
    """Same counts, levels, verdicts, violated properties with the same traces' actions, known
    Findings and goal witnesses, on presets with faults, a variant and default's first levels."""
    fast, pure = _summary(False), _summary(True)
    assert fast.pop("status") == "compiled" and fast.pop("spec").endswith(".so")
    assert pure.pop("status") == "pure Python" and pure.pop("spec").endswith(".py")
    assert fast == pure
    assert pure["v4"]["verdict"] == "violation" and pure["tiny"]["verdict"] == "pass"


def test_an_edited_source_is_not_loaded_compiled(tmp_path):
    manifest = json.loads(compiled.MANIFEST.read_text(encoding="utf-8"))
    entry = manifest["modules"]["kcm.model.election"]
    finder = compiled.CompiledFinder(manifest, compiled.BUILD_DIR)
    spec = finder.find_spec("kcm.model.election")
    assert spec is not None and isinstance(spec.loader, ExtensionFileLoader) and finder.loaded["kcm.model.election"]
    # the source changed since the build: the normal finders take over (pure Python)
    stale = {"modules": {"kcm.model.election": dict(entry, sha256="0" * 64)}}
    finder = compiled.CompiledFinder(stale, compiled.BUILD_DIR)
    assert finder.find_spec("kcm.model.election") is None and finder.loaded == {"kcm.model.election": False}
    # a module the build does not hold, and a binary gone missing
    assert finder.find_spec("kcm.model.config") is None
    gone = {"modules": {"kcm.model.election": dict(entry, binary="lib/none.so")}}
    assert compiled.CompiledFinder(gone, compiled.BUILD_DIR).find_spec("kcm.model.election") is None


def test_a_build_for_another_interpreter_or_none_is_not_installed(tmp_path, monkeypatch):
    monkeypatch.setattr(compiled, "_finder", None)
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    monkeypatch.setattr(compiled, "MANIFEST", tmp_path / "manifest.json")
    assert compiled.install() is None  # no build
    (tmp_path / "manifest.json").write_text(json.dumps({"abi": "cpython-27-.so", "modules": {}}))
    assert compiled.install() is None  # built by another Python
    monkeypatch.setenv(compiled.PURE_ENV, "1")
    (tmp_path / "manifest.json").write_text(json.dumps({"abi": compiled._abi(), "modules": {}}))
    assert compiled.install() is None  # KCM_PURE
    before = list(sys.meta_path)
    monkeypatch.delenv(compiled.PURE_ENV)
    finder = compiled.install()
    try:
        assert finder is not None and sys.meta_path[0] is finder
    finally:
        sys.meta_path[:] = before


def test_mutation_testing_needs_the_model_from_source():
    # It traces which lines of the clean model run: compiled code reports none, and every mutant
    # would be "unreached". So a compiled model is refused in one line, and a pure one is traced.
    from kcm.checker import mutation as M
    from kcm.checker.engine.errors import UsageError

    configs = [("tiny", config.load_preset("tiny"))]
    if compiled.status() == "compiled":
        with pytest.raises(UsageError, match="KCM_PURE=1"):
            M.baselines(configs, M.Budget())
    else:
        (base,) = M.baselines(configs, M.Budget())
        assert base.covered and base.covered["controller.py"]


def test_kcm_mutate_restarts_itself_from_source(tmp_path):
    env = dict(os.environ)
    env.pop(compiled.PURE_ENV, None)
    done = subprocess.run([str(Path(sys.executable).parent / "kcm"), "mutate", "--preset", "tiny",
                           "--files", "world.py", "--sample", "2", "--seed", "0", "--out", str(tmp_path),
                           "--json", str(tmp_path / "m.json")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "m.json").read_text())
    # traced: the two sampled mutants are judged on their own (one crashes, one survives), none
    # is decided "unreached" as they would be against compiled code
    assert report["counts"] == {"killed": 0, "crashed": 1, "survived": 1, "equivalent": 0, "timed_out": 0}
    assert report["unreached"] == 0


def test_the_build_without_cython_says_so_and_keeps_the_build(monkeypatch, capsys):
    """Cython is the `compile` extra: a build without it is one line and exit 2, and the build
    already made stays in force."""
    before = compiled.MANIFEST.read_bytes() if compiled.MANIFEST.exists() else None
    monkeypatch.setitem(sys.modules, "Cython", None)  # `import Cython...` raises ImportError
    monkeypatch.setitem(sys.modules, "Cython.Build", None)
    assert compiled.build() == 2
    assert "needs Cython" in capsys.readouterr().err
    assert (compiled.MANIFEST.read_bytes() if compiled.MANIFEST.exists() else None) == before
