"""Byte-for-byte comparison of every export between two checkouts, on the lakes given.

    python bench/compare_exports.py --base TREE LAKE... [--work DIR]

Each lake is exported by this checkout and by `--base` (another worktree with its own
`warehouse/_core.abi3.so`, e.g. `git worktree add /tmp/base main`), each in its own process with
PYTHONPATH set to its tree: study JSON as files and `--lines`, each with and without `--fen`, PGN and BGN
JSON (`.json.zst`). Prints each lake's differing outputs; exits 1 if any differ. A refactor of an export
must leave every output byte-identical on every lake of tests/data and ../shared/corpora.
Not a test: it needs a second checkout, and minutes.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (name, module, options before OUT, OUT's suffix)
EXPORTS = [
    ("study files", "loaders.parquet2json", ["--format", "study"], ""),
    ("study lines", "loaders.parquet2json", ["--format", "study", "--lines"], ".jsonl"),
    ("study files --fen", "loaders.parquet2json", ["--format", "study", "--fen"], ""),
    ("study lines --fen", "loaders.parquet2json", ["--format", "study", "--lines", "--fen"], ".jsonl"),
    ("pgn", "loaders.parquet2pgn", [], ".pgn"),
    ("bgn json", "loaders.parquet2json", ["--compression", "zst"], ""),
]


def export(tree: Path, lake: Path, out: Path, module: str, options: list[str]) -> None:
    env = dict(os.environ, PYTHONPATH=str(tree))
    command = [sys.executable, "-m", module, "--lake", str(lake), *options, str(out)]
    subprocess.run(command, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)


def same(a: Path, b: Path) -> bool:
    """Whether `a` and `b` (files, or folders of files) hold the same bytes under the same names."""
    if a.is_file() or b.is_file():
        return a.is_file() and b.is_file() and filecmp.cmp(a, b, shallow=False)
    names = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    if names != sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()):
        return False
    return all(filecmp.cmp(a / n, b / n, shallow=False) for n in names)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", type=Path, required=True, help="the other checkout (with its _core.abi3.so)")
    p.add_argument("--work", type=Path, help="where the exports go (default: a temporary folder)")
    p.add_argument("lakes", type=Path, nargs="+")
    args = p.parse_args()
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        for n, lake in enumerate(args.lakes):
            for name, module, options, suffix in EXPORTS:
                outs = []
                for side, tree in (("base", args.base.resolve()), ("this", ROOT)):
                    out = work / f"{n}-{lake.name}-{name.replace(' ', '-')}-{side}{suffix}"
                    export(tree, lake.resolve(), out, module, options)
                    outs.append(out)
                if not same(*outs):
                    differ += 1
                    print(f"DIFFER {lake} {name}: {outs[0]} {outs[1]}")
            print(f"compared {lake}", flush=True)
    print(f"{differ} outputs differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
