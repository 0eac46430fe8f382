"""Loading a mutant: a fresh copy of `kcm.model` under its own package name.

A mutant is imported as `kcm_mutant_<n>_<hash>`, built in memory by a meta-path finder: the
mutated file, and every model module that imports it directly or not (so the controller, the spec
and the properties see the mutated code), are compiled from source under the new name; the other
modules (records, tables, what the checkers test with `isinstance`) are the installed ones,
aliased. The installed `kcm.model` is never touched, and any number of mutants live side by side
in one process (`unload` drops one).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import importlib.abc
import importlib.util
import itertools
import re
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kcm.checker.mutation.generate import read_sources

_IMPORT = re.compile(r"\b(from|import)(\s+)kcm\.model\b")
#: The module that defines `KafkaModel`, which a loaded mutant exposes.
MODEL_MODULE = "checking/kafka_model.py"
_counter = itertools.count()
_lock = threading.Lock()


def _module_of(file: str) -> str:
    """The module name, relative to the model package, of a source file (`checking/codec.py` ->
    `checking.codec`; a package's `__init__.py` -> the package)."""
    parts = file[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _file_of(module: str, files: Iterable[str]) -> str | None:
    """The source file of a module name relative to the model package, among `files`."""
    path = module.replace(".", "/")
    for candidate in (f"{path}.py", f"{path}/__init__.py"):
        if candidate in files:
            return candidate
    return None


def _imports_of(source: str, files: Iterable[str]) -> set[str]:
    """The model modules (source files among `files`) `source` imports."""
    files = set(files)
    out = set()

    def add(module: str) -> None:
        f = _file_of(module, files)
        if f is not None:
            out.add(f)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and (node.module + ".").startswith("kcm.model."):
            base = node.module[len("kcm.model."):]
            if base:
                add(base)
            for a in node.names:  # `from kcm.model.checking import codec` imports a module
                add(f"{base}.{a.name}" if base else a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("kcm.model."):
                    add(a.name[len("kcm.model."):])
    return out


def dependents(sources: Mapping[str, str], file: str) -> set[str]:
    """`file` and every model module that imports it, directly or not."""
    deps = {f: _imports_of(s, sources) for f, s in sources.items()}
    out = {file}
    changed = True
    while changed:
        changed = False
        for f, imported in deps.items():
            if f not in out and imported & out:
                out.add(f)
                changed = True
    return out


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one mutant package and its own modules, compiled from source under the new name."""

    def __init__(self, package: str, compiled: dict[str, str], packages: set[str]) -> None:
        self.package = package
        self.compiled = compiled  # module name (relative to the package) -> source
        self.packages = packages  # the names in `compiled` that are packages (their `__init__.py`)

    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.package:
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        name = fullname[len(self.package) + 1:] if fullname.startswith(self.package + ".") else None
        if name in self.compiled:
            return importlib.util.spec_from_loader(fullname, self, origin=f"<mutant {self.package}>/{name}.py",
                                                   is_package=name in self.packages)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if module.__name__ == self.package:
            module.__path__ = []
            return
        name = module.__name__[len(self.package) + 1:]
        if name in self.packages:
            module.__path__ = []
        code = compile(self.compiled[name], f"<mutant {self.package}>/{name}.py", "exec")
        exec(code, module.__dict__)


@dataclass
class LoadedMutant:
    """A mutant package in `sys.modules`; `spec` is its module of `KafkaModel`."""

    package: str
    spec: Any
    finder: _Finder


def load(mutant_source: str | None, file: str | None, sources: Mapping[str, str] | None = None) -> LoadedMutant:
    """Import a copy of the model with `file` replaced by `mutant_source` (None: an unmodified
    copy) under a new package name; returns it with its `KafkaModel` module."""
    sources = dict(sources if sources is not None else read_sources())
    if file is not None:
        sources[file] = mutant_source or ""
    own = dependents(sources, file) if file is not None else set(sources)
    own.add(MODEL_MODULE)
    # A sub-package of an own module is own too: aliasing it to the installed one would make the
    # import of the mutant's submodule set an attribute on the installed package.
    for f in list(own):
        parts = f.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            own.add("/".join(parts[:i]) + "/__init__.py")
    digest = hashlib.blake2b((mutant_source or "").encode(), digest_size=4).hexdigest()
    with _lock:
        package = f"kcm_mutant_{next(_counter)}_{digest}"
    # (A folder without `__init__.py`, a namespace package, gets an empty one.)
    compiled = {_module_of(f): _IMPORT.sub(lambda m: f"{m.group(1)}{m.group(2)}{package}", sources.get(f) or "")
                for f in own if f != "__init__.py"}
    packages = {_module_of(f) for f in own if f.endswith("/__init__.py")}
    finder = _Finder(package, compiled, packages)
    # The modules the mutant does not change are the installed ones, under the mutant's name too.
    for f in sources:
        if f not in own and f != "__init__.py":
            module = _module_of(f)
            sys.modules[f"{package}.{module}"] = importlib.import_module(f"kcm.model.{module}")
    sys.meta_path.insert(0, finder)
    try:
        spec = importlib.import_module(f"{package}.{_module_of(MODEL_MODULE)}")
    except BaseException:
        unload(LoadedMutant(package, None, finder))
        raise
    return LoadedMutant(package, spec, finder)


def unload(loaded: LoadedMutant) -> None:
    """Forget a mutant package: its modules leave `sys.modules` (the aliased installed ones stay)."""
    with contextlib.suppress(ValueError):
        sys.meta_path.remove(loaded.finder)
    prefix = loaded.package + "."
    for name in [n for n in sys.modules if n == loaded.package or n.startswith(prefix)]:
        del sys.modules[name]
