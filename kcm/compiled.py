"""The model and the explorers' hot modules compiled with Cython, used only while up to date.

Why. The explorer's time is spread over the whole model (the step ~30%, the ~60 properties ~27%,
fingerprints and renamings ~25%, the explorer loop ~10%: docs/benchmarks.md), so no single function
is worth rewriting, but the interpreter's own overhead is paid everywhere. Cython compiles the
same `.py` files, unchanged and without type declarations, to C extension modules: 1.41x fewer
CPU seconds on the whole `default` (docs/benchmarks.md, "Compiled with Cython").

One source. The `.py` files stay the only source; the compiled modules are a cache of them:

- `scripts/build_compiled.py` (run by `make run`, `make test` and `make bench` when a source
  changed) compiles every module of `kcm.model` but `config` (Cython refuses its starred tuple),
  the sequential explorer `kcm.checker.bfs` and Spark's task functions `kcm.spark_explore.level`
  into `build/compiled/` beside the sources, never in place, and writes a manifest of each
  source's SHA-256.
- `install()` (called by `kcm/__init__.py`, so in every process that imports kcm: the CLI, the
  tests, Spark's Python workers) puts a finder first on `sys.meta_path`. For a module in the
  manifest whose source file still has the recorded hash, it loads the extension module; for any
  other module, or a source edited since the build, it answers nothing and Python imports the
  `.py` as usual. A stale build can therefore never run: an edit takes effect at once, in pure
  Python, until the next build.
- `KCM_PURE=1` in the environment turns the finder off: everything runs from the `.py` files
  (what `make test` does for its pure-Python pass, and what a debugger or `coverage` wants).

`kcm explore` and `kcm check` say in their header which it is ("compiled" or "pure Python").
Mutation testing runs from source: it traces which lines of the clean model run, which compiled
code does not report, so `checker/mutate.py` refuses a compiled model (one line), `kcm mutate`
restarts itself with `KCM_PURE=1`, and `make test` runs the mutation tests in a pure-Python pass
(`tests/conftest.py`, `PURE_ONLY`).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

#: What `scripts/build_compiled.py` compiles: `kcm.model` but these, and `EXTRA`.
MODEL_SKIPPED = frozenset({"kcm.model.config"})  # Cython refuses its starred expression in a tuple
EXTRA = ("kcm.checker.bfs", "kcm.spark_explore.level")
#: Where the build goes: `build/compiled/` in the source tree (the repository root).
ROOT = Path(__file__).resolve().parents[1]
BUILD_DIR = ROOT / "build" / "compiled"
MANIFEST = BUILD_DIR / "manifest.json"
#: The environment variable that turns compiled modules off.
PURE_ENV = "KCM_PURE"


def source_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _abi() -> str:
    return f"{sys.implementation.cache_tag}-{importlib.machinery.EXTENSION_SUFFIXES[0]}"


class CompiledFinder:
    """Finds the compiled extension of a manifest module whose source is unchanged (see the module
    docstring); answers None for everything else, so the normal finders take over."""

    def __init__(self, manifest: dict, build_dir: Path) -> None:
        self.modules: dict[str, dict] = manifest.get("modules", {})
        self.build_dir = build_dir
        #: Module name -> whether its compiled form was used (for `status()` and the tests).
        self.loaded: dict[str, bool] = {}

    def find_spec(self, fullname: str, path=None, target=None):
        entry = self.modules.get(fullname)
        if entry is None:
            return None
        source = ROOT / entry["source"]
        binary = self.build_dir / entry["binary"]
        try:
            fresh = binary.is_file() and source_hash(source) == entry["sha256"]
        except OSError:
            fresh = False
        self.loaded[fullname] = fresh
        if not fresh:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(binary))
        return importlib.util.spec_from_file_location(fullname, str(binary), loader=loader)


_finder: CompiledFinder | None = None


def install() -> CompiledFinder | None:
    """Put the finder first on `sys.meta_path`, unless `KCM_PURE` is set, there is no build for
    this interpreter, or it is already installed. Returns the finder in use, if any."""
    global _finder
    if _finder is not None or os.environ.get(PURE_ENV):
        return _finder
    try:
        manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("abi") != _abi():
        return None  # built by another Python: its extensions would not load
    _finder = CompiledFinder(manifest, BUILD_DIR)
    sys.meta_path.insert(0, _finder)
    return _finder


def compiled_among(names) -> list[str]:
    """Which of the modules `names` (import names) were loaded from the build."""
    return [n for n in names if _finder is not None and _finder.loaded.get(n)
            and n in sys.modules and isinstance(sys.modules[n].__loader__, importlib.machinery.ExtensionFileLoader)]


def status() -> str:
    """For headers: "compiled" when the explorer and the model run compiled (the modules
    imported so far all came from the build), else "pure Python"."""
    if _finder is None or not _finder.loaded or not all(_finder.loaded.values()):
        return "pure Python"
    return "compiled"
