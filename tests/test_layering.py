"""The layering of the packages, read from the sources' imports (with `ast`, importing nothing).

From the bottom up:

- the engine (`kcm.checker.engine`: the `Model` contract and the generic checkers) imports nothing
  of kcm but itself: any model, not only Kafka's, can be checked with it;
- the Kafka spec (`kcm.model` outside `checking` and `catalogue`), what a reviewer reads beside
  Kafka's code, imports the standard library and itself only;
- the property catalogue and the checker adapters (`kcm.model.catalogue`, `kcm.model.checking`)
  add the engine, whose contract they implement;
- the reference implementation (`kcm.impl`) imports neither the checkers, Spark, nor the CLI;
- nothing below the command line imports it: `kcm.cli`, `kcm.commands`, `kcm.config`,
  `kcm.exploration`, `kcm.compiled`, `kcm.errors`, nor the `kcm` package itself.

And in the model, an import inside a function says why in a comment (on its line or the one
above): it is how a cycle is broken or a costly module deferred, and either should be rare.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Import package -> source folder, as `[tool.setuptools] package-dir` maps them.
FOLDERS = {"kcm.model": "model", "kcm.impl": "impl", "kcm.checker": "checker", "kcm.spark_explore": "spark_explore",
           "kcm": "kcm"}
#: What only the command line may import.
CLI = ("kcm.cli", "kcm.commands", "kcm.config", "kcm.exploration", "kcm.compiled", "kcm.errors")
STDLIB = frozenset(sys.stdlib_module_names)


def module_of(path: Path) -> str:
    """The import name of a source file (`model/checking/codec.py` -> `kcm.model.checking.codec`)."""
    rel = path.relative_to(REPO)
    package = next(p for p, folder in FOLDERS.items() if rel.parts[0] == folder)
    parts = [*package.split("."), *rel.with_suffix("").parts[1:]]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources(package: str) -> list[Path]:
    return sorted((REPO / FOLDERS[package]).rglob("*.py"))


def imports(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line, imported module, inside a function?) for every import of `path`; `from a import b`
    gives `a.b` (a module or a name of `a`: the rules below hold for both)."""
    module = module_of(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner.update(id(n) for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, id(node) in inner
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            if base == "__future__":
                continue
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}", id(node) in inner


def within(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def is_spec_module(module: str) -> bool:
    return within(module, "kcm.model") and not within(module, "kcm.model.checking", "kcm.model.catalogue")


def offending(packages: tuple[str, ...], allowed) -> list[str]:
    out = []
    for package in packages:
        for path in sources(package):
            module = module_of(path)
            if package == "kcm.model" and not is_spec_module(module) and allowed is spec_allows:
                continue
            if package == "kcm.model" and is_spec_module(module) and allowed is adapter_allows:
                continue
            for line, name, _ in imports(path):
                if not allowed(name):
                    out.append(f"{path.relative_to(REPO)}:{line} imports {name}")
    return out


def engine_allows(name: str) -> bool:
    return not within(name, "kcm") or within(name, "kcm.checker.engine")


def spec_allows(name: str) -> bool:
    return name.split(".")[0] in STDLIB or within(name, "kcm.model")


def adapter_allows(name: str) -> bool:
    return name.split(".")[0] in STDLIB or within(name, "kcm.model", "kcm.checker.engine")


def impl_allows(name: str) -> bool:
    return not within(name, "kcm.checker", "kcm.spark_explore", *CLI)


def below_cli_allows(name: str) -> bool:
    """Not the CLI's modules, nor a name of the `kcm` package itself (`kcm.__version__`)."""
    parts = name.split(".")
    if within(name, *CLI) or parts == ["kcm"]:
        return False
    if parts[0] != "kcm" or parts[1] in ("model", "impl", "checker", "spark_explore"):
        return True
    return (REPO / "kcm" / f"{parts[1]}.py").exists() or (REPO / "kcm" / parts[1]).is_dir()


RULES = {
    "the engine imports nothing of kcm but itself": (("kcm.checker",), engine_allows),
    "the Kafka spec imports the standard library and itself only": (("kcm.model",), spec_allows),
    "the catalogue and the checker adapters add the engine only": (("kcm.model",), adapter_allows),
    "the implementation imports no checker, Spark or CLI": (("kcm.impl",), impl_allows),
    "nothing below the command line imports it": (("kcm.model", "kcm.impl", "kcm.checker", "kcm.spark_explore"),
                                                  below_cli_allows),
}


@pytest.mark.parametrize("rule", RULES)
def test_the_layers_import_downwards_only(rule):
    packages, allowed = RULES[rule]
    if allowed is engine_allows:
        found = [f"{p.relative_to(REPO)}:{line} imports {name}" for p in (REPO / "checker" / "engine").rglob("*.py")
                 for line, name, _ in imports(p) if not allowed(name)]
    else:
        found = offending(packages, allowed)
    assert found == [], f"{rule}:\n  " + "\n  ".join(found)


def test_an_import_inside_a_model_function_says_why():
    found = []
    for path in sources("kcm.model"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for line, name, inner in imports(path):
            if inner and "#" not in lines[line - 1] and not lines[line - 2].lstrip().startswith("#"):
                found.append(f"{path.relative_to(REPO)}:{line} imports {name} inside a function, without a comment why")
    assert found == [], "\n  ".join(found)


def test_the_rules_see_what_they_forbid(tmp_path):
    assert not engine_allows("kcm.model.spec.step") and engine_allows("kcm.checker.engine.contract.Model")
    assert not spec_allows("kcm.checker.engine.contract.Model") and not spec_allows("hypothesis")
    assert adapter_allows("kcm.checker.engine.contract.Model") and not adapter_allows("kcm.checker.sequence")
    assert not impl_allows("kcm.spark_explore.spec") and impl_allows("kcm.model.states")
    assert not below_cli_allows("kcm.compiled") and not below_cli_allows("kcm.__version__")
    assert below_cli_allows("kcm.checker.engine.errors.UsageError") and below_cli_allows("click")
    assert module_of(REPO / "model" / "checking" / "__init__.py") == "kcm.model.checking"
