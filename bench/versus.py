"""Benchmark: the explorer of this tree against the same explorer at an earlier commit, in one run.

    python bench/versus.py --base REV [--presets default] [--jobs 2] [--repeat 2]

What a change that must not cost speed is measured with: the commit `REV` is checked out beside
the tree (a `git worktree` under `build/versus/`), compiled with Cython as `make` compiles this
tree (once: the build is kept), and made importable as `kcm` through a folder of links (`kcm/`'s files and the package
folders `model/`, `impl/`, `checker/`, `spark_explore/`, as the editable install maps them). Then,
alternately (so that a change in the machine's speed touches both alike), each preset is explored
by `bench/runs.py`'s `measure` in a fresh process on each side: wall and CPU seconds, the ratio
this tree / base, and a check that both give the same verdict and counts. Writes nothing
(docs/benchmarks.md is updated by hand from it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "versus"
#: The folders the editable install maps to sub-packages of `kcm` (pyproject.toml `package-dir`).
PACKAGES = ("model", "impl", "checker", "spark_explore")
#: Runs `bench/runs.py`'s `measure` in the interpreter's current `kcm`, prints its result as JSON.
MEASURE = """
import json, sys
sys.path.insert(0, {bench!r})
import kcm, kcm.compiled
from runs import measure
result = measure({preset!r}, {jobs})
result["compiled"] = kcm.compiled.status()
result.pop("runs", None)
print(json.dumps(result))
"""


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def prepare(rev: str) -> Path:
    """The base commit checked out, compiled, and importable: returns the folder to put first on
    `PYTHONPATH` (it holds `kcm/`, the links)."""
    commit = git("rev-parse", rev)
    tree = BUILD / commit[:12] / "tree"
    if not tree.is_dir():
        tree.parent.mkdir(parents=True, exist_ok=True)
        git("worktree", "add", "--detach", str(tree), commit)
    links = BUILD / commit[:12] / "path"
    package = links / "kcm"
    if not package.is_dir():
        package.mkdir(parents=True)
        for item in (tree / "kcm").iterdir():
            (package / item.name).symlink_to(item)
        for folder in PACKAGES:
            (package / folder).symlink_to(tree / folder)
    if not (tree / "build" / "compiled" / "manifest.json").is_file():
        env = dict(os.environ, PYTHONPATH=str(links), KCM_PURE="1")
        subprocess.run([sys.executable, "-c", "import sys, kcm.compiled; sys.exit(kcm.compiled.build())"],
                       cwd=links, env=env, check=True)
    return links


def measure(path: Path | None, preset: str, jobs: int) -> dict:
    """One exploration in a fresh interpreter: this tree's `kcm` (path None) or the base's."""
    env = dict(os.environ)
    env.pop("KCM_PURE", None)
    if path is not None:
        env["PYTHONPATH"] = str(path)
    bench = str((path / "kcm" / "model").resolve().parent / "bench") if path else str(ROOT / "bench")
    code = MEASURE.format(bench=bench, preset=preset, jobs=jobs)
    # Run from the folder whose `kcm` is meant: Python puts the working directory first.
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=path or ROOT, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{preset} on {'the base' if path else 'the tree'} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare with (any git revision)")
    parser.add_argument("--presets", default="default")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    base = prepare(args.base)
    modified = " (modified)" if git("status", "--porcelain") else ""
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores;"
          f" base {git('rev-parse', '--short', args.base)}, tree {git('rev-parse', '--short', 'HEAD')}{modified}")
    for preset in args.presets.split(","):
        times: dict[str, list[float]] = {"base": [], "tree": []}
        outcomes = set()
        for _ in range(args.repeat):
            for side, path in (("base", base), ("tree", None)):
                r = measure(path, preset, args.jobs)
                times[side].append(r["seconds"])
                outcomes.add((r["verdict"], r["distinct"], r["generated"]))
                print(f"{preset:>10} {side}: {r['verdict']} {r['distinct']:,} distinct / {r['generated']:,} generated,"
                      f" {r['seconds']:.1f} s wall, {r['cpu']:.1f} s CPU ({r['compiled']})", flush=True)
        if len(outcomes) > 1:
            sys.exit(f"{preset}: the tree and the base disagree: {sorted(outcomes)}")
        print(f"{preset:>10} tree / base: best {min(times['tree']) / min(times['base']):.3f},"
              f" mean {sum(times['tree']) / sum(times['base']):.3f}")


if __name__ == "__main__":
    main()
