"""Run every benchmark in turn (`make bench`); each prints its own markdown table."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
BENCHES = [["explore.py", "--presets", "tiny"], ["compiled.py", "--max-depth", "9", "--pairs", "1"], ["proofs.py"],
           ["cores.py", "--preset", "default", "--max-depth", "10"], ["spark_explore.py", "--presets", "tiny"],
           ["runs.py", "--presets", "zkfaults", "--repeat", "1"], ["fuzz.py"]]



def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    for args in BENCHES:
        print(f"\n## {args[0]}\n", flush=True)
        subprocess.run([sys.executable, str(HERE / args[0]), *args[1:]], check=True)


if __name__ == "__main__":
    main()
