"""Compile the pure model and the sequential explorer with Cython into build/compiled/ (kcm/compiled.py).

    .venv/bin/python scripts/build_compiled.py          # what `make run` and `make test` do

The sources are copied to build/compiled/src/ under their import names (kcm/model/spec.py, ...),
cythonized there and built with the system's C compiler; nothing is written beside the sources.
Directives: Python 3 semantics; `binding=True`, so that compiled functions introspect and pickle
like Python ones; `annotation_typing=False`, so that annotations stay annotations (Cython would
otherwise check them as exact C-level types: an `EnumType` refused where `type` is annotated, a
`bool` where `int` is), and the compiled code keeps the source's semantics exactly. The
manifest records each module's source path and SHA-256, the extension file and the interpreter's
ABI: `kcm.compiled` loads a module from the build only while its source is unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from Cython.Build import cythonize
    from setuptools import Extension, setup

    from kcm import compiled

    # The editable install maps kcm.model to model/, kcm.checker to checker/ (pyproject.toml).
    sources: dict[str, Path] = {}
    for path in sorted((ROOT / "model").glob("*.py")):
        name = f"kcm.model.{path.stem}"
        if path.stem != "__init__" and name not in compiled.MODEL_SKIPPED:
            sources[name] = path
    for name in compiled.EXTRA:
        package, module = name.rsplit(".", 1)
        sources[name] = ROOT / package.split(".", 1)[1] / f"{module}.py"

    build = compiled.BUILD_DIR
    src = build / "src"
    shutil.rmtree(build, ignore_errors=True)
    extensions, copies = [], {}
    for name, path in sources.items():
        copy = copies[name] = src / Path(*name.split(".")).with_suffix(".py")
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        extensions.append(Extension(name, [str(copy)]))
    started = time.monotonic()
    os.chdir(build)  # not the repository root: setuptools would read its pyproject.toml
    modules = cythonize(extensions, compiler_directives={"language_level": 3, "binding": True, "annotation_typing": False},
                        quiet=True, build_dir=str(build / "c"))
    setup(name="kcm-compiled", ext_modules=modules, script_args=[
        "-q", "build_ext", "--build-lib", str(build / "lib"), "--build-temp", str(build / "tmp"),
        "--parallel", "2"])
    manifest = {"abi": compiled._abi(), "modules": {}}
    for name, path in sources.items():
        found = list((build / "lib").joinpath(*name.split(".")[:-1]).glob(name.rsplit(".", 1)[1] + ".*.so"))
        if len(found) != 1:
            print(f"build_compiled: no extension built for {name}", file=sys.stderr)
            return 1
        manifest["modules"][name] = {"source": str(path.relative_to(ROOT)),
                                     # of the bytes compiled: a source edited during the build
                                     # does not match, and runs from its .py
                                     "sha256": compiled.source_hash(copies[name]),
                                     "binary": str(found[0].relative_to(build))}
    compiled.MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"compiled {len(sources)} modules with Cython in {time.monotonic() - started:.0f} s "
          f"({compiled.BUILD_DIR.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
