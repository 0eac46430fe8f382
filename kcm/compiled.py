"""The model and the explorers' hot modules compiled with Cython, used only while up to date.

Why. The explorer's time is spread over the whole model (the step, the properties, fingerprints
and renamings, the explorer loop: docs/benchmarks.md, "A faster step"), so no single function is
worth rewriting, but the interpreter's own overhead is paid everywhere. Cython compiles the same
`.py` files, unchanged and without type declarations, to C extension modules, which pay less of it
(docs/benchmarks.md, "Compiled with Cython").

One source. The `.py` files stay the only source; the compiled modules are a cache of them:

- `build()` (`make run`, `make test` and `make bench` call it when a source changed) compiles
  every module of `kcm.model` but `config` (Cython refuses its starred tuple), the sequential
  explorer `kcm.checker.engine.bfs` and Spark's task functions `kcm.spark_explore.level` into
  `build/compiled/` beside the sources, never in place, and writes a manifest of the SHA-256 of
  each source it compiled.
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
code does not report, so `checker/mutation/baseline.py` refuses a compiled model (one line), `kcm mutate`
restarts itself with `KCM_PURE=1`, and `make test` runs the mutation tests in a pure-Python pass
(`tests/conftest.py`, `PURE_ONLY`, marked `pure_only`).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import time
from pathlib import Path

#: What `build()` compiles: `kcm.model` but these, and `EXTRA`.
MODEL_SKIPPED = frozenset({"kcm.model.config"})  # Cython refuses its starred expression in a tuple
EXTRA = ("kcm.checker.engine.bfs", "kcm.spark_explore.level")
#: Where the build goes: `build/compiled/` in the source tree (the repository root).
ROOT = Path(__file__).resolve().parents[1]
BUILD_DIR = ROOT / "build" / "compiled"
MANIFEST = BUILD_DIR / "manifest.json"
#: The environment variable that turns compiled modules off.
PURE_ENV = "KCM_PURE"


def source_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _abi() -> str:
    """The running interpreter's extension suffix (`.cpython-311-x86_64-linux-gnu.so`): an
    extension built by another Python would not load."""
    return importlib.machinery.EXTENSION_SUFFIXES[0]


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
    """Which of the modules `names` (import names) were imported from the build."""
    return [n for n in names if _finder is not None and _finder.loaded.get(n) and n in sys.modules]


def status() -> str:
    """For headers: "compiled" when the explorer and the model run compiled (the modules
    imported so far all came from the build), else "pure Python"."""
    if _finder is None or not _finder.loaded or not all(_finder.loaded.values()):
        return "pure Python"
    return "compiled"


# ---- the build ---------------------------------------------------------------------------------


def _sources() -> dict[str, Path]:
    """Import name -> source file of every module compiled. The editable install maps kcm.model to
    model/, kcm.checker to checker/, kcm.spark_explore to spark_explore/ (pyproject.toml)."""
    model = ROOT / "model"
    sources = {"kcm.model." + ".".join(p.relative_to(model).with_suffix("").parts): p
               for p in sorted(model.rglob("*.py")) if p.stem != "__init__"}
    for name in MODEL_SKIPPED:
        sources.pop(name, None)
    for name in EXTRA:
        package, module = name.rsplit(".", 1)
        sources[name] = ROOT / Path(*package.split(".")[1:]) / f"{module}.py"
    return sources


def build() -> int:
    """Compile the modules into `BUILD_DIR` and write the manifest; returns an exit code.

    The sources are copied to `src/` under their import names and cythonized there, then built
    with the system's C compiler. Directives: Python 3 semantics; `binding=True`, so that compiled
    functions introspect and pickle like Python ones; `annotation_typing=False`, so that
    annotations stay annotations (Cython would otherwise check them as exact types: an `EnumType`
    refused where `type` is annotated, a `bool` where `int` is), and the compiled code keeps the
    source's semantics exactly. The manifest records the hash of the bytes compiled (the copies),
    so a source edited during the build runs from its `.py`."""
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("kcm.compiled.build() needs Cython: pip install -e '.[compile]' (make does)", file=sys.stderr)
        return 2
    from setuptools import Extension, setup

    sources = _sources()
    shutil.rmtree(BUILD_DIR, ignore_errors=True)
    copies = {}
    for name, path in sources.items():
        copy = copies[name] = BUILD_DIR / "src" / Path(*name.split(".")).with_suffix(".py")
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
    started = time.monotonic()
    cwd = os.getcwd()
    os.chdir(BUILD_DIR)  # not the repository root: setuptools would read its pyproject.toml
    try:
        modules = cythonize([Extension(name, [str(copy)]) for name, copy in copies.items()],
                            compiler_directives={"language_level": 3, "binding": True, "annotation_typing": False},
                            quiet=True, build_dir=str(BUILD_DIR / "c"))
        setup(name="kcm-compiled", ext_modules=modules, script_args=[
            "-q", "build_ext", "--build-lib", str(BUILD_DIR / "lib"), "--build-temp", str(BUILD_DIR / "tmp"),
            "--parallel", "2"])
    finally:
        os.chdir(cwd)
    modules_out = {}
    for name, path in sources.items():
        binary = BUILD_DIR / "lib" / Path(*name.split(".")).with_suffix(_abi())
        if not binary.is_file():
            print(f"kcm.compiled: no extension built for {name}", file=sys.stderr)
            return 1
        modules_out[name] = {"source": str(path.relative_to(ROOT)), "sha256": source_hash(copies[name]),
                             "binary": str(binary.relative_to(BUILD_DIR))}
    MANIFEST.write_text(json.dumps({"abi": _abi(), "modules": modules_out}, indent=1) + "\n", encoding="utf-8")
    print(f"compiled {len(sources)} modules with Cython in {time.monotonic() - started:.0f} s "
          f"({BUILD_DIR.relative_to(ROOT)})")
    return 0
