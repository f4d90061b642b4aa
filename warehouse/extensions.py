"""DuckDB's httpfs extension for the duckdb CLI, which `CHESS_LAKE=s3://… duckdb < sql/<q>.sql` needs.

(`warehouse.connect` needs none: it reads S3 through the lake's own pyarrow filesystem.) The CLI installs
extensions from DuckDB's repository over the network. Where that is out of reach (CI, offline machines),
the `duckdb-extension-httpfs` package on PyPI carries the same signed binary for one DuckDB version;
`python -m warehouse.extensions` installs from it when it matches the CLI's version, else from the
network, into `~/.duckdb/extensions/`.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path


def packaged_httpfs() -> Path | None:
    """The httpfs binary of the `duckdb-extension-httpfs` package, when that package is installed (it is
    found, not imported: it declares a dependency on a Python duckdb it does not need)."""
    spec = importlib.util.find_spec("duckdb_extension_httpfs")
    if spec is None or spec.origin is None:
        return None
    return next(Path(spec.origin).parent.glob("extensions/*/httpfs.duckdb_extension"), None)


def cli_version(cli: str = "duckdb") -> str:
    """`v1.5.5` for a duckdb CLI that prints `v1.5.5 (Variegata) d8cdaa33fd`."""
    done = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.split()[0]


def install_httpfs(cli: str = "duckdb") -> str:
    """Installs and loads httpfs in the duckdb CLI; returns where it came from. Raises on failure."""
    binary = packaged_httpfs()
    source = f"'{binary}'" if binary is not None and binary.parent.name == cli_version(cli) else "httpfs"
    done = subprocess.run(
        [cli, "-c", f"install {source}; load httpfs"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode or done.stderr.strip():
        raise RuntimeError((done.stderr.strip() or "failed").splitlines()[0])
    return str(binary) if source != "httpfs" else "DuckDB's extension repository"


def main() -> int:
    try:
        source = install_httpfs()
    except (OSError, RuntimeError, subprocess.SubprocessError) as e:
        # A failure (exit 1) for whoever runs this; local lakes need no extension, S3 lakes from the CLI say
        # what is missing.
        print(
            f"error: httpfs not installed for the duckdb CLI ({e}): S3 lakes need it there", file=sys.stderr
        )
        return 1
    print(f"httpfs installed for the duckdb CLI from {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
